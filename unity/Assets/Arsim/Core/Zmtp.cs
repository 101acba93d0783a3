using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;

namespace Arsim.Core
{
    /// <summary>One request taken from a peer: its frames without the REQ envelope, and the
    /// way back to that peer.</summary>
    public sealed class ZmtpRequest
    {
        readonly ZmtpConnection _connection;
        readonly List<byte[]> _envelope;
        int _answered;

        internal ZmtpRequest(ZmtpConnection connection, List<byte[]> envelope, List<byte[]> frames)
        {
            _connection = connection;
            _envelope = envelope;
            Frames = frames.AsReadOnly();
        }

        /// <summary>The message, envelope stripped (a read-only list that also passes as an
        /// IList&lt;byte[]&gt;).</summary>
        public ReadOnlyCollection<byte[]> Frames { get; }

        /// <summary>Sends the reply on the request's connection, behind the envelope it came
        /// with; a peer that has gone gets nothing. Once per request.</summary>
        public void Reply(IList<byte[]> frames)
        {
            if (frames == null || frames.Count == 0) throw new ArgumentException("a reply has at least one frame", nameof(frames));
            foreach (var frame in frames)
                if (frame == null) throw new ArgumentException("a reply frame is null", nameof(frames));
            if (Interlocked.Exchange(ref _answered, 1) != 0) throw new InvalidOperationException("this request has been answered already");
            _connection.Reply(_envelope, frames);
        }
    }

    /// <summary>A ZeroMQ REP socket over TCP: ZMTP 3.0 with the NULL mechanism
    /// (rfc.zeromq.org/spec/23), what a REQ socket of libzmq, pyzmq or NetMQ connects to.
    /// Each connection is read on its own thread and requests queue for one consumer
    /// (TryTake), so an engine's main thread can serve them. A peer that breaks ZMTP or sends
    /// a message larger than maxMessageBytes is disconnected; the others are served on.</summary>
    public sealed class ZmtpRepServer : IDisposable
    {
        /// <summary>Frames in one message beyond which a peer is disconnected: empty frames
        /// cost no bytes, so the byte limit alone would not bound them.</summary>
        public const int MaxFrames = 1 << 16;

        const int JoinTimeoutMs = 2000;
        readonly string _host;
        readonly int _requestedPort;
        readonly BlockingCollection<ZmtpRequest> _requests = new BlockingCollection<ZmtpRequest>();
        readonly CancellationTokenSource _stopping = new CancellationTokenSource();
        readonly HashSet<ZmtpConnection> _connections = new HashSet<ZmtpConnection>();
        TcpListener _listener;
        Thread _acceptor;

        public ZmtpRepServer(string address, bool allowRemote, long maxMessageBytes)
        {
            if (maxMessageBytes < 1) throw new ArgumentOutOfRangeException(nameof(maxMessageBytes), "at least 1 byte");
            Endpoint.Parse(address, allowRemote, out _host, out _requestedPort);
            MaxMessageBytes = maxMessageBytes;
        }

        /// <summary>What befell peers (dropped, and why), for the log; raised on connection
        /// threads.</summary>
        public event Action<string> Log = delegate { };

        /// <summary>The bound port, once started (the free port chosen for port 0).</summary>
        public int Port { get; private set; }

        internal long MaxMessageBytes { get; }

        internal CancellationToken Stopping => _stopping.Token;

        /// <summary>Binds and starts accepting; SocketException if the address is taken.</summary>
        public void Start()
        {
            if (_stopping.IsCancellationRequested) throw new ObjectDisposedException(nameof(ZmtpRepServer));
            if (_listener != null) throw new InvalidOperationException("the server is started already");
            // No ReuseAddress: Mono sets SO_REUSEPORT with it, which lets a second server bind
            // the same port; a port in TIME_WAIT binds without it on Linux anyway.
            var listener = new TcpListener(IPAddress.Parse(_host), _requestedPort);
            listener.Start();
            _listener = listener;
            Port = ((IPEndPoint)listener.LocalEndpoint).Port;
            _acceptor = new Thread(Accept) { IsBackground = true, Name = "zmtp-accept" };
            _acceptor.Start();
        }

