"""Race events through the real engine on arsim_ring: cars driven by pure pursuit at speeds of
their own through a practice, a qualifying that sets the race grid, a standing-start race to
the chequered flag in which a jump start's time penalty changes the classification, a time
limit followed by a final lap, a car that stops and is retired while the race goes on, and the
gym returning the event in ``info`` (docs/race-control.md, "Race formats")."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.engine import Engine, Frame, TrackWorld
from arsim_core.engine.race_event import (
    CHEQUERED,
    DNF,
    DSQ,
    FINISHED,
    FORMATION,
    GREEN,
    JUMP_START,
    LIGHTS,
    WHITE,
    EventState,
    results_table,
    write_classification,
)
from arsim_core.engine.referee import RULING
from arsim_core.engine.stewards import Ruling
from arsim_core.policies import PurePursuit
from arsim_core.track import Track, load_track
from arsim_gym.core import lane
from arsim_gym.env import RaceEnv

# speed scales of the pure pursuit drivers: one lap of arsim_ring takes ~12 s at 0.9
SPEEDS = {'ego': 0.9, 'car2': 0.6, 'car3': 0.75}
Hold = Callable[[str, EventState], bool]  # car, event -> stand still this frame


@pytest.fixture(scope='module')
def ring_track(repo_root: Path) -> Track:
    return load_track('arsim_ring', repo_root / 'maps')


@pytest.fixture(scope='module')
def bare_profile(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The F1TENTH profile without sensors: pure pursuit drives from the states, and nothing
    is rendered."""
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile.pop('Sensors', None)
    path = tmp_path_factory.mktemp('profiles') / 'f1tenth_bare.yaml'
    path.write_text(yaml.safe_dump(profile))
    return str(path)


def event_scenario(repo_root: Path, profile: str, event: Any,
                   cars: tuple[str, ...] = ('ego', 'car2', 'car3')) -> Scenario:
    return load_scenario(repo_root / 'config' / 'sim.yaml', repo_root, {
        'cars': [{'name': car, 'profile': profile} for car in cars],
        'collisions': {'response': 'ghost'},  # lanes cross after a new grid: no pile-ups
        'race': {'event': event}})


class Run:
    """An engine running an event, each car driven by pure pursuit in the lane of the slot it
    stands on (drivers made anew whenever the event places the cars)."""

    def __init__(self, scenario: Scenario, track: Track,
                 speeds: Mapping[str, float] = SPEEDS,
                 hold: Hold = lambda car, event: event.flag == LIGHTS) -> None:
        self.engine = Engine(scenario)
        self.engine.load_track(TrackWorld.from_track(track))
        self.track, self.speeds, self.hold = track, speeds, hold
        self.frame = self.engine.reset()
        self.drivers = self._drivers()
        self.frames: list[Frame] = []  # every frame's event state and judgement, kept

    def _drivers(self) -> dict[str, PurePursuit]:
        return {name: PurePursuit(lane(self.track.centerline, self.frame.states[name].pose),
                                  wheelbase=0.33, max_steering=0.4, max_speed=7.0,
                                  speed_scale=self.speeds[name])
                for name in self.engine.names}

    def step(self) -> Frame:
        event = self.frame.event
        assert event is not None
        for name, driver in self.drivers.items():
            steer, speed = driver.act(self.frame.states[name])
            self.engine.drive(name, 0.0 if self.hold(name, event) else speed, steer)
        self.frame = self.engine.advance()
        self.frames.append(self.frame)
        placed = {p.car for p in self.frame.judgement.placements}
        if placed == set(self.engine.names):  # a new session: the cars are on the grid
            self.frame = self.engine.advance()
            self.frames.append(self.frame)
            self.drivers = self._drivers()
        return self.frame

    def until(self, done: Callable[[EventState], bool], seconds: float) -> EventState:
        for _ in range(int(seconds * 40)):
            state = self.step().event
            assert state is not None
            if done(state):
                return state
        pytest.fail(f'not reached in {seconds} s of sim time: {self.frame.event}')

    def states(self) -> list[EventState]:
        return [f.event for f in self.frames if f.event is not None]

    def close(self) -> None:
        self.engine.close()


