using System;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class GeometryTests
    {
        const double Tolerance = 1e-12;

        static void AreClose(Vec3 expected, Vec3 actual)
        {
            Assert.That(actual.X, Is.EqualTo(expected.X).Within(Tolerance));
            Assert.That(actual.Y, Is.EqualTo(expected.Y).Within(Tolerance));
            Assert.That(actual.Z, Is.EqualTo(expected.Z).Within(Tolerance));
        }

        [Test]
        public void YawTurnsCounterClockwiseSeenFromAbove()
        {
            AreClose(new Vec3(0, 1, 0), Rotation.FromRpy(0, 0, Math.PI / 2).Apply(new Vec3(1, 0, 0)));
        }

        [Test]
        public void PitchTiltsTheNoseDownAndRollTheLeftSideUp()
        {
            AreClose(new Vec3(0, 0, -1), Rotation.FromRpy(0, Math.PI / 2, 0).Apply(new Vec3(1, 0, 0)));
            AreClose(new Vec3(0, 0, 1), Rotation.FromRpy(Math.PI / 2, 0, 0).Apply(new Vec3(0, 1, 0)));
        }

        [Test]
        public void RollIsAppliedFirstAndYawLast()
        {
            // Rz(yaw) Ry(pitch) Rx(roll): roll about x, then pitch, then yaw.
            var r = Rotation.FromRpy(Math.PI / 2, 0, Math.PI / 2);
            AreClose(new Vec3(0, 0, 1), r.Apply(new Vec3(0, 1, 0)));
            AreClose(new Vec3(0, 1, 0), r.Apply(new Vec3(1, 0, 0)));
        }

        [Test]
        public void RpyRoundTrips()
        {
            double roll, pitch, yaw;
            Rotation.FromRpy(0.3, -0.4, 2.5).ToRpy(out roll, out pitch, out yaw);
            Assert.That(roll, Is.EqualTo(0.3).Within(Tolerance));
            Assert.That(pitch, Is.EqualTo(-0.4).Within(Tolerance));
            Assert.That(yaw, Is.EqualTo(2.5).Within(Tolerance));
        }

        [Test]
        public void AMountComposesOntoTheCarPose()
        {
            var sensor = Poses.Compose(new Pose6(1, 2, 0, 0, 0, Math.PI / 2), new Pose6(0.5, 0, 0.2, 0, 0.1, 0));
            Assert.That(sensor.X, Is.EqualTo(1).Within(Tolerance));
            Assert.That(sensor.Y, Is.EqualTo(2.5).Within(Tolerance));
            Assert.That(sensor.Z, Is.EqualTo(0.2).Within(Tolerance));
            Assert.That(sensor.Pitch, Is.EqualTo(0.1).Within(Tolerance));
            Assert.That(sensor.Yaw, Is.EqualTo(Math.PI / 2).Within(Tolerance));
        }

        [Test]
        public void RosAxesMapToUnityAndBack()
        {
            double ux, uy, uz, x, y, z;
            Axes.RosToUnity(1, 2, 3, out ux, out uy, out uz);
            Assert.AreEqual(new[] { -2.0, 3.0, 1.0 }, new[] { ux, uy, uz });  // forward is Unity's z, up its y
            Axes.UnityToRos(ux, uy, uz, out x, out y, out z);
            Assert.AreEqual(new[] { 1.0, 2.0, 3.0 }, new[] { x, y, z });
        }

        [Test]
        public void AQuaternionRotatesTheSameVectorInBothAxisConventions()
        {
            double qx, qy, qz, qw, ux, uy, uz, uw;
            Axes.RpyToQuaternion(0.2, -0.3, 1.1, out qx, out qy, out qz, out qw);
            Axes.RosToUnityQuaternion(qx, qy, qz, qw, out ux, out uy, out uz, out uw);
            var ros = Rotation.FromRpy(0.2, -0.3, 1.1).Apply(new Vec3(0.3, -0.7, 0.5));
            double vx, vy, vz;
            Axes.RosToUnity(0.3, -0.7, 0.5, out vx, out vy, out vz);
            var rotated = Rotate(ux, uy, uz, uw, vx, vy, vz);
            double ex, ey, ez;
            Axes.RosToUnity(ros.X, ros.Y, ros.Z, out ex, out ey, out ez);
            Assert.That(rotated[0], Is.EqualTo(ex).Within(1e-12));
            Assert.That(rotated[1], Is.EqualTo(ey).Within(1e-12));
            Assert.That(rotated[2], Is.EqualTo(ez).Within(1e-12));
            double bx, by, bz, bw;
            Axes.UnityToRosQuaternion(ux, uy, uz, uw, out bx, out by, out bz, out bw);
            Assert.AreEqual(new[] { qx, qy, qz, qw }, new[] { bx, by, bz, bw });
        }

        /// <summary>q v q*, the same formula in either handedness.</summary>
        static double[] Rotate(double x, double y, double z, double w, double vx, double vy, double vz)
        {
            double tx = 2 * (y * vz - z * vy), ty = 2 * (z * vx - x * vz), tz = 2 * (x * vy - y * vx);
            return new[] { vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz), vz + w * tz + (x * ty - y * tx) };
        }
    }

    [TestFixture]
    public class SensorGeometryTests
    {
        [Test]
        public void PlanarBeamsRunCounterClockwiseFromAngleMin()
        {
            var d = SensorGeometry.PlanarDirections(-Math.PI / 2, Math.PI / 2, 3);
            Assert.That(d[0], Is.EqualTo(0).Within(1e-12));
            Assert.That(d[1], Is.EqualTo(-1).Within(1e-12));
            Assert.That(d[3], Is.EqualTo(1).Within(1e-12));
            Assert.That(d[7], Is.EqualTo(1).Within(1e-12));
            Assert.AreEqual(0.0, d[2]);
        }

        [Test]
        public void SpinningBeamsAreRingMajorWithTheirElevation()
        {
            var d = SensorGeometry.SpinningDirections(0, -Math.PI / 2, 4, new[] { -0.1, 0.2 });
            var at = 3 * (1 * 4 + 1);  // ring 1, column 1: azimuth -90 degrees, clockwise
            Assert.That(d[at], Is.EqualTo(0).Within(1e-12));
            Assert.That(d[at + 1], Is.EqualTo(-Math.Cos(0.2)).Within(1e-12));
            Assert.That(d[at + 2], Is.EqualTo(Math.Sin(0.2)).Within(1e-12));
        }

        [Test]
        public void ARevolutionIsAWholeNumberOfFrames()
        {
            Assert.AreEqual(3, SensorGeometry.FramesPerSample(13.0, 25000000));
            Assert.AreEqual(75000000, SensorGeometry.ScanPeriodNs(13.0, 25000000));
            Assert.AreEqual(1, SensorGeometry.FramesPerSample(1000.0, 25000000));
            Assert.AreEqual(76923077, SensorGeometry.ScanPeriodNs(13.0, 0));
        }

        [Test]
        public void ColumnsAreSpreadOverTheRevolution()
        {
            Assert.AreEqual(new long[] { 0, 33, 66 }, SensorGeometry.ColumnOffsetsNs(100, 3));
            Assert.AreEqual(100, SensorGeometry.RevolutionStart(250, 100));
            Assert.AreEqual(100, SensorGeometry.RevolutionStart(200, 100));
            Assert.AreEqual(0, SensorGeometry.RevolutionStart(50, 100));
        }

        [Test]
        public void CameraIntrinsicsPutPixelCentresOnIntegers()
        {
            Assert.That(SensorGeometry.FocalLength(640, Math.PI / 2), Is.EqualTo(320).Within(1e-9));
            Assert.AreEqual(319.5, SensorGeometry.PrincipalPoint(640));
        }
    }

    [TestFixture]
    public class TimelineAndNoiseTests
    {
        [Test]
        public void PosesAreInterpolatedAndAnglesTakeTheShortWay()
        {
            var timeline = new Timeline(1000);
            timeline.Add(0, new System.Collections.Generic.Dictionary<string, Pose6> { { "a", new Pose6(0, 0, 0, 0, 0, 3.0) } });
            timeline.Add(100, new System.Collections.Generic.Dictionary<string, Pose6> { { "a", new Pose6(10, 0, 0, 0, 0, -3.0) } });
            var middle = timeline.PoseAt("a", 50);
            Assert.That(middle.X, Is.EqualTo(5).Within(1e-12));
            Assert.That(Math.Abs(Poses.Wrap(middle.Yaw)), Is.EqualTo(Math.PI).Within(1e-9));  // through pi, not 0
            Assert.AreEqual(10, timeline.PoseAt("a", 500).X);
            Assert.AreEqual(1, timeline.FrameAfter(1));
            Assert.AreEqual(1, timeline.FrameAfter(900));
        }

        [Test]
        public void AFrameBackInTimeForgetsTheLaterOnes()
        {
            var timeline = new Timeline(1000);
            var poses = new System.Collections.Generic.Dictionary<string, Pose6> { { "a", new Pose6() } };
            timeline.Add(0, poses);
            timeline.Add(100, poses);
            timeline.Add(50, poses);
            Assert.AreEqual(2, timeline.Count);
            Assert.AreEqual(50, timeline.TimeAt(1));
        }

        [Test]
        public void TheSameSeedGivesTheSameNoise()
        {
            SensorNoise a = new SensorNoise(42), b = new SensorNoise(42), c = new SensorNoise(43);
            for (var i = 0; i < 10; i++) Assert.AreEqual(a.NextGaussian(), b.NextGaussian());
            Assert.AreNotEqual(new SensorNoise(42).NextULong(), c.NextULong());
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
    }
}
