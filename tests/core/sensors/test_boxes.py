"""The analytic boxes of other cars (``BoxLayer``) answer as the triangle meshes of the same
boxes do (``World.boxes``, through Embree or the NumPy ray caster), so the sensors see the same
cars whichever the backend casts against."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenes import CASTERS

from arsim_core._jit import NUMBA_ENABLED, python_function
from arsim_core.backend.boxes import BoxLayer, box_frames, cast_boxes
from arsim_core.backend.hits import box_mesh
from arsim_core.backend.scene import Layer
from arsim_core.geometry import Footprint, rotation_matrix
from arsim_core.labels import CAR, NONE

Boxes = list[tuple[Footprint, tuple[float, ...]]]

# Rays passing within this distance [m] of a box's edge, or starting this close to a face, may
# hit or miss in float32 (the mesh's vertices and Embree's arithmetic); they are not compared.
MARGIN = 1e-5




def _mesh_hits(boxes: Boxes, factory, origins: np.ndarray, directions: np.ndarray,
               max_distance: float):
    """What today's mesh layer of ``boxes`` reports."""
    meshes = [box_mesh(footprint, pose) for footprint, pose in boxes]
    vertices = np.concatenate([v for v, _ in meshes])
    triangles = np.concatenate([t + 8 * i for i, (_, t) in enumerate(meshes)])
    layer = Layer(vertices, triangles, np.full(len(triangles), CAR, np.uint8), factory)
    return layer.cast(origins, directions, max_distance)


def _random_boxes(rng: np.random.Generator, tilted: bool, count: int = 7) -> Boxes:
    """Boxes from F1TENTH to full-scale size, some overlapping, level or rolled and pitched."""
    boxes: Boxes = []
    for _ in range(count):
        footprint = Footprint(float(rng.uniform(0.3, 5.0)), float(rng.uniform(0.2, 2.0)),
                              float(rng.uniform(0.1, 1.5)))
        roll, pitch = rng.uniform(-0.6, 0.6, 2) if tilted else (0.0, 0.0)
        pose = (float(rng.uniform(-6, 6)), float(rng.uniform(-6, 6)),
                float(rng.uniform(-0.5, 0.5)), float(roll), float(pitch),
                float(rng.uniform(-math.pi, math.pi)))
        boxes.append((footprint, pose))
    return boxes