        /// <summary>A complete request from any peer, in arrival order; false after timeoutMs,
        /// or at once once disposed.</summary>
        public bool TryTake(out ZmtpRequest request, int timeoutMs)
        {
            return _requests.TryTake(out request, timeoutMs);
        }

        /// <summary>Closes the listener and every connection and waits a bounded time for
        /// their threads; requests still queued can be replied to, which does nothing.</summary>
        public void Dispose()
        {
            if (_stopping.IsCancellationRequested) return;
            _stopping.Cancel();
            _requests.CompleteAdding();
            _listener?.Stop();
            ZmtpConnection[] open;
            lock (_connections)
            {
                open = new ZmtpConnection[_connections.Count];
                _connections.CopyTo(open);
            }
            foreach (var connection in open) connection.Close();
            int deadline = Environment.TickCount + JoinTimeoutMs;
            _acceptor?.Join(Remaining(deadline));
            foreach (var connection in open) connection.Join(Remaining(deadline));
        }

        static int Remaining(int deadline)
        {
            return Math.Max(0, deadline - Environment.TickCount);
        }

        void Accept()
        {
            while (!_stopping.IsCancellationRequested)
            {
                TcpClient client;
                try
                {
                    client = _listener.AcceptTcpClient();
                }
                catch (Exception e) when (e is SocketException || e is ObjectDisposedException || e is InvalidOperationException)
                {
                    if (_stopping.IsCancellationRequested) return;
                    Report("accepting a connection failed: " + e.Message);
                    Thread.Sleep(100);  // e.g. out of file descriptors: no busy loop
                    continue;
                }
                try
                {
                    Admit(client);
                }
                catch (Exception e)  // e.g. no thread to be had: that peer only is turned away
                {
                    Report("could not serve a connection: " + e.Message);
                    client.Close();
                }
            }
        }

        /// <summary>Starts serving client on a thread of its own, unless disposing.</summary>
        void Admit(TcpClient client)
        {
            var connection = new ZmtpConnection(this, client);
            lock (_connections)
            {
                if (_stopping.IsCancellationRequested)
                {
                    client.Close();
                    return;
                }
                _connections.Add(connection);
            }
            try
            {
                connection.Start();
            }
            catch (Exception)
            {
                Forget(connection);
                throw;
            }
        }

        internal void Enqueue(ZmtpRequest request)
        {
            _requests.Add(request);  // InvalidOperationException once disposed: ends that connection
        }

        internal void Forget(ZmtpConnection connection)
        {
            lock (_connections) _connections.Remove(connection);
        }

        internal void Report(string line)
        {
            try
            {
                Log(line);
            }
            catch (Exception)
            {
                // called at the top of server threads: a failing log handler must not end the process
            }
        }
    }

    /// <summary>A peer's ZMTP fault; it ends that connection only.</summary>
    sealed class ZmtpViolation : Exception
    {
        public ZmtpViolation(string message) : base(message) { }
    }

    /// <summary>One peer: the handshake, then messages read frame by frame on its own thread,
    /// replies written by the consumer's thread. At most one request per connection waits for
    /// its reply, as REQ peers send them, so a flooding peer cannot fill memory.</summary>
    sealed class ZmtpConnection
    {
        const byte MoreFlag = 1, LongFlag = 2, CommandFlag = 4;
        const int HandshakeTimeoutMs = 10000;
        const int SendTimeoutMs = 30000;  // a peer that takes no bytes for this long is gone
        const int BufferBytes = 1 << 16;
        const int MaxCommandBytes = 1 << 16;
        static readonly byte[] Empty = new byte[0];
        static readonly byte[] Greeting = MakeGreeting();
        static readonly byte[] ReadyCommand = MakeReady("REP");

        readonly ZmtpRepServer _server;
        readonly TcpClient _client;
        readonly string _peer;
        readonly object _writeLock = new object();
        readonly SemaphoreSlim _inFlight = new SemaphoreSlim(1, 1);
        readonly byte[] _header = new byte[9];
        Thread _thread;
        Stream _in, _out;
        int _closed;

