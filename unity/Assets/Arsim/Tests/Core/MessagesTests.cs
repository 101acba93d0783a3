using System;
using System.Collections.Generic;
using NUnit.Framework;
using static Arsim.Core.Tests.TestWire;

namespace Arsim.Core.Tests
{
    /// <summary>Every limit of docs/protocol.md is refused naming its key, in wire.py's words.</summary>
    [TestFixture]
    public class MessagesTests
    {
        static InitialSettingsMessage Read(Dictionary<string, object> body, IList<BinaryFrame> frames = null)
        {
            return InitialSettingsMessage.Read(Message(Protocol.InitialSettings, body, frames ?? TrackFrames()));
        }

        static InitialSettingsMessage ReadCars(params object[] cars) { return Read(SettingsBody(List(cars))); }

        static void Refused(string expected, Dictionary<string, object> body, IList<BinaryFrame> frames = null)
        {
            var error = Assert.Throws<ProtocolException>(() => Read(body, frames));
            AssertContains(expected, error.Message);
        }

        static void RefusedCars(string expected, params object[] cars) { Refused(expected, SettingsBody(List(cars))); }

        static Dictionary<string, object> With(Dictionary<string, object> entry, string key, object value)
        {
            entry[key] = value;
            return entry;
        }

        [Test]
        public void GoodSettingsAreReadWithTheirDefaults()
        {
            var imu = new Dictionary<string, object> { { "name", "imu" }, { "type", "imu" } };
            var settings = ReadCars(Car("ego", Scan(), Cloud(), Camera(), imu));
            Assert.AreEqual("map", settings.WorldFrame);
            Assert.AreEqual(FrameNs, settings.FramePeriodNs);
            Assert.AreEqual(3UL, settings.Seed);
            Assert.IsTrue(settings.CarsVisible);
            var car = settings.Cars[0];
            Assert.AreEqual("ego", car.Id);
            Assert.AreEqual(1.0, car.Footprint.Value.Height);
            var scan = (Lidar2DSpec)car.Sensors[0];
            Assert.AreEqual(3, scan.Beams);
            Assert.AreEqual(0.0, scan.Dropout, "dropout defaults to 0");
            Assert.AreEqual(0.5, scan.Mount.X);
            Assert.IsTrue(((Lidar3DSpec)car.Sensors[1]).Labels);
            Assert.AreEqual(new List<string> { "semantic", "rgb", "depth" }, ((CameraSpec)car.Sensors[2]).Outputs);
            Assert.IsFalse(car.Sensors[3].Rendered, "imu is computed by the republisher");
            Assert.IsTrue(car.Sensors[0].Rendered);
            Assert.AreEqual("wall", settings.Track.Name);
        }

        [Test]
        public void OptionalKeysMayBeLeftOut()
        {
            var body = new Dictionary<string, object> { { "cars", List(new Dictionary<string, object> { { "id", "a" }, { "footprint", null } }) } };
            var settings = Read(body);
            Assert.AreEqual(0, settings.FramePeriodNs);
            Assert.AreEqual(0UL, settings.Seed);
            Assert.AreEqual("", settings.WorldFrame);
            Assert.AreEqual("", settings.Track.Name);
            Assert.IsFalse(settings.Cars[0].Footprint.HasValue, "a car without a footprint is invisible");
            var camera = Camera();
            camera.Remove("outputs");
            Assert.AreEqual(new List<string> { "rgb" }, ((CameraSpec)ReadCars(Car("ego", camera)).Cars[0].Sensors[0]).Outputs);
        }

