using System;
using Arsim.Core;
using NUnit.Framework;

namespace Arsim.Host.Tests
{
    [TestFixture]
    public class MeshRayCasterTests
    {
        static readonly double Diagonal = Math.Sqrt(0.5);

        [Test]
        public void RaysInARoomHitTheWallsAndFloorAtHandComputedDistances()
        {
            var caster = Meshes.Caster(Meshes.Room(5f));
            var hits = Meshes.Cast(caster, new float[] { 1, 0, 0.5f, 1, 0, 0.5f, 0, 0, 0.5f, 0, 0, 0.5f, 0, 0, 0.5f },
                                   new[] { 1f, 0, 0, -1f, 0, 0, (float)Diagonal, (float)Diagonal, 0, 0, 0, -1f, 0, -1f, 0 });
            Assert.That(hits.Distance[0], Is.EqualTo(4.0).Within(1e-6));
            Assert.That(hits.Distance[1], Is.EqualTo(6.0).Within(1e-6));
            Assert.That(hits.Distance[2], Is.EqualTo(5 * Math.Sqrt(2)).Within(1e-5), "into the corner");
            Assert.That(hits.Distance[3], Is.EqualTo(0.5).Within(1e-6), "the floor");
            Assert.That(hits.Distance[4], Is.EqualTo(5.0).Within(1e-6));
            Assert.AreEqual(Labels.Barrier, hits.Label[0]);
            Assert.AreEqual(Labels.Barrier, hits.Label[2]);
            Assert.AreEqual(Labels.Road, hits.Label[3]);
            Assert.That(hits.Cosine[0], Is.EqualTo(1.0).Within(1e-6));
            Assert.That(hits.Cosine[2], Is.EqualTo(Diagonal).Within(1e-6), "45 degrees to either wall");
            Assert.That(hits.Cosine[3], Is.EqualTo(1.0).Within(1e-6));
        }

        [Test]
        public void ATiltedPlaneIsHitWhereItsEquationSays()
        {
            var tilt = Math.PI / 6;  // the plane z = x tan(30 deg)
            var rise = (float)(10 * Math.Tan(tilt));
            var mesh = new Meshes.Builder();
            mesh.Quad(-10, -10, -rise, 10, -10, rise, 10, 10, rise, -10, 10, -rise, Labels.Ground);
            var caster = Meshes.Caster(mesh.Mesh("tilted"));
            var down = Meshes.Cast(caster, 2, 0, 5, 0, 0, -1);
            Assert.That(down.Distance[0], Is.EqualTo(5 - 2 * Math.Tan(tilt)).Within(1e-5));
            Assert.That(down.Cosine[0], Is.EqualTo(Math.Cos(tilt)).Within(1e-6));
            Assert.AreEqual(Labels.Ground, down.Label[0]);
            var level = Meshes.Cast(caster, 0, 0, 1, 1, 0, 0);
            Assert.That(level.Distance[0], Is.EqualTo(1 / Math.Tan(tilt)).Within(1e-5), "a level ray meets the slope");
            Assert.That(level.Cosine[0], Is.EqualTo(Math.Sin(tilt)).Within(1e-6));
            // Back along the normal from 2 m above the point (3, 1) of the plane.
            double nx = -Math.Sin(tilt), nz = Math.Cos(tilt);
            var normal = Meshes.Cast(caster, 3 + 2 * nx, 1, 3 * Math.Tan(tilt) + 2 * nz, -nx, 0, -nz);
            Assert.That(normal.Distance[0], Is.EqualTo(2.0).Within(1e-5));
            Assert.That(normal.Cosine[0], Is.EqualTo(1.0).Within(1e-6));
        }

        [Test]
        public void RaysThroughATrianglesEdgesAndCornersHitItAndRaysBesideThemMiss()
        {
            var mesh = new Meshes.Builder();
            mesh.Triangle(new float[] { 0, 0, 0, 1, 0, 0, 0, 1, 0 }, Labels.Road);
            var caster = Meshes.Caster(mesh.Mesh("one"));
            Assert.AreEqual(1f, Meshes.Cast(caster, 0.5, 0.5, 1, 0, 0, -1).Distance[0], "on the hypotenuse");
            Assert.AreEqual(1f, Meshes.Cast(caster, 0, 0, 1, 0, 0, -1).Distance[0], "on a corner");
            Assert.AreEqual(1f, Meshes.Cast(caster, 0.5, 0, 1, 0, 0, -1).Distance[0], "on an edge");
            Assert.AreEqual(float.PositiveInfinity, Meshes.Cast(caster, 0.5, 0.5001, 1, 0, 0, -1).Distance[0], "beyond the hypotenuse");
            Assert.AreEqual(float.PositiveInfinity, Meshes.Cast(caster, -0.0001, 0.5, 1, 0, 0, -1).Distance[0], "beside an edge");
        }

