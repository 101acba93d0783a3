using System;
using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>A sensor of InitialSettings, checked against the limits (wire.sensor). The
    /// rendered kinds have their own classes; a kind the car's republisher computes (imu,
    /// gnss, ...) is a plain SensorSpec that no backend renders, and so is a kind this side
    /// does not know, which the backend refuses naming itself.</summary>
    public class SensorSpec
    {
        public static readonly string[] ComputedKinds = { "cones", "gnss", "ground_truth", "imu", "objects", "wheel_encoders", "wheel_odometry" };

        public string Name, Type;
        public double RateHz;
        public Pose6 Mount;

        public bool Rendered { get { return Array.IndexOf(ComputedKinds, Type) < 0; } }

        /// <summary>A sensor of <paramref name="car"/> ("car 'ego'"), checked; samples: the
        /// rays or pixels it casts per render (0 for the computed kinds).</summary>
        public static SensorSpec Read(Dictionary<string, object> spec, string car, out long samples)
        {
            var name = WireRead.Text(spec, "name", car);
            var where = car + ", sensor " + WireRead.Show(name);
            var type = WireRead.Text(spec, "type", where);
            samples = 0;
            if (Array.IndexOf(ComputedKinds, type) >= 0) return new SensorSpec { Name = name, Type = type };
            var rate = WireRead.Number(spec, "rate_hz", where, WireRead.MinRateHz, WireRead.MaxRateHz);
            var mount = Poses.FromArray(WireRead.Numbers(spec, "mount", 6, where, -WireRead.MaxCoordinate, WireRead.MaxCoordinate));
            SensorSpec result;
            switch (type)
            {
                case CameraSpec.Kind: result = CameraSpec.ReadKind(spec, where, out samples); break;
                case Lidar2DSpec.Kind: result = Lidar2DSpec.ReadKind(spec, where, out samples); break;
                case Lidar3DSpec.Kind: result = Lidar3DSpec.ReadKind(spec, where, out samples); break;
                default: result = new SensorSpec(); break;
            }
            result.Name = name;
            result.Type = type;
            result.RateHz = rate;
            result.Mount = mount;
            return result;
        }

        /// <summary>count, if one sensor may cast that many rays or pixels per render.</summary>
        internal static long Samples(long count, string where)
        {
            if (count > WireRead.MaxSamples)
                throw new ProtocolException(where + ": casts " + count + " rays or pixels per render, at most " + WireRead.MaxSamples);
            return count;
        }
    }

    /// <summary>What every LiDAR shares: the REP-117 range model's settings.</summary>
    public abstract class LidarSpec : SensorSpec
    {
        public double RangeMin, RangeMax, NoiseStd, Dropout;

        protected void ReadRanges(Dictionary<string, object> spec, string where)
        {
            RangeMin = WireRead.Number(spec, "range_min", where, 0.0, WireRead.MaxCoordinate);
            RangeMax = WireRead.Number(spec, "range_max", where, 0.0, WireRead.MaxCoordinate, openLow: true);
            NoiseStd = WireRead.Number(spec, "noise_std", where, 0.0, WireRead.MaxCoordinate, 0.0);
            Dropout = WireRead.Number(spec, "dropout", where, 0.0, 1.0, 0.0);
        }
    }

    /// <summary>A planar scanner: beams counter-clockwise from AngleMin.</summary>
    public sealed class Lidar2DSpec : LidarSpec
    {
        public const string Kind = "lidar2d";
        public int Beams;
        public double AngleMin, AngleIncrement;

        internal static Lidar2DSpec ReadKind(Dictionary<string, object> spec, string where, out long samples)
        {
            var lidar = new Lidar2DSpec();
            lidar.ReadRanges(spec, where);
            lidar.AngleMin = WireRead.Number(spec, "angle_min", where, -WireRead.MaxCoordinate, WireRead.MaxCoordinate);
            lidar.AngleIncrement = WireRead.Number(spec, "angle_increment", where, -WireRead.MaxCoordinate, WireRead.MaxCoordinate);
            lidar.Beams = (int)WireRead.Integer(spec, "beams", where, 1, WireRead.MaxBeams);
            samples = lidar.Beams;
            return lidar;
        }
    }

    /// <summary>A spinning LiDAR: one elevation per channel, columns at AzimuthStart + j *
    /// AzimuthIncrement, one revolution per 1 / RateHz; Labels: also send each return's class.</summary>
    public sealed class Lidar3DSpec : LidarSpec
    {
        public const string Kind = "lidar3d";
        public int Channels, Columns;
        public double AzimuthStart, AzimuthIncrement;
        public double[] Elevations;
        public bool Labels;

        internal static Lidar3DSpec ReadKind(Dictionary<string, object> spec, string where, out long samples)
        {
            var lidar = new Lidar3DSpec();
            lidar.ReadRanges(spec, where);
            lidar.Channels = (int)WireRead.Integer(spec, "channels", where, 1, WireRead.MaxSamples);
            lidar.Columns = (int)WireRead.Integer(spec, "columns", where, 1, WireRead.MaxSamples);
            samples = Samples((long)lidar.Channels * lidar.Columns, where);
            lidar.AzimuthStart = WireRead.Number(spec, "azimuth_start", where, -WireRead.MaxCoordinate, WireRead.MaxCoordinate);
            lidar.AzimuthIncrement = WireRead.Number(spec, "azimuth_increment", where, -WireRead.MaxCoordinate, WireRead.MaxCoordinate);
            lidar.Elevations = WireRead.Numbers(spec, "elevations", lidar.Channels, where, -Math.PI, Math.PI);
            lidar.Labels = WireRead.Flag(spec, "labels", where, false);
            return lidar;
        }
    }

    /// <summary>A pinhole camera: horizontal Fov across Width, square pixels, the principal
    /// point at the image centre; Outputs in the order asked, each once.</summary>
    public sealed class CameraSpec : SensorSpec
    {
        public const string Kind = "camera";
        public const string Rgb = "rgb", Depth = "depth", Semantic = "semantic";
        static readonly string[] Known = { Depth, Rgb, Semantic };  // sorted, as wire.py lists them

        public int Width, Height;
        public double Fov, Near, Far, NoiseStd, DepthNoiseStd;
        public List<string> Outputs = new List<string>();

        public bool Wants(string output) { return Outputs.Contains(output); }

        internal static CameraSpec ReadKind(Dictionary<string, object> spec, string where, out long samples)
        {
            var camera = new CameraSpec();
            camera.Width = (int)WireRead.Integer(spec, "width", where, 1, WireRead.MaxCameraSide);
            camera.Height = (int)WireRead.Integer(spec, "height", where, 1, WireRead.MaxCameraSide);
            camera.Fov = WireRead.Number(spec, "fov", where, 0.0, Math.PI, openLow: true, openHigh: true);
            camera.Near = WireRead.Number(spec, "near", where, 0.0, WireRead.MaxCoordinate, openLow: true);
            camera.Far = WireRead.Number(spec, "far", where, camera.Near, WireRead.MaxCoordinate, openLow: true);
            camera.NoiseStd = WireRead.Number(spec, "noise_std", where, 0.0, 255.0, 0.0);
            camera.DepthNoiseStd = WireRead.Number(spec, "depth_noise_std", where, 0.0, WireRead.MaxCoordinate, 0.0);
            object outputs;
            if (!spec.TryGetValue("outputs", out outputs)) outputs = new List<object> { Rgb };
            var list = outputs as List<object>;
            if (list == null || list.Count == 0)
                throw BadOutputs(where);
            foreach (var output in list)
            {
                var name = output as string;
                if (name == null || Array.IndexOf(Known, name) < 0) throw BadOutputs(where);
                if (!camera.Outputs.Contains(name)) camera.Outputs.Add(name);
            }
            samples = Samples((long)camera.Width * camera.Height, where);
            return camera;
        }

        static ProtocolException BadOutputs(string where)
        {
            return new ProtocolException(where + ": outputs must be a non-empty list of ['depth', 'rgb', 'semantic']");
        }
    }

    /// <summary>The box a car occupies [m]: length and width centred on base_link, from the
    /// pose's z up to Height.</summary>
    public struct Footprint
    {
        public double Length, Width, Height;
    }

    /// <summary>One car of InitialSettings: its id, its box (null: no other sensor sees it)
    /// and its sensors.</summary>
    public sealed class CarSettings
    {
        public string Id;
        public Footprint? Footprint;
        public List<SensorSpec> Sensors = new List<SensorSpec>();

        /// <summary>The car, checked; samples: the rays and pixels its sensors cast per render.</summary>
        internal static CarSettings Read(Dictionary<string, object> car, out long samples)
        {
            object id;
            car.TryGetValue("id", out id);
            var where = "car " + WireRead.Show(id);
            var read = new CarSettings { Id = WireRead.Text(car, "id", where) };
            object footprint;
            if (car.TryGetValue("footprint", out footprint) && footprint != null)
            {
                var size = WireRead.Numbers(car, "footprint", 3, where, 0.0, WireRead.MaxFootprint, openLow: true);
                read.Footprint = new Footprint { Length = size[0], Width = size[1], Height = size[2] };
            }
            samples = 0;
            var names = new HashSet<string>();
            foreach (var entry in WireRead.Objects(car, "sensors", where, WireRead.MaxSensorsPerCar))
            {
                long cast;
                var sensor = SensorSpec.Read(entry, where, out cast);
                if (!names.Add(sensor.Name))  // their frames would share a name
                    throw new ProtocolException(where + ": two sensors are named " + WireRead.Show(sensor.Name));
                samples += cast;
                read.Sensors.Add(sensor);
            }
            return read;
        }
    }

    /// <summary>The InitialSettings request (messages.InitialSettings), every value checked
    /// in the reference's order, so the first fault reported is the same.</summary>
    public sealed class InitialSettingsMessage
    {
        public string WorldFrame = "";
        public long FramePeriodNs;
        public ulong Seed;
        public bool CarsVisible = true;
        public List<CarSettings> Cars = new List<CarSettings>();
        public TrackMesh Track;

        public static InitialSettingsMessage Read(ProtocolMessage message)
        {
            var header = message.Header;
            var settings = new InitialSettingsMessage();
            var ids = new HashSet<string>();
            long samples = 0;
            foreach (var entry in WireRead.Objects(header, "cars", "header", WireRead.MaxCars))
            {
                long cast;
                var car = CarSettings.Read(entry, out cast);
                if (!ids.Add(car.Id))  // poses and sensors are looked up by id
                    throw new ProtocolException("header: two cars have the id " + WireRead.Show(car.Id));
                samples += cast;
                settings.Cars.Add(car);
            }
            if (samples > WireRead.MaxTotalSamples)
                throw new ProtocolException("the sensors cast " + samples + " rays and pixels in all, at most " + WireRead.MaxTotalSamples);
            settings.FramePeriodNs = WireRead.Integer(header, "frame_period_ns", "header", 0, WireRead.MaxFramePeriodNs, 0);
            settings.Seed = WireRead.Unsigned(header, "seed", "header", 0);
            settings.CarsVisible = WireRead.Flag(header, "cars_visible", "header", true);
            settings.WorldFrame = WireRead.Text(header, "world_frame", "header", "");
            settings.Track = TrackRequest.Read(message);
            return settings;
        }
    }

    /// <summary>The track of a Track or InitialSettings message (messages.TrackRequest):
    /// float vertices, finite and within 10^6 m; integer triangles whose every index names
    /// an existing vertex (a signed dtype can carry negative ones); integer labels 0..255,
    /// all barrier when absent. Nothing else may reach a renderer's buffers.</summary>
    public static class TrackRequest
    {
        public const string Vertices = "track_vertices", Triangles = "track_triangles", Labels = "track_labels";

        public static TrackMesh Read(ProtocolMessage message)
        {
            var name = TrackName(message.Header);
            var vertices = FrameOf(message, Vertices);
            var triangles = FrameOf(message, Triangles);
            var labels = FrameOf(message, Labels);
            if (vertices == null || triangles == null)
                throw new ProtocolException(message.Topic + " needs the frames " + Vertices + " and " + Triangles);
            if (vertices.Shape.Length != 2 || vertices.Shape[1] != 3 || triangles.Shape.Length != 2 || triangles.Shape[1] != 3)
                throw new ProtocolException(Vertices + " and " + Triangles + " must both have shape (n, 3)");
            if (!FrameValues.IsFloat(vertices) || !FrameValues.IsInteger(triangles))
                throw new ProtocolException(Vertices + " must be float32 or float64 and " + Triangles +
                                            " an integer dtype, got " + vertices.Dtype + " and " + triangles.Dtype);
            var points = FrameValues.Floats(vertices);
            foreach (var p in points)
                if (float.IsNaN(p) || float.IsInfinity(p) || Math.Abs(p) > WireRead.MaxCoordinate)
                    throw new ProtocolException(Vertices + " must be finite numbers within +-1e+06 m");
            var vertexCount = vertices.Shape[0];
            var triangleCount = triangles.Shape[0];
            var indices = FrameValues.Integers(triangles);
            var corners = new uint[indices.Length];
            for (var i = 0; i < indices.Length; i++)
            {
                if (indices[i] < 0 || indices[i] >= vertexCount)
                    throw new ProtocolException(Triangles + " index a vertex that does not exist (indices must be in [0, " + vertexCount + "))");
                corners[i] = (uint)indices[i];
            }
            return new TrackMesh { Name = name, Vertices = points, Triangles = corners, Labels = ReadLabels(labels, triangleCount) };
        }

        static string TrackName(Dictionary<string, object> header)
        {
            object value;
            if (!header.TryGetValue("track", out value)) return "";
            var track = value as Dictionary<string, object>;
            object name = "";
            if (track == null || (track.TryGetValue("name", out name) && !(name is string)))
                throw new ProtocolException("header key \"track\" must be an object {\"name\": string}");
            return (string)name;
        }

        static byte[] ReadLabels(BinaryFrame labels, int triangleCount)
        {
            var classes = new byte[triangleCount];
            if (labels == null)
            {
                for (var i = 0; i < triangleCount; i++) classes[i] = Arsim.Core.Labels.Barrier;
                return classes;
            }
            var fits = labels.Shape.Length == 1 && labels.Shape[0] == triangleCount && FrameValues.IsInteger(labels);
            var values = fits ? FrameValues.Integers(labels) : new long[0];
            for (var i = 0; i < values.Length && fits; i++)
            {
                fits = values[i] >= 0 && values[i] <= 255;
                classes[i] = (byte)values[i];
            }
            if (!fits)
                throw new ProtocolException(Labels + " must be one integer label 0..255 per triangle (" + triangleCount + ")");
            return classes;
        }

        static BinaryFrame FrameOf(ProtocolMessage message, string name)
        {
            BinaryFrame frame;
            return message.Frames.TryGetValue(name, out frame) ? frame : null;
        }
    }

    /// <summary>A binary frame's values by dtype, little-endian as the protocol sends them:
    /// the track's checks need signed indices kept negative and float64 vertices narrowed as
    /// the embedded backend narrows them.</summary>
    static class FrameValues
    {
        public static bool IsFloat(BinaryFrame frame) { return frame.Dtype == "float32" || frame.Dtype == "float64"; }

        public static bool IsInteger(BinaryFrame frame)
        {
            switch (frame.Dtype)
            {
                case "uint8": case "int8": case "uint16": case "int16": case "uint32": case "int32": return true;
                default: return false;
            }
        }

        public static float[] Floats(BinaryFrame frame)
        {
            var data = frame.Data;
            if (frame.Dtype == "float32")
            {
                var values = new float[data.Length / 4];
                Buffer.BlockCopy(data, 0, values, 0, 4 * values.Length);
                return values;
            }
            var narrowed = new float[data.Length / 8];
            for (var i = 0; i < narrowed.Length; i++) narrowed[i] = (float)BitConverter.ToDouble(data, 8 * i);
            return narrowed;
        }

        public static long[] Integers(BinaryFrame frame)
        {
            var data = frame.Data;
            var size = ItemSize(frame.Dtype);
            var values = new long[data.Length / size];
            for (var i = 0; i < values.Length; i++)
            {
                switch (frame.Dtype)
                {
                    case "uint8": values[i] = data[i]; break;
                    case "int8": values[i] = (sbyte)data[i]; break;
                    case "uint16": values[i] = BitConverter.ToUInt16(data, 2 * i); break;
                    case "int16": values[i] = BitConverter.ToInt16(data, 2 * i); break;
                    case "uint32": values[i] = BitConverter.ToUInt32(data, 4 * i); break;
                    default: values[i] = BitConverter.ToInt32(data, 4 * i); break;
                }
            }
            return values;
        }

        static int ItemSize(string dtype)
        {
            switch (dtype)
            {
                case "uint8": case "int8": return 1;
                case "uint16": case "int16": return 2;
                default: return 4;
            }
        }
    }

    /// <summary>One car's base_link in the world frame at the Update's time.</summary>
    public struct CarPose
    {
        public string Id;
        public Pose6 Pose;
    }

    /// <summary>A (car, sensor) pair due at an Update.</summary>
    public struct RenderRequest : IEquatable<RenderRequest>
    {
        public string Car, Sensor;

        public RenderRequest(string car, string sensor)
        {
            Car = car;
            Sensor = sensor;
        }

        public bool Equals(RenderRequest other) { return Car == other.Car && Sensor == other.Sensor; }

        public override bool Equals(object other) { return other is RenderRequest && Equals((RenderRequest)other); }

        public override int GetHashCode()
        {
            return ((Car ?? "").GetHashCode() * 397) ^ (Sensor ?? "").GetHashCode();
        }
    }

    /// <summary>One Update request (messages.UpdateRequest): every car's pose, each id once
    /// (a repeated id: the last pose), and the (car, sensor) pairs due, each once, in order.</summary>
    public sealed class UpdateRequest
    {
        public List<CarPose> Cars = new List<CarPose>();
        public List<RenderRequest> Render = new List<RenderRequest>();

        public static UpdateRequest Read(ProtocolMessage message)
        {
            var request = new UpdateRequest();
            var index = new Dictionary<string, int>();
            foreach (var car in WireRead.Objects(message.Header, "cars", "header", WireRead.MaxCars))
            {
                var id = WireRead.Text(car, "id", "car");
                var pose = Poses.FromArray(WireRead.Numbers(car, "pose", 6, "car " + WireRead.Show(id),
                                                            -WireRead.MaxCoordinate, WireRead.MaxCoordinate));
                int at;
                if (index.TryGetValue(id, out at)) request.Cars[at] = new CarPose { Id = id, Pose = pose };
                else
                {
                    index[id] = request.Cars.Count;
                    request.Cars.Add(new CarPose { Id = id, Pose = pose });
                }
            }
            var seen = new HashSet<RenderRequest>();
            foreach (var entry in WireRead.Objects(message.Header, "render", "header", WireRead.MaxCars * WireRead.MaxSensorsPerCar))
            {
                var key = new RenderRequest(WireRead.Text(entry, "car", "render request"), WireRead.Text(entry, "sensor", "render request"));
                if (seen.Add(key)) request.Render.Add(key);
            }
            return request;
        }

        /// <summary>The poses by car id, as a timeline frame holds them.</summary>
        public Dictionary<string, Pose6> PosesById()
        {
            var poses = new Dictionary<string, Pose6>();
            foreach (var car in Cars) poses[car.Id] = car.Pose;
            return poses;
        }
    }

    /// <summary>A sensor a backend renders, as Ready lists it.</summary>
    public struct ListedSensor
    {
        public string Car, Sensor, Type;
    }

    /// <summary>The reply to InitialSettings and Track (messages.Ready): the backend's name,
    /// the track's, the sensors it renders, and its capabilities: the camera lens models
    /// (a camera's "lens") and calibration targets (InitialSettings' "calibration_target")
    /// it renders. This backend renders neither, and says so, so the bridge refuses a
    /// scenario that needs them instead of publishing images without them.</summary>
    public sealed class ReadyMessage
    {
        public const int MaxCapabilities = 32;
        public string Backend = "", Track = "";
        public List<ListedSensor> Sensors = new List<ListedSensor>();
        public List<string> Lenses = new List<string>();
        public List<string> Targets = new List<string>();

        /// <summary>The header keys of the reply, for Protocol.Encode.</summary>
        public Dictionary<string, object> ToBody()
        {
            var listed = new List<object>();
            foreach (var sensor in Sensors)
                listed.Add(new Dictionary<string, object> { { "car", sensor.Car }, { "sensor", sensor.Sensor }, { "type", sensor.Type } });
            var capabilities = new Dictionary<string, object>
            {
                { "lenses", new List<object>(Lenses.ToArray()) }, { "targets", new List<object>(Targets.ToArray()) },
            };
            return new Dictionary<string, object> { { "backend", Backend }, { "track", Track }, { "sensors", listed }, { "capabilities", capabilities } };
        }

        public static ReadyMessage Read(ProtocolMessage message)
        {
            var header = message.Header;
            var listed = WireRead.Objects(header, "sensors", "Ready", WireRead.MaxCars * WireRead.MaxSensorsPerCar);
            var ready = new ReadyMessage { Backend = WireRead.Text(header, "backend", "Ready"), Track = WireRead.Text(header, "track", "Ready") };
            foreach (var entry in listed)
            {
                ready.Sensors.Add(new ListedSensor
                {
                    Car = WireRead.Text(entry, "car", "Ready sensor"),
                    Sensor = WireRead.Text(entry, "sensor", "Ready sensor"),
                    Type = WireRead.Text(entry, "type", "Ready sensor"),
                });
            }
            object capabilities;
            if (header.TryGetValue("capabilities", out capabilities) && capabilities != null)
            {
                var map = capabilities as IDictionary<string, object>;
                if (map == null) throw new ProtocolException("Ready: key 'capabilities' must be an object");
                ready.Lenses = Names(map, "lenses");
                ready.Targets = Names(map, "targets");
            }
            return ready;
        }

        static List<string> Names(IDictionary<string, object> capabilities, string key)
        {
            var names = new List<string>();
            object value;
            if (!capabilities.TryGetValue(key, out value)) return names;
            var list = value as List<object>;
            if (list == null || list.Count > MaxCapabilities)
                throw new ProtocolException("Ready: capabilities key '" + key + "' must be a list of at most " + MaxCapabilities + " names");
            foreach (var name in list)
            {
                var text = name as string;
                if (text == null) throw new ProtocolException("Ready: capabilities key '" + key + "' must hold names");
                names.Add(text);
            }
            return names;
        }
    }
}
