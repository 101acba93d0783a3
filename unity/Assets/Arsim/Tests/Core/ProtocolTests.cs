using System.Collections.Generic;
using System.Text;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class ProtocolTests
    {
        static byte[] B(string text) { return Encoding.UTF8.GetBytes(text); }

        static List<byte[]> Message(string topic, string header, params byte[][] frames)
        {
            var list = new List<byte[]> { B(topic), B(header) };
            list.AddRange(frames);
            return list;
        }

        [Test]
        public void EncodeThenDecodeGivesTheSameMessage()
        {
            var frame = BinaryFrame.Of("ego/scan", new[] { 1f, 2f, float.PositiveInfinity }, 3);
            frame.Meta["encoding"] = "ranges";
            var encoded = Protocol.Encode(Protocol.Update, 7, 1L << 62, new Dictionary<string, object> { { "x", "y" } }, new[] { frame });
            var decoded = Protocol.Decode(encoded);
            Assert.AreEqual(Protocol.Update, decoded.Topic);
            Assert.AreEqual(7L, decoded.Step);
            Assert.AreEqual(1L << 62, decoded.TimeNs);
            Assert.AreEqual("y", decoded.Header["x"]);
            var back = decoded.Frame("ego/scan");
            Assert.AreEqual("float32", back.Dtype);
            Assert.AreEqual(new[] { 3 }, back.Shape);
            Assert.AreEqual("ranges", back.Meta["encoding"]);
            Assert.AreEqual(new[] { 1f, 2f, float.PositiveInfinity }, back.AsFloat32());
        }

        [Test]
        public void AnotherVersionIsRefusedNamingBoth()
        {
            var error = Assert.Throws<ProtocolException>(() => Protocol.Decode(Message("Update", "{\"protocol\":2,\"step\":0,\"time_ns\":0}")));
            StringAssert.Contains("peer speaks arsim protocol version 2, this side speaks version 1", error.Message);
        }

        [Test]
        public void AnErrorIsReadWhateverItsVersion()
        {
            var message = Protocol.Decode(Message("Error", "{\"protocol\":9,\"step\":1,\"time_ns\":2,\"error\":\"no\"}"));
            Assert.AreEqual("no", message.Header["error"]);
        }

        [TestCase("Bogus", "{}", "unknown protocol topic 'Bogus'")]
        [TestCase("Update", "[1]", "header must be a JSON object")]
        [TestCase("Update", "{\"protocol\":1,\"step\":1.5,\"time_ns\":0}", "'step' must be an integer that fits in 64 bits")]
        [TestCase("Update", "{\"protocol\":1,\"step\":0,\"time_ns\":9223372036854775808}", "'time_ns' must be an integer")]
        [TestCase("Update", "{\"protocol\":1,\"step\":0,\"time_ns\":0,\"frames\":[{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[1]}]}", "header lists 1 binary frames but the message carries 0")]
        public void MalformedHeadersAreRefusedWithTheReason(string topic, string header, string reason)
        {
            var error = Assert.Throws<ProtocolException>(() => Protocol.Decode(Message(topic, header)));
            StringAssert.Contains(reason, error.Message);
        }

        [TestCase("{\"name\":\"a\",\"dtype\":\"float16\",\"shape\":[2]}", 4, "has dtype 'float16'")]
        [TestCase("{\"name\":\"a\",\"dtype\":\"float32\",\"shape\":[3]}", 8, "declares shape [3] (float32) but carries 8 bytes")]
        [TestCase("{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[1,1,1,1,1,1,1,1,1]}", 1, "a shape of at most 8")]
        [TestCase("{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[-1]}", 0, "non-negative integers")]
        [TestCase("{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[4294967296,4294967296,1024]}", 0, "but carries 0 bytes")]
        [TestCase("{\"dtype\":\"uint8\",\"shape\":[1]}", 1, "needs a string \"name\"")]
        public void BadFrameDescriptionsAreRefused(string description, int bytes, string reason)
        {
            var header = "{\"protocol\":1,\"step\":0,\"time_ns\":0,\"frames\":[" + description + "]}";
            var error = Assert.Throws<ProtocolException>(() => Protocol.Decode(Message("Track", header, new byte[bytes])));
            StringAssert.Contains(reason, error.Message);
        }

        [Test]
        public void TwoFramesOfOneNameAreRefused()
        {
            const string header = "{\"protocol\":1,\"step\":0,\"time_ns\":0,\"frames\":[{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[1]},{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[1]}]}";
            var error = Assert.Throws<ProtocolException>(() => Protocol.Decode(Message("Track", header, new byte[1], new byte[1])));
            StringAssert.Contains("two binary frames are named 'a'", error.Message);
        }

        [Test]
        public void TooManyFramesInARequestAreRefused()
        {
            var frames = Message("Track", "{\"protocol\":1,\"step\":0,\"time_ns\":0}");
            for (var i = 0; i < 70; i++) frames.Add(new byte[0]);
            var error = Assert.Throws<ProtocolException>(() => Protocol.Decode(frames, Protocol.MaxRequestFrames));
            StringAssert.Contains("at most 64 frames", error.Message);
        }

        [Test]
        public void AShortMessageIsRefused()
        {
            Assert.Throws<ProtocolException>(() => Protocol.Decode(new List<byte[]> { B("Update") }));
        }
    }
}
