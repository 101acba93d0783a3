using System.Collections.Generic;
using System.Text;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class ProtocolTests
    {
        const string Valid = "\"protocol\":1,\"step\":0,\"time_ns\":0";

        static byte[] B(string text)
        {
            return Encoding.UTF8.GetBytes(text);
        }

        static List<byte[]> Message(string topic, string header, params byte[][] frames)
        {
            var list = new List<byte[]> { B(topic), B(header) };
            list.AddRange(frames);
            return list;
        }

        /// <summary>A Track message whose one binary frame has the given description.</summary>
        static List<byte[]> WithFrame(string description, int bytes)
        {
            return Message("Track", "{" + Valid + ",\"frames\":[" + description + "]}", new byte[bytes]);
        }

        static string Refusal(IList<byte[]> frames, int maxFrames = int.MaxValue)
        {
            return Assert.Throws<ProtocolException>(() => Protocol.Decode(frames, maxFrames)).Message;
        }

        static void AssertContains(string text, string part)
        {
            JsonTests.AssertContains(text, part);
        }

        [Test]
        public void EncodeThenDecodeGivesTheSameMessage()
        {
            var ranges = BinaryFrame.Of("ego/scan", new[] { 1f, 2f, float.PositiveInfinity, float.NaN, 5f, 6f }, 2, 3);
            ranges.Meta["encoding"] = "ranges";
            ranges.Meta["stamp_ns"] = 42L;
            var frames = new List<BinaryFrame>
            {
                ranges,
                BinaryFrame.Of("f64", new[] { 0.5, -1e300 }),
                BinaryFrame.Of("u8", new byte[] { 1, 255 }),
                BinaryFrame.Of("u16", new ushort[] { 65535 }),
                BinaryFrame.Of("u32", new uint[] { 4000000000 }),
                BinaryFrame.Of("i32", new[] { -7, 8 }),
                BinaryFrame.Of("empty", new float[0], 0, 5),
            };
            var body = new Dictionary<string, object> { { "x", "y" }, { "cars", new List<object> { 1.5 } } };
            var encoded = Protocol.Encode(Protocol.Update, 7, 1L << 62, body, frames);
            Assert.AreEqual(2 + frames.Count, encoded.Count);
            Assert.AreEqual("Update", Encoding.ASCII.GetString(encoded[0]));
            Assert.AreSame(ranges.Data, encoded[2], "frames travel without a copy");

            var decoded = Protocol.Decode(encoded);
            Assert.AreEqual(Protocol.Update, decoded.Topic);
            Assert.AreEqual(7L, decoded.Step);
            Assert.AreEqual(1L << 62, decoded.TimeNs);
            Assert.AreEqual("y", decoded.Header["x"]);
            Assert.AreEqual(new List<object> { 1.5 }, decoded.Header["cars"]);
            Assert.AreEqual(frames.Count, decoded.FrameList.Count);
            for (int i = 0; i < frames.Count; i++)
            {
                var back = decoded.FrameList[i];
                Assert.AreSame(back, decoded.Frames[frames[i].Name]);
                Assert.AreEqual(frames[i].Name, back.Name);
                Assert.AreEqual(frames[i].Dtype, back.Dtype);
                Assert.AreEqual(frames[i].Shape, back.Shape);
                Assert.AreEqual(frames[i].Data, back.Data);
            }
            var scan = decoded.Frames["ego/scan"];
            Assert.AreEqual(new[] { 2, 3 }, scan.Shape);
            Assert.AreEqual("ranges", scan.Meta["encoding"]);
            Assert.AreEqual(42L, scan.Meta["stamp_ns"]);
            Assert.AreEqual(2, scan.Meta.Count, "name, dtype and shape are no meta");
            Assert.AreEqual(new[] { 1f, 2f, float.PositiveInfinity, float.NaN, 5f, 6f }, scan.AsFloat32());
        }

        [Test]
        public void TheHeaderIsCompactJsonInTheReferenceOrder()
        {
            var frame = BinaryFrame.Of("a", new byte[] { 1 });
            frame.Meta["car"] = "ego";
            var encoded = Protocol.Encode(Protocol.Ready, 3, 4, new Dictionary<string, object> { { "backend", "b" } }, new[] { frame });
            Assert.AreEqual("{\"protocol\":1,\"step\":3,\"time_ns\":4,\"backend\":\"b\"," +
                            "\"frames\":[{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[1],\"car\":\"ego\"}]}",
                            Encoding.UTF8.GetString(encoded[1]));
        }

        [Test]
        public void AnErrorCarriesItsText()
        {
            var decoded = Protocol.Decode(Protocol.EncodeError(5, 6, "no \"track\""));
            Assert.AreEqual(Protocol.Error, decoded.Topic);
            Assert.AreEqual(5L, decoded.Step);
            Assert.AreEqual(6L, decoded.TimeNs);
            Assert.AreEqual("no \"track\"", decoded.Header["error"]);
            Assert.AreEqual(0, decoded.FrameList.Count);
        }

        [Test]
        public void EncodeRefusesWhatDecodeWouldRefuse()
        {
            AssertContains(Assert.Throws<ProtocolException>(() => Protocol.Encode("Bogus", 0, 0, null, null)).Message,
                           "unknown protocol topic 'Bogus'");
            var notFinite = new Dictionary<string, object> { { "pose", new[] { 0.0, double.NaN } } };
            AssertContains(Assert.Throws<ProtocolException>(() => Protocol.Encode(Protocol.Update, 9, 0, notFinite, null)).Message,
                           "Update of step 9: NaN is not a JSON value; a header holds finite numbers only");
            var twice = new[] { BinaryFrame.Of("a", new byte[1]), BinaryFrame.Of("a", new byte[1]) };
            AssertContains(Assert.Throws<ProtocolException>(() => Protocol.Encode(Protocol.Track, 0, 0, null, twice)).Message,
                           "two binary frames are named 'a'");
            var tooShort = BinaryFrame.Of("a", new byte[3]);
            tooShort.Shape = new[] { 4 };
            AssertContains(Assert.Throws<ProtocolException>(() => Protocol.Encode(Protocol.Track, 0, 0, null, new[] { tooShort })).Message,
                           "declares shape [4] (uint8) but carries 3 bytes");
            var odd = BinaryFrame.Of("a", new byte[2]);
            odd.Dtype = "float16";
            AssertContains(Assert.Throws<ProtocolException>(() => Protocol.Encode(Protocol.Track, 0, 0, null, new[] { odd })).Message,
                           "has dtype 'float16'");
        }

        [TestCase(0)]
        [TestCase(1)]
        public void AMessageHasAtLeastTwoFrames(int count)
        {
            var frames = Message("Update", "{}").GetRange(0, count);
            Assert.AreEqual("a protocol message has at least 2 frames (topic, header), got " + count, Refusal(frames));
        }

        [Test]
        public void AnUnknownTopicIsRefusedQuotedAndClipped()
        {
            Assert.AreEqual("unknown protocol topic 'Bogus'; expected one of ['Error', 'InitialSettings', 'Ready', 'Track', 'Update']",
                            Refusal(Message("Bogus", "{}")));
            string error = Refusal(Message(new string('x', 5000), "{}"));
            AssertContains(error, "'" + new string('x', 200) + "... (5000 characters)'");
            Assert.IsTrue(error.Length < 400, error);
            AssertContains(Refusal(new List<byte[]> { new byte[] { 0xFF, 0x55 }, B("{}") }), "unknown protocol topic '\ufffdU'");
        }

        [TestCase("[1]", "Update: header must be a JSON object")]
        [TestCase("\"text\"", "Update: header must be a JSON object")]
        [TestCase("null", "Update: header must be a JSON object")]
        [TestCase("{\"protocol\":1,", "Update: header is not valid JSON (unexpected end of input")]
        [TestCase("{\"protocol\":NaN}", "Update: header is not valid JSON (NaN is not a JSON value at byte 12)")]
        [TestCase("{\"step\":1e999}", "Update: header is not valid JSON (number 1e999 is beyond the range of a double")]
        public void AHeaderThatIsNoJsonObjectIsRefused(string header, string reason)
        {
            AssertContains(Refusal(Message("Update", header)), reason);
        }

        [Test]
        public void AHeaderOfInvalidUtf8IsRefused()
        {
            var frames = new List<byte[]> { B("Update"), new byte[] { 0x7B, 0x22, 0xC0, 0x80, 0x22, 0x3A, 0x31, 0x7D } };
            AssertContains(Refusal(frames), "Update: header is not valid JSON (invalid UTF-8");
        }

        [Test]
        public void AHeaderNestedDeeperThan32IsRefused()
        {
            string lists = new string('[', 31) + new string(']', 31);
            Assert.IsNotNull(Protocol.Decode(Message("Update", "{" + Valid + ",\"x\":" + lists + "}")));
            string deeper = new string('[', 32) + new string(']', 32);
            Assert.AreEqual("Update: header nests deeper than 32 levels", Refusal(Message("Update", "{" + Valid + ",\"x\":" + deeper + "}")));
            string huge = new string('[', 200000) + new string(']', 200000);
            Assert.AreEqual("Update: header nests deeper than 32 levels", Refusal(Message("Update", "{" + Valid + ",\"x\":" + huge + "}")));
        }

        [TestCase("{\"step\":0,\"time_ns\":0}", "None")]
        [TestCase("{\"protocol\":2,\"step\":0,\"time_ns\":0}", "2")]
        [TestCase("{\"protocol\":\"1\",\"step\":0,\"time_ns\":0}", "'1'")]
        [TestCase("{\"protocol\":1.0,\"step\":0,\"time_ns\":0}", "1.0")]
        [TestCase("{\"protocol\":true,\"step\":0,\"time_ns\":0}", "True")]
        [TestCase("{\"protocol\":null,\"step\":0,\"time_ns\":0}", "None")]
        public void AnotherVersionIsRefusedNamingBoth(string header, string shown)
        {
            Assert.AreEqual("Update: peer speaks arsim protocol version " + shown + ", this side speaks version 1; update the older side",
                            Refusal(Message("Update", header)));
        }

        [Test]
        public void AnErrorIsReadWhateverItsVersion()
        {
            var message = Protocol.Decode(Message("Error", "{\"protocol\":9,\"step\":1,\"time_ns\":2,\"error\":\"no\"}"));
            Assert.AreEqual("no", message.Header["error"]);
            Assert.IsNotNull(Protocol.Decode(Message("Error", "{\"step\":1,\"time_ns\":2}")));
        }

        [TestCase("step", "1.5")]
        [TestCase("step", "\"1\"")]
        [TestCase("step", "true")]
        [TestCase("step", "null")]
        [TestCase("step", "9223372036854775808")]
        [TestCase("time_ns", "-9223372036854775809")]
        [TestCase("time_ns", "18446744073709551615")]
        [TestCase("time_ns", "[0]")]
        public void StepAndTimeAreInt64Integers(string key, string value)
        {
            string header = "{\"protocol\":1,\"step\":0,\"time_ns\":0,\"" + key + "\":" + value + "}";
            Assert.AreEqual("Update: header key '" + key + "' must be an integer that fits in 64 bits", Refusal(Message("Update", header)));
        }

        [TestCase("step")]
        [TestCase("time_ns")]
        public void StepAndTimeAreRequired(string key)
        {
            string header = key == "step" ? "{\"protocol\":1,\"time_ns\":0}" : "{\"protocol\":1,\"step\":0}";
            AssertContains(Refusal(Message("Update", header)), "'" + key + "' must be an integer");
        }

        [Test]
        public void TheInt64RangeIsReadWhole()
        {
            var message = Protocol.Decode(Message("Update", "{\"protocol\":1,\"step\":-9223372036854775808,\"time_ns\":9223372036854775807}"));
            Assert.AreEqual(long.MinValue, message.Step);
            Assert.AreEqual(long.MaxValue, message.TimeNs);
        }

        [Test]
        public void TheHeaderListsEveryBinaryFrame()
        {
            Assert.AreEqual(0, Protocol.Decode(Message("Update", "{" + Valid + "}")).FrameList.Count, "no frames key: no frames");
            Assert.AreEqual("Update: header lists 0 binary frames but the message carries 1",
                            Refusal(Message("Update", "{" + Valid + "}", new byte[1])));
            Assert.AreEqual("Update: header lists 1 binary frames but the message carries 0",
                            Refusal(Message("Update", "{" + Valid + ",\"frames\":[{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[1]}]}")));
            Assert.AreEqual("Update: header lists no binary frames but the message carries 0",
                            Refusal(Message("Update", "{" + Valid + ",\"frames\":null}")));
            Assert.AreEqual("Update: header lists no binary frames but the message carries 1",
                            Refusal(Message("Update", "{" + Valid + ",\"frames\":{}}", new byte[1])));
        }

        [TestCase("7")]
        [TestCase("{\"dtype\":\"uint8\",\"shape\":[1]}")]
        [TestCase("{\"name\":5,\"dtype\":\"uint8\",\"shape\":[1]}")]
        [TestCase("{\"name\":null,\"dtype\":\"uint8\",\"shape\":[1]}")]
        public void EveryFrameNeedsAStringName(string description)
        {
            Assert.AreEqual("Track: every frame description needs a string \"name\"", Refusal(WithFrame(description, 1)));
        }

        [Test]
        public void TwoFramesOfOneNameAreRefused()
        {
            const string frame = "{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[1]}";
            var message = Message("Track", "{" + Valid + ",\"frames\":[" + frame + "," + frame + "]}", new byte[1], new byte[1]);
            Assert.AreEqual("Track: two binary frames are named 'a'", Refusal(message));
            const string broken = "{\"name\":\"a\",\"dtype\":\"float16\"}";
            message = Message("Track", "{" + Valid + ",\"frames\":[" + frame + "," + broken + "]}", new byte[1], new byte[1]);
            Assert.AreEqual("Track: two binary frames are named 'a'", Refusal(message), "names are checked before the rest");
        }

        [TestCase("\"float16\"", "'float16'")]
        [TestCase("\"UINT8\"", "'UINT8'")]
        [TestCase("null", "None")]
        [TestCase("8", "8")]
        public void AnUnknownDtypeIsRefused(string dtype, string shown)
        {
            string description = "{\"name\":\"a\",\"dtype\":" + dtype + ",\"shape\":[1]}";
            Assert.AreEqual("Track: frame 'a' has dtype " + shown +
                            "; expected one of ['float32', 'float64', 'int16', 'int32', 'int8', 'uint16', 'uint32', 'uint8']",
                            Refusal(WithFrame(description, 1)));
        }

        [Test]
        public void AMissingDtypeIsRefused()
        {
            AssertContains(Refusal(WithFrame("{\"name\":\"a\",\"shape\":[1]}", 1)), "frame 'a' has dtype None");
        }

        [TestCase("\"12\"")]
        [TestCase("null")]
        [TestCase("[1,1,1,1,1,1,1,1,1]")]
        [TestCase("[-1]")]
        [TestCase("[1.0]")]
        [TestCase("[true,3]")]
        [TestCase("[[1]]")]
        public void AShapeIsAtMost8NonNegativeIntegers(string shape)
        {
            Assert.AreEqual("Track: frame 'a' needs a shape of at most 8 non-negative integers",
                            Refusal(WithFrame("{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":" + shape + "}", 1)));
        }

        [Test]
        public void AFrameWithoutAShapeIsRefused()
        {
            AssertContains(Refusal(WithFrame("{\"name\":\"a\",\"dtype\":\"uint8\"}", 1)), "needs a shape");
        }

        [TestCase("float32", "[3]", 8)]
        [TestCase("float32", "[2, 3]", 23)]
        [TestCase("uint16", "[]", 1)]
        [TestCase("float64", "[1, 1, 1, 1, 1, 1, 1, 1]", 4)]
        [TestCase("uint8", "[4294967296, 4294967296]", 0)]
        [TestCase("uint8", "[18446744073709551615]", 0)]
        [TestCase("uint8", "[4294967296, 4294967296, 1024]", 0)]
        [TestCase("float64", "[2305843009213693952]", 0)]
        [TestCase("uint8", "[2, 2]", 0)]
        public void TheBytesMustMatchTheShapeExactly(string dtype, string shape, int bytes)
        {
            string description = "{\"name\":\"a\",\"dtype\":\"" + dtype + "\",\"shape\":" + shape.Replace(" ", "") + "}";
            Assert.AreEqual("Track: frame 'a' declares shape " + shape + " (" + dtype + ") but carries " + bytes + " bytes",
                            Refusal(WithFrame(description, bytes)));
        }

        [Test]
        public void AnEmptyFrameMayHaveZeroInAnyDimension()
        {
            var message = Protocol.Decode(WithFrame("{\"name\":\"a\",\"dtype\":\"float32\",\"shape\":[0,3]}", 0));
            Assert.AreEqual(new[] { 0, 3 }, message.Frames["a"].Shape);
            Assert.AreEqual(new int[0], Protocol.Decode(WithFrame("{\"name\":\"a\",\"dtype\":\"uint16\",\"shape\":[]}", 2)).Frames["a"].Shape);
        }

        [Test]
        public void AnEmptyFrameWithADimensionNoArrayCanHaveIsRefused()
        {
            AssertContains(Refusal(WithFrame("{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[4611686018427387904,0]}", 0)),
                           "Track: frame 'a' declares shape [4611686018427387904, 0]: a dimension above 2147483647");
        }

        [Test]
        public void ErrorsQuoteLongNamesClipped()
        {
            string name = new string('n', 300);
            string error = Refusal(WithFrame("{\"name\":\"" + name + "\",\"dtype\":\"x\",\"shape\":[1]}", 1));
            AssertContains(error, "frame '" + new string('n', 200) + "... (300 characters)' has dtype 'x'");
        }

        [Test]
        public void MoreFramesThanARequestMayHaveAreRefusedWhenAsked()
        {
            var frames = Message("Track", "{" + Valid + "}");
            for (int i = 0; i < Protocol.MaxRequestFrames - 1; i++) frames.Add(new byte[1]);
            int bytes = frames[0].Length + frames[1].Length + Protocol.MaxRequestFrames - 1;
            Assert.AreEqual("request of more than 64 frames; refused unread (65 frames, " + bytes + " bytes)",
                            Refusal(frames, Protocol.MaxRequestFrames));
            frames.RemoveAt(frames.Count - 1);
            AssertContains(Refusal(frames, Protocol.MaxRequestFrames), "header lists 0 binary frames");
            AssertContains(Refusal(frames), "header lists 0 binary frames");
        }

        [Test]
        public void ManyFramesDecodeWithoutALimit()
        {
            var descriptions = new List<string>();
            var frames = new List<byte[]>();
            for (int i = 0; i < 100; i++)
            {
                descriptions.Add("{\"name\":\"f" + i + "\",\"dtype\":\"uint8\",\"shape\":[1],\"car\":\"c\"}");
                frames.Add(new[] { (byte)i });
            }
            var message = Protocol.Decode(Message("Update", "{" + Valid + ",\"frames\":[" + string.Join(",", descriptions) + "]}", frames.ToArray()));
            Assert.AreEqual(100, message.FrameList.Count);
            Assert.AreEqual(99, message.Frames["f99"].Data[0]);
            Assert.AreEqual("c", message.Frames["f99"].Meta["car"]);
        }
    }
}
