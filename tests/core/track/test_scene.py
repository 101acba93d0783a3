"""Procedural scenery around tracks: never on the road or its margin, labelled, deterministic,
visible to a LiDAR above the barriers and invisible to a 2D LiDAR below them."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
import trimesh

from arsim_core import labels
from arsim_core.errors import TrackError
from arsim_core.track import LABEL_BARRIER, load_track, track_mesh
from arsim_core.track.mesh import join_meshes
from arsim_core.track.model import (
    LABEL_SCENERY_OBJECT,
    LABEL_SCENERY_STRUCTURE,
    LABEL_SCENERY_VEGETATION,
    SCENERY_LABELS,
)
from arsim_core.track.scene import build_scene, furniture, outdoor, scene_kind, shapes
from arsim_core.track.scene.instances import assemble

SCENERY = {LABEL_SCENERY_STRUCTURE, LABEL_SCENERY_VEGETATION, LABEL_SCENERY_OBJECT}


@pytest.fixture(scope='module')
def ring(maps_dir):
    return load_track('arsim_ring', maps_dir)


@pytest.fixture(scope='module')
def f1tenth(shared_tracks):
    """An F1TENTH map: walls are outlines of occupied cells."""
    return load_track(shared_tracks / 'f1tenth_racetracks' / 'Spielberg')


@pytest.fixture(scope='module')
def spa(shared_tracks):
    """The largest full-scale circuit of the shared data."""
    return load_track(shared_tracks / 'tum_racetrack_database' / 'Spa.csv')


@pytest.fixture(scope='module')
def tracks(ring, f1tenth, spa):
    return {'ring': ring, 'f1tenth': f1tenth, 'spa': spa}


def _polygon_between(a: np.ndarray, b: np.ndarray) -> shapely.Geometry:
    """The strip between two closed, non-crossing edges: the larger minus the smaller."""
    pa, pb = shapely.Polygon(a).buffer(0), shapely.Polygon(b).buffer(0)
    return pa.difference(pb) if pa.area > pb.area else pb.difference(pa)


def _forbidden(track, margin: float) -> shapely.Geometry:
    """The region scenery must not touch, built independently of the library: the road and
    the walls grown by the margin, or, for an occupancy map, all inside its outermost wall."""
    parts = [_polygon_between(track.left_boundary, track.right_boundary)]
    parts += [shapely.LineString(w) for w in track.walls]
    if track.walls_are_outlines:
        outermost = max((shapely.Polygon(w) for w in track.walls), key=lambda p: p.area)
        assert outermost.contains(shapely.Point(track.centerline[0]))
        parts.append(shapely.Polygon(outermost.exterior))
    # A little less than the margin, for the float32 vertices of the mesh.
    return shapely.union_all(parts).buffer(margin - 0.01)


def _touching(mesh, region: shapely.Geometry, cell: float = 40.0) -> np.ndarray:
    """Indices of the triangles whose outline on the ground touches ``region``. The region is
    cut into cells first so each test only meets the triangles near its piece."""
    tri = np.asarray(mesh.vertices, float)[mesh.triangles][:, :, :2]
    outlines = shapely.linestrings(np.concatenate([tri, tri[:, :1]], axis=1))
    x0, y0, x1, y1 = region.bounds
    gx, gy = np.meshgrid(np.arange(x0, x1, cell), np.arange(y0, y1, cell))
    cells = shapely.box(gx.ravel(), gy.ravel(), gx.ravel() + cell, gy.ravel() + cell)
    pieces = shapely.intersection(cells, region)
    pieces = pieces[~shapely.is_empty(pieces)]
    return np.unique(shapely.STRtree(outlines).query(pieces, predicate='intersects')[1])


@pytest.mark.parametrize(('name', 'margin'), [('ring', 0.5), ('f1tenth', 0.5), ('spa', 3.0)])
@pytest.mark.parametrize('kind', ['auto', 'hall', 'circuit'])
def test_scenery_stays_off_the_road_and_its_margin(tracks, name, margin, kind):
    track = tracks[name]
    if kind == 'hall' and name == 'spa':
        pytest.skip('a hall does not fit a full-scale circuit (tested below)')
    mesh = build_scene(track, kind, seed=3)
    assert len(mesh.triangles) > 100
    forbidden = _forbidden(track, margin)
    hits = _touching(mesh, forbidden)
    assert hits.size == 0, f'{hits.size} triangles on the road or its margin, e.g. {hits[:5]}'
    # ... and no triangle spans the whole forbidden region either.
    lo = np.asarray(mesh.vertices)[mesh.triangles][:, :, :2].min(axis=1)
    hi = np.asarray(mesh.vertices)[mesh.triangles][:, :, :2].max(axis=1)
    fx0, fy0, fx1, fy1 = forbidden.bounds
    assert not np.any((lo[:, 0] <= fx0) & (lo[:, 1] <= fy0) & (hi[:, 0] >= fx1) & (hi[:, 1] >= fy1))


@pytest.mark.parametrize('name', ['ring', 'f1tenth', 'spa'])
def test_labels_are_scenery_only(tracks, name):
    mesh = build_scene(tracks[name])
    found = set(np.unique(mesh.labels).tolist())
    assert found <= SCENERY
    expected = SCENERY if name == 'spa' else {LABEL_SCENERY_STRUCTURE, LABEL_SCENERY_OBJECT}
    assert found == expected


def test_scenery_labels_are_in_the_label_tables():
    assert SCENERY_LABELS == (8, 9, 10)
    assert labels.NAMES[8] == 'scenery_structure'
    assert labels.NAMES[9] == 'scenery_vegetation'
    assert labels.NAMES[10] == 'scenery_object'
    for label in SCENERY_LABELS:
        assert label in labels.REFLECTIVITY
        assert label in labels.COLORS
        assert label not in labels.OBSTACLES
    assert '"10":"scenery_object"' in labels.legend_json()


@pytest.mark.parametrize('name', ['ring', 'f1tenth', 'spa'])
def test_same_seed_same_scene_other_seed_other_scene(tracks, name):
    track = tracks[name]
    a, b, c = build_scene(track, seed=5), build_scene(track, seed=5), build_scene(track, seed=6)
    np.testing.assert_array_equal(a.vertices, b.vertices)
    np.testing.assert_array_equal(a.triangles, b.triangles)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.vertices.shape != c.vertices.shape or not np.array_equal(a.vertices, c.vertices)


@pytest.mark.parametrize('name', ['ring', 'f1tenth', 'spa'])
def test_density_scales_the_number_of_objects(tracks, name):
    track = tracks[name]
    counts = [len(build_scene(track, seed=1, density=d).triangles) for d in (0.0, 0.5, 1.0, 2.0)]
    assert counts[0] < counts[1] < counts[2] < counts[3]


def test_density_zero_leaves_only_the_hall_walls(ring):
    walls = build_scene(ring, 'hall', density=0.0)
    assert len(walls.triangles) > 0
    assert set(np.unique(walls.labels).tolist()) == {LABEL_SCENERY_STRUCTURE}
    # Walls enclose the track's bounds a few metres out, 3 to 4 m tall.
    xmin, ymin, xmax, ymax = ring.bounds()
    v = np.asarray(walls.vertices)
    assert v[:, 0].min() < xmin - 2.5 and v[:, 0].max() > xmax + 2.5
    assert v[:, 1].min() < ymin - 2.5 and v[:, 1].max() > ymax + 2.5
    assert 3.0 <= v[:, 2].max() <= 4.0


def test_circuit_at_density_zero_and_none_are_empty(ring, spa):
    assert len(build_scene(spa, 'circuit', density=0.0).triangles) == 0
    for track in (ring, spa):
        mesh = build_scene(track, 'none')
        assert mesh.triangles.shape == (0, 3) and mesh.labels.shape == (0,)


def test_auto_picks_a_hall_for_f1tenth_scale_and_a_circuit_for_full_scale(ring, f1tenth, spa):
    assert scene_kind(ring) == 'hall'
    assert scene_kind(f1tenth) == 'hall'
    assert scene_kind(spa) == 'circuit'
    for track, kind in ((ring, 'hall'), (spa, 'circuit')):
        auto, chosen = build_scene(track, 'auto', seed=2), build_scene(track, kind, seed=2)
        np.testing.assert_array_equal(auto.vertices, chosen.vertices)
    # Vegetation only grows outdoors.
    assert LABEL_SCENERY_VEGETATION not in build_scene(ring).labels
    assert LABEL_SCENERY_VEGETATION in build_scene(spa).labels


@pytest.mark.parametrize(('kwargs', 'words'), [
    ({'kind': 'forest'}, ['forest', 'hall', 'circuit', 'none', 'auto']),
    ({'density': -0.5}, ['density', '-0.5', '>= 0']),
    ({'density': float('nan')}, ['density', 'nan']),
    ({'density': 1e6}, ['density', '<= 20', '1000000.0']),
    ({'seed': -1}, ['seed', 'integer >= 0', '-1']),
])
def test_bad_inputs_raise_track_error(ring, kwargs, words):
    with pytest.raises(TrackError) as err:
        build_scene(ring, **kwargs)
    for word in words:
        assert word in str(err.value)


def test_a_hall_too_big_for_the_track_says_so(spa):
    with pytest.raises(TrackError, match=r'hall fits tracks up to 400 m.*Spa.*circuit'):
        build_scene(spa, 'hall')


def _cast_around(caster, track, height, points=40, rays=360, seed=0):
    """Horizontal rays in all directions from centerline points at ``height``."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(track.centerline), points, replace=False)
    ang = np.linspace(0, 2 * np.pi, rays, endpoint=False)
    origins = np.repeat(np.column_stack([track.centerline[idx], np.full(points, height)]),
                        rays, axis=0)
    dirs = np.tile(np.column_stack([np.cos(ang), np.sin(ang), np.zeros(rays)]), (points, 1))
    return caster.cast(origins, dirs)


