"""The scene in the engine's world: every sensor sees it, and it changes nothing a car drives
on or its 2D LiDAR sees."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from arsim_core import labels
from arsim_core.config.scenario import SceneSettings
from arsim_core.engine import Engine, TrackWorld
from arsim_core.track import load_track


def _profile_with_a_3d_lidar(repo_root: Path, tmp_path: Path) -> str:
    data = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    data['Sensors']['lidar'] = {'type': 'lidar3d', 'position': [0.0, 0.0, 0.3], 'rate_hz': 40.0,
                                'channels': 16, 'columns': 512, 'vertical_fov_rad': 0.5,
                                'range_min': 0.2, 'range_max': 60.0, 'labels': True}
    path = tmp_path / 'f1tenth_3d.yaml'
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_the_scene_is_seen_in_3d_and_leaves_the_2d_scan_and_collisions_alone(
        make_scenario, repo_root: Path, tmp_path: Path) -> None:
    track = load_track('arsim_ring', repo_root / 'maps')
    scenario = make_scenario(profile=_profile_with_a_3d_lidar(repo_root, tmp_path))
    frames = {}
    for kind in ('none', 'auto'):
        world = TrackWorld.from_track(track, SceneSettings(kind=kind))
        engine = Engine(scenario)
        engine.load_track(world)
        frames[kind] = engine.reset()
        for _ in range(40):  # a second at 3 m/s: the same drive either way
            engine.drive('ego', 3.0, 0.0)
            frames[kind] = engine.advance()
        frames[kind] = (frames[kind], world)
        engine.close()
    (bare, bare_world), (scene, scene_world) = frames['none'], frames['auto']
    assert len(scene_world.triangles) > len(bare_world.triangles)
    assert set(np.unique(scene_world.labels)) >= {labels.SCENERY_STRUCTURE, labels.SCENERY_OBJECT}
    assert bare.states['ego'] == scene.states['ego']  # nothing in the way of the car
    np.testing.assert_array_equal(bare.sensors['ego/scan'], scene.sensors['ego/scan'])
    seen = scene.sensors['ego/lidar/labels']
    assert np.isin(seen, labels.SCENERY).sum() > 100  # the hall, above the barriers
    assert not np.isin(bare.sensors['ego/lidar/labels'], labels.SCENERY).any()
