using System;
using System.Collections.Generic;
using System.Text;
using NUnit.Framework;
using static Arsim.Core.Tests.TestWire;

namespace Arsim.Core.Tests
{
    /// <summary>The state machine over encoded requests and replies, with a world of one
    /// wall (WallRenderer), so every expected range is computed by hand.</summary>
    [TestFixture]
    public class BackendServiceTests
    {
        sealed class Served
        {
            public readonly WallRenderer Renderer = new WallRenderer();
            public readonly BackendService Service;
            public readonly List<string> Log = new List<string>();

            public Served()
            {
                Service = new BackendService(Renderer);
                Service.Log += Log.Add;
            }

            public ProtocolMessage Send(List<byte[]> request) { return Protocol.Decode(Service.Handle(request)); }
        }

        static Served Start(params Dictionary<string, object>[] sensors)
        {
            var served = new Served();
            Assert.AreEqual(Protocol.Ready, served.Send(Settings(sensors)).Topic);
            return served;
        }

        static List<byte[]> TwoCars(Dictionary<string, object> egoSensor, bool carsVisible = true)
        {
            var body = SettingsBody(List(Car("ego", egoSensor), Car("opp")));
            body["cars_visible"] = carsVisible;
            return Protocol.Encode(Protocol.InitialSettings, 0, 0, body, TrackFrames());
        }

        [Test]
        public void ReadyListsTheRenderedSensorsInOrderAndNotTheComputedOnes()
        {
            var served = new Served();
            var imu = new Dictionary<string, object> { { "name", "imu" }, { "type", "imu" } };
            var reply = served.Send(Settings(Scan(), imu, Cloud(), Camera()));
            Assert.AreEqual(Protocol.Ready, reply.Topic);
            var ready = ReadyMessage.Read(reply);
            Assert.AreEqual("wall", ready.Backend, "the renderer's name");
            Assert.AreEqual("wall", ready.Track);
            Assert.AreEqual(3, ready.Sensors.Count);
            Assert.AreEqual("scan/lidar2d cloud/lidar3d cam/camera",
                            string.Join(" ", ready.Sensors.ConvertAll(s => s.Sensor + "/" + s.Type)));
            Assert.AreEqual("ego", ready.Sensors[0].Car);
            Assert.AreEqual(new[] { Labels.Barrier }, served.Renderer.Track.Labels, "labels default to barrier");
            Assert.AreEqual("wall", served.Service.TrackName);
            Assert.AreEqual(3UL, served.Service.Settings.Seed);
            var capabilities = (IDictionary<string, object>)reply.Header["capabilities"];
            Assert.AreEqual(0, ((List<object>)capabilities["lenses"]).Count, "it renders no camera lens, and says so");
            Assert.AreEqual(0, ((List<object>)capabilities["targets"]).Count, "nor a calibration target");
        }

        [Test]
        public void AScanMeasuresTheWallAndEchoesStepAndTime()
        {
            var served = Start(Scan());
            const long time = 4611686018427387929L;  // 2^62 + 25
            var reply = served.Send(Update(12, time, List(Pose("ego", 0.0)), "scan"));
            Assert.AreEqual(Protocol.Update, reply.Topic);
            Assert.AreEqual(12, reply.Step);
            Assert.AreEqual(time, reply.TimeNs);
            var ranges = Floats(reply, "ego/scan");
            const double ahead = 4.5;  // the wall is 4.5 m ahead of the sensor at x = 0.5
            Assert.AreEqual(3, ranges.Length);
            Assert.That(ranges[0], Is.EqualTo(ahead * Math.Sqrt(2)).Within(1e-5));
            Assert.That(ranges[1], Is.EqualTo(ahead).Within(1e-5));
            Assert.That(ranges[2], Is.EqualTo(ahead * Math.Sqrt(2)).Within(1e-5));
            var meta = Frame(reply, "ego/scan").Meta;
            Assert.AreEqual("ego", meta["car"]);
            Assert.AreEqual("scan", meta["sensor"]);
            Assert.AreEqual("lidar2d", meta["type"]);
            Assert.AreEqual("ranges", meta["encoding"]);
            Assert.AreEqual(time, meta["stamp_ns"]);
            var intensity = Floats(reply, "ego/scan/intensity");
            Assert.That(intensity[1], Is.EqualTo(1000 * 0.6 / (ahead * ahead)).Within(1e-3));
            Assert.That(intensity[0], Is.EqualTo(1000 * 0.6 * Math.Sqrt(0.5) / (2 * ahead * ahead)).Within(1e-3));
            Assert.AreEqual("intensity", Frame(reply, "ego/scan/intensity").Meta["encoding"]);
            Assert.AreEqual(2, reply.Frames.Count);
        }

