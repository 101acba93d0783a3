"""The driver zoo: drivers named in the scenario, and the racecraft each line driver's
documentation promises (arsim_core.drivers.racer), in real races on our ring and in
constructed situations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from arsim_core.config.drivers import ZOO_NAMES, is_policy
from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.drivers.field import Field
from arsim_core.drivers.lines import CENTERLINE, RACELINE, RacingLine
from arsim_core.drivers.racer import LineDriver
from arsim_core.drivers.seen import Seen
from arsim_core.drivers.zoo import SKILLS, build_driver
from arsim_core.engine.race_event import FINISHED
from arsim_core.engine.race_metrics import RaceMetrics
from arsim_core.engine.state import CarState
from arsim_core.errors import ConfigError
from arsim_core.league.race import run_race
from arsim_core.track import load_track

MakeScenario = Callable[..., Scenario]


def test_a_car_names_its_driver_and_a_wrong_name_fails_at_its_line(
        make_scenario: MakeScenario, tmp_path: Path, repo_root: Path) -> None:
    scenario = make_scenario(cars=({'name': 'a', 'driver': 'racer'},
                                   {'name': 'b', 'driver': 'my_pkg.policy:act'}, 'c'))
    assert [car.driver for car in scenario.cars] == ['racer', 'my_pkg.policy:act', '']
    assert is_policy('my_pkg.policy:act') and not is_policy('racer')
    bad = tmp_path / 'bad.yaml'
    text = (repo_root / 'config' / 'sim.yaml').read_text()
    bad.write_text(text.replace('    profile: f1tenth ',
                                '    driver: speedy\n    profile: f1tenth '))
    line = bad.read_text().splitlines().index('    driver: speedy') + 1
    with pytest.raises(ConfigError, match=rf"bad.yaml:{line}: cars\[0\].driver: unknown driver "
                                          r"'speedy'; expected one of \['novice'"):
        load_scenario(bad, repo_root)


def test_every_zoo_name_builds_a_driver(make_scenario: MakeScenario, repo_root: Path) -> None:
    track = load_track('arsim_ring', repo_root / 'maps')
    line = RacingLine.of(track)
    assert line.source == CENTERLINE and line.speeds is None  # the ring has no raceline
    scenario = make_scenario(cars=('a',))
    for name in ZOO_NAMES:
        driver = build_driver(scenario.cars[0], name, line, 0, 0.025)
        assert (driver.scan is not None) == (name == 'follow_the_gap')
    with pytest.raises(ConfigError, match="car 'a': unknown driver 'fast'"):
        build_driver(scenario.cars[0], 'fast', line, 0, 0.025)
    paces = [SKILLS[name].pace for name in ('novice', 'club', 'expert', 'racer')]
    assert paces == sorted(paces) and len(set(paces)) == 4


def test_a_raceline_lies_within_the_track(shared_tracks: Path, repo_root: Path) -> None:
    track = load_track(shared_tracks / 'f1tenth_racetracks' / 'Spielberg', repo_root / 'maps')
    line = RacingLine.of(track)
    assert line.source == RACELINE and line.speeds is not None
    assert np.all(np.abs(line.lateral) < max(track.width_left.max(), track.width_right.max()))
    assert np.ptp(line.lateral) > 0.5  # it uses the track's width, not its middle


def test_the_racer_passes_a_slower_car_without_a_penalty(make_scenario: MakeScenario,
                                                         repo_root: Path) -> None:
    """A novice on pole, a racer behind it: the racer is held up, passes where there is
    room, and wins; neither touches the other."""
    scenario = make_scenario(cars=({'name': 'slow', 'driver': 'novice'},
                                   {'name': 'fast', 'driver': 'racer'}))
    result = run_race(scenario, load_track('arsim_ring', repo_root / 'maps'), 2)
    assert [car.name for car in result.cars] == ['fast', 'slow']
    first, second = (car.row for car in result.cars)
    assert all(row.status == FINISHED and row.laps == 2 for row in (first, second))
    assert result.collisions == 0 and first.penalty_s == 0.0
    assert first.total_time_s is not None and second.total_time_s is not None
    assert first.total_time_s < second.total_time_s


def test_a_driver_that_does_not_overtake_keeps_its_distance(make_scenario: MakeScenario,
                                                           repo_root: Path) -> None:
    """An expert stuck behind a novice that never lets it by would ram it without keeping
    its distance; a novice behind a club driver never passes it and never touches it."""
    scenario = make_scenario(cars=({'name': 'lead', 'driver': 'club'},
                                   {'name': 'queue', 'driver': 'novice'}))
    result = run_race(scenario, load_track('arsim_ring', repo_root / 'maps'), 1)
    assert [car.name for car in result.cars] == ['lead', 'queue']
    assert result.collisions == 0 and not result.incidents


def _pair(repo_root: Path, make_scenario: MakeScenario) -> tuple[LineDriver, Field, CarState,
                                                                 int]:
    """A racer on our ring's centerline just before a left-hand bend, with a faster car a
    third of a length behind it; the racer's index along its line."""
    track = load_track('arsim_ring', repo_root / 'maps')
    line = RacingLine.of(track)
    scenario = make_scenario(cars=('racer', 'attacker'))
    car = scenario.cars[0]
    driver = build_driver(car, 'racer', line, 0, 0.025)
    assert isinstance(driver, LineDriver)
    bend = driver._bend_min
    curvature = line.curvature
    n = len(curvature)
    spacing = driver.pursuit.length / n
    window = round(5.0 / spacing)  # a second ahead at 5 m/s
    k = next(k for k in range(n) if abs(curvature[k]) < 0.3 * bend
             and curvature[(k + window // 2) % n] > 1.5 * bend)
    points = line.points
    heading = np.arctan2(*(points[(k + 1) % n] - points[k])[::-1])
    length = car.profile.footprint.length
    back = points[k] - np.array([np.cos(heading), np.sin(heading)]) * (length * 1.33)
    metrics = RaceMetrics.for_track(track, ('racer', 'attacker'))
    metrics.reset({'racer': (*points[k], heading), 'attacker': (*back, heading)})
    field = Field(metrics, [length, length], [car.profile.footprint.width] * 2,
                  track.width_left, track.width_right)
    field.update(np.array([5.0, 5.5]))
    state = CarState(float(points[k, 0]), float(points[k, 1]), float(heading), 5.0)
    driver.reset(state)
    driver.start_lane(0.0)
    return driver, field, state, k


def test_the_racer_covers_the_inside_before_a_bend(repo_root: Path,
                                                   make_scenario: MakeScenario) -> None:
    driver, field, state, _ = _pair(repo_root, make_scenario)
    aims = []
    for _ in range(10):
        driver.act(Seen(state, None, field, (0.0, 0.0, 0.0, 0.0)))
        aims.append(driver._aim)
    assert driver._defending == 1.0  # the inside of a left-hand bend is the left
    assert aims[-1] > aims[0] > 0.0 and np.all(np.diff(aims) >= 0.0)  # one move, no weaving
    step = driver.max_offset_step
    assert max(np.diff([0.0, *aims])) <= step + 1e-9  # at the documented lateral rate


def test_a_driver_without_racecraft_does_not_defend(repo_root: Path,
                                                    make_scenario: MakeScenario) -> None:
    driver, field, state, _ = _pair(repo_root, make_scenario)
    driver.skill = SKILLS['expert']
    for _ in range(10):
        driver.act(Seen(state, None, field, (0.0, 0.0, 0.0, 0.0)))
    assert driver._defending == 0.0 and abs(driver._aim) < 1e-9


def test_follow_the_gap_backs_out_of_a_wall_it_stands_against(make_scenario: MakeScenario,
                                                              repo_root: Path) -> None:
    """Nosed into a wall, the gap it sees too narrow to drive into: after a second standing
    still it reverses, steering the other way, then drives on."""
    line = RacingLine.of(load_track('arsim_ring', repo_root / 'maps'))
    car = make_scenario(cars=('a',)).cars[0]
    driver = build_driver(car, 'follow_the_gap', line, 0, 0.025)
    assert driver.scan is not None
    wall = np.full(driver.scan.beams, 0.15, np.float32)  # a wall all round, 15 cm away
    wall[: driver.scan.beams // 3] = 3.0  # some room on the right
    driver.reset(CarState(0.0, 0.0, 0.0))
    seen = Seen(CarState(0.0, 0.0, 0.0), wall, None, (0.0, 0.0, 0.0, 0.0))  # type: ignore[arg-type]
    commands = [driver.act(seen) for _ in range(80)]  # two seconds at 40 Hz
    reversing = [k for k, (_, speed) in enumerate(commands) if speed < 0.0]
    assert reversing and 39 <= reversing[0] <= 42, reversing  # after a second still
    steer_forward = commands[reversing[0] - 1][0]
    assert all(np.sign(commands[k][0]) == -np.sign(steer_forward) or steer_forward == 0.0
               for k in reversing[:5])
    assert len(reversing) <= 33  # 0.8 s of backing out, then forward again
    assert commands[-1][1] >= 0.0
