"""Race metrics against closed-form answers on a circle and a brute-force projection on Monza."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from arsim_core.engine.race_metrics import RaceMetrics, UnknownCarError, project
from arsim_core.errors import ArsimError, ConfigError
from arsim_core.track import TrackOptions, load_track, track_from_centerline

MONZA = Path('/work/shared/tracks/tum_racetrack_database/Monza.csv')
R = 10.0  # circle radius [m]
N = 360  # centerline points, so the thirds of a lap fall on vertices
C = 2.0 * math.pi * R  # the distance a car on the circle drives per lap
V = 5.0  # car speed [m/s]
DT = 0.01  # frame period [s]
LAP = C / V  # analytic lap time


def circle(n: int = N) -> np.ndarray:
    """A counter-clockwise circle of radius R starting at (R, 0)."""
    angles = 2.0 * math.pi * np.arange(n) / n
    return R * np.stack([np.cos(angles), np.sin(angles)], axis=1)


def pose(arc: float, radius: float = R) -> tuple[float, float, float]:
    """Pose of a car ``arc`` metres along the circle (from angle 0), at ``radius``."""
    angle = arc / R
    return radius * math.cos(angle), radius * math.sin(angle), angle + math.pi / 2.0


def metrics(cars: Sequence[str] = ('ego',), sectors: Sequence[float] = (),
            width_right: float = 1.0) -> RaceMetrics:
    """Race on the circle, start line at its first point, 1 m to the left edge."""
    return RaceMetrics(circle(), np.ones(N), np.full(N, width_right), cars, 0.0, sectors)


def drive(rm: RaceMetrics, arcs: Sequence[float], first_frame: int = 1,
          car: str = 'ego') -> list[float]:
    """Feed one frame per arc length, DT apart; returns the times of lap completions."""
    completions = []
    for k, arc in enumerate(arcs, start=first_frame):
        rm.update(k * DT, {car: pose(arc)})
        if rm.lap_completed(car):
            completions.append(k * DT)
    return completions


def brute_force(centerline: np.ndarray, point: np.ndarray) -> tuple[float, float]:
    """(s, signed lateral offset) of the nearest point over every segment at once."""
    start = centerline
    seg = np.roll(centerline, -1, axis=0) - start
    length = np.hypot(*seg.T)
    t = np.clip(np.einsum('ij,ij->i', point - start, seg) / length**2, 0.0, 1.0)
    gap = start + t[:, None] * seg - point
    distance = np.hypot(*gap.T)
    i = int(np.argmin(distance))
    s = np.concatenate([[0.0], np.cumsum(length)])[i] + t[i] * length[i]
    cross = seg[i, 0] * (point[1] - start[i, 1]) - seg[i, 1] * (point[0] - start[i, 0])
    return float(s % length.sum()), math.copysign(float(distance[i]), cross)


def arc_gap(a: float, b: float, length: float) -> float:
    """Distance of two arc lengths on a loop of ``length``."""
    return abs((a - b + length / 2.0) % length - length / 2.0)


def test_laps_and_lap_times_match_the_analytic_lap() -> None:
    rm = metrics()
    rm.reset({'ego': pose(0.0)})
    frames = int(3.2 * LAP / DT)
    completions = drive(rm, [V * k * DT for k in range(1, frames + 1)])
    status = rm.status('ego')
    assert status.laps == 3
    assert status.lap_times == pytest.approx([LAP] * 3, abs=DT)
    assert completions == pytest.approx([LAP, 2 * LAP, 3 * LAP], abs=DT)
    assert status.last_lap == status.lap_times[-1]
    assert status.best_lap == min(status.lap_times)
    assert status.lap_time == pytest.approx(frames * DT - 3 * LAP, abs=DT)
    assert status.progress == pytest.approx(3.2 * rm.length, abs=V * DT)
    assert 0.0 <= status.s < rm.length
    assert status.lap_fraction == pytest.approx(status.s / rm.length)
    assert status.lap_fraction == pytest.approx(0.2, abs=V * DT / rm.length)


def test_a_car_behind_the_line_starts_with_negative_progress() -> None:
    rm = metrics(cars=('ego', 'grid'))
    rm.reset({'ego': pose(0.0), 'grid': pose(-1.0)})
    grid = rm.status('grid')
    assert grid.progress == pytest.approx(-1.0, abs=1e-3)
    assert grid.s == pytest.approx(rm.length - 1.0, abs=1e-3)
    assert grid.laps == 0
    assert rm.status('ego').progress == pytest.approx(0.0, abs=1e-9)
    for k in range(1, int(1.1 * LAP / DT)):
        rm.update(k * DT, {'ego': pose(V * k * DT), 'grid': pose(V * k * DT - 1.0)})
    assert rm.status('ego').lap_times == pytest.approx([LAP], abs=DT)
    assert rm.status('grid').lap_times == pytest.approx([(C + 1.0) / V], abs=DT)


def test_reversing_over_the_line_does_not_count_a_lap_twice() -> None:
    rm = metrics()
    rm.reset({'ego': pose(0.0)})
    step = V * DT
    forward = np.arange(step, 1.1 * C, step)
    back = np.arange(forward[-1] - step, 0.8 * C, -step)
    again = np.arange(back[-1] + step, 2.05 * C, step)
    completions = drive(rm, forward)
    assert rm.status('ego').laps == 1
    before = rm.status('ego').progress
    completions += drive(rm, back, first_frame=len(forward) + 1)
    assert rm.status('ego').progress < before - 0.25 * rm.length
    assert rm.status('ego').laps == 1
    completions += drive(rm, again, first_frame=len(forward) + len(back) + 1)
    status = rm.status('ego')
    assert status.laps == 2
    assert len(status.lap_times) == len(completions) == 2
    # The second lap ends when the car reaches 2 C the only time, in the last forward run.
    second = (len(forward) + len(back)) * DT + (2.0 * C - back[-1]) / V
    assert completions[1] == pytest.approx(second, abs=DT)
    assert status.lap_times[1] == pytest.approx(second - LAP, abs=DT)


def test_sector_times_add_up_to_the_lap_time() -> None:
    rm = metrics(sectors=(1 / 3, 2 / 3))
    rm.reset({'ego': pose(0.0)})
    drive(rm, [V * k * DT for k in range(1, int(2.5 * LAP / DT))])
    status = rm.status('ego')
    assert status.laps == 2
    assert len(status.last_sector_times) == 3
    assert sum(status.last_sector_times) == pytest.approx(status.last_lap, abs=1e-9)
    assert status.last_sector_times == pytest.approx([LAP / 3] * 3, abs=DT)
    assert status.best_sector_times == pytest.approx([LAP / 3] * 3, abs=DT)
    # Half way through the third lap only the first sector is done.
    assert status.sector_times[0] == pytest.approx(LAP / 3, abs=DT)
    assert status.sector_times[1:] == (None, None)


def test_time_off_track_accumulates_only_outside_the_widths() -> None:
    rm = metrics(width_right=2.0)
    rm.reset({'ego': pose(0.0)})
    frame = 0

    def run(frames: int, radius: float) -> None:
        nonlocal frame
        for _ in range(frames):
            frame += 1
            rm.update(frame * DT, {'ego': pose(V * frame * DT, radius)})

    run(10, R + 0.9)
    assert rm.status('ego').lateral_offset == pytest.approx(-0.9, abs=0.01)
    run(20, R + 1.5)  # to the right, within its 2 m
    assert not rm.status('ego').off_track
    assert rm.status('ego').time_off_track == 0.0
    run(30, R - 1.5)  # to the left, beyond its 1 m
    status = rm.status('ego')
    assert status.off_track
    assert status.lateral_offset == pytest.approx(1.5, abs=0.01)
    assert status.time_off_track == pytest.approx(30 * DT)
    run(5, R + 2.5)
    assert rm.status('ego').time_off_track == pytest.approx(35 * DT)
    run(10, R)
    assert not rm.status('ego').off_track
    assert rm.status('ego').time_off_track == pytest.approx(35 * DT)


def test_new_contacts_are_counted_per_car() -> None:
    rm = metrics(cars=('a', 'b'))
    rm.reset({'a': pose(0.0), 'b': pose(-2.0)})
    poses = {'a': pose(0.0), 'b': pose(-2.0)}
    rm.update(DT, poses, new_contacts=['a', 'b'])
    rm.update(2 * DT, poses)
    rm.update(3 * DT, poses, new_contacts=('a',))
    assert rm.status('a').collisions == 2
    assert rm.status('b').collisions == 1


def test_standings_order_by_progress_then_lap_completion_then_name() -> None:
    rm = metrics(cars=('a', 'b', 'z'))
    rm.reset({'z': pose(0.0), 'a': pose(-1.0), 'b': pose(-1.0)})
    for k in range(1, int(1.2 * LAP / DT)):
        arc = V * k * DT
        rm.update(k * DT, {'z': pose(arc), 'a': pose(arc - 1.0), 'b': pose(arc - 1.0)})
    assert [st.name for st in rm.standings()] == ['z', 'a', 'b']
    # All on one pose with one lap each: who completed it first leads, then the name decides.
    for car in rm.cars:
        rm.place(car, pose(5.0))
    standings = rm.standings()
    assert [st.laps for st in standings] == [1, 1, 1]
    assert len({st.progress for st in standings}) == 1
    assert [st.name for st in standings] == ['z', 'a', 'b']
    assert [st.position for st in standings] == [1, 2, 3]
    assert rm.status('b').position == 3
    rm.place('z', pose(2.0))
    assert [st.name for st in rm.standings()] == ['a', 'b', 'z']
    assert rm.status('z').position == 3
    # a car in a race of its own (a vector environment's packed cars) leads it
    assert rm.status('z', alone=True) == rm.status('z')._replace(position=1)


def test_place_keeps_the_laps_and_restarts_the_position_on_the_lap() -> None:
    rm = metrics()
    rm.reset({'ego': pose(0.0)})
    frames = int(1.5 * LAP / DT)
    drive(rm, [V * k * DT for k in range(1, frames + 1)])
    assert rm.status('ego').laps == 1
    rm.place('ego', pose(-1.0))  # back to the grid
    status = rm.status('ego')
    assert status.laps == 1
    assert status.progress == pytest.approx(rm.length - 1.0, abs=1e-3)
    # Crossing the line again is not a lap: the next one needs progress 2 L.
    completions = drive(rm, [V * k * DT - 1.0 for k in range(1, 121)], first_frame=frames + 1)
    assert completions == []
    assert rm.status('ego').laps == 1
    assert rm.status('ego').progress == pytest.approx(rm.length + 5.0, abs=1e-2)


def test_a_teleport_ahead_is_not_progress_and_skips_its_checkpoint() -> None:
    rm = metrics(sectors=(1 / 3, 2 / 3))
    rm.reset({'ego': pose(0.0)})
    drive(rm, [V * k * DT for k in range(1, 11)])
    rm.place('ego', pose(0.45 * C))
    status = rm.status('ego')
    assert status.progress == pytest.approx(0.45 * rm.length, abs=1e-3)
    assert status.sector_times == (None, None, None)
    drive(rm, [0.45 * C + V * k * DT for k in range(1, int(0.6 * LAP / DT))], first_frame=11)
    status = rm.status('ego')
    assert status.laps == 1
    assert status.last_sector_times[0] is None
    # The second sector runs from the teleport to 2/3 of the lap, the third to the line.
    assert status.last_sector_times[1:] == pytest.approx([(2 / 3 - 0.45) * LAP, LAP / 3],
                                                         abs=DT)
    assert status.lap_times == pytest.approx([10 * DT + 0.55 * LAP], abs=DT)


def test_a_car_without_a_pose_is_placed_by_its_first_update() -> None:
    rm = metrics(cars=('ego', 'late'))
    rm.reset({'ego': pose(0.0)})
    rm.update(DT, {'ego': pose(V * DT)})
    rm.update(2 * DT, {'ego': pose(2 * V * DT), 'late': pose(0.6 * C)})
    late = rm.status('late')
    assert late.progress == pytest.approx(-0.4 * rm.length, abs=1e-3)
    assert late.laps == 0


def test_for_track_puts_the_start_line_on_the_start_pose() -> None:
    center = circle()
    options = TrackOptions(name='circle', start_index=N // 4)
    track = track_from_centerline('circle', center, np.ones(N), np.ones(N), options)
    rm = RaceMetrics.for_track(track, ['ego'], sectors=(0.5,))
    rm.reset({'ego': track.start_pose})
    assert rm.length == pytest.approx(track.length)
    status = rm.status('ego')
    assert status.progress == pytest.approx(0.0, abs=1e-9)
    assert status.s == pytest.approx(track.length / 4)
    assert len(status.sector_times) == 2


def test_local_search_agrees_with_brute_force_on_monza() -> None:
    if not MONZA.is_file():
        pytest.skip(f'TUM track data not found at {MONZA}')
    track = load_track(MONZA)
    center, length = track.centerline, track.length
    widest = float(max(track.width_left.max(), track.width_right.max()))
    rng = np.random.default_rng(7)
    pts = np.vstack([center, center[:1]])
    along = np.concatenate([track.s, [length]])
    normals = np.stack([-np.gradient(pts[:, 1]), np.gradient(pts[:, 0])], axis=1)
    normals /= np.hypot(*normals.T)[:, None]

    def near(s: np.ndarray, lateral: np.ndarray) -> np.ndarray:
        """Points ``lateral`` metres to the left of the centerline at ``s``."""
        xy = np.stack([np.interp(s, along, pts[:, k]) for k in range(2)], axis=1)
        nrm = np.stack([np.interp(s, along, normals[:, k]) for k in range(2)], axis=1)
        return xy + lateral[:, None] * nrm

    # Random points with random hints: near ones use the window, far ones must fall back.
    points = near(rng.uniform(0.0, length, 500), rng.uniform(-2 * widest, 2 * widest, 500))
    for point, hint in zip(points, rng.integers(0, len(center), 500), strict=True):
        s, lateral, _ = project(center, track.s, point, int(hint), radius=widest)
        expected_s, expected_lateral = brute_force(center, point)
        assert arc_gap(s, expected_s, length) < 1e-6
        assert lateral == pytest.approx(expected_lateral, abs=1e-9)

    # A car weaving along two laps, through the metrics' per-car window.
    s_path = np.arange(0.0, 2 * length, 1.5) % length
    weave = 1.3 * widest * np.sin(np.arange(s_path.size) / 40.0)
    rm = RaceMetrics.for_track(track, ['ego'])
    for k, point in enumerate(near(s_path, weave)):
        rm.update(k * 0.05, {'ego': (float(point[0]), float(point[1]), 0.0)})
        status = rm.status('ego')
        expected_s, expected_lateral = brute_force(center, point)
        assert arc_gap(status.s, expected_s, length) < 1e-6
        assert status.lateral_offset == pytest.approx(expected_lateral, abs=1e-9)
    assert rm.status('ego').laps >= 1


def test_table_lists_every_car_with_its_best_lap() -> None:
    rm = metrics(cars=('ego', 'rival'), sectors=(0.5,))
    rm.reset({'ego': pose(0.0), 'rival': pose(-2.0)})
    for k in range(1, int(1.1 * LAP / DT)):
        rm.update(k * DT, {'ego': pose(V * k * DT), 'rival': pose(0.9 * V * k * DT - 2.0)})
    table = rm.table()
    lines = table.splitlines()
    assert len(lines) == 3
    assert lines[1].split()[:2] == ['1', 'ego']
    best = rm.status('ego').best_lap
    assert best is not None
    assert f'{best:.3f}' in lines[1]
    assert 'rival' in lines[2]
    assert lines[2].split()[3] == '-'  # no lap yet
    # Columns line up: every value of the laps column ends where its header does.
    end = lines[0].index('Laps') + len('Laps')
    assert all(line[end - 1] != ' ' and line[end] == ' ' for line in lines)


def test_to_dict_is_json_serialisable() -> None:
    rm = metrics(cars=('ego', 'rival'), sectors=(0.5,))
    rm.reset({'ego': pose(0.0), 'rival': pose(-2.0)})
    for k in range(1, int(1.1 * LAP / DT)):
        rm.update(k * DT, {'ego': pose(V * k * DT), 'rival': pose(0.9 * V * k * DT - 2.0)},
                  new_contacts=['rival'] if k == 5 else ())
    data = json.loads(json.dumps(rm.to_dict()))
    assert set(data) == {'ego', 'rival'}
    ego = rm.status('ego')
    assert data['ego']['laps'] == ego.laps == 1
    assert data['ego']['lap_times'] == list(ego.lap_times)
    assert data['ego']['position'] == 1
    assert data['rival']['collisions'] == 1
    assert data['rival']['best_lap'] is None


@pytest.mark.parametrize('sectors', [(0.5, 0.5), (0.7, 0.3), (0.0,), (1.0,), (0.5, 1.2)])
def test_bad_sectors_are_config_errors(sectors: tuple[float, ...]) -> None:
    with pytest.raises(ConfigError, match='strictly increasing lap fractions'):
        metrics(sectors=sectors)


def test_bad_geometry_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r'\(N >= 3, 2\)'):
        RaceMetrics(circle()[:2], np.ones(2), np.ones(2), ['ego'])
    with pytest.raises(ConfigError, match=r'width_right must have shape \(360,\)'):
        RaceMetrics(circle(), np.ones(N), np.ones(N - 1), ['ego'])
    with pytest.raises(ConfigError, match='width_left must hold finite non-negative'):
        RaceMetrics(circle(), -np.ones(N), np.ones(N), ['ego'])
    with pytest.raises(ConfigError, match='unique'):
        RaceMetrics(circle(), np.ones(N), np.ones(N), ['ego', 'ego'])


def test_unknown_cars_are_key_errors_naming_the_known_ones() -> None:
    rm = metrics(cars=('ego', 'rival'))
    rm.reset({'ego': pose(0.0)})
    with pytest.raises(KeyError, match="unknown car 'ghost'.*'ego', 'rival'"):
        rm.status('ghost')
    with pytest.raises(UnknownCarError):
        rm.update(DT, {'ghost': pose(0.0)})
    with pytest.raises(ArsimError):
        rm.update(DT, {'ego': pose(0.0)}, new_contacts=['ghost'])
    with pytest.raises(UnknownCarError):
        rm.reset({'ghost': pose(0.0)})