        public ZmtpConnection(ZmtpRepServer server, TcpClient client)
        {
            _server = server;
            _client = client;
            _peer = PeerName(client);
        }

        static string PeerName(TcpClient client)
        {
            try
            {
                return "peer " + client.Client.RemoteEndPoint;
            }
            catch (SocketException)  // already disconnected
            {
                return "a peer";
            }
        }

        public void Start()
        {
            _thread = new Thread(Run) { IsBackground = true, Name = "zmtp " + _peer };
            _thread.Start();
        }

        public void Join(int timeoutMs)
        {
            _thread?.Join(timeoutMs);
        }

        void Run()
        {
            try
            {
                _client.NoDelay = true;
                _client.SendTimeout = SendTimeoutMs;
                var network = _client.GetStream();
                _in = new BufferedStream(network, BufferBytes);
                _out = new BufferedStream(network, BufferBytes);  // large frames bypass the buffer
                Handshake();
                Serve();
            }
            catch (Exception e)  // the thread's last stop: whatever the peer did, only it is dropped
            {
                if (Volatile.Read(ref _closed) == 0 && !_server.Stopping.IsCancellationRequested)
                    _server.Report($"dropped {_peer}: {e.Message}");
            }
            finally
            {
                Close();
                _server.Forget(this);
            }
        }

        void Handshake()
        {
            _client.ReceiveTimeout = HandshakeTimeoutMs;
            Write(Greeting);
            var greeting = new byte[64];
            ReadExactly(greeting, 0, 11);  // signature and major version first: an old peer waits for ours
            if (greeting[0] != 0xFF || greeting[9] != 0x7F) throw new ZmtpViolation("not a ZMTP peer (bad greeting signature)");
            if (greeting[10] < 3) throw new ZmtpViolation($"peer speaks ZMTP {greeting[10]}.x; this server needs 3.0 or later");
            ReadExactly(greeting, 11, 53);
            string mechanism = Encoding.ASCII.GetString(greeting, 12, 20).TrimEnd('\0');
            if (mechanism != "NULL") throw new ZmtpViolation($"peer asks for security mechanism '{mechanism}'; this server offers NULL only");
            WriteCommand(ReadyCommand);

            if (!ReadHeader(out byte flags, out long size)) throw new EndOfStreamException("peer closed the connection during the handshake");
            if ((flags & CommandFlag) == 0) throw new ZmtpViolation("peer sent a message before its READY command");
            var ready = ReadCommand(flags, size);
            string name = CommandName(ready);
            if (name == "ERROR")  // its reason follows the name and a 1-byte length
                throw new ZmtpViolation("peer refused the handshake: " + Encoding.UTF8.GetString(ready, Math.Min(7, ready.Length), Math.Max(0, ready.Length - 7)));
            if (name != "READY") throw new ZmtpViolation($"expected READY, got command '{name}'");
            string socketType = SocketType(ready);
            if (socketType != "REQ" && socketType != "DEALER")
                throw new ZmtpViolation($"a {socketType} socket cannot talk to this REP socket; connect a REQ (or DEALER)");
            _client.ReceiveTimeout = 0;  // a REQ peer may idle between requests as long as it likes
        }

        /// <summary>Messages until the peer closes the connection between two of them.</summary>
        void Serve()
        {
            var frames = new List<byte[]>();
            long bytes = 0;
            while (true)
            {
                if (!ReadHeader(out byte flags, out long size))
                {
                    if (frames.Count > 0) throw new EndOfStreamException("peer closed the connection inside a message");
                    return;
                }
                if ((flags & CommandFlag) != 0)
                {
                    Command(ReadCommand(flags, size));  // libzmq may send PING between any two frames
                    continue;
                }
                if (size > _server.MaxMessageBytes - bytes)
                    throw new ZmtpViolation($"message larger than {_server.MaxMessageBytes} bytes (frame {frames.Count} holds {size})");
                if (size > int.MaxValue) throw new ZmtpViolation($"frame {frames.Count} of {size} bytes exceeds {int.MaxValue}");
                if (frames.Count == ZmtpRepServer.MaxFrames) throw new ZmtpViolation($"message of more than {ZmtpRepServer.MaxFrames} frames");
                var data = size == 0 ? Empty : new byte[size];
                ReadExactly(data, 0, data.Length);
                frames.Add(data);
                bytes += size;
                if ((flags & MoreFlag) != 0) continue;
                Deliver(frames);
                frames = new List<byte[]>();
                bytes = 0;
            }
        }

