"""Stopping the embedded backend process: a signal ends it, quietly, even when the exception its
handler raises is lost on the way."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rawbackend import SETTINGS, RawBackend, frames_of, track_arrays

from arsim_core import protocol


def test_a_signal_whose_interrupt_is_lost_in_a_destructor_still_stops_the_backend(
        tmp_path: Path) -> None:
    script = Path(__file__).with_name('backend_interrupted_in_del.py')
    backend = RawBackend(tmp_path / 'backend.log', program=(str(script),))
    try:
        reply = backend.ask(frames_of(protocol.INITIAL_SETTINGS, SETTINGS, track_arrays()))
        assert reply.topic == protocol.READY, reply.header  # the request in hand is answered
        code = backend.process.wait(5)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        backend.close()
    log = backend.log
    assert code == 0, log
    assert 'arsim-embedded stopped' in log, log
    assert 'Exception ignored' not in log and 'Traceback' not in log, log