        [TestCase("beams", 0L, "key 'beams' must be an integer in [1, 65536], got 0")]
        [TestCase("beams", 65537L, "key 'beams' must be an integer in [1, 65536], got 65537")]
        [TestCase("beams", 2.5, "key 'beams' must be an integer in [1, 65536], got 2.5")]
        [TestCase("beams", true, "key 'beams' must be an integer in [1, 65536], got True")]
        [TestCase("rate_hz", 0.0001, "key 'rate_hz' must be a number in [0.001, 1e+06]")]
        [TestCase("rate_hz", 2e6, "key 'rate_hz' must be a number in [0.001, 1e+06]")]
        [TestCase("rate_hz", true, "key 'rate_hz' must be a number in [0.001, 1e+06], got True")]
        [TestCase("range_min", -0.1, "key 'range_min' must be a number in [0, 1e+06]")]
        [TestCase("range_max", 0.0, "key 'range_max' must be a number in (0, 1e+06]")]
        [TestCase("noise_std", -1.0, "key 'noise_std' must be a number in [0, 1e+06]")]
        [TestCase("dropout", 1.5, "key 'dropout' must be a number in [0, 1]")]
        [TestCase("angle_min", 2e6, "key 'angle_min' must be a number in [-1e+06, 1e+06]")]
        [TestCase("angle_increment", "x", "key 'angle_increment' must be a number in [-1e+06, 1e+06], got 'x'")]
        [TestCase("mount", "up", "key 'mount' must be 6 numbers in [-1e+06, 1e+06], got 'up'")]
        [TestCase("type", null, "key 'type' must be a string, got None")]
        public void ABadScanIsNamedWithItsKey(string key, object value, string expected)
        {
            RefusedCars("car 'ego', sensor 'scan': " + expected, Car("ego", With(Scan(), key, value)));
        }

        [Test]
        public void MountsAndPosesHoldSixNumbersWithinAMillion()
        {
            RefusedCars("car 'ego', sensor 'scan': key 'mount' must be 6 numbers in [-1e+06, 1e+06]",
                        Car("ego", With(Scan(), "mount", List(0.0, 0.0, 0.0, 0.0, 0.0))));
            RefusedCars("car 'ego', sensor 'scan': key 'mount' must be 6 numbers in [-1e+06, 1e+06]",
                        Car("ego", With(Scan(), "mount", List(0.0, 0.0, 2e6, 0.0, 0.0, 0.0))));
            RefusedCars("car 'ego', sensor 'scan': key 'mount' must be 6 numbers",
                        Car("ego", With(Scan(), "mount", List(0.0, 0.0, 0.0, 0.0, 0.0, false))));
        }

        [Test]
        public void ASensorNeedsAStringName()
        {
            RefusedCars("car 'ego': key 'name' must be a string, got 3", Car("ego", With(Scan(), "name", 3L)));
        }

        [TestCase("width", 0L, "key 'width' must be an integer in [1, 8192], got 0")]
        [TestCase("height", 8193L, "key 'height' must be an integer in [1, 8192], got 8193")]
        [TestCase("fov", 0.0, "key 'fov' must be a number in (0, 3.14159)")]
        [TestCase("fov", 3.2, "key 'fov' must be a number in (0, 3.14159)")]
        [TestCase("near", 0.0, "key 'near' must be a number in (0, 1e+06]")]
        [TestCase("far", 0.1, "key 'far' must be a number in (0.1, 1e+06]")]
        [TestCase("noise_std", 256.0, "key 'noise_std' must be a number in [0, 255]")]
        [TestCase("depth_noise_std", -1.0, "key 'depth_noise_std' must be a number in [0, 1e+06]")]
        [TestCase("outputs", "rgb", "outputs must be a non-empty list of ['depth', 'rgb', 'semantic']")]
        public void ABadCameraIsNamedWithItsKey(string key, object value, string expected)
        {
            RefusedCars("car 'ego', sensor 'cam': " + expected, Car("ego", With(Camera(), key, value)));
        }

