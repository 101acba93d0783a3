using System;
using System.Collections.Generic;
using Arsim.Core;
using UnityEngine;
using Object = UnityEngine.Object;

namespace Arsim.Runtime
{
    /// <summary>Arsim.Core's IRenderer on Unity: the track as meshes and colliders, the cars as
    /// box proxies, LiDAR rays on PhysX (RaycastCommand) and cameras on the GPU. Everything
    /// else (sensor geometry, timing, noise, REP-117 values, the protocol) is the core's, so the
    /// Unity server answers exactly as the other backends do. Main thread only.</summary>
    public sealed class UnityRenderer : IRenderer, IDisposable
    {
        public const string RendererName = "arsim-unity";
        readonly GameObject root;
        readonly LabelMaterials materials;
        readonly TrackBuilder track;
        readonly CarProxies cars;
        readonly BatchRayCaster rays = new BatchRayCaster();
        readonly SensorCameras cameras;

        /// <param name="surface">Lit shader of the colour camera (null: Standard).</param>
        /// <param name="depth">Hidden/Arsim/LinearDepth (null: looked up by name).</param>
        /// <param name="classId">Hidden/Arsim/ClassId (null: looked up by name).</param>
        public UnityRenderer(Shader surface, Shader depth, Shader classId)
        {
            root = new GameObject("Arsim World");
            materials = new LabelMaterials(surface);
            track = new TrackBuilder(root.transform, materials);
            cars = new CarProxies(root.transform, materials);
            cameras = new SensorCameras(root.transform, depth, classId);
        }

        public string Name { get { return RendererName; } }

        public void SetTrack(TrackMesh mesh)
        {
            track.Build(mesh);
            rays.ForgetColliders();
        }

        public void SetCars(IReadOnlyList<CarBox> boxes) { cars.Place(boxes); }

        public void CastRays(RayBatch batch, RayHits hits)
        {
            using (cars.Without(batch.ExcludeCar)) rays.Cast(batch, hits);
        }

        public void RenderCamera(CameraView view, CameraImages images)
        {
            using (cars.Without(view.Car)) cameras.Render(view, images);
        }

        public void Dispose()
        {
            cameras.Dispose();
            cars.Dispose();
            track.Clear();
            materials.Dispose();
            Object.Destroy(root);
        }
    }
}
