using System;
using System.Collections.Generic;
using System.IO;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    /// <summary>A real ZmtpRepServer on loopback, spoken to by a minimal ZMTP 3.0 REQ client
    /// over a raw socket, as libzmq would.</summary>
    [TestFixture]
    public class ZmtpTests
    {
        ZmtpRepServer server;
        Thread echo;
        volatile bool stop;

        [SetUp]
        public void StartEchoServer()
        {
            server = new ZmtpRepServer("tcp://127.0.0.1:0", false, 64L << 20);
            server.Start();
            stop = false;
            echo = new Thread(() =>
            {
                while (!stop)
                {
                    ZmtpRequest request;
                    if (server.TryTake(out request, 50)) request.Reply(new List<byte[]>(request.Frames));
                }
            });
            echo.Start();
        }

        [TearDown]
        public void StopServer()
        {
            stop = true;
            echo.Join();
            server.Dispose();
        }

        sealed class ReqClient : IDisposable
        {
            readonly TcpClient client;
            readonly NetworkStream stream;

            public ReqClient(int port, string socketType = "REQ")
            {
                client = new TcpClient("127.0.0.1", port);
                stream = client.GetStream();
                stream.ReadTimeout = 5000;
                var greeting = new byte[64];
                greeting[0] = 0xFF; greeting[9] = 0x7F; greeting[10] = 3;
                Encoding.ASCII.GetBytes("NULL").CopyTo(greeting, 12);
                stream.Write(greeting, 0, 64);
                Read(64);
                var ready = new MemoryStream();
                ready.WriteByte(5); ready.Write(Encoding.ASCII.GetBytes("READY"), 0, 5);
                ready.WriteByte(11); ready.Write(Encoding.ASCII.GetBytes("Socket-Type"), 0, 11);
                ready.Write(new byte[] { 0, 0, 0, (byte)socketType.Length }, 0, 4);
                ready.Write(Encoding.ASCII.GetBytes(socketType), 0, socketType.Length);
                WriteFrame(4, ready.ToArray());
                byte flags;
                var command = ReadFrame(out flags);
                Assert.AreEqual(4, flags & 4, "the server's READY is a command");
                StringAssert.Contains("REP", Encoding.ASCII.GetString(command));
            }

            public void WriteFrame(byte flags, byte[] body)
            {
                if (body.Length > 255)
                {
                    stream.WriteByte((byte)(flags | 2));
                    var size = BitConverter.GetBytes((long)body.Length);
                    Array.Reverse(size);
                    stream.Write(size, 0, 8);
                }
                else
                {
                    stream.WriteByte(flags);
                    stream.WriteByte((byte)body.Length);
                }
                stream.Write(body, 0, body.Length);
            }

            public void Send(params byte[][] frames)
            {
                WriteFrame(1, new byte[0]);  // the REQ envelope's delimiter
                for (var i = 0; i < frames.Length; i++) WriteFrame(i < frames.Length - 1 ? (byte)1 : (byte)0, frames[i]);
            }

            public List<byte[]> Receive()
            {
                var frames = new List<byte[]>();
                byte flags;
                do frames.Add(ReadFrame(out flags)); while ((flags & 1) != 0);
                Assert.AreEqual(0, frames[0].Length, "the reply starts with the envelope");
                return frames.GetRange(1, frames.Count - 1);
            }

            public byte[] ReadFrame(out byte flags)
            {
                flags = Read(1)[0];
                long size;
                if ((flags & 2) != 0)
                {
                    var bytes = Read(8);
                    Array.Reverse(bytes);
                    size = BitConverter.ToInt64(bytes, 0);
                }
                else size = Read(1)[0];
                return Read((int)size);
            }

            public byte[] Read(int count)
            {
                var buffer = new byte[count];
                for (var at = 0; at < count;)
                {
                    var read = stream.Read(buffer, at, count - at);
                    if (read <= 0) throw new IOException("closed");  // a timeout throws another message
                    at += read;
                }
                return buffer;
            }

            public void Raw(byte[] bytes) { stream.Write(bytes, 0, bytes.Length); }

            public void Dispose() { client.Close(); }
        }

        [Test]
        public void ARequestComesBackOnItsConnection()
        {
            using (var client = new ReqClient(server.Port))
            {
                client.Send(Encoding.ASCII.GetBytes("Update"), Encoding.ASCII.GetBytes("{}"));
                var reply = client.Receive();
                Assert.AreEqual(2, reply.Count);
                Assert.AreEqual("Update", Encoding.ASCII.GetString(reply[0]));
            }
        }

        [Test]
        public void AFrameOfManyMegabytesArrivesWhole()
        {
            var big = new byte[20 << 20];
            new Random(1).NextBytes(big);
            using (var client = new ReqClient(server.Port))
            {
                client.Send(Encoding.ASCII.GetBytes("Track"), big);
                var reply = client.Receive();
                Assert.AreEqual(big, reply[1]);
            }
        }

        [Test]
        public void TwoClientsAreServedAtOnce()
        {
            using (var first = new ReqClient(server.Port))
            using (var second = new ReqClient(server.Port))
            {
                first.Send(Encoding.ASCII.GetBytes("one"));
                second.Send(Encoding.ASCII.GetBytes("two"));
                Assert.AreEqual("two", Encoding.ASCII.GetString(second.Receive()[0]));
                Assert.AreEqual("one", Encoding.ASCII.GetString(first.Receive()[0]));
            }
        }

        [Test]
        public void APeerSendingGarbageIsDroppedAndOthersAreServed()
        {
            using (var good = new ReqClient(server.Port))
            using (var bad = new TcpClient("127.0.0.1", server.Port))
            {
                var garbage = Encoding.ASCII.GetBytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + new string('x', 100));
                bad.GetStream().Write(garbage, 0, garbage.Length);
                bad.GetStream().ReadTimeout = 5000;
                var sink = new byte[4096];
                var total = 0;
                int read;
                try
                {
                    while ((read = bad.GetStream().Read(sink, 0, sink.Length)) > 0) total += read;
                }
                catch (IOException) { }
                Assert.LessOrEqual(total, 64, "the server sent only its greeting before closing");
                good.Send(Encoding.ASCII.GetBytes("still"));
                Assert.AreEqual("still", Encoding.ASCII.GetString(good.Receive()[0]));
            }
        }

        [Test]
        public void AMessageOverTheLimitClosesOnlyThatConnection()
        {
            using (var good = new ReqClient(server.Port))
            using (var greedy = new ReqClient(server.Port))
            {
                greedy.WriteFrame(1, new byte[0]);
                greedy.Raw(new byte[] { 2, 0, 0, 0, 1, 0, 0, 0, 0 });  // a frame of 4 GiB announced
                Assert.AreEqual("closed", Assert.Throws<IOException>(() => greedy.Read(1)).Message);
                good.Send(Encoding.ASCII.GetBytes("fine"));
                Assert.AreEqual("fine", Encoding.ASCII.GetString(good.Receive()[0]));
            }
        }

        [Test]
        public void APingIsAnsweredWithPong()
        {
            using (var client = new ReqClient(server.Port))
            {
                client.WriteFrame(4, new byte[] { 4, (byte)'P', (byte)'I', (byte)'N', (byte)'G', 0, 10, (byte)'c' });
                byte flags;
                var pong = client.ReadFrame(out flags);
                Assert.AreEqual(4, flags & 4);
                Assert.AreEqual("PONGc", Encoding.ASCII.GetString(pong, 1, pong.Length - 1));
            }
        }

        [Test]
        public void APeerOfAnotherSocketTypeIsRefused()
        {
            using (var publisher = new ReqClient(server.Port, "PUB"))
                Assert.AreEqual("closed", Assert.Throws<IOException>(() => publisher.Read(1)).Message);
        }

        [TestCase("tcp://10.0.0.1:5555")]
        [TestCase("tcp://*:5555")]
        [TestCase("ipc:///tmp/x")]
        [TestCase("tcp://127.0.0.1:99999")]
        [TestCase("tcp://[::1]:5555")]
        public void OnlyLoopbackAddressesBindWithoutAllowRemote(string address)
        {
            Assert.Throws<ArgumentException>(() => new ZmtpRepServer(address, false, 1024));
        }

        [Test]
        public void AllowRemoteOpensOtherInterfaces()
        {
            string host;
            int port;
            Endpoint.Parse("tcp://*:5555", true, out host, out port);
            Assert.AreEqual("0.0.0.0", host);
            Endpoint.Parse("tcp://localhost:0", false, out host, out port);
            Assert.AreEqual("127.0.0.1", host);
            Assert.AreEqual(0, port);
        }
    }
}