        [Test]
        public void CameraOutputsAreKnownOnesEachOnceInTheirOrder()
        {
            const string expected = "car 'ego', sensor 'cam': outputs must be a non-empty list of ['depth', 'rgb', 'semantic']";
            RefusedCars(expected, Car("ego", With(Camera(), "outputs", List())));
            RefusedCars(expected, Car("ego", With(Camera(), "outputs", List("rgb", "infrared"))));
            RefusedCars(expected, Car("ego", With(Camera(), "outputs", List("rgb", 1L))));
            var camera = (CameraSpec)ReadCars(Car("ego", With(Camera(), "outputs", List("depth", "rgb", "depth")))).Cars[0].Sensors[0];
            Assert.AreEqual(new List<string> { "depth", "rgb" }, camera.Outputs);
            Assert.IsTrue(camera.Wants(CameraSpec.Depth));
            Assert.IsFalse(camera.Wants(CameraSpec.Semantic));
        }

        [TestCase("channels", 0L, "key 'channels' must be an integer in [1, 16777216], got 0")]
        [TestCase("columns", 0L, "key 'columns' must be an integer in [1, 16777216], got 0")]
        [TestCase("columns", 8388609L, "casts 16777218 rays or pixels per render, at most 16777216")]
        [TestCase("azimuth_start", 2e6, "key 'azimuth_start' must be a number in [-1e+06, 1e+06]")]
        [TestCase("azimuth_increment", null, "key 'azimuth_increment' must be a number in [-1e+06, 1e+06], got None")]
        [TestCase("labels", "yes", "key 'labels' must be true or false, got 'yes'")]
        public void ABadCloudIsNamedWithItsKey(string key, object value, string expected)
        {
            RefusedCars("car 'ego', sensor 'cloud': " + expected, Car("ego", With(Cloud(), key, value)));
        }

        [Test]
        public void ElevationsAreOnePerChannelWithinPi()
        {
            const string expected = "car 'ego', sensor 'cloud': key 'elevations' must be 2 numbers in [-3.14159, 3.14159]";
            RefusedCars(expected, Car("ego", With(Cloud(), "elevations", List(0.0))));
            RefusedCars(expected, Car("ego", With(Cloud(), "elevations", List(0.0, 4.0))));
        }

        [Test]
        public void ACloudSendsLabelsOnlyWhenAsked()
        {
            var cloud = Cloud();
            cloud.Remove("labels");
            Assert.IsFalse(((Lidar3DSpec)ReadCars(Car("ego", cloud)).Cars[0].Sensors[0]).Labels);
        }

        [Test]
        public void ACameraCastsAtMost2To24PixelsAndAllSensors2To25()
        {
            var big = With(With(Camera(), "width", 8192L), "height", 4096L);
            RefusedCars("car 'ego', sensor 'cam': casts 33554432 rays or pixels per render, at most 16777216", Car("ego", big));
            var cars = new List<object>();
            for (var i = 0; i < 3; i++)
            {
                var camera = With(With(Camera(), "width", 4096L), "height", 4096L);
                cars.Add(Car("car" + i, camera));
            }
            RefusedCars("the sensors cast 50331648 rays and pixels in all, at most 33554432", cars.ToArray());
            Assert.AreEqual(2, ReadCars(cars[0], cars[1]).Cars.Count, "2^25 in all is allowed");
        }

        [Test]
        public void CarsAreAtMost256WithAtMost64SensorsEach()
        {
            var cars = new List<object>();
            for (var i = 0; i < 257; i++) cars.Add(new Dictionary<string, object> { { "id", "car" + i } });
            RefusedCars("header: key 'cars' must be a list of at most 256 objects", cars.ToArray());
            Refused("header: key 'cars' must be a list of at most 256 objects", new Dictionary<string, object> { { "cars", "ego" } });
            RefusedCars("header: key 'cars' must be a list of at most 256 objects", "ego");
            var sensors = new List<Dictionary<string, object>>();
            for (var i = 0; i < 65; i++) sensors.Add(Scan("scan" + i));
            RefusedCars("car 'ego': key 'sensors' must be a list of at most 64 objects", Car("ego", sensors.ToArray()));
        }

