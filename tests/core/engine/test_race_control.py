"""Race control through the real engine and through the Gymnasium environment: two cars on
the straight of arsim_ring, placed and driven into a rear-end at a known closing speed, a
dive-bomb from a known distance and an unsafe rejoin, each getting its documented verdict as
an event of the frame (docs/race-control.md)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pytest

from arsim_core.config.stewards import DRIVE_THROUGH, TIME_PENALTY, WARNING
from arsim_core.engine import Engine, TrackWorld
from arsim_core.engine.incidents import DIVE_BOMB, REAR_END, UNSAFE_REJOIN
from arsim_core.engine.referee import RULING
from arsim_core.engine.stewards import Ruling
from arsim_core.errors import ConfigError
from arsim_core.track import load_track
from arsim_gym.env import RaceEnv

Pose = tuple[float, float, float]
Drive = Callable[[Mapping[str, Pose]], dict[str, tuple[float, float]]]  # car -> speed, steer
RUN_OFF = 0.5  # the track's half width in the rejoin case: the walls stay 1.1 m out
OPP = 'opp1'  # the gym's name for the second car


def on_straight(start: Pose, ahead: float, left: float) -> Pose:
    """A pose ``ahead`` m along the start pose's heading and ``left`` m to its left."""
    x, y, yaw = start
    return (x + ahead * math.cos(yaw) - left * math.sin(yaw),
            y + ahead * math.sin(yaw) + left * math.cos(yaw), yaw)


def rear_end(start: Pose) -> tuple[dict[str, Pose], Drive]:
    """ego 2 m behind the other car in its lane, at 5 m/s against 1 m/s."""
    poses = {'ego': start, OPP: on_straight(start, 2.0, 0.0)}
    return poses, lambda _: {'ego': (5.0, 0.0), OPP: (1.0, 0.0)}


def gentle_rear_end(start: Pose) -> tuple[dict[str, Pose], Drive]:
    """As ``rear_end`` at 2 m/s against 1 m/s."""
    poses = {'ego': start, OPP: on_straight(start, 2.0, 0.0)}
    return poses, lambda _: {'ego': (2.0, 0.0), OPP: (1.0, 0.0)}


def dive_bomb(start: Pose) -> tuple[dict[str, Pose], Drive]:
    """ego starts 3 m back in the left lane at 6 m/s, the other car in the right lane at
    1.5 m/s; ego turns right once its centre is 1 m behind the other's."""
    poses = {'ego': on_straight(start, 0.0, 0.3), OPP: on_straight(start, 3.0, -0.3)}

    def drive(now: Mapping[str, Pose]) -> dict[str, tuple[float, float]]:
        level = now['ego'][0] >= now[OPP][0] - 1.0
        return {'ego': (6.0, -0.25 if level else 0.0), OPP: (1.5, 0.0)}
    return poses, drive


def unsafe_rejoin(start: Pose) -> tuple[dict[str, Pose], Drive]:
    """ego off the track, 0.8 m left of the centerline (0.5 m half width), 3 m ahead at
    1.5 m/s, steers back onto the lane 0.2 m left of the centerline, into the path of the
    other car, which comes along that lane at 4 m/s."""
    poses = {'ego': on_straight(start, 3.0, 0.8), OPP: on_straight(start, 0.0, 0.2)}
    lane = start[1] + 0.2

    def drive(now: Mapping[str, Pose]) -> dict[str, tuple[float, float]]:
        _, y, yaw = now['ego']
        steer = min(max(-1.2 * (y - lane) - 1.5 * (yaw - start[2]), -0.15), 0.15)
        return {'ego': (1.5, steer), OPP: (4.0, 0.0)}
    return poses, drive


def narrowed(world: TrackWorld) -> TrackWorld:
    """The ring with the track edges ``RUN_OFF`` m out and the walls where they were."""
    assert world.width_left is not None and world.width_right is not None
    return dataclasses.replace(world, width_left=np.full_like(world.width_left, RUN_OFF),
                               width_right=np.full_like(world.width_right, RUN_OFF))


def rulings_of(events) -> list[Ruling]:
    return [e for e in events if e.kind == RULING]


def engine_incident(make_scenario, world: TrackWorld, case, frames: int = 300,
                    **race) -> tuple[list[Ruling], Engine, dict]:
    """Run ``case`` in an engine until its first ruling: the rulings of that frame, the
    engine and the states of the frame."""
    scenario = make_scenario(cars=('ego', OPP), race=race) if race else \
        make_scenario(cars=('ego', OPP))
    engine = Engine(scenario)
    try:
        engine.load_track(world)
        poses, drive = case(engine.start_poses['ego'])
        engine.reset(poses)
        for _ in range(frames):
            for car, (speed, steer) in drive({n: s.pose for n, s in engine.states.items()}
                                             ).items():
                engine.drive(car, speed, steer)
            frame = engine.advance()
            rulings = rulings_of(frame.judgement.events)
            if rulings:
                return rulings, engine, dict(frame.states)
        pytest.fail(f'{case.__name__}: no ruling in {frames} frames')
    finally:
        engine.close()


