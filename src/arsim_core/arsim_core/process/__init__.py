"""What every arsim process shares: quiet start-up and stop (``entrypoints``), work a stop
signal must not cut (``interrupts``), signs of life for the launcher (``heartbeat``) and heap
tuning (``memory``)."""
