using System;
using System.Collections.Generic;
using System.Text;
using Arsim.Core;
using NUnit.Framework;

namespace Arsim.Host.Tests
{
    [TestFixture]
    public class ServiceLogTests
    {
        readonly List<string> lines = new List<string>();

        [SetUp]
        public void Clear() { lines.Clear(); }

        ServiceLog Log(bool debug) { return new ServiceLog(lines.Add, debug); }

        static List<byte[]> Request(string topic) { return new List<byte[]> { Encoding.ASCII.GetBytes(topic), new byte[0] }; }

        static List<byte[]> Ready(string track, int sensors)
        {
            var listed = new List<object>();
            for (var i = 0; i < sensors; i++)
                listed.Add(new Dictionary<string, object> { { "car", "ego" }, { "sensor", "s" + i }, { "type", "lidar2d" } });
            return Protocol.Encode(Protocol.Ready, 0, 0, new Dictionary<string, object>
                { { "backend", MeshRayCaster.RendererName }, { "track", track }, { "sensors", listed } }, null);
        }

        [Test]
        public void TheStartNamesTheProtocolAndTheAddress()
        {
            Log(false).Started("tcp://127.0.0.1:5555");
            Assert.AreEqual("arsim C# host serving protocol v1 at tcp://127.0.0.1:5555", lines[0]);
        }

        [Test]
        public void InitialSettingsIsLoggedWithTheTrackItsTrianglesAndTheSensors()
        {
            Log(false).Served(Request(Protocol.InitialSettings), Ready("Spielberg", 2), 88962, TimeSpan.FromMilliseconds(150));
            Assert.AreEqual("InitialSettings: track 'Spielberg' (88962 triangles), 2 rendered sensor(s): ego/s0 lidar2d, ego/s1 lidar2d", lines[0]);
        }

        [Test]
        public void ALongSensorListIsCut()
        {
            Log(false).Served(Request(Protocol.InitialSettings), Ready("ring", 11), 10, TimeSpan.Zero);
            Expect.Contains("11 rendered sensor(s): ego/s0 lidar2d", lines[0]);
            Expect.Contains("ego/s7 lidar2d and 3 more", lines[0]);
        }

        [Test]
        public void ATrackSwitchIsLoggedWithItsTriangles()
        {
            Log(false).Served(Request(Protocol.Track), Ready("Monza", 2), 1234, TimeSpan.Zero);
            Assert.AreEqual("Track: track 'Monza' (1234 triangles)", lines[0]);
        }

        [Test]
        public void AnErrorReplyIsLoggedWithItsReason()
        {
            Log(false).Served(Request(Protocol.Update), Protocol.EncodeError(7, 100, "Update before InitialSettings"), 0, TimeSpan.Zero);
            Assert.AreEqual("Error reply to Update (step 7): Update before InitialSettings", lines[0]);
        }

        [Test]
        public void UpdatesAreLoggedOnlyAtDebugLevel()
        {
            var reply = Protocol.Encode(Protocol.Update, 3, 10, new Dictionary<string, object>(), null);
            Log(false).Served(Request(Protocol.Update), reply, 0, TimeSpan.Zero);
            Assert.AreEqual(0, lines.Count);
            Log(true).Served(Request(Protocol.Update), reply, 0, TimeSpan.FromTicks(25000));
            Expect.Contains("Update: Update reply with 0 frame(s)", lines[0]);
            Expect.Contains("(2.5 ms)", lines[0]);
        }

        [Test]
        public void AGarbledTopicIsShownPrintably()
        {
            var request = new List<byte[]> { new byte[] { 0x01, 0x41 } };
            Log(false).Served(request, Protocol.EncodeError(0, 0, "bad topic"), 0, TimeSpan.Zero);
            Assert.AreEqual("Error reply to ?A (step 0): bad topic", lines[0]);
        }
    }
}
