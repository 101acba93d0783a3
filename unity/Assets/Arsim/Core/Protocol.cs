using System;
using System.Collections.Generic;
using System.Text;

namespace Arsim.Core
{
    /// <summary>Protocol v1 framing (docs/protocol.md): frame 0 the topic, frame 1 a JSON
    /// header, then the binary frames it describes. Decode is the one gate every received
    /// message passes, with exactly the checks of arsim_core/protocol.py's decode and its
    /// wording, so both backends refuse the same requests with the same reasons.</summary>
    public static class Protocol
    {
        public const int Version = 1;
        public const string InitialSettings = "InitialSettings", Ready = "Ready", Track = "Track",
            Update = "Update", Error = "Error";
        public const int MaxHeaderDepth = 32, MaxDimensions = 8, MaxRequestFrames = 64;

        static readonly string[] Topics = { Error, InitialSettings, Ready, Track, Update };  // sorted, as Python lists them
        const string TopicList = "['Error', 'InitialSettings', 'Ready', 'Track', 'Update']";
        const string DtypeList = "['float32', 'float64', 'int16', 'int32', 'int8', 'uint16', 'uint32', 'uint8']";

        /// <summary>The message the frames hold, or ProtocolException with the reason.
        /// maxFrames: a server passes MaxRequestFrames to refuse requests of more frames, as
        /// the embedded backend does before decoding.</summary>
        public static ProtocolMessage Decode(IList<byte[]> frames, int maxFrames = int.MaxValue)
        {
            if (frames == null) throw new ArgumentNullException(nameof(frames));
            if (frames.Count > maxFrames)
            {
                long size = 0;
                foreach (var frame in frames) size += frame.LongLength;
                throw new ProtocolException($"request of more than {maxFrames} frames; refused unread ({frames.Count} frames, {size} bytes)");
            }
            if (frames.Count < 2)
                throw new ProtocolException($"a protocol message has at least 2 frames (topic, header), got {frames.Count}");
            string topic = Encoding.UTF8.GetString(frames[0]);  // bad bytes become U+FFFD, as with errors='replace'
            CheckTopic(topic);
            var header = ParseHeader(frames[1], topic);
            if (topic != Error) CheckVersion(header, topic);  // an error is shown whatever version its sender speaks
            var message = new ProtocolMessage
            {
                Topic = topic, Header = header,
                Step = Int64Key(header, "step", topic), TimeNs = Int64Key(header, "time_ns", topic),
            };
            object listed;
            var descriptions = header.TryGetValue("frames", out listed) ? listed as List<object> : new List<object>();
            if (descriptions == null || descriptions.Count != frames.Count - 2)
                throw new ProtocolException($"{topic}: header lists {(descriptions == null ? "no" : descriptions.Count.ToString())} " +
                                            $"binary frames but the message carries {frames.Count - 2}");
            for (int i = 0; i < descriptions.Count; i++)
                AddFrame(message, descriptions[i], frames[i + 2]);
            return message;
        }

        /// <summary>The frames of one message: header {protocol, step, time_ns, body's keys,
        /// frames}, then each frame's bytes as they are (no copy). Each frame is checked as
        /// Decode checks it, so this side never sends what a peer must refuse.</summary>
        public static List<byte[]> Encode(string topic, long step, long timeNs, IDictionary<string, object> body,
                                          IList<BinaryFrame> frames)
        {
            CheckTopic(topic);
            var header = new Dictionary<string, object> { { "protocol", (long)Version }, { "step", step }, { "time_ns", timeNs } };
            if (body != null)
                foreach (var pair in body) header[pair.Key] = pair.Value;
            var descriptions = new List<object>();
            var encoded = new List<byte[]> { Encoding.ASCII.GetBytes(topic), null };
            var sent = new ProtocolMessage { Topic = topic };  // for the duplicate-name check
            foreach (var frame in frames ?? new BinaryFrame[0])
            {
                if (frame == null || frame.Data == null || frame.Shape == null)
                    throw new ArgumentException($"{topic}: a binary frame needs Data and Shape");
                var description = Describe(frame);
                AddFrame(sent, description, frame.Data);
                descriptions.Add(description);
                encoded.Add(frame.Data);
            }
            header["frames"] = descriptions;
            try
            {
                encoded[1] = Encoding.UTF8.GetBytes(Json.Write(header));
            }
            catch (ProtocolException e)
            {
                throw new ProtocolException($"{topic} of step {step}: {e.Message}; a header holds finite numbers only");
            }
            return encoded;
        }

        public static List<byte[]> EncodeError(long step, long timeNs, string error)
        {
            return Encode(Error, step, timeNs, new Dictionary<string, object> { { "error", error } }, null);
        }

        /// <summary>Refuse a peer that speaks another protocol version, saying which versions
        /// differ.</summary>
        public static void CheckVersion(IDictionary<string, object> header, string topic)
        {
            object version;
            header.TryGetValue("protocol", out version);
            if (!(version is long) || (long)version != Version)
                throw new ProtocolException($"{topic}: peer speaks arsim protocol version {Clip(Show(version))}, " +
                                            $"this side speaks version {Version}; update the older side");
        }

        /// <summary>text cut to limit characters: error messages quote what a peer sent, which
        /// may be megabytes long.</summary>
        public static string Clip(string text, int limit = 200)
        {
            return text.Length <= limit ? text : $"{text.Substring(0, limit)}... ({text.Length} characters)";
        }

        /// <summary>A header value as Python's repr shows it in the reference's messages
        /// (None, True, 'text'; numbers, lists and objects as JSON).</summary>
        public static string Show(object value)
        {
            if (value == null) return "None";
            if (value is string) return Quote((string)value);
            if (value is bool) return (bool)value ? "True" : "False";
            try
            {
                return Json.Write(value);
            }
            catch (ProtocolException)
            {
                return value.GetType().Name;
            }
        }

