using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Arsim.Core
{
    /// <summary>Strict JSON (RFC 8259) for protocol headers. Objects read as
    /// Dictionary&lt;string, object&gt;, arrays as List&lt;object&gt;, integers as long (ulong above
    /// Int64.MaxValue, double beyond UInt64), other numbers as double. NaN and the infinities are
    /// refused both ways: no peer may slip them into a field that must be a number.</summary>
    public static class Json
    {
        /// <summary>Marks Parse's refusal of deep nesting, which the protocol reports apart
        /// from other JSON errors.</summary>
        const string TooDeepKey = "Arsim.Json.TooDeep";

        /// <summary>Deepest value Write walks: far above any header, low enough that a value
        /// holding itself is refused before it overflows the stack.</summary>
        const int MaxWriteDepth = 1000;

        /// <summary>The value of a whole UTF-8 document; lists and objects nested deeper than
        /// maxDepth are refused while reading, without recursion, so no input can exhaust the
        /// stack. Throws ProtocolException naming the reason and the byte offset.</summary>
        public static object Parse(byte[] utf8, int maxDepth)
        {
            if (utf8 == null) throw new ArgumentNullException(nameof(utf8));
            return new Reader(utf8, maxDepth).Document();
        }

        /// <summary>Whether e is Parse's refusal of nesting deeper than its maxDepth.</summary>
        internal static bool IsTooDeep(ProtocolException e)
        {
            return e.Data.Contains(TooDeepKey);
        }

        /// <summary>Compact JSON (no spaces, ASCII only, as Python's json.dumps writes it) of
        /// null, bool, string, the integer and floating types, IDictionary&lt;string, object&gt;
        /// and IList (List&lt;object&gt;, arrays). Doubles round-trip exactly.</summary>
        public static string Write(object value)
        {
            var text = new StringBuilder();
            WriteValue(text, value, 0);
            return text.ToString();
        }

        static void WriteValue(StringBuilder text, object value, int depth)
        {
            if (depth > MaxWriteDepth)
                throw new ProtocolException($"value nests deeper than {MaxWriteDepth} levels (does it hold itself?)");
            if (value == null) text.Append("null");
            else if (value is string s) WriteString(text, s);
            else if (value is bool b) text.Append(b ? "true" : "false");
            else if (value is double d) text.Append(FormatDouble(d));
            else if (value is float f) text.Append(FormatFloat(f));
            else if (value is long || value is int || value is short || value is sbyte)
                text.Append(Convert.ToInt64(value).ToString(CultureInfo.InvariantCulture));
            else if (value is ulong || value is uint || value is ushort || value is byte)
                text.Append(Convert.ToUInt64(value).ToString(CultureInfo.InvariantCulture));
            else if (value is IDictionary<string, object> map) WriteObject(text, map, depth);
            else if (value is IList list) WriteList(text, list, depth);
            else throw new ProtocolException($"a {value.GetType().Name} cannot be written as JSON");
        }

        static void WriteObject(StringBuilder text, IDictionary<string, object> map, int depth)
        {
            text.Append('{');
            bool first = true;
            foreach (var pair in map)
            {
                if (!first) text.Append(',');
                first = false;
                WriteString(text, pair.Key);
                text.Append(':');
                WriteValue(text, pair.Value, depth + 1);
            }
            text.Append('}');
        }

        static void WriteList(StringBuilder text, IList list, int depth)
        {
            text.Append('[');
            for (int i = 0; i < list.Count; i++)
            {
                if (i > 0) text.Append(',');
                WriteValue(text, list[i], depth + 1);
            }
            text.Append(']');
        }

        /// <summary>Shortest text that reads back as d ("R"; "G17" where a runtime's "R" does
        /// not round-trip, as on some .NET Framework versions), with ".0" so it reads back as
        /// a double rather than an integer.</summary>
        static string FormatDouble(double d)
        {
            if (double.IsNaN(d) || double.IsInfinity(d)) throw NotFinite(d);
            if (d == 0) return 1 / d < 0 ? "-0.0" : "0.0";  // some runtimes drop the sign of -0
            string s = d.ToString("R", CultureInfo.InvariantCulture);
            if (double.Parse(s, CultureInfo.InvariantCulture) != d) s = d.ToString("G17", CultureInfo.InvariantCulture);
            return FloatLiteral(s);
        }

        /// <summary>The shortest text that reads back as the same float.</summary>
        static string FormatFloat(float f)
        {
            if (float.IsNaN(f) || float.IsInfinity(f) || f == 0) return FormatDouble(f);
            string s = f.ToString("R", CultureInfo.InvariantCulture);
            if (float.Parse(s, CultureInfo.InvariantCulture) != f) s = f.ToString("G9", CultureInfo.InvariantCulture);
            return FloatLiteral(s);
        }

        static string FloatLiteral(string number)
        {
            return number.IndexOfAny(new[] { '.', 'E', 'e' }) < 0 ? number + ".0" : number;
        }

        static ProtocolException NotFinite(double d)
        {
            string name = double.IsNaN(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
            return new ProtocolException($"{name} is not a JSON value");
        }

        static void WriteString(StringBuilder text, string s)
        {
            text.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': text.Append("\\\""); break;
                    case '\\': text.Append("\\\\"); break;
                    case '\b': text.Append("\\b"); break;
                    case '\f': text.Append("\\f"); break;
                    case '\n': text.Append("\\n"); break;
                    case '\r': text.Append("\\r"); break;
                    case '\t': text.Append("\\t"); break;
                    default:
                        if (c < 0x20 || c >= 0x80) text.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                        else text.Append(c);
                        break;
                }
            }
            text.Append('"');
        }

        /// <summary>One pass over the bytes. Open lists and objects live on explicit stacks
        /// rather than the call stack; each value read is attached to the innermost one.</summary>
        sealed class Reader
        {
            readonly byte[] _s;
            readonly int _maxDepth;
            readonly Stack<object> _open = new Stack<object>();  // List<object> or Dictionary
            readonly Stack<string> _keys = new Stack<string>();  // pending key of each open object
            int _i;

            public Reader(byte[] utf8, int maxDepth)
            {
                _s = utf8;
                _maxDepth = maxDepth;
            }

            public object Document()
            {
                while (true)
                {
                    object value;
                    SkipSpace();
                    byte c = Peek("a value");
                    if (c == '{' || c == '[')
                    {
                        if (_open.Count >= _maxDepth)
                        {
                            var e = Fail($"lists and objects nest deeper than {_maxDepth} levels");
                            e.Data[TooDeepKey] = true;
                            throw e;
                        }
                        _i++;
                        SkipSpace();
                        if (c == '{')
                        {
                            var map = new Dictionary<string, object>();
                            if (Peek("a key or '}'") != '}')
                            {
                                _open.Push(map);
                                _keys.Push(Key());
                                continue;
                            }
                            _i++;
                            value = map;
                        }
                        else
                        {
                            var list = new List<object>();
                            if (Peek("a value or ']'") != ']')
                            {
                                _open.Push(list);
                                continue;
                            }
                            _i++;
                            value = list;
                        }
                    }
                    else
                    {
                        value = Scalar(c);
                    }

                    // Attach the value; close every list and object that ends right after it.
                    while (true)
                    {
                        SkipSpace();
                        if (_open.Count == 0)
                        {
                            if (_i != _s.Length) throw Fail("data after the JSON value");
                            return value;
                        }
                        if (_open.Peek() is List<object> list)
                        {
                            list.Add(value);
                            if (Next("',' or ']'", ',', ']') == ',') break;
                        }
                        else
                        {
                            ((Dictionary<string, object>)_open.Peek())[_keys.Pop()] = value;  // last key wins
                            if (Next("',' or '}'", ',', '}') == ',')
                            {
                                _keys.Push(Key());
                                break;
                            }
                        }
                        value = _open.Pop();
                    }
                }
            }

            string Key()
            {
                SkipSpace();
                if (Peek("a key") != '"') throw Unexpected("a string key");
                _i++;
                string key = StringBody();
                SkipSpace();
                Next("':'", ':', ':');
                return key;
            }

            object Scalar(byte c)
            {
                switch (c)
                {
                    case (byte)'"': _i++; return StringBody();
                    case (byte)'t': Literal("true"); return true;
                    case (byte)'f': Literal("false"); return false;
                    case (byte)'n': Literal("null"); return null;
                    case (byte)'N': RefuseConstant("NaN"); break;
                    case (byte)'I': RefuseConstant("Infinity"); break;
                    default:
                        if (c == '-' || (c >= '0' && c <= '9')) return Number();
                        break;
                }
                throw Unexpected("a value");
            }

            void Literal(string word)
            {
                if (!Matches(word)) throw Unexpected("a value");
                _i += word.Length;
            }

            void RefuseConstant(string word)
            {
                if (Matches(word)) throw Fail($"{word} is not a JSON value");
            }

            bool Matches(string word)
            {
                if (_s.Length - _i < word.Length) return false;
                for (int k = 0; k < word.Length; k++)
                    if (_s[_i + k] != word[k]) return false;
                return true;
            }

            /// <summary>-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? as long, ulong or a
            /// finite double.</summary>
            object Number()
            {
                int start = _i;
                if (_s[_i] == '-')
                {
                    RefuseConstant("-Infinity");
                    _i++;
                }
                if (_i < _s.Length && _s[_i] == '0')
                {
                    _i++;
                    if (_i < _s.Length && IsDigit(_s[_i])) throw Fail("a number has a leading zero");
                }
                else
                {
                    Digits("a digit");
                }
                bool integer = true;
                if (_i < _s.Length && _s[_i] == '.')
                {
                    _i++;
                    Digits("a digit after '.'");
                    integer = false;
                }
                if (_i < _s.Length && (_s[_i] == 'e' || _s[_i] == 'E'))
                {
                    _i++;
                    if (_i < _s.Length && (_s[_i] == '+' || _s[_i] == '-')) _i++;
                    Digits("a digit in the exponent");
                    integer = false;
                }
                string text = Encoding.ASCII.GetString(_s, start, _i - start);
                if (integer)
                {
                    if (long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long whole)) return whole;
                    if (ulong.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out ulong big)) return big;
                }
                if (!double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double d) || double.IsInfinity(d))
                    throw Fail($"number {Clip(text)} is beyond the range of a double");
                return d == 0 && text[0] == '-' ? -Math.Abs(d) : d;  // Mono reads "-0.0" as +0
            }

            void Digits(string expected)
            {
                if (_i >= _s.Length || !IsDigit(_s[_i])) throw Unexpected(expected);
                while (_i < _s.Length && IsDigit(_s[_i])) _i++;
            }

            static bool IsDigit(byte b)
            {
                return b >= '0' && b <= '9';
            }

            /// <summary>The rest of a string after its opening quote: escapes resolved,
            /// UTF-8 checked strictly (no overlong forms, no encoded surrogates), raw control
            /// characters refused.</summary>
            string StringBody()
            {
                var text = new StringBuilder();
                while (true)
                {
                    if (_i >= _s.Length) throw Fail("unterminated string");
                    byte b = _s[_i];
                    if (b == '"')
                    {
                        _i++;
                        return text.ToString();
                    }
                    if (b == '\\') Escape(text);
                    else if (b < 0x20) throw Fail($"control character 0x{b:x2} in a string (it must be escaped)");
                    else if (b < 0x80)
                    {
                        text.Append((char)b);
                        _i++;
                    }
                    else Utf8(text);
                }
            }

            void Escape(StringBuilder text)
            {
                _i++;
                if (_i >= _s.Length) throw Fail("unterminated string");
                byte c = _s[_i++];
                switch (c)
                {
                    case (byte)'"': text.Append('"'); return;
                    case (byte)'\\': text.Append('\\'); return;
                    case (byte)'/': text.Append('/'); return;
                    case (byte)'b': text.Append('\b'); return;
                    case (byte)'f': text.Append('\f'); return;
                    case (byte)'n': text.Append('\n'); return;
                    case (byte)'r': text.Append('\r'); return;
                    case (byte)'t': text.Append('\t'); return;
                    case (byte)'u': text.Append(Hex4()); return;  // a surrogate pair arrives as two escapes
                    default:
                        _i--;
                        throw Fail(c >= 0x20 && c < 0x7F ? $"invalid escape '\\{(char)c}'" : $"invalid escape: a backslash before byte 0x{c:x2}");
                }
            }

            char Hex4()
            {
                if (_s.Length - _i < 4) throw Fail("\\u needs 4 hex digits");
                int code = 0;
                for (int k = 0; k < 4; k++)
                {
                    int digit = HexValue(_s[_i]);
                    if (digit < 0) throw Fail("\\u needs 4 hex digits");
                    code = code * 16 + digit;
                    _i++;
                }
                return (char)code;
            }

            static int HexValue(byte b)
            {
                if (b >= '0' && b <= '9') return b - '0';
                if (b >= 'a' && b <= 'f') return b - 'a' + 10;
                if (b >= 'A' && b <= 'F') return b - 'A' + 10;
                return -1;
            }

            void Utf8(StringBuilder text)
            {
                int lead = _s[_i], count, code;
                if (lead >= 0xC2 && lead <= 0xDF) { count = 1; code = lead & 0x1F; }
                else if (lead >= 0xE0 && lead <= 0xEF) { count = 2; code = lead & 0x0F; }
                else if (lead >= 0xF0 && lead <= 0xF4) { count = 3; code = lead & 0x07; }
                else throw Fail("invalid UTF-8");
                if (_s.Length - _i <= count) throw Fail("invalid UTF-8 (truncated sequence)");
                for (int k = 1; k <= count; k++)
                {
                    int next = _s[_i + k];
                    if ((next & 0xC0) != 0x80) throw Fail("invalid UTF-8");
                    code = (code << 6) | (next & 0x3F);
                }
                bool overlong = (count == 2 && code < 0x800) || (count == 3 && code < 0x10000);
                if (overlong || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) throw Fail("invalid UTF-8");
                _i += count + 1;
                if (code < 0x10000) text.Append((char)code);
                else text.Append(char.ConvertFromUtf32(code));
            }

            void SkipSpace()
            {
                while (_i < _s.Length)
                {
                    byte b = _s[_i];
                    if (b != ' ' && b != '\t' && b != '\n' && b != '\r') return;
                    _i++;
                }
            }

            byte Peek(string expected)
            {
                if (_i >= _s.Length) throw Fail($"unexpected end of input, expected {expected}");
                return _s[_i];
            }

            /// <summary>Consumes the next byte, which must be a or b.</summary>
            byte Next(string expected, char a, char b)
            {
                byte c = Peek(expected);
                if (c != a && c != b) throw Unexpected(expected);
                _i++;
                return c;
            }

            ProtocolException Unexpected(string expected)
            {
                if (_i >= _s.Length) return Fail($"unexpected end of input, expected {expected}");
                return Fail($"expected {expected}, found {Printable(_s[_i])}");
            }

            static string Printable(byte b)
            {
                return b >= 0x20 && b < 0x7F ? $"'{(char)b}'" : $"byte 0x{b:x2}";
            }

            static string Clip(string text)
            {
                return text.Length <= 40 ? text : $"{text.Substring(0, 40)}... ({text.Length} characters)";
            }

            ProtocolException Fail(string reason)
            {
                return new ProtocolException($"{reason} at byte {_i}");
            }
        }
    }
}