        [Test]
        public void CarIdsAndSensorNamesAreStringsEachUsedOnce()
        {
            RefusedCars("car 5: key 'id' must be a string, got 5", new Dictionary<string, object> { { "id", 5L } });
            RefusedCars("header: two cars have the id 'ego'", Car("ego"), Car("ego"));
            RefusedCars("car 'ego': two sensors are named 'scan'", Car("ego", Scan(), Scan()));
        }

        [Test]
        public void AFootprintIsThreeNumbersUpToAKilometre()
        {
            const string expected = "car 'ego': key 'footprint' must be 3 numbers in (0, 1000]";
            RefusedCars(expected, With(Car("ego"), "footprint", List(0.0, 0.3, 1.0)));
            RefusedCars(expected, With(Car("ego"), "footprint", List(1001.0, 0.3, 1.0)));
            RefusedCars(expected, With(Car("ego"), "footprint", List(0.5, 0.3)));
        }

        [TestCase("frame_period_ns", -1L, "header: key 'frame_period_ns' must be an integer in [0, 3600000000000], got -1")]
        [TestCase("frame_period_ns", 3600000000001L, "header: key 'frame_period_ns' must be an integer in [0, 3600000000000]")]
        [TestCase("frame_period_ns", 0.5, "header: key 'frame_period_ns' must be an integer in [0, 3600000000000]")]
        [TestCase("seed", -1L, "header: key 'seed' must be an integer in [0, 18446744073709551615], got -1")]
        [TestCase("seed", 18446744073709551616.0, "header: key 'seed' must be an integer in [0, 18446744073709551615]")]
        [TestCase("cars_visible", "yes", "header: key 'cars_visible' must be true or false, got 'yes'")]
        [TestCase("world_frame", 5L, "header: key 'world_frame' must be a string, got 5")]
        [TestCase("track", "wall", "header key \"track\" must be an object {\"name\": string}")]
        public void ABadHeaderKeyIsNamed(string key, object value, string expected)
        {
            Refused(expected, With(SettingsBody(List(Car("ego"))), key, value));
        }

        [Test]
        public void TheSeedSpansSixtyFourUnsignedBits()
        {
            var body = SettingsBody(List(Car("ego")));
            body["seed"] = ulong.MaxValue;
            Assert.AreEqual(ulong.MaxValue, Read(body).Seed);
            body["track"] = new Dictionary<string, object> { { "name", 5L } };
            Refused("header key \"track\" must be an object {\"name\": string}", body);
        }

        static List<BinaryFrame> Track(BinaryFrame vertices, BinaryFrame triangles, BinaryFrame labels = null)
        {
            var frames = new List<BinaryFrame> { vertices, triangles };
            if (labels != null) frames.Add(labels);
            return frames;
        }

        static readonly float[] Triangle = { 0, 0, 0, 1, 0, 0, 0, 1, 0 };

        static TrackMesh ReadTrack(List<BinaryFrame> frames)
        {
            var body = new Dictionary<string, object> { { "track", new Dictionary<string, object> { { "name", "t" } } } };
            return TrackRequest.Read(Message(Protocol.Track, body, frames));
        }

        static void TrackRefused(string expected, List<BinaryFrame> frames)
        {
            AssertContains(expected, Assert.Throws<ProtocolException>(() => ReadTrack(frames)).Message);
        }

        [Test]
        public void ATrackIsFloatVerticesAndIntegerTriangles()
        {
            var triangles = BinaryFrame.Of(TrackRequest.Triangles, new uint[] { 0, 1, 2 }, 1, 3);
            TrackRefused("Track needs the frames track_vertices and track_triangles", new List<BinaryFrame> { triangles });
            TrackRefused("track_vertices and track_triangles must both have shape (n, 3)",
                         Track(BinaryFrame.Of(TrackRequest.Vertices, Triangle, 3, 3, 1), triangles));
            TrackRefused("track_vertices and track_triangles must both have shape (n, 3)",
                         Track(BinaryFrame.Of(TrackRequest.Vertices, Triangle, 3, 3), BinaryFrame.Of(TrackRequest.Triangles, new uint[] { 0, 1, 2 }, 3)));
            TrackRefused("track_vertices must be float32 or float64 and track_triangles an integer dtype, got int32 and uint32",
                         Track(BinaryFrame.Of(TrackRequest.Vertices, new int[9], 3, 3), triangles));
            TrackRefused("track_vertices must be float32 or float64 and track_triangles an integer dtype, got float32 and float32",
                         Track(BinaryFrame.Of(TrackRequest.Vertices, Triangle, 3, 3), BinaryFrame.Of(TrackRequest.Triangles, new float[] { 0, 1, 2 }, 1, 3)));
        }

