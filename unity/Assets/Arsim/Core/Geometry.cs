using System;

namespace Arsim.Core
{
    /// <summary>A rotation matrix, row-major: R = Rz(yaw) Ry(pitch) Rx(roll), the convention
    /// of the protocol's poses and mounts (arsim_core.geometry.rotation_matrix), so a C# and a
    /// Python backend turn the same pose into the same axes.</summary>
    public struct Rotation
    {
        public double M00, M01, M02, M10, M11, M12, M20, M21, M22;

        public static Rotation FromRpy(double roll, double pitch, double yaw)
        {
            double cr = Math.Cos(roll), sr = Math.Sin(roll);
            double cp = Math.Cos(pitch), sp = Math.Sin(pitch);
            double cy = Math.Cos(yaw), sy = Math.Sin(yaw);
            return new Rotation
            {
                M00 = cy * cp, M01 = cy * sp * sr - sy * cr, M02 = cy * sp * cr + sy * sr,
                M10 = sy * cp, M11 = sy * sp * sr + cy * cr, M12 = sy * sp * cr - cy * sr,
                M20 = -sp, M21 = cp * sr, M22 = cp * cr,
            };
        }

        public static Rotation Of(Pose6 pose) { return FromRpy(pose.Roll, pose.Pitch, pose.Yaw); }

        public Vec3 Apply(Vec3 v) { return Apply(v.X, v.Y, v.Z); }

        public Vec3 Apply(double x, double y, double z)
        {
            return new Vec3(M00 * x + M01 * y + M02 * z,
                            M10 * x + M11 * y + M12 * z,
                            M20 * x + M21 * y + M22 * z);
        }

        public static Rotation operator *(Rotation a, Rotation b)
        {
            return new Rotation
            {
                M00 = a.M00 * b.M00 + a.M01 * b.M10 + a.M02 * b.M20,
                M01 = a.M00 * b.M01 + a.M01 * b.M11 + a.M02 * b.M21,
                M02 = a.M00 * b.M02 + a.M01 * b.M12 + a.M02 * b.M22,
                M10 = a.M10 * b.M00 + a.M11 * b.M10 + a.M12 * b.M20,
                M11 = a.M10 * b.M01 + a.M11 * b.M11 + a.M12 * b.M21,
                M12 = a.M10 * b.M02 + a.M11 * b.M12 + a.M12 * b.M22,
                M20 = a.M20 * b.M00 + a.M21 * b.M10 + a.M22 * b.M20,
                M21 = a.M20 * b.M01 + a.M21 * b.M11 + a.M22 * b.M21,
                M22 = a.M20 * b.M02 + a.M21 * b.M12 + a.M22 * b.M22,
            };
        }

        /// <summary>Roll, pitch, yaw of this rotation, pitch in [-pi/2, pi/2]. Looking straight
        /// up or down only roll - yaw (or roll + yaw) is defined; roll is then 0, so a camera
        /// that looks at the ground keeps its heading instead of rounding noise.</summary>
        public void ToRpy(out double roll, out double pitch, out double yaw)
        {
            pitch = Math.Asin(Math.Max(-1.0, Math.Min(1.0, -M20)));
            if (Math.Sqrt(M00 * M00 + M10 * M10) < 1e-9)
            {
                roll = 0.0;
                yaw = Math.Atan2(-M01, M11);
                return;
            }
            roll = Math.Atan2(M21, M22);
            yaw = Math.Atan2(M10, M00);
        }
    }

    /// <summary>Pose arithmetic: a sensor's pose in the world is the car's pose composed with
    /// the sensor's mount.</summary>
    public static class Poses
    {
        public static Vec3 Position(Pose6 pose) { return new Vec3(pose.X, pose.Y, pose.Z); }

        /// <summary>child, given in parent's frame, in the frame parent is given in.</summary>
        public static Pose6 Compose(Pose6 parent, Pose6 child)
        {
            var rotation = Rotation.Of(parent);
            var offset = rotation.Apply(Position(child));
            double roll, pitch, yaw;
            var combined = rotation * Rotation.Of(child);
            combined.ToRpy(out roll, out pitch, out yaw);
            return new Pose6(parent.X + offset.X, parent.Y + offset.Y, parent.Z + offset.Z, roll, pitch, yaw);
        }