        [Test]
        public void WithoutNoiseTheRangesAreTheRayDistances()
        {
            var served = Start(Scan());
            Assert.AreEqual(0, served.Send(Update(1, -0.37)).Frames.Count, "nothing was due");
            var ranges = Floats(served.Send(Update(2, -0.37, "scan")), "ego/scan");
            Assert.AreEqual(served.Renderer.LastDistances, ranges);
        }

        [Test]
        public void RangesFollowRep117()
        {
            var ranges = Floats(Start(Scan(rangeMin: 10.0)).Send(Update(1, 4.0, "scan")), "ego/scan");
            Assert.AreEqual(float.NegativeInfinity, ranges[1], "closer than range_min");
            ranges = Floats(Start(Scan()).Send(Update(1, 6.0, "scan")), "ego/scan");
            Assert.AreEqual(float.PositiveInfinity, ranges[1], "no return: the wall is behind");
            var dropped = Scan();
            dropped["dropout"] = 1.0;
            var reply = Start(dropped).Send(Update(1, 0.0, "scan"));
            Assert.IsTrue(float.IsNaN(Floats(reply, "ego/scan")[1]), "a dropped return");
            Assert.AreEqual(0f, Floats(reply, "ego/scan/intensity")[1]);
        }

        [Test]
        public void NoiseIsSeededPerSensor()
        {
            var noisy = Scan();
            noisy["noise_std"] = 0.1;
            var twin = Scan("twin");
            twin["noise_std"] = 0.1;
            var first = Start(noisy, twin).Send(Update(1, 0.0, "scan", "twin"));
            var again = Start(noisy, twin).Send(Update(1, 0.0, "scan", "twin"));
            Assert.AreEqual(Floats(first, "ego/scan"), Floats(again, "ego/scan"), "the same seed, the same noise");
            Assert.IsFalse(Floats(first, "ego/scan")[1] == Floats(first, "ego/twin")[1], "each sensor its own noise");
            var served = new Served();
            served.Send(Protocol.Encode(Protocol.InitialSettings, 0, 0, SettingsBody(List(Car("ego", noisy, twin)), 4), TrackFrames()));
            Assert.IsFalse(Floats(first, "ego/scan")[1] == Floats(served.Send(Update(1, 0.0, "scan")), "ego/scan")[1], "another seed");
        }

        [Test]
        public void ACloudIsTheLastRevolutionStampedWithItsStart()
        {
            var served = Start(Cloud());
            served.Send(Update(1, 0.0, "cloud"));
            var reply = served.Send(Update(2, 0.0, "cloud"));
            var expected = new Dictionary<string, string>
            {
                { "ego/cloud", "float32 ranges" }, { "ego/cloud/intensity", "float32 intensity" },
                { "ego/cloud/reflectivity", "uint16 reflectivity" }, { "ego/cloud/labels", "uint8 labels" },
            };
            Assert.AreEqual(4, reply.Frames.Count);
            foreach (var pair in expected)
            {
                var frame = Frame(reply, pair.Key);
                Assert.AreEqual(pair.Value, frame.Dtype + " " + frame.Meta["encoding"]);
                Assert.AreEqual(new[] { 2, 4 }, frame.Shape);
                Assert.AreEqual(0L, frame.Meta["stamp_ns"], "the revolution started at 0");
                Assert.AreEqual("lidar3d", frame.Meta["type"]);
            }
            var ranges = Floats(reply, "ego/cloud");
            Assert.That(ranges[0], Is.EqualTo(5.0).Within(1e-5));  // ring 0, column 0 looks at the wall
            Assert.AreEqual(float.PositiveInfinity, ranges[1], "column 1 looks along the wall");
            Assert.AreEqual(float.PositiveInfinity, ranges[2], "column 2 away from it");
            Assert.That(ranges[4], Is.EqualTo(5.0 / Math.Cos(0.1)).Within(1e-4));  // ring 1, 0.1 rad up
            var reflectivity = Frame(reply, "ego/cloud/reflectivity").Data;
            Assert.AreEqual(60, BitConverter.ToUInt16(reflectivity, 0));
            Assert.AreEqual(0, BitConverter.ToUInt16(reflectivity, 2));
            var labels = Frame(reply, "ego/cloud/labels").Data;
            Assert.AreEqual(new byte[] { 1, 255, 255, 255, 1, 255, 255, 255 }, labels);
        }

