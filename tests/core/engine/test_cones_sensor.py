"""The cones sensor in the engine: EUFS sim's ground-truth cones (the track's placed cones
within range, where they stand or lie) in the car's base_link, from the engine's own state of
the frame, so the dataset runner and in-process users get what the ROS face publishes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from arsim_core.engine import Engine, TrackWorld
from arsim_core.geometry import relative_pose
from arsim_core.sensors.computed import LAYOUTS
from arsim_core.track.fs import generate

COLUMNS = LAYOUTS['cones']
RANGE_M = 20.0


def cones_profile(repo_root: Path, folder: Path) -> str:
    """The Formula Student profile with its cones sensor only (nothing to render)."""
    profile = yaml.safe_load((repo_root / 'config' / 'cars' / 'formula_student.yaml')
                             .read_text())
    profile['Sensors'] = {'cones': {'type': 'cones', 'rate_hz': 10.0, 'range_m': RANGE_M}}
    path = folder / 'fs_cones.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    return str(path)


def expected_rows(engine: Engine, pose: tuple[float, float, float]) -> dict[int, list[float]]:
    """Each placed cone within range, by its number: x, y, yaw, down, label in base_link."""
    assert engine.cones is not None
    found = {}
    for index, ((x, y), label) in enumerate(zip(engine.cones.positions,
                                                engine.cones.cones.labels, strict=True)):
        lying = bool(np.isfinite(engine.cones.lying[index, 0]))
        yaw = engine.cones.lying[index, 2] if lying else 0.0
        local = relative_pose(pose, (float(x), float(y), float(yaw)))
        if np.hypot(x - pose[0], y - pose[1]) <= RANGE_M:
            found[index] = [local[0], local[1], local[2] if lying else 0.0, float(lying),
                            float(label)]
    return found


def in_order(rows: np.ndarray) -> np.ndarray:
    """``rows`` sorted by position, to compare sets of cones."""
    return rows[np.lexsort((np.round(rows[:, 1], 6), np.round(rows[:, 0], 6)))]


def test_the_cones_around_the_car_are_in_its_frame_as_they_stand_or_lie(
        make_scenario, repo_root, tmp_path) -> None:
    scenario = make_scenario(cars=({'name': 'ego', 'profile': cones_profile(repo_root,
                                                                            tmp_path)},))
    engine = Engine(scenario)
    try:
        engine.load_track(TrackWorld.from_track(generate('acceleration')))
        frame = engine.reset()
        assert engine.cones is not None and len(engine.cones) > 10
        ego = frame.states['ego']
        standing = frame.sensors['ego/cones']
        wanted = expected_rows(engine, (ego.x, ego.y, ego.yaw))
        # Knock the cone nearest the car over (as a car driving into it would), then look.
        nearest = int(np.argmin(np.hypot(*(engine.cones.positions - (ego.x, ego.y)).T)))
        engine.cones.positions[nearest] = (ego.x + 2.0, ego.y)
        engine.cones.lying[nearest] = (ego.x + 2.0, ego.y, 0.5)
        engine.cones.version += 1
        frames = 1
        while 'ego/cones' not in (frame := engine.advance()).sensors:  # due at 10 Hz
            frames += 1
        ego = frame.states['ego']
        lying = frame.sensors['ego/cones']
        wanted_lying = expected_rows(engine, (ego.x, ego.y, ego.yaw))
    finally:
        engine.close()
    assert frames == round(scenario.frame_rate_hz / 10.0)
    assert standing.dtype == np.float64 and standing.shape[1] == len(COLUMNS)
    assert 0 < len(standing) < len(engine.cones)  # only those within range
    np.testing.assert_allclose(in_order(standing), in_order(np.array(list(wanted.values()))),
                               atol=1e-9)
    np.testing.assert_allclose(in_order(lying), in_order(np.array(list(wanted_lying.values()))),
                               atol=1e-9)
    down = lying[lying[:, COLUMNS.index('down')] == 1.0]
    assert down.tolist() == [pytest.approx(wanted_lying[nearest])]
    assert engine.computed.frame_meta(['ego/cones'], 0)['ego/cones'].encoding == 'cones'
