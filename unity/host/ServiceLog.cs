using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;
using Arsim.Core;

namespace Arsim.Host
{
    /// <summary>The host's log, one line per event: its start, each InitialSettings or Track
    /// it serves (the track, its triangles, the sensors it renders), each Error reply, and at
    /// debug level every request. Lines are read from the replies themselves, so they show
    /// what the bridge was told.</summary>
    public sealed class ServiceLog
    {
        const int ListedSensors = 8;  // a longer list is cut, with a count of the rest
        readonly Action<string> write;
        readonly bool debug;

        public ServiceLog(Action<string> write, bool debug)
        {
            this.write = write;
            this.debug = debug;
        }

        public void Started(string address)
        {
            write("arsim C# host serving protocol v" + Protocol.Version + " at " + address);
        }

        public void Stopped() { write("arsim C# host stopped"); }

        /// <summary>A request served: its frames, the reply's, the current track's triangle
        /// count and the time it took.</summary>
        public void Served(IList<byte[]> request, IList<byte[]> reply, int triangles, TimeSpan took)
        {
            var asked = Topic(request);
            var answered = Topic(reply);
            var ms = took.TotalMilliseconds.ToString("0.###", CultureInfo.InvariantCulture) + " ms";
            if (answered == Protocol.Ready || answered == Protocol.Error)
            {
                var line = Describe(asked, answered, reply, triangles);
                write(debug ? line + " (" + ms + ")" : line);
                return;
            }
            if (!debug) return;
            write(asked + ": " + answered + " reply with " + Math.Max(0, reply.Count - 2) + " frame(s), " + Bytes(reply) + " bytes (" + ms + ")");
        }

        static string Describe(string asked, string answered, IList<byte[]> reply, int triangles)
        {
            ProtocolMessage message;
            try
            {
                message = Protocol.Decode(reply);
            }
            catch (ProtocolException error)
            {
                return asked + ": unreadable " + answered + " reply: " + error.Message;
            }
            if (answered == Protocol.Error)
                return "Error reply to " + asked + " (step " + message.Step + "): " + Text(message.Header, "error");
            var line = new StringBuilder();
            line.Append(asked).Append(": track '").Append(Text(message.Header, "track")).Append("' (")
                .Append(triangles).Append(" triangles)");
            object listed;
            var sensors = message.Header.TryGetValue("sensors", out listed) ? listed as List<object> : null;
            if (asked == Protocol.Track || sensors == null) return line.ToString();
            line.Append(", ").Append(sensors.Count).Append(" rendered sensor(s)");
            for (var i = 0; i < sensors.Count && i < ListedSensors; i++)
            {
                var sensor = sensors[i] as Dictionary<string, object>;
                if (sensor == null) continue;
                line.Append(i == 0 ? ": " : ", ").Append(Text(sensor, "car")).Append('/').Append(Text(sensor, "sensor"))
                    .Append(' ').Append(Text(sensor, "type"));
            }
            if (sensors.Count > ListedSensors) line.Append(" and ").Append(sensors.Count - ListedSensors).Append(" more");
            return line.ToString();
        }

        /// <summary>Frame 0 as text, shortened: what a request or reply says it is.</summary>
        static string Topic(IList<byte[]> frames)
        {
            if (frames == null || frames.Count == 0) return "(empty message)";
            var topic = Encoding.UTF8.GetString(frames[0], 0, Math.Min(frames[0].Length, 40));
            var printable = new StringBuilder(topic.Length);
            foreach (var c in topic) printable.Append(char.IsControl(c) ? '?' : c);
            return printable.Length > 0 ? printable.ToString() : "(no topic)";
        }

        static string Text(Dictionary<string, object> header, string key)
        {
            object value;
            return header.TryGetValue(key, out value) && value != null ? value.ToString() : "?";
        }

        static long Bytes(IList<byte[]> frames)
        {
            long total = 0;
            foreach (var frame in frames) total += frame.LongLength;
            return total;
        }
    }
}