        [Test]
        public void ATriangulatedFloorHasNoCracksAlongItsSharedEdgesAndCorners()
        {
            var mesh = new Meshes.Builder();
            for (var x = 0; x < 10; x++)
                for (var y = 0; y < 10; y++)
                    mesh.Quad(x, y, 0, x + 1, y, 0, x + 1, y + 1, 0, x, y + 1, 0, Labels.Road);
            var caster = Meshes.Caster(mesh.Mesh("floor"));
            var origins = new float[3 * 21 * 21];
            var directions = new float[3 * 21 * 21];
            for (var i = 0; i < 21 * 21; i++)
            {
                origins[3 * i] = 0.5f * (i % 21);
                origins[3 * i + 1] = 0.5f * (i / 21);
                origins[3 * i + 2] = 2;
                directions[3 * i + 2] = -1;
            }
            var hits = Meshes.Cast(caster, origins, directions);
            for (var i = 0; i < 21 * 21; i++) Assert.AreEqual(2f, hits.Distance[i], "ray " + i + " at a vertex, an edge or a diagonal");
        }

        [Test]
        public void RaysParallelToATriangleMissIt()
        {
            var mesh = new Meshes.Builder();
            mesh.Triangle(new float[] { 0, 0, 0, 1, 0, 0, 0, 1, 0 }, Labels.Road);
            var caster = Meshes.Caster(mesh.Mesh("one"));
            Assert.AreEqual(float.PositiveInfinity, Meshes.Cast(caster, -1, 0.2, 0, 1, 0, 0).Distance[0], "in its plane");
            Assert.AreEqual(float.PositiveInfinity, Meshes.Cast(caster, -1, 0.2, 0.5, 1, 0, 0).Distance[0], "above it");
            Assert.AreEqual(float.PositiveInfinity, Meshes.Cast(caster, -1, 0, 0, 1, 0, 0).Distance[0], "along its edge");
        }

        [Test]
        public void ARayStartingOnASurfaceLeavesItAndSeesWhatIsBeyond()
        {
            var caster = Meshes.Caster(Meshes.Room(5f));
            Assert.AreEqual(float.PositiveInfinity, Meshes.Cast(caster, 0, 0, 0, 0, 0, -1).Distance[0], "down from the floor: nothing below");
            var across = Meshes.Cast(caster, 0, 0, 0, 1, 0, 0.1);
            Assert.That(across.Distance[0], Is.EqualTo(5 * Math.Sqrt(1.01)).Within(1e-5), "from the floor to the wall");
            Assert.AreEqual(Labels.Barrier, across.Label[0]);
            Assert.That(Meshes.Cast(caster, 5, 0, 0.5, -1, 0, 0).Distance[0], Is.EqualTo(10.0).Within(1e-6), "from a wall, the opposite one");
            Assert.AreEqual(float.PositiveInfinity, Meshes.Cast(caster, 5, 0, 0.5, 1, 0, 0).Distance[0], "from a wall, outwards");
        }

        [Test]
        public void MissesAndHitsBeyondTheRangeAreInfiniteWithNoClassAndNoCosine()
        {
            var caster = Meshes.Caster(Meshes.Room(5f));
            var up = Meshes.Cast(caster, 0, 0, 0.5, 0, 0, 1);
            Assert.AreEqual(float.PositiveInfinity, up.Distance[0]);
            Assert.AreEqual(Labels.None, up.Label[0]);
            Assert.AreEqual(0f, up.Cosine[0]);
            var far = Meshes.Cast(caster, 0, 0, 0.5, 1, 0, 0, 3f);
            Assert.AreEqual(float.PositiveInfinity, far.Distance[0], "the wall is 5 m away, the range 3 m");
            Assert.AreEqual(Labels.None, far.Label[0]);
            Assert.AreEqual(4f, Meshes.Cast(caster, 1, 0, 0.5, 1, 0, 0, 4f).Distance[0], "a hit at the range itself counts");
            Assert.AreEqual(5f, Meshes.Cast(caster, 0, 0, 0.5, 1, 0, 0, float.PositiveInfinity).Distance[0], "an unlimited range");
            Assert.AreEqual(float.PositiveInfinity, Meshes.Cast(caster, 0, 0, 0.5, 1, 0, 0, 0f).Distance[0], "a range of 0");
        }

