using System;
using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>A spinning LiDAR (ouster-ros clouds). Each Update sends the last revolution
    /// completed by its time, stamped with the revolution's start; column j was measured
    /// j * period / columns later, from the pose the car had then (interpolated between
    /// frames), against the other cars where they were at the frame that closes that time,
    /// so a moving car's cloud is distorted as a real one is. Frames, [channels, columns]:
    /// ranges and intensity float32, reflectivity uint16, and with Labels the class of each
    /// return, uint8.</summary>
    public sealed class Lidar3DSensor : Sensor
    {
        readonly Lidar3DSpec spec;
        readonly RangeModel model;
        readonly double[] local;  // ring-major beam directions in the sensor frame
        readonly long[] offsets;  // of each column after the revolution's start [ns]
        readonly RayBatch rays;
        readonly RayHits cast = new RayHits(), revolution = new RayHits();

        public Lidar3DSensor(string car, Lidar3DSpec spec, ulong seed, long framePeriodNs) : base(car, spec)
        {
            this.spec = spec;
            model = new RangeModel(spec, seed);
            local = SensorGeometry.SpinningDirections(spec.AzimuthStart, spec.AzimuthIncrement, spec.Columns, spec.Elevations);
            PeriodNs = SensorGeometry.ScanPeriodNs(spec.RateHz, framePeriodNs);
            offsets = SensorGeometry.ColumnOffsetsNs(PeriodNs, spec.Columns);
            rays = new RayBatch { MaxDistance = (float)spec.RangeMax, ExcludeCar = car };
        }

        /// <summary>One revolution [ns]: how far back the timeline must reach.</summary>
        public long PeriodNs { get; }

        public override void Render(RenderContext context, List<BinaryFrame> frames)
        {
            int channels = spec.Channels, columns = spec.Columns, count = channels * columns;
            var start = SensorGeometry.RevolutionStart(context.TimeNs, PeriodNs);
            var timeline = context.Timeline;
            var track = timeline.TrackOf(Car);
            if (rays.Origins.Length < 3 * count)
            {
                rays.Origins = new float[3 * count];
                rays.Directions = new float[3 * count];
            }
            revolution.Ensure(count);
            // Column times only grow, so the columns that see the cars of one frame are a run.
            for (var first = 0; first < columns;)
            {
                var frame = timeline.FrameAfter(start + offsets[first]);
                var end = first + 1;
                while (end < columns && timeline.FrameAfter(start + offsets[end]) == frame) end++;
                CastColumns(context, track, start, first, end, frame);
                first = end;
            }
            context.Renderer.SetCars(context.Cars.At(timeline.PosesAt(timeline.Count - 1)));
            var returns = new LidarReturns(count);
            model.Measure(revolution, count, returns);
            frames.Add(Describe(BinaryFrame.Of(FrameName(""), returns.Ranges, channels, columns), "ranges", start));
            frames.Add(Describe(BinaryFrame.Of(FrameName("/intensity"), returns.Intensity, channels, columns), "intensity", start));
            frames.Add(Describe(BinaryFrame.Of(FrameName("/reflectivity"), returns.Reflectivity, channels, columns), "reflectivity", start));
            if (spec.Labels)
                frames.Add(Describe(BinaryFrame.Of(FrameName("/labels"), returns.Labels, channels, columns), "labels", start));
        }

        /// <summary>Casts columns [first, end) against the cars of timeline frame
        /// <paramref name="frame"/> and stores the hits in ring-major order (channel c, column
        /// j at c * columns + j).</summary>
        void CastColumns(RenderContext context, PoseTrack track, long start, int first, int end, int frame)
        {
            int channels = spec.Channels, columns = spec.Columns, width = end - first;
            for (var j = first; j < end; j++)
            {
                var placement = SensorPlacement.Of(track.At(start + offsets[j]), spec.Mount);
                for (var c = 0; c < channels; c++) placement.WriteRay(local, c * columns + j, rays, c * width + j - first);
            }
            rays.Count = channels * width;
            cast.Ensure(rays.Count);
            context.Renderer.SetCars(context.Cars.At(context.Timeline.PosesAt(frame)));
            context.Renderer.CastRays(rays, cast);
            for (var c = 0; c < channels; c++)
            {
                Array.Copy(cast.Distance, c * width, revolution.Distance, c * columns + first, width);
                Array.Copy(cast.Label, c * width, revolution.Label, c * columns + first, width);
                Array.Copy(cast.Cosine, c * width, revolution.Cosine, c * columns + first, width);
            }
        }
    }
}