def test_without_an_event_the_frame_has_none(make_scenario, ring):
    engine = Engine(make_scenario())
    engine.load_track(ring)
    try:
        assert engine.event is None
        assert engine.reset().event is None
        assert engine.advance().event is None
    finally:
        engine.close()


def test_practice_runs_its_time_then_qualifying_sets_the_race_grid(repo_root, bare_profile,
                                                                  ring_track):
    scenario = event_scenario(repo_root, bare_profile, {'sessions': [
        {'kind': 'practice', 'duration_s': 3.0, 'cool_down_s': 1.0},
        {'kind': 'qualifying', 'laps': 1, 'start': 'standing', 'cool_down_s': 0.5},
        {'kind': 'race', 'laps': 1, 'grid': 'qualifying', 'start': 'rolling',
         'cool_down_s': 0.5}]})
    run = Run(scenario, ring_track)
    try:
        first = run.step().event
        assert first is not None
        assert (first.session, first.kind, first.flag, first.laps_remaining) == (
            'practice', 'practice', GREEN, -1)
        assert first.time_remaining_s == pytest.approx(3.0 - 0.025)
        flagged = run.until(lambda e: e.flag == CHEQUERED, 4.0)
        assert flagged.session_time_s == pytest.approx(3.0, abs=0.03)
        assert flagged.time_remaining_s == 0.0
        start = run.frame.time_ns
        qualifying = run.until(lambda e: e.session == 'qualifying', 2.0)
        assert (run.frame.time_ns - start) * 1e-9 == pytest.approx(1.0, abs=0.06)
        assert [s.name for s in qualifying.sessions] == ['practice']
        assert (qualifying.flag, qualifying.laps_remaining) == (GREEN, 1)
        # every car back on its slot of the scenario's grid, at rest
        slots = run.engine.referee.start_pose
        for name in run.engine.names:
            state = run.frame.states[name]
            assert math.hypot(state.x - slots[name][0], state.y - slots[name][1]) < 0.05

        race = run.until(lambda e: e.session == 'race', 40.0)
        [_, qualifying_results] = race.sessions
        order = [row.car for row in qualifying_results.rows]
        assert order == ['ego', 'car3', 'car2']  # fastest first: the drivers' speeds
        bests = [row.best_lap_s for row in qualifying_results.rows if row.best_lap_s is not None]
        assert len(bests) == 3 and bests == sorted(bests)
        assert [row.gap_s for row in qualifying_results.rows][0] == 0.0
        assert all(row.status == FINISHED and row.laps == 1 for row in qualifying_results.rows)
        # the race grid is the qualifying order, on the scenario's slots
        grid = [run.engine.referee.start_pose[name] for name in run.engine.names]
        for k, car in enumerate(order):
            state = run.frame.states[car]
            assert math.hypot(state.x - grid[k][0], state.y - grid[k][1]) < 0.05, car
        assert race.flag == FORMATION
        assert [row.grid for row in race.results] == [1, 2, 3]
        assert [row.car for row in race.results] == order
    finally:
        run.close()


