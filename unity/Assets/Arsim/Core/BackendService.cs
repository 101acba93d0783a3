using System;
using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>The backend's request/reply state machine over a renderer (docs/protocol.md;
    /// backend/server.py's EmbeddedBackend): InitialSettings and Track get Ready, Update gets
    /// the due sensors' frames. Every request gets a reply: one that breaks the protocol or
    /// its limits gets Error with the reason, and so does any other failure, so no request
    /// can stop the server. Not thread-safe: one request at a time, as a REP socket serves.</summary>
    public sealed class BackendService
    {
        public const int MaxErrorChars = 2000;  // an error may quote what a peer sent

        readonly IRenderer renderer;
        SensorSet sensors = new SensorSet();
        bool hasTrack;

        public BackendService(IRenderer renderer)
        {
            if (renderer == null) throw new ArgumentNullException(nameof(renderer));
            this.renderer = renderer;
        }

        /// <summary>The InitialSettings applied last; null before the first.</summary>
        public InitialSettingsMessage Settings { get; private set; }

        /// <summary>The name of the track loaded last ("" before the first).</summary>
        public string TrackName { get; private set; } = "";

        /// <summary>A line for the log: each applied InitialSettings and Track, each refused
        /// request with its reason, each failure with its stack trace.</summary>
        public event Action<string> Log = delegate { };

        /// <summary>The reply to one request's frames; never throws.</summary>
        public List<byte[]> Handle(IList<byte[]> request)
        {
            string topic = "a request";
            long step = 0, time = 0;
            try
            {
                var message = Protocol.Decode(request, Protocol.MaxRequestFrames);
                topic = message.Topic;
                step = message.Step;
                time = message.TimeNs;
                return Dispatch(message);
            }
            catch (ProtocolException error)
            {
                Log("refused " + topic + " of step " + step + ": " + error.Message);
                return Protocol.EncodeError(step, time, Protocol.Clip(error.Message, MaxErrorChars));
            }
            catch (Exception error)  // the last resort: answer, log, serve on
            {
                Log("failed to serve " + topic + " of step " + step + ": " + error);
                var reason = "internal error: the backend failed to serve " + topic + " of step " + step + ": " +
                             error.GetType().Name + ": " + error.Message;
                return Protocol.EncodeError(step, time, Protocol.Clip(reason, MaxErrorChars));
            }
        }

        List<byte[]> Dispatch(ProtocolMessage message)
        {
            switch (message.Topic)
            {
                case Protocol.InitialSettings: return InitialSettings(message);
                case Protocol.Track: return Track(message);
                case Protocol.Update: return Update(message);
                default: throw new ProtocolException("the backend does not accept " + WireRead.Show(message.Topic) + " requests");
            }
        }

        /// <summary>Checks everything and makes the sensors before changing anything, so a
        /// refused InitialSettings leaves the previous one in force.</summary>
        List<byte[]> InitialSettings(ProtocolMessage message)
        {
            var settings = InitialSettingsMessage.Read(message);
            var made = new SensorSet(settings, renderer.Name);
            LoadTrack(settings.Track);
            sensors = made;
            Settings = settings;
            Log("ready: track '" + TrackName + "' (" + settings.Track.Triangles.Length / 3 + " triangles), " +
                settings.Cars.Count + " car(s), " + made.Listing.Count + " rendered sensor(s)");
            return Ready(message);
        }

        List<byte[]> Track(ProtocolMessage message)
        {
            var track = TrackRequest.Read(message);
            LoadTrack(track);
            Log("track '" + TrackName + "' (" + track.Triangles.Length / 3 + " triangles)");
            return Ready(message);
        }

        void LoadTrack(TrackMesh track)
        {
            renderer.SetTrack(track);
            TrackName = track.Name;
            hasTrack = true;
        }

        List<byte[]> Ready(ProtocolMessage message)
        {
            var ready = new ReadyMessage { Backend = renderer.Name, Track = TrackName, Sensors = sensors.Listing };
            return Protocol.Encode(Protocol.Ready, message.Step, message.TimeNs, ready.ToBody(), new BinaryFrame[0]);
        }

        List<byte[]> Update(ProtocolMessage message)
        {
            var request = UpdateRequest.Read(message);
            if (!hasTrack) throw new ProtocolException("Update before InitialSettings");
            var poses = request.PosesById();
            var due = sensors.Due(request.Render, poses);
            sensors.Timeline.Add(message.TimeNs, poses);
            var context = new RenderContext { Renderer = renderer, Timeline = sensors.Timeline, Cars = sensors.Cars, TimeNs = message.TimeNs };
            renderer.SetCars(sensors.Cars.At(poses));
            var frames = new List<BinaryFrame>();
            foreach (var sensor in due) sensor.Render(context, frames);
            return Protocol.Encode(Protocol.Update, message.Step, message.TimeNs, new Dictionary<string, object>(), frames);
        }
    }

    /// <summary>What one InitialSettings sets up: the rendered sensors (each with its own
    /// noise seed) in the order Ready lists them, the computed ones a render request may name
    /// and that are skipped, the cars' boxes, and a timeline long enough for the slowest
    /// spinning LiDAR's revolution.</summary>
    sealed class SensorSet
    {
        readonly Dictionary<RenderRequest, Sensor> rendered = new Dictionary<RenderRequest, Sensor>();
        readonly HashSet<RenderRequest> computed = new HashSet<RenderRequest>();

        public readonly List<ListedSensor> Listing = new List<ListedSensor>();
        public readonly CarBoxes Cars;
        public readonly Timeline Timeline;

        /// <summary>No sensors and no cars: before the first InitialSettings.</summary>
        public SensorSet()
        {
            Cars = new CarBoxes(new CarSettings[0], false);
            Timeline = new Timeline(0);
        }

        public SensorSet(InitialSettingsMessage settings, string backend)
        {
            long keep = 0;
            for (var c = 0; c < settings.Cars.Count; c++)
            {
                var car = settings.Cars[c];
                for (var s = 0; s < car.Sensors.Count; s++)
                {
                    var spec = car.Sensors[s];
                    var key = new RenderRequest(car.Id, spec.Name);
                    if (!spec.Rendered)
                    {
                        computed.Add(key);
                        continue;
                    }
                    var sensor = Sensor.Create(car.Id, spec, SensorSeed(settings.Seed, c, s), settings.FramePeriodNs, backend);
                    rendered[key] = sensor;
                    Listing.Add(new ListedSensor { Car = car.Id, Sensor = spec.Name, Type = spec.Type });
                    var cloud = sensor as Lidar3DSensor;
                    if (cloud != null) keep = Math.Max(keep, cloud.PeriodNs);
                }
            }
            Cars = new CarBoxes(settings.Cars, settings.CarsVisible);
            Timeline = new Timeline(keep + settings.FramePeriodNs);
        }

        /// <summary>Each sensor's own noise seed, as server.py's _sensor_seed, so no two
        /// sensors share a noise sequence (wrapping at 2^64).</summary>
        static ulong SensorSeed(ulong seed, int carIndex, int sensorIndex)
        {
            return unchecked(seed + 1000UL * (ulong)carIndex + (ulong)sensorIndex);
        }

        /// <summary>The sensors to render, in the order requested: computed ones skipped; an
        /// unknown pair, or a car without a pose, refused.</summary>
        public List<Sensor> Due(List<RenderRequest> requests, Dictionary<string, Pose6> poses)
        {
            var due = new List<Sensor>();
            var missing = new SortedSet<string>(StringComparer.Ordinal);
            foreach (var key in requests)
            {
                if (computed.Contains(key)) continue;
                Sensor sensor;
                if (!rendered.TryGetValue(key, out sensor))
                    throw new ProtocolException("render request for unknown car/sensor (" + WireRead.Show(key.Car) + ", " + WireRead.Show(key.Sensor) + ")");
                due.Add(sensor);
                if (!poses.ContainsKey(key.Car)) missing.Add(key.Car);
            }
            if (missing.Count > 0)
            {
                var names = new List<string>();
                foreach (var car in missing) names.Add(WireRead.Show(car));
                throw new ProtocolException("render request for car(s) [" + string.Join(", ", names) + "] without a pose");
            }
            return due;
        }
    }
}
