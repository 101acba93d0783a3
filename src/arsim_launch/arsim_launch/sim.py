"""``python3 -m arsim_launch`` (through ``__main__``): run a scenario without ros2 launch.

Arguments are those of ``ros2 launch arsim_launch sim.launch.py`` (``arsim_launch.arguments``),
e.g. ``track:=<name or path> cars:=3 profile:=<name> rtf:=1.0``; ``--help`` lists them.

The configuration is read and checked in a process of its own (``arsim_launch.plan``), which
hands back the run's plan and ends; this process then only starts and supervises the plan
(``arsim_launch.runner``), so it stays small for the whole run.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys

from arsim_core.process.entrypoints import stop_on_signals
from arsim_launch.node_spec import PLAN_FD_ENV, RunPlan, remove_folders
from arsim_launch.runner import child_setup, run

# Started as arsim's console scripts start (arsim_core.process.entrypoints): quiet when
# stopped while it imports, and without compiling kernels it never runs.
PLANNER = ('from arsim_core.process.entrypoints import run; '
           'run("arsim_launch.plan", steps_cars=False)')


def main(argv: list[str] | None = None) -> int:
    stop = stop_on_signals()  # SIGTERM stops the runner as Ctrl-C does, also during start-up
    try:
        code, plan = planned(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:  # stopped before anything was started
        return 0
    if plan is None:
        return code
    try:
        return run(plan.processes, stop, plan.heartbeat_timeout_s, plan.env)
    finally:
        remove_folders(plan.folders)


def planned(argv: list[str]) -> tuple[int, RunPlan | None]:
    """The planning process's exit code, and the plan it wrote (None if it wrote none: after
    ``--help``, a configuration error it printed, or a stop)."""
    read_end, write_end = os.pipe()
    try:
        planner = subprocess.Popen([sys.executable, '-c', PLANNER, *argv], pass_fds=(write_end,),
                                   env={**os.environ, PLAN_FD_ENV: str(write_end)},
                                   preexec_fn=functools.partial(child_setup, True))
    finally:
        os.close(write_end)
    try:
        with os.fdopen(read_end, 'rb') as pipe:
            text = pipe.read()  # until the planner closes its end: a signal cuts it short
        code = planner.wait()
    finally:
        if planner.poll() is None:  # we were stopped while it planned
            planner.send_signal(signal.SIGINT)
            planner.wait()
    return code, RunPlan.from_json(text.decode()) if code == 0 and text else None


if __name__ == '__main__':
    sys.exit(main())