        [TestCase(float.NaN)]
        [TestCase(float.PositiveInfinity)]
        [TestCase(-2e6f)]
        public void VerticesAreFiniteWithinAMillionMetres(float bad)
        {
            var vertices = (float[])Triangle.Clone();
            vertices[4] = bad;
            TrackRefused("track_vertices must be finite numbers within +-1e+06 m",
                         Track(BinaryFrame.Of(TrackRequest.Vertices, vertices, 3, 3), BinaryFrame.Of(TrackRequest.Triangles, new uint[] { 0, 1, 2 }, 1, 3)));
        }

        [Test]
        public void Float64VerticesAreNarrowedAndSmallIntegerIndicesWidened()
        {
            var track = ReadTrack(Track(BinaryFrame.Of(TrackRequest.Vertices, new double[] { 0, 0, 0, 1.5, 0, 0, 0, 1, 0 }, 3, 3),
                                        BinaryFrame.Of(TrackRequest.Triangles, new byte[] { 2, 1, 0 }, 1, 3)));
            Assert.AreEqual(new float[] { 0, 0, 0, 1.5f, 0, 0, 0, 1, 0 }, track.Vertices);
            Assert.AreEqual(new uint[] { 2, 1, 0 }, track.Triangles);
            Assert.AreEqual(new[] { Labels.Barrier }, track.Labels, "labels default to barrier");
            Assert.AreEqual("t", track.Name);
        }

        [Test]
        public void EveryIndexNamesAVertex()
        {
            var vertices = BinaryFrame.Of(TrackRequest.Vertices, Triangle, 3, 3);
            const string expected = "track_triangles index a vertex that does not exist (indices must be in [0, 3))";
            TrackRefused(expected, Track(vertices, BinaryFrame.Of(TrackRequest.Triangles, new int[] { 0, -1, 2 }, 1, 3)));
            TrackRefused(expected, Track(vertices, BinaryFrame.Of(TrackRequest.Triangles, new uint[] { 0, 3, 2 }, 1, 3)));
            TrackRefused(expected, Track(vertices, BinaryFrame.Of(TrackRequest.Triangles, new uint[] { 0, uint.MaxValue, 2 }, 1, 3)));
        }

        [Test]
        public void LabelsAreOneIntegerFrom0To255PerTriangle()
        {
            var vertices = BinaryFrame.Of(TrackRequest.Vertices, Triangle, 3, 3);
            var triangles = BinaryFrame.Of(TrackRequest.Triangles, new uint[] { 0, 1, 2 }, 1, 3);
            const string expected = "track_labels must be one integer label 0..255 per triangle (1)";
            TrackRefused(expected, Track(vertices, triangles, BinaryFrame.Of(TrackRequest.Labels, new byte[] { 1, 2 }, 2)));
            TrackRefused(expected, Track(vertices, triangles, BinaryFrame.Of(TrackRequest.Labels, new float[] { 1 }, 1)));
            TrackRefused(expected, Track(vertices, triangles, BinaryFrame.Of(TrackRequest.Labels, new int[] { 256 }, 1)));
            TrackRefused(expected, Track(vertices, triangles, BinaryFrame.Of(TrackRequest.Labels, new int[] { -1 }, 1)));
            var track = ReadTrack(Track(vertices, triangles, BinaryFrame.Of(TrackRequest.Labels, new int[] { 255 }, 1)));
            Assert.AreEqual(new byte[] { 255 }, track.Labels);
        }

