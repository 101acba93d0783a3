using System;

namespace Arsim.Core
{
    /// <summary>Where a server may bind: loopback unless remote peers are allowed explicitly,
    /// as the protocol has no authentication (docs/protocol.md, Transport).</summary>
    public static class Endpoint
    {
        const string Scheme = "tcp://";

        /// <summary>host (an IPv4 address to bind; "localhost" gives 127.0.0.1, "*" gives
        /// 0.0.0.0) and port (0: any free port) of tcp://HOST:PORT; ArgumentException naming
        /// the address and what is expected otherwise.</summary>
        public static void Parse(string address, bool allowRemote, out string host, out int port)
        {
            string expected = allowRemote
                ? "expected tcp://<IPv4 address, * or localhost>:<port 0-65535>"
                : "expected tcp://<127.x.y.z or localhost>:<port 0-65535>";
            if (address == null || !address.StartsWith(Scheme, StringComparison.Ordinal))
                throw new ArgumentException($"address '{address}': {expected}");
            string rest = address.Substring(Scheme.Length);
            int colon = rest.LastIndexOf(':');
            if (colon < 0 || !TryPort(rest.Substring(colon + 1), out port))
                throw new ArgumentException($"address '{address}' has no port from 0 to 65535; {expected}");
            string name = rest.Substring(0, colon);
            bool loopback;
            if (name == "localhost")
            {
                host = "127.0.0.1";
                loopback = true;
            }
            else if (name == "*")
            {
                host = "0.0.0.0";
                loopback = false;
            }
            else if (TryIPv4(name, out byte first))
            {
                host = name;
                loopback = first == 127;
            }
            else
            {
                throw new ArgumentException($"address '{address}': '{name}' is no IPv4 address; {expected}");
            }
            if (!loopback && !allowRemote)
                throw new ArgumentException($"address '{address}' is not on loopback; binding another interface must be " +
                                            "allowed explicitly (--allow-remote), as the protocol has no authentication");
        }

        static bool TryPort(string text, out int port)
        {
            port = 0;
            if (text.Length == 0 || text.Length > 5) return false;
            foreach (char c in text)
            {
                if (c < '0' || c > '9') return false;
                port = port * 10 + (c - '0');
            }
            return port <= 65535;
        }

        /// <summary>Dotted-quad decimal only: no shorthand such as 127.1 that a lenient
        /// parser would also take, no leading zeros (octal to some readers).</summary>
        static bool TryIPv4(string text, out byte first)
        {
            first = 0;
            string[] parts = text.Split('.');
            if (parts.Length != 4) return false;
            for (int i = 0; i < 4; i++)
            {
                string part = parts[i];
                if (part.Length == 0 || part.Length > 3 || (part.Length > 1 && part[0] == '0')) return false;
                int value = 0;
                foreach (char c in part)
                {
                    if (c < '0' || c > '9') return false;
                    value = value * 10 + (c - '0');
                }
                if (value > 255) return false;
                if (i == 0) first = (byte)value;
            }
            return true;
        }
    }
}