        [Test]
        public void ACloudSendsNoLabelsUnlessAsked()
        {
            var reply = Start(Cloud(labels: false)).Send(Update(2, 0.0, "cloud"));
            Assert.AreEqual(3, reply.Frames.Count);
            Assert.IsFalse(reply.Frames.ContainsKey("ego/cloud/labels"));
        }

        [Test]
        public void EachColumnIsCastFromThePoseOfItsTime()
        {
            // Every column looks along +x; the car drives 1 m per frame: columns at 0, 12.5,
            // 25 and 37.5 ms were measured from x = 0, 0.5, 1 and 1.5.
            var served = Start(Cloud(azimuthIncrement: 0.0));
            served.Send(Update(0, 0.0, "cloud"));
            served.Send(Update(1, 1.0, "cloud"));
            var ranges = Floats(served.Send(Update(2, 2.0, "cloud")), "ego/cloud");
            var expected = new[] { 5.0, 4.5, 4.0, 3.5 };
            for (var j = 0; j < 4; j++) Assert.That(ranges[j], Is.EqualTo(expected[j]).Within(1e-5));
        }

        [Test]
        public void OtherCarsAreSeenWhereTheyWereAtTheFrameClosingEachColumn()
        {
            var served = new Served();
            served.Send(TwoCars(Cloud(azimuthIncrement: 0.0)));
            served.Send(Update(0, 0, List(Pose("ego", 0), Pose("opp", 3)), "cloud"));
            served.Send(Update(1, FrameNs, List(Pose("ego", 0), Pose("opp", 3)), "cloud"));
            var reply = served.Send(Update(2, 2 * FrameNs, List(Pose("ego", 0), Pose("opp", 30)), "cloud"));
            var ranges = Floats(reply, "ego/cloud");
            // Columns at 0, 12.5 and 25 ms close with the frames at 0 and 25 ms (the box's rear
            // at 2.75 m); the one at 37.5 ms with the frame at 50 ms, where the box is gone.
            var expected = new[] { 2.75, 2.75, 2.75, 5.0 };
            for (var j = 0; j < 4; j++) Assert.That(ranges[j], Is.EqualTo(expected[j]).Within(1e-5));
            Assert.AreEqual(new byte[] { 5, 5, 5, 1 }, new List<byte>(Frame(reply, "ego/cloud/labels").Data).GetRange(0, 4).ToArray());
            Assert.AreEqual(30.0, served.Renderer.Cars[1].Pose.X, "the cars are back at the Update's poses");
        }

        [Test]
        public void EveryUpdateSetsTheVisibleCarsAndASensorNeverSeesItsOwn()
        {
            var served = new Served();
            served.Send(TwoCars(Scan()));
            var reply = served.Send(Update(1, FrameNs, List(Pose("ego", 0), Pose("opp", 3), Pose("ghost", 1)), "scan"));
            Assert.AreEqual(2, served.Renderer.Cars.Count, "the car without a footprint is not a box");
            Assert.AreEqual("ego", served.Renderer.Cars[0].Car);
            Assert.AreEqual(1.0, served.Renderer.Cars[1].Height);
            Assert.AreEqual(new List<string> { "ego" }, served.Renderer.Excluded);
            Assert.That(Floats(reply, "ego/scan")[1], Is.EqualTo(2.25).Within(1e-5), "the other car's rear, 2.25 m ahead");
            Assert.That(Floats(reply, "ego/scan/intensity")[1], Is.EqualTo(1000 * 0.5 / (2.25 * 2.25)).Within(1e-3));

            var hidden = new Served();
            hidden.Send(TwoCars(Scan(), carsVisible: false));
            reply = hidden.Send(Update(1, FrameNs, List(Pose("ego", 0), Pose("opp", 3)), "scan"));
            Assert.AreEqual(0, hidden.Renderer.Cars.Count, "cars_visible false hides every car");
            Assert.That(Floats(reply, "ego/scan")[1], Is.EqualTo(4.5).Within(1e-5));
        }