@pytest.mark.parametrize('name', ['ring', 'f1tenth'])
def test_hall_surrounds_a_lidar_above_the_barriers(tracks, ray_caster, name):
    track = tracks[name]
    mesh = join_meshes(track_mesh(track), build_scene(track, 'hall', seed=4))
    caster = ray_caster(mesh.vertices, mesh.triangles)
    dist, prim = _cast_around(caster, track, 1.0)
    assert np.all(prim >= 0), f'{np.count_nonzero(prim < 0)} rays left the hall'
    assert set(np.unique(mesh.labels[prim]).tolist()) <= SCENERY
    # The walls stand a few metres outside the track's bounds, no farther than the hall.
    xmin, ymin, xmax, ymax = track.bounds()
    assert dist.max() < np.hypot(xmax - xmin, ymax - ymin) + 20.0


@pytest.mark.parametrize('name', ['ring', 'f1tenth'])
def test_a_2d_lidar_still_sees_only_the_barriers(tracks, ray_caster, name):
    track = tracks[name]
    mesh = join_meshes(track_mesh(track, road=False, ground=False),
                       build_scene(track, seed=4, density=2.0))
    caster = ray_caster(mesh.vertices, mesh.triangles)
    for height in (0.1, 0.2, 0.29):
        _, prim = _cast_around(caster, track, height, seed=int(height * 100))
        assert np.all(prim >= 0)
        assert np.all(mesh.labels[prim] == LABEL_BARRIER)


