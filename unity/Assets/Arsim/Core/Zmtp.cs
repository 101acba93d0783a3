using System;
using System.Collections.Generic;
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
        readonly ZmtpConnection connection;
        readonly List<byte[]> envelope;

        internal ZmtpRequest(ZmtpConnection connection, List<byte[]> envelope, List<byte[]> frames)
        {
            this.connection = connection;
            this.envelope = envelope;
            Frames = frames;
        }

        public IList<byte[]> Frames { get; private set; }

        /// <summary>Send the reply, envelope first; a peer that has gone gets nothing.</summary>
        public void Reply(IList<byte[]> frames)
        {
            var all = new List<byte[]>(envelope);
            all.AddRange(frames);
            connection.Send(all);
        }
    }

    /// <summary>A ZeroMQ REP socket over TCP, speaking ZMTP 3.0 with the NULL mechanism
    /// (rfc.zeromq.org/spec/23): what a REQ socket of libzmq, pyzmq or NetMQ connects to. Each
    /// connection is read on its own thread; requests queue for one consumer (TryTake), so a
    /// Unity main thread can serve them. A peer that breaks the protocol or sends more than
    /// maxMessageBytes is disconnected; the others are served on.</summary>
    public sealed class ZmtpRepServer : IDisposable
    {
        readonly string host;
        readonly int requestedPort;
        readonly long maxMessageBytes;
        readonly Queue<ZmtpRequest> requests = new Queue<ZmtpRequest>();
        readonly List<ZmtpConnection> connections = new List<ZmtpConnection>();
        TcpListener listener;
        Thread acceptor;
        volatile bool stopping;

        public ZmtpRepServer(string address, bool allowRemote, long maxMessageBytes)
        {
            Endpoint.Parse(address, allowRemote, out host, out requestedPort);
            this.maxMessageBytes = maxMessageBytes;
        }

        public int Port { get; private set; }

        public void Start()
        {
            listener = new TcpListener(IPAddress.Parse(host), requestedPort);
            listener.Server.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, false);
            listener.Start();
            Port = ((IPEndPoint)listener.LocalEndpoint).Port;
            acceptor = new Thread(Accept) { IsBackground = true, Name = "zmtp-accept" };
            acceptor.Start();
        }

        void Accept()
        {
            while (!stopping)
            {
                TcpClient client;
                try
                {
                    client = listener.AcceptTcpClient();
                }
                catch (Exception)
                {
                    if (stopping) return;
                    continue;
                }
                var connection = new ZmtpConnection(client, this, maxMessageBytes);
                lock (connections) connections.Add(connection);
                connection.Start();
            }
        }

        internal void Enqueue(ZmtpRequest request)
        {
            lock (requests)
            {
                requests.Enqueue(request);
                Monitor.Pulse(requests);
            }
        }

        internal void Forget(ZmtpConnection connection)
        {
            lock (connections) connections.Remove(connection);
        }

        public bool TryTake(out ZmtpRequest request, int timeoutMs)
        {
            lock (requests)
            {
                if (requests.Count == 0) Monitor.Wait(requests, timeoutMs);
                request = requests.Count > 0 ? requests.Dequeue() : null;
                return request != null;
            }
        }

        public void Dispose()
        {
            stopping = true;
            if (listener != null) listener.Stop();
            ZmtpConnection[] open;
            lock (connections) open = connections.ToArray();
            foreach (var connection in open) connection.Close();
            if (acceptor != null) acceptor.Join(1000);
        }
    }

    /// <summary>One peer's TCP connection: the handshake, then requests read frame by frame.</summary>
    sealed class ZmtpConnection
    {
        const byte More = 1, Long = 2, Command = 4;
        readonly TcpClient client;
        readonly ZmtpRepServer server;
        readonly long maxMessageBytes;
        readonly object sendLock = new object();
        Stream stream;  // reads, buffered
        Stream output;  // writes, buffered; flushed once per message
        volatile bool closed;

        public ZmtpConnection(TcpClient client, ZmtpRepServer server, long maxMessageBytes)
        {
            this.client = client;
            this.server = server;
            this.maxMessageBytes = maxMessageBytes;
        }

        public void Start()
        {
            new Thread(Serve) { IsBackground = true, Name = "zmtp-peer" }.Start();
        }

        void Serve()
        {
            try
            {
                client.NoDelay = true;
                var network = client.GetStream();
                stream = new BufferedStream(network, 1 << 16);
                output = new BufferedStream(network, 1 << 16);
                Handshake();
                while (!closed)
                {
                    var frames = ReadMessage();
                    if (frames == null) break;
                    var delimiter = frames.FindIndex(f => f.Length == 0);
                    if (delimiter < 0) break;  // a REQ message always carries its envelope
                    server.Enqueue(new ZmtpRequest(this, frames.GetRange(0, delimiter + 1),
                                                   frames.GetRange(delimiter + 1, frames.Count - delimiter - 1)));
                }
            }
            catch (Exception)
            {
                // A peer that breaks ZMTP, or the socket closing: drop this connection only.
            }
            Close();
        }

        void Handshake()
        {
            var greeting = new byte[64];
            greeting[0] = 0xFF;
            greeting[9] = 0x7F;
            greeting[10] = 3;
            Encoding.ASCII.GetBytes("NULL").CopyTo(greeting, 12);
            lock (sendLock)
            {
                output.Write(greeting, 0, greeting.Length);
                output.Flush();
            }
            var peer = ReadExactly(64);
            if (peer[0] != 0xFF || peer[9] != 0x7F || peer[10] < 3)
                throw new IOException("not a ZMTP 3 peer");
            if (Encoding.ASCII.GetString(peer, 12, 20).TrimEnd('\0') != "NULL")
                throw new IOException("only the NULL mechanism is supported");
            lock (sendLock)
            {
                WriteFrame(Command, ReadyCommand("REP"));
                output.Flush();
            }
            byte flags;
            var command = ReadFrame(out flags);
            if ((flags & Command) == 0 || !IsReady(command, out var socketType))
                throw new IOException("expected a READY command");
            if (socketType != "REQ" && socketType != "DEALER")
                throw new IOException("a REP socket talks to REQ or DEALER peers, not " + socketType);
        }

        static byte[] ReadyCommand(string socketType)
        {
            var body = new MemoryStream();
            body.WriteByte(5);
            body.Write(Encoding.ASCII.GetBytes("READY"), 0, 5);
            body.WriteByte(11);
            body.Write(Encoding.ASCII.GetBytes("Socket-Type"), 0, 11);
            var value = Encoding.ASCII.GetBytes(socketType);
            body.Write(BigEndian(value.Length, 4), 0, 4);
            body.Write(value, 0, value.Length);
            return body.ToArray();
        }

        static bool IsReady(byte[] command, out string socketType)
        {
            socketType = "";
            if (command.Length < 6 || command[0] != 5 || Encoding.ASCII.GetString(command, 1, 5) != "READY")
                return false;
            var at = 6;
            while (at < command.Length)
            {
                int nameLength = command[at++];
                if (at + nameLength + 4 > command.Length) return false;
                var name = Encoding.ASCII.GetString(command, at, nameLength);
                at += nameLength;
                var valueLength = (command[at] << 24) | (command[at + 1] << 16) | (command[at + 2] << 8) | command[at + 3];
                at += 4;
                if (valueLength < 0 || at + valueLength > command.Length) return false;
                if (string.Equals(name, "Socket-Type", StringComparison.OrdinalIgnoreCase))
                    socketType = Encoding.ASCII.GetString(command, at, valueLength);
                at += valueLength;
            }
            return true;
        }

        /// <summary>The frames of the next message; commands between messages (PING) are
        /// answered, null at a clean end of stream.</summary>
        List<byte[]> ReadMessage()
        {
            var frames = new List<byte[]>();
            long total = 0;
            while (true)
            {
                byte flags;
                var frame = ReadFrame(out flags, frames.Count == 0);
                if (frame == null) return null;
                if ((flags & Command) != 0)
                {
                    AnswerCommand(frame);
                    continue;
                }
                total += frame.Length;
                if (total > maxMessageBytes) throw new IOException("message larger than the limit");
                frames.Add(frame);
                if ((flags & More) == 0) return frames;
            }
        }

        void AnswerCommand(byte[] command)
        {
            if (command.Length >= 5 && command[0] == 4 && Encoding.ASCII.GetString(command, 1, 4) == "PING")
            {
                // PONG carries the ping's context (after its 2-byte TTL).
                var context = command.Length > 7 ? command.Length - 7 : 0;
                var pong = new byte[5 + context];
                pong[0] = 4;
                Encoding.ASCII.GetBytes("PONG").CopyTo(pong, 1);
                Array.Copy(command, 7, pong, 5, context);
                lock (sendLock)
                {
                    WriteFrame(Command, pong);
                    output.Flush();
                }
            }
        }

        byte[] ReadFrame(out byte flags, bool endAllowed = false)
        {
            var first = stream.ReadByte();
            if (first < 0)
            {
                if (endAllowed) { flags = 0; return null; }
                throw new IOException("connection closed inside a message");
            }
            flags = (byte)first;
            if ((flags & ~(More | Long | Command)) != 0) throw new IOException("bad frame flags");
            long size;
            if ((flags & Long) != 0)
            {
                var bytes = ReadExactly(8);
                size = 0;
                for (var i = 0; i < 8; i++) size = (size << 8) | bytes[i];
            }
            else
            {
                size = ReadExactly(1)[0];
            }
            if (size < 0 || size > maxMessageBytes || size > int.MaxValue - 64)
                throw new IOException("frame larger than the limit");
            return ReadExactly((int)size);
        }

        byte[] ReadExactly(int count)
        {
            var buffer = new byte[count];
            var at = 0;
            while (at < count)
            {
                var read = stream.Read(buffer, at, count - at);
                if (read <= 0) throw new IOException("connection closed");
                at += read;
            }
            return buffer;
        }

        public void Send(List<byte[]> frames)
        {
            if (closed) return;
            try
            {
                lock (sendLock)
                {
                    for (var i = 0; i < frames.Count; i++)
                        WriteFrame(i < frames.Count - 1 ? More : (byte)0, frames[i]);
                    output.Flush();
                }
            }
            catch (Exception)
            {
                Close();
            }
        }

        void WriteFrame(byte flags, byte[] body)
        {
            if (body.Length > 255)
            {
                var header = new byte[9];
                header[0] = (byte)(flags | Long);
                BigEndian(body.LongLength, 8).CopyTo(header, 1);
                output.Write(header, 0, 9);
            }
            else
            {
                output.WriteByte(flags);
                output.WriteByte((byte)body.Length);
            }
            output.Write(body, 0, body.Length);
        }

        static byte[] BigEndian(long value, int size)
        {
            var bytes = new byte[size];
            for (var i = size - 1; i >= 0; i--)
            {
                bytes[i] = (byte)(value & 0xFF);
                value >>= 8;
            }
            return bytes;
        }

        public void Close()
        {
            if (closed) return;
            closed = true;
            try { client.Close(); }
            catch (Exception) { }
            server.Forget(this);
        }
    }
}
