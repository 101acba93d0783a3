"""Formula Student missions over ROS, with EUFS sim's names: the sample cone driver, in its own
process and knowing nothing of arsim, finishes each mission on ground-truth cones, /cmd and
/ros_can/state; a driver that runs over cones knocks them down and pays for them; the result
reaches /arsim/mission and the printed table."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from eufs_msgs.msg import CanState, ConeArrayWithCovariance
from laps import DRIVER_WAITED_FOR
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from simharness import (
    UNPACED,
    Probe,
    Simulation,
    driver_process,
    installed_resources,
    stop_process,
)

from arsim_core.track.fs import generate
from arsim_core.track.fs.mission import Mission
from arsim_core.track.loaders import save_track
from arsim_msgs.msg import MissionResult, MissionStatus, SimEvent

DRIVER = Path(__file__).resolve().parents[1] / 'drivers' / 'cone_driver.py'
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
ENDED = (MissionResult.AS_FINISHED, MissionResult.AS_EMERGENCY)


def fs_simulation(simulation, tmp_path: Path, kind: str, seed: int = 0) -> tuple[Simulation,
                                                                                   Mission]:
    """The FS car with its ground-truth cones only (no rendering: fast) on a fresh layout,
    under the EUFS topic map."""
    track = generate(kind, seed)
    folder = save_track(track, tmp_path / 'tracks', f'fs_{kind}')
    profile = yaml.safe_load((installed_resources() / 'config' / 'cars' /
                              'formula_student.yaml').read_text())
    profile['Sensors'] = {'cones': profile['Sensors']['cones']}
    profile_path = tmp_path / 'fs_cones.yaml'
    profile_path.write_text(yaml.safe_dump(profile))
    sim = simulation(settings={
        # held at t=0 until the driver's first command: the go signal comes 5 s of sim time
        # later, and the run would be over before a driver that starts late had spoken; then
        # each frame waits for the driver's answer however loaded the machine is (a driver
        # answering late steers on old cones, and may hit them)
        'simulation': {**DRIVER_WAITED_FOR, 'real_time_factor': UNPACED},
        'topic_map': 'eufs', 'track': {'name': str(folder)},
        'cars': [{'name': 'ego', 'profile': str(profile_path)}]})
    assert track.mission is not None
    return sim, track.mission


class Watcher:
    """What the stack and a user see of the mission: the status, the AS state, the events."""

    def __init__(self, sim: Simulation) -> None:
        self.probe = Probe(sim.domain_id)
        self.status: MissionStatus | None = None
        self.as_states: list[int] = []
        self.events: list[SimEvent] = []
        self.track: ConeArrayWithCovariance | None = None
        node = self.probe.node
        node.create_subscription(MissionStatus, '/arsim/mission', self._on_status, LATCHED)
        node.create_subscription(CanState, '/ros_can/state', self._on_state, LATCHED)
        node.create_subscription(SimEvent, '/arsim/events', self.events.append, 100)
        node.create_subscription(ConeArrayWithCovariance, '/ground_truth/track',
                                 self._on_track, LATCHED)

    def _on_status(self, msg: MissionStatus) -> None:
        self.status = msg

    def _on_state(self, msg: CanState) -> None:
        if not self.as_states or self.as_states[-1] != msg.as_state:
            self.as_states.append(msg.as_state)

    def _on_track(self, msg: ConeArrayWithCovariance) -> None:
        self.track = msg

    @property
    def ego(self) -> MissionResult | None:
        return self.status.cars[0] if self.status is not None and self.status.cars else None

    def wait_until_ended(self, timeout_s: float) -> bool:
        """Until the status and the AS state on EUFS's topic both say the run ended."""
        return self.probe.spin_until(
            lambda: self.ego is not None and self.ego.as_state in ENDED
            and self.as_states[-1:] == [self.ego.as_state], timeout_s)


