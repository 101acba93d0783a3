using System.Collections.Generic;
using System.Text;
using Arsim.Core;

namespace Arsim.Runtime
{
    /// <summary>The simulation time the bridge has reached, read from the server's replies
    /// (every reply echoes its request's time_ns), so the engine's clock follows the bridge's
    /// rather than the wall: a held clock (a bridge waiting for its drivers sends the same
    /// time again) advances nothing, and a new InitialSettings starting again at 0 is a reset,
    /// not a step back.</summary>
    public sealed class BridgeClock
    {
        long lastNs = -1;
        long pendingNs;

        /// <summary>Notes a reply's time; Error replies are skipped.</summary>
        public void Observe(IList<byte[]> reply)
        {
            if (reply.Count < 2 || Encoding.ASCII.GetString(reply[0]) == Protocol.Error) return;
            var header = Json.Parse(reply[1], Protocol.MaxHeaderDepth) as Dictionary<string, object>;
            object value;
            if (header == null || !header.TryGetValue("time_ns", out value) || !(value is long)) return;
            var timeNs = (long)value;
            if (lastNs >= 0 && timeNs > lastNs) pendingNs += timeNs - lastNs;
            lastNs = timeNs;
        }

        /// <summary>Simulation seconds advanced since the last call.</summary>
        public double TakeAdvance()
        {
            var seconds = pendingNs * 1e-9;
            pendingNs = 0;
            return seconds;
        }
    }
}
