"""The pip launcher's planning process (``arsim_launch.plan``): what it hands over, and what it
leaves behind when nobody takes the plan."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from arsim_launch.node_spec import PLAN_FD_ENV, RunPlan
from arsim_launch.sim import PLANNER


def plan_with_reader(reading: bool, tmp: Path) -> tuple[subprocess.CompletedProcess, bytes]:
    """The planner's run of the default scenario, its temporary folder ``tmp``, writing to a
    pipe that is read (``reading``) or already closed; its output and what came through."""
    read_end, write_end = os.pipe()
    if not reading:
        os.close(read_end)
    env = {**os.environ, PLAN_FD_ENV: str(write_end), 'TMPDIR': str(tmp)}
    with subprocess.Popen([sys.executable, '-c', PLANNER], pass_fds=(write_end,), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as planner:
        os.close(write_end)
        plan = b''
        if reading:
            with os.fdopen(read_end, 'rb') as pipe:
                plan = pipe.read()
        out, err = planner.communicate(timeout=60)
    return subprocess.CompletedProcess(planner.args, planner.returncode, out, err), plan


def test_the_plan_names_the_run_s_socket_folder_which_it_leaves_to_the_launcher() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result, text = plan_with_reader(True, Path(tmp))
        assert result.returncode == 0, result.stderr
        plan = RunPlan.from_json(text.decode())
        assert plan.processes and len(plan.folders) == 1
        assert Path(plan.folders[0]).parent == Path(tmp)
        assert Path(plan.folders[0]).is_dir()  # the planner has ended; the folder is the run's


def test_a_plan_nobody_reads_leaves_no_folder_and_no_traceback() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result, _ = plan_with_reader(False, Path(tmp))
        assert result.returncode == 0, result.stderr
        assert 'Traceback' not in result.stderr, result.stderr
        assert list(Path(tmp).iterdir()) == []