def test_a_jump_start_penalty_changes_the_race_classification(repo_root, bare_profile,
                                                              ring_track, tmp_path):
    """car3 is a little faster than car2 but leaves its slot while the lights are on: it
    takes the flag first and is classified behind car2 with its 5 s penalty."""
    scenario = event_scenario(repo_root, bare_profile, [
        {'kind': 'race', 'laps': 2, 'start': 'standing', 'lights': 3, 'light_interval_s': 0.5,
         'cool_down_s': 6.0}], cars=('car2', 'car3'))
    run = Run(scenario, ring_track, speeds={'car2': 0.72, 'car3': 0.75},
              hold=lambda car, event: event.flag == LIGHTS and car != 'car3')
    try:
        final = run.until(lambda e: e.finished, 60.0)
        states = run.states()
        lights = [s.lights for s in states if s.flag == LIGHTS]
        assert sorted(set(lights)) == [0, 1, 2, 3] and lights == sorted(lights)
        assert sum(s.flag == LIGHTS for s in states) == pytest.approx(4 * 0.5 * 40, abs=2)
        flags = [s.flag for s in states]
        order = [flag for k, flag in enumerate(flags) if k == 0 or flags[k - 1] != flag]
        assert order == [LIGHTS, GREEN, WHITE, CHEQUERED]
        assert [s.laps_remaining for s in states if s.flag == WHITE][0] == 1
        # the jump start: a ruling, and car3 put back on its slot while the lights were on
        rulings = [e for f in run.frames for e in f.judgement.events
                   if e.kind == RULING and isinstance(e, Ruling)]
        assert [(r.car, r.rule, r.verdict, r.penalty_s) for r in rulings] == [
            ('car3', JUMP_START, 'time_penalty', 5.0)]
        held = [f for f in run.frames if f.event is not None and f.event.flag == LIGHTS
                and any(p.car == 'car3' for p in f.judgement.placements)]
        assert held and not any(p.car == 'car2' for f in held for p in f.judgement.placements)

        [race] = final.sessions
        assert final.classification == race.rows
        first, second = final.classification
        assert (first.car, second.car) == ('car2', 'car3'), results_table(final.classification)
        assert (first.status, second.status) == (FINISHED, FINISHED)
        assert (first.laps, second.laps) == (2, 2)
        assert (first.penalty_s, second.penalty_s) == (0.0, 5.0)
        assert first.total_time_s is not None and second.total_time_s is not None
        crossed = second.total_time_s - second.penalty_s
        assert crossed < first.total_time_s  # car3 reached the flag first, on the road
        assert second.gap_s == pytest.approx(second.total_time_s - first.total_time_s)
        # the classification as a file
        path = write_classification(final, tmp_path / 'out' / 'classification.yaml')
        written = yaml.safe_load(path.read_text())
        assert written['finished'] is True
        assert [(row['position'], row['car'], row['penalty_s'], row['status'])
                for row in written['classification']] == [
            (1, 'car2', 0.0, FINISHED), (2, 'car3', 5.0, FINISHED)]
        assert written['sessions'][0]['name'] == 'race'
    finally:
        run.close()


def test_a_time_limit_is_followed_by_a_final_lap(repo_root, bare_profile, ring_track):
    scenario = event_scenario(repo_root, bare_profile, [
        {'kind': 'race', 'duration_s': 4.0, 'start': 'standing', 'lights': 1,
         'light_interval_s': 0.1, 'cool_down_s': 0.5}], cars=('ego', 'car2'))
    run = Run(scenario, ring_track)
    try:
        green = run.until(lambda e: e.flag == GREEN, 1.0)
        assert (green.laps_remaining, green.time_remaining_s) == (-1, pytest.approx(4.0))
        up = run.until(lambda e: e.laps_remaining >= 0, 5.0)
        assert up.session_time_s == pytest.approx(4.0, abs=0.03)
        assert (up.flag, up.laps_remaining, up.time_remaining_s) == (GREEN, 2, 0.0)
        white = run.until(lambda e: e.flag == WHITE, 20.0)
        assert white.laps_remaining == 1
        final = run.until(lambda e: e.finished, 20.0)
        leader = final.classification[0]
        assert (leader.car, leader.laps, leader.status) == ('ego', 2, FINISHED)
    finally:
        run.close()


def test_a_car_that_stops_is_retired_and_the_race_goes_on(repo_root, bare_profile, ring_track):
    scenario = event_scenario(repo_root, bare_profile, {'retire_after_s': 2.0, 'sessions': [
        {'kind': 'race', 'laps': 1, 'start': 'rolling', 'cool_down_s': 8.0}]})
    run = Run(scenario, ring_track, hold=lambda car, event: car == 'car2')
    try:
        retired = run.until(lambda e: any(r.status == DNF for r in e.results), 3.0)
        assert retired.flag == FORMATION  # nobody has reached the line yet
        assert 2.0 <= run.frame.time_ns * 1e-9 <= 2.0 + 0.25 + 0.03  # checked every 0.25 s
        assert [r.car for r in retired.results if r.status == DNF] == ['car2']
        final = run.until(lambda e: e.finished, 40.0)
        assert [(r.car, r.status, r.laps) for r in final.classification] == [
            ('ego', FINISHED, 1), ('car3', FINISHED, 1), ('car2', DNF, 0)]
        assert final.classification[1].gap_s is not None and final.classification[1].gap_s > 0
        assert 'DNF' in results_table(final.classification)
    finally:
        run.close()


