namespace Arsim.Host
{
    /// <summary>A track triangle ready for Möller–Trumbore: its first corner and two edges,
    /// in double. The corners arrive as float32, so the edges are exact in double and the
    /// distances come out within a few double ulps of the true ones: the embedded backend's
    /// float32 Embree agrees within its own rounding (micrometres at 100 m).</summary>
    public struct Triangle
    {
        /// <summary>Hits nearer than this along a ray are ignored [m]: a ray starting on a
        /// surface leaves it, as in the embedded backend's NumPy caster and its boxes.</summary>
        public const double MinDistance = 1e-6;

        /// <summary>|determinant| below which the ray counts as parallel to the triangle (the
        /// NumPy caster's threshold): the ray runs in its plane or nearly so.</summary>
        public const double ParallelDeterminant = 1e-12;

        public double Ax, Ay, Az, E1x, E1y, E1z, E2x, E2y, E2z;

        /// <summary>Triangle t of a mesh: float32 vertices (3 a vertex), 3 indices a triangle.</summary>
        public static Triangle Of(float[] vertices, uint[] indices, int t)
        {
            long a = 3L * indices[3 * t], b = 3L * indices[3 * t + 1], c = 3L * indices[3 * t + 2];
            double ax = vertices[a], ay = vertices[a + 1], az = vertices[a + 2];
            return new Triangle
            {
                Ax = ax, Ay = ay, Az = az,
                E1x = vertices[b] - ax, E1y = vertices[b + 1] - ay, E1z = vertices[b + 2] - az,
                E2x = vertices[c] - ax, E2y = vertices[c + 1] - ay, E2z = vertices[c + 2] - az,
            };
        }

        /// <summary>The distance along the ray (unit direction) to this triangle, or +inf if
        /// it misses or hits no farther than MinDistance. Bvh.Nearest repeats these very
        /// operations inline, so that both give bit-identical distances.</summary>
        public double Distance(double ox, double oy, double oz, double dx, double dy, double dz)
        {
            double px = dy * E2z - dz * E2y, py = dz * E2x - dx * E2z, pz = dx * E2y - dy * E2x;
            var det = E1x * px + E1y * py + E1z * pz;
            if (det > -ParallelDeterminant && det < ParallelDeterminant) return double.PositiveInfinity;
            var inverse = 1.0 / det;
            double sx = ox - Ax, sy = oy - Ay, sz = oz - Az;
            var u = (sx * px + sy * py + sz * pz) * inverse;
            if (u < 0.0 || u > 1.0) return double.PositiveInfinity;
            double qx = sy * E1z - sz * E1y, qy = sz * E1x - sx * E1z, qz = sx * E1y - sy * E1x;
            var v = (dx * qx + dy * qy + dz * qz) * inverse;
            if (v < 0.0 || u + v > 1.0) return double.PositiveInfinity;
            var t = (E2x * qx + E2y * qy + E2z * qz) * inverse;
            return t > MinDistance ? t : double.PositiveInfinity;
        }
    }
}
