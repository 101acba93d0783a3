using System;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class GeometryTests
    {
        const double Tolerance = 1e-12;

        static void AreClose(Vec3 expected, Vec3 actual, double tolerance = Tolerance)
        {
            Assert.That(actual.X, Is.EqualTo(expected.X).Within(tolerance));
            Assert.That(actual.Y, Is.EqualTo(expected.Y).Within(tolerance));
            Assert.That(actual.Z, Is.EqualTo(expected.Z).Within(tolerance));
        }

        [Test]
        public void YawTurnsCounterClockwiseSeenFromAbove()
        {
            AreClose(new Vec3(0, 1, 0), Rotation.FromRpy(0, 0, Math.PI / 2).Apply(new Vec3(1, 0, 0)));
        }

        [Test]
        public void PitchTiltsTheNoseDownAndRollLiftsTheLeftSide()
        {
            AreClose(new Vec3(0, 0, -1), Rotation.FromRpy(0, Math.PI / 2, 0).Apply(new Vec3(1, 0, 0)));
            AreClose(new Vec3(0, 0, 1), Rotation.FromRpy(Math.PI / 2, 0, 0).Apply(new Vec3(0, 1, 0)));
        }

        [Test]
        public void RollIsAppliedFirstAndYawLast()
        {
            // Rz(yaw) Ry(pitch) Rx(roll): the left axis is rolled up, then the up axis stays up under yaw.
            var r = Rotation.FromRpy(Math.PI / 2, 0, Math.PI / 2);
            AreClose(new Vec3(0, 0, 1), r.Apply(new Vec3(0, 1, 0)));
            AreClose(new Vec3(0, 1, 0), r.Apply(new Vec3(1, 0, 0)));
            AreClose(new Vec3(1, 0, 0), r.Apply(new Vec3(0, 0, 1)));
        }

        [Test]
        public void TheMatrixIsTheReferencesRowByRow()
        {
            // arsim_core.geometry.rotation_matrix(0.1, 0.2, 0.3), row 0 and column 0 by hand.
            var r = Rotation.FromRpy(0.1, 0.2, 0.3);
            Assert.That(r.M00, Is.EqualTo(Math.Cos(0.3) * Math.Cos(0.2)).Within(Tolerance));
            Assert.That(r.M10, Is.EqualTo(Math.Sin(0.3) * Math.Cos(0.2)).Within(Tolerance));
            Assert.That(r.M20, Is.EqualTo(-Math.Sin(0.2)).Within(Tolerance));
            Assert.That(r.M21, Is.EqualTo(Math.Cos(0.2) * Math.Sin(0.1)).Within(Tolerance));
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
        public void LookingStraightDownKeepsTheHeading()
        {
            // A camera pitched down on a car turned by 1 rad: the composed rotation must be
            // the same matrix whatever roll and yaw the angles come back as.
            var car = new Pose6(0, 0, 0, 0, 0.2, 1.0);
            var mount = new Pose6(0, 0, 0, 0, Math.PI / 2 - 0.2, 0);
            var composed = Poses.Compose(car, mount);
            var expected = Rotation.Of(car) * Rotation.Of(mount);
            var actual = Rotation.Of(composed);
            foreach (var axis in new[] { new Vec3(1, 0, 0), new Vec3(0, 1, 0), new Vec3(0, 0, 1) })
                AreClose(expected.Apply(axis), actual.Apply(axis), 1e-9);
        }

        [Test]
        public void AMountComposesOntoTheCarPose()
        {
            var sensor = Poses.Compose(new Pose6(1, 2, 0, 0, 0, Math.PI / 2), new Pose6(0.5, 0, 0.2, 0, 0.1, 0));
            Assert.That(sensor.X, Is.EqualTo(1).Within(Tolerance));
            Assert.That(sensor.Y, Is.EqualTo(2.5).Within(Tolerance));
            Assert.That(sensor.Z, Is.EqualTo(0.2).Within(Tolerance));
            Assert.That(sensor.Roll, Is.EqualTo(0).Within(Tolerance));
            Assert.That(sensor.Pitch, Is.EqualTo(0.1).Within(Tolerance));
            Assert.That(sensor.Yaw, Is.EqualTo(Math.PI / 2).Within(Tolerance));
        }

        [Test]
        public void APlacementTurnsBeamsByCarAndMount()
        {
            // Car at (1, 2) facing +y; sensor 0.5 m ahead, 0.2 m up, turned left by 90 degrees: it looks along -x.
            var placement = SensorPlacement.Of(new Pose6(1, 2, 0, 0, 0, Math.PI / 2), new Pose6(0.5, 0, 0.2, 0, 0, Math.PI / 2));
            var rays = new RayBatch { Count = 1, Origins = new float[3], Directions = new float[3] };
            placement.WriteRay(new double[] { 1, 0, 0 }, 0, rays, 0);
            Assert.That(rays.Origins[0], Is.EqualTo(1f).Within(1e-6));
            Assert.That(rays.Origins[1], Is.EqualTo(2.5f).Within(1e-6));
            Assert.That(rays.Origins[2], Is.EqualTo(0.2f).Within(1e-6));
            Assert.That(rays.Directions[0], Is.EqualTo(-1f).Within(1e-6));
            Assert.That(rays.Directions[1], Is.EqualTo(0f).Within(1e-6));
        }

        [TestCase(3.0, 3.0)]
        [TestCase(-4.0, 2 * Math.PI - 4.0)]
        [TestCase(7.0, 7.0 - 2 * Math.PI)]
        public void AnglesWrapIntoMinusPiToPi(double angle, double expected)
        {
            Assert.That(Poses.Wrap(angle), Is.EqualTo(expected).Within(Tolerance));
        }

        [Test]
        public void RosAxesMapToUnityAndBack()
        {
            double ux, uy, uz, x, y, z;
            Axes.RosToUnity(1, 2, 3, out ux, out uy, out uz);
            Assert.AreEqual(new[] { -2.0, 3.0, 1.0 }, new[] { ux, uy, uz });  // forward is Unity's z, up its y, left its -x
            Axes.UnityToRos(ux, uy, uz, out x, out y, out z);
            Assert.AreEqual(new[] { 1.0, 2.0, 3.0 }, new[] { x, y, z });
        }

        [Test]
        public void AQuaternionRotatesTheSameVectorInBothConventions()
        {
            double qx, qy, qz, qw, ux, uy, uz, uw;
            Axes.RpyToQuaternion(0.2, -0.3, 1.1, out qx, out qy, out qz, out qw);
            var ros = Rotation.FromRpy(0.2, -0.3, 1.1).Apply(new Vec3(0.3, -0.7, 0.5));
            var viaQuaternion = Rotate(qx, qy, qz, qw, 0.3, -0.7, 0.5);
            Assert.That(viaQuaternion[0], Is.EqualTo(ros.X).Within(Tolerance));
            Assert.That(viaQuaternion[1], Is.EqualTo(ros.Y).Within(Tolerance));
            Assert.That(viaQuaternion[2], Is.EqualTo(ros.Z).Within(Tolerance));

            Axes.RosToUnityQuaternion(qx, qy, qz, qw, out ux, out uy, out uz, out uw);
            double vx, vy, vz, ex, ey, ez;
            Axes.RosToUnity(0.3, -0.7, 0.5, out vx, out vy, out vz);
            Axes.RosToUnity(ros.X, ros.Y, ros.Z, out ex, out ey, out ez);
            var rotated = Rotate(ux, uy, uz, uw, vx, vy, vz);
            Assert.That(rotated[0], Is.EqualTo(ex).Within(Tolerance));
            Assert.That(rotated[1], Is.EqualTo(ey).Within(Tolerance));
            Assert.That(rotated[2], Is.EqualTo(ez).Within(Tolerance));

            double bx, by, bz, bw;
            Axes.UnityToRosQuaternion(ux, uy, uz, uw, out bx, out by, out bz, out bw);
            Assert.AreEqual(new[] { qx, qy, qz, qw }, new[] { bx, by, bz, bw });
        }

        [Test]
        public void AYawIsAUnityTurnToTheLeftAboutUp()
        {
            // 90 degrees counter-clockwise seen from above in REP-103 is -90 degrees about Unity's y.
            double qx, qy, qz, qw, ux, uy, uz, uw;
            Axes.RpyToQuaternion(0, 0, Math.PI / 2, out qx, out qy, out qz, out qw);
            Axes.RosToUnityQuaternion(qx, qy, qz, qw, out ux, out uy, out uz, out uw);
            Assert.That(ux, Is.EqualTo(0).Within(Tolerance));
            Assert.That(uy, Is.EqualTo(-Math.Sin(Math.PI / 4)).Within(Tolerance));
            Assert.That(uz, Is.EqualTo(0).Within(Tolerance));
            Assert.That(uw, Is.EqualTo(Math.Cos(Math.PI / 4)).Within(Tolerance));
        }

        /// <summary>q v q*, the same formula in either handedness.</summary>
        static double[] Rotate(double x, double y, double z, double w, double vx, double vy, double vz)
        {
            double tx = 2 * (y * vz - z * vy), ty = 2 * (z * vx - x * vz), tz = 2 * (x * vy - y * vx);
            return new[] { vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz), vz + w * tz + (x * ty - y * tx) };
        }
    }
}
