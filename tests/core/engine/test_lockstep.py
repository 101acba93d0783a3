"""The lockstep loop without DDS: a real engine, the embedded backend in process and real
vehicle models, over a Link whose "dynamics nodes" integrate in the call that publishes
/clock and whose drivers answer (or not) in the call that delivers their scan.

Nothing here waits: the link's spin_until evaluates its condition once, as if the timeout
had passed when the condition is not met yet.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pytest

from arsim_core.backend.server import NAME as BACKEND_NAME
from arsim_core.config.scenario import CarSpec, Scenario
from arsim_core.dynamics import ModelDivergedError, Vehicle
from arsim_core.engine import (
    CarState,
    Drivers,
    Engine,
    InProcessRenderer,
    Judgement,
    Lockstep,
    Placement,
    TrackWorld,
)
from arsim_core.engine.collisions import BARRIER, start_poses
from arsim_core.engine.lockstep import PAUSED_POLL_S, RECORDING_LAG_FRAMES
from arsim_core.engine.referee import BOUNCE_RESTITUTION, COLLISION, INVALID_STATE
from arsim_core.engine.render import RenderPoses
from arsim_core.engine.schedule import SensorKey
from arsim_core.errors import ArsimError
from arsim_core.protocol import framing
from arsim_core.protocol.messages import TrackRequest, UpdateReply
from arsim_core.recording.ledger import REPORT_EVERY_FRAMES, report_due
from arsim_core.sensors.computed import ComputedSensors

Driver = Callable[[str, int], bool]  # (car, scan time [ns]) -> whether it answers


class CarDynamics:
    """One car's dynamics node, as arsim_bridge/dynamics_node.py: on each clock it integrates
    from its last clock time to the new one, or applies the pending placement instead, and
    publishes the state stamped with the clock."""

    def __init__(self, car: CarSpec) -> None:
        self.name = car.name
        self.vehicle = Vehicle(car.profile.vehicle)
        self.start_pose = car.pose
        self.time_ns: int | None = None
        self.pending: tuple[float, float, float, float] | None = None

    def on_track(self, cars: tuple[CarSpec, ...], world: TrackWorld) -> None:
        self.start_pose = start_poses(cars, world.start_pose)[self.name]

    def on_clock(self, now: int) -> CarState | None:
        if self.start_pose is None:
            return None
        if self.time_ns is None or now < self.time_ns:
            self.vehicle.reset(*self.start_pose)
            self.pending = None
        elif now > self.time_ns:
            if self.pending is not None:
                self.vehicle.reset(*self.pending)
                self.pending = None
            else:
                try:
                    self.vehicle.advance((now - self.time_ns) * 1e-9)
                except ModelDivergedError:
                    self.vehicle.reset(*self.start_pose)
        self.time_ns = now
        v = self.vehicle
        x, y, yaw = v.pose
        vx, vy, wz = v.body_velocity
        ax, ay = v.body_acceleration
        return CarState(x, y, yaw, vx, vy, wz, ax, ay, v.steering_angle)


@dataclass(frozen=True)
class Delivered:
    time_ns: int
    states: dict[str, CarState]
    reply: framing.Message
    computed: UpdateReply

    @property
    def step(self) -> int:
        return int(self.reply.step)

    def scanned(self) -> set[str]:
        """Cars with frames in this delivery."""
        return {str(meta['car']) for meta in framing.frame_meta(self.reply).values()}


class InProcessLink:
    """A Link whose ROS graph is this object: dynamics nodes, drivers and a track node."""

    def __init__(self, scenario: Scenario, ticks: int,
                 drivers: Mapping[str, Driver] | None = None) -> None:
        self.scenario = scenario
        self.drivers = Drivers()
        self.dynamics = {car.name: CarDynamics(car) for car in scenario.cars}
        self.scripts = dict(drivers or {})
        self.ticks = ticks
        self.stop: Callable[[], bool] = lambda: False  # ends the run early when true
        self.track: TrackWorld | None = None
        self.tracks_at: dict[int, TrackWorld] = {}  # a track arriving with that clock
        self.dead: set[str] = set()  # cars whose dynamics never answer
        self.skip: set[tuple[str, int]] = set()  # (car, clock) a dynamics node misses
        self.corrupt: dict[tuple[str, int], CarState] = {}  # (car, clock) -> state it sends
        self.states: dict[str, tuple[int, CarState]] = {}
        self.history: dict[str, dict[int, CarState]] = {name: {} for name in self.dynamics}
        self.events: list[tuple] = []  # every call in order: (kind, time or timeout, ...)
        self.clocks: list[int] = []
        self.judgements: list[tuple[int, Judgement]] = []
        self.frames: list[Delivered] = []
        self.logs: list[tuple[str, str]] = []
        self.recorder_ready = True
        self.recorder_lag = 0  # frames the recorder trails what was fanned out
        self.recorder_stalls_at: int | None = None  # the frame time it never gets past
        self._ok_calls = 0

    # --- the test's side ---------------------------------------------------------------------
    def set_track(self, world: TrackWorld) -> None:
        """The track node publishes ``world``: the bridge and every dynamics node get it."""
        self.track = world
        for node in self.dynamics.values():
            node.on_track(self.scenario.cars, world)

    def driver_waits(self) -> list[tuple[int, bool]]:
        """(time of the frame delivered just before, result) of every wait for drivers."""
        waits, delivered = [], None
        for event in self.events:
            if event[0] == 'deliver':
                delivered = event[1]
            elif event[0] == 'spin' and event[1] == self.scenario.driver_timeout_s:
                waits.append((delivered, event[2]))
        return waits

    def published(self, kind: str) -> list[tuple[int, object]]:
        return [(t, e) for t, j in self.judgements for e in j.events if e.kind == kind]

    def log_lines(self, level: str, text: str) -> list[str]:
        return [line for lv, line in self.logs if lv == level and text in line]

    # --- Link --------------------------------------------------------------------------------
    def publish_clock(self, time_ns: int) -> None:
        self.events.append(('clock', time_ns))
        self.clocks.append(time_ns)
        if time_ns in self.tracks_at:
            self.set_track(self.tracks_at.pop(time_ns))
        for name, node in self.dynamics.items():
            if name in self.dead or (name, time_ns) in self.skip:
                continue
            state = node.on_clock(time_ns)
            if state is not None:
                state = self.corrupt.get((name, time_ns), state)
                self.states[name] = (time_ns, state)
                self.history[name][time_ns] = state

    def spin_until(self, done: Callable[[], bool], timeout_s: float,
                   every: Callable[[], None] | None = None) -> bool:
        if every is not None:
            every()
        result = bool(done())
        self.events.append(('spin', timeout_s, result))
        return result

    def car_state(self, car: str) -> tuple[int, CarState] | None:
        return self.states.get(car)

    def take_track(self) -> TrackWorld | None:
        track, self.track = self.track, None
        return track

    def publish(self, judgement: Judgement, time_ns: int) -> None:
        self.events.append(('judgement', time_ns))
        self.judgements.append((time_ns, judgement))
        for placement in judgement.placements:
            self.dynamics[placement.car].pending = (*placement.pose, placement.speed)

    def republishers_ready(self) -> bool:
        return True

    def recording_ready(self) -> bool:
        return self.recorder_ready

    def recorded_until(self) -> int | None:
        """The recorder holds what was fanned out up to ``recorder_lag`` frames ago, proven up
        to the last frame the nodes reported after."""
        period = self.scenario.frame_period_ns
        delivered = [f.time_ns for f in self.frames]
        if len(delivered) <= self.recorder_lag:
            return None if not delivered else 0
        held = max((t for t in delivered[:len(delivered) - self.recorder_lag]
                    if report_due(t, period)), default=0)  # every node reports at its start
        if self.recorder_stalls_at is not None:
            held = min(held, self.recorder_stalls_at)
        self.events.append(('recorded', held))
        return held

    def deliver(self, time_ns: int, states: Mapping[str, CarState],
                reply: framing.Message, computed: UpdateReply) -> None:
        self.events.append(('deliver', time_ns))
        frame = Delivered(time_ns, dict(states), reply, computed)
        self.frames.append(frame)
        for car in sorted(frame.scanned()):
            script = self.scripts.get(car)
            if script is not None and script(car, time_ns):
                self.drivers.heard(car)

    def ok(self) -> bool:
        self._ok_calls += 1
        return self._ok_calls <= self.ticks and not self.stop()

    def log(self, level: str, text: str, throttle_s: float = 0.0) -> None:
        self.logs.append((level, text))


class RecordingRenderer(InProcessRenderer):
    """The embedded backend in process, remembering what it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[int, int, list[tuple[str, str]]]] = []
        self.switched: list[str] = []

    def send(self, step: int, time_ns: int, poses: RenderPoses,
             due: Sequence[SensorKey]) -> None:
        self.sent.append((step, time_ns, list(due)))
        super().send(step, time_ns, poses, due)

    def switch_track(self, step: int, time_ns: int, track: TrackRequest) -> None:
        self.switched.append(track.name)
        super().switch_track(step, time_ns, track)


