using System;
using System.Collections.Generic;
using System.Text;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    /// <summary>The state machine over real encoded requests, with a renderer whose world is
    /// one wall, the plane x = WallX, so every expected range is computed by hand.</summary>
    [TestFixture]
    public class BackendServiceTests
    {
        const double WallX = 5.0;

        sealed class WallRenderer : IRenderer
        {
            public TrackMesh Track;
            public IReadOnlyList<CarBox> Cars = new CarBox[0];
            public string Name { get { return "wall"; } }
            public void SetTrack(TrackMesh track) { Track = track; }
            public void SetCars(IReadOnlyList<CarBox> cars) { Cars = cars; }

            public void CastRays(RayBatch rays, RayHits hits)
            {
                hits.Ensure(rays.Count);
                for (var i = 0; i < rays.Count; i++)
                {
                    double ox = rays.Origins[3 * i], dx = rays.Directions[3 * i];
                    var t = dx > 1e-9 ? (WallX - ox) / dx : double.PositiveInfinity;
                    var hit = t >= 0 && t <= rays.MaxDistance;
                    hits.Distance[i] = hit ? (float)t : float.PositiveInfinity;
                    hits.Label[i] = hit ? Labels.Barrier : Labels.None;
                    hits.Cosine[i] = hit ? (float)dx : 0f;
                }
            }

            public void RenderCamera(CameraView view, CameraImages images) { RayCastCamera.Render(this, view, images); }
        }

        WallRenderer renderer;
        BackendService service;

        [SetUp]
        public void Start()
        {
            renderer = new WallRenderer();
            service = new BackendService(renderer);
        }

        static Dictionary<string, object> Scan(double rangeMin = 0.1)
        {
            return new Dictionary<string, object>
            {
                { "name", "scan" }, { "type", "lidar2d" }, { "rate_hz", 40.0 }, { "mount", new List<object> { 0.5, 0.0, 0.2, 0.0, 0.0, 0.0 } },
                { "beams", 3L }, { "angle_min", -Math.PI / 4 }, { "angle_increment", Math.PI / 4 },
                { "range_min", rangeMin }, { "range_max", 30.0 }, { "noise_std", 0.0 },
            };
        }

        static Dictionary<string, object> Cloud()
        {
            return new Dictionary<string, object>
            {
                { "name", "cloud" }, { "type", "lidar3d" }, { "rate_hz", 20.0 }, { "mount", new List<object> { 0.0, 0.0, 0.3, 0.0, 0.0, 0.0 } },
                { "channels", 2L }, { "columns", 4L }, { "azimuth_start", 0.0 }, { "azimuth_increment", Math.PI / 2 },
                { "elevations", new List<object> { 0.0, 0.1 } }, { "range_min", 0.3 }, { "range_max", 100.0 }, { "labels", true },
            };
        }

        static Dictionary<string, object> Camera()
        {
            return new Dictionary<string, object>
            {
                { "name", "cam" }, { "type", "camera" }, { "rate_hz", 20.0 }, { "mount", new List<object> { 0.0, 0.0, 0.5, 0.0, 0.0, 0.0 } },
                { "width", 5L }, { "height", 3L }, { "fov", 1.2 }, { "near", 0.1 }, { "far", 50.0 },
                { "outputs", new List<object> { "rgb", "depth", "semantic" } },
            };
        }

        static List<byte[]> Settings(params Dictionary<string, object>[] sensors)
        {
            var cars = new List<object>
            {
                new Dictionary<string, object> { { "id", "ego" }, { "footprint", new List<object> { 0.5, 0.3, 0.2 } }, { "sensors", new List<object>(sensors) } },
            };
            var body = new Dictionary<string, object>
            {
                { "world_frame", "map" }, { "frame_period_ns", 25000000L }, { "seed", 3L },
                { "track", new Dictionary<string, object> { { "name", "wall" } } }, { "cars", cars },
            };
            var frames = new[]
            {
                BinaryFrame.Of("track_vertices", new float[] { 5, -1, 0, 5, 1, 0, 5, 0, 1 }, 3, 3),
                BinaryFrame.Of("track_triangles", new uint[] { 0, 1, 2 }, 1, 3),
            };
            return Protocol.Encode(Protocol.InitialSettings, 0, 0, body, frames);
        }

        static List<byte[]> Update(long step, long time, string render, double x = 0.0)
        {
            var body = new Dictionary<string, object>
            {
                { "cars", new List<object> { new Dictionary<string, object> { { "id", "ego" }, { "pose", new List<object> { x, 0.0, 0.0, 0.0, 0.0, 0.0 } } } } },
                { "render", new List<object> { new Dictionary<string, object> { { "car", "ego" }, { "sensor", render } } } },
            };
            return Protocol.Encode(Protocol.Update, step, time, body, null);
        }

        ProtocolMessage Send(List<byte[]> request) { return Protocol.Decode(service.Handle(request)); }

        static string ErrorOf(ProtocolMessage reply)
        {
            Assert.AreEqual(Protocol.Error, reply.Topic);
            return (string)reply.Header["error"];
        }

        [Test]
        public void InitialSettingsGetsReadyListingTheRenderedSensorsOnly()
        {
            var imu = new Dictionary<string, object> { { "name", "imu" }, { "type", "imu" } };
            var ready = Send(Settings(Scan(), imu, Cloud()));
            Assert.AreEqual(Protocol.Ready, ready.Topic);
            Assert.AreEqual("wall", ready.Header["backend"]);
            Assert.AreEqual("wall", ready.Header["track"]);
            var sensors = (List<object>)ready.Header["sensors"];
            Assert.AreEqual(2, sensors.Count);
            Assert.AreEqual("lidar3d", ((Dictionary<string, object>)sensors[1])["type"]);
            Assert.AreEqual(new byte[] { Labels.Barrier }, renderer.Track.Labels, "labels default to barrier");
        }

        [Test]
        public void AScanMeasuresTheWallAndEchoesStepAndTime()
        {
            Send(Settings(Scan()));
            var reply = Send(Update(12, 4611686018427387904L, "scan"));
            Assert.AreEqual(Protocol.Update, reply.Topic);
            Assert.AreEqual(12, reply.Step);
            Assert.AreEqual(4611686018427387904L, reply.TimeNs);
            var ranges = reply.Frame("ego/scan").AsFloat32();
            var across = 4.5;  // the wall is 4.5 m ahead of the sensor at x = 0.5
            Assert.That(ranges[1], Is.EqualTo(across).Within(1e-5));
            Assert.That(ranges[0], Is.EqualTo(across * Math.Sqrt(2)).Within(1e-5));
            Assert.That(ranges[2], Is.EqualTo(across * Math.Sqrt(2)).Within(1e-5));
            var meta = reply.Frame("ego/scan").Meta;
            Assert.AreEqual("ranges", meta["encoding"]);
            Assert.AreEqual(4611686018427387904L, meta["stamp_ns"]);
            var intensity = reply.Frame("ego/scan/intensity").AsFloat32();
            Assert.That(intensity[1], Is.EqualTo(1000 * 0.6 / (across * across)).Within(1e-3));
        }

        [Test]
        public void RangesFollowRep117()
        {
            Send(Settings(Scan(10.0)));
            var ranges = Send(Update(1, 25000000, "scan", 4.0)).Frame("ego/scan").AsFloat32();
            Assert.AreEqual(float.NegativeInfinity, ranges[1], "closer than range_min");
            Send(Settings(Scan()));
            ranges = Send(Update(1, 25000000, "scan", 6.0)).Frame("ego/scan").AsFloat32();
            Assert.AreEqual(float.PositiveInfinity, ranges[1], "no return: the wall is behind");
        }

        [Test]
        public void ASpinningLidarSendsItsRevolutionWithLabels()
        {
            Send(Settings(Cloud()));
            Send(Update(1, 25000000, "cloud"));
            var reply = Send(Update(2, 50000000, "cloud"));
            var ranges = reply.Frame("ego/cloud");
            Assert.AreEqual(new[] { 2, 4 }, ranges.Shape);
            Assert.AreEqual(0L, ranges.Meta["stamp_ns"], "the revolution started at 0");
            var values = ranges.AsFloat32();
            Assert.That(values[0], Is.EqualTo(5.0).Within(1e-5));  // ring 0, column 0 looks at the wall
            Assert.AreEqual(float.PositiveInfinity, values[2], "column 2 looks away from it");
            Assert.That(values[4], Is.EqualTo(5.0 / Math.Cos(0.1)).Within(1e-4));
            Assert.AreEqual("uint16", reply.Frame("ego/cloud/reflectivity").Dtype);
            Assert.AreEqual(60, reply.Frame("ego/cloud/reflectivity").AsInt64()[0]);
            var labels = reply.Frame("ego/cloud/labels").AsUInt8Labels();
            Assert.AreEqual(Labels.Barrier, labels[0]);
            Assert.AreEqual(Labels.None, labels[2]);
        }

        [Test]
        public void ACameraSeesTheWallAtItsCentre()
        {
            Send(Settings(Camera()));
            var reply = Send(Update(1, 25000000, "cam"));
            var depth = reply.Frame("ego/cam/depth");
            Assert.AreEqual(new[] { 3, 5 }, depth.Shape);
            Assert.That(depth.AsFloat32()[7], Is.EqualTo(5.0).Within(1e-5));
            Assert.AreEqual(new[] { 3, 5, 3 }, reply.Frame("ego/cam/rgb").Shape);
            Assert.AreEqual("mono8", reply.Frame("ego/cam/semantic").Meta["encoding"]);
            Assert.AreEqual(Labels.Barrier, reply.Frame("ego/cam/semantic").Data[7]);
        }

        [Test]
        public void BadRequestsGetErrorsAndTheServiceGoesOn()
        {
            StringAssert.Contains("Update before InitialSettings", ErrorOf(Send(Update(1, 1, "scan"))));
            Send(Settings(Scan()));
            StringAssert.Contains("unknown car/sensor ('ego', 'radar')", ErrorOf(Send(Update(1, 1, "radar"))));
            var wrongVersion = Update(1, 1, "scan");
            wrongVersion[1] = Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(wrongVersion[1]).Replace("\"protocol\":1", "\"protocol\":2"));
            StringAssert.Contains("version 2, this side speaks version 1", ErrorOf(Send(wrongVersion)));
            Assert.AreEqual("Error", Encoding.UTF8.GetString(service.Handle(new List<byte[]> { new byte[] { 0xFF } })[0]));
            Assert.AreEqual(Protocol.Update, Send(Update(2, 2, "scan")).Topic, "still serving");
        }

        [TestCase("beams", 0L, "key 'beams' must be an integer in [1, 65536], got 0")]
        [TestCase("range_max", -1.0, "key 'range_max' must be a number in (0, 1e+06]")]
        [TestCase("dropout", 2.0, "key 'dropout' must be a number in [0, 1]")]
        [TestCase("mount", "up", "key 'mount' must be 6 numbers")]
        [TestCase("rate_hz", true, "key 'rate_hz' must be a number")]
        public void ABadSensorIsNamedWithItsKey(string key, object value, string expected)
        {
            var scan = Scan();
            scan[key] = value;
            var error = ErrorOf(Send(Settings(scan)));
            StringAssert.Contains("car 'ego', sensor 'scan': " + expected, error);
        }

        [Test]
        public void ATriangleIndexOutOfRangeIsRefused()
        {
            var request = Settings(Scan());
            var message = Protocol.Decode(request);
            var frames = new List<BinaryFrame> { message.Frame("track_vertices"), BinaryFrame.Of("track_triangles", new int[] { 0, 1, 3 }, 1, 3) };
            var body = new Dictionary<string, object>(message.Header);
            body.Remove("frames");
            StringAssert.Contains("index a vertex that does not exist", ErrorOf(Send(Protocol.Encode(Protocol.InitialSettings, 0, 0, body, frames))));
        }

        [Test]
        public void ATrackSwitchAnswersReadyWithItsName()
        {
            Send(Settings(Scan()));
            var frames = new[]
            {
                BinaryFrame.Of("track_vertices", new double[] { 0, 0, 0, 1, 0, 0, 0, 1, 0 }, 3, 3),
                BinaryFrame.Of("track_triangles", new uint[] { 0, 1, 2 }, 1, 3),
                BinaryFrame.Of("track_labels", new byte[] { Labels.ConeBlue }, 1),
            };
            var ready = Send(Protocol.Encode(Protocol.Track, 5, 6, new Dictionary<string, object> { { "track", new Dictionary<string, object> { { "name", "next" } } } }, frames));
            Assert.AreEqual("next", ready.Header["track"]);
            Assert.AreEqual(5, ready.Step);
            Assert.AreEqual(new byte[] { Labels.ConeBlue }, renderer.Track.Labels);
        }
    }

    static class FrameTestExtensions
    {
        public static byte[] AsUInt8Labels(this BinaryFrame frame)
        {
            Assert.AreEqual("uint8", frame.Dtype);
            return frame.Data;
        }
    }
}
