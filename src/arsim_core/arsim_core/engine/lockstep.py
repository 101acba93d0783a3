"""The lockstep loop for cars integrated outside the engine: clock -> car states -> referee
-> render and computed sensors -> sensor fan-out -> drivers, pipelined so the backend renders
frame k while frame k-1 goes out.

The loop knows nothing of ROS: everything it sends and waits for goes through a :class:`Link`
(ROS topics and a ZeroMQ fan-out in ``arsim_bridge``, plain Python objects in the tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from arsim_core.engine.engine import Engine
from arsim_core.engine.pacing import Pacing
from arsim_core.engine.referee import Judgement, Placement
from arsim_core.engine.schedule import DRIVER_INPUTS
from arsim_core.engine.state import CarState
from arsim_core.engine.world import TrackWorld
from arsim_core.errors import ArsimError
from arsim_core.protocol import framing
from arsim_core.protocol.messages import FrameMeta, UpdateReply
from arsim_core.recording.ledger import REPORT_EVERY_FRAMES
from arsim_core.sensors.latency import SensorLatency

STATUS_PERIOD_S = 10.0
PING_PERIOD_S = 0.2
HOLD_RESEND_S = 1.0  # while held at t=0, the t=0 sensor data goes out again this often
PAUSED_POLL_S = 0.05  # while paused, how often the loop looks whether it may go on
# Frames the recording may trail the fan-out by: the nodes prove what they published only every
# REPORT_EVERY_FRAMES frames, and the recorder writes those while the next are rendered, as the
# backend renders while the loop fans out. The recorder's queues keep 100 messages a topic and
# its counts prove nothing was lost.
RECORDING_LAG_FRAMES = REPORT_EVERY_FRAMES
# Frames /clock may be ahead of what the recording is proven to hold, and so frames a run that
# stops may have sent out without proving them recorded: the lag, the frame just fanned out and
# the one being rendered.
RECORDING_CLOCK_LEAD_FRAMES = RECORDING_LAG_FRAMES + 2


@dataclass
class Drivers:
    """Which drivers answered the data they were last sent, and which stay silent.

    A silent driver (none running, a teleop between key presses) costs one timeout, then the
    simulation runs on without waiting for it until it speaks again.
    """

    commanded: set[str] = field(default_factory=set)  # spoke since their car's last data
    silent: set[str] = field(default_factory=set)

    def heard(self, car: str) -> None:
        self.commanded.add(car)
        self.silent.discard(car)

    def data_sent(self) -> None:
        """What counts as an answer arrives after this."""
        self.commanded.clear()

    def awaited(self, cars: set[str]) -> set[str]:
        return cars - self.silent

    def answered(self, cars: set[str]) -> bool:
        return cars <= self.commanded

    def give_up(self, cars: set[str]) -> set[str]:
        """Mark the drivers of ``cars`` that did not answer as silent; returns them."""
        silent = cars - self.commanded
        self.silent |= silent
        return silent


class Link(Protocol):
    """What the lockstep loop needs from the transport around it."""

    drivers: Drivers

    def publish_clock(self, time_ns: int) -> None: ...

    def spin_until(self, done: Callable[[], bool], timeout_s: float,
                   every: Callable[[], None] | None = None) -> bool:
        """Process incoming messages until ``done()`` or the timeout; calls ``every`` each
        PING_PERIOD_S while waiting. False on timeout."""
        ...

    def car_state(self, car: str) -> tuple[int, CarState] | None:
        """The latest state of ``car`` and its stamp [ns], or None before the first."""
        ...

    def take_track(self) -> TrackWorld | None:
        """A track that arrived since the last call, or None."""
        ...

    def publish(self, judgement: Judgement, time_ns: int) -> None:
        """Send the referee's events and the placements to the cars' dynamics."""
        ...

    def republishers_ready(self) -> bool: ...

    def recording_ready(self) -> bool:
        """Whether the recorder of a run that records is ready for the first frame."""
        ...

    def recorded_until(self) -> int | None:
        """The sim time [ns] up to which the recording holds everything the simulation
        published (``arsim_core.recording.ledger``), or None before the first frame."""
        ...

    def deliver(self, time_ns: int, states: Mapping[str, CarState],
                reply: framing.Message, computed: UpdateReply) -> None:
        """Fan a rendered frame, the states it shows and the engine's computed sensors of
        that frame (``Engine.sense``, described for the fan-out) out to the republishers."""
        ...

    def ok(self) -> bool: ...

    def log(self, level: str, text: str, throttle_s: float = 0.0) -> None: ...


class Piloting(Protocol):
    """Built-in drivers the run hosts itself (``drivers.pilots.LockstepPilots``): after each
    frame is judged they send their cars' commands, and they hand back the cars they take off
    the track. Their cars are never awaited or held for as a stack's are."""

    cars: frozenset[str]

    def frame(self, judgement: Judgement) -> tuple[Placement, ...]: ...


