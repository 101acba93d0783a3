"""Formula Student mission layouts: the rules' geometry measured from the generated cones,
the limits of the closed courses, and the track folders the CLI writes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import label as blobs

from arsim_core import labels
from arsim_core.errors import TrackError
from arsim_core.track import load_track, rasterize, track_mesh
from arsim_core.track.cli import main as cli_main
from arsim_core.track.fs import KINDS, generate, rules
from arsim_core.track.fs.skidpad import CENTRE_Y
from arsim_core.track.fs.validate import straight_runs, track_violations
from arsim_core.track.model import (
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
)
from arsim_core.track.preview import CONE_COLOURS, render_preview

SEEDS = range(8)


def _fit_circle(points: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares circle (centre, radius) through points (K, 2)."""
    a = np.column_stack([2.0 * points, np.ones(len(points))])
    b = (points**2).sum(axis=1)
    (cx, cy, c), *_ = np.linalg.lstsq(a, b, rcond=None)
    return np.array([cx, cy]), float(np.sqrt(c + cx * cx + cy * cy))


def _forward_crossings(path: np.ndarray, x: float, half_width: float) -> int:
    """How often a polyline crosses the segment x = ``x``, |y| <= ``half_width`` along +x."""
    p, q = path[:-1], path[1:]
    cross = (p[:, 0] < x) & (q[:, 0] >= x)
    t = (x - p[:, 0]) / np.where(cross, q[:, 0] - p[:, 0], 1.0)
    y = p[:, 1] + t * (q[:, 1] - p[:, 1])
    return int(np.count_nonzero(cross & (np.abs(y) <= half_width)))


# ---------------------------------------------------------------------------------------------
# Acceleration


def test_acceleration_lines_are_75_m_apart_and_marked_by_big_orange_cones():
    track = generate('acceleration')
    mission = track.mission
    assert mission is not None and mission.kind == 'acceleration' and mission.laps == 1
    start_x = mission.start_line[:, 0].mean()
    finish_x = mission.finish_line[:, 0].mean()
    assert finish_x - start_x == pytest.approx(75.0)
    big = track.cones.of(LABEL_CONE_BIG_ORANGE)
    assert len(big) == 8
    # Two on each side of each line, the line between them.
    for x in (start_x, finish_x):
        at = big[np.abs(big[:, 0] - x) < 1.0]
        assert len(at) == 4 and at[:, 0].mean() == pytest.approx(x)
        assert np.sum(at[:, 1] > 0) == 2 and np.sum(at[:, 1] < 0) == 2


def test_acceleration_lane_width_spacing_staging_and_stop_zone():
    track = generate('acceleration')
    blue, yellow = track.cones.of(LABEL_CONE_BLUE), track.cones.of(LABEL_CONE_YELLOW)
    assert len(blue) == len(yellow) > 10
    assert np.all(blue[:, 1] > 0) and np.all(yellow[:, 1] < 0)
    free = blue[:, 1].min() - yellow[:, 1].max() - 2 * rules.CONE_EDGE_OFFSET
    assert free == pytest.approx(rules.ACCELERATION_WIDTH)
    lane = np.sort(np.concatenate([blue[:, 0], track.cones.of(LABEL_CONE_BIG_ORANGE)[:, 0]]))
    assert np.diff(lane).max() <= rules.ACCELERATION_CONE_SPACING + 1e-9
    x, y, yaw = track.start_pose
    assert (x, y, yaw) == pytest.approx((-0.30, 0.0, 0.0))
    zone = track.mission.stop_zone
    assert zone[:, 0].min() == pytest.approx(75.0)
    assert zone[:, 0].max() - zone[:, 0].min() == pytest.approx(100.0)
    orange = track.cones.of(LABEL_CONE_ORANGE)
    assert orange[:, 0].min() > 75.0 and orange[:, 0].max() == pytest.approx(175.0)
    # The exit lane is closed: cones across it at its end.
    assert np.sum(np.isclose(orange[:, 0], 175.0)) >= 3


# ---------------------------------------------------------------------------------------------
# Skidpad


def test_skidpad_circles_measured_from_the_cones():
    track = generate('skidpad')
    cones = track.cones
    circles = {}
    for name, sign, inner_label, outer_label in (('right', -1.0, LABEL_CONE_YELLOW,
                                                  LABEL_CONE_BLUE),
                                                 ('left', 1.0, LABEL_CONE_BLUE,
                                                  LABEL_CONE_YELLOW)):
        own = np.sign(cones.positions[:, 1]) == sign
        inner = cones.positions[own & (cones.labels == inner_label)]
        centre, inner_r = _fit_circle(inner)
        d = np.hypot(*(cones.positions - centre).T)
        outer = cones.positions[(cones.labels == outer_label) & own & (d > inner_r + 1.0)]
        outer_centre, outer_r = _fit_circle(outer)
        assert len(inner) == 16, name
        assert len(outer) == 13, name
        np.testing.assert_allclose(outer_centre, centre, atol=1e-9)
        # Cones stand just outside the 3 m lane.
        assert 2 * (inner_r + rules.CONE_EDGE_OFFSET) == pytest.approx(15.25)
        assert 2 * (outer_r - rules.CONE_EDGE_OFFSET) == pytest.approx(21.25)
        circles[name] = centre
    assert np.hypot(*(circles['left'] - circles['right'])) == pytest.approx(18.25)


