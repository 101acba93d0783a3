using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    /// <summary>A minimal ZMTP 3.0 peer over a raw socket, speaking as libzmq's REQ socket
    /// does: greeting, READY, then each request behind an empty delimiter frame.</summary>
    sealed class RawZmtpClient : IDisposable
    {
        public const byte More = 1, Long = 2, Command = 4;
        readonly TcpClient _client;
        readonly NetworkStream _stream;

        public RawZmtpClient(int port)
        {
            _client = new TcpClient("127.0.0.1", port) { NoDelay = true, ReceiveTimeout = 10000 };
            _stream = _client.GetStream();
        }

        public byte[] PeerGreeting { get; private set; }
        public byte[] PeerReady { get; private set; }

        public static RawZmtpClient Connected(int port, string socketType = "REQ")
        {
            var client = new RawZmtpClient(port);
            client.Handshake(socketType);
            return client;
        }

        /// <summary>A greeting as libzmq 4.3 sends it: version 3.1, mechanism NULL.</summary>
        public static byte[] Greeting(byte major = 3, string mechanism = "NULL")
        {
            var greeting = new byte[64];
            greeting[0] = 0xFF;
            greeting[8] = 1;
            greeting[9] = 0x7F;
            greeting[10] = major;
            greeting[11] = 1;
            Encoding.ASCII.GetBytes(mechanism, 0, mechanism.Length, greeting, 12);
            return greeting;
        }

        public void Handshake(string socketType)
        {
            WriteRaw(Greeting());
            PeerGreeting = ReadExactly(64);
            WriteFrame(Command, Ready(socketType));
            byte flags;
            PeerReady = ReadFrame(out flags);
            Assert.AreEqual(Command, flags, "READY comes as a short command frame");
        }

        /// <summary>READY with Socket-Type and an empty Identity, as a libzmq REQ socket sends.</summary>
        public static byte[] Ready(string socketType)
        {
            var body = new MemoryStream();
            body.Write(CommandName("READY"), 0, 6);
            Property(body, "Socket-Type", socketType);
            Property(body, "Identity", "");
            return body.ToArray();
        }

        static void Property(MemoryStream body, string name, string value)
        {
            body.WriteByte((byte)name.Length);
            body.Write(Encoding.ASCII.GetBytes(name), 0, name.Length);
            body.Write(new byte[] { 0, 0, 0, (byte)value.Length }, 0, 4);
            body.Write(Encoding.ASCII.GetBytes(value), 0, value.Length);
        }

        public static byte[] CommandName(string name)
        {
            var bytes = new byte[1 + name.Length];
            bytes[0] = (byte)name.Length;
            Encoding.ASCII.GetBytes(name, 0, name.Length, bytes, 1);
            return bytes;
        }

        /// <summary>A request: the empty delimiter, then the frames.</summary>
        public void Send(params byte[][] frames)
        {
            WriteFrame(More, new byte[0]);
            for (int i = 0; i < frames.Length; i++) WriteFrame(i < frames.Length - 1 ? More : (byte)0, frames[i]);
        }

        /// <summary>A reply's frames after the delimiter.</summary>
        public List<byte[]> Receive()
        {
            var frames = ReceiveMessage();
            Assert.AreEqual(0, frames[0].Length, "a reply to a REQ peer starts with the empty delimiter");
            return frames.GetRange(1, frames.Count - 1);
        }

        public List<byte[]> ReceiveMessage()
        {
            var frames = new List<byte[]>();
            byte flags;
            do
            {
                frames.Add(ReadFrame(out flags));
                Assert.AreEqual(0, flags & Command, "no command inside a message");
            } while ((flags & More) != 0);
            return frames;
        }

        public void WriteFrame(byte flags, byte[] body, bool longForm = false)
        {
            if (body.Length > 255 || longForm)
            {
                var size = BitConverter.GetBytes((long)body.Length);
                Array.Reverse(size);
                WriteRaw(new[] { (byte)(flags | Long) });
                WriteRaw(size);
            }
            else
            {
                WriteRaw(new[] { flags, (byte)body.Length });
            }
            WriteRaw(body);
        }

        public void WriteRaw(byte[] bytes)
        {
            _stream.Write(bytes, 0, bytes.Length);
        }

        public byte[] ReadFrame(out byte flags)
        {
            flags = ReadExactly(1)[0];
            long size;
            if ((flags & Long) != 0)
            {
                var big = ReadExactly(8);
                Array.Reverse(big);
                size = BitConverter.ToInt64(big, 0);
            }
            else
            {
                size = ReadExactly(1)[0];
            }
            flags = (byte)(flags & ~Long);
            return ReadExactly((int)size);
        }

        public byte[] ReadExactly(int count)
        {
            var buffer = new byte[count];
            for (int at = 0; at < count;)
            {
                int read = _stream.Read(buffer, at, count - at);
                if (read == 0) throw new EndOfStreamException("the server closed the connection");
                at += read;
            }
            return buffer;
        }

        /// <summary>Whether the server closes this connection (within the read timeout),
        /// whatever it sent before.</summary>
        public bool WasDropped()
        {
            var buffer = new byte[1 << 16];
            try
            {
                while (_stream.Read(buffer, 0, buffer.Length) > 0) { }
                return true;
            }
            catch (IOException e)
            {
                var error = e.InnerException as SocketException;
                return error == null || (error.SocketErrorCode != SocketError.TimedOut && error.SocketErrorCode != SocketError.WouldBlock);
            }
        }

        public void Dispose()
        {
            _client.Close();
        }
    }

    /// <summary>A real ZmtpRepServer on loopback, spoken to by raw-socket ZMTP peers.</summary>
    [TestFixture]
    public class ZmtpTests
    {
        readonly List<string> _log = new List<string>();
        readonly List<ZmtpRepServer> _servers = new List<ZmtpRepServer>();
        readonly List<Thread> _echoes = new List<Thread>();
        volatile bool _stopping;

        [SetUp]
        public void Reset()
        {
            _stopping = false;
            lock (_log) _log.Clear();
        }

        [TearDown]
        public void StopServers()
        {
            _stopping = true;
            foreach (var echo in _echoes) echo.Join();
            foreach (var server in _servers) server.Dispose();
            _echoes.Clear();
            _servers.Clear();
        }

        ZmtpRepServer Server(long maxMessageBytes = 64L << 20)
        {
            var server = new ZmtpRepServer("tcp://127.0.0.1:0", false, maxMessageBytes);
            server.Log += line => { lock (_log) _log.Add(line); };
            server.Start();
            _servers.Add(server);
            return server;
        }

        /// <summary>A server whose consumer answers every request with its own frames.</summary>
        ZmtpRepServer EchoServer(long maxMessageBytes = 64L << 20)
        {
            var server = Server(maxMessageBytes);
            var echo = new Thread(() =>
            {
                while (!_stopping)
                {
                    ZmtpRequest request;
                    if (server.TryTake(out request, 20)) request.Reply(request.Frames);
                }
            });
            echo.Start();
            _echoes.Add(echo);
            return server;
        }

        static ZmtpRequest Take(ZmtpRepServer server)
        {
            ZmtpRequest request;
            Assert.IsTrue(server.TryTake(out request, 10000), "a request arrives");
            return request;
        }

        static byte[] B(string text)
        {
            return Encoding.UTF8.GetBytes(text);
        }

        static string S(byte[] bytes)
        {
            return Encoding.UTF8.GetString(bytes);
        }

        static void AssertEcho(RawZmtpClient client, params string[] frames)
        {
            client.Send(Array.ConvertAll(frames, B));
            var reply = client.Receive();
            Assert.AreEqual(frames, reply.ConvertAll(S).ToArray());
        }

        void AssertLogged(string part)
        {
            var deadline = Stopwatch.StartNew();
            while (deadline.ElapsedMilliseconds < 5000)
            {
                lock (_log)
                    if (_log.Exists(line => line.Contains(part))) return;
                Thread.Sleep(10);
            }
            lock (_log) Assert.Fail("expected \"" + part + "\" in the log: " + string.Join(" | ", _log));
        }

        [Test]
        public void StartingOnPortZeroBindsAFreePort()
        {
            var server = Server();
            Assert.IsTrue(server.Port > 0 && server.Port <= 65535);
        }

        [Test]
        public void AnAddressInUseIsRefusedAtStart()
        {
            var first = Server();
            using (var second = new ZmtpRepServer("tcp://127.0.0.1:" + first.Port, false, 1024))
                Assert.Throws<SocketException>(second.Start);
        }

        [Test]
        public void TheHandshakeIsZmtp30WithTheNullMechanismAndAReadyOfARepSocket()
        {
            using (var client = RawZmtpClient.Connected(Server().Port))
            {
                var greeting = client.PeerGreeting;
                Assert.AreEqual(0xFF, greeting[0]);
                Assert.AreEqual(0x7F, greeting[9]);
                Assert.AreEqual(3, greeting[10], "major version");
                Assert.AreEqual(0, greeting[11], "minor version");
                Assert.AreEqual("NULL" + new string('\0', 16), Encoding.ASCII.GetString(greeting, 12, 20));
                Assert.AreEqual(0, greeting[32], "as-server: NULL has no roles");
                Assert.AreEqual(new byte[31], new ArraySegment<byte>(greeting, 33, 31).ToArray());
                var ready = new List<byte>(RawZmtpClient.CommandName("READY"));
                ready.AddRange(RawZmtpClient.CommandName("Socket-Type"));
                ready.AddRange(new byte[] { 0, 0, 0, 3 });
                ready.AddRange(B("REP"));
                Assert.AreEqual(ready.ToArray(), client.PeerReady);
            }
        }

        [Test]
        public void ARequestArrivesWithoutItsEnvelopeAndItsReplyGoesBackBehindIt()
        {
            var server = Server();
            using (var client = RawZmtpClient.Connected(server.Port))
            {
                client.Send(B("Update"), B("{}"), new byte[0]);
                var request = Take(server);
                Assert.AreEqual(3, request.Frames.Count);
                Assert.AreEqual("Update", S(request.Frames[0]));
                Assert.AreEqual("{}", S(request.Frames[1]));
                Assert.AreEqual(0, request.Frames[2].Length, "an empty frame after the delimiter is data");
                request.Reply(new List<byte[]> { B("Ready"), B("{\"a\":1}") });
                Assert.AreEqual(new[] { "Ready", "{\"a\":1}" }, client.Receive().ConvertAll(S).ToArray());
                Assert.Throws<InvalidOperationException>(() => request.Reply(new List<byte[]> { B("again") }));
            }
        }

        [Test]
        public void ShortAndLongFrameFormsAreBothRead()
        {
            var server = EchoServer();
            using (var client = RawZmtpClient.Connected(server.Port))
            {
                client.WriteFrame(RawZmtpClient.More, new byte[0], true);
                client.WriteFrame(RawZmtpClient.More, B("short in the long form"), true);
                client.WriteFrame(0, B(new string('x', 255)));
                var reply = client.Receive();
                Assert.AreEqual("short in the long form", S(reply[0]));
                Assert.AreEqual(255, reply[1].Length);
                AssertEcho(client, new string('y', 256), "", new string('z', 70000));
            }
        }

        [Test]
        public void MultiMegabyteFramesArriveWholeBothWays()
        {
            var server = EchoServer();
            var big = new byte[24 << 20];
            new Random(3).NextBytes(big);
            using (var client = RawZmtpClient.Connected(server.Port))
            {
                client.Send(B("Track"), big, B("tail"));
                var reply = client.Receive();
                Assert.AreEqual(3, reply.Count);
                Assert.AreEqual(big.Length, reply[1].Length);
                Assert.IsTrue(Same(big, reply[1]), "the 24 MiB frame came back unchanged");
                Assert.AreEqual("tail", S(reply[2]));
            }
        }

        static bool Same(byte[] a, byte[] b)
        {
            if (a.Length != b.Length) return false;
            for (int i = 0; i < a.Length; i++)
                if (a[i] != b[i]) return false;
            return true;
        }

        [Test]
        public void EachOfTwoClientsGetsItsOwnReply()
        {
            var server = Server();
            using (var first = RawZmtpClient.Connected(server.Port))
            using (var second = RawZmtpClient.Connected(server.Port))
            {
                first.Send(B("first"));
                second.Send(B("second"));
                var a = Take(server);
                var b = Take(server);
                b.Reply(new List<byte[]> { B("to " + S(b.Frames[0])) });  // in the other order
                a.Reply(new List<byte[]> { B("to " + S(a.Frames[0])) });
                Assert.AreEqual("to first", S(first.Receive()[0]));
                Assert.AreEqual("to second", S(second.Receive()[0]));
            }
        }

        [Test]
        public void ConcurrentClientsAreServedInterleaved()
        {
            var server = EchoServer();
            var failures = new List<string>();
            var clients = new List<Thread>();
            for (int c = 0; c < 4; c++)
            {
                int id = c;
                var thread = new Thread(() =>
                {
                    try
                    {
                        using (var client = RawZmtpClient.Connected(server.Port))
                            for (int i = 0; i < 50; i++) AssertEcho(client, "client " + id, "request " + i, new string('p', 300 * id));
                    }
                    catch (Exception e)
                    {
                        lock (failures) failures.Add(e.Message);
                    }
                });
                thread.Start();
                clients.Add(thread);
            }
            foreach (var thread in clients) thread.Join();
            Assert.AreEqual(0, failures.Count, string.Join("; ", failures));
        }

        [Test]
        public void APeerSendingGarbageIsDroppedWhileAnotherIsServed()
        {
            var server = EchoServer();
            using (var good = RawZmtpClient.Connected(server.Port))
            {
                AssertEcho(good, "before");
                using (var http = new RawZmtpClient(server.Port))
                {
                    http.WriteRaw(B("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"));
                    Assert.IsTrue(http.WasDropped());
                }
                AssertLogged("bad greeting signature");
                using (var noise = RawZmtpClient.Connected(server.Port))
                {
                    noise.WriteRaw(new byte[] { 0xF0, 3, 1, 2, 3 });
                    Assert.IsTrue(noise.WasDropped());
                }
                AssertLogged("reserved frame flag bits set (0xf0)");
                AssertEcho(good, "after");
            }
        }

        [TestCase((byte)2, "NULL", "peer speaks ZMTP 2.x")]
        [TestCase((byte)3, "PLAIN", "security mechanism 'PLAIN'")]
        [TestCase((byte)3, "CURVE", "security mechanism 'CURVE'")]
        public void APeerOfAnotherVersionOrMechanismIsDropped(byte major, string mechanism, string reason)
        {
            var server = Server();
            using (var client = new RawZmtpClient(server.Port))
            {
                client.WriteRaw(RawZmtpClient.Greeting(major, mechanism));
                Assert.IsTrue(client.WasDropped());
            }
            AssertLogged(reason);
        }

        [TestCase("PUB")]
        [TestCase("REP")]
        [TestCase("ROUTER")]
        public void OnlyReqAndDealerPeersAreServed(string socketType)
        {
            var server = Server();
            using (var client = RawZmtpClient.Connected(server.Port, socketType))
                Assert.IsTrue(client.WasDropped());
            AssertLogged("a " + socketType + " socket cannot talk to this REP socket");
        }

        [Test]
        public void ADealerPeerGetsItsRoutingFramesBack()
        {
            var server = EchoServer();
            using (var dealer = RawZmtpClient.Connected(server.Port, "DEALER"))
            {
                dealer.WriteFrame(RawZmtpClient.More, B("route"));
                dealer.WriteFrame(RawZmtpClient.More, new byte[0]);
                dealer.WriteFrame(0, B("payload"));
                Assert.AreEqual(new[] { "route", "", "payload" }, dealer.ReceiveMessage().ConvertAll(S).ToArray());
            }
        }

        [Test]
        public void AMessageWithoutTheDelimiterDropsThePeer()
        {
            var server = Server();
            using (var client = RawZmtpClient.Connected(server.Port))
            {
                client.WriteFrame(0, B("Update"));
                Assert.IsTrue(client.WasDropped());
            }
            AssertLogged("empty delimiter frame");
        }

        [Test]
        public void PingIsAnsweredWithPongEvenInsideAMessage()
        {
            var server = EchoServer();
            var ping = new List<byte>(RawZmtpClient.CommandName("PING"));
            ping.AddRange(new byte[] { 0, 100 });  // TTL, tenths of a second
            ping.AddRange(B("ctx"));
            var pong = new List<byte>(RawZmtpClient.CommandName("PONG"));
            pong.AddRange(B("ctx"));
            using (var client = RawZmtpClient.Connected(server.Port))
            {
                client.WriteFrame(RawZmtpClient.Command, ping.ToArray());
                byte flags;
                Assert.AreEqual(pong.ToArray(), client.ReadFrame(out flags));
                Assert.AreEqual(RawZmtpClient.Command, flags);

                client.WriteFrame(RawZmtpClient.More, new byte[0]);
                client.WriteFrame(RawZmtpClient.Command, ping.ToArray());
                client.WriteFrame(RawZmtpClient.Command, RawZmtpClient.CommandName("SUBSCRIBE"));  // meaningless here: ignored
                client.WriteFrame(0, B("body"));
                Assert.AreEqual(pong.ToArray(), client.ReadFrame(out flags));
                Assert.AreEqual(new[] { "body" }, client.Receive().ConvertAll(S).ToArray());
            }
        }

        [Test]
        public void AMessageOverTheLimitDropsOnlyItsPeer()
        {
            var server = EchoServer(1000);
            using (var good = RawZmtpClient.Connected(server.Port))
            {
                AssertEcho(good, new string('a', 999));
                using (var greedy = RawZmtpClient.Connected(server.Port))
                {
                    greedy.WriteFrame(RawZmtpClient.More, new byte[0]);
                    greedy.WriteRaw(new byte[] { RawZmtpClient.Long, 0, 0, 0, 0, 0, 0, 0x07, 0xD0 });  // declares 2000 bytes
                    Assert.IsTrue(greedy.WasDropped(), "dropped before the body is read");
                }
                AssertLogged("message larger than 1000 bytes (frame 1 holds 2000)");
                using (var split = RawZmtpClient.Connected(server.Port))
                {
                    split.Send(new byte[600], new byte[600]);
                    Assert.IsTrue(split.WasDropped(), "the limit holds for the frames together");
                }
                using (var huge = RawZmtpClient.Connected(server.Port))
                {
                    huge.WriteRaw(new byte[] { RawZmtpClient.Long, 0x80, 0, 0, 0, 0, 0, 0, 0 });
                    Assert.IsTrue(huge.WasDropped());
                }
                AssertLogged("frame size beyond 2^63 bytes");
                AssertEcho(good, "still served");
            }
        }

        [Test]
        public void AMessageOfTooManyFramesDropsThePeer()
        {
            var server = Server();
            using (var client = RawZmtpClient.Connected(server.Port))
            {
                var empties = new byte[2 * (ZmtpRepServer.MaxFrames + 1)];
                for (int i = 0; i < empties.Length; i += 2) empties[i] = RawZmtpClient.More;
                client.WriteRaw(empties);
                Assert.IsTrue(client.WasDropped());
            }
            AssertLogged("message of more than 65536 frames");
        }

        [Test]
        public void ReplyingToAPeerThatHasGoneDoesNothing()
        {
            var server = Server();
            var client = RawZmtpClient.Connected(server.Port);
            client.Send(B("Update"));
            var request = Take(server);
            client.Dispose();
            Thread.Sleep(50);
            request.Reply(new List<byte[]> { B("nobody listens") });
            using (var next = RawZmtpClient.Connected(server.Port))
            {
                next.Send(B("next"));
                var second = Take(server);
                second.Reply(new List<byte[]> { B("served") });
                Assert.AreEqual("served", S(next.Receive()[0]));
            }
        }

        [Test]
        public void ClosingAConnectionWhileItsReplyIsWrittenEndsTheReplyQuietly()
        {
            // A connection is closed on another thread than the consumer's (its reader's when
            // the peer leaves, Dispose's when the host stops) while the consumer may be
            // writing a reply to it, frame by frame into a buffer: the close must not pull
            // the stream from under that writer, which would throw instead of dropping the peer.
            var reply = new List<byte[]>();
            for (int i = 0; i < 40000; i++) reply.Add(new byte[200]);
            for (int round = 0; round < 10; round++)
            {
                var server = Server();
                var client = RawZmtpClient.Connected(server.Port);
                client.Send(B("Update"));
                var request = Take(server);
                var reader = new Thread(() => client.WasDropped());  // reads all it is sent
                reader.Start();
                Exception failure = null;
                var writer = new Thread(() =>
                {
                    try { request.Reply(reply); }
                    catch (Exception e) { failure = e; }
                });
                writer.Start();
                Thread.Sleep(2);
                server.Dispose();
                Assert.IsTrue(writer.Join(5000), "the reply returns");
                Assert.IsNull(failure, "round " + round + ": " + failure);
                Assert.IsTrue(reader.Join(5000), "the peer is dropped");
                client.Dispose();
            }
        }

        [Test]
        public void DisposeEndsIdleAndHalfSentPeersPromptly()
        {
            var server = Server();
            var idle = RawZmtpClient.Connected(server.Port);
            var silent = new RawZmtpClient(server.Port);  // connected, never greets
            var halfway = RawZmtpClient.Connected(server.Port);
            halfway.WriteFrame(RawZmtpClient.More, new byte[0]);
            halfway.WriteRaw(new byte[] { RawZmtpClient.Long, 0, 0, 0, 0, 0, 0, 0x10, 0, 1, 2, 3 });
            bool? taken = null;
            var waiter = new Thread(() =>
            {
                ZmtpRequest request;
                taken = server.TryTake(out request, 30000);
            });
            waiter.Start();
            Thread.Sleep(100);
            var clock = Stopwatch.StartNew();
            server.Dispose();
            Assert.IsTrue(waiter.Join(3000), "a waiting TryTake returns");
            Assert.IsTrue(clock.ElapsedMilliseconds < 3000, "Dispose took " + clock.ElapsedMilliseconds + " ms");
            Assert.AreEqual(false, taken);
            ZmtpRequest none;
            Assert.IsFalse(server.TryTake(out none, 5000));
            Assert.IsTrue(clock.ElapsedMilliseconds < 3000, "TryTake after Dispose returns at once");
            foreach (var client in new[] { idle, silent, halfway })
            {
                Assert.IsTrue(client.WasDropped());
                client.Dispose();
            }
            server.Dispose();  // twice is harmless
        }
    }

    [TestFixture]
    public class EndpointTests
    {
        [TestCase("tcp://127.0.0.1:5555", false, "127.0.0.1", 5555)]
        [TestCase("tcp://127.1.2.3:0", false, "127.1.2.3", 0)]
        [TestCase("tcp://localhost:65535", false, "127.0.0.1", 65535)]
        [TestCase("tcp://*:5555", true, "0.0.0.0", 5555)]
        [TestCase("tcp://0.0.0.0:1", true, "0.0.0.0", 1)]
        [TestCase("tcp://192.168.1.20:80", true, "192.168.1.20", 80)]
        [TestCase("tcp://127.0.0.1:5555", true, "127.0.0.1", 5555)]
        public void AcceptedAddresses(string address, bool allowRemote, string host, int port)
        {
            string parsedHost;
            int parsedPort;
            Endpoint.Parse(address, allowRemote, out parsedHost, out parsedPort);
            Assert.AreEqual(host, parsedHost);
            Assert.AreEqual(port, parsedPort);
        }

        [TestCase("tcp://10.0.0.1:5555", "is not on loopback")]
        [TestCase("tcp://*:5555", "is not on loopback")]
        [TestCase("tcp://0.0.0.0:5555", "is not on loopback")]
        [TestCase("ipc:///tmp/arsim", "expected tcp://<127.x.y.z or localhost>:<port 0-65535>")]
        [TestCase("TCP://127.0.0.1:5555", "expected tcp://")]
        [TestCase("127.0.0.1:5555", "expected tcp://")]
        [TestCase("", "expected tcp://")]
        [TestCase("tcp://127.0.0.1", "has no port from 0 to 65535")]
        [TestCase("tcp://127.0.0.1:", "has no port")]
        [TestCase("tcp://127.0.0.1:65536", "has no port")]
        [TestCase("tcp://127.0.0.1:99999", "has no port")]
        [TestCase("tcp://127.0.0.1:-1", "has no port")]
        [TestCase("tcp://127.0.0.1:+5", "has no port")]
        [TestCase("tcp://127.0.0.1:5 5", "has no port")]
        [TestCase("tcp://127.1:5555", "'127.1' is no IPv4 address")]
        [TestCase("tcp://127.0.0.01:5555", "is no IPv4 address")]
        [TestCase("tcp://127.0.0.256:5555", "is no IPv4 address")]
        [TestCase("tcp://[::1]:5555", "is no IPv4 address")]
        [TestCase("tcp://example.com:5555", "is no IPv4 address")]
        [TestCase("tcp://:5555", "is no IPv4 address")]
        public void RefusedAddressesAreNamedWithWhatIsExpected(string address, string reason)
        {
            string host;
            int port;
            var error = Assert.Throws<ArgumentException>(() => Endpoint.Parse(address, false, out host, out port));
            JsonTests.AssertContains(error.Message, "address '" + address + "'");
            JsonTests.AssertContains(error.Message, reason);
        }

        [Test]
        public void WithRemotePeersAllowedTheExpectationSaysSo()
        {
            string host;
            int port;
            var error = Assert.Throws<ArgumentException>(() => Endpoint.Parse("tcp://example.com:1", true, out host, out port));
            JsonTests.AssertContains(error.Message, "expected tcp://<IPv4 address, * or localhost>:<port 0-65535>");
            Assert.Throws<ArgumentException>(() => Endpoint.Parse(null, true, out host, out port));
        }
    }
}
