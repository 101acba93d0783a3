using System;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class NoiseTests
    {
        [Test]
        public void TheSameSeedGivesTheSameNumbers()
        {
            SensorNoise a = new SensorNoise(42), b = new SensorNoise(42);
            for (var i = 0; i < 100; i++)
            {
                Assert.AreEqual(a.NextGaussian(), b.NextGaussian());
                Assert.AreEqual(a.NextDouble(), b.NextDouble());
            }
        }

        [Test]
        public void AnotherSeedOrFrameGivesOthers()
        {
            Assert.IsFalse(new SensorNoise(42).NextULong() == new SensorNoise(43).NextULong());
            Assert.IsFalse(SensorNoise.ForFrame(42, 25).NextULong() == SensorNoise.ForFrame(42, 50).NextULong());
            Assert.AreEqual(SensorNoise.ForFrame(42, 25).NextULong(), SensorNoise.ForFrame(42, 25).NextULong());
        }

        [Test]
        public void TheFirstNumbersOfSeedZeroAreXoshiro256StarStar()
        {
            // xoshiro256** seeded by SplitMix64(0), computed independently of this code.
            var noise = new SensorNoise(0);
            Assert.AreEqual(11091344671253066420UL, noise.NextULong());
            Assert.AreEqual(13793997310169335082UL, noise.NextULong());
        }

        [Test]
        public void GaussianNoiseHasUnitVarianceAndUniformStaysInItsRange()
        {
            var noise = new SensorNoise(7);
            double sum = 0, squares = 0;
            const int n = 200000;
            for (var i = 0; i < n; i++)
            {
                var x = noise.NextGaussian();
                sum += x;
                squares += x * x;
                var u = noise.NextDouble();
                Assert.IsTrue(u >= 0 && u < 1);
            }
            Assert.That(sum / n, Is.EqualTo(0).Within(0.01));
            Assert.That(squares / n, Is.EqualTo(1).Within(0.02));
        }

        [Test]
        public void BernoulliDrawsComeTrueAtTheirRate()
        {
            var noise = new SensorNoise(9);
            var hits = 0;
            for (var i = 0; i < 100000; i++)
                if (noise.NextBernoulli(0.25)) hits++;
            Assert.That(hits / 100000.0, Is.EqualTo(0.25).Within(0.01));
            Assert.IsFalse(noise.NextBernoulli(0.0));
            Assert.IsTrue(noise.NextBernoulli(1.0));
        }
    }
}
