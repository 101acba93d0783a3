"""Kerbs: slabs along both road edges through the corners of full-scale circuits, labelled
``kerb`` in every table that lists the classes (Python, the ROS message, the C# host), never on
the straights, F1TENTH maps or Formula Student layouts."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from track_helpers import MAPS

from arsim_core import labels
from arsim_core.track import LABEL_KERB, load_track, track_mesh
from arsim_core.track.mesh import KERB_HEIGHT, KERB_WIDTH, has_kerbs, kerb_mask
from arsim_core.track.meshfile import export_mesh, read_track_mesh
from arsim_core.track.polylines import closed_runs, point_to_polyline_distance

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope='module', params=['Spielberg', 'Monza'])
def circuit(request, shared_tracks):
    return load_track(str(shared_tracks / 'tum_racetrack_database' / f'{request.param}.csv'))


def kerb_vertices(track) -> np.ndarray:
    mesh = track_mesh(track)
    return mesh.vertices[np.unique(mesh.triangles[mesh.labels == LABEL_KERB])]


def test_a_full_scale_circuit_has_kerbs_on_the_road_edges_at_its_corners(circuit) -> None:
    assert has_kerbs(circuit)
    points = kerb_vertices(circuit)
    assert len(points) > 100
    np.testing.assert_allclose(points[:, 2], KERB_HEIGHT)
    # every kerb vertex lies on the road, within a kerb's width of one of its edges
    to_edge = np.minimum(point_to_polyline_distance(points[:, :2], circuit.left_boundary),
                         point_to_polyline_distance(points[:, :2], circuit.right_boundary))
    assert to_edge.max() <= KERB_WIDTH + 0.01  # the inner edge is offset towards the centre
    to_centre = point_to_polyline_distance(points[:, :2], circuit.centerline)
    half_width = np.maximum(circuit.width_left, circuit.width_right).max()
    assert to_centre.max() <= half_width + 1e-6
    # and beside a stretch the mask marks as a corner (or the point just after one)
    mask = kerb_mask(circuit)
    nearest = np.argmin(np.linalg.norm(points[:, None, :2] - circuit.centerline[None], axis=2),
                        axis=1)
    beside = mask[nearest] | np.roll(mask, 1)[nearest] | np.roll(mask, -1)[nearest]
    assert beside.all()


def test_corners_have_kerbs_and_straights_have_none(circuit) -> None:
    mask = kerb_mask(circuit)
    assert 0.05 < mask.mean() < 0.6
    tightest = int(np.argmax(np.abs(circuit.curvature)))
    assert mask[tightest]
    straight = max(closed_runs(~mask), key=len)
    middle = circuit.centerline[straight[len(straight) // 2]]
    points = kerb_vertices(circuit)
    assert np.linalg.norm(points[:, :2] - middle, axis=1).min() > 15.0


@pytest.mark.parametrize('name', ['arsim_ring', 'fs_autocross', 'fs_skidpad'])
def test_small_tracks_and_cone_layouts_have_no_kerbs(name) -> None:
    track = load_track(name, MAPS)
    assert not has_kerbs(track)
    assert not np.any(track_mesh(track).labels == LABEL_KERB)


def test_f1tenth_maps_have_no_kerbs(shared_tracks) -> None:
    track = load_track(str(shared_tracks / 'f1tenth_racetracks' / 'Spielberg'))
    assert not has_kerbs(track)


def test_kerbs_can_be_switched_off_or_on(circuit) -> None:
    assert not np.any(track_mesh(circuit, kerbs=False).labels == LABEL_KERB)
    ring = load_track('arsim_ring', MAPS)
    assert np.any(track_mesh(ring, kerbs=True).labels == LABEL_KERB)


def test_a_mesh_file_keeps_its_kerbs(circuit, tmp_path) -> None:
    mesh = track_mesh(circuit)
    back = read_track_mesh(export_mesh(mesh, tmp_path / 'circuit.obj'))
    assert np.count_nonzero(back.labels == LABEL_KERB) == np.count_nonzero(
        mesh.labels == LABEL_KERB)


def test_kerb_is_a_drivable_class_in_every_table() -> None:
    assert labels.KERB == LABEL_KERB == 11
    assert labels.NAMES[labels.KERB] == 'kerb'
    assert labels.KERB in labels.REFLECTIVITY and labels.KERB in labels.COLORS
    assert labels.KERB not in labels.OBSTACLES
    assert '"11":"kerb"' in labels.legend_json()


def test_the_message_and_the_csharp_host_number_the_classes_as_python_does() -> None:
    """TrackGeometry.msg's LABEL_* constants and Labels.cs's byte constants are written by
    hand: each must name the same id as ``arsim_core.labels``."""
    msg = (REPO / 'src' / 'arsim_msgs' / 'msg' / 'TrackGeometry.msg').read_text()
    constants = {name.lower(): int(value)
                 for name, value in re.findall(r'^uint8 LABEL_(\w+) = (\d+)', msg, re.M)}
    sensor_only = (labels.CAR, labels.CALIBRATION_TARGET, labels.NONE)  # not track triangles
    for label, name in labels.NAMES.items():
        if label not in sensor_only:
            assert constants[name] == label, name
    assert len(constants) == len(labels.NAMES) - len(sensor_only)
    csharp = (REPO / 'unity' / 'Assets' / 'Arsim' / 'Core' / 'Labels.cs').read_text()
    declared = {name: int(value) for name, value in re.findall(r'(\w+) = (\d+)', csharp)}
    for label, name in labels.NAMES.items():
        pascal = ''.join(part.capitalize() for part in name.split('_'))
        assert declared[pascal] == label, name
