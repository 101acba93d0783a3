using System;
using System.Collections.Generic;
using Arsim.Core;
using NUnit.Framework;

namespace Arsim.Host.Tests
{
    /// <summary>Meshes and ray batches for the ray caster's tests.</summary>
    static class Meshes
    {
        /// <summary>A square room of side 2 * half centred on the origin: walls 1 m high
        /// (barrier), two triangles each, and a floor at z = 0 (road).</summary>
        public static TrackMesh Room(float half)
        {
            var mesh = new Builder();
            float[] corners = { -half, -half, half, -half, half, half, -half, half };
            for (var i = 0; i < 4; i++)
            {
                float ax = corners[2 * i], ay = corners[2 * i + 1], bx = corners[(2 * i + 2) % 8], by = corners[(2 * i + 3) % 8];
                mesh.Quad(ax, ay, 0, bx, by, 0, bx, by, 1, ax, ay, 1, Labels.Barrier);
            }
            mesh.Quad(-half, -half, 0, half, -half, 0, half, half, 0, -half, half, 0, Labels.Road);
            return mesh.Mesh("room");
        }

        /// <summary>count triangles of up to size metres, centred at random in [-extent, extent]^2
        /// x [0, height], labels cycling through 0..4.</summary>
        public static TrackMesh Random(int count, double extent, double height, double size, int seed)
        {
            var random = new Random(seed);
            var mesh = new Builder();
            for (var t = 0; t < count; t++)
            {
                double cx = (random.NextDouble() * 2 - 1) * extent, cy = (random.NextDouble() * 2 - 1) * extent,
                       cz = random.NextDouble() * height;
                var corners = new float[9];
                for (var k = 0; k < 9; k++) corners[k] = (float)((k % 3 == 0 ? cx : k % 3 == 1 ? cy : cz) + (random.NextDouble() - 0.5) * size);
                mesh.Triangle(corners, (byte)(t % 5));
            }
            return mesh.Mesh("random");
        }

        public static RayHits Cast(IRenderer renderer, float[] origins, float[] directions, float maxDistance = 100f,
                                   string exclude = null)
        {
            var rays = new RayBatch
            {
                Count = directions.Length / 3, Origins = origins, Directions = directions, MaxDistance = maxDistance,
                ExcludeCar = exclude,
            };
            var hits = new RayHits();
            renderer.CastRays(rays, hits);
            return hits;
        }

        /// <summary>One ray; the direction is normalised here.</summary>
        public static RayHits Cast(IRenderer renderer, double ox, double oy, double oz, double dx, double dy, double dz,
                                   float maxDistance = 100f, string exclude = null)
        {
            var norm = Math.Sqrt(dx * dx + dy * dy + dz * dz);
            return Cast(renderer, new[] { (float)ox, (float)oy, (float)oz },
                        new[] { (float)(dx / norm), (float)(dy / norm), (float)(dz / norm) }, maxDistance, exclude);
        }

        public static MeshRayCaster Caster(TrackMesh mesh, params CarBox[] cars)
        {
            var caster = new MeshRayCaster();
            caster.SetTrack(mesh);
            caster.SetCars(cars);
            return caster;
        }

        public static CarBox Car(string name, double x, double y, double z, double roll, double pitch, double yaw,
                                 double length, double width, double height)
        {
            return new CarBox { Car = name, Pose = new Pose6(x, y, z, roll, pitch, yaw), Length = length, Width = width, Height = height };
        }

        /// <summary>Collects triangles into a TrackMesh.</summary>
        public sealed class Builder
        {
            readonly List<float> vertices = new List<float>();
            readonly List<uint> triangles = new List<uint>();
            readonly List<byte> labels = new List<byte>();

            public void Triangle(float[] corners, byte label)
            {
                var first = (uint)(vertices.Count / 3);
                vertices.AddRange(corners);
                triangles.AddRange(new[] { first, first + 1, first + 2 });
                labels.Add(label);
            }

            /// <summary>The quad a, b, c, d as triangles a b c and a c d.</summary>
            public void Quad(float ax, float ay, float az, float bx, float by, float bz, float cx, float cy, float cz,
                             float dx, float dy, float dz, byte label)
            {
                Triangle(new[] { ax, ay, az, bx, by, bz, cx, cy, cz }, label);
                Triangle(new[] { ax, ay, az, cx, cy, cz, dx, dy, dz }, label);
            }

            public TrackMesh Mesh(string name)
            {
                return new TrackMesh { Name = name, Vertices = vertices.ToArray(), Triangles = triangles.ToArray(), Labels = labels.ToArray() };
            }
        }
    }

    /// <summary>Assertions beyond the NUnit subset both NUnit 2.6 and Unity's NUnit 3 share.</summary>
    static class Expect
    {
        public static void Contains(string expected, string actual)
        {
            Assert.IsTrue(actual != null && actual.Contains(expected), "expected '" + expected + "' in: " + actual);
        }
    }
}