def always(_car: str, _time_ns: int) -> bool:
    return True


def never(_car: str, _time_ns: int) -> bool:
    return False


@pytest.fixture
def loop(make_scenario, ring):
    """``loop(scenario, ticks, drivers=None, track=ring)``: the lockstep loop over a fresh
    in-process link, not started yet."""

    def make(scenario: Scenario, ticks: int = 0, drivers: Mapping[str, Driver] | None = None,
             track: TrackWorld | None = ring) -> tuple[Lockstep, InProcessLink]:
        link = InProcessLink(scenario, ticks, drivers)
        if track is not None:
            link.set_track(track)
        return Lockstep(Engine(scenario, RecordingRenderer(), dynamics=False), link), link

    return make


def sim(make_scenario, cars=('ego',), **simulation):
    """A scenario with tiny timeouts (nothing waits anyway), time not held for a first
    command, and the given simulation keys."""
    return make_scenario(cars, simulation={'driver_timeout_s': 0.05,
                                           'start_on_first_command': False, **simulation},
                         backend={'timeout_s': 0.1})


def drive(link: InProcessLink, speed: float, steering: float = 0.0) -> None:
    """Every car's Ackermann target (the drivers' commands, reaching the dynamics)."""
    for node in link.dynamics.values():
        node.vehicle.set_ackermann(speed, steering)


