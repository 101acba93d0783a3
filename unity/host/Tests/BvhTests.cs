using System;
using Arsim.Core;
using NUnit.Framework;

namespace Arsim.Host.Tests
{
    [TestFixture]
    public class BvhTests
    {
        /// <summary>The nearest hit by testing every triangle: what the Bvh must find.</summary>
        static int BruteForce(Triangle[] triangles, double ox, double oy, double oz, double dx, double dy, double dz,
                              double maxDistance, out double distance)
        {
            distance = double.PositiveInfinity;
            var found = -1;
            for (var t = 0; t < triangles.Length; t++)
            {
                var d = triangles[t].Distance(ox, oy, oz, dx, dy, dz);
                if (d <= maxDistance && d < distance)
                {
                    distance = d;
                    found = t;
                }
            }
            return found;
        }

        static Triangle[] TrianglesOf(TrackMesh mesh)
        {
            var triangles = new Triangle[mesh.Triangles.Length / 3];
            for (var t = 0; t < triangles.Length; t++) triangles[t] = Triangle.Of(mesh.Vertices, mesh.Triangles, t);
            return triangles;
        }

        [Test]
        public void TheBvhFindsTheNearestHitsThatTestingEveryTriangleFinds()
        {
            var mesh = Meshes.Random(3000, 20, 4, 1.5, 5);
            var bvh = new Bvh(mesh.Vertices, mesh.Triangles);
            var triangles = TrianglesOf(mesh);
            var stack = bvh.NewStack();
            var random = new Random(6);
            int hits = 0, axisAligned = 0;
            for (var r = 0; r < 4000; r++)
            {
                double ox = random.NextDouble() * 44 - 22, oy = random.NextDouble() * 44 - 22, oz = random.NextDouble() * 5 - 0.5;
                double dx, dy, dz;
                if (r % 10 == 0)  // along an axis: directions with zero components
                {
                    dx = dy = dz = 0;
                    var sign = random.Next(2) == 0 ? -1 : 1;
                    var axis = random.Next(3);
                    if (axis == 0) dx = sign;
                    else if (axis == 1) dy = sign;
                    else dz = sign;
                    axisAligned++;
                }
                else
                {
                    var angle = random.NextDouble() * 2 * Math.PI;
                    var slope = random.NextDouble() * 0.6 - 0.3;
                    var norm = Math.Sqrt(1 + slope * slope);
                    dx = (float)(Math.Cos(angle) / norm);
                    dy = (float)(Math.Sin(angle) / norm);
                    dz = (float)(slope / norm);
                }
                var maxDistance = r % 3 == 0 ? 10.0 : 100.0;
                double expected, actual;
                var want = BruteForce(triangles, ox, oy, oz, dx, dy, dz, maxDistance, out expected);
                var got = bvh.Nearest(ox, oy, oz, dx, dy, dz, maxDistance, stack, out actual);
                Assert.AreEqual(expected, actual, "distance of ray " + r);
                Assert.AreEqual(want < 0, got < 0, "hit or miss of ray " + r);
                if (got < 0) continue;
                hits++;
                Assert.AreEqual(expected, triangles[got].Distance(ox, oy, oz, dx, dy, dz), "ray " + r + " names a triangle at that distance");
            }
            Assert.IsTrue(hits > 1000, "enough rays hit to say something: " + hits);
            Assert.IsTrue(axisAligned > 300);
        }

        [Test]
        public void TheCasterReportsTheClassAndCosineOfTheTriangleTheBvhFinds()
        {
            var mesh = Meshes.Random(1000, 10, 2, 2, 8);
            var caster = Meshes.Caster(mesh);
            var triangles = TrianglesOf(mesh);
            var random = new Random(9);
            var checkedHits = 0;
            for (var r = 0; r < 500; r++)
            {
                double ox = random.NextDouble() * 20 - 10, oy = random.NextDouble() * 20 - 10, oz = random.NextDouble() * 2;
                var angle = random.NextDouble() * 2 * Math.PI;
                float dx = (float)Math.Cos(angle), dy = (float)Math.Sin(angle);
                double expected;
                var t = BruteForce(triangles, (float)ox, (float)oy, (float)oz, dx, dy, 0, 100, out expected);
                var hits = Meshes.Cast(caster, new[] { (float)ox, (float)oy, (float)oz }, new[] { dx, dy, 0f });
                if (t < 0)
                {
                    Assert.AreEqual(Labels.None, hits.Label[0]);
                    continue;
                }
                Assert.AreEqual((float)expected, hits.Distance[0], "ray " + r);
                var tri = triangles[t];
                double nx = tri.E1y * tri.E2z - tri.E1z * tri.E2y, ny = tri.E1z * tri.E2x - tri.E1x * tri.E2z, nz = tri.E1x * tri.E2y - tri.E1y * tri.E2x;
                var cosine = Math.Abs(nx * dx + ny * dy) / Math.Sqrt(nx * nx + ny * ny + nz * nz);
                Assert.That(hits.Cosine[0], Is.EqualTo(cosine).Within(1e-6), "ray " + r);
                // Ties between triangles at one distance may name either; the mesh has none.
                Assert.AreEqual(mesh.Labels[t], hits.Label[0], "ray " + r);
                checkedHits++;
            }
            Assert.IsTrue(checkedHits > 100, "enough rays hit to say something: " + checkedHits);
        }

        [Test]
        public void CoincidentTrianglesBeyondALeafsSizeStillBuildAndHit()
        {
            var mesh = new Meshes.Builder();
            for (var i = 0; i < 50; i++) mesh.Triangle(new float[] { 0, 0, 0, 1, 0, 0, 0, 1, 0 }, Labels.Road);
            var bvh = new Bvh(mesh.Mesh("stack").Vertices, mesh.Mesh("stack").Triangles);
            double distance;
            Assert.IsTrue(bvh.Nearest(0.2, 0.2, 1, 0, 0, -1, 10, bvh.NewStack(), out distance) >= 0);
            Assert.AreEqual(1.0, distance);
        }

        [Test]
        public void ATreeHasAtMostTwoNodesATriangleAndBoundedDepth()
        {
            var mesh = Meshes.Random(20000, 100, 1, 0.5, 3);
            var bvh = new Bvh(mesh.Vertices, mesh.Triangles);
            Assert.AreEqual(20000, bvh.TriangleCount);
            Assert.IsTrue(bvh.NodeCount < 2 * 20000, "nodes: " + bvh.NodeCount);
            Assert.IsTrue(bvh.Depth < 48, "depth: " + bvh.Depth);
        }

        [Test]
        public void AnEmptyMeshHasNoHits()
        {
            var bvh = new Bvh(new float[0], new uint[0]);
            double distance;
            Assert.AreEqual(-1, bvh.Nearest(0, 0, 0, 1, 0, 0, 100, bvh.NewStack(), out distance));
            Assert.AreEqual(double.PositiveInfinity, distance);
        }
    }
}