@pytest.fixture(scope='module')
def ring(repo_root: Path) -> TrackWorld:
    return TrackWorld.from_track(load_track('arsim_ring', repo_root / 'maps'))


def test_a_rear_end_at_speed_is_a_time_penalty_for_the_car_behind(make_scenario, ring):
    rulings, engine, states = engine_incident(make_scenario, ring, rear_end)
    [ruling] = rulings
    closing = states['ego'].vx - states[OPP].vx
    assert closing > 1.5  # the penalty speed, so the construction did what it says
    assert (ruling.car, ruling.other, ruling.rule, ruling.verdict) == (
        'ego', OPP, REAR_END, TIME_PENALTY)
    assert ruling.penalty_s == 5.0
    measured = float(ruling.detail.split(' at ')[1].split(' m/s')[0])
    assert measured == pytest.approx(closing, abs=0.05)  # along the track, not the heading
    assert engine.stewards is not None and engine.stewards.penalty_s('ego') == 5.0


def test_a_gentle_rear_end_gets_the_verdict_its_closing_speed_gives(make_scenario, ring):
    rulings, _, states = engine_incident(make_scenario, ring, gentle_rear_end)
    closing = states['ego'].vx - states[OPP].vx
    expected = TIME_PENALTY if closing >= 1.5 else WARNING if closing >= 0.5 else 'no_action'
    assert 0.5 <= closing < 1.5
    assert [(r.rule, r.verdict) for r in rulings] == [(REAR_END, expected)]


def test_rear_end_thresholds_come_from_the_scenario(make_scenario, ring):
    rulings, _, _ = engine_incident(make_scenario, ring, rear_end,
                                    stewards={'rear_end': {'penalty_speed': 50.0}})
    assert [(r.rule, r.verdict) for r in rulings] == [(REAR_END, WARNING)]


def test_a_dive_bomb_from_three_metres_back_is_a_drive_through(make_scenario, ring):
    rulings, _, _ = engine_incident(make_scenario, ring, dive_bomb)
    assert [(r.car, r.rule, r.verdict, r.penalty_s) for r in rulings] == [
        ('ego', DIVE_BOMB, DRIVE_THROUGH, 20.0)]


def test_rejoining_into_the_path_of_a_car_is_an_unsafe_rejoin(make_scenario, ring):
    rulings, _, _ = engine_incident(make_scenario, narrowed(ring), unsafe_rejoin)
    assert [(r.car, r.other, r.rule, r.verdict) for r in rulings] == [
        ('ego', OPP, UNSAFE_REJOIN, TIME_PENALTY)]


def test_stewards_switched_off_judge_nothing(make_scenario, ring):
    scenario = make_scenario(cars=('ego', OPP), race={'stewards': {'enabled': False}})
    engine = Engine(scenario)
    engine.load_track(ring)
    assert engine.stewards is None
    engine.close()


def test_a_bad_steward_setting_names_its_key(make_scenario):
    with pytest.raises(ConfigError, match=r'race\.stewards\.rear_end\.verdict: expected one '
                                          r"of \['drive_through', 'time_penalty', 'warning'\]"):
        make_scenario(race={'stewards': {'rear_end': {'verdict': 'fine'}}})
    with pytest.raises(ConfigError, match=r'race\.stewards\.dive_bomb\.distance: unknown key'):
        make_scenario(race={'stewards': {'dive_bomb': {'distance': 3}}})


# --- the same incidents through the Gymnasium API ---------------------------------------------
@pytest.mark.parametrize(('case', 'rule', 'verdict', 'narrow'), [
    (rear_end, REAR_END, TIME_PENALTY, False),
    (dive_bomb, DIVE_BOMB, DRIVE_THROUGH, False),
    (unsafe_rejoin, UNSAFE_REJOIN, TIME_PENALTY, True),
], ids=['rear_end', 'dive_bomb', 'unsafe_rejoin'])
def test_the_gym_returns_the_verdict_in_info_events(repo_root, case, rule, verdict, narrow):
    track = load_track('arsim_ring', repo_root / 'maps')
    if narrow:
        track = dataclasses.replace(track, width_left=np.full_like(track.width_left, RUN_OFF),
                                    width_right=np.full_like(track.width_right, RUN_OFF))
    env = RaceEnv(track=track, num_cars=2, control='all')
    try:
        poses, drive = case(env.engine.start_poses['ego'])
        obs, _ = env.reset(seed=0, options={'poses': poses})
        for _ in range(400):
            now = dict(zip(env.controlled, map(tuple, obs['pose'].tolist()), strict=True))
            commands = drive(now)
            action = np.array([[commands[car][1], commands[car][0]] for car in env.controlled])
            obs, _, terminated, _, info = env.step(action)
            rulings = rulings_of(info['events'])
            if rulings:
                break
            assert not terminated, 'a contact without a ruling'
        else:
            pytest.fail('no ruling')
    finally:
        env.close()
    assert [(r.car, r.other, r.rule, r.verdict) for r in rulings] == [
        ('ego', OPP, rule, verdict)]
    assert rulings[0].detail.startswith(f'{verdict} +')
