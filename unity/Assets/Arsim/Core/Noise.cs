using System;

namespace Arsim.Core
{
    /// <summary>A sensor's seeded random numbers: xoshiro256** seeded through SplitMix64. The
    /// same seed gives the same noise and dropout on every platform and runtime, which
    /// System.Random does not promise (it need not match NumPy's generator, only itself).</summary>
    public sealed class SensorNoise
    {
        ulong s0, s1, s2, s3;
        double spare;
        bool hasSpare;

        public SensorNoise(ulong seed)
        {
            var x = seed;
            s0 = SplitMix(ref x);
            s1 = SplitMix(ref x);
            s2 = SplitMix(ref x);
            s3 = SplitMix(ref x);
        }

        /// <summary>A seed of its own for each frame of a sensor, so a camera's noise depends
        /// on the seed and the frame time only, not on which frames came before (as the
        /// embedded backend's raster.seed_of).</summary>
        public static SensorNoise ForFrame(ulong seed, long timeNs)
        {
            var x = seed;
            return new SensorNoise(SplitMix(ref x) ^ (ulong)timeNs);
        }

        static ulong SplitMix(ref ulong x)
        {
            x += 0x9E3779B97F4A7C15UL;
            var z = x;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
            return z ^ (z >> 31);
        }

        static ulong Rotl(ulong x, int k) { return (x << k) | (x >> (64 - k)); }

        public ulong NextULong()
        {
            var result = Rotl(s1 * 5, 7) * 9;
            var t = s1 << 17;
            s2 ^= s0;
            s3 ^= s1;
            s1 ^= s2;
            s0 ^= s3;
            s2 ^= t;
            s3 = Rotl(s3, 45);
            return result;
        }

        /// <summary>Uniform in [0, 1), from the top 53 bits.</summary>
        public double NextDouble() { return (NextULong() >> 11) * (1.0 / (1UL << 53)); }

        /// <summary>True with the given probability: a dropped return.</summary>
        public bool NextBernoulli(double probability) { return NextDouble() < probability; }

        /// <summary>Standard normal (Marsaglia's polar method: two values per draw, no tables).</summary>
        public double NextGaussian()
        {
            if (hasSpare)
            {
                hasSpare = false;
                return spare;
            }
            double u, v, s;
            do
            {
                u = 2.0 * NextDouble() - 1.0;
                v = 2.0 * NextDouble() - 1.0;
                s = u * u + v * v;
            } while (s >= 1.0 || s == 0.0);
            var factor = Math.Sqrt(-2.0 * Math.Log(s) / s);
            spare = v * factor;
            hasSpare = true;
            return u * factor;
        }
    }
}
