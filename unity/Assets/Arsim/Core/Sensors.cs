using System;
using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>What a sensor renders from: the renderer, the cars' recent poses, the boxes
    /// of the cars at a frame, and the frame time.</summary>
    public sealed class RenderContext
    {
        public IRenderer Renderer;
        public Timeline Timeline;
        public long TimeNs;
        public Func<int, IReadOnlyList<CarBox>> CarsAtFrame;  // boxes at timeline frame i
    }

    /// <summary>A rendered sensor: a car's, named, of a protocol type.</summary>
    public abstract class Sensor
    {
        public string Car, Name, Type;
        protected SensorNoise Noise;

        public void Reseed(ulong seed) { Noise = new SensorNoise(seed); }

        /// <summary>Append this sensor's frames (named &lt;car&gt;/&lt;sensor&gt; plus a suffix).</summary>
        public abstract void Render(RenderContext context, List<BinaryFrame> frames);

        protected BinaryFrame Describe(BinaryFrame frame, string encoding, long stampNs)
        {
            frame.Meta["car"] = Car;
            frame.Meta["sensor"] = Name;
            frame.Meta["type"] = Type;
            frame.Meta["encoding"] = encoding;
            frame.Meta["stamp_ns"] = stampNs;
            return frame;
        }

        protected string FrameName(string suffix) { return Car + "/" + Name + suffix; }

        public static Sensor Make(string car, SensorSpec spec, ulong seed, long framePeriodNs)
        {
            Sensor sensor;
            if (spec is Lidar2DSpec) sensor = new Lidar2DSensor((Lidar2DSpec)spec);
            else if (spec is Lidar3DSpec) sensor = new Lidar3DSensor((Lidar3DSpec)spec, framePeriodNs);
            else if (spec is CameraSpec) sensor = new CameraSensor((CameraSpec)spec);
            else throw new ProtocolException("sensor type '" + spec.Type + "' is not rendered");
            sensor.Car = car;
            sensor.Name = spec.Name;
            sensor.Type = spec.Type;
            sensor.Reseed(seed);
            return sensor;
        }

        /// <summary>World origin and directions of rays given in the sensor frame, for a
        /// sensor mounted at mount on a car at pose.</summary>
        protected static void WorldRays(Pose6 pose, Pose6 mount, double[] local, int first, int count,
                                        RayBatch rays, int at)
        {
            var car = Rotation.Of(pose);
            var rotation = car * Rotation.Of(mount);
            var origin = car.Apply(Poses.Position(mount));
            double ox = pose.X + origin.X, oy = pose.Y + origin.Y, oz = pose.Z + origin.Z;
            for (var i = 0; i < count; i++)
            {
                var k = 3 * (first + i);
                var d = rotation.Apply(new Vec3(local[k], local[k + 1], local[k + 2]));
                var o = 3 * (at + i);
                rays.Origins[o] = (float)ox; rays.Origins[o + 1] = (float)oy; rays.Origins[o + 2] = (float)oz;
                rays.Directions[o] = (float)d.X; rays.Directions[o + 1] = (float)d.Y; rays.Directions[o + 2] = (float)d.Z;
            }
        }
    }

    /// <summary>How hits become LiDAR measurements (arsim_core.backend.lidar.RangeModel):
    /// Gaussian noise, intensity = 1000 reflectivity |cos| / max(range, 1 m)^2, and REP-117's
    /// +inf (no return within range_max), -inf (closer than range_min), NaN (dropped).</summary>
    public static class RangeModel
    {
        public const double IntensityScale = 1000.0;

        public static void Measure(LidarSpec spec, SensorNoise noise, RayHits hits, int count,
                                   float[] ranges, float[] intensity, ushort[] reflectivity, byte[] labels)
        {
            for (var i = 0; i < count; i++)
            {
                var range = hits.Distance[i];
                if (spec.NoiseStd > 0) range += (float)(noise.NextGaussian() * spec.NoiseStd);
                var clamped = Math.Max(range, 1.0f);
                var label = hits.Label[i];
                var gain = label == Labels.None ? 0.0 : IntensityScale * Labels.Reflectivity(label);
                var shine = (float)(gain * hits.Cosine[i] / (clamped * clamped));
                if (float.IsNaN(shine)) shine = 0f;  // a miss: infinite range, zero cosine
                var percent = label == Labels.None ? (ushort)0 : (ushort)Math.Round(Labels.Reflectivity(label) * 100.0);
                if (range > spec.RangeMax) range = float.PositiveInfinity;
                if (range < spec.RangeMin) range = float.NegativeInfinity;
                if (spec.Dropout > 0 && noise.NextDouble() < spec.Dropout)
                {
                    range = float.NaN;
                    shine = 0f;
                    percent = 0;
                }
                ranges[i] = range;
                intensity[i] = shine;
                if (reflectivity != null) reflectivity[i] = percent;
                if (labels != null) labels[i] = float.IsInfinity(range) || float.IsNaN(range) ? Labels.None : label;
            }
        }
    }

    /// <summary>A planar scanner, one ray per beam at the frame time.</summary>
    public sealed class Lidar2DSensor : Sensor
    {
        readonly Lidar2DSpec spec;
        readonly double[] local;
        readonly RayBatch rays = new RayBatch();
        readonly RayHits hits = new RayHits();

        public Lidar2DSensor(Lidar2DSpec spec)
        {
            this.spec = spec;
            local = SensorGeometry.PlanarDirections(spec.AngleMin, spec.AngleIncrement, spec.Beams);
            rays.Count = spec.Beams;
            rays.Origins = new float[3 * spec.Beams];
            rays.Directions = new float[3 * spec.Beams];
            rays.MaxDistance = (float)spec.RangeMax;
            hits.Ensure(spec.Beams);
        }

        public override void Render(RenderContext context, List<BinaryFrame> frames)
        {
            var timeline = context.Timeline;
            var pose = timeline.PosesAt(timeline.Count - 1)[Car];
            WorldRays(pose, spec.Mount, local, 0, spec.Beams, rays, 0);
            rays.ExcludeCar = Car;
            context.Renderer.CastRays(rays, hits);
            var ranges = new float[spec.Beams];
            var intensity = new float[spec.Beams];
            RangeModel.Measure(spec, Noise, hits, spec.Beams, ranges, intensity, null, null);
            frames.Add(Describe(BinaryFrame.Of(FrameName(""), ranges), "ranges", context.TimeNs));
            frames.Add(Describe(BinaryFrame.Of(FrameName("/intensity"), intensity), "intensity", context.TimeNs));
        }
    }

    /// <summary>A spinning LiDAR: the last revolution completed by the frame time, column j
    /// cast from the car's pose at its own time, against the other cars where they were at
    /// the frame that closes that time, so a moving car's cloud is distorted as a real one.</summary>
    public sealed class Lidar3DSensor : Sensor
    {
        readonly Lidar3DSpec spec;
        readonly double[] local;
        readonly long[] offsets;
        public readonly long PeriodNs;

        public Lidar3DSensor(Lidar3DSpec spec, long framePeriodNs)
        {
            this.spec = spec;
            local = SensorGeometry.SpinningDirections(spec.AzimuthStart, spec.AzimuthIncrement, spec.Columns, spec.Elevations);
            PeriodNs = SensorGeometry.ScanPeriodNs(spec.RateHz, framePeriodNs);
            offsets = SensorGeometry.ColumnOffsetsNs(PeriodNs, spec.Columns);
        }

        public override void Render(RenderContext context, List<BinaryFrame> frames)
        {
            int channels = spec.Channels, columns = spec.Columns, count = channels * columns;
            var start = SensorGeometry.RevolutionStart(context.TimeNs, PeriodNs);
            var timeline = context.Timeline;
            var ranges = new float[count];
            var intensity = new float[count];
            var reflectivity = new ushort[count];
            var labels = spec.Labels ? new byte[count] : null;
            // Columns grouped by the frame whose cars they see; each group one cast.
            var groups = new SortedDictionary<int, List<int>>();
            for (var j = 0; j < columns; j++)
            {
                var frame = timeline.FrameAfter(start + offsets[j]);
                List<int> members;
                if (!groups.TryGetValue(frame, out members)) groups[frame] = members = new List<int>();
                members.Add(j);
            }
            var hits = new RayHits();
            foreach (var group in groups)
            {
                var rays = new RayBatch
                {
                    Count = group.Value.Count * channels, MaxDistance = (float)spec.RangeMax, ExcludeCar = Car,
                };
                rays.Origins = new float[3 * rays.Count];
                rays.Directions = new float[3 * rays.Count];
                var at = 0;
                foreach (var j in group.Value)
                {
                    var pose = timeline.PoseAt(Car, start + offsets[j]);
                    for (var c = 0; c < channels; c++) WorldRays(pose, spec.Mount, local, c * columns + j, 1, rays, at++);
                }
                context.Renderer.SetCars(context.CarsAtFrame(group.Key));
                hits.Ensure(rays.Count);
                context.Renderer.CastRays(rays, hits);
                var groupRanges = new float[rays.Count];
                var groupIntensity = new float[rays.Count];
                var groupReflectivity = new ushort[rays.Count];
                var groupLabels = labels != null ? new byte[rays.Count] : null;
                RangeModel.Measure(spec, Noise, hits, rays.Count, groupRanges, groupIntensity, groupReflectivity, groupLabels);
                at = 0;  // back into ring-major order: (column j, channel c) at c * columns + j
                foreach (var j in group.Value)
                {
                    for (var c = 0; c < channels; c++, at++)
                    {
                        var index = c * columns + j;
                        ranges[index] = groupRanges[at];
                        intensity[index] = groupIntensity[at];
                        reflectivity[index] = groupReflectivity[at];
                        if (labels != null) labels[index] = groupLabels[at];
                    }
                }
            }
            context.Renderer.SetCars(context.CarsAtFrame(timeline.Count - 1));
            frames.Add(Describe(BinaryFrame.Of(FrameName(""), ranges, channels, columns), "ranges", start));
            frames.Add(Describe(BinaryFrame.Of(FrameName("/intensity"), intensity, channels, columns), "intensity", start));
            frames.Add(Describe(BinaryFrame.Of(FrameName("/reflectivity"), reflectivity, channels, columns), "reflectivity", start));
            if (labels != null)
                frames.Add(Describe(BinaryFrame.Of(FrameName("/labels"), labels, channels, columns), "labels", start));
        }
    }

    /// <summary>A pinhole camera at the frame time: colour, depth along the optical axis and
    /// class ids, with the scenario's noise.</summary>
    public sealed class CameraSensor : Sensor
    {
        readonly CameraSpec spec;

        public CameraSensor(CameraSpec spec) { this.spec = spec; }

        public override void Render(RenderContext context, List<BinaryFrame> frames)
        {
            var timeline = context.Timeline;
            var pose = timeline.PosesAt(timeline.Count - 1)[Car];
            var view = new CameraView
            {
                Car = Car, Sensor = Name, Pose = Poses.Compose(pose, spec.Mount), Width = spec.Width,
                Height = spec.Height, Fov = spec.Fov, Near = spec.Near, Far = spec.Far,
                Rgb = spec.Rgb, Depth = spec.Depth, Semantic = spec.Semantic,
            };
            var images = new CameraImages();
            context.Renderer.RenderCamera(view, images);
            int w = spec.Width, h = spec.Height;
            if (spec.Rgb)
            {
                if (spec.NoiseStd > 0)
                    for (var i = 0; i < images.Rgb.Length; i++)
                        images.Rgb[i] = (byte)Math.Max(0, Math.Min(255, Math.Round(images.Rgb[i] + Noise.NextGaussian() * spec.NoiseStd)));
                frames.Add(Describe(BinaryFrame.Of(FrameName("/rgb"), images.Rgb, h, w, 3), "rgb8", context.TimeNs));
            }
            if (spec.Depth)
            {
                if (spec.DepthNoiseStd > 0)
                    for (var i = 0; i < images.Depth.Length; i++)
                        if (!float.IsInfinity(images.Depth[i]))
                            images.Depth[i] += (float)(Noise.NextGaussian() * spec.DepthNoiseStd);
                frames.Add(Describe(BinaryFrame.Of(FrameName("/depth"), images.Depth, h, w), "32FC1", context.TimeNs));
            }
            if (spec.Semantic)
                frames.Add(Describe(BinaryFrame.Of(FrameName("/semantic"), images.Semantic, h, w), "mono8", context.TimeNs));
        }
    }
}
