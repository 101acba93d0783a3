using System;
using System.Collections.Generic;
using System.Linq;

namespace Arsim.Core
{
    /// <summary>A sensor description of InitialSettings (docs/protocol.md), checked against
    /// the limits. Rendered kinds get their own class; the kinds a car's republisher computes
    /// (imu, gnss, ...) are kept as plain SensorSpecs that no backend renders.</summary>
    public class SensorSpec
    {
        public static readonly string[] ComputedKinds = { "gnss", "ground_truth", "imu", "objects", "wheel_odometry" };
        public string Name, Type;
        public double RateHz;
        public Pose6 Mount;

        public bool Rendered { get { return Array.IndexOf(ComputedKinds, Type) < 0; } }

        /// <summary>The sensor, checked; samples: rays or pixels it casts per render.</summary>
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
                case "camera": result = CameraSpec.ReadKind(spec, where, out samples); break;
                case "lidar2d": result = Lidar2DSpec.ReadKind(spec, where, out samples); break;
                case "lidar3d": result = Lidar3DSpec.ReadKind(spec, where, out samples); break;
                default:
                    throw new ProtocolException("sensor type '" + type + "' is not supported by this backend; it renders ['camera', 'lidar2d', 'lidar3d']");
            }
            result.Name = name;
            result.Type = type;
            result.RateHz = rate;
            result.Mount = mount;
            return result;
        }

        internal static long Samples(long count, string where)
        {
            if (count > WireRead.MaxSamples)
                throw new ProtocolException(where + ": casts " + count + " rays or pixels per render, at most " + WireRead.MaxSamples);
            return count;
        }
    }

    /// <summary>What every LiDAR shares: the REP-117 range model.</summary>
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

    public sealed class Lidar2DSpec : LidarSpec
    {
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

    public sealed class Lidar3DSpec : LidarSpec
    {
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
            object labels;
            lidar.Labels = spec.TryGetValue("labels", out labels) && labels is bool && (bool)labels;
            return lidar;
        }
    }

    public sealed class CameraSpec : SensorSpec
    {
        public static readonly string[] Outputs = { "depth", "rgb", "semantic" };
        public int Width, Height;
        public double Fov, Near, Far, NoiseStd, DepthNoiseStd;
        public bool Rgb, Depth, Semantic;

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
            if (!spec.TryGetValue("outputs", out outputs)) outputs = new List<object> { "rgb" };
            var list = outputs as List<object>;
            if (list == null || list.Count == 0 || list.Any(o => !(o is string) || Array.IndexOf(Outputs, o) < 0))
                throw new ProtocolException(where + ": outputs must be a non-empty list of ['depth', 'rgb', 'semantic']");
            camera.Rgb = list.Contains("rgb");
            camera.Depth = list.Contains("depth");
            camera.Semantic = list.Contains("semantic");
            samples = Samples((long)camera.Width * camera.Height, where);
            return camera;
        }
    }

    /// <summary>One car of InitialSettings: its id, its box (null: invisible) and sensors.</summary>
    public sealed class CarSettings
    {
        public string Id;
        public double[] Footprint;  // length, width, height [m]
        public List<SensorSpec> Sensors = new List<SensorSpec>();
    }

    /// <summary>The InitialSettings request, every value checked.</summary>
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
            long samples = 0;
            foreach (var car in WireRead.Objects(header, "cars", "header", WireRead.MaxCars))
            {
                object id;
                car.TryGetValue("id", out id);
                var where = "car " + WireRead.Show(id);
                var read = new CarSettings { Id = WireRead.Text(car, "id", where) };
                object footprint;
                if (car.TryGetValue("footprint", out footprint) && footprint != null)
                    read.Footprint = WireRead.Numbers(car, "footprint", 3, where, 0.0, 1e3, openLow: true);
                var names = new HashSet<string>();
                foreach (var spec in WireRead.Objects(car, "sensors", where, WireRead.MaxSensorsPerCar))
                {
                    long cast;
                    var sensor = SensorSpec.Read(spec, where, out cast);
                    if (!names.Add(sensor.Name))
                        throw new ProtocolException(where + ": two sensors are named " + WireRead.Show(sensor.Name));
                    samples += cast;
                    read.Sensors.Add(sensor);
                }
                settings.Cars.Add(read);
            }
            if (samples > WireRead.MaxTotalSamples)
                throw new ProtocolException("the sensors cast " + samples + " rays and pixels in all, at most " + WireRead.MaxTotalSamples);
            settings.FramePeriodNs = WireRead.Integer(header, "frame_period_ns", "header", 0, WireRead.MaxFramePeriodNs, 0);
            settings.Seed = WireRead.Unsigned(header, "seed", "header", 0);
            settings.CarsVisible = WireRead.Flag(header, "cars_visible", "header", true);
            settings.WorldFrame = WireRead.Text(header, "world_frame", "header", "");
            settings.Track = TrackReader.Read(message);
            return settings;
        }
    }

    /// <summary>The track of a Track or InitialSettings message: finite vertices, integer
    /// triangles that index existing vertices, labels 0..255 (default barrier).</summary>
    public static class TrackReader
    {
        public const string Vertices = "track_vertices", Triangles = "track_triangles", Labels = "track_labels";

        public static TrackMesh Read(ProtocolMessage message)
        {
            object trackValue;
            if (!message.Header.TryGetValue("track", out trackValue)) trackValue = new Dictionary<string, object>();
            var track = trackValue as Dictionary<string, object>;
            object name = "";
            if (track == null || (track.TryGetValue("name", out name) && !(name is string)))
                throw new ProtocolException("header key \"track\" must be an object {\"name\": string}");
            var vertices = message.Frame(Vertices);
            var triangles = message.Frame(Triangles);
            var labels = message.Frame(Labels);
            if (vertices == null || triangles == null)
                throw new ProtocolException(message.Topic + " needs the frames " + Vertices + " and " + Triangles);
            if (vertices.Shape.Length != 2 || vertices.Shape[1] != 3 || triangles.Shape.Length != 2 || triangles.Shape[1] != 3)
                throw new ProtocolException(Vertices + " and " + Triangles + " must both have shape (n, 3)");
            if (vertices.IsInteger || !triangles.IsInteger)
                throw new ProtocolException(Vertices + " must be float32 or float64 and " + Triangles +
                                            " an integer dtype, got " + vertices.Dtype + " and " + triangles.Dtype);
            var points = vertices.AsFloat32();
            foreach (var p in points)
                if (float.IsNaN(p) || float.IsInfinity(p) || Math.Abs(p) > WireRead.MaxCoordinate)
                    throw new ProtocolException(Vertices + " must be finite numbers within +-1e+06 m");
            var count = vertices.Shape[0];
            var indices = triangles.AsInt64();
            var result = new uint[indices.Length];
            for (var i = 0; i < indices.Length; i++)
            {
                if (indices[i] < 0 || indices[i] >= count)
                    throw new ProtocolException(Triangles + " index a vertex that does not exist (indices must be in [0, " + count + "))");
                result[i] = (uint)indices[i];
            }
            var triangleCount = triangles.Shape[0];
            var classes = new byte[triangleCount];
            if (labels == null)
            {
                for (var i = 0; i < triangleCount; i++) classes[i] = Arsim.Core.Labels.Barrier;
            }
            else
            {
                if (labels.Shape.Length != 1 || labels.Shape[0] != triangleCount || !labels.IsInteger)
                    throw new ProtocolException(Labels + " must be one integer label 0..255 per triangle (" + triangleCount + ")");
                var values = labels.AsInt64();
                for (var i = 0; i < values.Length; i++)
                {
                    if (values[i] < 0 || values[i] > 255)
                        throw new ProtocolException(Labels + " must be one integer label 0..255 per triangle (" + triangleCount + ")");
                    classes[i] = (byte)values[i];
                }
            }
            return new TrackMesh { Name = (string)name ?? "", Vertices = points, Triangles = result, Labels = classes };
        }
    }

    /// <summary>One Update request: every car's pose and the (car, sensor) pairs due, each
    /// once, in order.</summary>
    public sealed class UpdateRequest
    {
        public Dictionary<string, Pose6> Poses = new Dictionary<string, Pose6>();
        public List<KeyValuePair<string, string>> Render = new List<KeyValuePair<string, string>>();

        public static UpdateRequest Read(ProtocolMessage message)
        {
            var request = new UpdateRequest();
            foreach (var car in WireRead.Objects(message.Header, "cars", "header", WireRead.MaxCars))
            {
                var name = WireRead.Text(car, "id", "car");
                request.Poses[name] = Arsim.Core.Poses.FromArray(WireRead.Numbers(
                    car, "pose", 6, "car " + WireRead.Show(name), -WireRead.MaxCoordinate, WireRead.MaxCoordinate));
            }
            var seen = new HashSet<KeyValuePair<string, string>>();
            foreach (var entry in WireRead.Objects(message.Header, "render", "header", WireRead.MaxCars * WireRead.MaxSensorsPerCar))
            {
                var key = new KeyValuePair<string, string>(WireRead.Text(entry, "car", "render request"),
                                                           WireRead.Text(entry, "sensor", "render request"));
                if (seen.Add(key)) request.Render.Add(key);
            }
            return request;
        }
    }
}
