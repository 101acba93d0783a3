using System;
using System.Runtime.CompilerServices;

namespace Arsim.Host
{
    /// <summary>A node as BvhBuilder makes it: its bounds and, for a leaf (Count > 0), its
    /// triangles at First .. First + Count of the leaf order; an inner node (Count 0) has
    /// its children at First and First + 1.</summary>
    struct BvhNode
    {
        public float MinX, MinY, MinZ, MaxX, MaxY, MaxZ;
        public int First, Count;

        /// <summary>A box no ray enters: the root of an empty mesh.</summary>
        public static readonly BvhNode Empty = new BvhNode
        {
            MinX = 1, MinY = 1, MinZ = 1, MaxX = -1, MaxY = -1, MaxZ = -1, First = 0, Count = 0,
        };

        /// <summary>The box widened by a millionth (and a micrometre): rounding in the slab
        /// test can then never cull a triangle that touches the box's faces, as a ray
        /// grazing a wall's top edge does.</summary>
        public static BvhNode Padded(float x0, float y0, float z0, float x1, float y1, float z1)
        {
            return new BvhNode
            {
                MinX = Down(x0), MinY = Down(y0), MinZ = Down(z0),
                MaxX = Up(x1), MaxY = Up(y1), MaxZ = Up(z1),
            };
        }

        static float Down(float value) { return (float)(value - (Math.Abs((double)value) + 1.0) * 1e-6); }

        static float Up(float value) { return (float)(value + (Math.Abs((double)value) + 1.0) * 1e-6); }
    }

    /// <summary>A traversal's stack of nodes still to visit, with the distance at which the
    /// ray enters each; one per thread.</summary>
    public sealed class BvhStack
    {
        internal readonly int[] Nodes;
        internal readonly double[] Entries;

        internal BvhStack(int depth)
        {
            Nodes = new int[depth + 1];
            Entries = new double[depth + 1];
        }
    }

    /// <summary>A bounding volume hierarchy over a static triangle mesh, for nearest-hit ray
    /// casts on the CPU: a flat node array (BvhBuilder's binned SAH) and the triangles in
    /// leaf order, precomputed for Möller–Trumbore in double. A traversal visits the nearer
    /// child first and skips any node the ray enters beyond the nearest hit so far.</summary>
    public sealed class Bvh
    {
        // For a zero direction component: 1/dx is then huge but finite, so the slab test of
        // a ray lying in a box's face plane gives 0, not NaN.
        const double Tiny = 1e-300;

        // Node k: bounds[6k ..] = min x, y, z, max x, y, z (the slab test picks the near and
        // far planes by index, without comparisons); links[2k] = First, links[2k + 1] = Count.
        readonly float[] bounds;
        readonly int[] links;
        readonly Triangle[] triangles;  // leaf order
        readonly int[] source;          // leaf order -> index in the mesh

        /// <summary>float32 vertices (3 a vertex) and uint32 triangles (3 vertex indices
        /// each); the indices must be within the vertices (MeshRayCaster checks them).</summary>
        public Bvh(float[] vertices, uint[] indices)
        {
            BvhNode[] nodes;
            int depth;
            BvhBuilder.Build(vertices, indices, out nodes, out source, out depth);
            Depth = depth;
            bounds = new float[6 * nodes.Length];
            links = new int[2 * nodes.Length];
            for (var k = 0; k < nodes.Length; k++)
            {
                bounds[6 * k] = nodes[k].MinX;
                bounds[6 * k + 1] = nodes[k].MinY;
                bounds[6 * k + 2] = nodes[k].MinZ;
                bounds[6 * k + 3] = nodes[k].MaxX;
                bounds[6 * k + 4] = nodes[k].MaxY;
                bounds[6 * k + 5] = nodes[k].MaxZ;
                links[2 * k] = nodes[k].First;
                links[2 * k + 1] = nodes[k].Count;
            }
            triangles = new Triangle[source.Length];
            for (var i = 0; i < source.Length; i++) triangles[i] = Triangle.Of(vertices, indices, source[i]);
        }

        public int TriangleCount { get { return triangles.Length; } }

        public int NodeCount { get { return links.Length / 2; } }

        /// <summary>Levels of the tree; a traversal stack holds at most this many nodes.</summary>
        public int Depth { get; private set; }

        public BvhStack NewStack() { return new BvhStack(Depth); }

