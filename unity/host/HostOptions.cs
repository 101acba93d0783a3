using System;
using System.Collections.Generic;
using System.Globalization;

namespace Arsim.Host
{
    /// <summary>A command line the host cannot run with; the message says what is wrong.</summary>
    public sealed class UsageException : Exception
    {
        public UsageException(string message) : base(message) { }
    }

    /// <summary>The host's command line: the embedded backend's arguments (the launcher passes
    /// the same to both) and a log level. Anything else is refused rather than ignored, so a
    /// typo cannot leave the host serving somewhere other than intended.</summary>
    public sealed class HostOptions
    {
        public const string Usage =
            "usage: mono arsim-unity-host.exe [--address tcp://127.0.0.1:5555] [--allow-remote] " +
            "[--max-request-mib 128] [--log-level info|debug]";
        public const long MaxRequestMibLimit = 1L << 20;

        public string Address = "tcp://127.0.0.1:5555";
        public bool AllowRemote;
        public long MaxRequestMib = 128;
        /// <summary>Also log every request (topic, step, reply, time taken).</summary>
        public bool Debug;
        /// <summary>--help: print the usage and exit.</summary>
        public bool Help;

        public long MaxRequestBytes { get { return MaxRequestMib << 20; } }

        /// <summary>The options of args (`--flag value` or `--flag=value`); UsageException
        /// for an unknown flag, a missing value or a bad number.</summary>
        public static HostOptions Parse(IList<string> args)
        {
            var options = new HostOptions();
            for (var i = 0; i < args.Count; i++)
            {
                var flag = args[i];
                string inline = null;
                var equals = flag.IndexOf('=');
                if (flag.StartsWith("--", StringComparison.Ordinal) && equals > 0)
                {
                    inline = flag.Substring(equals + 1);
                    flag = flag.Substring(0, equals);
                }
                switch (flag)
                {
                    case "--address":
                        options.Address = Value(args, ref i, flag, inline);
                        if (options.Address.Length == 0) throw new UsageException("--address needs an address such as tcp://127.0.0.1:5555");
                        break;
                    case "--allow-remote":
                        NoValue(flag, inline);
                        options.AllowRemote = true;
                        break;
                    case "--max-request-mib":
                        options.MaxRequestMib = Mebibytes(Value(args, ref i, flag, inline));
                        break;
                    case "--log-level":
                        options.Debug = Level(Value(args, ref i, flag, inline));
                        break;
                    case "-h":
                    case "--help":
                        NoValue(flag, inline);
                        options.Help = true;
                        break;
                    default:
                        throw new UsageException("unknown argument '" + args[i] + "'");
                }
            }
            return options;
        }

        static string Value(IList<string> args, ref int i, string flag, string inline)
        {
            if (inline != null) return inline;
            if (i + 1 >= args.Count) throw new UsageException(flag + " needs a value");
            return args[++i];
        }

        static void NoValue(string flag, string inline)
        {
            if (inline != null) throw new UsageException(flag + " takes no value");
        }

        static long Mebibytes(string text)
        {
            long value;
            if (!long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value) || value < 1 || value > MaxRequestMibLimit)
                throw new UsageException("--max-request-mib needs a whole number of MiB from 1 to " + MaxRequestMibLimit + ", got '" + text + "'");
            return value;
        }

        static bool Level(string text)
        {
            if (text == "info") return false;
            if (text == "debug") return true;
            throw new UsageException("--log-level is info or debug, got '" + text + "'");
        }
    }
}
