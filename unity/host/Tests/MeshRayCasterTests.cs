using System;
using System.Collections.Generic;
using Arsim.Core;
using NUnit.Framework;

namespace Arsim.Host.Tests
{
    [TestFixture]
    public class MeshRayCasterTests
    {
        /// <summary>A square room of side 2 * half, walls 1 m high, two triangles a wall, and a
        /// floor labelled road.</summary>
        static TrackMesh Room(float half)
        {
            var corners = new[] { -half, -half, half, -half, half, half, -half, half };
            var vertices = new List<float>();
            var triangles = new List<uint>();
            var labels = new List<byte>();
            for (var i = 0; i < 4; i++)
            {
                float ax = corners[2 * i], ay = corners[2 * i + 1], bx = corners[(2 * i + 2) % 8], by = corners[(2 * i + 3) % 8];
                var k = (uint)(vertices.Count / 3);
                vertices.AddRange(new[] { ax, ay, 0f, bx, by, 0f, bx, by, 1f, ax, ay, 1f });
                triangles.AddRange(new[] { k, k + 1, k + 2, k, k + 2, k + 3 });
                labels.AddRange(new[] { Labels.Barrier, Labels.Barrier });
            }
            var f = (uint)(vertices.Count / 3);
            vertices.AddRange(new[] { -half, -half, 0f, half, -half, 0f, half, half, 0f, -half, half, 0f });
            triangles.AddRange(new[] { f, f + 1, f + 2, f, f + 2, f + 3 });
            labels.AddRange(new[] { Labels.Road, Labels.Road });
            return new TrackMesh { Name = "room", Vertices = vertices.ToArray(), Triangles = triangles.ToArray(), Labels = labels.ToArray() };
        }

        static RayHits Cast(IRenderer renderer, float[] origins, float[] directions, float max = 100f, string exclude = null)
        {
            var rays = new RayBatch { Count = origins.Length / 3, Origins = origins, Directions = directions, MaxDistance = max, ExcludeCar = exclude };
            var hits = new RayHits();
            renderer.CastRays(rays, hits);
            return hits;
        }

        [Test]
        public void RaysInARoomHitTheWallsAtHandComputedDistances()
        {
            var caster = new MeshRayCaster();
            caster.SetTrack(Room(5f));
            var s = (float)Math.Sqrt(0.5);
            var hits = Cast(caster, new float[] { 1, 0, 0.5f, 1, 0, 0.5f, 0, 0, 0.5f, 0, 0, 0.5f },
                            new[] { 1f, 0, 0, -1f, 0, 0, s, s, 0, 0, 0, -1f });
            Assert.That(hits.Distance[0], Is.EqualTo(4f).Within(1e-6));
            Assert.That(hits.Distance[1], Is.EqualTo(6f).Within(1e-6));
            Assert.That(hits.Distance[2], Is.EqualTo(5 * Math.Sqrt(2)).Within(1e-5));  // the corner
            Assert.That(hits.Distance[3], Is.EqualTo(0.5f).Within(1e-6));
            Assert.AreEqual(Labels.Barrier, hits.Label[0]);
            Assert.AreEqual(Labels.Road, hits.Label[3]);
            Assert.That(hits.Cosine[0], Is.EqualTo(1f).Within(1e-6));
            Assert.That(hits.Cosine[2], Is.EqualTo(s).Within(1e-5));
        }

        [Test]
        public void MissesAndRaysBeyondTheRangeAreInfinite()
        {
            var caster = new MeshRayCaster();
            caster.SetTrack(Room(5f));
            var hits = Cast(caster, new float[] { 0, 0, 0.5f, 0, 0, 0.5f }, new[] { 0f, 0, 1f, 1f, 0, 0 }, 3f);
            Assert.AreEqual(float.PositiveInfinity, hits.Distance[0], "up: nothing");
            Assert.AreEqual(Labels.None, hits.Label[0]);
            Assert.AreEqual(0f, hits.Cosine[0]);
            Assert.AreEqual(float.PositiveInfinity, hits.Distance[1], "the wall is 5 m away, the range 3 m");
        }

        [Test]
        public void ARayParallelToAWallInItsPlaneDoesNotHitIt()
        {
            var caster = new MeshRayCaster();
            caster.SetTrack(new TrackMesh { Vertices = new float[] { 0, 0, 0, 1, 0, 0, 0, 0, 1 }, Triangles = new uint[] { 0, 1, 2 }, Labels = new byte[] { 1 } });
            var hits = Cast(caster, new float[] { -1, 0, 0.2f }, new[] { 1f, 0, 0 });
            Assert.AreEqual(float.PositiveInfinity, hits.Distance[0]);
        }

