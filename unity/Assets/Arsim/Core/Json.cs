using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Arsim.Core
{
    /// <summary>Strict JSON (RFC 8259) for protocol headers: objects become
    /// Dictionary&lt;string, object&gt;, arrays List&lt;object&gt;, integers long (ulong above
    /// Int64, double beyond UInt64), other numbers double. NaN and the infinities are no JSON
    /// values and are refused both ways, as the Python side does.</summary>
    public static class Json
    {
        public static object Parse(byte[] utf8, int maxDepth)
        {
            string text;
            try
            {
                text = new UTF8Encoding(false, true).GetString(utf8);
            }
            catch (ArgumentException)
            {
                throw new ProtocolException("header is not valid UTF-8");
            }
            return new Reader(text, maxDepth).ReadDocument();
        }

        public static string Write(object value)
        {
            var builder = new StringBuilder();
            WriteValue(builder, value);
            return builder.ToString();
        }

        static void WriteValue(StringBuilder b, object value)
        {
            if (value == null) { b.Append("null"); return; }
            if (value is string) { WriteString(b, (string)value); return; }
            if (value is bool) { b.Append((bool)value ? "true" : "false"); return; }
            if (value is double) { WriteDouble(b, (double)value); return; }
            if (value is float) { WriteDouble(b, (float)value); return; }
            if (value is long || value is int || value is uint || value is ulong || value is short
                || value is ushort || value is byte || value is sbyte)
            {
                b.Append(Convert.ToString(value, CultureInfo.InvariantCulture));
                return;
            }
            var dictionary = value as IDictionary<string, object>;
            if (dictionary != null)
            {
                b.Append('{');
                var first = true;
                foreach (var pair in dictionary)
                {
                    if (!first) b.Append(',');
                    first = false;
                    WriteString(b, pair.Key);
                    b.Append(':');
                    WriteValue(b, pair.Value);
                }
                b.Append('}');
                return;
            }
            var list = value as IEnumerable;
            if (list != null)
            {
                b.Append('[');
                var first = true;
                foreach (var item in list)
                {
                    if (!first) b.Append(',');
                    first = false;
                    WriteValue(b, item);
                }
                b.Append(']');
                return;
            }
            throw new ProtocolException("cannot write a " + value.GetType().Name + " as JSON");
        }

        static void WriteDouble(StringBuilder b, double value)
        {
            if (double.IsNaN(value) || double.IsInfinity(value))
                throw new ProtocolException("a header holds finite numbers only, got " + value);
            var text = value.ToString("R", CultureInfo.InvariantCulture);
            b.Append(text);
            if (text.IndexOfAny(new[] { '.', 'E', 'e' }) < 0) b.Append(".0");  // stays a float
        }

        static void WriteString(StringBuilder b, string text)
        {
            b.Append('"');
            foreach (var c in text)
            {
                switch (c)
                {
                    case '"': b.Append("\\\""); break;
                    case '\\': b.Append("\\\\"); break;
                    case '\n': b.Append("\\n"); break;
                    case '\r': b.Append("\\r"); break;
                    case '\t': b.Append("\\t"); break;
                    default:
                        if (c < 0x20) b.Append("\\u").Append(((int)c).ToString("x4"));
                        else b.Append(c);
                        break;
                }
            }
            b.Append('"');
        }

        /// <summary>A recursive-descent reader whose recursion is bounded by maxDepth, so a
        /// hostile header cannot exhaust the stack.</summary>
        sealed class Reader
        {
            readonly string text;
            readonly int maxDepth;
            int at;

            public Reader(string text, int maxDepth)
            {
                this.text = text;
                this.maxDepth = maxDepth;
            }

            public object ReadDocument()
            {
                SkipSpace();
                var value = ReadValue(0);
                SkipSpace();
                if (at != text.Length) throw Fail("unexpected text after the value");
                return value;
            }

            ProtocolException Fail(string what)
            {
                return new ProtocolException("header is not valid JSON (" + what + " at character " + at + ")");
            }

            void SkipSpace()
            {
                while (at < text.Length && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r'))
                    at++;
            }

            object ReadValue(int depth)
            {
                if (at >= text.Length) throw Fail("unexpected end");
                var c = text[at];
                if (c == '{' || c == '[')
                {
                    if (depth + 1 > maxDepth)
                        throw new ProtocolException("header nests deeper than " + maxDepth + " levels");
                    return c == '{' ? (object)ReadObject(depth + 1) : ReadArray(depth + 1);
                }
                if (c == '"') return ReadString();
                if (c == '-' || (c >= '0' && c <= '9')) return ReadNumber();
                if (Match("true")) return true;
                if (Match("false")) return false;
                if (Match("null")) return null;
                if (Match("NaN") || Match("Infinity"))
                    throw Fail("NaN and Infinity are not JSON values");
                throw Fail("unexpected character '" + c + "'");
            }

            bool Match(string word)
            {
                if (string.CompareOrdinal(text, at, word, 0, word.Length) != 0) return false;
                at += word.Length;
                return true;
            }

            Dictionary<string, object> ReadObject(int depth)
            {
                var result = new Dictionary<string, object>();
                at++;
                SkipSpace();
                if (at < text.Length && text[at] == '}') { at++; return result; }
                while (true)
                {
                    SkipSpace();
                    if (at >= text.Length || text[at] != '"') throw Fail("expected a string key");
                    var key = ReadString();
                    SkipSpace();
                    if (at >= text.Length || text[at] != ':') throw Fail("expected ':'");
                    at++;
                    SkipSpace();
                    result[key] = ReadValue(depth);
                    SkipSpace();
                    if (at >= text.Length) throw Fail("unexpected end");
                    if (text[at] == ',') { at++; continue; }
                    if (text[at] == '}') { at++; return result; }
                    throw Fail("expected ',' or '}'");
                }
            }

            List<object> ReadArray(int depth)
            {
                var result = new List<object>();
                at++;
                SkipSpace();
                if (at < text.Length && text[at] == ']') { at++; return result; }
                while (true)
                {
                    SkipSpace();
                    result.Add(ReadValue(depth));
                    SkipSpace();
                    if (at >= text.Length) throw Fail("unexpected end");
                    if (text[at] == ',') { at++; continue; }
                    if (text[at] == ']') { at++; return result; }
                    throw Fail("expected ',' or ']'");
                }
            }

            string ReadString()
            {
                at++;
                var b = new StringBuilder();
                while (true)
                {
                    if (at >= text.Length) throw Fail("unterminated string");
                    var c = text[at++];
                    if (c == '"') return b.ToString();
                    if (c < 0x20) throw Fail("control character in a string");
                    if (c != '\\') { b.Append(c); continue; }
                    if (at >= text.Length) throw Fail("unterminated escape");
                    var e = text[at++];
                    switch (e)
                    {
                        case '"': b.Append('"'); break;
                        case '\\': b.Append('\\'); break;
                        case '/': b.Append('/'); break;
                        case 'b': b.Append('\b'); break;
                        case 'f': b.Append('\f'); break;
                        case 'n': b.Append('\n'); break;
                        case 'r': b.Append('\r'); break;
                        case 't': b.Append('\t'); break;
                        case 'u':
                            if (at + 4 > text.Length) throw Fail("short \\u escape");
                            int code;
                            if (!int.TryParse(text.Substring(at, 4), NumberStyles.AllowHexSpecifier,
                                              CultureInfo.InvariantCulture, out code))
                                throw Fail("bad \\u escape");
                            at += 4;
                            b.Append((char)code);
                            break;
                        default: throw Fail("bad escape '\\" + e + "'");
                    }
                }
            }

            object ReadNumber()
            {
                var start = at;
                if (text[at] == '-') at++;
                if (at >= text.Length || !IsDigit(text[at])) throw Fail("bad number");
                if (text[at] == '0' && at + 1 < text.Length && IsDigit(text[at + 1]))
                    throw Fail("leading zero");
                while (at < text.Length && IsDigit(text[at])) at++;
                var integral = true;
                if (at < text.Length && text[at] == '.')
                {
                    integral = false;
                    at++;
                    if (at >= text.Length || !IsDigit(text[at])) throw Fail("bad fraction");
                    while (at < text.Length && IsDigit(text[at])) at++;
                }
                if (at < text.Length && (text[at] == 'e' || text[at] == 'E'))
                {
                    integral = false;
                    at++;
                    if (at < text.Length && (text[at] == '+' || text[at] == '-')) at++;
                    if (at >= text.Length || !IsDigit(text[at])) throw Fail("bad exponent");
                    while (at < text.Length && IsDigit(text[at])) at++;
                }
                var literal = text.Substring(start, at - start);
                if (integral)
                {
                    long signed;
                    if (long.TryParse(literal, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out signed))
                        return signed;
                    ulong unsigned;
                    if (ulong.TryParse(literal, NumberStyles.None, CultureInfo.InvariantCulture, out unsigned))
                        return unsigned;
                }
                double number;
                if (!double.TryParse(literal, NumberStyles.Float, CultureInfo.InvariantCulture, out number)
                    || double.IsInfinity(number))
                    throw Fail("number out of range");
                return number;
            }

            static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
        }
    }
}