# --- start ------------------------------------------------------------------------------------
def test_start_names_the_cars_whose_dynamics_never_answer(make_scenario, loop):
    lockstep, link = loop(sim(make_scenario, ('ego', 'opp', 'third')))
    link.dead = {'opp', 'third'}
    with pytest.raises(ArsimError, match=r"dynamics node\(s\) of \['opp', 'third'\] did not "
                                         r"answer /clock") as failure:
        lockstep.start()
    assert 'ego' not in str(failure.value)
    assert link.clocks and set(link.clocks) == {0}


def test_start_without_a_track_says_so(make_scenario, loop):
    lockstep, link = loop(sim(make_scenario), track=None)
    with pytest.raises(ArsimError, match='no track geometry'):
        lockstep.start()
    assert lockstep.engine.world is None
    assert link.clocks == []


def test_start_loads_the_track_and_logs_the_backend_ready_line(make_scenario, loop, ring):
    scenario = sim(make_scenario, ('ego', 'opp'))
    lockstep, link = loop(scenario)
    lockstep.start()
    engine = lockstep.engine
    assert engine.world is ring
    assert engine.ready == {'backend': BACKEND_NAME, 'track': 'arsim_ring'}
    assert engine.renderer.backend.track_name == 'arsim_ring'
    assert link.log_lines('info', f"backend '{BACKEND_NAME}' ready with track 'arsim_ring'")
    assert link.log_lines('info', '2 car(s) ready')
    poses = start_poses(scenario.cars, ring.start_pose)
    assert engine.start_poses == poses
    for name in ('ego', 'opp'):
        stamp, state = link.car_state(name)
        assert stamp == 0
        assert state.pose == pytest.approx(poses[name], abs=1e-12)
    assert link.track is None  # taken


