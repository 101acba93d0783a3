"""The mission referee on the generated layouts, driven by synthetic runs whose times are known
by construction: run time from the lines, laps, penalties, the go signal, finish and DNF."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arsim_core.track.fs import generate, rules
from arsim_core.track.fs.mission import Mission
from arsim_core.track.fs.referee import AsState, MissionReferee

DT = 0.01  # seconds between samples


def mission_of(kind: str) -> Mission:
    mission = generate(kind).mission
    assert mission is not None
    return mission


def started(mission: Mission) -> MissionReferee:
    referee = MissionReferee(mission)
    referee.ready(0.0)
    assert referee.go(rules.READY_BEFORE_GO_S)
    return referee


def drive(referee: MissionReferee, path: np.ndarray, speed: float, t0: float) -> float:
    """Along the polyline ``path`` at a constant ``speed``; the time at its end."""
    t = t0
    for a, b in zip(path[:-1], path[1:], strict=True):
        steps = max(1, math.ceil(np.linalg.norm(b - a) / (speed * DT)))
        for k in range(1, steps + 1):
            x, y = a + (b - a) * k / steps
            t += np.linalg.norm(b - a) / steps / speed
            referee.update(t, float(x), float(y), speed)
    return t


def stand(referee: MissionReferee, point: np.ndarray, t: float, seconds: float) -> float:
    for _ in range(round(seconds / DT)):
        t += DT
        referee.update(t, float(point[0]), float(point[1]), 0.0)
    return t


def straight_run(mission: Mission) -> tuple[np.ndarray, np.ndarray]:
    """From 0.30 m behind the start line's middle to the stop zone's centre."""
    start, finish = mission.start_line.mean(axis=0), mission.finish_line.mean(axis=0)
    direction = (finish - start) / np.linalg.norm(finish - start)
    stop = np.asarray(mission.stop_zone).mean(axis=0)
    return np.array([start - 0.30 * direction, finish, stop]), stop


def test_acceleration_is_timed_between_the_lines_and_finishes_in_the_stop_zone() -> None:
    mission = mission_of('acceleration')
    referee = started(mission)
    path, stop = straight_run(mission)
    t = drive(referee, path, 10.0, rules.READY_BEFORE_GO_S)
    stand(referee, stop, t, 1.0)
    result = referee.result
    assert referee.state == AsState.FINISHED
    assert result.lap_times == [pytest.approx(7.5, abs=1e-6)]  # 75 m at 10 m/s
    assert result.total_time == pytest.approx(7.5, abs=1e-6)
    assert 'total (s): 7.500' in result.table()


def test_each_cone_down_adds_its_penalty_once_and_off_course_adds_ten_seconds() -> None:
    mission = mission_of('acceleration')
    referee = started(mission)
    referee.cone_down(3)
    referee.cone_down(3)
    referee.cone_down(8)
    referee.off_course()
    path, stop = straight_run(mission)
    stand(referee, stop, drive(referee, path, 10.0, rules.READY_BEFORE_GO_S), 1.0)
    result = referee.result
    assert (result.cones_down, result.off_courses) == (2, 1)
    expected = 7.5 + 2 * rules.CONE_DOWN_PENALTY_S + rules.OFF_COURSE_PENALTY_S
    assert result.total_time == pytest.approx(expected, abs=1e-6)


def test_the_go_signal_is_taken_only_after_five_seconds_in_ready() -> None:
    referee = MissionReferee(mission_of('autocross'))
    assert not referee.go(10.0), 'not ready yet'
    referee.ready(1.0)
    assert not referee.go(1.0 + rules.READY_BEFORE_GO_S - 0.1)
    assert referee.state == AsState.READY
    assert referee.go(1.0 + rules.READY_BEFORE_GO_S)
    assert referee.state == AsState.DRIVING


def test_the_skidpad_time_is_the_mean_of_its_timed_laps_and_cones_cost_less() -> None:
    mission = mission_of('skidpad')
    assert mission.path is not None and mission.timed_laps == (2, 4)
    referee = started(mission)
    referee.cone_down(1)
    t = drive(referee, np.asarray(mission.path), 8.0, rules.READY_BEFORE_GO_S)
    stand(referee, np.asarray(mission.stop_zone).mean(axis=0), t, 1.0)
    result = referee.result
    assert len(result.lap_times) == 4, result.lap_times
    laps = result.lap_times
    assert laps[0] == pytest.approx(laps[1], rel=1e-3), 'both right laps are one circle'
    assert laps[1] == pytest.approx(math.pi * (15.25 + 3.0) / 8.0, rel=0.02)
    assert result.run_time == pytest.approx((laps[1] + laps[3]) / 2)
    assert result.total_time == pytest.approx(result.run_time + rules.SKIDPAD_CONE_DOWN_PENALTY_S)


def test_stopping_in_the_course_does_not_finish() -> None:
    mission = mission_of('acceleration')
    referee = started(mission)
    path, _ = straight_run(mission)
    halfway = (path[0] + path[1]) / 2
    t = drive(referee, np.array([path[0], halfway]), 10.0, rules.READY_BEFORE_GO_S)
    stand(referee, halfway, t, rules.STOPPED_IN_COURSE_S + 0.5)
    result = referee.result
    assert referee.state == AsState.EMERGENCY
    assert result.dnf == 'stopped in the course'
    assert result.total_time is None and 'DNF' in result.table()
    referee.cone_down(5)
    assert result.cones_down == 0, 'nothing counts after the run ended'


def test_a_bad_sample_decides_nothing() -> None:
    mission = mission_of('acceleration')
    referee = started(mission)
    path, _ = straight_run(mission)
    referee.update(6.0, float(path[0][0]), float(path[0][1]), 10.0)
    referee.update(6.1, math.nan, 0.0, 10.0)
    referee.update(math.inf, float(path[1][0]) + 1.0, float(path[1][1]), 10.0)
    assert referee.result.lap_times == [] and referee.state == AsState.DRIVING