        /// <summary>x, y, z, roll, pitch, yaw as the protocol lists them.</summary>
        public static Pose6 FromArray(double[] values)
        {
            return new Pose6(values[0], values[1], values[2], values[3], values[4], values[5]);
        }

        /// <summary>Angle wrapped to [-pi, pi), as timeline.py's _wrap.</summary>
        public static double Wrap(double angle)
        {
            var wrapped = (angle + Math.PI) % (2.0 * Math.PI);
            if (wrapped < 0) wrapped += 2.0 * Math.PI;
            return wrapped - Math.PI;
        }
    }

    /// <summary>Where a sensor is in the world: the car's pose with the mount applied once, so
    /// every beam of the sensor is turned by one matrix (lidar.py's sensor_rays).</summary>
    public struct SensorPlacement
    {
        public Vec3 Origin;
        public Rotation Rotation;

        public static SensorPlacement Of(Pose6 car, Pose6 mount)
        {
            var carRotation = Rotation.Of(car);
            var offset = carRotation.Apply(Poses.Position(mount));
            return new SensorPlacement
            {
                Origin = new Vec3(car.X + offset.X, car.Y + offset.Y, car.Z + offset.Z),
                Rotation = carRotation * Rotation.Of(mount),
            };
        }

        /// <summary>Writes ray <paramref name="at"/> of the batch: this origin, and the unit
        /// vector of <paramref name="beam"/> in the sensor frame (local[3 * beam ..]) turned into
        /// the world.</summary>
        public void WriteRay(double[] local, int beam, RayBatch rays, int at)
        {
            var d = Rotation.Apply(local[3 * beam], local[3 * beam + 1], local[3 * beam + 2]);
            var k = 3 * at;
            rays.Origins[k] = (float)Origin.X;
            rays.Origins[k + 1] = (float)Origin.Y;
            rays.Origins[k + 2] = (float)Origin.Z;
            rays.Directions[k] = (float)d.X;
            rays.Directions[k + 1] = (float)d.Y;
            rays.Directions[k + 2] = (float)d.Z;
        }
    }

    /// <summary>REP-103 (x forward, y left, z up; right-handed) to Unity's axes (x right, y up,
    /// z forward; left-handed) and back: unity = (-ros.y, ros.z, ros.x). The one place the two
    /// conventions meet, so the engine side cannot get a sign wrong twice.</summary>
    public static class Axes
    {
        public static void RosToUnity(double x, double y, double z, out double ux, out double uy, out double uz)
        {
            ux = -y; uy = z; uz = x;
        }

        public static void UnityToRos(double ux, double uy, double uz, out double x, out double y, out double z)
        {
            x = uz; y = -ux; z = uy;
        }

        /// <summary>A REP-103 quaternion (x, y, z, w) as Unity's: the vector part maps as a
        /// vector and changes sign, as the handedness changes (the axis map has determinant -1).</summary>
        public static void RosToUnityQuaternion(double x, double y, double z, double w,
                                                out double ux, out double uy, out double uz, out double uw)
        {
            ux = y; uy = -z; uz = -x; uw = w;
        }

        public static void UnityToRosQuaternion(double ux, double uy, double uz, double uw,
                                                out double x, out double y, out double z, out double w)
        {
            x = -uz; y = ux; z = -uy; w = uw;
        }

        /// <summary>Roll, pitch, yaw as a REP-103 quaternion (x, y, z, w), as
        /// arsim_core.geometry.rpy_to_quaternion.</summary>
        public static void RpyToQuaternion(double roll, double pitch, double yaw,
                                           out double x, out double y, out double z, out double w)
        {
            double cr = Math.Cos(roll / 2), sr = Math.Sin(roll / 2);
            double cp = Math.Cos(pitch / 2), sp = Math.Sin(pitch / 2);
            double cy = Math.Cos(yaw / 2), sy = Math.Sin(yaw / 2);
            w = cr * cp * cy + sr * sp * sy;
            x = sr * cp * cy - cr * sp * sy;
            y = cr * sp * cy + sr * cp * sy;
            z = cr * cp * sy - sr * sp * cy;
        }
    }
}
