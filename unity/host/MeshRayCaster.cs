using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Arsim.Core;

namespace Arsim.Host
{
    /// <summary>The console host's renderer: the track mesh in a BVH and the cars as oriented
    /// boxes, cast on the CPU in double precision; cameras are cast one ray per pixel.</summary>
    public sealed class MeshRayCaster : IRenderer
    {
        public const string HostName = "arsim-csharp-host";
        const int ParallelRays = 4096;  // below this a batch is cast on the calling thread
        Bvh track = Bvh.Build(new float[0], new uint[0], new byte[0]);
        IReadOnlyList<CarBox> cars = new CarBox[0];

        public string Name { get { return HostName; } }

        public void SetTrack(TrackMesh mesh) { track = Bvh.Build(mesh.Vertices, mesh.Triangles, mesh.Labels); }

        public void SetCars(IReadOnlyList<CarBox> boxes) { cars = boxes; }

        public void CastRays(RayBatch rays, RayHits hits)
        {
            hits.Ensure(rays.Count);
            var boxes = new List<OrientedBox>();
            foreach (var car in cars)
                if (car.Car != rays.ExcludeCar) boxes.Add(new OrientedBox(car));
            if (rays.Count < ParallelRays)
            {
                for (var i = 0; i < rays.Count; i++) CastOne(rays, hits, boxes, i);
                return;
            }
            Parallel.For(0, (rays.Count + 1023) / 1024, chunk =>
            {
                var end = Math.Min(rays.Count, (chunk + 1) * 1024);
                for (var i = chunk * 1024; i < end; i++) CastOne(rays, hits, boxes, i);
            });
        }

        void CastOne(RayBatch rays, RayHits hits, List<OrientedBox> boxes, int i)
        {
            var k = 3 * i;
            double ox = rays.Origins[k], oy = rays.Origins[k + 1], oz = rays.Origins[k + 2];
            double dx = rays.Directions[k], dy = rays.Directions[k + 1], dz = rays.Directions[k + 2];
            double distance, cosine;
            byte label;
            var hit = track.Cast(ox, oy, oz, dx, dy, dz, rays.MaxDistance, out distance, out label, out cosine);
            if (!hit) distance = rays.MaxDistance;
            foreach (var box in boxes)
            {
                double boxDistance, boxCosine;
                if (box.Cast(ox, oy, oz, dx, dy, dz, out boxDistance, out boxCosine) && boxDistance < distance
                    && boxDistance <= rays.MaxDistance)
                {
                    hit = true;
                    distance = boxDistance;
                    cosine = boxCosine;
                    label = Labels.Car;
                }
            }
            hits.Distance[i] = hit ? (float)distance : float.PositiveInfinity;
            hits.Label[i] = hit ? label : Labels.None;
            hits.Cosine[i] = hit ? (float)cosine : 0f;
        }

        public void RenderCamera(CameraView view, CameraImages images) { RayCastCamera.Render(this, view, images); }
    }

    /// <summary>A car's box: length and width centred on the pose, from its z up to the
    /// height, intersected with the slab test in the box's own axes.</summary>
    struct OrientedBox
    {
        const double Epsilon = 1e-6;  // a ray starting on a face leaves through the far side
        readonly Rotation rotation;
        readonly double cx, cy, cz, hx, hy, hz;

        public OrientedBox(CarBox car)
        {
            rotation = Rotation.Of(car.Pose);
            hx = car.Length / 2; hy = car.Width / 2; hz = car.Height / 2;
            var up = rotation.Apply(new Vec3(0, 0, hz));
            cx = car.Pose.X + up.X; cy = car.Pose.Y + up.Y; cz = car.Pose.Z + up.Z;
        }

        public bool Cast(double ox, double oy, double oz, double dx, double dy, double dz, out double distance, out double cosine)
        {
            var o = rotation.ApplyInverse(new Vec3(ox - cx, oy - cy, oz - cz));
            var d = rotation.ApplyInverse(new Vec3(dx, dy, dz));
            double[] origin = { o.X, o.Y, o.Z }, direction = { d.X, d.Y, d.Z }, half = { hx, hy, hz };
            double near = double.NegativeInfinity, far = double.PositiveInfinity;
            int nearAxis = 0, farAxis = 0;
            distance = 0;
            cosine = 0;
            for (var axis = 0; axis < 3; axis++)
            {
                if (Math.Abs(direction[axis]) < 1e-15)
                {
                    if (Math.Abs(origin[axis]) > half[axis]) return false;
                    continue;
                }
                double t1 = (-half[axis] - origin[axis]) / direction[axis], t2 = (half[axis] - origin[axis]) / direction[axis];
                if (t1 > t2) { var swap = t1; t1 = t2; t2 = swap; }
                if (t1 > near) { near = t1; nearAxis = axis; }
                if (t2 < far) { far = t2; farAxis = axis; }
            }
            if (near > far || far < Epsilon) return false;
            var axisHit = near >= Epsilon ? nearAxis : farAxis;
            distance = near >= Epsilon ? near : far;
            cosine = Math.Abs(direction[axisHit]);
            return true;
        }
    }
}