        /// <summary>Splits off the envelope (up to the empty delimiter) and queues the request
        /// once the previous one of this connection has been answered.</summary>
        void Deliver(List<byte[]> frames)
        {
            int delimiter = frames.FindIndex(frame => frame.Length == 0);
            if (delimiter < 0 || delimiter == frames.Count - 1)
                throw new ZmtpViolation("a request must start with its envelope: an empty delimiter frame, then the message");
            var envelope = frames.GetRange(0, delimiter + 1);
            var body = frames.GetRange(delimiter + 1, frames.Count - delimiter - 1);
            _inFlight.Wait(_server.Stopping);
            _server.Enqueue(new ZmtpRequest(this, envelope, body));
        }

        void Command(byte[] body)
        {
            if (CommandName(body) != "PING") return;  // nothing else means anything to a REP socket
            if (body.Length < 7) throw new ZmtpViolation("PING without its TTL");
            var pong = new byte[5 + body.Length - 7];  // PONG echoes the ping's context
            pong[0] = 4;
            Encoding.ASCII.GetBytes("PONG", 0, 4, pong, 1);
            Array.Copy(body, 7, pong, 5, body.Length - 7);
            WriteCommand(pong);
        }

        public void Reply(List<byte[]> envelope, IList<byte[]> frames)
        {
            try
            {
                lock (_writeLock)
                {
                    if (Volatile.Read(ref _closed) != 0) return;
                    foreach (var frame in envelope) WriteFrame(MoreFlag, frame);
                    for (int i = 0; i < frames.Count; i++) WriteFrame(i < frames.Count - 1 ? MoreFlag : (byte)0, frames[i]);
                    _out.Flush();
                }
            }
            catch (Exception e) when (e is IOException || e is SocketException || e is ObjectDisposedException)
            {
                if (Volatile.Read(ref _closed) == 0) _server.Report($"dropped {_peer}: its reply could not be sent: {e.Message}");
                Close();
            }
            finally
            {
                _inFlight.Release();
            }
        }

        /// <summary>Idempotent; shutting the socket down first wakes the reader blocked on it
        /// and makes a reply being written fail at its next send, which Reply takes as the peer
        /// gone. The stream is disposed only under the write lock, once that reply has let go:
        /// disposed under a writer, the buffered stream would throw NotSupportedException at
        /// its next frame instead.</summary>
        public void Close()
        {
            if (Interlocked.Exchange(ref _closed, 1) != 0) return;
            try
            {
                _client.Client.Shutdown(SocketShutdown.Both);
            }
            catch (Exception e) when (e is SocketException || e is ObjectDisposedException)
            {
                // not connected any more: closing is all that is left
            }
            lock (_writeLock) _client.Close();
        }

        /// <summary>The next frame's flags and size; false at a clean end of stream before it.</summary>
        bool ReadHeader(out byte flags, out long size)
        {
            flags = 0;
            size = 0;
            int first = _in.ReadByte();
            if (first < 0) return false;
            flags = (byte)first;
            if ((flags & ~(MoreFlag | LongFlag | CommandFlag)) != 0) throw new ZmtpViolation($"reserved frame flag bits set (0x{flags:x2})");
            if ((flags & LongFlag) == 0)
            {
                ReadExactly(_header, 0, 1);
                size = _header[0];
                return true;
            }
            ReadExactly(_header, 0, 8);
            for (int i = 0; i < 8; i++) size = (size << 8) | _header[i];
            if (size < 0) throw new ZmtpViolation("frame size beyond 2^63 bytes");
            return true;
        }

