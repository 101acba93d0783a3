using System;

namespace Arsim.Core
{
    /// <summary>A message that breaks protocol v1 (docs/protocol.md); the server answers it
    /// with an Error reply naming the reason and keeps serving.</summary>
    public sealed class ProtocolException : Exception
    {
        public ProtocolException(string message) : base(message) { }
    }
}