# --- the order of a frame ----------------------------------------------------------------------
def test_each_tick_one_clock_and_the_previous_frame_goes_out_before_the_next_clock(
        make_scenario, loop):
    ticks = 6
    lockstep, link = loop(sim(make_scenario, ('ego', 'opp')), ticks, {'ego': always})
    lockstep.start()
    drive(link, 2.0, 0.1)
    lockstep.run()
    period = lockstep.engine.period_ns

    assert link.clocks == [k * period for k in range(ticks + 2)]
    calls = [e for e in link.events if e[0] in ('clock', 'judgement', 'deliver')]
    expected = [('clock', 0), ('clock', period)]
    for k in range(1, ticks + 1):
        expected.append(('judgement', k * period))
        if k > 1:
            expected.append(('deliver', (k - 1) * period))
        expected.append(('clock', (k + 1) * period))
    assert calls == expected

    assert [f.time_ns for f in link.frames] == [k * period for k in range(1, ticks)]
    for frame in link.frames:
        k = frame.time_ns // period
        assert frame.step == k and frame.reply.time_ns == frame.time_ns
        assert frame.states == {name: link.history[name][frame.time_ns]
                                for name in ('ego', 'opp')}
        # the cars moved: a frame of other states would not match
        assert frame.states['ego'] != link.history['ego'][frame.time_ns - period]
    assert lockstep.engine.time_ns == ticks * period
    assert lockstep.engine.states['ego'] == link.history['ego'][ticks * period]


def test_scans_are_rendered_and_delivered_only_in_frames_they_are_due(make_scenario, loop):
    scenario = sim(make_scenario, frame_rate_hz=80.0)
    ticks = 9
    lockstep, link = loop(scenario, ticks, {'ego': always})
    lockstep.start()
    lockstep.run()
    renderer = lockstep.engine.renderer

    assert [step for step, _, _ in renderer.sent] == list(range(1, ticks + 1))
    for step, _, due in renderer.sent:
        assert due == ([('ego', 'scan')] if step % 2 == 0 else []), step
    assert [f.step for f in link.frames] == list(range(1, ticks))
    for frame in link.frames:
        if frame.step % 2 == 0:
            assert frame.scanned() == {'ego'}
            scan = frame.reply.arrays['ego/scan']
            assert scan.shape == (1080,) and np.isfinite(scan).any()
        else:
            assert frame.scanned() == set() and not frame.reply.arrays
    assert [t for t, _ in link.driver_waits()] == [f.time_ns for f in link.frames
                                                  if f.step % 2 == 0]


def test_each_frame_goes_out_with_the_engines_computed_sensors_of_its_states(
        make_scenario, loop, tmp_path, repo_root):
    """IMU, GNSS and wheel odometry come from the engine, from the states the frame shows
    (their dynamics' accelerations included), seeded from the run seed, when due."""
    import yaml

    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['Sensors'].update({
        'imu': {'type': 'imu', 'position': [0.1, 0.0, 0.05], 'rate_hz': 40.0,
                'accel_noise_std': 0.05},
        'gnss': {'type': 'gnss', 'position': [0.0, 0.0, 0.4], 'rate_hz': 20.0,
                 'origin': [48.0, 11.0, 500.0], 'horizontal_noise_std': 0.5}})
    path = tmp_path / 'computed_car.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    scenario = make_scenario(('ego', 'opp'), profile=str(path), simulation={
        'driver_timeout_s': 0.05, 'start_on_first_command': False}, backend={'timeout_s': 0.1})
    lockstep, link = loop(scenario, 8)
    lockstep.start()
    drive(link, 2.0, 0.2)
    lockstep.run()
    assert [f.step for f in link.frames] == list(range(1, 8))
    expected = ComputedSensors(scenario, lockstep.engine.seed)
    for frame in link.frames:
        arrays = expected.compute(frame.step, frame.time_ns, frame.states, accelerations=True)
        assert frame.computed.arrays.keys() == arrays.keys()
        assert all(np.array_equal(frame.computed.arrays[n], arrays[n]) for n in arrays)
        assert ('ego/gnss' in arrays) == (frame.step % 2 == 0)
        assert {n: (m.car, m.kind, m.stamp_ns) for n, m in frame.computed.meta.items()} == \
            {n: (n.split('/')[0], n.split('/')[1], frame.time_ns) for n in arrays}
    assert any(f.states['ego'].ax != 0.0 for f in link.frames)  # accelerations were there


