using System;
using System.Collections.Generic;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    /// <summary>A renderer whose every hit can be worked out by hand: one wall, the plane
    /// x = WallX from z = 0 up to WallTop and endless in y (class barrier), and the cars as
    /// boxes along the world axes. It records what it is asked, so tests can check which
    /// cars a sensor was shown and which car it was told to ignore.</summary>
    sealed class WallRenderer : IRenderer
    {
        public const double WallX = 5.0, WallTop = 2.0;

        public TrackMesh Track;
        public IReadOnlyList<CarBox> Cars = new CarBox[0];
        public readonly List<string> Excluded = new List<string>();  // RayBatch.ExcludeCar of each cast
        public float[] LastDistances = new float[0];
        public bool FailCasts;

        public string Name { get { return "wall"; } }

        public void SetTrack(TrackMesh track) { Track = track; }

        public void SetCars(IReadOnlyList<CarBox> cars) { Cars = new List<CarBox>(cars); }

        public void RenderCamera(CameraView view, CameraImages images) { RayCastCamera.Render(this, view, images); }

        public void CastRays(RayBatch rays, RayHits hits)
        {
            if (FailCasts) throw new InvalidOperationException("the test renderer was told to fail");
            Excluded.Add(rays.ExcludeCar);
            hits.Ensure(rays.Count);
            for (var i = 0; i < rays.Count; i++)
            {
                double[] o = { rays.Origins[3 * i], rays.Origins[3 * i + 1], rays.Origins[3 * i + 2] };
                double[] d = { rays.Directions[3 * i], rays.Directions[3 * i + 1], rays.Directions[3 * i + 2] };
                double distance = double.PositiveInfinity, cosine = 0;
                var label = Labels.None;
                if (d[0] > 0)
                {
                    var t = (WallX - o[0]) / d[0];
                    var z = o[2] + t * d[2];
                    if (t > 0 && z >= 0 && z <= WallTop)
                    {
                        distance = t;
                        cosine = d[0];
                        label = Labels.Barrier;
                    }
                }
                foreach (var car in Cars)
                {
                    double t, c;
                    if (car.Car != rays.ExcludeCar && HitBox(car, o, d, out t, out c) && t < distance)
                    {
                        distance = t;
                        cosine = c;
                        label = Labels.Car;
                    }
                }
                var seen = distance <= rays.MaxDistance;
                hits.Distance[i] = seen ? (float)distance : float.PositiveInfinity;
                hits.Label[i] = seen ? label : Labels.None;
                hits.Cosine[i] = seen ? (float)cosine : 0f;
            }
            LastDistances = new float[rays.Count];
            Array.Copy(hits.Distance, LastDistances, rays.Count);
        }

        /// <summary>The slab test for a box along the world axes, entered from outside.</summary>
        static bool HitBox(CarBox car, double[] o, double[] d, out double distance, out double cosine)
        {
            var pose = car.Pose;
            if (pose.Roll != 0 || pose.Pitch != 0 || pose.Yaw != 0)
                throw new NotSupportedException("the test renderer has boxes along the world axes only");
            double[] low = { pose.X - car.Length / 2, pose.Y - car.Width / 2, pose.Z };
            double[] high = { pose.X + car.Length / 2, pose.Y + car.Width / 2, pose.Z + car.Height };
            double near = double.NegativeInfinity, far = double.PositiveInfinity;
            distance = double.PositiveInfinity;
            cosine = 0;
            for (var axis = 0; axis < 3; axis++)
            {
                if (d[axis] == 0)
                {
                    if (o[axis] < low[axis] || o[axis] > high[axis]) return false;
                    continue;
                }
                double a = (low[axis] - o[axis]) / d[axis], b = (high[axis] - o[axis]) / d[axis];
                if (Math.Min(a, b) > near)
                {
                    near = Math.Min(a, b);
                    cosine = Math.Abs(d[axis]);
                }
                far = Math.Min(far, Math.Max(a, b));
            }
            distance = near;
            return near > 0 && near <= far && !double.IsInfinity(near);
        }
    }

    /// <summary>Requests as a bridge sends them, built from header values, and reading replies.</summary>
    static class TestWire
    {
        public const long FrameNs = 25000000;

        public static List<object> List(params object[] items) { return new List<object>(items); }

        public static Dictionary<string, object> Scan(string name = "scan", double rangeMin = 0.1)
        {
            return new Dictionary<string, object>
            {
                { "name", name }, { "type", "lidar2d" }, { "rate_hz", 40.0 }, { "mount", List(0.5, 0.0, 0.2, 0.0, 0.0, 0.0) },
                { "beams", 3L }, { "angle_min", -Math.PI / 4 }, { "angle_increment", Math.PI / 4 },
                { "range_min", rangeMin }, { "range_max", 30.0 }, { "noise_std", 0.0 },
            };
        }

        /// <summary>Columns +x, +y, -x, -y by default; a revolution every 2 frames.</summary>
        public static Dictionary<string, object> Cloud(double azimuthIncrement = Math.PI / 2, bool labels = true)
        {
            return new Dictionary<string, object>
            {
                { "name", "cloud" }, { "type", "lidar3d" }, { "rate_hz", 20.0 }, { "mount", List(0.0, 0.0, 0.3, 0.0, 0.0, 0.0) },
                { "channels", 2L }, { "columns", 4L }, { "azimuth_start", 0.0 }, { "azimuth_increment", azimuthIncrement },
                { "elevations", List(0.0, 0.1) }, { "range_min", 0.3 }, { "range_max", 100.0 }, { "labels", labels },
            };
        }

        /// <summary>Looking along +x from 0.5 m up; odd sizes put a pixel on the optical axis.</summary>
        public static Dictionary<string, object> Camera(double pitch = 0.0)
        {
            return new Dictionary<string, object>
            {
                { "name", "cam" }, { "type", "camera" }, { "rate_hz", 20.0 }, { "mount", List(0.0, 0.0, 0.5, 0.0, pitch, 0.0) },
                { "width", 5L }, { "height", 3L }, { "fov", 1.2 }, { "near", 0.1 }, { "far", 50.0 },
                { "outputs", List("semantic", "rgb", "depth") },
            };
        }

        public static Dictionary<string, object> Car(string id, params Dictionary<string, object>[] sensors)
        {
            return new Dictionary<string, object> { { "id", id }, { "footprint", List(0.5, 0.3, 1.0) }, { "sensors", new List<object>(sensors) } };
        }

        /// <summary>InitialSettings header keys: the cars, a frame period of 25 ms, the track "wall".</summary>
        public static Dictionary<string, object> SettingsBody(List<object> cars, ulong seed = 3)
        {
            return new Dictionary<string, object>
            {
                { "world_frame", "map" }, { "frame_period_ns", FrameNs }, { "seed", (long)seed },
                { "track", new Dictionary<string, object> { { "name", "wall" } } }, { "cars", cars },
            };
        }

        public static List<BinaryFrame> TrackFrames()
        {
            return new List<BinaryFrame>
            {
                BinaryFrame.Of(TrackRequest.Vertices, new float[] { 5, -1, 0, 5, 1, 0, 5, 0, 1 }, 3, 3),
                BinaryFrame.Of(TrackRequest.Triangles, new uint[] { 0, 1, 2 }, 1, 3),
            };
        }

        /// <summary>InitialSettings with the car "ego" carrying these sensors.</summary>
        public static List<byte[]> Settings(params Dictionary<string, object>[] sensors)
        {
            return Protocol.Encode(Protocol.InitialSettings, 0, 0, SettingsBody(List(Car("ego", sensors))), TrackFrames());
        }

        public static Dictionary<string, object> Pose(string id, double x, double y = 0.0)
        {
            return new Dictionary<string, object> { { "id", id }, { "pose", List(x, y, 0.0, 0.0, 0.0, 0.0) } };
        }

        public static List<byte[]> Update(long step, long timeNs, List<object> cars, params string[] egoSensors)
        {
            var render = new List<object>();
            foreach (var sensor in egoSensors)
                render.Add(new Dictionary<string, object> { { "car", "ego" }, { "sensor", sensor } });
            var body = new Dictionary<string, object> { { "cars", cars }, { "render", render } };
            return Protocol.Encode(Protocol.Update, step, timeNs, body, new BinaryFrame[0]);
        }

        /// <summary>An Update at frame <paramref name="step"/> with ego at x and nothing else.</summary>
        public static List<byte[]> Update(long step, double x, params string[] egoSensors)
        {
            return Update(step, step * FrameNs, List(Pose("ego", x)), egoSensors);
        }

        /// <summary>A message as the peer decodes it.</summary>
        public static ProtocolMessage Message(string topic, Dictionary<string, object> body, IList<BinaryFrame> frames)
        {
            return Protocol.Decode(Protocol.Encode(topic, 0, 0, body, frames));
        }

        public static BinaryFrame Frame(ProtocolMessage reply, string name)
        {
            Assert.IsTrue(reply.Frames.ContainsKey(name), "the reply has no frame " + name);
            return reply.Frames[name];
        }

        public static float[] Floats(ProtocolMessage reply, string name)
        {
            var frame = Frame(reply, name);
            Assert.AreEqual("float32", frame.Dtype);
            var values = new float[frame.Data.Length / 4];
            Buffer.BlockCopy(frame.Data, 0, values, 0, frame.Data.Length);
            return values;
        }

        public static string ErrorOf(ProtocolMessage reply)
        {
            Assert.AreEqual(Protocol.Error, reply.Topic, "expected an Error reply");
            return (string)reply.Header["error"];
        }

        public static void AssertContains(string part, string text)
        {
            Assert.IsTrue(text.Contains(part), "'" + text + "' does not contain '" + part + "'");
        }
    }
}
