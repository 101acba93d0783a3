"""Races in process (arsim_core.league.race) run as the engine's race event: twenty 1:10 cars
with LiDARs and drivers of the zoo to the flag on a held-out track, their classification and
incident clips written and each clip opened by MCAP's own reader; a Gym policy that dies
mid-race retired while the race goes on; the engine's grid of twenty along our ring."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.engine import Engine, Frame, TrackWorld
from arsim_core.engine.race_event import CHEQUERED, DNF, DSQ, FINISHED, LIGHTS, RUNNING
from arsim_core.engine.race_metrics import RaceMetrics
from arsim_core.engine.start_grid import Lane, start_poses
from arsim_core.league.race import CLASSIFICATION_FILE, run_race
from arsim_core.track import load_track
from arsim_launch.race_clips import race_clips

MakeScenario = Callable[..., Scenario]
HERE = Path(__file__).resolve().parent


def test_the_engine_lays_a_grid_of_twenty_along_our_ring(repo_root: Path) -> None:
    """The straight grid would run six of twenty cars off the ring; the engine's grid follows
    the track there, every slot on it and apart, and keeps the straight grid where it fits."""
    track = load_track('arsim_ring', repo_root / 'maps')
    scenario = load_scenario(repo_root / 'config' / 'race' / 'twenty_cars.yaml', repo_root)
    engine = Engine(scenario)
    try:
        engine.load_track(TrackWorld.from_track(track))
        slots = engine.start_poses
    finally:
        engine.close()
    straight = start_poses(scenario.cars, track.start_pose)  # no track to follow
    metrics = RaceMetrics.for_track(track, [car.name for car in scenario.cars])
    metrics.reset(straight)
    assert sum(status.off_track for status in metrics.standings()) >= 6
    metrics.reset(slots)
    assert not any(status.off_track for status in metrics.standings())
    progress = [metrics.status(name).progress for name in metrics.cars]
    assert progress[0] == pytest.approx(0.0, abs=0.05) and min(progress) > -10.0
    two = scenario.cars[:2]  # a grid that fits behind the line stays straight
    assert start_poses(two, track.start_pose, lane=Lane.of(track)) == \
        start_poses(two, track.start_pose)


@pytest.mark.timeout(240)
def test_twenty_cars_race_to_the_flag_on_a_held_out_track(shared_tracks: Path,
                                                          repo_root: Path,
                                                          tmp_path: Path) -> None:
    """Spielberg, one lap from a standing start, twenty F1TENTH cars each with its 2D LiDAR:
    the engine's event ends the race once every car has taken the flag or is out, the
    classification is written, and every incident's clip opens with MCAP's reader."""
    drivers = ['racer'] * 8 + ['expert'] * 8 + ['follow_the_gap'] * 4
    cars = [{'name': f'car{k:02d}', 'profile': 'f1tenth', 'driver': driver}
            for k, driver in enumerate(drivers, start=1)]
    scenario = load_scenario(repo_root / 'config' / 'race' / 'twenty_cars.yaml', repo_root,
                             {'cars': cars, 'race': {'clips': {'max_clips': 3}}})
    assert len(scenario.cars) == 20
    assert all(any(isinstance(s, Lidar2DSpec) for s in car.profile.sensors)
               for car in scenario.cars)
    track = load_track(shared_tracks / 'f1tenth_racetracks' / 'Spielberg', repo_root / 'maps')
    flags: list[str] = []

    def flag(frame: Frame) -> None:
        assert frame.event is not None
        flags.append(frame.event.flag)

    result = run_race(scenario, track, 1, out=tmp_path / 'race', clips=race_clips,
                      on_frame=flag)
    assert result.finished, result.table()
    assert flags[0] == LIGHTS and flags[-1] == CHEQUERED
    statuses = [car.status for car in result.cars]
    assert RUNNING not in statuses, result.table()
    assert set(statuses) <= {FINISHED, DNF, DSQ}
    finished = [car.row for car in result.cars if car.status == FINISHED]
    assert len(finished) >= 10, result.table()
    assert all(row.laps == 1 for row in finished)
    totals = [row.total_time_s for row in finished if row.total_time_s is not None]
    # finishers first, by race time with the penalties added
    assert len(totals) == len(finished) and totals == sorted(totals)
    assert statuses[:len(finished)] == [FINISHED] * len(finished)
    assert [car.row.position for car in result.cars] == list(range(1, 21))
    assert all(car.why for car in result.cars if car.status != FINISHED)
    assert result.sim_s < 230.0  # the flag, not the time limit, ended it

    # the classification: the engine's, as a file
    assert result.classification_file == tmp_path / 'race' / CLASSIFICATION_FILE
    written = yaml.safe_load(result.classification_file.read_text())
    assert written['finished'] is True
    assert [(row['car'], row['status'], row['laps']) for row in written['classification']] \
        == [(car.name, car.status, car.row.laps) for car in result.cars]

    # a clip per incident, each opened and decoded by MCAP's reader with the ROS 2 decoder
    assert result.incidents and len(result.clips) == min(3, len(result.incidents))
    assert all(path.parent == tmp_path / 'race' / 'clips' for path in result.clips)
    assert sorted(result.clips) == sorted((tmp_path / 'race' / 'clips').glob('*.mcap'))
    for path in result.clips:
        with path.open('rb') as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            topics = {channel.topic for _, channel, _, _ in reader.iter_decoded_messages()}
            stream.seek(0)
            records = {m.name: m.metadata for m in make_reader(stream).iter_metadata()}
        assert '/clock' in topics and any('scan' in t for t in topics), topics
        assert records['arsim.incident']['rule'], records


def test_a_policy_that_dies_is_retired_and_the_race_goes_on(make_scenario: MakeScenario,
                                                            repo_root: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    scenario = make_scenario(cars=({'name': 'steady', 'driver': 'club'},
                                   {'name': 'mine', 'driver': 'league_policies:broken'},
                                   {'name': 'gap', 'driver': 'league_policies:gap'}))
    result = run_race(scenario, load_track('arsim_ring', repo_root / 'maps'), 1)
    assert result.finished
    by_name = {car.name: car for car in result.cars}
    assert by_name['mine'].status == DNF
    assert 'league_policies:broken failed: RuntimeError: the policy lost its weights' in \
        by_name['mine'].why
    assert by_name['steady'].status == FINISHED
    assert by_name['gap'].status == FINISHED  # a user's policy that works races to the end
    assert result.cars[-1].name == 'mine'
