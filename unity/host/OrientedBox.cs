using System;
using Arsim.Core;

namespace Arsim.Host
{
    /// <summary>A car's box as other cars' sensors see it: length and width centred on the
    /// pose's x, y, from its z up to z + height, turned by R = Rz(yaw) Ry(pitch) Rx(roll).
    /// Rays meet it by the slab test in the box's own axes, with the embedded backend's rules
    /// (arsim_core.backend.boxes): hits within Triangle.MinDistance are ignored, so a ray
    /// starting on a face or inside the box sees its far side.</summary>
    public struct OrientedBox
    {
        // Centre; the box's x, y, z axes in the world (the columns of R); half extents;
        // the bounding sphere's radius, squared.
        readonly double cx, cy, cz;
        readonly double ax, ay, az, bx, by, bz, zx, zy, zz;
        readonly double hx, hy, hz, radius2;

        public OrientedBox(CarBox car)
        {
            var r = Rotation.Of(car.Pose);
            ax = r.M00; ay = r.M10; az = r.M20;
            bx = r.M01; by = r.M11; bz = r.M21;
            zx = r.M02; zy = r.M12; zz = r.M22;
            hx = 0.5 * car.Length;
            hy = 0.5 * car.Width;
            hz = 0.5 * car.Height;
            cx = car.Pose.X + hz * zx;
            cy = car.Pose.Y + hz * zy;
            cz = car.Pose.Z + hz * zz;
            radius2 = hx * hx + hy * hy + hz * hz;
        }

        /// <summary>Whether the ray (unit direction) meets the box nearer than limit and
        /// beyond Triangle.MinDistance; then the distance and |cos| between the ray and the
        /// normal of the face it meets.</summary>
        public bool Cast(double ox, double oy, double oz, double dx, double dy, double dz, double limit,
                         out double distance, out double cosine)
        {
            distance = double.PositiveInfinity;
            cosine = 0;
            double px = ox - cx, py = oy - cy, pz = oz - cz;
            // The bounding sphere first, a little widened: most rays miss most cars.
            var along = -(px * dx + py * dy + pz * dz);
            var aside = px * px + py * py + pz * pz - along * along;
            if (aside > radius2 * (1 + 1e-9) + 1e-12) return false;
            double enter = double.NegativeInfinity, leave = double.PositiveInfinity;
            double enterSlope = 0, leaveSlope = 0;
            if (!Slab(px * ax + py * ay + pz * az, dx * ax + dy * ay + dz * az, hx, ref enter, ref leave, ref enterSlope, ref leaveSlope)
                || !Slab(px * bx + py * by + pz * bz, dx * bx + dy * by + dz * bz, hy, ref enter, ref leave, ref enterSlope, ref leaveSlope)
                || !Slab(px * zx + py * zy + pz * zz, dx * zx + dy * zy + dz * zz, hz, ref enter, ref leave, ref enterSlope, ref leaveSlope)
                || enter > leave)
                return false;
            double t, slope;
            if (enter > Triangle.MinDistance)
            {
                t = enter;
                slope = enterSlope;
            }
            else if (leave > Triangle.MinDistance)  // from inside the box: its far side
            {
                t = leave;
                slope = leaveSlope;
            }
            else return false;
            if (!(t < limit)) return false;
            distance = t;
            cosine = Math.Abs(slope);
            return true;
        }

        /// <summary>One pair of parallel faces, half apart either side of the centre: narrows
        /// [enter, leave] to where the ray is between them (start: the origin's coordinate
        /// along their normal, slope: the direction's). False if the ray runs parallel to them
        /// outside.</summary>
        static bool Slab(double start, double slope, double half, ref double enter, ref double leave,
                         ref double enterSlope, ref double leaveSlope)
        {
            if (slope == 0.0) return start >= -half && start <= half;
            var inverse = 1.0 / slope;
            double low = (-half - start) * inverse, high = (half - start) * inverse;
            double near = slope > 0.0 ? low : high, far = slope > 0.0 ? high : low;
            if (near > enter)
            {
                enter = near;
                enterSlope = slope;
            }
            if (far < leave)
            {
                leave = far;
                leaveSlope = slope;
            }
            return true;
        }
    }
}
