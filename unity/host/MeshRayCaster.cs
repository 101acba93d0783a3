using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Arsim.Core;

namespace Arsim.Host
{
    /// <summary>The console host's renderer, on the CPU: the track in a Bvh, the other cars as
    /// oriented boxes, distances in double; cameras are cast one ray per pixel by
    /// RayCastCamera. Large batches (a spinning LiDAR's revolution, a camera) are spread over
    /// the cores, small ones (a planar scan) stay on the calling thread, where starting tasks
    /// would cost more than the rays.</summary>
    public sealed class MeshRayCaster : IRenderer
    {
        public const string RendererName = "arsim-csharp-host";
        /// <summary>Batches from this many rays up are cast in parallel.</summary>
        public const int ParallelRays = 4096;
        const int Chunk = 256;  // rays per parallel work item: neighbours share their nodes

        TrackSurface track = TrackSurface.Of(new TrackMesh());
        CarBox[] cars = new CarBox[0];

        public string Name { get { return RendererName; } }

        /// <summary>Triangles of the current track.</summary>
        public int TriangleCount { get { return track.Bvh.TriangleCount; } }

        public void SetTrack(TrackMesh mesh)
        {
            if (mesh == null) throw new ArgumentNullException(nameof(mesh));
            track = TrackSurface.Of(mesh);
        }

        public void SetCars(IReadOnlyList<CarBox> boxes)
        {
            var copy = new CarBox[boxes == null ? 0 : boxes.Count];
            for (var i = 0; i < copy.Length; i++) copy[i] = boxes[i];
            cars = copy;
        }

        public void CastRays(RayBatch rays, RayHits hits)
        {
            if (rays == null) throw new ArgumentNullException(nameof(rays));
            if (hits == null) throw new ArgumentNullException(nameof(hits));
            var count = rays.Count;
            if (count < 0 || rays.Origins.Length < 3L * count || rays.Directions.Length < 3L * count)
                throw new ArgumentException("a batch of " + count + " rays needs " + 3L * count + " origin and direction coordinates; it has " +
                                            rays.Origins.Length + " and " + rays.Directions.Length);
            hits.Ensure(count);
            var job = new CastJob(track, Seen(rays.ExcludeCar), rays, hits);
            if (count < ParallelRays)
            {
                job.Run(0, count, track.Bvh.NewStack());
                return;
            }
            Parallel.For(0, (count + Chunk - 1) / Chunk, () => track.Bvh.NewStack(), (chunk, state, stack) =>
            {
                job.Run(chunk * Chunk, Math.Min(count, (chunk + 1) * Chunk), stack);
                return stack;
            }, stack => { });
        }

        public void RenderCamera(CameraView view, CameraImages images) { RayCastCamera.Render(this, view, images); }

        /// <summary>The boxes of every car but the observer's.</summary>
        OrientedBox[] Seen(string observer)
        {
            var seen = new List<OrientedBox>(cars.Length);
            foreach (var car in cars)
                if (!string.Equals(car.Car, observer, StringComparison.Ordinal)) seen.Add(new OrientedBox(car));
            return seen.ToArray();
        }

        /// <summary>One batch's rays against the track and boxes; Run may be called from
        /// several threads on disjoint ranges.</summary>
        sealed class CastJob
        {
            readonly TrackSurface track;
            readonly OrientedBox[] boxes;
            readonly RayBatch rays;
            readonly RayHits hits;
            readonly double limit;  // hits are strictly nearer than this: just beyond MaxDistance

            public CastJob(TrackSurface track, OrientedBox[] boxes, RayBatch rays, RayHits hits)
            {
                this.track = track;
                this.boxes = boxes;
                this.rays = rays;
                this.hits = hits;
                double max = rays.MaxDistance;
                limit = max > 0 ? Bvh.NextUp(max) : 0;
            }

