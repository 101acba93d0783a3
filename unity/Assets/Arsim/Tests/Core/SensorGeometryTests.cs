using System;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class SensorGeometryTests
    {
        const double Tolerance = 1e-12;

        [Test]
        public void PlanarBeamsRunCounterClockwiseFromAngleMin()
        {
            var d = SensorGeometry.PlanarDirections(-Math.PI / 2, Math.PI / 2, 3);  // -y, +x, +y
            var expected = new double[] { 0, -1, 0, 1, 0, 0, 0, 1, 0 };
            Assert.AreEqual(9, d.Length);
            for (var i = 0; i < 9; i++) Assert.That(d[i], Is.EqualTo(expected[i]).Within(Tolerance));
        }

        [Test]
        public void SpinningBeamsAreRingMajorWithTheirElevation()
        {
            // Two rings, four columns turning clockwise: ring 1, column 1 looks along -y, 0.2 rad up.
            var d = SensorGeometry.SpinningDirections(0, -Math.PI / 2, 4, new[] { -0.1, 0.2 });
            Assert.AreEqual(3 * 2 * 4, d.Length);
            var at = 3 * (1 * 4 + 1);
            Assert.That(d[at], Is.EqualTo(0).Within(Tolerance));
            Assert.That(d[at + 1], Is.EqualTo(-Math.Cos(0.2)).Within(Tolerance));
            Assert.That(d[at + 2], Is.EqualTo(Math.Sin(0.2)).Within(Tolerance));
            Assert.That(d[0], Is.EqualTo(Math.Cos(-0.1)).Within(Tolerance));  // ring 0, column 0: +x, 0.1 rad down
            Assert.That(d[2], Is.EqualTo(Math.Sin(-0.1)).Within(Tolerance));
        }

        [Test]
        public void ARevolutionIsAWholeNumberOfFrames()
        {
            Assert.AreEqual(3, SensorGeometry.FramesPerSample(13.0, 25000000));  // 3.08 frames
            Assert.AreEqual(75000000, SensorGeometry.ScanPeriodNs(13.0, 25000000));
            Assert.AreEqual(1, SensorGeometry.FramesPerSample(1000.0, 25000000), "at least every frame");
            Assert.AreEqual(2, SensorGeometry.FramesPerSample(16.0, 25000000), "2.5 rounds to even, as Python's round");
            Assert.AreEqual(76923077, SensorGeometry.ScanPeriodNs(13.0, 0), "without a frame period: 1 / rate");
        }

        [Test]
        public void ColumnsAreSpreadOverTheRevolutionRoundedDown()
        {
            Assert.AreEqual(new long[] { 0, 33, 66 }, SensorGeometry.ColumnOffsetsNs(100, 3));
            var offsets = SensorGeometry.ColumnOffsetsNs(4000000000000L, 1 << 24);  // j * period overflows 64 bits
            Assert.AreEqual(3999999761581L, offsets[(1 << 24) - 1]);
        }

        [Test]
        public void ACloudIsStampedWithTheStartOfTheLastCompleteRevolution()
        {
            Assert.AreEqual(100, SensorGeometry.RevolutionStart(250, 100));
            Assert.AreEqual(100, SensorGeometry.RevolutionStart(200, 100));
            Assert.AreEqual(0, SensorGeometry.RevolutionStart(50, 100), "none complete yet");
            Assert.AreEqual(0, SensorGeometry.RevolutionStart(-250, 100));
            Assert.AreEqual(0, SensorGeometry.RevolutionStart(long.MinValue, 100), "no overflow");
            Assert.AreEqual(long.MaxValue / 100 * 100 - 100, SensorGeometry.RevolutionStart(long.MaxValue, 100));
        }

        [Test]
        public void CameraIntrinsicsPutPixelCentresOnIntegers()
        {
            Assert.That(SensorGeometry.FocalLength(640, Math.PI / 2), Is.EqualTo(320).Within(1e-9));
            Assert.AreEqual(319.5, SensorGeometry.PrincipalPoint(640));
            Assert.AreEqual(2.0, SensorGeometry.PrincipalPoint(5));
        }
    }
}