@dataclass(frozen=True)
class InFlight:
    """A frame the backend is rendering: its time, the car states it shows, its computed
    sensors, the cars whose drivers get something from it (``SensorSchedule.informed``)."""

    time_ns: int
    states: dict[str, CarState]
    computed: UpdateReply
    informed: set[str]


class Lockstep:
    """Steps ``engine`` (built with ``dynamics=False``) over ``link``, as fast as ``pacing``
    lets it (by default the scenario's real-time factor, never paused)."""

    def __init__(self, engine: Engine, link: Link, pacing: Pacing | None = None,
                 pilots: Piloting | None = None) -> None:
        self.engine = engine
        self.link = link
        self.pilots = pilots
        self.piloted = frozenset() if pilots is None else pilots.cars
        self.scenario = engine.scenario
        self.pacing = pacing or Pacing(self.scenario.real_time_factor)
        self.names = engine.names
        self.recording = self.scenario.recording.directory is not None
        self.step = 1
        self.in_flight: InFlight | None = None
        self._track: TrackWorld | None = None
        self._wall_start = 0.0
        self._status_at = 0.0
        self._silent_since: dict[str, float] = {}  # car -> when its state first came late
        self.clock: Callable[[], float] = time.monotonic  # wall time, for the patience
        # Late sensors' samples go out when they arrive (rendered and computed lines alike).
        self.rendered_latency = SensorLatency[FrameMeta](engine.cars, engine.seed)
        self.computed_latency = SensorLatency[FrameMeta](engine.cars, engine.seed)

    def start(self) -> None:
        """Track -> backend Ready -> every car at t=0 -> every republisher connected."""
        link, startup = self.link, self.scenario.backend.startup_timeout_s
        if not link.spin_until(self._track_arrived, startup):
            msg = f'no track geometry on {self.scenario.topic_map.track_topic} after {startup} s'
            raise ArsimError(msg)
        assert self._track is not None
        link.log('info', f'connecting to the backend at {self.scenario.backend.address}')
        self.engine.load_track(self._track, startup)
        self._track = None
        ready = self.engine.ready
        link.log('info', f'backend {ready.get("backend")!r} ready with track '
                         f'{ready.get("track")!r}')
        if not link.spin_until(lambda: self._cars_at(0), startup,
                               every=lambda: link.publish_clock(0)):
            missing = [n for n in self.names if not self._car_at(n, 0)]
            msg = f'dynamics node(s) of {missing} did not answer /clock within {startup} s'
            raise ArsimError(msg)
        if not link.spin_until(link.republishers_ready, startup):
            msg = f'sensor republisher(s) did not connect to {self.scenario.backend.frames_address}'
            raise ArsimError(msg)
        if self.recording and not link.spin_until(link.recording_ready, startup):
            msg = f'the recorder was not ready to record within {startup} s'
            raise ArsimError(msg)
        link.log('info', f'{len(self.names)} car(s) ready; stepping at '
                         f'{self.scenario.frame_rate_hz} Hz, real-time factor '
                         f'{self.scenario.real_time_factor or "max"}')
        if self.scenario.start_on_first_command and set(self.names) - self.piloted:
            self._hold()

    def _hold(self) -> None:
        """Keep sim time at 0 until a driver sends its first command, so a stack that starts
        after the simulation misses nothing. The t=0 sensor data goes out meanwhile (again
        every HOLD_RESEND_S, for drivers that join late): drivers that answer scans answer it."""
        link, engine, drivers = self.link, self.engine, self.link.drivers
        if drivers.commanded:
            return  # a driver spoke during start-up already
        topics = sorted({self.scenario.car(n).names.drive_topic for n in self.names})
        link.log('info', f'holding sim time at 0 until a driver sends its first command on '
                         f'{", ".join(topics)} (simulation.start_on_first_command)')
        states = {name: self._state(name) for name in self.names}
        engine.renderer.send(0, 0, engine.render_poses(states), engine.schedule.due(0))
        computed = self._sense(states)
        frame = engine.renderer.receive()
        while self.link.ok():
            link.deliver(0, states, frame, computed)
            if link.spin_until(lambda: bool(drivers.commanded), HOLD_RESEND_S,
                               every=lambda: link.publish_clock(0)):
                break
        link.log('info', f'first command from the driver of {sorted(drivers.commanded)}; '
                         f'sim time runs')

    def run(self) -> None:
        """Step until the link says stop; while paused, only the link turns (it answers its
        messages and services, and sim time stays where it is)."""
        self._wall_start = time.monotonic()
        self._status_at = self._wall_start + STATUS_PERIOD_S
        self.link.publish_clock(self.engine.period_ns)
        while self.link.ok():
            if self.pacing.may_step():
                self.tick()
            else:
                self.link.spin_until(self.pacing.may_step, PAUSED_POLL_S)

    def tick(self) -> None:
        """One frame, pipelined: the backend renders frame k while the loop fans frame k-1
        out; drivers still get frame k-1's data before /clock moves on to k+1."""
        link, engine = self.link, self.engine
        period = engine.period_ns
        step, now = self.step, self.step * period
        self._await_states(now)
        self.pacing.pace(now)
        engine.step, engine.time_ns = step, now
        judgement = engine.judge({name: self._state(name) for name in self.names})
        link.publish(judgement, now)
        if self.pilots is not None:
            parked = self.pilots.frame(judgement)
            if parked:
                link.publish(Judgement((), parked), now)
        # A refused state is shown as the car's last valid one (its start before any), never
        # sent on.
        states = {name: engine.states.get(name) or CarState(*engine.start_poses[name])
                  for name in self.names}
        rendered = self._collect()
        self._track_arrived()
        if self._track is not None:
            states.update(self._switch_track(now))
        engine.show_cones()
        self._request_render(step, now, states)
        if rendered is not None:
            self._deliver(*rendered)
        clock = now + period
        recorded_by_now = clock - RECORDING_CLOCK_LEAD_FRAMES * period
        if self.recording and recorded_by_now >= 0:
            self._await_recording(recorded_by_now)
        link.publish_clock(clock)
        self._report(now)
        self.step += 1

    def _await_states(self, now: int) -> None:
        """Wait for every car's state at ``now``. A car that is late goes on with its last
        state, named in a warning; one whose dynamics stay silent for
        ``simulation.dynamics_timeout_s`` of wall time stops the run (ArsimError): a stopped or
        hung dynamics node would otherwise leave the car frozen and the simulation crawling."""
        patience = self.scenario.dynamics_timeout_s
        started = self.clock()
        if self.link.spin_until(lambda: self._cars_at(now),
                                min(self.scenario.backend.timeout_s, patience)):
            self._silent_since.clear()
            return
        late = [n for n in self.names if not self._car_at(n, now)]
        self._silent_since = {n: self._silent_since.get(n, started) for n in late}
        silent_s = self.clock() - min(self._silent_since.values())
        if silent_s >= patience:
            nodes = ', '.join(self._dynamics_node(n) for n in late)
            msg = (f'no state from the dynamics of car(s) {late} ({nodes}) for {silent_s:.1f} s '
                   f'of wall time at t={now / 1e9:.3f} s (simulation.dynamics_timeout_s = '
                   f'{patience} s): the node is stopped, hung or far too slow; stopping the '
                   f'simulation')
            raise ArsimError(msg)
        self.link.log('warn', f'dynamics of {late} late at t={now / 1e9:.3f} s; reusing their '
                              f'last state', 2.0)

    def _await_recording(self, time_ns: int) -> None:
        """Wait until the bag holds every message up to frame ``time_ns``, so /clock never
        runs ahead of the recording and nothing is lost at any speed. A recorder that stays
        behind for ``backend.timeout_s`` stops the run rather than the bag missing messages."""
        def held() -> bool:
            until = self.link.recorded_until()
            return until is not None and until >= time_ns

        timeout = self.scenario.backend.timeout_s
        if not self.link.spin_until(held, timeout):
            until = self.link.recorded_until()
            holds = 'nothing yet' if until is None else f'up to t={until / 1e9:.3f} s'
            msg = (f'the recording holds {holds} after {timeout} s of wall time waiting for '
                   f't={time_ns / 1e9:.3f} s (backend.timeout_s); the recorder names what it '
                   f'misses; stopping the simulation')
            raise ArsimError(msg)

    def _dynamics_node(self, car: str) -> str:
        spec = self.scenario.car(car)
        where = 'an external node' if spec.external_dynamics else f'node {car}_dynamics'
        return f'{where} publishing {spec.names.state_topic}'

    def _report(self, now: int) -> None:
        if time.monotonic() >= self._status_at:
            self._status_at += STATUS_PERIOD_S
            rate = now / 1e9 / (time.monotonic() - self._wall_start)
            self.link.log('info', f'sim time {now / 1e9:.1f} s, real-time factor {rate:.1f}')

    def _track_arrived(self) -> bool:
        track = self.link.take_track()
        if track is not None:
            self._track = track
        return self._track is not None

    def _switch_track(self, now: int) -> dict[str, CarState]:
        """Hand the new track to the backend and the referee, and every car to its new start.

        The cars move in the frame the referee starts judging them on the new track, so no car
        is ever judged against the walls of the other one; this frame already shows them at
        their new starts (the states returned), never at their old poses on the new track.
        """
        track, self._track = self._track, None
        assert track is not None
        placements = self.engine.load_track(track)
        self.link.publish(Judgement((), placements), now)
        self.link.log('info', f'track switched to {track.name!r}')
        return {p.car: CarState(*p.pose) for p in placements}

    def _state(self, car: str) -> CarState:
        latest = self.link.car_state(car)
        assert latest is not None  # every car answered at t=0 in start()
        return latest[1]

    def _car_at(self, car: str, time_ns: int) -> bool:
        latest = self.link.car_state(car)
        return latest is not None and latest[0] == time_ns

    def _cars_at(self, time_ns: int) -> bool:
        return all(self._car_at(name, time_ns) for name in self.names)

    def _request_render(self, step: int, now: int, states: dict[str, CarState]) -> None:
        """Ask the backend for frame ``step`` with the sensors due then; it is collected and
        fanned out once the next frame's car states are in."""
        due = self.engine.schedule.due(step)
        self.engine.renderer.send(step, now, self.engine.render_poses(states), due)
        self.in_flight = InFlight(now, states, self._sense(states),
                                  self.engine.schedule.informed(step))

    def _sense(self, states: Mapping[str, CarState]) -> UpdateReply:
        """The engine's computed sensors of the frame showing ``states``, described for the
        fan-out; the states carry their dynamics' accelerations."""
        engine = self.engine
        arrays = engine.sense(states, accelerations=True)
        return UpdateReply(arrays, engine.computed.frame_meta(arrays, engine.time_ns))

    def _arrived(self, time_ns: int, reply: framing.Message, computed: UpdateReply
                 ) -> tuple[framing.Message, UpdateReply, set[str]]:
        """The rendered and computed samples that arrive at ``time_ns`` from the ones
        captured then (``arsim_core.sensors.latency``), each with its capture stamp, and the
        cars whose drivers get something to plan on from them."""
        rendered = UpdateReply.from_wire(reply)
        arrays, meta = self.rendered_latency.release(time_ns, rendered.arrays, rendered.meta)
        frames = [{**entry.to_wire(), 'name': name} for name, entry in meta.items()]
        reply = framing.Message(reply.topic, {**reply.header, 'frames': frames}, arrays)
        computed = UpdateReply(*self.computed_latency.release(time_ns, computed.arrays,
                                                              computed.meta))
        informed = {m.car for m in meta.values()}
        informed.update(m.car for m in computed.meta.values() if m.kind in DRIVER_INPUTS)
        return reply, computed, informed

    def _collect(self) -> tuple[InFlight, framing.Message] | None:
        """The frame the backend has been rendering, with its reply; None before the first."""
        if self.in_flight is None:
            return None
        frame, self.in_flight = self.in_flight, None
        return frame, self.engine.renderer.receive()

    def _deliver(self, frame: InFlight, reply: framing.Message) -> None:
        """Fan a rendered frame out and, if the scenario asks for it, wait for the drivers of
        the cars that got sensor data."""
        drivers = self.link.drivers
        drivers.data_sent()
        computed, informed = frame.computed, frame.informed
        if self.rendered_latency.active:
            reply, computed, informed = self._arrived(frame.time_ns, reply, computed)
        self.link.deliver(frame.time_ns, frame.states, reply, computed)
        if not self.scenario.wait_for_drivers:
            return
        awaited = drivers.awaited(informed - self.piloted)
        timeout = self.scenario.driver_timeout_s
        if awaited and not self.link.spin_until(lambda: drivers.answered(awaited), timeout):
            silent = drivers.give_up(awaited)
            self.link.log('info', f'no command from the driver(s) of {sorted(silent)} within '
                                  f'{timeout} s of the scan at t={frame.time_ns / 1e9:.3f} s; '
                                  f'running on without waiting for them', 10.0)
