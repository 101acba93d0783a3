using System;

namespace Arsim.Core
{
    /// <summary>Beam tables, sensor timing and the pinhole model, with the formulas of
    /// arsim_core.sensors.beams and pinhole, so the C# and Python backends cast the same rays
    /// at the same times and the republishers turn either's ranges back into the same points.</summary>
    public static class SensorGeometry
    {
        /// <summary>Unit vectors (3 per beam) in the sensor's x-y plane, counter-clockwise
        /// from angleMin.</summary>
        public static double[] PlanarDirections(double angleMin, double angleIncrement, int beams)
        {
            var directions = new double[3 * beams];
            for (var i = 0; i < beams; i++)
            {
                var angle = angleMin + angleIncrement * i;
                directions[3 * i] = Math.Cos(angle);
                directions[3 * i + 1] = Math.Sin(angle);
            }
            return directions;
        }

        /// <summary>Unit vectors (3 per ray), ring-major as the frames are: ray (channel c,
        /// column j) at 3 * (c * columns + j), column j at azimuthStart + j * azimuthIncrement.</summary>
        public static double[] SpinningDirections(double azimuthStart, double azimuthIncrement, int columns,
                                                  double[] elevations)
        {
            var directions = new double[3 * elevations.Length * columns];
            for (var c = 0; c < elevations.Length; c++)
            {
                double ce = Math.Cos(elevations[c]), se = Math.Sin(elevations[c]);
                for (var j = 0; j < columns; j++)
                {
                    var azimuth = azimuthStart + azimuthIncrement * j;
                    var at = 3 * (c * columns + j);
                    directions[at] = ce * Math.Cos(azimuth);
                    directions[at + 1] = ce * Math.Sin(azimuth);
                    directions[at + 2] = se;
                }
            }
            return directions;
        }

        /// <summary>How many frames apart a sensor of rateHz is due: the bridge renders only
        /// on frame times (at least every frame). Python's round() rounds half to even, as
        /// Math.Round does.</summary>
        public static long FramesPerSample(double rateHz, long framePeriodNs)
        {
            return Math.Max(1L, (long)Math.Round(1e9 / (rateHz * framePeriodNs)));
        }

        /// <summary>One revolution [ns]: a whole number of frames, or 1 / rate without a frame
        /// period.</summary>
        public static long ScanPeriodNs(double rateHz, long framePeriodNs)
        {
            return framePeriodNs > 0 ? FramesPerSample(rateHz, framePeriodNs) * framePeriodNs
                                     : (long)Math.Round(1e9 / rateHz);
        }

        /// <summary>Time of each column after its revolution's start [ns]: j * period /
        /// columns rounded down, split as j * (period / columns) + j * (period % columns) /
        /// columns so that no product overflows.</summary>
        public static long[] ColumnOffsetsNs(long periodNs, int columns)
        {
            long whole = periodNs / columns, rest = periodNs % columns;
            var offsets = new long[columns];
            for (var j = 0; j < columns; j++) offsets[j] = j * whole + j * rest / columns;
            return offsets;
        }

        /// <summary>Start of the last revolution completed by timeNs, the cloud's stamp: 0
        /// until one is complete.</summary>
        public static long RevolutionStart(long timeNs, long periodNs)
        {
            var completed = FloorDiv(timeNs, periodNs);
            return completed < 1 ? 0L : (completed - 1) * periodNs;
        }

        static long FloorDiv(long a, long b)
        {
            var q = a / b;
            return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
        }

        /// <summary>Focal length [px] of square pixels with horizontalFov across the full
        /// width (pinhole.Intrinsics.from_fov).</summary>
        public static double FocalLength(int width, double horizontalFov)
        {
            return (width / 2.0) / Math.Tan(horizontalFov / 2.0);
        }

        /// <summary>Principal point of a centred optical axis: pixel centres are integers
        /// (ROS and OpenCV), so it is (size - 1) / 2.</summary>
        public static double PrincipalPoint(int size) { return (size - 1) / 2.0; }
    }
}