# --- drivers ----------------------------------------------------------------------------------
def test_a_driver_that_answers_is_awaited_every_scan_a_silent_one_once(make_scenario, loop):
    ticks = 8
    lockstep, link = loop(sim(make_scenario, ('ego', 'opp')), ticks,
                          {'ego': always, 'opp': never})
    lockstep.start()
    lockstep.run()

    waits = link.driver_waits()
    assert [t for t, _ in waits] == [f.time_ns for f in link.frames]  # every frame has scans
    assert [ok for _, ok in waits] == [False] + [True] * (len(waits) - 1)
    assert link.drivers.silent == {'opp'}
    lines = link.log_lines('info', 'no command from the driver(s) of')
    assert len(lines) == 1 and "['opp']" in lines[0] and 'ego' not in lines[0]


def test_a_silent_driver_is_not_awaited_until_it_speaks_again(make_scenario, loop):
    ticks = 10
    period = make_scenario().frame_period_ns
    speaks_from = 6 * period  # silent for the scans of frames 1..5, answers from frame 6 on
    lockstep, link = loop(sim(make_scenario), ticks,
                          {'ego': lambda _car, t: t >= speaks_from})
    lockstep.start()
    lockstep.run()

    assert [f.step for f in link.frames] == list(range(1, ticks))
    assert link.driver_waits() == [(period, False)] + [
        (k * period, True) for k in range(6, ticks)]
    assert link.drivers.silent == set()
    lines = link.log_lines('info', 'no command from the driver(s) of')
    assert len(lines) == 1 and "['ego']" in lines[0]


def test_without_wait_for_drivers_no_driver_is_awaited(make_scenario, loop):
    ticks = 6
    lockstep, link = loop(sim(make_scenario, ('ego', 'opp'), wait_for_drivers=False), ticks,
                          {'ego': always, 'opp': never})
    lockstep.start()
    lockstep.run()

    assert len(link.frames) == ticks - 1
    assert link.driver_waits() == []
    assert link.drivers.silent == set()
    assert not link.log_lines('info', 'no command')


def test_time_holds_at_zero_until_a_driver_speaks_with_the_t0_scan_sent_again(make_scenario,
                                                                             loop):
    deliveries = []

    def answers_the_third(_car: str, time_ns: int) -> bool:
        deliveries.append(time_ns)
        return len(deliveries) >= 3

    lockstep, link = loop(sim(make_scenario, start_on_first_command=True), 5,
                          {'ego': answers_the_third})
    lockstep.start()
    assert [f.time_ns for f in link.frames] == [0, 0, 0]  # the t=0 frame until the answer
    assert set(link.clocks) == {0}
    assert link.frames[0].scanned() == {'ego'}
    assert len(link.log_lines('info', 'holding sim time at 0 until a driver sends its first '
                                      'command on /drive')) == 1
    assert link.log_lines('info', "first command from the driver of ['ego']")
    lockstep.run()
    assert link.clocks[-1] > 0


def test_a_driver_heard_during_start_up_is_not_waited_for(make_scenario, loop):
    lockstep, link = loop(sim(make_scenario, start_on_first_command=True), 3)
    link.drivers.heard('ego')
    lockstep.start()
    assert link.frames == [] and not link.log_lines('info', 'holding')