        [Test]
        public void ALargeBatchCastInParallelGivesWhatSmallBatchesGive()
        {
            var caster = Meshes.Caster(Meshes.Random(2000, 20, 3, 1.5, 11));
            var random = new Random(12);
            const int count = 2 * MeshRayCaster.ParallelRays + 77;
            var origins = new float[3 * count];
            var directions = new float[3 * count];
            for (var i = 0; i < count; i++)
            {
                origins[3 * i] = (float)(random.NextDouble() * 40 - 20);
                origins[3 * i + 1] = (float)(random.NextDouble() * 40 - 20);
                origins[3 * i + 2] = (float)(random.NextDouble() * 3);
                var angle = random.NextDouble() * 2 * Math.PI;
                directions[3 * i] = (float)Math.Cos(angle);
                directions[3 * i + 1] = (float)Math.Sin(angle);
            }
            var whole = Meshes.Cast(caster, origins, directions, 30f);
            var hitCount = 0;
            for (var first = 0; first < count; first += 100)
            {
                var n = Math.Min(100, count - first);
                var o = new float[3 * n];
                var d = new float[3 * n];
                Array.Copy(origins, 3 * first, o, 0, 3 * n);
                Array.Copy(directions, 3 * first, d, 0, 3 * n);
                var part = Meshes.Cast(caster, o, d, 30f);
                for (var i = 0; i < n; i++)
                {
                    Assert.AreEqual(part.Distance[i], whole.Distance[first + i], "ray " + (first + i));
                    Assert.AreEqual(part.Label[i], whole.Label[first + i], "ray " + (first + i));
                    Assert.AreEqual(part.Cosine[i], whole.Cosine[first + i], "ray " + (first + i));
                    if (part.Label[i] != Labels.None) hitCount++;
                }
            }
            Assert.IsTrue(hitCount > count / 4, "enough rays hit to say something: " + hitCount);
        }

        [Test]
        public void EachTrianglesOwnClassIsReportedAndATrackWithoutClassesIsBarrier()
        {
            var mesh = new Meshes.Builder();
            mesh.Quad(2, -1, 0, 2, 1, 0, 2, 1, 1, 2, -1, 1, Labels.ConeBlue);
            mesh.Quad(4, -1, 0, 4, 1, 0, 4, 1, 1, 4, -1, 1, Labels.ConeYellow);
            var labelled = mesh.Mesh("cones");
            var caster = Meshes.Caster(labelled);
            Assert.AreEqual(Labels.ConeBlue, Meshes.Cast(caster, 0, 0, 0.5, 1, 0, 0).Label[0]);
            Assert.AreEqual(Labels.ConeYellow, Meshes.Cast(caster, 6, 0, 0.5, -1, 0, 0).Label[0]);
            labelled.Labels = new byte[0];
            caster.SetTrack(labelled);
            Assert.AreEqual(Labels.Barrier, Meshes.Cast(caster, 0, 0, 0.5, 1, 0, 0).Label[0]);
        }

        [Test]
        public void AnEmptyTrackIsAllMisses()
        {
            var caster = Meshes.Caster(new TrackMesh());
            Assert.AreEqual(0, caster.TriangleCount);
            Assert.AreEqual(float.PositiveInfinity, Meshes.Cast(caster, 0, 0, 0, 1, 0, 0).Distance[0]);
        }

        [Test]
        public void AMalformedTrackIsRefusedSayingWhy()
        {
            var caster = new MeshRayCaster();
            var outside = new TrackMesh { Vertices = new float[9], Triangles = new uint[] { 0, 1, 3 }, Labels = new byte[1] };
            Expect.Contains("names vertex 3 of 3", Assert.Throws<ArgumentException>(() => caster.SetTrack(outside)).Message);
            var labels = new TrackMesh { Vertices = new float[9], Triangles = new uint[] { 0, 1, 2 }, Labels = new byte[2] };
            Expect.Contains("2 for 1 triangles", Assert.Throws<ArgumentException>(() => caster.SetTrack(labels)).Message);
            var ragged = new TrackMesh { Vertices = new float[8], Triangles = new uint[0], Labels = new byte[0] };
            Expect.Contains("not 3 per vertex", Assert.Throws<ArgumentException>(() => caster.SetTrack(ragged)).Message);
            var nan = new TrackMesh { Vertices = new[] { 0f, 0, 0, 1, 0, 0, 0, float.NaN, 0 }, Triangles = new uint[] { 0, 1, 2 }, Labels = new byte[1] };
            Expect.Contains("vertex 2 is not finite", Assert.Throws<ArgumentException>(() => caster.SetTrack(nan)).Message);
        }

        [Test]
        public void ABatchShorterThanItsCountIsRefused()
        {
            var caster = Meshes.Caster(Meshes.Room(5f));
            var rays = new RayBatch { Count = 2, Origins = new float[3], Directions = new float[6], MaxDistance = 10 };
            Assert.Throws<ArgumentException>(() => caster.CastRays(rays, new RayHits()));
        }

        [Test]
        public void TheRendererIsNamedAsTheBridgeReportsIt()
        {
            Assert.AreEqual("arsim-csharp-host", new MeshRayCaster().Name);
        }
    }
}
