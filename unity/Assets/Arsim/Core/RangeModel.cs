using System;

namespace Arsim.Core
{
    /// <summary>One scan's measurements, ray by ray: ranges [m] (REP-117), intensity,
    /// reflectivity [%] and the class of each return (Labels.None where there is none).</summary>
    public sealed class LidarReturns
    {
        public float[] Ranges, Intensity;
        public ushort[] Reflectivity;
        public byte[] Labels;

        public LidarReturns(int count)
        {
            Ranges = new float[count];
            Intensity = new float[count];
            Reflectivity = new ushort[count];
            Labels = new byte[count];
        }
    }

    /// <summary>How hits become LiDAR measurements (backend/lidar.py RangeModel): Gaussian
    /// range noise, intensity = 1000 * reflectivity * |cos| / max(range, 1 m)^2 (a photon
    /// count like Ouster's), reflectivity in percent, and REP-117's +inf (no return within
    /// range_max), -inf (closer than range_min) and NaN (dropped, with no intensity or
    /// reflectivity). Without noise and dropout a range is the hit's distance, unchanged, so
    /// two backends that hit the same surface agree exactly.</summary>
    public sealed class RangeModel
    {
        public const float IntensityScale = 1000f;
        // By class: IntensityScale * reflectivity, and reflectivity in percent; 0 for None.
        static readonly float[] Gain = new float[256];
        static readonly ushort[] Percent = new ushort[256];

        static RangeModel()
        {
            for (var label = 0; label < Labels.None; label++)
            {
                var reflectivity = Labels.Reflectivity((byte)label);
                Gain[label] = IntensityScale * (float)reflectivity;
                Percent[label] = (ushort)Math.Round(reflectivity * 100.0);
            }
        }

        readonly LidarSpec spec;
        readonly SensorNoise noise;

        public RangeModel(LidarSpec spec, ulong seed)
        {
            this.spec = spec;
            noise = new SensorNoise(seed);
        }

        /// <summary>The first count hits as returns (a miss is +inf, class None, |cos| 0, so
        /// it gets neither intensity nor reflectivity through the tables).</summary>
        public void Measure(RayHits hits, int count, LidarReturns returns)
        {
            float rangeMin = (float)spec.RangeMin, rangeMax = (float)spec.RangeMax;
            for (var i = 0; i < count; i++)
            {
                var range = hits.Distance[i];
                if (spec.NoiseStd > 0) range += (float)(noise.NextGaussian() * spec.NoiseStd);
                var label = hits.Label[i];
                var clamped = Math.Max(range, 1f);
                var intensity = Gain[label] * hits.Cosine[i] / (clamped * clamped);
                var reflectivity = Percent[label];
                if (range > rangeMax) range = float.PositiveInfinity;
                if (range < rangeMin) range = float.NegativeInfinity;
                if (spec.Dropout > 0 && noise.NextBernoulli(spec.Dropout))
                {
                    range = float.NaN;
                    intensity = 0f;
                    reflectivity = 0;
                }
                returns.Ranges[i] = range;
                returns.Intensity[i] = intensity;
                returns.Reflectivity[i] = reflectivity;
                returns.Labels[i] = float.IsNaN(range) || float.IsInfinity(range) ? Labels.None : label;
            }
        }
    }
}
