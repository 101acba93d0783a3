using Arsim.Core;
using UnityEngine;

namespace Arsim.Runtime
{
    /// <summary>The protocol's REP-103 world (x forward, y left, z up) as Unity vectors and
    /// rotations and back, through Arsim.Core's Axes: unity(x, y, z) = (-ros.y, ros.z, ros.x).
    /// Rotations go through the body's axes, so there is one convention to get right.</summary>
    public static class UnityAxes
    {
        public static Vector3 Point(double x, double y, double z)
        {
            double ux, uy, uz;
            Axes.RosToUnity(x, y, z, out ux, out uy, out uz);
            return new Vector3((float)ux, (float)uy, (float)uz);
        }

        /// <summary>The REP-103 vector at xyz[at..at+2] (ray origins and directions, vertices).</summary>
        public static Vector3 Point(float[] xyz, int at)
        {
            return Point(xyz[at], xyz[at + 1], xyz[at + 2]);
        }

        public static Vector3 Position(Pose6 pose)
        {
            return Point(pose.X, pose.Y, pose.Z);
        }

        /// <summary>The Unity rotation whose forward is the pose's x axis and whose up is its z.</summary>
        public static Quaternion Orientation(Pose6 pose)
        {
            var r = Rotation.Of(pose);
            return Quaternion.LookRotation(Point(r.M00, r.M10, r.M20), Point(r.M02, r.M12, r.M22));
        }

        public static Vec3 Ros(Vector3 v)
        {
            double x, y, z;
            Axes.UnityToRos(v.x, v.y, v.z, out x, out y, out z);
            return new Vec3(x, y, z);
        }

        /// <summary>A Unity position and rotation as a REP-103 pose: body x is Unity's forward,
        /// body y (left) is Unity's left, body z is Unity's up.</summary>
        public static Pose6 ToPose(Vector3 position, Quaternion rotation)
        {
            Vec3 p = Ros(position), x = Ros(rotation * Vector3.forward), y = Ros(rotation * Vector3.left), z = Ros(rotation * Vector3.up);
            var matrix = new Rotation
            {
                M00 = x.X, M01 = y.X, M02 = z.X,
                M10 = x.Y, M11 = y.Y, M12 = z.Y,
                M20 = x.Z, M21 = y.Z, M22 = z.Z,
            };
            double roll, pitch, yaw;
            matrix.ToRpy(out roll, out pitch, out yaw);
            return new Pose6(p.X, p.Y, p.Z, roll, pitch, yaw);
        }
    }
}
