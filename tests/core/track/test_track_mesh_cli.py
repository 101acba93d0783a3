"""Mesh options, mesh-file tracks and the arsim-track command line."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from arsim_core.errors import TrackError
from arsim_core.track import (
    BARRIER_PROFILES,
    LABEL_BARRIER,
    LABEL_CONE_BLUE,
    LABEL_CONE_YELLOW,
    LABEL_GROUND,
    LABEL_ROAD,
    load_track,
    polylines,
    track_mesh,
)
from arsim_core.track.cli import main as cli_main
from arsim_core.track.meshfile import export_mesh


@pytest.fixture(scope='module')
def ring(maps_dir):
    return load_track('arsim_ring', maps_dir)


@pytest.mark.parametrize('profile', sorted(BARRIER_PROFILES))
def test_barrier_profiles_have_the_asked_height(ring, profile):
    mesh = track_mesh(ring, height=0.5, profile=profile, road=False, ground=False)
    assert set(np.unique(mesh.labels)) == {LABEL_BARRIER}
    z = mesh.vertices[:, 2]
    assert z.min() == pytest.approx(0.0) and z.max() == pytest.approx(0.5, rel=1e-6)


def test_beam_is_as_thick_as_asked(ring, ray_caster):
    mesh = track_mesh(ring, profile='beam', thickness=0.2, road=False, ground=False)
    caster = ray_caster(mesh.vertices, mesh.triangles)
    # From the centerline towards the left wall: the first hit is the beam's near face,
    # 0.1 m before the wall line.
    i = 300
    n = polylines.left_normals(ring.centerline)[i]
    origin = np.append(ring.centerline[i], 0.1)
    dist, _ = caster.cast(origin[None], np.append(n, 0.0)[None])
    assert dist[0] == pytest.approx(ring.width_left[i] - 0.1, abs=0.01)


def test_cones_blue_left_yellow_right(ring):
    mesh = track_mesh(ring, cones=True, cone_spacing=2.0, cone_radius=0.05, cone_height=0.1)
    labels = set(np.unique(mesh.labels))
    assert labels == {LABEL_ROAD, LABEL_BARRIER, LABEL_GROUND, LABEL_CONE_BLUE, LABEL_CONE_YELLOW}
    normals = polylines.left_normals(ring.centerline)
    edges = {LABEL_CONE_BLUE: ring.left_boundary, LABEL_CONE_YELLOW: ring.right_boundary}
    for label, side in ((LABEL_CONE_BLUE, 1.0), (LABEL_CONE_YELLOW, -1.0)):
        apex_idx = mesh.triangles[mesh.labels == label][:, 2]
        apex = mesh.vertices[np.unique(apex_idx)]
        apex = apex[np.isclose(apex[:, 2], 0.1)]
        assert len(apex) == pytest.approx(polylines.closed_length(edges[label]) / 2.0, abs=1)
        near = np.argmin(
            np.hypot(*(apex[:, None, :2] - ring.centerline[None]).transpose(2, 0, 1)), axis=1
        )
        offset = np.einsum('ij,ij->i', apex[:, :2] - ring.centerline[near], normals[near])
        assert np.all(side * offset > 0.8)


def test_road_faces_up_and_ground_below(ring):
    mesh = track_mesh(ring)
    road = mesh.triangles[mesh.labels == LABEL_ROAD]
    p = mesh.vertices[road].astype(float)
    nz = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])[:, 2]
    assert np.all(nz > 0)
    ground = mesh.vertices[mesh.triangles[mesh.labels == LABEL_GROUND].ravel()]
    assert ground[:, 2].max() < 0.0


def test_unknown_profile_is_refused(ring):
    with pytest.raises(TrackError, match='unknown barrier profile'):
        track_mesh(ring, profile='hay')


@pytest.mark.parametrize('suffix', ['.obj', '.glb', '.stl'])
def test_mesh_file_round_trip(ring, tmp_path, suffix):
    mesh = track_mesh(ring, profile='beam', ground=False)
    path = export_mesh(mesh, tmp_path / f'ring{suffix}')
    track = load_track(path)
    # The file's mesh is used as is (z up, labels kept where the format has objects).
    np.testing.assert_allclose(
        np.sort(track.mesh.vertices[:, 2])[[0, -1]], [0.0, ring.barrier_height], atol=1e-6
    )
    assert track_mesh(track) is track.mesh
    if suffix != '.stl':
        assert set(np.unique(track.mesh.labels)) == {LABEL_ROAD, LABEL_BARRIER}
    # Walls come from the section at LiDAR height; the extracted centerline follows ours.
    dist = polylines.point_to_polyline_distance(track.centerline, ring.centerline)
    assert dist.mean() < 0.05
    width = track.width_left + track.width_right
    assert np.median(width) == pytest.approx(
        np.median(ring.width_left + ring.width_right) - 0.15, abs=0.1
    )


def test_mesh_track_folder_with_given_centerline(ring, tmp_path, maps_dir):
    export_mesh(track_mesh(ring), tmp_path / 'ring.glb')
    (tmp_path / 'centerline.csv').write_text(
        (maps_dir / 'arsim_ring' / 'centerline.csv').read_text()
    )
    (tmp_path / 'track.yaml').write_text(
        yaml.safe_dump(
            {
                'name': 'meshy',
                'format': 'mesh',
                'file': 'ring.glb',
                'centerline': 'centerline.csv',
                'start': {'index': 20},
            }
        )
    )
    track = load_track(tmp_path)
    assert track.name == 'meshy'
    np.testing.assert_allclose(track.centerline, ring.centerline)
    assert track.start_pose == pytest.approx(ring.start_pose)


def test_cli_convert_centerline_preview(tmp_path, shared_tracks):
    import cv2

    out = tmp_path / 'ring_map.yaml'
    assert cli_main(['convert', 'arsim_ring', str(out), '--resolution', '0.05']) == 0
    meta = yaml.safe_load(out.read_text())
    assert meta['resolution'] == 0.05 and (tmp_path / meta['image']).is_file()
    # The written map loads as a ROS map, and its extracted centerline matches ours.
    assert cli_main(['centerline', str(out), str(tmp_path / 'c.csv')]) == 0
    ring = load_track('arsim_ring')
    got = load_track(tmp_path / 'c.csv')
    assert polylines.point_to_polyline_distance(got.centerline, ring.centerline).mean() < 0.1
    assert abs(got.length - ring.length) < 0.02 * ring.length
    # Preview of a map track and of a full-scale CSV.
    for spec, name in (
        (str(shared_tracks / 'f1tenth_racetracks' / 'Spielberg'), 'a.png'),
        (str(shared_tracks / 'tum_racetrack_database' / 'Spa.csv'), 'b.png'),
    ):
        assert cli_main(['preview', spec, str(tmp_path / name), '--size', '600']) == 0
        img = cv2.imread(str(tmp_path / name))
        assert img is not None and max(img.shape[:2]) >= 600
    # Track folder and mesh outputs.
    assert cli_main(['convert', 'arsim_ring', str(tmp_path / 'copy')]) == 0
    assert load_track(tmp_path / 'copy').length == pytest.approx(ring.length)
    assert cli_main(['convert', 'arsim_ring', str(tmp_path / 'r.obj'), '--cones']) == 0
    assert cli_main(['info', 'arsim_ring']) == 0


def test_cli_reports_errors_in_one_line(tmp_path, capsys):
    bad = tmp_path / 'bad.csv'
    bad.write_text('# x\n1,2\n')
    assert cli_main(['info', str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count('\n') == 0 and f'{bad}:2:' in err
    assert cli_main(['convert', 'arsim_ring', str(tmp_path / 'x.dwg')]) == 1