def _geometry(boxes: Boxes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centres (k, 3), axes (k, 3, 3; row a is the box's axis a in the world) and half extents
    (k, 3) of ``boxes``, from ``box_mesh``'s definition: length along the car's x, width along
    y, from the pose's z up by the height, rotated by ``rotation_matrix``."""
    centres, axes, halves = [], [], []
    for footprint, pose in boxes:
        rotation = rotation_matrix(*pose[3:])
        centres.append(np.asarray(pose[:3]) + rotation @ [0.0, 0.0, footprint.height / 2])
        axes.append(rotation.T)
        halves.append([footprint.length / 2, footprint.width / 2, footprint.height / 2])
    return np.array(centres), np.array(axes), np.array(halves)


def _first_faces(boxes: Boxes, origins: np.ndarray, directions: np.ndarray,
                 grow: float) -> tuple[np.ndarray, np.ndarray]:
    """Per ray (origins already one per ray): the face (6 * box + 2 * axis + side, -1 on a
    miss) of the first surface crossed at t > 0 when every box is grown by ``grow`` on every
    side, and the gap from that crossing to the next box's first one (inf for none)."""
    centres, axes, halves = _geometry(boxes)
    halves = halves + grow
    o = origins.astype(np.float64)[:, None, :] - centres[None]
    d = directions.astype(np.float64)
    start = np.einsum('nkc,kac->nka', o, axes)
    slope = np.einsum('nc,kac->nka', d, axes)
    with np.errstate(divide='ignore', invalid='ignore'):
        low, high = (-halves - start) / slope, (halves - start) / slope
    between = np.abs(start) <= halves
    near = np.where(slope == 0, np.where(between, -np.inf, np.inf), np.minimum(low, high))
    far = np.where(slope == 0, np.where(between, np.inf, -np.inf), np.maximum(low, high))
    tmin, tmax = near.max(axis=2), far.min(axis=2)
    enter, leave = near.argmax(axis=2), far.argmin(axis=2)
    outside = (tmin <= tmax) & (tmin > 0)
    inside = (tmin <= tmax) & (tmin <= 0) & (tmax > 0)
    t = np.where(outside, tmin, np.where(inside, tmax, np.inf))
    axis = np.where(outside, enter, leave)
    axis_slope = np.take_along_axis(slope, axis[..., None], axis=2)[..., 0]
    side = np.where(outside, axis_slope < 0, axis_slope > 0)
    order = np.argsort(t, axis=1)
    rays = np.arange(len(t))
    box = order[:, 0]
    first, second = t[rays, box], t[rays, order[:, 1]] if t.shape[1] > 1 else np.inf
    face = np.where(np.isfinite(first), 6 * box + 2 * axis[rays, box] + side[rays, box], -1)
    with np.errstate(invalid='ignore'):
        gap = np.where(np.isfinite(first), second - first, np.inf)
    return face, gap


def _robust(boxes: Boxes, origins: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Rays whose first face (or miss) stays the same when every box grows or shrinks by
    MARGIN, with no other box within 1e-4 m behind it: rays grazing an edge, starting on a
    face or hitting two boxes at once are left out."""
    grown, gap = _first_faces(boxes, origins, directions, MARGIN)
    shrunk, _ = _first_faces(boxes, origins, directions, -MARGIN)
    return (grown == shrunk) & (gap > 1e-4)


def _random_rays(rng: np.random.Generator, boxes: Boxes, n: int, m: int,
                 dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """``m`` origins (one in ten inside a box when m > 1) cycled over ``n`` unit directions:
    half aimed at a point of a random box, a third of those within 0.2 mm of one of its edges
    and the others in or just beside it, half at random; one in four made level (z exactly
    0, parallel to a level box's top and bottom)."""
    centres, axes, halves = _geometry(boxes)
    origins = np.column_stack([rng.uniform(-9, 9, (m, 2)), rng.uniform(-1.0, 2.0, m)])
    if m > 1:
        chosen = rng.random(m) < 0.1
        which = rng.integers(len(boxes), size=m)
        local = rng.uniform(-0.9, 0.9, (m, 3)) * halves[which]
        inner = centres[which] + np.einsum('na,nac->nc', local, axes[which])
        origins[chosen] = inner[chosen]
    ray_origins = origins[np.arange(n) % m]
    which = rng.integers(len(boxes), size=n)
    local = rng.uniform(-1.2, 1.2, (n, 3)) * halves[which]
    edge = rng.random(n) < 1 / 3
    along = rng.integers(3, size=n)
    corner = rng.choice([-1.0, 1.0], (n, 3)) * halves[which] + rng.uniform(-2e-4, 2e-4, (n, 3))
    corner[np.arange(n), along] = local[np.arange(n), along] / 1.2
    local[edge] = corner[edge]
    aimed = centres[which] + np.einsum('na,nac->nc', local, axes[which]) - ray_origins
    directions = np.where(rng.random((n, 1)) < 0.5, aimed, rng.normal(size=(n, 3)))
    level = (rng.random(n) < 0.25) & (np.hypot(directions[:, 0], directions[:, 1]) > 1e-3)
    directions[level, 2] = 0.0
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return origins.astype(dtype), directions.astype(dtype)


@pytest.mark.parametrize('caster', sorted(CASTERS))
@pytest.mark.parametrize('tilted', [False, True], ids=['level', 'tilted'])
@pytest.mark.parametrize('dtype', [np.float32, np.float64], ids=['float32', 'float64'])
@pytest.mark.parametrize('origins', [1, 500, 2000], ids=['one-origin', 'cycled', 'each-own'])
def test_hits_equal_the_box_meshes(caster: str, tilted: bool, dtype: type,
                                   origins: int) -> None:
    """Random boxes and rays (from outside, from inside a box, level, aimed at edges): where
    a ray is robustly classified, the analytic boxes and the meshes agree on hit or miss, the
    label, the distance (1e-4 relative, 1e-5 m absolute: the float32 vertices) and the
    cosine of incidence (1e-4)."""
    n = 2000
    compared = hits = inside_hits = 0
    for seed in range(4):
        rng = np.random.default_rng(1000 * seed + 7)
        boxes = _random_boxes(rng, tilted)
        starts, directions = _random_rays(rng, boxes, n, origins, dtype)
        got = BoxLayer(boxes).cast(starts, directions, 100.0)
        want = _mesh_hits(boxes, CASTERS[caster], starts, directions, 100.0)
        ray_origins = starts[np.arange(n) % origins]
        robust = _robust(boxes, ray_origins, directions)
        assert robust.mean() > 0.9
        np.testing.assert_array_equal(got.label[robust], want.label[robust])
        np.testing.assert_array_equal(np.isinf(got.distance[robust]),
                                      np.isinf(want.distance[robust]))
        hit = robust & (want.label == CAR)
        np.testing.assert_allclose(got.distance[hit], want.distance[hit], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(got.cosine[hit], want.cosine[hit], atol=1e-4)
        assert np.all(got.cosine[robust & ~hit] == 0.0)
        compared += int(robust.sum())
        hits += int(hit.sum())
        centres, axes, halves = _geometry(boxes)
        local = np.einsum('nkc,kac->nka', ray_origins[:, None, :] - centres[None], axes)
        inside = np.all(np.abs(local) < halves[None], axis=2).any(axis=1)
        inside_hits += int((hit & inside).sum())
    assert compared > 0.9 * 4 * n
    assert hits > 0.3 * 4 * n
    if origins > 1:
        assert inside_hits > 100


def test_matches_analytic_answers() -> None:
    """A 4 x 2 x 1 m box on the origin: rays along its axes (every other direction component
    exactly 0), from outside, from inside (the far face) and beside it, at 30 degrees to a
    face, and along the axes of a rolled, pitched and yawed box."""
    level = BoxLayer([(Footprint(4.0, 2.0, 1.0), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))])
    c30, s30 = math.cos(math.radians(30)), math.sin(math.radians(30))
    origins = np.array([[-5.0, 0.0, 0.5], [-5.0, 1.5, 0.5], [-5.0, 0.0, 1.5], [0.0, 0.0, 3.0],
                        [0.0, 0.0, 0.5], [0.0, 0.0, 0.5], [-3.0, 0.0, 0.5], [5.0, 0.3, 0.2]])
    directions = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0],
                           [0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [c30, s30, 0.0], [1.0, 0.0, 0.0]])
    hits = level.cast(origins, directions, 50.0)
    np.testing.assert_allclose(hits.distance, [3.0, np.inf, np.inf, 2.0, 1.0, 0.5,
                                               1.0 / c30, np.inf], rtol=1e-6)
    np.testing.assert_array_equal(hits.label, [CAR, NONE, NONE, CAR, CAR, CAR, CAR, NONE])
    np.testing.assert_allclose(hits.cosine, [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, c30, 0.0],
                               atol=1e-6)

    pose = (1.0, -2.0, 0.3, 0.2, -0.4, 2.5)
    rotation = rotation_matrix(*pose[3:])
    centre = np.asarray(pose[:3]) + rotation @ [0.0, 0.0, 0.6]
    tilted = BoxLayer([(Footprint(3.0, 1.6, 1.2), pose)])
    halves = [1.5, 0.8, 0.6]
    for axis in range(3):
        for sign in (1.0, -1.0):
            outward = sign * rotation[:, axis]
            hits = tilted.cast((centre + 5.0 * outward)[None], -outward[None], 50.0)
            np.testing.assert_allclose(hits.distance, [5.0 - halves[axis]], rtol=1e-6)
            np.testing.assert_allclose(hits.cosine, [1.0], atol=1e-6)


def test_nearest_box_wins_in_any_order() -> None:
    """Two boxes on one ray: the nearer is reported, whichever comes first in the list."""
    near = (Footprint(1.0, 1.0, 1.0), (4.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    far = (Footprint(1.0, 3.0, 2.0), (9.0, 0.0, 0.0, 0.0, 0.0, 0.3))
    origin, direction = np.array([[0.0, 0.0, 0.5]]), np.array([[1.0, 0.0, 0.0]])
    for boxes in ([near, far], [far, near]):
        hits = BoxLayer(boxes).cast(origin, direction, 50.0)
        np.testing.assert_allclose(hits.distance, [3.5], rtol=1e-6)


def test_max_distance_is_respected() -> None:
    """A face 8 m away is hit within a maximum distance of 8 m or more and missed below it; a
    ray from inside the box reaches its far face only if the maximum distance does."""
    layer = BoxLayer([(Footprint(4.0, 2.0, 1.0), (10.0, 0.0, 0.0, 0.0, 0.0, 0.0))])
    outside = np.array([[0.0, 0.0, 0.5]])
    inside = np.array([[9.0, 0.0, 0.5]])
    ahead = np.array([[1.0, 0.0, 0.0]])
    for max_distance, expected in ((7.99, np.inf), (8.0, 8.0), (8.01, 8.0), (np.inf, 8.0)):
        hits = layer.cast(outside, ahead, max_distance)
        np.testing.assert_array_equal(hits.distance, [expected])
        assert hits.label[0] == (CAR if np.isfinite(expected) else NONE)
    assert layer.cast(inside, ahead, 2.9).label[0] == NONE
    np.testing.assert_allclose(layer.cast(inside, ahead, 3.1).distance, [3.0])
    # Most rays of a scan against a box out of reach: all misses, none beyond the limit.
    angles = np.linspace(-0.2, 0.2, 101)
    fan = np.column_stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)])
    hits = layer.cast(outside, fan, 7.5)
    assert np.all(hits.label == NONE) and np.all(np.isinf(hits.distance))
    hits = layer.cast(outside, fan, 30.0)
    assert np.all(hits.distance[hits.label == CAR] <= 30.0) and np.sum(hits.label == CAR) > 10


def test_origins_cycle_over_the_rays() -> None:
    """Ray i starts at origins[i % m]: 4 origins behind a box, 3 rows of rays each; the
    distance depends on the origin only, as if every ray carried its own copy."""
    layer = BoxLayer([(Footprint(4.0, 2.0, 1.0), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))])
    origins = np.array([[-x, 0.0, 0.5] for x in (5.0, 6.0, 7.0, 8.0)], np.float32)
    directions = np.tile([1.0, 0.0, 0.0], (12, 1)).astype(np.float32)
    directions[8:] = [0.0, 1.0, 0.0]  # the last row passes beside the box
    hits = layer.cast(origins, directions, 50.0)
    np.testing.assert_allclose(hits.distance, [3, 4, 5, 6] * 2 + [np.inf] * 4)
    tiled = layer.cast(np.tile(origins, (3, 1)), directions, 50.0)
    for got, want in zip((hits.distance, hits.label, hits.cosine),
                         (tiled.distance, tiled.label, tiled.cosine), strict=True):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match='cycle'):
        layer.cast(origins[:3], directions[:10], 50.0)


