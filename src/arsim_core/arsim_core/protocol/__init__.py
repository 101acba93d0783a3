"""The bridge <-> backend protocol (docs/protocol.md): its framing (``framing``), its checked
value limits (``wire``), its typed message bodies (``messages``) and what they carry
(``appearance``), and a client for it (``client``). Needs nothing of arsim above the base
modules, so every process that speaks it stays light."""