        /// <summary>The mesh index of the nearest triangle the ray (unit direction) hits
        /// within maxDistance (inclusive) beyond Triangle.MinDistance, and its distance; -1
        /// and +inf for none. Ties go to the triangle met first. stack: this thread's.</summary>
        public int Nearest(double ox, double oy, double oz, double dx, double dy, double dz, double maxDistance,
                           BvhStack stack, out double distance)
        {
            distance = double.PositiveInfinity;
            var triangles = this.triangles;
            if (triangles.Length == 0 || !(maxDistance > 0)) return -1;
            // Hits are taken while strictly nearer than best: start just beyond maxDistance.
            var best = NextUp(maxDistance);
            var found = -1;
            double ix = 1.0 / (dx != 0 ? dx : Tiny), iy = 1.0 / (dy != 0 ? dy : Tiny), iz = 1.0 / (dz != 0 ? dz : Tiny);
            var bounds = this.bounds;
            var links = this.links;
            // Offsets of the near planes (0: the min, 3: the max) along x, y and z.
            int nx = ix < 0 ? 3 : 0, ny = iy < 0 ? 3 : 0, nz = iz < 0 ? 3 : 0;
            var pending = stack.Nodes;
            var entries = stack.Entries;
            var top = 0;
            var node = 0;
            if (Enter(bounds, 0, nx, ny, nz, ox, oy, oz, ix, iy, iz, best) == double.PositiveInfinity) return -1;
            while (true)
            {
                var count = links[2 * node + 1];
                if (count > 0)
                {
                    for (int i = links[2 * node], end = i + count; i < end; i++)
                    {
                        // Triangle.Distance, inline: a call per triangle would cost a third.
                        ref var tri = ref triangles[i];
                        double px = dy * tri.E2z - dz * tri.E2y, py = dz * tri.E2x - dx * tri.E2z, pz = dx * tri.E2y - dy * tri.E2x;
                        var det = tri.E1x * px + tri.E1y * py + tri.E1z * pz;
                        if (det > -Triangle.ParallelDeterminant && det < Triangle.ParallelDeterminant) continue;
                        var inverse = 1.0 / det;
                        double sx = ox - tri.Ax, sy = oy - tri.Ay, sz = oz - tri.Az;
                        var u = (sx * px + sy * py + sz * pz) * inverse;
                        if (u < 0.0 || u > 1.0) continue;
                        double qx = sy * tri.E1z - sz * tri.E1y, qy = sz * tri.E1x - sx * tri.E1z, qz = sx * tri.E1y - sy * tri.E1x;
                        var v = (dx * qx + dy * qy + dz * qz) * inverse;
                        if (v < 0.0 || u + v > 1.0) continue;
                        var t = (tri.E2x * qx + tri.E2y * qy + tri.E2z * qz) * inverse;
                        if (t > Triangle.MinDistance && t < best)
                        {
                            best = t;
                            found = i;
                        }
                    }
                }
                else
                {
                    var left = links[2 * node];
                    var near = Enter(bounds, 6 * left, nx, ny, nz, ox, oy, oz, ix, iy, iz, best);
                    var far = Enter(bounds, 6 * left + 6, nx, ny, nz, ox, oy, oz, ix, iy, iz, best);
                    var nearNode = left;
                    if (far < near)
                    {
                        var swap = near;
                        near = far;
                        far = swap;
                        nearNode = left + 1;
                    }
                    if (near != double.PositiveInfinity)
                    {
                        if (far != double.PositiveInfinity)
                        {
                            pending[top] = nearNode == left ? left + 1 : left;
                            entries[top++] = far;
                        }
                        node = nearNode;
                        continue;
                    }
                }
                // Next: the latest pending node the ray still enters before the nearest hit.
                node = -1;
                while (top > 0)
                {
                    top--;
                    if (entries[top] < best)
                    {
                        node = pending[top];
                        break;
                    }
                }
                if (node < 0) break;
            }
            if (found < 0) return -1;
            distance = best;
            return source[found];
        }

        /// <summary>Where the ray enters the box at bounds[b ..] (0 if it starts inside), or
        /// +inf if it misses the box or enters it no nearer than limit: the slab test in
        /// double, near planes at offsets nx, ny, nz. Inlined: Mono would call it otherwise.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static double Enter(float[] bounds, int b, int nx, int ny, int nz, double ox, double oy, double oz,
                            double ix, double iy, double iz, double limit)
        {
            double near = (bounds[b + nx] - ox) * ix, far = (bounds[b + 3 - nx] - ox) * ix;
            var t = (bounds[b + 1 + ny] - oy) * iy;
            if (t > near) near = t;
            t = (bounds[b + 4 - ny] - oy) * iy;
            if (t < far) far = t;
            t = (bounds[b + 2 + nz] - oz) * iz;
            if (t > near) near = t;
            t = (bounds[b + 5 - nz] - oz) * iz;
            if (t < far) far = t;
            if (near < 0.0) near = 0.0;
            return near <= far && near < limit ? near : double.PositiveInfinity;
        }

        /// <summary>The least double above value (value itself for +inf).</summary>
        internal static double NextUp(double value)
        {
            if (double.IsPositiveInfinity(value)) return value;
            var bits = BitConverter.DoubleToInt64Bits(value);
            return BitConverter.Int64BitsToDouble(value >= 0 ? bits + 1 : bits - 1);
        }
    }
}