        static string Quote(string text)
        {
            return "'" + text + "'";
        }

        static void CheckTopic(string topic)
        {
            if (Array.IndexOf(Topics, topic) < 0)
                throw new ProtocolException($"unknown protocol topic {Quote(Clip(topic ?? ""))}; expected one of {TopicList}");
        }

        /// <summary>The header as a JSON object nested at most MaxHeaderDepth deep; the JSON
        /// reader checks the depth while reading, so no header can exhaust the stack.</summary>
        static Dictionary<string, object> ParseHeader(byte[] text, string topic)
        {
            object header;
            try
            {
                header = Json.Parse(text, MaxHeaderDepth);
            }
            catch (ProtocolException e)
            {
                if (Json.IsTooDeep(e)) throw new ProtocolException($"{topic}: header nests deeper than {MaxHeaderDepth} levels");
                throw new ProtocolException($"{topic}: header is not valid JSON ({Clip(e.Message)})");
            }
            var map = header as Dictionary<string, object>;
            if (map == null) throw new ProtocolException($"{topic}: header must be a JSON object");
            return map;
        }

        static long Int64Key(IDictionary<string, object> header, string key, string topic)
        {
            object value;
            if (header.TryGetValue(key, out value) && value is long) return (long)value;  // ulong: beyond int64
            throw new ProtocolException($"{topic}: header key '{key}' must be an integer that fits in 64 bits");
        }

        /// <summary>Checks one frame as protocol.py does, in its order (name, uniqueness,
        /// dtype, shape, bytes), and adds it to the message.</summary>
        static void AddFrame(ProtocolMessage message, object described, byte[] data)
        {
            var entry = described as Dictionary<string, object>;
            object name = null;
            if (entry == null || !entry.TryGetValue("name", out name) || !(name is string))
                throw new ProtocolException($"{message.Topic}: every frame description needs a string \"name\"");
            if (message.Frames.ContainsKey((string)name))
                throw new ProtocolException($"{message.Topic}: two binary frames are named {Quote(Clip((string)name))}");
            var frame = ReadFrame(entry, (string)name, data, message.Topic);
            message.Frames[frame.Name] = frame;
            message.FrameList.Add(frame);
        }

        static Dictionary<string, object> Describe(BinaryFrame frame)
        {
            var shape = new List<object>();
            foreach (int n in frame.Shape) shape.Add((long)n);
            var description = new Dictionary<string, object> { { "name", frame.Name }, { "dtype", frame.Dtype }, { "shape", shape } };
            if (frame.Meta != null)
                foreach (var pair in frame.Meta) description[pair.Key] = pair.Value;
            return description;
        }

        /// <summary>One binary frame as its description declares it. The byte count is
        /// compared with the shape without overflow: a hostile shape must not multiply into a
        /// match.</summary>
        static BinaryFrame ReadFrame(Dictionary<string, object> entry, string frameName, byte[] data, string topic)
        {
            string name = Quote(Clip(frameName));
            object dtypeValue, shapeValue;
            entry.TryGetValue("dtype", out dtypeValue);
            entry.TryGetValue("shape", out shapeValue);
            var dtype = dtypeValue as string;
            int itemSize = BinaryFrame.ItemSize(dtype);
            if (itemSize == 0)
                throw new ProtocolException($"{topic}: frame {name} has dtype {Clip(Show(dtypeValue))}; expected one of {DtypeList}");
            var dims = Dimensions(shapeValue);
            if (dims == null)
                throw new ProtocolException($"{topic}: frame {name} needs a shape of at most {MaxDimensions} non-negative integers");
            string shapeText = Clip("[" + string.Join(", ", dims) + "]");
            if (!HoldsExactly(dims, (ulong)itemSize, (ulong)data.LongLength))
                throw new ProtocolException($"{topic}: frame {name} declares shape {shapeText} ({dtype}) but carries {data.LongLength} bytes");
            var shape = new int[dims.Length];
            for (int i = 0; i < dims.Length; i++)
            {
                if (dims[i] > int.MaxValue)  // only an empty frame gets here with one
                    throw new ProtocolException($"{topic}: frame {name} declares shape {shapeText}: a dimension above {int.MaxValue}");
                shape[i] = (int)dims[i];
            }
            var frame = new BinaryFrame { Name = frameName, Dtype = dtype, Shape = shape, Data = data };
            foreach (var pair in entry)
                if (pair.Key != "name" && pair.Key != "dtype" && pair.Key != "shape") frame.Meta[pair.Key] = pair.Value;
            return frame;
        }

        /// <summary>A JSON list of at most MaxDimensions non-negative integers, or null.</summary>
        static ulong[] Dimensions(object shape)
        {
            var list = shape as List<object>;
            if (list == null || list.Count > MaxDimensions) return null;
            var dims = new ulong[list.Count];
            for (int i = 0; i < list.Count; i++)
            {
                if (list[i] is long && (long)list[i] >= 0) dims[i] = (ulong)(long)list[i];
                else if (list[i] is ulong) dims[i] = (ulong)list[i];
                else return null;
            }
            return dims;
        }

        /// <summary>Whether prod(dims) * itemSize == count, without computing a product above
        /// count.</summary>
        static bool HoldsExactly(ulong[] dims, ulong itemSize, ulong count)
        {
            if (Array.IndexOf(dims, 0UL) >= 0) return count == 0;
            ulong total = itemSize;
            foreach (ulong n in dims)
            {
                if (total > count / n) return false;
                total *= n;
            }
            return total == count;
        }
    }
}
