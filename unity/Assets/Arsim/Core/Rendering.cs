using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>A 3D vector in the REP-103 world frame (x forward, y left, z up), metres.</summary>
    public struct Vec3
    {
        public double X, Y, Z;

        public Vec3(double x, double y, double z) { X = x; Y = y; Z = z; }
    }

    /// <summary>A pose as the protocol sends it: position [m] and roll, pitch, yaw [rad],
    /// REP-103, rotation R = Rz(yaw) Ry(pitch) Rx(roll).</summary>
    public struct Pose6
    {
        public double X, Y, Z, Roll, Pitch, Yaw;

        public Pose6(double x, double y, double z, double roll, double pitch, double yaw)
        {
            X = x; Y = y; Z = z; Roll = roll; Pitch = pitch; Yaw = yaw;
        }
    }

    /// <summary>A car's box as other cars' sensors see it (class car): length and width centred
    /// on base_link, from the pose's z up to Height.</summary>
    public struct CarBox
    {
        public string Car;
        public Pose6 Pose;
        public double Length, Width, Height;
    }

    /// <summary>The track as InitialSettings and Track carry it.</summary>
    public sealed class TrackMesh
    {
        public string Name = "";
        public float[] Vertices = new float[0];    // 3 per vertex, world frame [m]
        public uint[] Triangles = new uint[0];     // 3 vertex indices per triangle
        public byte[] Labels = new byte[0];        // one class per triangle (Labels.Classes)
    }

    /// <summary>Rays to cast, in the world frame: ray i starts at Origins[3i..3i+2] and runs
    /// along the unit vector Directions[3i..3i+2] up to MaxDistance. The box of ExcludeCar
    /// (null: none) is not seen: a sensor never sees its own car.</summary>
    public sealed class RayBatch
    {
        public int Count;
        public float[] Origins = new float[0];
        public float[] Directions = new float[0];
        public float MaxDistance;
        public string ExcludeCar;
    }

    /// <summary>What each ray hit: the distance along it (+inf for a miss), the class
    /// (Labels.None for a miss) and |cos| of the angle between ray and surface normal (0 for
    /// a miss). Arrays hold at least Count entries.</summary>
    public sealed class RayHits
    {
        public float[] Distance = new float[0];
        public byte[] Label = new byte[0];
        public float[] Cosine = new float[0];

        public void Ensure(int count)
        {
            if (Distance.Length < count)
            {
                Distance = new float[count];
                Label = new byte[count];
                Cosine = new float[count];
            }
        }
    }

    /// <summary>One camera to render: its body frame (x forward, y left, z up) in the world,
    /// the pinhole model of docs/protocol.md (horizontal Fov across the full width, square
    /// pixels, principal point at the image centre) and the outputs wanted.</summary>
    public sealed class CameraView
    {
        public string Car = "", Sensor = "";
        public Pose6 Pose;
        public int Width, Height;
        public double Fov, Near, Far;
        public bool Rgb, Depth, Semantic;
    }

    /// <summary>A camera's images, row 0 at the top: RGB8 (Height*Width*3), depth along the
    /// optical axis [m] (+inf: nothing within Far), class id per pixel (Labels.None: none).
    /// Only the outputs asked for are filled.</summary>
    public sealed class CameraImages
    {
        public byte[] Rgb = new byte[0];
        public float[] Depth = new float[0];
        public byte[] Semantic = new byte[0];
    }

    /// <summary>What a backend's engine provides: the world and its rays and images. Sensor
    /// geometry, timing, noise, REP-117 values and the protocol are the core's; the Unity
    /// runtime implements this with colliders, RaycastCommand and cameras, the console host
    /// with a CPU mesh ray caster.</summary>
    public interface IRenderer
    {
        string Name { get; }

        /// <summary>Replace the track (InitialSettings and Track).</summary>
        void SetTrack(TrackMesh track);

        /// <summary>The cars' boxes for the casts and images that follow (each Update).</summary>
        void SetCars(IReadOnlyList<CarBox> cars);

        void CastRays(RayBatch rays, RayHits hits);

        void RenderCamera(CameraView view, CameraImages images);
    }
}
