using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;

namespace Arsim.Core
{
    /// <summary>Protocol v1 framing (docs/protocol.md): frame 0 the topic, frame 1 a JSON
    /// header, then the binary frames it describes. Decode is the one gate every request
    /// passes, with the checks of arsim_core/protocol.py, so nothing malformed reaches a
    /// renderer.</summary>
    public static class Protocol
    {
        public const int Version = 1;
        public const string InitialSettings = "InitialSettings", Ready = "Ready", Track = "Track",
            Update = "Update", Error = "Error";
        public const int MaxHeaderDepth = 32, MaxDimensions = 8, MaxRequestFrames = 64;
        static readonly string[] Topics = { Error, InitialSettings, Ready, Track, Update };  // sorted, as Python lists them

        public static ProtocolMessage Decode(IList<byte[]> frames, int maxFrames = int.MaxValue)
        {
            if (frames.Count < 2)
                throw new ProtocolException("a protocol message has at least 2 frames (topic, header), got " + frames.Count);
            var topic = Encoding.UTF8.GetString(frames[0]);
            if (Array.IndexOf(Topics, topic) < 0)
                throw new ProtocolException("unknown protocol topic " + Quote(topic) + "; expected one of ['" + string.Join("', '", Topics) + "']");
            if (frames.Count > maxFrames)
                throw new ProtocolException(topic + ": a request carries at most " + maxFrames + " frames, got " + frames.Count);
            var header = Json.Parse(frames[1], MaxHeaderDepth) as Dictionary<string, object>;
            if (header == null) throw new ProtocolException(topic + ": header must be a JSON object");
            if (topic != Error) CheckVersion(header, topic);
            var message = new ProtocolMessage { Topic = topic, Header = header };
            message.Step = Int64Key(header, "step", topic);
            message.TimeNs = Int64Key(header, "time_ns", topic);
            object listed;
            var meta = header.TryGetValue("frames", out listed) ? listed as List<object> : new List<object>();
            if (meta == null || meta.Count != frames.Count - 2)
                throw new ProtocolException(topic + ": header lists " + (meta == null ? "no" : meta.Count.ToString()) +
                                            " binary frames but the message carries " + (frames.Count - 2));
            for (var i = 0; i < meta.Count; i++)
            {
                var frame = ReadFrame(meta[i], frames[i + 2], topic);
                if (message.Frames.ContainsKey(frame.Name))
                    throw new ProtocolException(topic + ": two binary frames are named " + Quote(frame.Name));
                message.Frames[frame.Name] = frame;
                message.FrameList.Add(frame);
            }
            return message;
        }

        public static List<byte[]> Encode(string topic, long step, long timeNs, IDictionary<string, object> body,
                                          IList<BinaryFrame> frames)
        {
            if (Array.IndexOf(Topics, topic) < 0) throw new ProtocolException("unknown protocol topic " + Quote(topic));
            var header = new Dictionary<string, object> { { "protocol", Version }, { "step", step }, { "time_ns", timeNs } };
            if (body != null)
                foreach (var pair in body) header[pair.Key] = pair.Value;
            var described = new List<object>();
            var result = new List<byte[]> { Encoding.ASCII.GetBytes(topic), null };
            foreach (var frame in frames ?? new BinaryFrame[0])
            {
                var entry = new Dictionary<string, object>
                    { { "name", frame.Name }, { "dtype", frame.Dtype }, { "shape", frame.Shape } };
                foreach (var pair in frame.Meta) entry[pair.Key] = pair.Value;
                described.Add(entry);
                result.Add(frame.Data);
            }
            header["frames"] = described;
            result[1] = Encoding.UTF8.GetBytes(Json.Write(header));
            return result;
        }

        public static List<byte[]> EncodeError(long step, long timeNs, string error)
        {
            return Encode(Error, step, timeNs, new Dictionary<string, object> { { "error", error } }, null);
        }

        /// <summary>Refuse a peer that speaks another version, naming both.</summary>
        public static void CheckVersion(IDictionary<string, object> header, string topic)
        {
            object version;
            header.TryGetValue("protocol", out version);
            if (!(version is long) || (long)version != Version)
                throw new ProtocolException(topic + ": peer speaks arsim protocol version " + Show(version) +
                                            ", this side speaks version " + Version + "; update the older side");
        }

        static long Int64Key(IDictionary<string, object> header, string key, string topic)
        {
            object value;
            if (header.TryGetValue(key, out value) && value is long) return (long)value;
            throw new ProtocolException(topic + ": header key '" + key + "' must be an integer that fits in 64 bits");
        }

        static BinaryFrame ReadFrame(object described, byte[] data, string topic)
        {
            var entry = described as Dictionary<string, object>;
            object nameValue = null;
            if (entry == null || !entry.TryGetValue("name", out nameValue) || !(nameValue is string))
                throw new ProtocolException(topic + ": every frame description needs a string \"name\"");
            var name = Clip((string)nameValue);
            object dtypeValue, shapeValue;
            entry.TryGetValue("dtype", out dtypeValue);
            var dtype = dtypeValue as string;
            var itemSize = BinaryFrame.ItemSize(dtype);
            if (itemSize == 0)
                throw new ProtocolException(topic + ": frame '" + name + "' has dtype " + Show(dtypeValue) +
                                            "; expected one of ['float32', 'float64', 'int16', 'int32', 'int8', 'uint16', 'uint32', 'uint8']");
            entry.TryGetValue("shape", out shapeValue);
            var shapeList = shapeValue as List<object>;
            if (shapeList == null || shapeList.Count > MaxDimensions ||
                shapeList.Any(n => !(n is long) || (long)n < 0))
                throw new ProtocolException(topic + ": frame '" + name + "' needs a shape of at most " + MaxDimensions +
                                            " non-negative integers");
            // The product in decimal-safe steps: a hostile shape must not overflow into a match.
            decimal bytes = itemSize;
            foreach (var n in shapeList)
            {
                bytes *= (long)n;
                if (bytes > long.MaxValue) break;
            }
            if (bytes != data.Length || shapeList.Any(n => (long)n > int.MaxValue))
                throw new ProtocolException(topic + ": frame '" + name + "' declares shape [" + Clip(string.Join(", ", shapeList)) +
                                            "] (" + dtype + ") but carries " + data.Length + " bytes");
            var frame = new BinaryFrame
            {
                Name = (string)nameValue, Dtype = dtype, Data = data,
                Shape = shapeList.Select(n => (int)(long)n).ToArray(),
            };
            foreach (var pair in entry)
                if (pair.Key != "name" && pair.Key != "dtype" && pair.Key != "shape") frame.Meta[pair.Key] = pair.Value;
            return frame;
        }

        /// <summary>A peer's text cut to 200 characters: error messages quote what it sent.</summary>
        public static string Clip(string text, int limit = 200)
        {
            return text.Length <= limit ? text : text.Substring(0, limit) + "... (" + text.Length + " characters)";
        }

        static string Quote(string text) { return "'" + Clip(text) + "'"; }

        /// <summary>A header value as the error messages show it.</summary>
        public static string Show(object value)
        {
            if (value == null) return "None";
            if (value is string) return Quote((string)value);
            if (value is bool) return (bool)value ? "True" : "False";
            try { return Clip(Json.Write(value)); }
            catch (ProtocolException) { return value.GetType().Name; }
        }
    }
}