def test_a_layer_without_one_box_hits_as_one_built_without_it() -> None:
    """Every car's sensors share one layer of all the cars, each skipping its own car's box:
    the very hits of a layer of the others alone."""
    rng = np.random.default_rng(5)
    boxes = _random_boxes(rng, tilted=True)
    starts, directions = _random_rays(rng, boxes, 400, 1, np.float32)
    every = BoxLayer(boxes)
    hit_any = False
    for skipped in range(len(boxes)):
        shared = every.without(skipped).cast(starts, directions, 100.0)
        alone = BoxLayer([box for k, box in enumerate(boxes) if k != skipped]).cast(
            starts, directions, 100.0)
        for field in ('distance', 'label', 'cosine'):
            np.testing.assert_array_equal(getattr(shared, field), getattr(alone, field))
        hit_any = hit_any or bool(np.any(alone.label == CAR))
    assert hit_any


def test_no_boxes_miss_everything() -> None:
    rng = np.random.default_rng(3)
    directions = rng.normal(size=(50, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    hits = BoxLayer([]).cast(np.zeros((1, 3)), directions, 100.0)
    assert hits.distance.dtype == np.float32 and hits.label.dtype == np.uint8
    assert hits.cosine.dtype == np.float32
    np.testing.assert_array_equal(hits.distance, np.full(50, np.inf, np.float32))
    np.testing.assert_array_equal(hits.label, np.full(50, NONE, np.uint8))
    np.testing.assert_array_equal(hits.cosine, np.zeros(50, np.float32))


@pytest.mark.skipif(not NUMBA_ENABLED, reason='numba is not installed or disabled')
@pytest.mark.parametrize('origins', [1, 30], ids=['one-origin', 'cycled'])
def test_python_kernels_equal_the_compiled_ones(origins: int) -> None:
    """The plain-Python originals (what runs without numba) give the compiled kernels'
    results: the same frames and the same hits."""
    rng = np.random.default_rng(11)
    boxes = _random_boxes(rng, tilted=True)
    raw = np.array([(f.length, f.width, f.height, *pose) for f, pose in boxes])
    frames = box_frames(raw)
    np.testing.assert_allclose(python_function(box_frames)(raw), frames, rtol=1e-14,
                               atol=1e-14)
    starts, directions = _random_rays(rng, boxes, 300, origins, np.float32)
    results = []
    for kernel in (cast_boxes, python_function(cast_boxes)):
        out = (np.empty(300, np.float32), np.empty(300, np.uint8), np.empty(300, np.float32))
        kernel(frames, -1, starts.reshape(-1), directions.reshape(-1), 100.0, *out)
        results.append(out)
    (distance, label, cosine), (py_distance, py_label, py_cosine) = results
    assert np.sum(label == CAR) > 50
    np.testing.assert_array_equal(py_label, label)
    np.testing.assert_allclose(py_distance, distance, rtol=1e-6)
    np.testing.assert_allclose(py_cosine, cosine, atol=1e-6)