def test_circuit_scenery_is_seen_from_the_track(spa, ray_caster):
    mesh = join_meshes(track_mesh(spa, road=False, ground=False), build_scene(spa, seed=1))
    caster = ray_caster(mesh.vertices, mesh.triangles)
    _, prim = _cast_around(caster, spa, 2.0, points=60)
    seen = set(np.unique(mesh.labels[prim[prim >= 0]]).tolist())
    assert seen >= SCENERY, f'only {seen} seen from the track'


def _solids():
    yield 'box', shapes.unit_box(8)
    yield 'cylinder', shapes.cylinder(0.5, 0.0, 2.0, 8)
    yield 'cone', shapes.cone(0.5, 0.0, 2.0, 9)
    yield 'icosphere', shapes.icosphere(1.0, (0.0, 0.0, 2.0), 9)
    yield 'gable', shapes.gable(-1.0, 1.0, -0.5, 0.5, 0.0, 1.0, 8)
    for name in ('shelf', 'cabinet', 'box_stack', 'bin_', 'tyre_stack', 'table', 'chair'):
        yield name, getattr(furniture, name)()
    rng = np.random.default_rng(0)
    for i, (part, _, _) in enumerate(outdoor.grandstand(np.array([[60.0, 12.0, 8.0]]), True,
                                                        rng)):
        yield f'grandstand_{i}', part
    yield 'pit_building', outdoor.pit_building(150.0, 15.0, 10.0, rng)[0][0]


