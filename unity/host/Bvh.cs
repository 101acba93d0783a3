using System;
using System.Collections.Generic;

namespace Arsim.Host
{
    /// <summary>A bounding volume hierarchy over a triangle mesh, for nearest-hit ray casts on
    /// the CPU: nodes in one flat array, split at the median of the longest axis of the
    /// centroids' bounds, leaves of at most LeafSize triangles.</summary>
    public sealed class Bvh
    {
        const int LeafSize = 4;
        // Per node: bounds (min xyz, max xyz); children or triangles: a leaf has Count > 0 and
        // its triangles at order[First .. First + Count), an inner node its left child at
        // First and its right child right after the left subtree (Right).
        float[] bounds = new float[0];
        int[] first = new int[0], count = new int[0], right = new int[0];
        int nodes;
        // Triangles in leaf order: vertex 0, edges 1 and 2, unit normal; and the class.
        double[] v0 = new double[0], e1 = new double[0], e2 = new double[0], normal = new double[0];
        byte[] label = new byte[0];

        public int TriangleCount { get; private set; }

        public static Bvh Build(float[] vertices, uint[] triangles, byte[] labels)
        {
            var bvh = new Bvh();
            bvh.Construct(vertices, triangles, labels);
            return bvh;
        }

        void Construct(float[] vertices, uint[] triangles, byte[] labels)
        {
            var n = triangles.Length / 3;
            TriangleCount = n;
            var centroid = new float[3 * n];
            var boxes = new float[6 * n];
            for (var t = 0; t < n; t++)
            {
                for (var axis = 0; axis < 3; axis++)
                {
                    float a = vertices[3 * triangles[3 * t] + axis], b = vertices[3 * triangles[3 * t + 1] + axis],
                          c = vertices[3 * triangles[3 * t + 2] + axis];
                    boxes[6 * t + axis] = Math.Min(a, Math.Min(b, c));
                    boxes[6 * t + 3 + axis] = Math.Max(a, Math.Max(b, c));
                    centroid[3 * t + axis] = (a + b + c) / 3f;
                }
            }
            var order = new int[n];
            for (var t = 0; t < n; t++) order[t] = t;
            var capacity = Math.Max(1, 2 * n);
            bounds = new float[6 * capacity];
            first = new int[capacity];
            count = new int[capacity];
            right = new int[capacity];
            nodes = 0;
            var keys = new float[n];
            var stack = new Stack<int[]>();  // node, begin, end
            stack.Push(new[] { NewNode(), 0, n });
            while (stack.Count > 0)
            {
                var job = stack.Pop();
                int node = job[0], begin = job[1], end = job[2];
                float[] lo = { float.MaxValue, float.MaxValue, float.MaxValue }, hi = { float.MinValue, float.MinValue, float.MinValue };
                float[] clo = { float.MaxValue, float.MaxValue, float.MaxValue }, chi = { float.MinValue, float.MinValue, float.MinValue };
                for (var i = begin; i < end; i++)
                {
                    var t = order[i];
                    for (var axis = 0; axis < 3; axis++)
                    {
                        lo[axis] = Math.Min(lo[axis], boxes[6 * t + axis]);
                        hi[axis] = Math.Max(hi[axis], boxes[6 * t + 3 + axis]);
                        clo[axis] = Math.Min(clo[axis], centroid[3 * t + axis]);
                        chi[axis] = Math.Max(chi[axis], centroid[3 * t + axis]);
                    }
                }
                for (var axis = 0; axis < 3; axis++)
                {
                    bounds[6 * node + axis] = n > 0 ? lo[axis] : 0f;
                    bounds[6 * node + 3 + axis] = n > 0 ? hi[axis] : -1f;  // an empty mesh: a box nothing enters
                }
                var split = 0;
                for (var axis = 1; axis < 3; axis++)
                    if (chi[axis] - clo[axis] > chi[split] - clo[split]) split = axis;
                if (end - begin <= LeafSize || chi[split] - clo[split] <= 0f)
                {
                    first[node] = begin;
                    count[node] = end - begin;
                    continue;
                }
                var middle = (begin + end) / 2;
                for (var i = begin; i < end; i++) keys[i] = centroid[3 * order[i] + split];
                Array.Sort(keys, order, begin, end - begin);
                var left = NewNode();
                var rightNode = NewNode();
                first[node] = left;
                right[node] = rightNode;
                count[node] = 0;
                stack.Push(new[] { rightNode, middle, end });
                stack.Push(new[] { left, begin, middle });
            }
            v0 = new double[3 * n]; e1 = new double[3 * n]; e2 = new double[3 * n]; normal = new double[3 * n];
            label = new byte[n];
            for (var i = 0; i < n; i++)
            {
                var t = order[i];
                double[] a = Vertex(vertices, triangles[3 * t]), b = Vertex(vertices, triangles[3 * t + 1]),
                         c = Vertex(vertices, triangles[3 * t + 2]);
                for (var axis = 0; axis < 3; axis++)
                {
                    v0[3 * i + axis] = a[axis];
                    e1[3 * i + axis] = b[axis] - a[axis];
                    e2[3 * i + axis] = c[axis] - a[axis];
                }
                double nx = e1[3 * i + 1] * e2[3 * i + 2] - e1[3 * i + 2] * e2[3 * i + 1];
                double ny = e1[3 * i + 2] * e2[3 * i] - e1[3 * i] * e2[3 * i + 2];
                double nz = e1[3 * i] * e2[3 * i + 1] - e1[3 * i + 1] * e2[3 * i];
                var length = Math.Sqrt(nx * nx + ny * ny + nz * nz);
                if (length > 0) { nx /= length; ny /= length; nz /= length; }
                normal[3 * i] = nx; normal[3 * i + 1] = ny; normal[3 * i + 2] = nz;
                label[i] = labels[t];
            }
            // Leaves index triangles in leaf order, which is order's.
        }