def test_a_retired_driver_is_dnf_at_once(repo_root, bare_profile, ring_track):
    scenario = event_scenario(repo_root, bare_profile, [
        {'kind': 'practice', 'duration_s': 2.0, 'cool_down_s': 0.0}])
    run = Run(scenario, ring_track)
    try:
        run.step()
        assert run.engine.event is not None
        run.engine.event.retire('car3', 'its driver stopped')
        assert [(r.car, r.status) for r in run.engine.event.state.results][-1] == ('car3', DNF)
        with pytest.raises(KeyError, match="unknown car 'car9'"):
            run.engine.event.retire('car9')
        final = run.until(lambda e: e.finished, 3.0)
        assert [r.status for r in final.classification].count(DNF) == 1
    finally:
        run.close()


def test_the_gym_returns_the_event_in_info(repo_root, tmp_path):
    document = yaml.safe_load((repo_root / 'config' / 'sim.yaml').read_text())
    document['cars'] = [{'name': 'ego', 'profile': 'f1tenth'},
                        {'name': 'opp1', 'profile': 'f1tenth'}]
    document['race']['event'] = [{'kind': 'practice', 'duration_s': 0.5, 'cool_down_s': 0.0},
                                 {'kind': 'race', 'laps': 3, 'start': 'standing',
                                  'light_interval_s': 0.25}]
    path = tmp_path / 'event.yaml'
    path.write_text(yaml.safe_dump(document))
    env = RaceEnv(scenario=str(path), timestep=0.025)
    try:
        _, info = env.reset(seed=0)
        assert info['event'].session == 'practice'
        seen = []
        for _ in range(40):
            _, _, _, _, info = env.step(np.array([0.0, 0.0], np.float32))
            seen.append((info['event'].session, info['event'].flag, info['event'].lights))
        assert seen[0] == ('practice', GREEN, 0)
        assert ('race', LIGHTS, 0) in seen and ('race', LIGHTS, 1) in seen
        assert seen.index(('race', LIGHTS, 0)) == 19  # 0.5 s of practice, 40 steps a second
        assert info['event'].laps_remaining == 3
    finally:
        env.close()


def test_a_standing_start_shows_its_lights_before_the_first_frame(repo_root, bare_profile,
                                                                  ring_track):
    """A driver that reads the flag at the reset never sets off before the signal."""
    scenario = event_scenario(repo_root, bare_profile, [
        {'kind': 'race', 'laps': 1, 'start': 'standing'}], cars=('ego', 'car2'))
    run = Run(scenario, ring_track)
    try:
        assert run.frame.event is not None
        assert (run.frame.event.flag, run.frame.event.lights) == (LIGHTS, 0)
    finally:
        run.close()


def test_a_disqualified_car_is_out_and_the_cool_down_ends_when_the_rest_took_the_flag(
        repo_root, bare_profile, ring_track):
    """car2 disqualified mid-race drives on but is out of the session: once ego and car3
    have taken the flag nothing is left to count, and the session ends long before its
    30 s cool-down."""
    scenario = event_scenario(repo_root, bare_profile, [
        {'kind': 'race', 'laps': 1, 'start': 'rolling', 'cool_down_s': 30.0}])
    run = Run(scenario, ring_track)
    try:
        run.until(lambda e: e.flag != FORMATION, 30.0)  # white at once: a one-lap race
        engine = run.engine
        assert engine.event is not None and engine.stewards is not None
        engine.stewards.records['car2'].disqualified = True  # as a ruling would leave it
        engine.event.update((engine.time_ns - engine.race_start_ns) * 1e-9, run.frame.states,
                            ruled=True)
        assert {r.car: r.status for r in engine.event.state.results}['car2'] == DSQ
        flagged = run.until(lambda e: e.flag == CHEQUERED, 30.0)
        flag_time = run.frame.time_ns * 1e-9
        final = run.until(lambda e: e.finished, 30.0)
        assert run.frame.time_ns * 1e-9 - flag_time < 15.0  # a lap at the slowest pace
        assert [(r.car, r.status) for r in final.classification] == [
            ('ego', FINISHED), ('car3', FINISHED), ('car2', DSQ)]
        assert flagged.laps_remaining == 0
    finally:
        run.close()