@pytest.mark.parametrize(('name', 'part'), list(_solids()))
def test_solids_are_closed_and_face_outwards(name, part):
    """Closed, outward-wound solids are seen from outside by a ray caster that culls."""
    for piece in trimesh.Trimesh(part.vertices, part.triangles).split(only_watertight=False):
        assert piece.is_watertight, name
        assert piece.is_winding_consistent, name
        assert piece.volume > 0, f'{name} is wound inside out'


def _facade_ranges(parts, length: float, height: float) -> np.ndarray:
    """Ranges of level rays at ``height`` towards an object's front (local -y), one every
    0.25 m along it, cast from 50 m in front."""
    objects = assemble(parts, np.zeros((1, 2)))
    verts, tris, _ = objects.flat()
    mesh = trimesh.Trimesh(verts, tris, process=False)
    x = np.arange(-0.5 * length + 0.5, 0.5 * length - 0.5, 0.25)
    origins = np.column_stack([x, np.full(x.size, -50.0), np.full(x.size, height)])
    dirs = np.tile([0.0, 1.0, 0.0], (x.size, 1))
    hit, ray, _ = mesh.ray.intersects_location(origins, dirs, multiple_hits=False)
    ranges = np.full(x.size, np.inf)
    ranges[ray] = hit[:, 1] + 50.0
    return ranges


@pytest.mark.parametrize(('name', 'length', 'heights'), [
    ('grandstand', 80.0, (2.0, 5.0)), ('pit_building', 200.0, (2.0, 7.0))])
def test_long_faces_change_along_their_length(name, length, heights):
    """A face the same all along its length gives scan matching nothing to tell places on it
    apart, and a full-scale car's first steps from the grid go unseen (docs/scenes.md): the
    grandstands' aisles and the pit garages' pillars and doors break the faces up."""
    rng = np.random.default_rng(3)
    if name == 'grandstand':
        parts = outdoor.grandstand(np.array([[length, 12.0, 8.0]]), True, rng)
    else:
        parts = outdoor.pit_building(length, 15.0, 10.0, rng)
    for height in heights:
        ranges = _facade_ranges(parts, length, height)
        assert np.all(np.isfinite(ranges)), f'{name} has holes at {height} m'
        steps = np.flatnonzero(np.abs(np.diff(ranges)) > 0.4) * 0.25
        gaps = np.diff(np.concatenate([[0.0], steps, [ranges.size * 0.25]]))
        assert gaps.max() < 16.0, f'{name}: {gaps.max():.1f} m of flat face at {height} m'
