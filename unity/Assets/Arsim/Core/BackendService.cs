using System;
using System.Collections.Generic;
using System.Linq;

namespace Arsim.Core
{
    /// <summary>The backend's request/reply state machine over a renderer (docs/protocol.md):
    /// InitialSettings and Track get Ready, Update gets the due sensors' frames. Every
    /// request gets a reply: one that breaks the protocol gets Error with the reason, and so
    /// does any other failure, so no request can stop the server.</summary>
    public sealed class BackendService
    {
        readonly IRenderer renderer;
        readonly Dictionary<KeyValuePair<string, string>, Sensor> sensors = new Dictionary<KeyValuePair<string, string>, Sensor>();
        readonly HashSet<KeyValuePair<string, string>> computed = new HashSet<KeyValuePair<string, string>>();
        readonly List<KeyValuePair<string, string>> listing = new List<KeyValuePair<string, string>>();
        readonly Dictionary<string, double[]> footprints = new Dictionary<string, double[]>();
        Timeline timeline = new Timeline();
        bool carsVisible = true;

        public BackendService(IRenderer renderer) { this.renderer = renderer; }

        public InitialSettingsMessage Settings { get; private set; }
        public string TrackName { get; private set; }

        /// <summary>A message for the log, once per handled InitialSettings or Track.</summary>
        public event Action<string> Log = delegate { };

        public List<byte[]> Handle(IList<byte[]> request, int maxFrames = Protocol.MaxRequestFrames)
        {
            long step = 0, time = 0;
            try
            {
                var message = Protocol.Decode(request, maxFrames);
                step = message.Step;
                time = message.TimeNs;
                switch (message.Topic)
                {
                    case Protocol.InitialSettings: return InitialSettings(message);
                    case Protocol.Track: return Track(message);
                    case Protocol.Update: return Update(message);
                    default: throw new ProtocolException("the backend does not accept '" + message.Topic + "' requests");
                }
            }
            catch (ProtocolException error)
            {
                return Protocol.EncodeError(step, time, Protocol.Clip(error.Message, 2000));
            }
            catch (Exception error)
            {
                Log("internal error: " + error);
                return Protocol.EncodeError(step, time, Protocol.Clip("internal error: " + error.GetType().Name + ": " + error.Message, 2000));
            }
        }

        List<byte[]> InitialSettings(ProtocolMessage message)
        {
            var settings = InitialSettingsMessage.Read(message);
            var made = new Dictionary<KeyValuePair<string, string>, Sensor>();
            var skipped = new HashSet<KeyValuePair<string, string>>();
            long keep = 0;
            for (var c = 0; c < settings.Cars.Count; c++)
            {
                var car = settings.Cars[c];
                for (var s = 0; s < car.Sensors.Count; s++)
                {
                    var spec = car.Sensors[s];
                    var key = new KeyValuePair<string, string>(car.Id, spec.Name);
                    if (!spec.Rendered) { skipped.Add(key); continue; }
                    // Each sensor its own noise, as the embedded backend seeds them.
                    var sensor = Sensor.Make(car.Id, spec, settings.Seed + 1000UL * (ulong)c + (ulong)s, settings.FramePeriodNs);
                    made[key] = sensor;
                    var lidar = sensor as Lidar3DSensor;
                    if (lidar != null) keep = Math.Max(keep, lidar.PeriodNs);
                }
            }
            renderer.SetTrack(settings.Track);
            Settings = settings;
            TrackName = settings.Track.Name;
            sensors.Clear();
            listing.Clear();
            foreach (var pair in made) { sensors[pair.Key] = pair.Value; listing.Add(pair.Key); }
            computed.Clear();
            computed.UnionWith(skipped);
            footprints.Clear();
            foreach (var car in settings.Cars)
                if (car.Footprint != null) footprints[car.Id] = car.Footprint;
            carsVisible = settings.CarsVisible;
            timeline = new Timeline(keep + settings.FramePeriodNs);
            Log("ready: track '" + TrackName + "' (" + settings.Track.Triangles.Length / 3 + " triangles), " +
                settings.Cars.Count + " car(s), " + sensors.Count + " rendered sensor(s)");
            return Ready(message);
        }

        List<byte[]> Track(ProtocolMessage message)
        {
            var track = TrackReader.Read(message);
            renderer.SetTrack(track);
            TrackName = track.Name;
            timeline.Clear();
            Log("track '" + TrackName + "' (" + track.Triangles.Length / 3 + " triangles)");
            return Ready(message);
        }

        List<byte[]> Ready(ProtocolMessage message)
        {
            var listed = listing.Select(key => (object)new Dictionary<string, object>
                { { "car", key.Key }, { "sensor", key.Value }, { "type", sensors[key].Type } }).ToList();
            return Protocol.Encode(Protocol.Ready, message.Step, message.TimeNs, new Dictionary<string, object>
                { { "backend", renderer.Name }, { "track", TrackName ?? "" }, { "sensors", listed } }, null);
        }

        List<byte[]> Update(ProtocolMessage message)
        {
            if (Settings == null) throw new ProtocolException("Update before InitialSettings");
            var request = UpdateRequest.Read(message);
            var chosen = new List<Sensor>();
            foreach (var key in request.Render)
            {
                if (computed.Contains(key)) continue;
                Sensor sensor;
                if (!sensors.TryGetValue(key, out sensor))
                    throw new ProtocolException("render request for unknown car/sensor ('" + key.Key + "', '" + key.Value + "')");
                if (!request.Poses.ContainsKey(key.Key))
                    throw new ProtocolException("render request for car(s) ['" + key.Key + "'] without a pose");
                chosen.Add(sensor);
            }
            timeline.Add(message.TimeNs, request.Poses);
            var context = new RenderContext
            {
                Renderer = renderer, Timeline = timeline, TimeNs = message.TimeNs, CarsAtFrame = CarsAt,
            };
            renderer.SetCars(CarsAt(timeline.Count - 1));
            var frames = new List<BinaryFrame>();
            foreach (var sensor in chosen) sensor.Render(context, frames);
            return Protocol.Encode(Protocol.Update, message.Step, message.TimeNs, null, frames);
        }

        /// <summary>The visible cars' boxes at a frame of the timeline.</summary>
        IReadOnlyList<CarBox> CarsAt(int frame)
        {
            var boxes = new List<CarBox>();
            if (!carsVisible || frame < 0) return boxes;
            foreach (var pose in timeline.PosesAt(frame))
            {
                double[] size;
                if (footprints.TryGetValue(pose.Key, out size))
                    boxes.Add(new CarBox { Car = pose.Key, Pose = pose.Value, Length = size[0], Width = size[1], Height = size[2] });
            }
            return boxes;
        }
    }
}
