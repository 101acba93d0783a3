using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading;
using Arsim.Core;

namespace Arsim.Host
{
    /// <summary>`mono arsim-unity-host.exe [--address tcp://127.0.0.1:5555] [--allow-remote]
    /// [--max-request-mib 128] [--log-level info|debug]`: protocol v1 served by Arsim.Core
    /// with the CPU mesh ray caster. A GPU-free C# backend, and the reference that the C#
    /// side answers as the embedded backend does. Exit status: 0 when stopped by SIGTERM or
    /// SIGINT, 2 for a bad command line or an address it cannot bind.</summary>
    public static class Program
    {
        const int PollMs = 200;  // how often the loop looks at the stop flag

        public static int Main(string[] args)
        {
            HostOptions options;
            try
            {
                options = HostOptions.Parse(args);
            }
            catch (UsageException error)
            {
                return Refuse(error.Message);
            }
            if (options.Help)
            {
                Console.WriteLine(HostOptions.Usage);
                return 0;
            }
            var log = new ServiceLog(line => Console.Error.WriteLine(line), options.Debug);
            var stop = new ManualResetEventSlim();
            StopSignals.Watch(stop);
            ZmtpRepServer server;
            try
            {
                server = new ZmtpRepServer(options.Address, options.AllowRemote, options.MaxRequestBytes);
                server.Start();
            }
            catch (ArgumentException error)
            {
                return Refuse(error.Message);
            }
            catch (SocketException error)
            {
                var reason = error.SocketErrorCode == SocketError.AddressAlreadyInUse ? "address in use" : error.Message;
                Console.Error.WriteLine("arsim C# host: cannot bind " + options.Address + ": " + reason);
                return 2;
            }
            using (server)
            {
                log.Started(BoundAddress(options.Address, server.Port));
                Serve(server, log, stop);
            }
            log.Stopped();
            return 0;
        }

        /// <summary>Answers requests one at a time until stop is set; every request gets a
        /// reply (BackendService turns any failure into Error).</summary>
        static void Serve(ZmtpRepServer server, ServiceLog log, ManualResetEventSlim stop)
        {
            var caster = new MeshRayCaster();
            var service = new BackendService(caster);
            while (!stop.IsSet)
            {
                ZmtpRequest request;
                if (!server.TryTake(out request, PollMs)) continue;
                var watch = Stopwatch.StartNew();
                var frames = new List<byte[]>(request.Frames);
                List<byte[]> reply;
                try
                {
                    reply = service.Handle(frames);
                }
                catch (Exception error)  // Handle answers every failure itself; a REQ peer must never wait for nothing
                {
                    Console.Error.WriteLine("arsim C# host: internal error: " + error);
                    reply = Protocol.EncodeError(0, 0, "internal error: " + error.GetType().Name + ": " + error.Message);
                }
                request.Reply(reply);
                log.Served(frames, reply, caster.TriangleCount, watch.Elapsed);
            }
        }

        /// <summary>The address with the port actually bound (the free port chosen for :0).</summary>
        static string BoundAddress(string address, int port)
        {
            var colon = address.LastIndexOf(':');
            return colon > "tcp://".Length ? address.Substring(0, colon + 1) + port : address;
        }

        static int Refuse(string problem)
        {
            Console.Error.WriteLine("arsim C# host: " + problem);
            Console.Error.WriteLine(HostOptions.Usage);
            return 2;
        }
    }

    /// <summary>SIGTERM and SIGINT set a stop flag instead of killing the process, so that a
    /// launcher's stop ends the serving loop and the host exits 0. Mono.Posix waits for the
    /// signals on a thread of its own; without it (another runtime), Ctrl-C and process exit
    /// are caught as .NET offers them.</summary>
    static class StopSignals
    {
        public static void Watch(ManualResetEventSlim stop)
        {
            try
            {
                WatchPosix(stop);
            }
            catch (Exception error) when (error is TypeLoadException || error is FileNotFoundException
                                          || error is DllNotFoundException || error is EntryPointNotFoundException
                                          || error is NotSupportedException)
            {
                Console.CancelKeyPress += (sender, e) =>
                {
                    e.Cancel = true;
                    stop.Set();
                };
                AppDomain.CurrentDomain.ProcessExit += (sender, e) => stop.Set();
            }
        }

        // Its own method: the JIT loads Mono.Posix only when compiling it, so a missing
        // assembly is an exception the caller catches.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void WatchPosix(ManualResetEventSlim stop)
        {
            var signals = new[]
            {
                new Mono.Unix.UnixSignal(Mono.Unix.Native.Signum.SIGTERM),
                new Mono.Unix.UnixSignal(Mono.Unix.Native.Signum.SIGINT),
            };
            new Thread(() =>
            {
                Mono.Unix.UnixSignal.WaitAny(signals, -1);
                stop.Set();
            }) { IsBackground = true, Name = "stop-signals" }.Start();
        }
    }
}
