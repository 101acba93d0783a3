"""Stopping arsim's processes without rclpy (the embedded backend): a signal ends them quietly,
even when the exception its handler raises is lost on the way or comes while numba compiles."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rawbackend import SETTINGS, RawBackend, frames_of, track_arrays

from arsim_core.protocol import framing


def test_a_signal_whose_interrupt_is_lost_in_a_destructor_still_stops_the_backend(
        tmp_path: Path) -> None:
    script = Path(__file__).with_name('backend_interrupted_in_del.py')
    backend = RawBackend(tmp_path / 'backend.log', program=(str(script),))
    try:
        reply = backend.ask(frames_of(framing.INITIAL_SETTINGS, SETTINGS, track_arrays()))
        assert reply.topic == framing.READY, reply.header  # the request in hand is answered
        code = backend.process.wait(5)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        backend.close()
    log = backend.log
    assert code == 0, log
    assert 'arsim-embedded stopped' in log, log
    assert 'Exception ignored' not in log and 'Traceback' not in log, log


def test_a_signal_while_a_kernel_compiles_is_noted_and_the_kernel_still_works(
        tmp_path: Path) -> None:
    script = Path(__file__).with_name('interrupted_while_compiling.py')
    env = {**os.environ, 'ARSIM_NUMBA': '1', 'ARSIM_NUMBA_CACHE': str(tmp_path)}  # cold cache
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert 'triple(14.0) = 42.0; stop requested: True' in output, output