        [Test]
        public void ACameraSendsItsOutputsInTheOrderAsked()
        {
            var reply = Start(Camera()).Send(Update(1, 0.0, "cam"));
            Assert.AreEqual("ego/cam/semantic ego/cam/rgb ego/cam/depth",
                            string.Join(" ", reply.FrameList.ConvertAll(f => f.Name)));
            var depth = Frame(reply, "ego/cam/depth");
            Assert.AreEqual(new[] { 3, 5 }, depth.Shape);
            Assert.AreEqual("32FC1", depth.Meta["encoding"]);
            Assert.That(Floats(reply, "ego/cam/depth")[7], Is.EqualTo(5.0).Within(1e-5));
            var rgb = Frame(reply, "ego/cam/rgb");
            Assert.AreEqual(new[] { 3, 5, 3 }, rgb.Shape);
            Assert.AreEqual("uint8 rgb8", rgb.Dtype + " " + rgb.Meta["encoding"]);
            var semantic = Frame(reply, "ego/cam/semantic");
            Assert.AreEqual("uint8 mono8", semantic.Dtype + " " + semantic.Meta["encoding"]);
            Assert.AreEqual(new[] { 3, 5 }, semantic.Shape);
            Assert.AreEqual(Labels.Barrier, semantic.Data[7]);
            Assert.AreEqual(FrameNs, semantic.Meta["stamp_ns"]);
        }

        [Test]
        public void CameraNoiseDependsOnTheSeedAndTheFrameTime()
        {
            var camera = Camera();
            camera["noise_std"] = 20.0;
            camera["depth_noise_std"] = 0.1;
            var served = Start(camera);
            var first = served.Send(Update(1, 0.0, "cam"));
            var later = served.Send(Update(2, 0.0, "cam"));
            var again = Start(camera).Send(Update(1, 0.0, "cam"));
            Assert.AreEqual(Frame(first, "ego/cam/rgb").Data, Frame(again, "ego/cam/rgb").Data);
            Assert.AreEqual(Floats(first, "ego/cam/depth"), Floats(again, "ego/cam/depth"));
            Assert.IsFalse(Floats(first, "ego/cam/depth")[7] == Floats(later, "ego/cam/depth")[7]);
            Assert.That(Floats(first, "ego/cam/depth")[7], Is.EqualTo(5.0).Within(0.5));
        }

        [Test]
        public void ComputedSensorsAreSkipped()
        {
            var imu = new Dictionary<string, object> { { "name", "imu" }, { "type", "imu" } };
            var reply = Start(Scan(), imu).Send(Update(1, 0.0, "imu", "scan"));
            Assert.AreEqual(Protocol.Update, reply.Topic);
            Assert.AreEqual(2, reply.Frames.Count, "the scan's frames only");
        }

        [Test]
        public void AnUpdateBeforeInitialSettingsIsRefusedWithItsStep()
        {
            var served = new Served();
            var reply = served.Send(Update(7, 0.0, "scan"));
            AssertContains("Update before InitialSettings", ErrorOf(reply));
            Assert.AreEqual(7, reply.Step);
            Assert.AreEqual(7 * FrameNs, reply.TimeNs);
            AssertContains("refused Update of step 7: Update before InitialSettings", served.Log[0]);
        }

        [Test]
        public void RenderRequestsNameKnownSensorsOfCarsWithAPose()
        {
            var served = Start(Scan());
            AssertContains("render request for unknown car/sensor ('ego', 'radar')", ErrorOf(served.Send(Update(1, 0.0, "radar"))));
            var reply = served.Send(Update(1, FrameNs, List(Pose("opp", 0)), "scan"));
            AssertContains("render request for car(s) ['ego'] without a pose", ErrorOf(reply));
            Assert.AreEqual(Protocol.Update, served.Send(Update(2, 0.0, "scan")).Topic, "still serving");
        }

