using System;
using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>One named binary frame of a message: raw little-endian values in C order,
    /// described in the header by name, dtype and shape (plus Meta keys such as car, sensor,
    /// type, encoding, stamp_ns).</summary>
    public sealed class BinaryFrame
    {
        public string Name;
        public string Dtype;
        public int[] Shape;
        public byte[] Data;
        public Dictionary<string, object> Meta = new Dictionary<string, object>();

        static readonly Dictionary<string, int> ItemSizes = new Dictionary<string, int>
        {
            { "uint8", 1 }, { "int8", 1 }, { "uint16", 2 }, { "int16", 2 },
            { "uint32", 4 }, { "int32", 4 }, { "float32", 4 }, { "float64", 8 },
        };

        /// <summary>Bytes per value of a protocol dtype; 0 for a dtype the protocol lacks.</summary>
        public static int ItemSize(string dtype)
        {
            int size;
            return dtype != null && ItemSizes.TryGetValue(dtype, out size) ? size : 0;
        }

        public long ElementCount
        {
            get
            {
                long count = 1;
                foreach (var n in Shape) count *= n;
                return count;
            }
        }

        public static BinaryFrame Of(string name, float[] values, params int[] shape) { return Make(name, "float32", values, values.Length * 4, shape); }
        public static BinaryFrame Of(string name, double[] values, params int[] shape) { return Make(name, "float64", values, values.Length * 8, shape); }
        public static BinaryFrame Of(string name, byte[] values, params int[] shape) { return Make(name, "uint8", values, values.Length, shape); }
        public static BinaryFrame Of(string name, ushort[] values, params int[] shape) { return Make(name, "uint16", values, values.Length * 2, shape); }
        public static BinaryFrame Of(string name, uint[] values, params int[] shape) { return Make(name, "uint32", values, values.Length * 4, shape); }
        public static BinaryFrame Of(string name, int[] values, params int[] shape) { return Make(name, "int32", values, values.Length * 4, shape); }

        static BinaryFrame Make(string name, string dtype, Array values, int bytes, int[] shape)
        {
            var data = new byte[bytes];
            Buffer.BlockCopy(values, 0, data, 0, bytes);
            return new BinaryFrame { Name = name, Dtype = dtype, Shape = shape.Length > 0 ? shape : new[] { values.Length }, Data = data };
        }

        public float[] AsFloat32()
        {
            if (Dtype == "float32") return Copy<float>(4);
            var wide = AsFloat64();
            var result = new float[wide.Length];
            for (var i = 0; i < wide.Length; i++) result[i] = (float)wide[i];
            return result;
        }

        /// <summary>The values as doubles, whatever the numeric dtype.</summary>
        public double[] AsFloat64()
        {
            var count = (int)ElementCount;
            var result = new double[count];
            switch (Dtype)
            {
                case "float64": return Copy<double>(8);
                case "float32": { var v = Copy<float>(4); for (var i = 0; i < count; i++) result[i] = v[i]; break; }
                default: { var v = AsInt64(); for (var i = 0; i < count; i++) result[i] = v[i]; break; }
            }
            return result;
        }

        /// <summary>The values of an integer dtype, widened to long (so signed indices stay
        /// negative for the range checks).</summary>
        public long[] AsInt64()
        {
            var count = (int)ElementCount;
            var result = new long[count];
            for (var i = 0; i < count; i++)
            {
                switch (Dtype)
                {
                    case "uint8": result[i] = Data[i]; break;
                    case "int8": result[i] = (sbyte)Data[i]; break;
                    case "uint16": result[i] = BitConverter.ToUInt16(Data, 2 * i); break;
                    case "int16": result[i] = BitConverter.ToInt16(Data, 2 * i); break;
                    case "uint32": result[i] = BitConverter.ToUInt32(Data, 4 * i); break;
                    case "int32": result[i] = BitConverter.ToInt32(Data, 4 * i); break;
                    default: throw new ProtocolException("frame '" + Name + "' must have an integer dtype, got " + Dtype);
                }
            }
            return result;
        }

        public bool IsInteger { get { return Dtype != "float32" && Dtype != "float64"; } }

        T[] Copy<T>(int size) where T : struct
        {
            var result = new T[Data.Length / size];
            Buffer.BlockCopy(Data, 0, result, 0, result.Length * size);
            return result;
        }
    }

    /// <summary>A decoded message: topic, JSON header, binary frames by name.</summary>
    public sealed class ProtocolMessage
    {
        public string Topic;
        public Dictionary<string, object> Header;
        public Dictionary<string, BinaryFrame> Frames = new Dictionary<string, BinaryFrame>();
        public List<BinaryFrame> FrameList = new List<BinaryFrame>();
        public long Step;
        public long TimeNs;

        public BinaryFrame Frame(string name)
        {
            BinaryFrame frame;
            return Frames.TryGetValue(name, out frame) ? frame : null;
        }
    }
}
