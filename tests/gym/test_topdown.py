"""The top-down picture of arsim_ring and of hand-made meshes, checked pixel by pixel."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from arsim_core.engine.state import CarState
from arsim_core.engine.world import TrackWorld
from arsim_core.track import (
    LABEL_BARRIER,
    LABEL_CONE_BLUE,
    LABEL_GROUND,
    LABEL_ROAD,
    Track,
    load_track,
)
from arsim_gym.topdown import (
    CAR_COLOR,
    EGO_COLOR,
    GROUND_COLOR,
    LABEL_COLORS,
    SCAN_COLOR,
    TopDownView,
)

FOOTPRINT = (0.58, 0.31)


@pytest.fixture(scope='module')
def ring(repo_root: Path) -> Track:
    return load_track('arsim_ring', repo_root / 'maps')


@pytest.fixture(scope='module')
def world(ring: Track) -> TrackWorld:
    return TrackWorld.from_track(ring)


@pytest.fixture(scope='module')
def view(world: TrackWorld) -> TopDownView:
    return TopDownView(world)


def pixel(view: TopDownView, image: np.ndarray, x: float, y: float) -> tuple[int, int, int]:
    col, row = np.rint(view.to_pixel(np.array([x, y]))).astype(int)
    r, g, b = (int(v) for v in image[row, col])
    return r, g, b


def on_line(ring: Track, i: int, speed: float = 0.0) -> CarState:
    x, y = ring.centerline[i]
    return CarState(float(x), float(y), float(ring.heading[i]), vx=speed)


def test_shape_dtype_and_fresh_frames(world: TrackWorld) -> None:
    view = TopDownView(world, size=(640, 360))
    first = view.draw({}, {})
    assert first.shape == (360, 640, 3)
    assert first.dtype == np.uint8
    first[:] = 0
    assert view.draw({}, {}).any()  # drawing into a frame leaves the next one alone
    assert view.background.shape == (360, 640, 3)
    assert view.world is world


def test_the_whole_track_fits_at_one_scale(world: TrackWorld, ring: Track) -> None:
    view = TopDownView(world, size=(640, 360), margin_m=0.5)
    xmin, ymin, xmax, ymax = ring.bounds()
    corners = view.to_pixel(np.array([[xmin, ymin], [xmax, ymax]]))
    assert np.all(corners >= 0.0)
    assert np.all(corners[:, 0] <= 639.0) and np.all(corners[:, 1] <= 359.0)
    # the limiting axis (y: 16.6 m + 1 m over 360 px) spans the image exactly
    assert abs(corners[0, 1] - corners[1, 1]) == pytest.approx(359.0 - view.scale, abs=1e-6)
    assert view.scale == pytest.approx(359.0 / (ymax - ymin + 1.0), rel=1e-6)
    one_m = view.to_pixel(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    assert np.hypot(*(one_m[1] - one_m[0])) == pytest.approx(np.hypot(*(one_m[2] - one_m[0])))


def test_track_colours(view: TopDownView, world: TrackWorld, ring: Track) -> None:
    image = view.draw({}, {})
    barrier = world.vertices[world.triangles[world.labels == LABEL_BARRIER][::97].ravel()]
    for x, y, _ in barrier:
        assert pixel(view, image, x, y) == LABEL_COLORS[LABEL_BARRIER]
    for x, y in ring.centerline[::25]:
        assert pixel(view, image, x, y) == LABEL_COLORS[LABEL_ROAD]
    assert tuple(image[0, 0]) == GROUND_COLOR
    assert tuple(image[-1, -1]) == GROUND_COLOR
    inside = ring.centerline.mean(axis=0)  # the infield of the ring
    assert pixel(view, image, *inside) == GROUND_COLOR
    assert len({LABEL_COLORS[LABEL_ROAD], LABEL_COLORS[LABEL_BARRIER], GROUND_COLOR,
                EGO_COLOR, CAR_COLOR, SCAN_COLOR}) == 6


def test_cars_in_their_colours_with_the_ego_on_top(view: TopDownView, ring: Track) -> None:
    ego, opp, other = on_line(ring, 100), on_line(ring, 300), on_line(ring, 500)
    image = view.draw({'ego': ego, 'opp1': opp, 'opp2': other},
                      {'ego': FOOTPRINT, 'opp1': FOOTPRINT, 'opp2': FOOTPRINT}, ego='ego')
    assert pixel(view, image, ego.x, ego.y) == EGO_COLOR
    assert pixel(view, image, opp.x, opp.y) == CAR_COLOR
    assert pixel(view, image, other.x, other.y) == CAR_COLOR
    # the footprint is the car's size: 0.25 m behind the pose is still car, 0.4 m is road
    c, s = math.cos(ego.yaw), math.sin(ego.yaw)
    assert pixel(view, image, ego.x - 0.25 * c, ego.y - 0.25 * s) == EGO_COLOR
    assert pixel(view, image, ego.x - 0.4 * c, ego.y - 0.4 * s) == LABEL_COLORS[LABEL_ROAD]
    assert pixel(view, image, ego.x - 0.1 * s, ego.y + 0.1 * c) == EGO_COLOR
    assert pixel(view, image, ego.x - 0.25 * s, ego.y + 0.25 * c) == LABEL_COLORS[LABEL_ROAD]
    # whoever is listed first, the ego is drawn over a car at the same place
    same = view.draw({'ego': opp, 'opp1': opp}, {'ego': FOOTPRINT, 'opp1': FOOTPRINT},
                     ego='ego')
    assert pixel(view, same, opp.x, opp.y) == EGO_COLOR
    # without an ego every car has the same colour
    plain = view.draw({'a': ego}, {'a': FOOTPRINT})
    assert pixel(view, plain, ego.x, ego.y) == CAR_COLOR


def colour_centre(image: np.ndarray, color: tuple[int, int, int]) -> np.ndarray:
    rows, cols = np.nonzero(np.all(image == color, axis=2))
    assert rows.size > 10
    return np.array([cols.mean(), rows.mean()])


def test_world_x_right_and_y_up(view: TopDownView, ring: Track) -> None:
    x, y = ring.centerline[20]
    low = CarState(float(x), float(y), 0.0)
    high = CarState(float(x), float(y) + 2.0, 0.0)
    right = CarState(float(x) + 2.0, float(y), 0.0)
    image = view.draw({'ego': low, 'up': high}, {'ego': FOOTPRINT, 'up': FOOTPRINT}, ego='ego')
    col_low, row_low = colour_centre(image, EGO_COLOR)
    col_high, row_high = colour_centre(image, CAR_COLOR)
    assert row_high < row_low - view.scale  # 2 m further +y: higher up the picture
    assert col_high == pytest.approx(col_low, abs=1.0)
    image = view.draw({'ego': low, 'right': right}, {'ego': FOOTPRINT, 'right': FOOTPRINT},
                      ego='ego')
    col_right, row_right = colour_centre(image, CAR_COLOR)
    assert col_right > col_low + view.scale
    assert row_right == pytest.approx(row_low, abs=1.0)
    # a car heading +x is longer along the columns, one heading +y along the rows
    for yaw, wide in ((0.0, True), (math.pi / 2, False)):
        image = view.draw({'ego': CarState(float(x), float(y), yaw)}, {'ego': FOOTPRINT},
                          ego='ego')
        rows, cols = np.nonzero(np.all(image == EGO_COLOR, axis=2))
        assert (np.ptp(cols) > np.ptp(rows)) == wide


@pytest.mark.parametrize('yaw', [0.0, 0.7, -2.0])
def test_scan_points_land_where_the_ranges_end(view: TopDownView, ring: Track,
                                               yaw: float) -> None:
    x, y = (float(v) for v in ring.centerline[20])
    car = CarState(x, y, yaw)
    mount = (0.27, 0.05, 0.0)
    # beams at -1, -0.5, 0, 0.5, 1 rad; only the one straight ahead has a finite range
    ranges = np.array([np.inf, np.nan, 2.0, -np.inf, np.inf], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # non-finite ranges are skipped, not cast to pixels
        image = view.draw({'ego': car}, {'ego': FOOTPRINT}, scans={'ego': ranges},
                          scan_geometry={'ego': (-1.0, 0.5, mount)}, ego='ego')
    c, s = math.cos(yaw), math.sin(yaw)
    sx, sy = x + c * mount[0] - s * mount[1], y + s * mount[0] + c * mount[1]
    assert pixel(view, image, sx + 2.0 * c, sy + 2.0 * s) == SCAN_COLOR
    assert pixel(view, image, sx + 1.0 * c, sy + 1.0 * s) != SCAN_COLOR
    assert 1 <= np.all(image == SCAN_COLOR, axis=2).sum() <= 4  # one dot, nothing else
    # a sensor mounted facing left puts the same range 2 m to the car's left
    image = view.draw({'ego': car}, {'ego': FOOTPRINT}, scans={'ego': ranges},
                      scan_geometry={'ego': (-1.0, 0.5, (0.0, 0.0, math.pi / 2))}, ego='ego')
    assert pixel(view, image, x - 2.0 * s, y + 2.0 * c) == SCAN_COLOR


def test_a_scan_needs_its_geometry_and_its_car(view: TopDownView, ring: Track) -> None:
    car = on_line(ring, 20)
    with pytest.raises(ValueError, match='scan_geometry'):
        view.draw({'ego': car}, {'ego': FOOTPRINT}, scans={'ego': np.ones(5)})
    with pytest.raises(ValueError, match="'opp'"):
        view.draw({'ego': car}, {'ego': FOOTPRINT}, scans={'opp': np.ones(5)},
                  scan_geometry={'opp': (-1.0, 0.5, (0.0, 0.0, 0.0))})


def test_text_is_written_top_left(view: TopDownView) -> None:
    plain = view.draw({}, {})
    written = view.draw({}, {}, text=['lap 2/3', 't 12.3 s'])
    changed = np.any(written != plain, axis=2)
    rows, cols = np.nonzero(changed)
    assert rows.size > 50
    assert rows.max() < 80 and cols.max() < 200
    assert (255, 255, 255) in {tuple(p) for p in written[changed]}


UP, DOWN, DOWN_ACROSS = 'up', 'down', 'down across'  # the last: the other diagonal


def square_world(*faces: tuple[int, str], z: float = 0.0) -> TrackWorld:
    """A 2 m square at the origin made of the given faces, (label, UP, DOWN or DOWN_ACROSS),
    on a 10 m square of road."""
    square = np.array([[-1.0, -1.0, z], [1.0, -1.0, z], [1.0, 1.0, z], [-1.0, 1.0, z]])
    road = np.array([[-5.0, -5.0, 0.0], [5.0, -5.0, 0.0], [5.0, 5.0, 0.0], [-5.0, 5.0, 0.0]])
    vertices = np.vstack([road, square])
    triangles = [[0, 1, 2], [0, 2, 3]]
    labels = [LABEL_ROAD, LABEL_ROAD]
    pairs = {'up': [[4, 5, 6], [4, 6, 7]], 'down': [[4, 6, 5], [4, 7, 6]],
             'down across': [[4, 7, 5], [5, 7, 6]]}
    for label, facing in faces:
        pair = pairs[facing]
        triangles += pair
        labels += [label, label]
    return TrackWorld('square', np.asarray(vertices, np.float32), np.asarray(triangles, np.uint32),
                      np.asarray(labels, np.uint8), (0.0, 0.0, 0.0))


@pytest.mark.parametrize('faces', [[(LABEL_CONE_BLUE, UP)],
                                   [(LABEL_CONE_BLUE, UP), (LABEL_CONE_BLUE, DOWN)],
                                   [(LABEL_CONE_BLUE, UP), (LABEL_CONE_BLUE, UP)],
                                   [(LABEL_CONE_BLUE, UP), (LABEL_CONE_BLUE, DOWN_ACROSS)]])
def test_overlapping_faces_do_not_cancel(faces: list[tuple[int, str]]) -> None:
    view = TopDownView(square_world(*faces), size=(200, 200), margin_m=0.0)
    image = view.draw({}, {})
    assert pixel(view, image, 0.0, 0.0) == LABEL_COLORS[LABEL_CONE_BLUE]
    assert pixel(view, image, 0.5, -0.7) == LABEL_COLORS[LABEL_CONE_BLUE]
    assert pixel(view, image, 3.0, 3.0) == LABEL_COLORS[LABEL_ROAD]


def test_barriers_are_painted_over_the_road_and_ground_is_background() -> None:
    view = TopDownView(square_world((LABEL_BARRIER, UP), (LABEL_GROUND, UP)),
                       size=(200, 200), margin_m=1.0)
    image = view.draw({}, {})
    assert pixel(view, image, 0.0, 0.0) == LABEL_COLORS[LABEL_BARRIER]
    assert pixel(view, image, 5.5, 5.5) == GROUND_COLOR


def test_bad_sizes_are_refused(world: TrackWorld) -> None:
    with pytest.raises(ValueError, match='size'):
        TopDownView(world, size=(0, 100))
    with pytest.raises(ValueError, match='margin_m'):
        TopDownView(world, margin_m=-1.0)
