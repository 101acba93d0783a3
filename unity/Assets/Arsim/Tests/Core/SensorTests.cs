using System;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class RangeModelTests
    {
        static Lidar2DSpec Spec(double rangeMin = 0.3, double rangeMax = 30.0, double noiseStd = 0.0, double dropout = 0.0)
        {
            return new Lidar2DSpec { RangeMin = rangeMin, RangeMax = rangeMax, NoiseStd = noiseStd, Dropout = dropout };
        }

        /// <summary>Hits at these distances on a barrier (0.6) or, for +inf, a miss.</summary>
        static RayHits Hits(params float[] distances)
        {
            var hits = new RayHits();
            hits.Ensure(distances.Length);
            for (var i = 0; i < distances.Length; i++)
            {
                var miss = float.IsInfinity(distances[i]);
                hits.Distance[i] = distances[i];
                hits.Label[i] = miss ? Labels.None : Labels.Barrier;
                hits.Cosine[i] = miss ? 0f : 0.5f;
            }
            return hits;
        }

        static LidarReturns Measure(Lidar2DSpec spec, RayHits hits, ulong seed = 1)
        {
            var returns = new LidarReturns(hits.Distance.Length);
            new RangeModel(spec, seed).Measure(hits, hits.Distance.Length, returns);
            return returns;
        }

        [Test]
        public void WithoutNoiseARangeIsTheHitsDistance()
        {
            var returns = Measure(Spec(), Hits(4.123456f, 0.75f, 29.999f));
            Assert.AreEqual(new[] { 4.123456f, 0.75f, 29.999f }, returns.Ranges);
        }

        [Test]
        public void IntensityFallsWithTheSquareOfTheRangeBeyondOneMetre()
        {
            var returns = Measure(Spec(), Hits(4f, 0.5f));
            Assert.That(returns.Intensity[0], Is.EqualTo(1000 * 0.6 * 0.5 / 16).Within(1e-4));
            Assert.That(returns.Intensity[1], Is.EqualTo(1000 * 0.6 * 0.5).Within(1e-3), "clamped at 1 m");
            Assert.AreEqual(new ushort[] { 60, 60 }, returns.Reflectivity);
            Assert.AreEqual(new[] { Labels.Barrier, Labels.Barrier }, returns.Labels);
        }

        [Test]
        public void SpecialValuesFollowRep117()
        {
            var returns = Measure(Spec(rangeMin: 1.0, rangeMax: 10.0), Hits(float.PositiveInfinity, 0.5f, 12f));
            Assert.AreEqual(float.PositiveInfinity, returns.Ranges[0], "no return");
            Assert.AreEqual(0f, returns.Intensity[0]);
            Assert.AreEqual(0, returns.Reflectivity[0]);
            Assert.AreEqual(Labels.None, returns.Labels[0]);
            Assert.AreEqual(float.NegativeInfinity, returns.Ranges[1], "closer than range_min");
            Assert.AreEqual(Labels.None, returns.Labels[1], "no class without a range");
            Assert.AreEqual(float.PositiveInfinity, returns.Ranges[2], "beyond range_max");
        }

        [Test]
        public void ADroppedReturnIsNaNWithoutIntensityOrReflectivity()
        {
            var returns = Measure(Spec(dropout: 1.0), Hits(3f, 4f));
            Assert.IsTrue(float.IsNaN(returns.Ranges[0]) && float.IsNaN(returns.Ranges[1]));
            Assert.AreEqual(new[] { 0f, 0f }, returns.Intensity);
            Assert.AreEqual(new ushort[] { 0, 0 }, returns.Reflectivity);
            Assert.AreEqual(new[] { Labels.None, Labels.None }, returns.Labels);
        }

        [Test]
        public void NoiseIsGaussianAndTheSameForTheSameSeed()
        {
            var distances = new float[20000];
            for (var i = 0; i < distances.Length; i++) distances[i] = 10f;
            var spec = Spec(noiseStd: 0.05);
            var a = Measure(spec, Hits(distances), 5);
            Assert.AreEqual(a.Ranges, Measure(spec, Hits(distances), 5).Ranges);
            Assert.IsFalse(a.Ranges[0] == Measure(spec, Hits(distances), 6).Ranges[0]);
            double sum = 0, squares = 0;
            foreach (var r in a.Ranges)
            {
                sum += r - 10.0;
                squares += (r - 10.0) * (r - 10.0);
            }
            Assert.That(sum / distances.Length, Is.EqualTo(0).Within(0.002));
            Assert.That(Math.Sqrt(squares / distances.Length), Is.EqualTo(0.05).Within(0.002));
        }
    }

    [TestFixture]
    public class RayCastCameraTests
    {
        /// <summary>A camera 0.5 m up at x, looking along +x at the wall (x = 5).</summary>
        static CameraImages Render(double x = 0.0, double pitch = 0.0, double near = 0.1, double far = 50.0)
        {
            var view = new CameraView
            {
                Car = "ego", Sensor = "cam", Pose = new Pose6(x, 0, 0.5, 0, pitch, 0), Width = 5, Height = 3, Fov = 1.2,
                Near = near, Far = far, Rgb = true, Depth = true, Semantic = true,
            };
            var images = new CameraImages();
            new WallRenderer().RenderCamera(view, images);
            return images;
        }

        [Test]
        public void DepthIsAlongTheOpticalAxisSoAFacingWallIsFlat()
        {
            var images = Render();
            Assert.AreEqual(15, images.Depth.Length);
            for (var i = 0; i < 10; i++)  // rows 0 and 1; row 2 looks under the wall's foot
            {
                Assert.That(images.Depth[i], Is.EqualTo(5.0).Within(1e-5));
                Assert.AreEqual(Labels.Barrier, images.Semantic[i]);
            }
            Assert.AreEqual(float.PositiveInfinity, images.Depth[12]);
            Assert.AreEqual(Labels.None, images.Semantic[12]);
        }

        [Test]
        public void ColourIsTheClassColourShadedByIncidenceInSrgb()
        {
            var rgb = Render().Rgb;
            Assert.AreEqual(45, rgb.Length);
            var centre = 3 * (1 * 5 + 2);
            Assert.AreEqual(new byte[] { 246, 246, 246 }, new[] { rgb[centre], rgb[centre + 1], rgb[centre + 2] }, "barrier 0.92, head on");
            Assert.IsTrue(rgb[0] < rgb[centre], "a corner meets the wall at a slant, so it is darker");
        }

        [Test]
        public void NothingWithinFarIsSkyInfinityAndNone()
        {
            var images = Render(far: 4.0);
            foreach (var depth in images.Depth) Assert.AreEqual(float.PositiveInfinity, depth);
            foreach (var label in images.Semantic) Assert.AreEqual(Labels.None, label);
            Assert.AreEqual(new byte[] { 206, 226, 246 }, new[] { images.Rgb[0], images.Rgb[1], images.Rgb[2] }, "the sky colour");
            Assert.AreEqual(float.PositiveInfinity, Render(pitch: -1.2).Depth[7], "looking up over the wall");
        }

        [Test]
        public void GeometryNearerThanNearIsClipped()
        {
            var images = Render(x: 4.95, near: 0.1);
            Assert.AreEqual(float.PositiveInfinity, images.Depth[7]);
            Assert.That(Render(x: 4.8, near: 0.1).Depth[7], Is.EqualTo(0.2).Within(1e-5));
        }
    }
}