        int NewNode()
        {
            if (nodes == first.Length)
            {
                Array.Resize(ref bounds, 12 * nodes);
                Array.Resize(ref first, 2 * nodes);
                Array.Resize(ref count, 2 * nodes);
                Array.Resize(ref right, 2 * nodes);
            }
            return nodes++;
        }

        static double[] Vertex(float[] vertices, uint index)
        {
            return new double[] { vertices[3 * index], vertices[3 * index + 1], vertices[3 * index + 2] };
        }

        /// <summary>The nearest triangle hit along the ray within maxDistance: its distance,
        /// class and |cos| of the incidence; false for none.</summary>
        public bool Cast(double ox, double oy, double oz, double dx, double dy, double dz, double maxDistance,
                         out double distance, out byte hitLabel, out double cosine)
        {
            distance = maxDistance;
            hitLabel = 0;
            cosine = 0;
            var found = -1;
            if (TriangleCount == 0) return false;
            double ix = 1.0 / dx, iy = 1.0 / dy, iz = 1.0 / dz;
            var stack = new int[64];
            var top = 0;
            stack[top++] = 0;
            while (top > 0)
            {
                var node = stack[--top];
                if (!EntersBox(node, ox, oy, oz, ix, iy, iz, distance)) continue;
                if (count[node] > 0)
                {
                    for (int i = first[node], end = first[node] + count[node]; i < end; i++)
                    {
                        double t;
                        if (Intersect(i, ox, oy, oz, dx, dy, dz, distance, out t))
                        {
                            distance = t;
                            found = i;
                        }
                    }
                    continue;
                }
                stack[top++] = right[node];
                stack[top++] = first[node];  // left first out: a crude front-to-back order
            }
            if (found < 0) return false;
            hitLabel = label[found];
            cosine = Math.Abs(dx * normal[3 * found] + dy * normal[3 * found + 1] + dz * normal[3 * found + 2]);
            return true;
        }

        bool EntersBox(int node, double ox, double oy, double oz, double ix, double iy, double iz, double maxDistance)
        {
            var b = 6 * node;
            double t1 = (bounds[b] - ox) * ix, t2 = (bounds[b + 3] - ox) * ix;
            double near = Math.Min(t1, t2), far = Math.Max(t1, t2);
            t1 = (bounds[b + 1] - oy) * iy; t2 = (bounds[b + 4] - oy) * iy;
            near = Math.Max(near, Math.Min(t1, t2)); far = Math.Min(far, Math.Max(t1, t2));
            t1 = (bounds[b + 2] - oz) * iz; t2 = (bounds[b + 5] - oz) * iz;
            near = Math.Max(near, Math.Min(t1, t2)); far = Math.Min(far, Math.Max(t1, t2));
            // NaN (a ray in a box's face plane) compares false: count it as entering.
            return !(near > far) && !(far < 0.0) && !(near > maxDistance);
        }

        /// <summary>Moller-Trumbore, in double; hits at t in [0, maxDistance).</summary>
        bool Intersect(int i, double ox, double oy, double oz, double dx, double dy, double dz, double maxDistance, out double t)
        {
            var k = 3 * i;
            double ax = e1[k], ay = e1[k + 1], az = e1[k + 2], bx = e2[k], by = e2[k + 1], bz = e2[k + 2];
            double px = dy * bz - dz * by, py = dz * bx - dx * bz, pz = dx * by - dy * bx;
            var det = ax * px + ay * py + az * pz;
            t = 0;
            if (det > -1e-12 && det < 1e-12) return false;  // parallel to the triangle
            var inv = 1.0 / det;
            double sx = ox - v0[k], sy = oy - v0[k + 1], sz = oz - v0[k + 2];
            var u = (sx * px + sy * py + sz * pz) * inv;
            if (u < 0.0 || u > 1.0) return false;
            double qx = sy * az - sz * ay, qy = sz * ax - sx * az, qz = sx * ay - sy * ax;
            var v = (dx * qx + dy * qy + dz * qz) * inv;
            if (v < 0.0 || u + v > 1.0) return false;
            t = (bx * qx + by * qy + bz * qz) * inv;
            return t >= 0.0 && t < maxDistance;
        }
    }
}
