using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>A planar scanner (LaserScan): one ray per beam from the car's pose at the
    /// Update, stamped with its time. Frames: ranges and intensity, float32 [beams].</summary>
    public sealed class Lidar2DSensor : Sensor
    {
        readonly Lidar2DSpec spec;
        readonly RangeModel model;
        readonly double[] local;  // beam directions in the sensor frame
        readonly RayBatch rays;
        readonly RayHits hits = new RayHits();

        public Lidar2DSensor(string car, Lidar2DSpec spec, ulong seed) : base(car, spec)
        {
            this.spec = spec;
            model = new RangeModel(spec, seed);
            local = SensorGeometry.PlanarDirections(spec.AngleMin, spec.AngleIncrement, spec.Beams);
            rays = new RayBatch
            {
                Count = spec.Beams, Origins = new float[3 * spec.Beams], Directions = new float[3 * spec.Beams],
                MaxDistance = (float)spec.RangeMax, ExcludeCar = car,
            };
            hits.Ensure(spec.Beams);
        }

        public override void Render(RenderContext context, List<BinaryFrame> frames)
        {
            var placement = SensorPlacement.Of(context.PoseNow(Car), spec.Mount);
            for (var i = 0; i < spec.Beams; i++) placement.WriteRay(local, i, rays, i);
            context.Renderer.CastRays(rays, hits);
            var returns = new LidarReturns(spec.Beams);
            model.Measure(hits, spec.Beams, returns);
            frames.Add(Describe(BinaryFrame.Of(FrameName(""), returns.Ranges, spec.Beams), "ranges", context.TimeNs));
            frames.Add(Describe(BinaryFrame.Of(FrameName("/intensity"), returns.Intensity, spec.Beams), "intensity", context.TimeNs));
        }
    }
}