# --- late and invalid states -------------------------------------------------------------------
def test_a_car_whose_dynamics_miss_a_frame_is_named_and_keeps_its_last_state(
        make_scenario, loop):
    ticks = 6
    lockstep, link = loop(sim(make_scenario, ('ego', 'opp')), ticks)
    period = lockstep.engine.period_ns
    link.skip = {('opp', 3 * period)}
    lockstep.start()
    drive(link, 2.0)
    lockstep.run()

    warnings = [text for level, text in link.logs if level == 'warn']
    assert len(warnings) == 1
    assert "['opp']" in warnings[0] and 'ego' not in warnings[0] and 't=0.075' in warnings[0]
    frame3 = next(f for f in link.frames if f.step == 3)
    assert 3 * period not in link.history['opp']
    assert frame3.states['opp'] == link.history['opp'][2 * period]
    assert frame3.states['ego'] == link.history['ego'][3 * period]
    # the loop went on, and the car caught up: it integrated both periods on the next clock
    assert [t for t, _ in link.judgements] == [k * period for k in range(1, ticks + 1)]
    frame4 = next(f for f in link.frames if f.step == 4)
    assert frame4.states['opp'] == link.history['opp'][4 * period]
    assert frame4.states['opp'].x > frame3.states['opp'].x


def test_dynamics_silent_longer_than_the_patience_stop_the_run_naming_car_and_node(
        make_scenario, loop):
    lockstep, link = loop(sim(make_scenario, ('ego', 'opp'), dynamics_timeout_s=2.0), 20)
    wall = iter(range(100))  # each look at the clock: one more second of wall time
    lockstep.clock = lambda: float(next(wall))
    lockstep.start()
    drive(link, 2.0)
    link.dead = {'opp'}  # from now on its node never answers
    with pytest.raises(ArsimError) as failure:
        lockstep.run()  # late once (1 s): a warning; then silent for 2 s and more: stop
    assert len(link.log_lines('warn', "dynamics of ['opp'] late")) == 1
    assert len(link.judgements) == 1
    text = str(failure.value)
    assert "car(s) ['opp'] (node opp_dynamics publishing /arsim/opp/state)" in text
    assert 'simulation.dynamics_timeout_s = 2.0 s' in text and 'ego' not in text


def test_a_car_that_catches_up_starts_its_patience_afresh(make_scenario, loop):
    period_skips = 3
    lockstep, link = loop(sim(make_scenario, ('ego', 'opp'), dynamics_timeout_s=2.0), 20)
    wall = iter(range(100))
    lockstep.clock = lambda: float(next(wall))
    period = lockstep.engine.period_ns
    link.skip = {('opp', k * period) for k in range(2, 2 + 2 * period_skips, 2)}
    link.ticks = 2 * period_skips + 2
    lockstep.start()
    lockstep.run()  # every other frame late: never silent for 2 s in a row
    assert len(link.log_lines('warn', 'late')) == period_skips


def test_a_nan_state_is_refused_and_the_car_sent_to_its_start(make_scenario, loop, ring):
    ticks = 7
    scenario = sim(make_scenario, ('ego', 'opp'))
    lockstep, link = loop(scenario, ticks)
    period = lockstep.engine.period_ns
    link.corrupt = {('ego', 3 * period): CarState(math.nan, 0.0, 0.0)}
    lockstep.start()
    drive(link, 2.0)
    lockstep.run()

    start = start_poses(scenario.cars, ring.start_pose)['ego']
    invalid = link.published(INVALID_STATE)
    assert [(t, e.car) for t, e in invalid] == [(3 * period, 'ego')]
    verdict = dict(link.judgements)[3 * period]
    assert verdict.placements == (Placement('ego', start, 0.0),)
    # applied by the dynamics on the next clock, and the run went on to the end
    assert link.history['ego'][4 * period].pose == pytest.approx(start, abs=1e-12)
    assert link.history['ego'][2 * period].pose != pytest.approx(start, abs=1e-3)
    assert link.clocks[-1] == (ticks + 1) * period
    assert len(link.judgements) == ticks
    assert link.history['opp'][ticks * period].x > link.history['opp'][0].x
    # the refused state is never rendered or fanned out: the frame shows the last valid one
    shown = next(f for f in link.frames if f.time_ns == 3 * period)
    assert shown.states['ego'] == link.history['ego'][2 * period]
    assert np.isfinite(shown.reply.arrays['ego/scan']).any()


