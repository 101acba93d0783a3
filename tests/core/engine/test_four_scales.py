"""Four vehicle scales, each on the arsim ring at its own scale: the built-in follow-the-gap
driver laps it without touching a barrier.

The driver is ``arsim_core.policies.autopilot``, run on the engine's frames exactly as
``arsim-dataset generate`` runs it (its scan when due, then ``drive`` and ``advance``), with the
referee judging every frame and the race metrics counting the lap. Sim time is the engine's,
so a lap of the slow 1:14 car (about 440 s) costs about a second of wall time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

from arsim_core.config.scenario import Scenario
from arsim_core.engine import Engine, TrackWorld
from arsim_core.engine.referee import Event
from arsim_core.policies import AUTOPILOT_SPEED_SCALE, autopilot
from arsim_core.track import Track, load_track

#: The slowest lap that counts, as a share of the driver's top speed (the profile's top speed
#: times AUTOPILOT_SPEED_SCALE): slower, the car crawls rather than races. The four cars
#: average 0.7 to 1.0 of it (the 1:14 car cuts corners, so its centerline speed can exceed 1).
MIN_AVERAGE_SHARE = 0.5

MakeScenario = Callable[..., Scenario]


@dataclass(frozen=True)
class Scale:
    """A car profile and the ring it is sized for; ``scale`` is the ring's size against the
    1:10 arsim_ring."""

    profile: str
    track: str
    scale: float


SCALES = (
    Scale('model_1_14', 'arsim_ring_1_14', 10.0 / 14.0),
    Scale('f1tenth', 'arsim_ring', 1.0),
    Scale('platform_1_5', 'arsim_ring_1_5', 2.0),
    Scale('full_scale', 'arsim_ring_full_scale', 10.0),
)


@dataclass(frozen=True)
class Run:
    """How one car's drive ended: its completed laps, the time of the first, and every event
    the referee reported (collisions, resets, model errors)."""

    laps: int
    lap_time: float | None
    sim_s: float
    events: tuple[Event, ...]


def drive_one_lap(scenario: Scenario, track: Track, limit_s: float) -> Run:
    """The autopilot drives the scenario's one car until it completes a lap, an event occurs
    or ``limit_s`` of sim time pass."""
    (car,) = scenario.cars
    scan, driver = autopilot(car)
    engine = Engine(scenario)
    try:
        engine.load_track(TrackWorld.from_track(track, scenario.track.scene))
        frame = engine.reset()
        frames = round(limit_s * 1e9 / engine.period_ns)
        events: list[Event] = []
        assert engine.metrics is not None
        while frame.step < frames and not events and engine.metrics.status(car.name).laps < 1:
            ranges = frame.sensors.get(f'{car.name}/{scan.name}')
            if ranges is not None:
                steering, speed = driver.act(np.asarray(ranges, np.float32))
                assert engine.drive(car.name, float(speed), float(steering)) is None
            frame = engine.advance()
            events.extend(frame.judgement.events)
        status = engine.metrics.status(car.name)
        lap = status.lap_times[0] if status.lap_times else None
        return Run(status.laps, lap, frame.time_ns / 1e9, tuple(events))
    finally:
        engine.close()


def lap_limit(scenario: Scenario, track: Track) -> float:
    """The sim time a lap may take: the track at MIN_AVERAGE_SHARE of the driver's top speed."""
    top = scenario.cars[0].profile.vehicle.params.longitudinal.max_speed
    return track.length / (MIN_AVERAGE_SHARE * AUTOPILOT_SPEED_SCALE * top)


@pytest.mark.parametrize('scale', SCALES, ids=[s.profile for s in SCALES])
def test_each_scale_laps_its_ring_with_the_autopilot(make_scenario: MakeScenario,
                                                     repo_root: Path, scale: Scale) -> None:
    scenario = make_scenario(profile=scale.profile, track={'name': scale.track})
    track = load_track(scale.track, repo_root / 'maps')
    limit = lap_limit(scenario, track)
    run = drive_one_lap(scenario, track, limit)
    assert run.events == (), f'{scale.profile} on {scale.track}, {run.sim_s:.1f} s: {run.events}'
    assert run.laps == 1, f'{scale.profile}: no lap of {track.length:.1f} m in {limit:.0f} s'
    assert run.lap_time is not None and run.lap_time <= limit


def test_a_car_that_cannot_make_the_turns_fails_the_lap(make_scenario: MakeScenario,
                                                        repo_root: Path, tmp_path: Path) -> None:
    """The check above can fail: the F1TENTH car with 0.1 rad of steering lock (a turning
    circle of 3.3 m radius, wider than the ring's 2.1 m hairpin) hits a barrier."""
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['CarParameters']['steering'].update(min_angle=-0.1, max_angle=0.1)
    path = tmp_path / 'stiff_f1tenth.yaml'
    path.write_text(yaml.safe_dump(profile))
    scenario = make_scenario(profile=str(path), track={'name': 'arsim_ring'})
    track = load_track('arsim_ring', repo_root / 'maps')
    run = drive_one_lap(scenario, track, lap_limit(scenario, track))
    assert run.laps == 0
    assert [e.kind for e in run.events] == ['collision']


SCALED = tuple(s for s in SCALES if s.track != 'arsim_ring')


@pytest.mark.parametrize('scale', SCALED, ids=[s.track for s in SCALED])
def test_each_ring_is_the_default_ring_at_its_scale(repo_root: Path, scale: Scale) -> None:
    """The scaled rings hold the default ring's centerline (made from its control points by
    ``arsim-track spline``) and only their scale differs: a change to the ring that is not
    made to them too shows here."""
    ring = load_track('arsim_ring', repo_root / 'maps')
    track = load_track(scale.track, repo_root / 'maps')
    for name in ('centerline', 'width_left', 'width_right'):
        np.testing.assert_allclose(getattr(track, name), scale.scale * getattr(ring, name),
                                   rtol=1e-12, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(track.start_pose[:2], scale.scale * np.asarray(ring.start_pose[:2]),
                               rtol=1e-12, atol=1e-12)
    assert track.start_pose[2] == pytest.approx(ring.start_pose[2], abs=1e-12)
