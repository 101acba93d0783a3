"""The failure message both launchers print, and the runner's pass-through of child output."""

from __future__ import annotations

import os
import subprocess
import sys

from arsim_launch.failures import LastLines, failure_message, how_it_ended
from arsim_launch.node_spec import NodeSpec
from arsim_launch.output import OutputPump


def test_last_lines_keep_the_tail_across_chunks() -> None:
    last = LastLines(size=3)
    last.feed(b'one\ntw')
    last.feed('o\n\nthree\nfour\nfi')
    assert last.last() == ['three', 'four', 'fi']


def test_how_a_process_ended() -> None:
    assert how_it_ended(1) == 'exited with code 1'
    assert how_it_ended(-9) == 'was killed by SIGKILL'
    assert how_it_ended(0) == 'exited with code 0'


def test_the_message_names_a_container_with_its_nodes() -> None:
    spec = NodeSpec('arsim_bridge', 'container', 'cars_dynamics', required=True,
                    members=(NodeSpec('p', 'dynamics', 'ego_dynamics'),
                             NodeSpec('p', 'dynamics', 'opp_dynamics')))
    assert failure_message(spec, -11, []) == (
        '[arsim] required process cars_dynamics (hosting ego_dynamics, opp_dynamics) was '
        'killed by SIGSEGV; stopping the simulation (it printed nothing)')
    assert failure_message(spec, 1, ['a', 'b']).endswith('Its last lines:\n    | a\n    | b')


def test_the_pump_passes_output_on_and_keeps_each_childs_last_lines(tmp_path) -> None:
    out, err = (tmp_path / 'out').open('wb'), (tmp_path / 'err').open('wb')
    pump = OutputPump(out.fileno(), err.fileno())
    pump.start()
    code = 'import sys; print("to stdout"); print("last words", file=sys.stderr)'
    child = subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=dict(os.environ, PYTHONUNBUFFERED='1'))
    pump.add('child', child.stdout, child.stderr)
    assert child.wait(10) == 0
    assert sorted(pump.lines('child')) == ['last words', 'to stdout']  # two pipes: any order
    pump.drain()
    out.close()
    err.close()
    assert (tmp_path / 'out').read_text() == 'to stdout\n'
    assert (tmp_path / 'err').read_text() == 'last words\n'