# --- collisions --------------------------------------------------------------------------------
@pytest.mark.parametrize('response', ['stop', 'bounce'])
def test_a_car_driven_into_a_barrier_is_placed_back_at_its_last_free_pose(
        make_scenario, loop, response):
    # facing the left barrier of the main straight (y = +1.1 m), 1 m from it
    car = {'name': 'ego', 'pose': [8.0, 0.0, math.pi / 2]}
    scenario = make_scenario([car], collisions={'response': response},
                             simulation={'driver_timeout_s': 0.05,
                                         'start_on_first_command': False})
    lockstep, link = loop(scenario, 100)
    period = lockstep.engine.period_ns

    def two_frames_after_contact() -> bool:
        hits = link.published(COLLISION)
        return bool(hits) and link.judgements[-1][0] >= hits[0][0] + 2 * period

    link.stop = two_frames_after_contact
    lockstep.start()
    drive(link, 3.0)
    lockstep.run()

    hits = link.published(COLLISION)
    assert len(hits) == 1, hits
    contact_ns, event = hits[0]
    assert event.car == 'ego' and event.other == BARRIER
    verdict = dict(link.judgements)[contact_ns]
    assert verdict.events == (event,)
    free = link.history['ego'][contact_ns - period]
    hit = link.history['ego'][contact_ns]
    assert hit.vx > 2.0
    expected_speed = -BOUNCE_RESTITUTION * hit.vx if response == 'bounce' else 0.0
    assert verdict.placements == (Placement('ego', free.pose, expected_speed),)
    assert all(not j.events and not j.placements for t, j in link.judgements
               if t < contact_ns)
    after = link.history['ego'][contact_ns + period]  # the dynamics took the placement
    assert after.pose == pytest.approx(free.pose, abs=1e-9)
    assert after.vx == pytest.approx(expected_speed, abs=1e-9)
    assert lockstep.engine.metrics.status('ego').collisions == 1


# --- a new track at run time -------------------------------------------------------------------
def test_a_track_arriving_mid_run_moves_every_car_to_its_start_in_that_tick(
        make_scenario, loop, random_world):
    ticks = 7
    scenario = sim(make_scenario, ('ego', 'opp'))
    lockstep, link = loop(scenario, ticks)
    period = lockstep.engine.period_ns
    switch_ns = 4 * period
    link.tracks_at = {switch_ns: random_world}
    lockstep.start()
    drive(link, 2.0)
    lockstep.run()

    engine = lockstep.engine
    assert engine.world is random_world
    assert engine.renderer.switched == ['random_3']
    assert engine.renderer.backend.track_name == 'random_3'
    new = start_poses(scenario.cars, random_world.start_pose)
    assert engine.start_poses == new
    assert engine.metrics is not None
    assert engine.metrics.length == pytest.approx(float(np.hypot(
        *(np.roll(random_world.centerline, -1, axis=0) - random_world.centerline).T).sum()))

    at_switch = [j for t, j in link.judgements if t == switch_ns]
    assert len(at_switch) == 2  # the frame's verdict, then the switch
    assert at_switch[1] == Judgement((), tuple(Placement(name, new[name], 0.0)
                                               for name in ('ego', 'opp')))
    switch_index = [i for i, e in enumerate(link.events) if e == ('judgement', switch_ns)][1]
    assert link.events.index(('clock', switch_ns + period)) > switch_index
    assert link.log_lines('info', "track switched to 'random_3'")
    for name in ('ego', 'opp'):
        assert link.history[name][switch_ns + period].pose == pytest.approx(new[name],
                                                                           abs=1e-9)
    # judged on the new track from then on: no contact at the new start poses
    assert all(not j.events for t, j in link.judgements if t > switch_ns)


