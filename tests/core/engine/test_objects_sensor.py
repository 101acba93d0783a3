"""The objects sensor in the engine: 3D ground truth of the track's cones, its placed cones as
they stand or lie and the other cars, in the observing car's base_link, from the engine's own
state of the frame, with no ROS at all."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from arsim_core import labels
from arsim_core.engine import Engine, Frame, TrackWorld
from arsim_core.geometry import relative_pose
from arsim_core.sensors.computed import LAYOUTS
from arsim_core.sensors.objects import track_cones
from arsim_core.track import load_track, track_mesh
from arsim_core.track.fs import generate
from arsim_core.track.mesh import PLACED_CONE_SIZES

RANGE_M = 30.0
COLUMNS = LAYOUTS['objects']


def objects_profile(repo_root: Path, folder: Path, base: str = 'f1tenth',
                    rate_hz: float = 20.0) -> str:
    """``base``'s car profile with an objects sensor and no rendered sensor but its scan."""
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / f'{base}.yaml').read_text())
    profile['Sensors'] = {name: spec for name, spec in profile['Sensors'].items()
                          if spec['type'] == 'lidar2d'}
    profile['Sensors']['boxes'] = {'type': 'objects', 'rate_hz': rate_hz, 'range_m': RANGE_M}
    path = folder / f'{base}_objects.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    return str(path)


@pytest.fixture(scope='module')
def coned_ring(repo_root: Path) -> TrackWorld:
    """arsim_ring with cones along its edges in its fixed mesh (as a converted mesh track)."""
    track = load_track('arsim_ring', repo_root / 'maps')
    mesh = track_mesh(track, cones=True)
    return dataclasses.replace(TrackWorld.from_track(track), vertices=mesh.vertices,
                               triangles=mesh.triangles, labels=mesh.labels)


def drive(engine: Engine, frames: int) -> list[Frame]:
    out = [engine.reset()]
    for k in range(frames):
        for i, name in enumerate(engine.names):
            engine.drive(name, 2.0 + i, 0.2 * math.sin(0.1 * k + i))
        out.append(engine.advance())
    return out


def rows_by_key(rows: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    label, ident = COLUMNS.index('label'), COLUMNS.index('id')
    found = {(int(row[label]), int(row[ident])): row for row in rows}
    assert len(found) == len(rows)  # no box twice
    return found


def test_the_other_cars_box_is_at_its_pose_of_the_frame_with_the_tracks_cones(
        make_scenario, repo_root, tmp_path, coned_ring) -> None:
    profile = objects_profile(repo_root, tmp_path)
    scenario = make_scenario(cars=({'name': 'ego', 'profile': profile}, 'opp'))
    engine = Engine(scenario)
    try:
        engine.load_track(coned_ring)
        frames = drive(engine, 12)
    finally:
        engine.close()
    cones = track_cones(coned_ring.vertices, coned_ring.triangles, coned_ring.labels)
    assert len(cones) > 20
    opp = scenario.car('opp').profile.footprint
    seen_cones = 0
    for frame in frames:
        assert 'opp/boxes' not in frame.sensors  # opp has no objects sensor
        assert ('ego/boxes' in frame.sensors) == (frame.step % 2 == 0), frame.step  # 20 of 40 Hz
        if frame.step % 2:
            continue
        rows = frame.sensors['ego/boxes']
        assert rows.dtype == np.float64 and rows.shape[1:] == (len(COLUMNS),)
        found = rows_by_key(rows)
        ego, other = frame.states['ego'], frame.states['opp']
        pose = (ego.x, ego.y, ego.yaw)
        # The other car (id: its index in the scenario) where it is in this very frame.
        x, y, yaw = relative_pose(pose, (other.x, other.y, other.yaw))
        assert found[labels.CAR, 1] == pytest.approx(
            [x, y, opp.height / 2.0, yaw, opp.length, opp.width, opp.height, labels.CAR, 1.0])
        assert (labels.CAR, 0) not in found  # a car does not see itself
        # Every cone of the track within range, in ego's base_link, and nothing else.
        expected = {}
        for index, cone in enumerate(cones):
            cx, cy, cyaw = relative_pose(pose, (cone.x, cone.y, cone.yaw))
            if math.hypot(cx, cy) <= RANGE_M:
                expected[cone.label, index] = [cx, cy, cone.z, cyaw, cone.length, cone.width,
                                               cone.height, cone.label, index]
        assert set(found) - {(labels.CAR, 1)} == set(expected)
        for key, values in expected.items():
            assert found[key] == pytest.approx(values, abs=1e-9)
        seen_cones += len(expected)
    assert seen_cones > 0
    assert engine.computed.frame_meta(['ego/boxes'], 0)['ego/boxes'].encoding == 'objects'


def test_placed_cones_are_boxes_as_they_stand_or_lie(make_scenario, repo_root,
                                                      tmp_path) -> None:
    profile = objects_profile(repo_root, tmp_path, 'formula_student', rate_hz=10.0)
    scenario = make_scenario(cars=({'name': 'ego', 'profile': profile},))
    engine = Engine(scenario)
    try:
        engine.load_track(TrackWorld.from_track(generate('acceleration')))
        frame = engine.reset()
        assert engine.cones is not None and len(engine.cones) > 10
        standing = rows_by_key(frame.sensors['ego/boxes'])
        # Knock the cone nearest the car over (as a car driving into it would), then look.
        ego = frame.states['ego']
        nearest = int(np.argmin(np.hypot(*(engine.cones.positions - (ego.x, ego.y)).T)))
        engine.cones.positions[nearest] = (ego.x + 2.0, ego.y)
        engine.cones.lying[nearest] = (ego.x + 2.0, ego.y, 0.5)
        engine.cones.version += 1
        while (frame := engine.advance()).step % 4:
            pass
        lying = rows_by_key(frame.sensors['ego/boxes'])
    finally:
        engine.close()
    label = int(engine.cones.cones.labels[nearest])
    radius, height = PLACED_CONE_SIZES[label]
    pose = (frame.states['ego'].x, frame.states['ego'].y, frame.states['ego'].yaw)
    assert (label, nearest) in standing
    assert standing[label, nearest][2:7] == pytest.approx(
        [height / 2.0, 0.0, 2 * radius, 2 * radius, height])
    x, y, yaw = relative_pose(pose, (ego.x + 2.0, ego.y, 0.5))
    assert lying[label, nearest][:7] == pytest.approx([x, y, radius, yaw, height, 2 * radius,
                                                       2 * radius])
