using System.Collections.Generic;
using System.Text;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class JsonTests
    {
        static object Parse(string text, int depth = 32) { return Json.Parse(Encoding.UTF8.GetBytes(text), depth); }

        [Test]
        public void ReadsEveryKindOfValue()
        {
            var value = (Dictionary<string, object>)Parse(
                "{\"a\": [1, -2, 3.5, 1e3, true, false, null, \"x\\u00e9\\n\"], \"big\": 18446744073709551615, \"huge\": 123456789012345678901234567890}");
            var list = (List<object>)value["a"];
            Assert.AreEqual(1L, list[0]);
            Assert.AreEqual(-2L, list[1]);
            Assert.AreEqual(3.5, list[2]);
            Assert.AreEqual(1000.0, list[3]);
            Assert.AreEqual(true, list[4]);
            Assert.AreEqual(false, list[5]);
            Assert.IsNull(list[6]);
            Assert.AreEqual("x\u00e9\n", list[7]);
            Assert.AreEqual(ulong.MaxValue, value["big"]);
            Assert.IsInstanceOf<double>(value["huge"]);
        }

        [TestCase("NaN")]
        [TestCase("[Infinity]")]
        [TestCase("{\"a\": -Infinity}")]
        [TestCase("[1,]")]
        [TestCase("{\"a\" 1}")]
        [TestCase("[01]")]
        [TestCase("\"tab\there\"")]
        [TestCase("{} {}")]
        [TestCase("[1.]")]
        [TestCase("")]
        public void RefusesWhatIsNotStrictJson(string text)
        {
            Assert.Throws<ProtocolException>(() => Parse(text));
        }

        [Test]
        public void RefusesNestingDeeperThanTheLimitWithoutRecursingFurther()
        {
            Assert.DoesNotThrow(() => Parse(new string('[', 32) + new string(']', 32)));
            var error = Assert.Throws<ProtocolException>(() => Parse(new string('[', 100000)));
            StringAssert.Contains("nests deeper than 32", error.Message);
        }

        [Test]
        public void RefusesInvalidUtf8()
        {
            Assert.Throws<ProtocolException>(() => Json.Parse(new byte[] { 0x22, 0xC3, 0x28, 0x22 }, 32));
        }

        [Test]
        public void WritesCompactJsonThatReadsBack()
        {
            var value = new Dictionary<string, object>
            {
                { "n", 3L }, { "f", 0.1 }, { "whole", 2.0 }, { "s", "q\"\\\u0001" }, { "list", new[] { 1.5f, 2f } },
                { "nested", new List<object> { true, null } },
            };
            var text = Json.Write(value);
            StringAssert.DoesNotContain(" ", text);
            var back = (Dictionary<string, object>)Parse(text);
            Assert.AreEqual(3L, back["n"]);
            Assert.AreEqual(0.1, back["f"]);
            Assert.AreEqual(2.0, back["whole"]);  // stays a float, not an integer
            Assert.AreEqual("q\"\\\u0001", back["s"]);
            Assert.AreEqual(new List<object> { 1.5, 2.0 }, back["list"]);
        }

        [Test]
        public void WritingNaNOrInfinityIsRefused()
        {
            Assert.Throws<ProtocolException>(() => Json.Write(new List<object> { double.NaN }));
            Assert.Throws<ProtocolException>(() => Json.Write(float.PositiveInfinity));
        }
    }
}
