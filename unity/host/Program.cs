using System;
using System.Globalization;
using System.Threading;
using Arsim.Core;

namespace Arsim.Host
{
    /// <summary>`mono arsim-unity-host.exe [--address tcp://127.0.0.1:5555] [--allow-remote]
    /// [--max-request-mib 128]`: Arsim.Core's server with the CPU mesh ray caster, the C# side's
    /// reference for protocol v1 and a GPU-free server for users who want a C# backend.</summary>
    public static class Program
    {
        const string Usage = "usage: mono arsim-unity-host.exe [--address tcp://127.0.0.1:5555] [--allow-remote] [--max-request-mib N]";
        static volatile bool stopping;

        public static int Main(string[] args)
        {
            string address = "tcp://127.0.0.1:5555";
            var allowRemote = false;
            long maxRequestMib = 128;
            for (var i = 0; i < args.Length; i++)
            {
                switch (args[i])
                {
                    case "--address":
                        if (++i >= args.Length) return Fail("--address needs a value");
                        address = args[i];
                        break;
                    case "--allow-remote":
                        allowRemote = true;
                        break;
                    case "--max-request-mib":
                        if (++i >= args.Length || !long.TryParse(args[i], NumberStyles.None, CultureInfo.InvariantCulture, out maxRequestMib)
                            || maxRequestMib < 1 || maxRequestMib > 1L << 20)
                            return Fail("--max-request-mib needs a whole number of MiB from 1 to 1048576");
                        break;
                    case "-h":
                    case "--help":
                        Console.WriteLine(Usage);
                        return 0;
                    default:
                        return Fail("unknown argument '" + args[i] + "'");
                }
            }
            ZmtpRepServer server;
            try
            {
                server = new ZmtpRepServer(address, allowRemote, maxRequestMib << 20);
                server.Start();
            }
            catch (ArgumentException error)
            {
                return Fail(error.Message);
            }
            catch (System.Net.Sockets.SocketException error)
            {
                Console.Error.WriteLine("[arsim-host] cannot bind " + address + ": " + error.Message);
                return 2;
            }
            StopOnSignals();
            var service = new BackendService(new MeshRayCaster());
            service.Log += line => Console.Error.WriteLine("[arsim-host] " + line);
            Console.Error.WriteLine("[arsim-host] arsim C# host serving protocol v" + Protocol.Version + " at " + address);
            using (server)
            {
                while (!stopping)
                {
                    ZmtpRequest request;
                    if (server.TryTake(out request, 200)) request.Reply(service.Handle(request.Frames));
                }
            }
            Console.Error.WriteLine("[arsim-host] stopped");
            return 0;
        }

        static int Fail(string problem)
        {
            Console.Error.WriteLine("[arsim-host] " + problem);
            Console.Error.WriteLine(Usage);
            return 2;
        }

        /// <summary>SIGINT and SIGTERM end the serving loop, so a launcher's stop is a clean
        /// exit 0. Mono.Posix waits for the signals on a thread of its own.</summary>
        static void StopOnSignals()
        {
            Console.CancelKeyPress += (sender, e) => { e.Cancel = true; stopping = true; };
            var signals = new[]
            {
                new Mono.Unix.UnixSignal(Mono.Unix.Native.Signum.SIGTERM),
                new Mono.Unix.UnixSignal(Mono.Unix.Native.Signum.SIGINT),
            };
            new Thread(() =>
            {
                Mono.Unix.UnixSignal.WaitAny(signals, -1);
                stopping = true;
            }) { IsBackground = true, Name = "signals" }.Start();
        }
    }
}
