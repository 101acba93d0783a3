using System.Collections.Generic;
using System.Globalization;

namespace Arsim.Core
{
    /// <summary>The limits of docs/protocol.md ("Limits") and the typed reads of header values
    /// that enforce them, as arsim_core.backend.wire: every failure is a ProtocolException
    /// naming the key with wire.py's wording, so both backends refuse the same requests for
    /// the same reasons and no unchecked value reaches a renderer.</summary>
    public static class WireRead
    {
        public const double MaxCoordinate = 1e6;  // |vertex, pose or mount value| [m or rad]
        public const int MaxCars = 256, MaxSensorsPerCar = 64;
        public const int MaxBeams = 65536, MaxCameraSide = 8192;
        public const long MaxSamples = 1L << 24, MaxTotalSamples = 1L << 25;  // rays or pixels
        public const double MinRateHz = 1e-3, MaxRateHz = 1e6;
        public const long MaxFramePeriodNs = 3600000000000L;  // an hour
        public const double MaxFootprint = 1e3;

        /// <summary>A list of at most <paramref name="most"/> objects; missing: empty.</summary>
        public static List<Dictionary<string, object>> Objects(IDictionary<string, object> map, string key, string where, int most)
        {
            object value;
            if (!map.TryGetValue(key, out value)) return new List<Dictionary<string, object>>();
            var list = value as List<object>;
            var result = new List<Dictionary<string, object>>();
            if (list != null && list.Count <= most)
            {
                foreach (var item in list)
                {
                    var entry = item as Dictionary<string, object>;
                    if (entry == null) break;
                    result.Add(entry);
                }
                if (result.Count == list.Count) return result;
            }
            throw new ProtocolException(where + ": key '" + key + "' must be a list of at most " + most + " objects");
        }

        public static string Text(IDictionary<string, object> map, string key, string where, string fallback = null)
        {
            var value = Get(map, key, fallback);
            var text = value as string;
            if (text == null)
                throw new ProtocolException(where + ": key '" + key + "' must be a string, got " + Show(value));
            return text;
        }

        public static bool Flag(IDictionary<string, object> map, string key, string where, bool fallback)
        {
            var value = Get(map, key, fallback);
            if (!(value is bool))
                throw new ProtocolException(where + ": key '" + key + "' must be true or false, got " + Show(value));
            return (bool)value;
        }

        /// <summary>An integer in [low, high]; bools and numbers with a fraction are refused.</summary>
        public static long Integer(IDictionary<string, object> map, string key, string where, long low, long high, long? fallback = null)
        {
            var value = Get(map, key, fallback);
            if (value is long && (long)value >= low && (long)value <= high) return (long)value;
            throw new ProtocolException(where + ": key '" + key + "' must be an integer in [" + low + ", " + high + "], got " + Show(value));
        }

        /// <summary>An integer in [0, 2^64 - 1] (the noise seed).</summary>
        public static ulong Unsigned(IDictionary<string, object> map, string key, string where, ulong fallback)
        {
            var value = Get(map, key, fallback);
            if (value is long && (long)value >= 0) return (ulong)(long)value;
            if (value is ulong) return (ulong)value;
            throw new ProtocolException(where + ": key '" + key + "' must be an integer in [0, " + ulong.MaxValue + "], got " + Show(value));
        }

        /// <summary>A finite number in the interval, open at either end if asked.</summary>
        public static double Number(IDictionary<string, object> map, string key, string where, double low, double high,
                                    double? fallback = null, bool openLow = false, bool openHigh = false)
        {
            var value = Get(map, key, fallback);
            double real;
            if (Real(value, out real) && Within(real, low, high, openLow, openHigh)) return real;
            throw new ProtocolException(where + ": key '" + key + "' must be a number in " + Interval(low, high, openLow, openHigh) +
                                        ", got " + Show(value));
        }

        /// <summary>A list of exactly <paramref name="length"/> finite numbers, each in the interval.</summary>
        public static double[] Numbers(IDictionary<string, object> map, string key, int length, string where,
                                       double low, double high, bool openLow = false)
        {
            object value;
            map.TryGetValue(key, out value);
            var list = value as List<object>;
            if (list != null && list.Count == length)
            {
                var result = new double[length];
                var good = true;
                for (var i = 0; i < length && good; i++)
                    good = Real(list[i], out result[i]) && Within(result[i], low, high, openLow, false);
                if (good) return result;
            }
            throw new ProtocolException(where + ": key '" + key + "' must be " + length + " numbers in " +
                                        Interval(low, high, openLow, false) + ", got " + Show(value));
        }

        /// <summary>A JSON number as a finite double: not a bool, NaN, an infinity, or an
        /// integer too large for a double (wire._real).</summary>
        static bool Real(object value, out double real)
        {
            if (value is double) real = (double)value;
            else if (value is long) real = (long)value;
            else if (value is ulong) real = (ulong)value;
            else
            {
                real = 0;
                return false;
            }
            return !double.IsNaN(real) && !double.IsInfinity(real);
        }

        /// <summary>A peer's value for a message, as wire.show: Python's repr, long lists and
        /// objects by their size, cut to 80 characters (a peer's values may be megabytes).</summary>
        public static string Show(object value)
        {
            var list = value as List<object>;
            if (list != null && list.Count > 8) return "<list of " + list.Count + ">";
            var map = value as Dictionary<string, object>;
            if (map != null && map.Count > 8) return "<dict of " + map.Count + ">";
            var shown = Protocol.Show(value);
            return shown.Length <= 80 ? shown : shown.Substring(0, 80) + "...";
        }

        static object Get(IDictionary<string, object> map, string key, object fallback)
        {
            object value;
            return map.TryGetValue(key, out value) ? value : fallback;
        }

        static bool Within(double value, double low, double high, bool openLow, bool openHigh)
        {
            return (openLow ? value > low : value >= low) && (openHigh ? value < high : value <= high);
        }

        /// <summary>An interval as wire.py writes it: bounds in Python's {:g}.</summary>
        static string Interval(double low, double high, bool openLow, bool openHigh)
        {
            return (openLow ? "(" : "[") + G(low) + ", " + G(high) + (openHigh ? ")" : "]");
        }

        static string G(double value) { return value.ToString("g6", CultureInfo.InvariantCulture); }
    }
}
