"""Race control above the engine: what the faces do with the stewards' verdicts (incident
clips, :mod:`.clips`). The rules and verdicts themselves are the engine's
(:mod:`arsim_core.engine.incidents`, :mod:`arsim_core.engine.stewards`)."""