# --- pacing: pause, step, play ------------------------------------------------------------------
def test_a_paused_loop_publishes_no_clock_and_a_step_runs_exactly_one_frame(make_scenario,
                                                                            loop):
    lockstep, link = loop(sim(make_scenario, wait_for_drivers=False), ticks=30)
    lockstep.start()
    pacing, period = lockstep.pacing, lockstep.engine.period_ns
    script = {5: pacing.pause, 12: pacing.step, 20: pacing.play}  # ok() call -> control
    link.stop = lambda: script.get(link._ok_calls, lambda: None)() and False
    lockstep.run()
    clocks = [c for c in link.clocks if c > 0]
    # run() sends the first clock; ok() calls 1-4 tick, 5-11 find the loop paused, 12 steps
    # one frame, 13-19 find it paused again, 20-30 tick: sim time never skips a frame.
    assert clocks == [period * k for k in range(1, 1 + 4 + 1 + 1 + 11)]
    paused_spins = [e for e in link.events if e[0] == 'spin' and e[1] == PAUSED_POLL_S]
    assert len(paused_spins) == 7 + 7, link.events
    assert pacing.status() == (False, 0.0, 0)


# --- recording ---------------------------------------------------------------------------------
def recorded(make_scenario, tmp_path, **simulation):
    scenario = sim(make_scenario, **simulation)
    return dataclasses.replace(scenario, recording=dataclasses.replace(
        scenario.recording, directory=tmp_path / 'bag'))


def test_a_recording_run_moves_clock_on_only_once_the_bag_holds_the_last_report_before_last(
        make_scenario, loop, tmp_path):
    ticks = 14
    lockstep, link = loop(recorded(make_scenario, tmp_path), ticks)
    link.recorder_lag = 1  # the frame just fanned out is still on its way
    lockstep.start()
    lockstep.run()
    period = lockstep.engine.period_ns
    assert link.clocks == [k * period for k in range(ticks + 2)]
    # before /clock moves on to k+1, the bag holds everything up to the last frame the nodes
    # reported after, before frame k-1 (the one just fanned out)
    order = [e for e in link.events if e[0] in ('clock', 'recorded')]
    for k in range(1 + RECORDING_LAG_FRAMES, ticks + 1):
        held = order.index(('clock', (k + 1) * period)) - 1
        last_report = (k - 2) // REPORT_EVERY_FRAMES * REPORT_EVERY_FRAMES
        assert order[held] == ('recorded', last_report * period), order
        assert k - 1 - last_report <= RECORDING_LAG_FRAMES


def test_a_recorder_that_falls_behind_holds_the_clock_and_then_stops_the_run(
        make_scenario, loop, tmp_path):
    lockstep, link = loop(recorded(make_scenario, tmp_path), 20)
    lockstep.start()
    period = lockstep.engine.period_ns
    link.recorder_stalls_at = REPORT_EVERY_FRAMES * period  # t=0.100 s
    with pytest.raises(ArsimError, match=r'the recording holds up to t=0.100 s after 0.1 s of '
                                         r'wall time waiting for t=0.125 s'):
        lockstep.run()
    # never further past what the bag holds than the lag, the frame fanned out and the next
    assert max(link.clocks) == (REPORT_EVERY_FRAMES + RECORDING_LAG_FRAMES + 2) * period


def test_a_recording_run_waits_for_the_recorder_before_the_first_frame(make_scenario, loop,
                                                                       tmp_path):
    lockstep, link = loop(recorded(make_scenario, tmp_path), 3)
    link.recorder_ready = False
    with pytest.raises(ArsimError, match='the recorder was not ready to record'):
        lockstep.start()
    assert link.clocks == [0]
