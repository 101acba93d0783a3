using System;
using System.Net;

namespace Arsim.Core
{
    /// <summary>Where a server may bind: loopback by default, as the protocol has no
    /// authentication (docs/protocol.md, Transport).</summary>
    public static class Endpoint
    {
        public static void Parse(string address, bool allowRemote, out string host, out int port)
        {
            const string scheme = "tcp://";
            var expected = "expected tcp://127.0.0.1:<port> or tcp://localhost:<port>" +
                           (allowRemote ? " (or any IPv4 address, or *)" : " (other interfaces need --allow-remote)");
            if (address == null || !address.StartsWith(scheme, StringComparison.Ordinal))
                throw new ArgumentException("address '" + address + "': " + expected);
            var rest = address.Substring(scheme.Length);
            var colon = rest.LastIndexOf(':');
            if (colon <= 0 || !int.TryParse(rest.Substring(colon + 1), out port) || port < 0 || port > 65535)
                throw new ArgumentException("address '" + address + "': expected a port from 0 to 65535; " + expected);
            host = rest.Substring(0, colon);
            if (host == "localhost") host = "127.0.0.1";
            if (host == "*") host = "0.0.0.0";
            IPAddress ip;
            if (!IPAddress.TryParse(host, out ip) || ip.AddressFamily != System.Net.Sockets.AddressFamily.InterNetwork)
                throw new ArgumentException("address '" + address + "': '" + host + "' is not an IPv4 address; " + expected);
            if (!allowRemote && ip.GetAddressBytes()[0] != 127)
                throw new ArgumentException("address '" + address + "' is not on loopback; " + expected);
        }
    }
}
