using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>The boxes other cars' sensors see: every car with a footprint, none when the
    /// scenario hides the cars. The boxes include the observer's own car; RayBatch.ExcludeCar
    /// and CameraView.Car keep a sensor from seeing it.</summary>
    public sealed class CarBoxes
    {
        readonly Dictionary<string, Footprint> footprints = new Dictionary<string, Footprint>();
        readonly bool visible;

        public CarBoxes(IEnumerable<CarSettings> cars, bool visible)
        {
            this.visible = visible;
            foreach (var car in cars)
                if (car.Footprint.HasValue) footprints[car.Id] = car.Footprint.Value;
        }

        /// <summary>The boxes at one frame's poses.</summary>
        public IReadOnlyList<CarBox> At(IReadOnlyDictionary<string, Pose6> poses)
        {
            var boxes = new List<CarBox>();
            if (!visible) return boxes;
            foreach (var pose in poses)
            {
                Footprint size;
                if (footprints.TryGetValue(pose.Key, out size))
                    boxes.Add(new CarBox { Car = pose.Key, Pose = pose.Value, Length = size.Length, Width = size.Width, Height = size.Height });
            }
            return boxes;
        }
    }

    /// <summary>What a sensor renders from at one Update: the renderer (its cars set to the
    /// Update's poses), the cars' recent poses with this Update's last, their boxes, and the
    /// Update's time.</summary>
    public sealed class RenderContext
    {
        public IRenderer Renderer;
        public Timeline Timeline;
        public CarBoxes Cars;
        public long TimeNs;

        /// <summary>The car's pose at this Update.</summary>
        public Pose6 PoseNow(string car) { return Timeline.PosesAt(Timeline.Count - 1)[car]; }
    }

    /// <summary>A rendered sensor of a car: it turns rays or images from the renderer into
    /// the Update reply's frames, named &lt;car&gt;/&lt;sensor&gt; plus a suffix and described
    /// by car, sensor, type, encoding and stamp_ns (backend/outputs.py).</summary>
    public abstract class Sensor
    {
        protected Sensor(string car, SensorSpec spec)
        {
            Car = car;
            Name = spec.Name;
            Type = spec.Type;
        }

        public string Car { get; }
        public string Name { get; }
        public string Type { get; }

        /// <summary>Appends this sensor's frames for the context's Update.</summary>
        public abstract void Render(RenderContext context, List<BinaryFrame> frames);

        /// <summary>The sensor a spec describes, its noise seeded by seed; a kind this side
        /// does not render is refused naming the backend, as the embedded backend does.</summary>
        public static Sensor Create(string car, SensorSpec spec, ulong seed, long framePeriodNs, string backend)
        {
            var scan = spec as Lidar2DSpec;
            if (scan != null) return new Lidar2DSensor(car, scan, seed);
            var cloud = spec as Lidar3DSpec;
            if (cloud != null) return new Lidar3DSensor(car, cloud, seed, framePeriodNs);
            var camera = spec as CameraSpec;
            if (camera != null) return new CameraSensor(car, camera, seed);
            throw new ProtocolException("sensor type " + WireRead.Show(spec.Type) + " is not supported by " + backend +
                                        "; it renders ['camera', 'lidar2d', 'lidar3d']");
        }

        /// <summary>frame, named for this sensor and described as the protocol asks.</summary>
        protected BinaryFrame Describe(BinaryFrame frame, string encoding, long stampNs)
        {
            frame.Meta["car"] = Car;
            frame.Meta["sensor"] = Name;
            frame.Meta["type"] = Type;
            frame.Meta["encoding"] = encoding;
            frame.Meta["stamp_ns"] = stampNs;
            return frame;
        }

        protected string FrameName(string suffix) { return Car + "/" + Name + suffix; }
    }
}
