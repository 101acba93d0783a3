"""Real-time factor of a Formula Student trackdrive (``fs_trackdrive_rtf``).

The shipped trackdrive scenario's car (config/formula_student/trackdrive.yaml): the FS car with
its 1280 x 720 camera at 20 Hz, its 32 x 1024 3D LiDAR at 10 Hz and its ground-truth cones,
under EUFS sim's names, and the sample cone driver in its own process answering every cones
message (the bridge waits for each answer). The figure is sim time over wall time on /clock,
counted from the go signal for ``MEASURE_S`` of wall time.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from benchkit import Row, main, sized, take_smoke_flag  # noqa: E402
from simharness import Probe, Simulation, driver_process, stop_process  # noqa: E402

MEASURE_S = 30.0
DRIVER = BENCH_DIR.parent / 'tests' / 'drivers' / 'cone_driver.py'
SETTINGS = {'topic_map': 'eufs', 'track': {'name': 'fs_trackdrive'},
            'cars': [{'name': 'ego', 'profile': 'formula_student'}]}
AS_DRIVING = 2
ROWS = (Row('fs_trackdrive_rtf', 'x_realtime'),)


def measure_rtf(measure_s: float | None = None) -> dict[str, float]:
    """Sim time over wall time on /clock for ``measure_s`` (default ``MEASURE_S``, a second in
    a smoke run) from AS Driving."""
    measure_s = measure_s if measure_s is not None else sized(MEASURE_S, 1.0)
    from eufs_msgs.msg import CanState
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock

    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    with tempfile.TemporaryDirectory(prefix='arsim-bench-') as tmp:
        sim = Simulation(Path(tmp), SETTINGS, pace=None)  # a whole mission: unpaced, in smoke too
        sim.start()
        driver = driver_process(DRIVER, sim.domain_id, '--mission', 'trackdrive', '--laps', '10')
        probe = Probe(sim.domain_id)
        try:
            clock: list[int] = [0]
            state: list[int] = [0]
            probe.node.create_subscription(
                Clock, '/clock', lambda m: clock.__setitem__(0, m.clock.sec * 10**9
                                                             + m.clock.nanosec), 10)
            probe.node.create_subscription(
                CanState, '/ros_can/state', lambda m: state.__setitem__(0, m.as_state), latched)
            if not probe.spin_until(lambda: state[0] == AS_DRIVING, 300.0):
                msg = f'the trackdrive never reached AS Driving\n{sim.log}'
                raise RuntimeError(msg)
            start_wall, start_sim = time.monotonic(), clock[0]
            probe.spin_until(lambda: False, measure_s)
            wall, sim_s = time.monotonic() - start_wall, (clock[0] - start_sim) / 1e9
        finally:
            probe.close()
            stop_process(driver)
            sim.stop()
    return {'rtf': sim_s / wall, 'sim_s': sim_s, 'wall_s': wall}


def run() -> list[tuple[str, float, str]]:
    result = measure_rtf()
    print(f'[bench] fs_trackdrive_rtf: {result}', file=sys.stderr)
    return [('fs_trackdrive_rtf', result['rtf'], 'x_realtime')]


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