        [Test]
        public void AnUnsupportedSensorTypeIsRefusedNamingTheBackendAndTheOldSettingsStay()
        {
            var served = Start(Scan());
            var radar = new Dictionary<string, object> { { "name", "radar" }, { "type", "radar" }, { "rate_hz", 10.0 }, { "mount", List(0.0, 0.0, 0.0, 0.0, 0.0, 0.0) } };
            var error = ErrorOf(served.Send(Settings(radar)));
            Assert.AreEqual("sensor type 'radar' is not supported by wall; it renders ['camera', 'lidar2d', 'lidar3d']", error);
            Assert.AreEqual(Protocol.Update, served.Send(Update(1, 0.0, "scan")).Topic, "the scan is still there");
        }

        [Test]
        public void AnotherProtocolVersionIsRefusedNamingBothAndServingGoesOn()
        {
            var served = Start(Scan());
            var request = Update(3, 0.0, "scan");
            var header = Encoding.UTF8.GetString(request[1]);
            Assert.IsTrue(header.Contains("\"protocol\":1"), header);
            request[1] = Encoding.UTF8.GetBytes(header.Replace("\"protocol\":1", "\"protocol\":2"));
            AssertContains("peer speaks arsim protocol version 2, this side speaks version 1", ErrorOf(served.Send(request)));
            Assert.AreEqual(Protocol.Update, served.Send(Update(4, 0.0, "scan")).Topic);
        }

        [Test]
        public void UnreadableRequestsGetAnErrorOfStepZero()
        {
            var served = Start(Scan());
            var reply = served.Send(new List<byte[]> { new byte[] { 0xFF } });
            Assert.AreEqual(0, reply.Step);
            ErrorOf(reply);
            var many = new List<byte[]>();
            for (var i = 0; i < 65; i++) many.Add(new byte[1]);
            AssertContains("request of more than 64 frames; refused unread", ErrorOf(served.Send(many)));
            AssertContains("the backend does not accept 'Ready' requests",
                           ErrorOf(served.Send(Protocol.Encode(Protocol.Ready, 1, 1, new Dictionary<string, object>(), new BinaryFrame[0]))));
            Assert.AreEqual(Protocol.Update, served.Send(Update(1, 0.0, "scan")).Topic);
        }

        [Test]
        public void AnyOtherFailureIsAnInternalErrorAndServingGoesOn()
        {
            var served = Start(Scan());
            served.Renderer.FailCasts = true;
            var reply = served.Send(Update(5, 0.0, "scan"));
            Assert.AreEqual("internal error: the backend failed to serve Update of step 5: InvalidOperationException: " +
                            "the test renderer was told to fail", ErrorOf(reply));
            Assert.AreEqual(5, reply.Step);
            AssertContains("at Arsim.Core.Tests.WallRenderer.CastRays", served.Log[served.Log.Count - 1]);
            served.Renderer.FailCasts = false;
            Assert.AreEqual(Protocol.Update, served.Send(Update(6, 0.0, "scan")).Topic);
            Assert.AreEqual(Protocol.Error, Encoding.ASCII.GetString(served.Service.Handle(null)[0]), "even no frames at all");
        }

        [Test]
        public void ATrackSwitchAnswersReadyAndKeepsTheSensors()
        {
            var served = Start(Scan());
            var frames = new[]
            {
                BinaryFrame.Of(TrackRequest.Vertices, new double[] { 0, 0, 0, 1, 0, 0, 0, 1, 0 }, 3, 3),
                BinaryFrame.Of(TrackRequest.Triangles, new uint[] { 0, 1, 2 }, 1, 3),
                BinaryFrame.Of(TrackRequest.Labels, new byte[] { Labels.ConeBlue }, 1),
            };
            var body = new Dictionary<string, object> { { "track", new Dictionary<string, object> { { "name", "next" } } } };
            var reply = served.Send(Protocol.Encode(Protocol.Track, 5, 6, body, frames));
            var ready = ReadyMessage.Read(reply);
            Assert.AreEqual("next", ready.Track);
            Assert.AreEqual(1, ready.Sensors.Count);
            Assert.AreEqual(5, reply.Step);
            Assert.AreEqual(6, reply.TimeNs);
            Assert.AreEqual(new[] { Labels.ConeBlue }, served.Renderer.Track.Labels);
            Assert.AreEqual("next", served.Service.TrackName);
            Assert.AreEqual(Protocol.Update, served.Send(Update(6, 0.0, "scan")).Topic);
        }
    }
}