def drive(sim: Simulation, mission: Mission, tmp_path: Path, timeout_s: float,
          *extra: str) -> Watcher:
    args = ['--mission', mission.kind, '--laps', str(mission.laps), *extra]
    if mission.path is not None:
        path = tmp_path / 'path.csv'
        path.write_text('# x_m,y_m\n' + ''.join(f'{x},{y}\n' for x, y in mission.path))
        args += ['--path', str(path)]
    # Subscribed, and the bridge discovered, before the driver starts: once it drives, the go
    # signal may come within a second of sim time, and a latched topic gives a subscriber
    # matched late (discovery is slower on a loaded machine) only its last state.
    watcher = Watcher(sim)
    try:
        node = watcher.probe.node
        assert watcher.probe.spin_until(lambda: node.count_publishers('/arsim/mission') > 0,
                                        60.0), sim.log
        driver = driver_process(DRIVER, sim.domain_id, *args)
        try:
            ended = watcher.wait_until_ended(timeout_s)
            assert ended, f'{watcher.ego}\n{sim.log}'
        finally:
            stop_process(driver)
    finally:
        watcher.probe.close()
    return watcher


CASES = [('acceleration', 0, 120.0), ('skidpad', 0, 180.0), ('autocross', 0, 180.0),
         ('trackdrive', 1, 600.0)]


@pytest.mark.parametrize(('kind', 'seed', 'timeout_s'), CASES, ids=[c[0] for c in CASES])
def test_the_sample_driver_finishes_the_mission(simulation, tmp_path: Path, kind: str,
                                                seed: int, timeout_s: float) -> None:
    sim, mission = fs_simulation(simulation, tmp_path, kind, seed)
    watcher = drive(sim, mission, tmp_path, timeout_s)
    ego = watcher.ego
    assert ego is not None
    assert ego.as_state == MissionResult.AS_FINISHED, (ego, sim.log)
    assert ego.dnf == '' and len(ego.lap_times) == mission.laps
    assert ego.cones_down == 0 and ego.off_courses == 0
    assert math.isclose(ego.total_time, ego.run_time)
    # The stack saw AS Ready, then AS Driving, then AS Finished, on EUFS's topic.
    assert watcher.as_states == [CanState.AS_READY, CanState.AS_DRIVING, CanState.AS_FINISHED]
    assert sim.stop() == 0, sim.log
    assert f'{kind} results:' in sim.log and 'AS Finished' in sim.log, sim.log
    assert f'total (s): {ego.total_time:.3f}' in sim.log, sim.log


def test_cones_a_driver_runs_over_fall_and_cost_two_seconds_each(simulation,
                                                                 tmp_path: Path) -> None:
    sim, mission = fs_simulation(simulation, tmp_path, 'acceleration')
    # A metre left of the middle: the car's left side runs over the blue cones.
    watcher = drive(sim, mission, tmp_path, 120.0, '--offset', '1.0')
    ego = watcher.ego
    assert ego is not None and ego.as_state == MissionResult.AS_FINISHED, (ego, sim.log)
    assert ego.cones_down >= 3
    assert math.isclose(ego.penalty_s, 2.0 * ego.cones_down)
    assert math.isclose(ego.total_time, ego.run_time + ego.penalty_s)
    knocked = [e for e in watcher.events if e.kind == SimEvent.CONE_DOWN]
    assert len(knocked) >= ego.cones_down
    # The map-frame cones show the blue ones where they lie, off their places.
    assert watcher.track is not None
    cones = generate('acceleration').cones
    assert cones is not None
    placed = {(round(x, 3), round(y, 3)) for x, y in cones.of(2).tolist()}
    moved = [c for c in watcher.track.blue_cones
             if (round(c.point.x, 3), round(c.point.y, 3)) not in placed]
    assert len(moved) >= 3
    assert len(watcher.track.blue_cones) == len(placed)
    assert sim.stop() == 0, sim.log
    assert f'{ego.cones_down} DOO x 2 s' in sim.log, sim.log