        static UpdateRequest ReadUpdate(Dictionary<string, object> body)
        {
            return UpdateRequest.Read(Message(Protocol.Update, body, new BinaryFrame[0]));
        }

        static void UpdateRefused(string expected, Dictionary<string, object> body)
        {
            AssertContains(expected, Assert.Throws<ProtocolException>(() => ReadUpdate(body)).Message);
        }

        static Dictionary<string, object> UpdateBody(List<object> cars, List<object> render)
        {
            return new Dictionary<string, object> { { "cars", cars }, { "render", render } };
        }

        static Dictionary<string, object> Due(string car, object sensor)
        {
            return new Dictionary<string, object> { { "car", car }, { "sensor", sensor } };
        }

        [Test]
        public void AnUpdateHasEachCarOnceAndEachRequestOnceInOrder()
        {
            var update = ReadUpdate(UpdateBody(List(Pose("a", 1), Pose("b", 2), Pose("a", 3)),
                                               List(Due("b", "x"), Due("a", "y"), Due("b", "x"))));
            Assert.AreEqual(2, update.Cars.Count);
            Assert.AreEqual("a", update.Cars[0].Id);
            Assert.AreEqual(3.0, update.Cars[0].Pose.X, "the last pose of a repeated id");
            Assert.AreEqual(2, update.Render.Count);
            Assert.AreEqual(new RenderRequest("b", "x"), update.Render[0]);
            Assert.AreEqual(new RenderRequest("a", "y"), update.Render[1]);
            Assert.AreEqual(2.0, update.PosesById()["b"].X);
        }

        [Test]
        public void ABadUpdateIsNamedWithItsKey()
        {
            var shortPose = new Dictionary<string, object> { { "id", "ego" }, { "pose", List(0.0, 0.0, 0.0, 0.0, 0.0) } };
            UpdateRefused("car 'ego': key 'pose' must be 6 numbers in [-1e+06, 1e+06]", UpdateBody(List(shortPose), List()));
            UpdateRefused("car 'ego': key 'pose' must be 6 numbers", UpdateBody(List(With(Pose("ego", 0), "pose", List(0.0, 2e6, 0.0, 0.0, 0.0, 0.0))), List()));
            UpdateRefused("car: key 'id' must be a string, got None", UpdateBody(List(new Dictionary<string, object> { { "pose", List() } }), List()));
            UpdateRefused("render request: key 'sensor' must be a string, got 5", UpdateBody(List(), List(Due("ego", 5L))));
            UpdateRefused("header: key 'render' must be a list of at most 16384 objects", UpdateBody(List(), new List<object>(new object[16385])));
            UpdateRefused("header: key 'cars' must be a list of at most 256 objects", UpdateBody(List(1L), List()));
        }

        [Test]
        public void ReadyRoundTrips()
        {
            var ready = new ReadyMessage { Backend = "b", Track = "t" };
            ready.Sensors.Add(new ListedSensor { Car = "ego", Sensor = "scan", Type = "lidar2d" });
            var read = ReadyMessage.Read(Message(Protocol.Ready, ready.ToBody(), new BinaryFrame[0]));
            Assert.AreEqual("b", read.Backend);
            Assert.AreEqual("t", read.Track);
            Assert.AreEqual(1, read.Sensors.Count);
            Assert.AreEqual("lidar2d", read.Sensors[0].Type);
            Assert.AreEqual(0, read.Lenses.Count, "this backend renders no lens");
            Assert.AreEqual(0, read.Targets.Count, "nor a calibration target");
            ready.Lenses.Add("plumb_bob");
            ready.Targets.Add("checkerboard");
            read = ReadyMessage.Read(Message(Protocol.Ready, ready.ToBody(), new BinaryFrame[0]));
            Assert.AreEqual(new[] { "plumb_bob" }, read.Lenses.ToArray());
            Assert.AreEqual(new[] { "checkerboard" }, read.Targets.ToArray());
        }
    }
}