        byte[] ReadCommand(byte flags, long size)
        {
            if ((flags & MoreFlag) != 0) throw new ZmtpViolation("a command frame has the MORE flag");
            if (size > MaxCommandBytes) throw new ZmtpViolation($"command of {size} bytes (at most {MaxCommandBytes})");
            var body = new byte[size];
            ReadExactly(body, 0, body.Length);
            return body;
        }

        static string CommandName(byte[] body)
        {
            if (body.Length == 0 || body.Length < 1 + body[0]) throw new ZmtpViolation("malformed command (name longer than the frame)");
            return Encoding.ASCII.GetString(body, 1, body[0]);
        }

        /// <summary>The Socket-Type property of a READY command's metadata (name: 1-byte
        /// length; value: 4-byte big-endian length).</summary>
        static string SocketType(byte[] ready)
        {
            string socketType = null;
            int at = 1 + ready[0];
            while (at < ready.Length)
            {
                int nameLength = ready[at++];
                if (ready.Length - at < nameLength + 4) throw new ZmtpViolation("malformed READY metadata");
                string name = Encoding.ASCII.GetString(ready, at, nameLength);
                at += nameLength;
                long valueLength = ((long)ready[at] << 24) | ((long)ready[at + 1] << 16) | ((long)ready[at + 2] << 8) | ready[at + 3];
                at += 4;
                if (ready.Length - at < valueLength) throw new ZmtpViolation("malformed READY metadata");
                if (string.Equals(name, "Socket-Type", StringComparison.OrdinalIgnoreCase))
                    socketType = Encoding.ASCII.GetString(ready, at, (int)valueLength);
                at += (int)valueLength;
            }
            return socketType ?? throw new ZmtpViolation("READY without a Socket-Type");
        }

        void ReadExactly(byte[] buffer, int offset, int count)
        {
            while (count > 0)
            {
                int read = _in.Read(buffer, offset, count);
                if (read <= 0) throw new EndOfStreamException("peer closed the connection inside a frame");
                offset += read;
                count -= read;
            }
        }

        void Write(byte[] bytes)
        {
            lock (_writeLock)
            {
                _out.Write(bytes, 0, bytes.Length);
                _out.Flush();
            }
        }

        void WriteCommand(byte[] body)
        {
            lock (_writeLock)
            {
                WriteFrame(CommandFlag, body);
                _out.Flush();
            }
        }

        /// <summary>Short form (1-byte size) up to 255 bytes, long form (8-byte size) above.
        /// Callers hold the write lock.</summary>
        void WriteFrame(byte flags, byte[] body)
        {
            if (body.Length <= 255)
            {
                _header[0] = flags;
                _header[1] = (byte)body.Length;
                _out.Write(_header, 0, 2);
            }
            else
            {
                _header[0] = (byte)(flags | LongFlag);
                long size = body.LongLength;
                for (int i = 8; i >= 1; i--, size >>= 8) _header[i] = (byte)size;
                _out.Write(_header, 0, 9);
            }
            _out.Write(body, 0, body.Length);
        }

        /// <summary>Signature (0xFF, 8 bytes padding, 0x7F), version 3.0, mechanism NULL,
        /// as-server 0 (NULL has no roles), filler.</summary>
        static byte[] MakeGreeting()
        {
            var greeting = new byte[64];
            greeting[0] = 0xFF;
            greeting[9] = 0x7F;
            greeting[10] = 3;
            Encoding.ASCII.GetBytes("NULL", 0, 4, greeting, 12);
            return greeting;
        }

        static byte[] MakeReady(string socketType)
        {
            var body = new MemoryStream();
            body.WriteByte(5);
            body.Write(Encoding.ASCII.GetBytes("READY"), 0, 5);
            body.WriteByte(11);
            body.Write(Encoding.ASCII.GetBytes("Socket-Type"), 0, 11);
            body.Write(new byte[] { 0, 0, 0, (byte)socketType.Length }, 0, 4);
            body.Write(Encoding.ASCII.GetBytes(socketType), 0, socketType.Length);
            return body.ToArray();
        }
    }
}