        [Test]
        public void TheBvhFindsTheSameNearestHitsAsTestingEveryTriangle()
        {
            var random = new Random(5);
            const int triangles = 3000;
            var vertices = new float[9 * triangles];
            var indices = new uint[3 * triangles];
            var labels = new byte[triangles];
            for (var t = 0; t < triangles; t++)
            {
                float cx = (float)(random.NextDouble() * 40 - 20), cy = (float)(random.NextDouble() * 40 - 20), cz = (float)(random.NextDouble() * 4);
                for (var v = 0; v < 3; v++)
                {
                    vertices[9 * t + 3 * v] = cx + (float)(random.NextDouble() - 0.5);
                    vertices[9 * t + 3 * v + 1] = cy + (float)(random.NextDouble() - 0.5);
                    vertices[9 * t + 3 * v + 2] = cz + (float)(random.NextDouble() - 0.5);
                    indices[3 * t + v] = (uint)(3 * t + v);
                }
                labels[t] = (byte)(t % 5);
            }
            var bvh = Bvh.Build(vertices, indices, labels);
            var single = new List<Bvh>();  // every triangle on its own: brute force
            for (var t = 0; t < triangles; t++)
                single.Add(Bvh.Build(new[] { vertices[9 * t], vertices[9 * t + 1], vertices[9 * t + 2], vertices[9 * t + 3], vertices[9 * t + 4],
                                             vertices[9 * t + 5], vertices[9 * t + 6], vertices[9 * t + 7], vertices[9 * t + 8] },
                                     new uint[] { 0, 1, 2 }, new[] { labels[t] }));
            var hitsSeen = 0;
            for (var r = 0; r < 2000; r++)
            {
                double ox = random.NextDouble() * 40 - 20, oy = random.NextDouble() * 40 - 20, oz = random.NextDouble() * 4;
                double angle = random.NextDouble() * 2 * Math.PI, dz = random.NextDouble() * 0.4 - 0.2;
                var norm = Math.Sqrt(1 + dz * dz);
                double dx = Math.Cos(angle) / norm, dy = Math.Sin(angle) / norm;
                dz /= norm;
                double distance, cosine;
                byte label;
                var hit = bvh.Cast(ox, oy, oz, dx, dy, dz, 100, out distance, out label, out cosine);
                var best = 100.0;
                byte bestLabel = 0;
                var any = false;
                foreach (var one in single)
                {
                    double d, c;
                    byte l;
                    if (one.Cast(ox, oy, oz, dx, dy, dz, best, out d, out l, out c)) { best = d; bestLabel = l; any = true; }
                }
                Assert.AreEqual(any, hit, "ray " + r);
                if (!hit) continue;
                hitsSeen++;
                Assert.AreEqual(best, distance, 1e-12, "ray " + r);
                Assert.AreEqual(bestLabel, label, "ray " + r);
            }
            Assert.Greater(hitsSeen, 500, "the rays must hit often enough to say something");
        }

        [Test]
        public void OtherCarsAreOrientedBoxesOfClassCarAndTheOwnCarIsNotSeen()
        {
            var caster = new MeshRayCaster();
            caster.SetTrack(Room(20f));
            caster.SetCars(new[]
            {
                new CarBox { Car = "other", Pose = new Pose6(5, 0, 0, 0, 0, Math.PI / 4), Length = 2, Width = 2, Height = 0.5 },
                new CarBox { Car = "ego", Pose = new Pose6(0, 0, 0, 0, 0, 0), Length = 1, Width = 1, Height = 0.5 },
            });
            var hits = Cast(caster, new float[] { 0, 0, 0.2f, 0, 0, 0.2f, 0, 0, 0.2f }, new[] { 1f, 0, 0, 1f, 0, 0, -1f, 0, 0 }, 100f, "ego");
            Assert.That(hits.Distance[0], Is.EqualTo(5 - Math.Sqrt(2)).Within(1e-5), "the rotated box's corner");
            Assert.AreEqual(Labels.Car, hits.Label[0]);
            Assert.That(hits.Cosine[0], Is.EqualTo(Math.Sqrt(0.5)).Within(1e-5));
            Assert.That(hits.Distance[2], Is.EqualTo(20f).Within(1e-5), "ego's own box is not seen");
            var over = Cast(caster, new float[] { 0, 0, 0.7f }, new[] { 1f, 0, 0 }, 100f, "ego");
            Assert.That(over.Distance[0], Is.EqualTo(20f).Within(1e-5), "over the box's height");
            var fromEgo = Cast(caster, new float[] { 0, 0, 0.2f }, new[] { -1f, 0, 0 }, 100f, "other");
            Assert.That(fromEgo.Distance[0], Is.EqualTo(0.5f).Within(1e-5), "from inside a box, its far face");
        }
    }
}
