using System;
using System.Collections.Generic;
using System.Text;
using System.Threading;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class JsonTests
    {
        static object Parse(string text, int maxDepth = 32)
        {
            return Json.Parse(Encoding.UTF8.GetBytes(text), maxDepth);
        }

        static string Refusal(byte[] utf8, int maxDepth = 32)
        {
            return Assert.Throws<ProtocolException>(() => Json.Parse(utf8, maxDepth)).Message;
        }

        static string Refusal(string text, int maxDepth = 32)
        {
            return Refusal(Encoding.UTF8.GetBytes(text), maxDepth);
        }

        internal static void AssertContains(string text, string part)
        {
            Assert.IsTrue(text.Contains(part), "expected \"" + part + "\" in: " + text);
        }

        [Test]
        public void ReadsEveryKindOfValue()
        {
            var value = (Dictionary<string, object>)Parse(
                " {\"a\" : [1, -2, 3.5, 1e3, -2.5E-2, true, false, null, \"x\"],\t\"o\": {}, \"l\": []}\r\n");
            var list = (List<object>)value["a"];
            Assert.AreEqual(1L, list[0]);
            Assert.AreEqual(-2L, list[1]);
            Assert.AreEqual(3.5, list[2]);
            Assert.AreEqual(1000.0, list[3]);
            Assert.AreEqual(-0.025, list[4]);
            Assert.AreEqual(true, list[5]);
            Assert.AreEqual(false, list[6]);
            Assert.IsNull(list[7]);
            Assert.AreEqual("x", list[8]);
            Assert.AreEqual(0, ((Dictionary<string, object>)value["o"]).Count);
            Assert.AreEqual(0, ((List<object>)value["l"]).Count);
        }

        [TestCase("9223372036854775807", typeof(long))]
        [TestCase("-9223372036854775808", typeof(long))]
        [TestCase("9223372036854775808", typeof(ulong))]
        [TestCase("18446744073709551615", typeof(ulong))]
        [TestCase("18446744073709551616", typeof(double))]
        [TestCase("-9223372036854775809", typeof(double))]
        [TestCase("1.0", typeof(double))]
        [TestCase("0", typeof(long))]
        [TestCase("-0", typeof(long))]
        public void IntegersReadAsTheNarrowestTypeThatHoldsThem(string text, Type type)
        {
            Assert.AreEqual(type, Parse(text).GetType());
        }

        [Test]
        public void IntegersKeepEveryDigit()
        {
            Assert.AreEqual(long.MinValue, Parse("-9223372036854775808"));
            Assert.AreEqual(ulong.MaxValue, Parse("18446744073709551615"));
            Assert.AreEqual(1e30, Parse("1000000000000000000000000000000"));
        }

        [Test]
        public void StringsResolveEscapesAndUtf8()
        {
            Assert.AreEqual("\"\\/\b\f\n\r\t", Parse("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""));
            Assert.AreEqual("\u00e9\u20ac", Parse("\"\\u00e9\\u20AC\""));
            Assert.AreEqual("\U0001F600", Parse("\"\\ud83d\\ude00\""), "a surrogate pair");
            Assert.AreEqual("\u00e9\u20ac\U0001F600", Parse("\"\u00e9\u20ac\U0001F600\""), "raw UTF-8 of 2, 3 and 4 bytes");
            Assert.AreEqual("\ud800", Parse("\"\\ud800\""), "a lone surrogate escape, as Python reads it");
        }

        [Test]
        public void TheLastOfTwoEqualKeysWins()
        {
            var value = (Dictionary<string, object>)Parse("{\"a\": 1, \"b\": 2, \"a\": 3}");
            Assert.AreEqual(3L, value["a"]);
            Assert.AreEqual(2, value.Count);
        }

        [TestCase("NaN", "NaN is not a JSON value")]
        [TestCase("[Infinity]", "Infinity is not a JSON value")]
        [TestCase("{\"a\": -Infinity}", "-Infinity is not a JSON value")]
        [TestCase("1e400", "beyond the range of a double")]
        [TestCase("-1e400", "beyond the range of a double")]
        [TestCase("[01]", "leading zero")]
        [TestCase("-01", "leading zero")]
        [TestCase("\"tab\there\"", "control character 0x09")]
        [TestCase("\"line\nbreak\"", "control character 0x0a")]
        [TestCase("{} {}", "data after the JSON value")]
        [TestCase("1 x", "data after the JSON value")]
        [TestCase("true1", "data after the JSON value")]
        [TestCase("[1,]", "expected a value")]
        [TestCase("{\"a\":1,}", "expected a string key")]
        [TestCase("{\"a\" 1}", "expected ':'")]
        [TestCase("{a:1}", "expected a string key")]
        [TestCase("[1 2]", "expected ',' or ']'")]
        [TestCase("{\"a\":1 \"b\":2}", "expected ',' or '}'")]
        [TestCase("[1.]", "a digit after '.'")]
        [TestCase(".5", "expected a value")]
        [TestCase("+1", "expected a value")]
        [TestCase("1e", "a digit in the exponent")]
        [TestCase("-", "expected a digit")]
        [TestCase("0x10", "data after the JSON value")]
        [TestCase("'x'", "expected a value")]
        [TestCase("tru", "expected a value")]
        [TestCase("nul", "expected a value")]
        [TestCase("None", "expected a value")]
        [TestCase("", "unexpected end of input")]
        [TestCase("   ", "unexpected end of input")]
        [TestCase("[1, 2", "unexpected end of input")]
        [TestCase("{\"a\"", "unexpected end of input")]
        [TestCase("\"open", "unterminated string")]
        [TestCase("\"\\x\"", "invalid escape '\\x'")]
        [TestCase("\"\\u12\"", "\\u needs 4 hex digits")]
        [TestCase("\"\\u12g4\"", "\\u needs 4 hex digits")]
        public void RefusesWhatIsNotStrictJsonSayingWhy(string text, string reason)
        {
            AssertContains(Refusal(text), reason);
        }

        [Test]
        public void RefusalsNameTheByteOffset()
        {
            AssertContains(Refusal("[1,]"), "at byte 3");
            AssertContains(Refusal("{\"a\": NaN}"), "at byte 6");
        }

        [TestCase(new byte[] { 0x22, 0x80, 0x22 }, TestName = "a lone continuation byte")]
        [TestCase(new byte[] { 0x22, 0xC3, 0x28, 0x22 }, TestName = "a lead byte without its continuation")]
        [TestCase(new byte[] { 0x22, 0xC0, 0x80, 0x22 }, TestName = "an overlong 2-byte NUL")]
        [TestCase(new byte[] { 0x22, 0xE0, 0x80, 0xAF, 0x22 }, TestName = "an overlong 3-byte form")]
        [TestCase(new byte[] { 0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22 }, TestName = "an overlong 4-byte form")]
        [TestCase(new byte[] { 0x22, 0xED, 0xA0, 0x80, 0x22 }, TestName = "an encoded surrogate")]
        [TestCase(new byte[] { 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22 }, TestName = "a code point above U+10FFFF")]
        [TestCase(new byte[] { 0x22, 0xF5, 0x80, 0x80, 0x80, 0x22 }, TestName = "lead byte 0xF5")]
        [TestCase(new byte[] { 0x22, 0xE2, 0x82 }, TestName = "a sequence cut by the end")]
        [TestCase(new byte[] { 0xEF, 0xBB, 0xBF, 0x31 }, TestName = "a byte order mark")]
        [TestCase(new byte[] { 0x5B, 0xC3, 0xA9, 0x5D }, TestName = "UTF-8 outside a string")]
        public void RefusesInvalidUtf8(byte[] utf8)
        {
            Refusal(utf8);
        }

        [Test]
        public void NestingUpToTheLimitIsReadDeeperIsRefused()
        {
            Assert.IsNotNull(Parse(new string('[', 32) + new string(']', 32)));
            Assert.IsNotNull(Parse(Objects(32)));
            AssertContains(Refusal(new string('[', 33) + new string(']', 33)), "nest deeper than 32 levels");
            AssertContains(Refusal(Objects(33)), "nest deeper than 32 levels");
            AssertContains(Refusal("[[{}]]", 2), "nest deeper than 2 levels");
            Assert.AreEqual(7L, Parse("7", 0), "a scalar has no depth");
        }

        /// <summary>depth objects, each the value of the one around it.</summary>
        static string Objects(int depth)
        {
            var text = new StringBuilder();
            for (int i = 1; i < depth; i++) text.Append("{\"a\":");
            return text.Append("{}").Append('}', depth - 1).ToString();
        }

        [Test]
        public void DeepInputNeverExhaustsTheStack()
        {
            AssertContains(Refusal(new string('[', 1000000)), "nest deeper than 32 levels");
            // With no effective limit, 200,000 levels on a thread with a 256 KiB stack: a
            // recursive reader would overflow it.
            object parsed = null;
            Exception failure = null;
            var thread = new Thread(() =>
            {
                try { parsed = Parse(new string('[', 200000) + new string(']', 200000), int.MaxValue); }
                catch (Exception e) { failure = e; }
            }, 256 * 1024);
            thread.Start();
            thread.Join();
            Assert.IsNull(failure);
            Assert.IsNotNull(parsed);
        }

        [Test]
        public void WritesCompactAsciiJson()
        {
            var value = new Dictionary<string, object>
            {
                { "n", 3L }, { "i", -4 }, { "u", 5u }, { "big", ulong.MaxValue }, { "d", 0.5 }, { "whole", 2.0 },
                { "f", 1.5f }, { "s", "q\"\\\u0001\n\u00e9" }, { "t", true }, { "z", null },
                { "list", new List<object> { 1L, "a" } }, { "ints", new[] { 1, 2 } },
            };
            Assert.AreEqual("{\"n\":3,\"i\":-4,\"u\":5,\"big\":18446744073709551615,\"d\":0.5,\"whole\":2.0,\"f\":1.5," +
                            "\"s\":\"q\\\"\\\\\\u0001\\n\\u00e9\",\"t\":true,\"z\":null,\"list\":[1,\"a\"],\"ints\":[1,2]}",
                            Json.Write(value));
        }

        [Test]
        public void WrittenValuesReadBackUnchanged()
        {
            var value = new Dictionary<string, object>
            {
                { "n", long.MinValue }, { "f", 0.1 }, { "whole", 2.0 }, { "neg0", -0.0 }, { "tiny", double.Epsilon },
                { "max", double.MaxValue }, { "s", "\U0001F600 \ud800 \u0000" },
                { "doubles", new[] { 1.5, -2.25 } }, { "floats", new[] { 0.1f } }, { "longs", new[] { 1L << 40 } },
                { "nested", new Dictionary<string, object> { { "l", new List<object> { true, null } } } },
            };
            var back = (Dictionary<string, object>)Json.Parse(Encoding.UTF8.GetBytes(Json.Write(value)), 32);
            Assert.AreEqual(long.MinValue, back["n"]);
            Assert.AreEqual(0.1, back["f"]);
            Assert.AreEqual(2.0, back["whole"], "stays a double");
            Assert.IsTrue(1 / (double)back["neg0"] < 0, "keeps the sign of -0");
            Assert.AreEqual(double.Epsilon, back["tiny"]);
            Assert.AreEqual(double.MaxValue, back["max"]);
            Assert.AreEqual("\U0001F600 \ud800 \u0000", back["s"]);
            Assert.AreEqual(new List<object> { 1.5, -2.25 }, back["doubles"]);
            Assert.AreEqual((double)0.1f, (double)(float)(double)((List<object>)back["floats"])[0]);
            Assert.AreEqual(new List<object> { 1L << 40 }, back["longs"]);
            var nested = (Dictionary<string, object>)back["nested"];
            Assert.AreEqual(new List<object> { true, null }, nested["l"]);
        }

        [Test]
        public void EveryDoubleRoundTrips()
        {
            var random = new Random(7);
            var bits = new byte[8];
            for (int i = 0; i < 20000; i++)
            {
                random.NextBytes(bits);
                double d = BitConverter.ToDouble(bits, 0);
                if (double.IsNaN(d) || double.IsInfinity(d)) continue;
                var back = Json.Parse(Encoding.ASCII.GetBytes(Json.Write(d)), 0);
                Assert.AreEqual(BitConverter.DoubleToInt64Bits(d), BitConverter.DoubleToInt64Bits((double)back), Json.Write(d));
            }
        }

        [Test]
        public void WritingNaNOrInfinityIsRefused()
        {
            AssertContains(Assert.Throws<ProtocolException>(() => Json.Write(new List<object> { double.NaN })).Message, "NaN is not a JSON value");
            AssertContains(Assert.Throws<ProtocolException>(() => Json.Write(float.PositiveInfinity)).Message, "Infinity is not a JSON value");
            Assert.Throws<ProtocolException>(() => Json.Write(new[] { 1.0, double.NegativeInfinity }));
            Assert.Throws<ProtocolException>(() => Json.Write(new Dictionary<string, object> { { "a", new[] { float.NaN } } }));
        }

        [Test]
        public void WritingOtherTypesOrAValueThatHoldsItselfIsRefused()
        {
            AssertContains(Assert.Throws<ProtocolException>(() => Json.Write(DateTime.Now)).Message, "DateTime cannot be written");
            var loop = new List<object>();
            loop.Add(loop);
            AssertContains(Assert.Throws<ProtocolException>(() => Json.Write(loop)).Message, "nests deeper");
        }
    }
}