            public void Run(int first, int end, BvhStack stack)
            {
                float[] origins = rays.Origins, directions = rays.Directions;
                for (var i = first; i < end; i++)
                {
                    var k = 3 * i;
                    double ox = origins[k], oy = origins[k + 1], oz = origins[k + 2];
                    double dx = directions[k], dy = directions[k + 1], dz = directions[k + 2];
                    double distance;
                    var triangle = track.Bvh.Nearest(ox, oy, oz, dx, dy, dz, rays.MaxDistance, stack, out distance);
                    var label = triangle >= 0 ? track.Labels[triangle] : Labels.None;
                    var cosine = triangle >= 0 ? track.Cosine(triangle, dx, dy, dz) : 0.0;
                    var nearest = triangle >= 0 ? distance : limit;
                    for (var b = 0; b < boxes.Length; b++)
                    {
                        double boxDistance, boxCosine;
                        if (!boxes[b].Cast(ox, oy, oz, dx, dy, dz, nearest, out boxDistance, out boxCosine)) continue;
                        nearest = distance = boxDistance;
                        cosine = boxCosine;
                        label = Labels.Car;
                    }
                    var hit = label != Labels.None;
                    hits.Distance[i] = hit ? (float)distance : float.PositiveInfinity;
                    hits.Label[i] = label;
                    hits.Cosine[i] = hit ? (float)cosine : 0f;
                }
            }
        }
    }

    /// <summary>A track as the ray caster reads it: the Bvh over its triangles, and per
    /// triangle its class and unit normal (float32, as the embedded backend keeps them).</summary>
    sealed class TrackSurface
    {
        public Bvh Bvh;
        public byte[] Labels;
        public float[] Normals;

        /// <summary>Checks the mesh (a bad one is refused with what is wrong, not cast
        /// wrongly) and builds the Bvh.</summary>
        public static TrackSurface Of(TrackMesh mesh)
        {
            float[] vertices = mesh.Vertices ?? new float[0];
            uint[] indices = mesh.Triangles ?? new uint[0];
            byte[] labels = mesh.Labels ?? new byte[0];
            if (vertices.Length % 3 != 0) throw new ArgumentException("track vertices: " + vertices.Length + " coordinates is not 3 per vertex");
            if (indices.Length % 3 != 0) throw new ArgumentException("track triangles: " + indices.Length + " indices is not 3 per triangle");
            int triangles = indices.Length / 3, corners = vertices.Length / 3;
            for (var i = 0; i < vertices.Length; i++)
                if (float.IsNaN(vertices[i]) || float.IsInfinity(vertices[i]))
                    throw new ArgumentException("track vertex " + i / 3 + " is not finite");
            for (var i = 0; i < indices.Length; i++)
                if (indices[i] >= corners)
                    throw new ArgumentException("track triangle " + i / 3 + " names vertex " + indices[i] + " of " + corners);
            if (labels.Length == 0)
            {
                labels = new byte[triangles];  // the protocol's default class
                for (var t = 0; t < triangles; t++) labels[t] = Arsim.Core.Labels.Barrier;
            }
            if (labels.Length != triangles)
                throw new ArgumentException("track labels: " + labels.Length + " for " + triangles + " triangles");
            return new TrackSurface { Bvh = new Bvh(vertices, indices), Labels = labels, Normals = UnitNormals(vertices, indices) };
        }

        /// <summary>|cos| of the angle between the unit direction and triangle t's normal
        /// (0 for a degenerate triangle).</summary>
        public double Cosine(int t, double dx, double dy, double dz)
        {
            return Math.Abs(Normals[3 * t] * dx + Normals[3 * t + 1] * dy + Normals[3 * t + 2] * dz);
        }

        static float[] UnitNormals(float[] vertices, uint[] indices)
        {
            var normals = new float[indices.Length];
            for (var t = 0; t < indices.Length / 3; t++)
            {
                var tri = Triangle.Of(vertices, indices, t);
                double nx = tri.E1y * tri.E2z - tri.E1z * tri.E2y, ny = tri.E1z * tri.E2x - tri.E1x * tri.E2z,
                       nz = tri.E1x * tri.E2y - tri.E1y * tri.E2x;
                var length = Math.Sqrt(nx * nx + ny * ny + nz * nz);
                if (!(length > 0)) continue;
                normals[3 * t] = (float)(nx / length);
                normals[3 * t + 1] = (float)(ny / length);
                normals[3 * t + 2] = (float)(nz / length);
            }
            return normals;
        }
    }
}