def test_skidpad_timing_cones_lanes_and_staging():
    track = generate('skidpad')
    mission = track.mission
    assert mission.kind == 'skidpad' and mission.laps == 4 and mission.timed_laps == (2, 4)
    big = track.cones.of(LABEL_CONE_BIG_ORANGE)
    assert len(big) == 4
    line = mission.start_line
    np.testing.assert_array_equal(line, mission.finish_line)
    assert line[:, 0] == pytest.approx([0.0, 0.0])  # the line through both centres
    assert big[:, 0].mean() == pytest.approx(0.0)
    x, y, yaw = track.start_pose
    assert (x, y, yaw) == pytest.approx((-15.0, 0.0, 0.0))
    orange = track.cones.of(LABEL_CONE_ORANGE)
    lane = orange[np.abs(orange[:, 1]) > 1.0]
    assert 2 * (np.abs(lane[:, 1]).min() - rules.CONE_EDGE_OFFSET) == pytest.approx(3.0)
    assert lane[:, 0].min() < -15.0 and lane[:, 0].max() == pytest.approx(25.0)
    assert mission.stop_zone[:, 0].max() == pytest.approx(25.0)


def test_skidpad_path_goes_right_twice_then_left_twice():
    path = generate('skidpad').mission.path
    assert path is not None
    np.testing.assert_allclose(path[0], [-15.0, 0.0])
    assert path[-1] == pytest.approx([25.0, 0.0])
    # Crossing the timekeeping line: on entry, then at the end of each of the 4 laps.
    assert _forward_crossings(path, 0.0, 1.5) == 1 + 4
    on_right = np.hypot(path[:, 0], path[:, 1] + CENTRE_Y)
    on_left = np.hypot(path[:, 0], path[:, 1] - CENTRE_Y)
    right_first = np.flatnonzero(path[:, 1] < -1.0)
    left_first = np.flatnonzero(path[:, 1] > 1.0)
    assert right_first.max() < left_first.min()  # right circle done before the left one
    # Within a few mm of the lane's middle while circling: radius 9.125 about each centre.
    far = np.abs(path[:, 1]) > 1.0
    r = np.where(path[far, 1] < 0, on_right[far], on_left[far])
    np.testing.assert_allclose(r, CENTRE_Y, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# Autocross and trackdrive


@pytest.mark.parametrize('seed', SEEDS)
def test_autocross_is_within_the_limits(seed):
    track = generate('autocross', seed)
    assert track_violations(track) == []
    assert rules.TRACK_MIN_LAP <= track.length <= rules.TRACK_MAX_LAP
    assert straight_runs(track).max() <= rules.TRACK_MAX_STRAIGHT
    assert track.mission.kind == 'autocross' and track.mission.laps == 1
    assert len(track.cones.of(LABEL_CONE_BIG_ORANGE)) == 4
    assert len(track.cones.of(LABEL_CONE_ORANGE)) >= 4


def test_trackdrive_is_the_same_course_with_ten_laps():
    auto, drive = generate('autocross', 4), generate('trackdrive', 4)
    np.testing.assert_array_equal(auto.centerline, drive.centerline)
    assert drive.mission.laps == 10 and drive.mission.timed_laps == tuple(range(1, 11))
    assert track_violations(drive) == []


def test_seed_picks_the_course():
    a, b, c = generate('autocross', 1), generate('autocross', 1), generate('autocross', 2)
    np.testing.assert_array_equal(a.cones.positions, b.cones.positions)
    assert a.centerline.shape != c.centerline.shape or not np.allclose(a.centerline,
                                                                        c.centerline)


def test_timekeeping_line_and_staging():
    track = generate('autocross', 0)
    line = track.mission.start_line
    assert np.hypot(*(line[1] - line[0])) == pytest.approx(3.0)
    x, y, _ = track.start_pose
    mid = line.mean(axis=0)
    assert np.hypot(mid[0] - x, mid[1] - y) == pytest.approx(rules.TRACK_STAGING, abs=0.05)
    big = track.cones.of(LABEL_CONE_BIG_ORANGE)
    assert np.hypot(*(big - mid).T).max() < 2.0


def test_validator_reports_broken_limits():
    from dataclasses import replace

    track = generate('autocross', 0)
    narrow = replace(track, width_left=track.width_left * 0.8, width_right=track.width_right * 0.8)
    assert any('width' in p for p in track_violations(narrow))
    sparse = replace(track, cones=type(track.cones)(track.cones.positions[::3],
                                                    track.cones.labels[::3]))
    assert any('apart' in p for p in track_violations(sparse))
    big = replace(track, centerline=track.centerline * 3.0)
    problems = track_violations(big)
    assert any('lap' in p for p in problems) and any('straight' in p for p in problems)
    swapped = track.cones.labels.copy()
    swapped[track.cones.labels == LABEL_CONE_BLUE] = LABEL_CONE_YELLOW
    assert any('yellow cones on the left' in p for p in track_violations(
        replace(track, cones=type(track.cones)(track.cones.positions, swapped))))


# ---------------------------------------------------------------------------------------------
# Track folders, meshes and maps


@pytest.mark.parametrize('kind', KINDS)
def test_cli_writes_a_folder_load_track_reads_back(tmp_path, kind, capsys):
    out = tmp_path / kind
    assert cli_main(['fs', kind, str(out), '--seed', '2']) == 0
    assert 'wrote' in capsys.readouterr().out
    made = generate(kind, 2)
    loaded = load_track(out)
    assert loaded.name == kind
    np.testing.assert_array_equal(loaded.cones.labels, made.cones.labels)
    np.testing.assert_allclose(loaded.cones.positions, made.cones.positions, atol=1e-6)
    np.testing.assert_allclose(loaded.centerline, made.centerline, atol=1e-6)
    assert loaded.start_pose == pytest.approx(made.start_pose, abs=1e-5)
    assert loaded.walls == ()
    m, n = loaded.mission, made.mission
    assert (m.kind, m.laps, m.timed_laps) == (n.kind, n.laps, n.timed_laps)
    for key in ('start_line', 'finish_line', 'stop_zone'):
        np.testing.assert_allclose(getattr(m, key), getattr(n, key), atol=1e-6)
    assert (m.path is None) == (n.path is None)
    if n.path is not None:
        np.testing.assert_allclose(m.path, n.path, atol=1e-6)


def test_unknown_mission_is_refused(tmp_path, capsys):
    assert cli_main(['fs', 'drag_race', str(tmp_path / 'x')]) == 1
    err = capsys.readouterr().err
    assert err.count('\n') == 1
    assert "unknown mission 'drag_race'" in err
    for kind in KINDS:
        assert kind in err
    assert not (tmp_path / 'x').exists()
    with pytest.raises(TrackError, match='unknown mission'):
        generate('endurance')


def test_mesh_and_map_hold_the_cones():
    track = generate('skidpad')
    mesh = track_mesh(track)
    for label in (LABEL_CONE_BLUE, LABEL_CONE_YELLOW, LABEL_CONE_ORANGE, LABEL_CONE_BIG_ORANGE):
        tris = mesh.triangles[mesh.labels == label]
        assert len(tris) == 14 * int(np.sum(track.cones.labels == label))
    assert not np.any(mesh.labels == labels.BARRIER)
    big = mesh.vertices[np.unique(mesh.triangles[mesh.labels == LABEL_CONE_BIG_ORANGE])]
    assert big[:, 2].max() == pytest.approx(rules.BIG_CONE_HEIGHT)
    grid = rasterize(track, resolution=0.05)
    cells = grid.world_to_cell(track.cones.positions)
    for col, row in cells.astype(int):
        assert np.any(grid.data[row - 3:row + 4, col - 3:col + 4] == 100)  # base outline
    free = grid.world_to_cell(np.array([[-5.0, 0.0], [5.0, 0.0]])).astype(int)
    assert np.all(grid.data[free[:, 1], free[:, 0]] == 0)
    assert set(labels.CONES) <= set(labels.OBSTACLES)


def test_preview_shows_every_cone_in_its_colour():
    track = generate('skidpad')
    image = render_preview(track, size=900)
    blue = np.all(image == CONE_COLOURS[LABEL_CONE_BLUE], axis=2)
    yellow = np.all(image == CONE_COLOURS[LABEL_CONE_YELLOW], axis=2)
    # Each cone is a disc of a few pixels: one blob per cone of each colour.
    assert blobs(blue)[1] == int(np.sum(track.cones.labels == LABEL_CONE_BLUE))
    assert blobs(yellow)[1] == int(np.sum(track.cones.labels == LABEL_CONE_YELLOW))


def test_bad_cones_file_names_the_line(tmp_path):
    assert cli_main(['fs', 'acceleration', str(tmp_path / 'a')]) == 0
    csv = tmp_path / 'a' / 'cones.csv'
    csv.write_text(csv.read_text() + '1.0,2.0,purple\n')
    with pytest.raises(TrackError, match=r"cones.csv:\d+: unknown cone class 'purple'"):
        load_track(tmp_path / 'a')


def test_a_skidpad_without_its_timing_line_or_with_an_unknown_mission_names_file_and_key(
        tmp_path):
    assert cli_main(['fs', 'skidpad', str(tmp_path / 's')]) == 0
    mission = tmp_path / 's' / 'mission.yaml'
    text = mission.read_text()
    mission.write_text(''.join(line + '\n' for line in text.splitlines()
                               if not line.startswith('start_line')))
    with pytest.raises(TrackError, match=r"mission\.yaml.*start_line") as missing:
        load_track(tmp_path / 's')
    assert str(mission) in str(missing.value)
    mission.write_text(text.replace('kind: skidpad', 'kind: endurance'))
    with pytest.raises(TrackError, match=r"mission\.yaml.*kind.*skidpad") as unknown:
        load_track(tmp_path / 's')
    assert 'endurance' in str(unknown.value)
