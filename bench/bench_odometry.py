"""LiDAR odometry drift on arsim's 3D clouds, with and without scenery around the track.

A car laps in process (``arsim_core.engine.Engine``, no ROS) with a spinning 3D LiDAR of 32
channels x 1024 columns (vertical field of view 0.6 rad, Gaussian range noise 1.5 cm),
driven by the built-in pure pursuit along the centerline. KISS-ICP (PyPI ``kiss-icp``), a
standard scan-matching LiDAR odometry, gets every cloud: the points in the sensor frame, built
from the beam directions, and each point's time in its revolution for KISS-ICP's motion
compensation (deskewing). KISS-ICP deskews a cloud to its last point, so its pose is compared
with the ground-truth pose of the LiDAR (the car's pose with the sensor's mount) at the frame
that delivers the cloud, the end of the revolution. Figures per row, in percent:

- ``odometry_drift_pct_<row>``: the KITTI odometry benchmark's translational error, the
  position error accumulated over a stretch of path divided by its length, averaged over
  every stretch of ``SEGMENTS_M`` metres (the row's scale) that starts at a cloud;
- ``odometry_end_drift_pct_<row>``: the position error at the last cloud divided by the
  path length (on a closed lap an estimate that never moved scores well here: read it with
  the first).

Rows (``<track>_<scene>``):

- ``f1tenth_spielberg_none`` and ``f1tenth_spielberg_hall``: F1TENTH's Spielberg map (from the
  shared F1TENTH racetracks) with no scenery, where the only structure is the 0.3 m barriers
  on a flat floor (degenerate for scan matching), and inside the generated hall; the F1TENTH
  car (``config/cars/f1tenth.yaml``) at up to ``F1TENTH_SPEED``, LiDAR at 0.3 m spinning at
  ``F1TENTH_LIDAR_HZ`` (at 10 Hz the yaw rate of a 1:10 car through a chicane changes too
  much between two revolutions for KISS-ICP's constant-velocity motion model:
  docs/scenes.md), range 50 m, KISS-ICP voxels of 0.15 m, one lap;
- ``f1tenth_monza_hall``, ``f1tenth_silverstone_hall`` and ``arsim_ring_hall``: the same on
  F1TENTH's Monza and Silverstone maps and on arsim's own ``arsim_ring``, each in its hall;
- ``f1tenth_spielberg_hall_scan2d``: the hall lap's 2D scans (the profile's own 1080-beam
  LiDAR at 40 Hz, taken at one instant, so not deskewed) matched with KISS-ICP's 5 cm voxels;
- ``tum_spielberg_circuit``: the TUM database's full-scale Spielberg in the generated circuit
  scenery; the full-scale car (``config/cars/full_scale.yaml``) at up to ``FULL_SCALE_SPEED``
  from a standing start, LiDAR on the roof at 1.5 m spinning at 10 Hz, range 100 m,
  KISS-ICP's default voxels (1 m, a hundredth of the range), one lap;
- ``fs_trackdrive_circuit``: arsim's Formula Student trackdrive layout in the circuit
  scenery; the Formula Student car (``config/cars/formula_student.yaml``) at up to
  ``FS_SPEED`` with the profile's own LiDAR (on the front wing, the front half, range
  100 m), KISS-ICP's default voxels, one lap.
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from benchkit import Row, main, sized, skip_reason, take_smoke_flag

from arsim_core.beams import (
    column_offsets_ns,
    planar_directions,
    scan_period_ns,
    spinning_directions,
)
from arsim_core.config.scenario import SceneSettings, load_scenario
from arsim_core.config.sensors import Lidar2DSpec, Lidar3DSpec
from arsim_core.engine import CarState, Engine, TrackWorld
from arsim_core.geometry import rotation_matrix
from arsim_core.policies import PurePursuit
from arsim_core.track import load_track

REPO = Path(__file__).resolve().parents[1]
SHARED_TRACKS = REPO.parent / 'shared' / 'tracks'
CAR = 'ego'
LIDAR = 'lidar'
NOISE_STD = 0.015  # [m] range noise of the 3D LiDAR
F1TENTH_SIM_S = 120.0  # at most this much sim time for an F1TENTH lap
FULL_SCALE_SIM_S = 400.0  # at most this much sim time for a full-scale lap
FULL_SCALE_SPEED = 25.0  # [m/s] top speed of the pure pursuit on the full-scale circuit
F1TENTH_SPEED = 5.0  # [m/s] top speed of the pure pursuit on the F1TENTH maps
F1TENTH_LIDAR_HZ = 20.0  # a 1:10 car turns several times faster than a full-scale one
FS_SPEED = 15.0  # [m/s] top speed of the pure pursuit on the Formula Student layout
FS_SIM_S = 60.0  # at most this much sim time for a Formula Student lap
F1TENTH_SEGMENTS_M = (10.0, 20.0, 30.0, 40.0, 50.0)  # KITTI's 100..800 m, at 1:10 scale
FULL_SCALE_SEGMENTS_M = (100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0)  # KITTI's
FS_SEGMENTS_M = (20.0, 40.0, 60.0, 80.0, 100.0)  # up to half a trackdrive lap


@dataclass(frozen=True)
class Setup:
    """One measurement: a track, its scenery, the car and its LiDAR, KISS-ICP's settings."""

    track: str  # a path, or a track in maps/
    scene: str
    profile: str  # a file in config/cars/
    mount_z: float | None  # [m] LiDAR height above base_link; None: the profile's own LiDAR
    range_max: float  # [m] the LiDAR's, and KISS-ICP's max_range
    voxel_size: float  # [m] KISS-ICP's
    max_speed: float  # [m/s] of the pure pursuit
    max_sim_s: float  # sim time limit; a lap ends the run earlier
    segments_m: tuple[float, ...]  # stretch lengths of the drift figure
    deskew: bool = True
    noise_std: float = NOISE_STD
    rate_hz: float = 10.0
    scan2d: bool = False  # match the profile's own 2D scans instead of 3D clouds
    initial_threshold: float = 2.0  # [m] KISS-ICP's
    fixed_threshold: float | None = None  # [m] KISS-ICP's, None: adaptive


F1TENTH_SPIELBERG = str(SHARED_TRACKS / 'f1tenth_racetracks' / 'Spielberg')
F1TENTH_MONZA = str(SHARED_TRACKS / 'f1tenth_racetracks' / 'Monza')
F1TENTH_SILVERSTONE = str(SHARED_TRACKS / 'f1tenth_racetracks' / 'Silverstone')
TUM_SPIELBERG = str(SHARED_TRACKS / 'tum_racetrack_database' / 'Spielberg.csv')
_SMALL = {'profile': 'f1tenth', 'mount_z': 0.3, 'range_max': 50.0, 'voxel_size': 0.15,
          'max_speed': F1TENTH_SPEED, 'max_sim_s': F1TENTH_SIM_S,
          'segments_m': F1TENTH_SEGMENTS_M, 'rate_hz': F1TENTH_LIDAR_HZ}
SETUPS: dict[str, Setup] = {
    'f1tenth_spielberg_none': Setup(F1TENTH_SPIELBERG, 'none', **_SMALL),
    'f1tenth_spielberg_hall': Setup(F1TENTH_SPIELBERG, 'hall', **_SMALL),
    'f1tenth_monza_hall': Setup(F1TENTH_MONZA, 'hall', **_SMALL),
    'f1tenth_silverstone_hall': Setup(F1TENTH_SILVERSTONE, 'hall', **_SMALL),
    'arsim_ring_hall': Setup('arsim_ring', 'hall', **_SMALL),
    'f1tenth_spielberg_hall_scan2d': Setup(F1TENTH_SPIELBERG, 'hall', **{**_SMALL,
                                         'voxel_size': 0.05}, scan2d=True, deskew=False),
    'tum_spielberg_circuit': Setup(TUM_SPIELBERG, 'circuit', 'full_scale', 1.5, 100.0, 1.0,
                                 FULL_SCALE_SPEED, FULL_SCALE_SIM_S, FULL_SCALE_SEGMENTS_M),
    'fs_trackdrive_circuit': Setup('fs_trackdrive', 'circuit', 'formula_student', None, 100.0,
                                 1.0, FS_SPEED, FS_SIM_S, FS_SEGMENTS_M),
}


ROWS = tuple(Row(f'{prefix}_{name}', 'pct',
                 ('kiss_icp', 'tracks') if str(SHARED_TRACKS) in setup.track else ('kiss_icp',))
             for name, setup in SETUPS.items()
             for prefix in ('odometry_drift_pct', 'odometry_end_drift_pct'))
#: A smoke run drives this much sim time per row and measures drift over stretches this long.
SMOKE_SIM_S = 1.5
SMOKE_SEGMENTS_M = (0.5,)


def lidar(row: Setup) -> dict:
    """The 3D LiDAR's section of the car profile."""
    return {'type': 'lidar3d', 'position': [0.0, 0.0, row.mount_z], 'rate_hz': row.rate_hz,
            'channels': 32, 'columns': 1024, 'vertical_fov_rad': 0.6,
            'range_min': 0.3 if row.range_max < 60.0 else 1.0, 'range_max': row.range_max,
            'noise_std': row.noise_std}


def pose_matrix(x: float, y: float, z: float, roll: float, pitch: float,
                yaw: float) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = rotation_matrix(roll, pitch, yaw)
    out[:3, 3] = (x, y, z)
    return out


def lidar_pose(state: CarState, mount: np.ndarray) -> np.ndarray:
    """Ground-truth world pose (4 x 4) of the LiDAR on a car in ``state``."""
    return pose_matrix(*state.render_pose()) @ mount


def kiss_icp(row: Setup, spec: Lidar2DSpec | Lidar3DSpec) -> Any:
    """KISS-ICP set up for ``row``'s LiDAR (imported here: only this benchmark needs it)."""
    from kiss_icp.config import KISSConfig
    from kiss_icp.config.config import AdaptiveThresholdConfig, DataConfig, MappingConfig
    from kiss_icp.kiss_icp import KissICP

    config = KISSConfig(data=DataConfig(max_range=spec.range_max, min_range=spec.range_min,
                                        deskew=row.deskew),
                        mapping=MappingConfig(voxel_size=row.voxel_size),
                        adaptive_threshold=AdaptiveThresholdConfig(
                            initial_threshold=row.initial_threshold,
                            fixed_threshold=row.fixed_threshold))
    return KissICP(config)


def measure(name: str, row: Setup) -> dict[str, float]:
    """Drive ``row``'s lap, run KISS-ICP on its clouds; the drift figures and a few more."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix='arsim-bench-odometry-') as tmp:
        profile = yaml.safe_load((REPO / 'config' / 'cars' / f'{row.profile}.yaml').read_text())
        if row.mount_z is not None:
            profile['Sensors'][LIDAR] = lidar(row)
        path = Path(tmp) / f'{row.profile}_lidar3d.yaml'
        path.write_text(yaml.safe_dump(profile, sort_keys=False))
        scenario = load_scenario(REPO / 'config' / 'sim.yaml', REPO,
                                 {'cars': [{'name': CAR, 'profile': str(path)}]})
    car = scenario.cars[0]
    lidar3d = car.profile.sensor(LIDAR)
    assert isinstance(lidar3d, Lidar3DSpec)
    spec: Lidar3DSpec | Lidar2DSpec = lidar3d
    if row.scan2d:
        spec = next(s for s in car.profile.sensors if isinstance(s, Lidar2DSpec))
    track = load_track(row.track, REPO / 'maps')
    world = TrackWorld.from_track(track, SceneSettings(kind=row.scene, seed=0, density=1.0))
    engine = Engine(scenario)
    engine.load_track(world)
    built = time.perf_counter() - started

    if isinstance(spec, Lidar2DSpec):  # a scan is taken at one instant: nothing to deskew
        directions = planar_directions(spec.angle_min, spec.angle_increment, spec.beams)
        stamps = np.zeros(spec.beams)
        period_ns = 0
    else:
        directions = spinning_directions(spec.horizontal_start_rad, spec.azimuth_increment,
                                         spec.columns, spec.elevations_rad)
        period_ns = scan_period_ns(spec.rate_hz, engine.period_ns)
        # seconds after the revolution's start, column by column: KISS-ICP normalises them
        stamps = np.broadcast_to(column_offsets_ns(period_ns, spec.columns) * 1e-9,
                                 (spec.channels, spec.columns))
    m = spec.mount
    mount = pose_matrix(m.x, m.y, m.z, m.roll, m.pitch, m.yaw)
    odometry = kiss_icp(row, spec)

    params = car.profile.vehicle.params
    pursuit = PurePursuit(track.centerline, wheelbase=params.body.wheelbase,
                          max_steering=params.steering.max_angle, max_speed=row.max_speed,
                          friction=params.tyre.friction)
    frame = engine.reset()
    pursuit.reset(frame.states[CAR].pose)
    truth: list[np.ndarray] = []
    estimate: list[np.ndarray] = []
    points = 0
    icp_s = 0.0
    last_step = round(row.max_sim_s * 1e9 / engine.period_ns)
    assert engine.metrics is not None
    while frame.step < last_step:
        ranges = frame.sensors.get(f'{CAR}/{spec.name}')
        # the first revolution ends one period after the start (an earlier cloud sweeps
        # the future)
        if ranges is not None and frame.time_ns >= period_ns:
            ranges = np.asarray(ranges)
            valid = np.isfinite(ranges)
            cloud = ranges[valid][:, None] * directions[valid]
            started_icp = time.perf_counter()
            odometry.register_frame(cloud, stamps[valid])
            icp_s += time.perf_counter() - started_icp
            points += int(valid.sum())
            estimate.append(np.array(odometry.last_pose))
            truth.append(lidar_pose(frame.states[CAR], mount))
            if engine.metrics.standings()[0].laps >= 1:
                break
        steering, speed = pursuit.act(frame.states[CAR])
        engine.drive(CAR, float(speed), float(steering))
        frame = engine.advance()
    status = engine.metrics.standings()[0]
    engine.close()
    return {**drift(truth, estimate, row.segments_m), 'sim_s': frame.time_ns * 1e-9,
            'laps': status.laps,
            'collisions': status.collisions, 'clouds': len(truth),
            'points_per_cloud': points / max(1, len(truth)), 'icp_s': icp_s,
            'setup_s': built, 'wall_s': time.perf_counter() - started}


def drift(truth: list[np.ndarray], estimate: list[np.ndarray],
          segments_m: tuple[float, ...]) -> dict[str, float]:
    """Compare the estimated LiDAR poses with the true ones, both from the first cloud: the
    KITTI translational error over stretches of ``segments_m`` and the error at the end."""
    origin = np.linalg.inv(truth[0])
    true = np.array([origin @ pose for pose in truth])
    est = np.array(estimate)
    error = np.linalg.norm(est[:, :3, 3] - true[:, :3, 3], axis=1)
    driven = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(true[:, :3, 3], axis=0),
                                                             axis=1))])
    path = float(driven[-1])
    ratios = []
    for first in range(len(true)):
        for length in segments_m:
            last = int(np.searchsorted(driven, driven[first] + length))
            if last >= len(true):
                continue
            # the error of the estimated motion over the stretch, in the stretch's start frame
            moved = np.linalg.inv(est[first]) @ est[last]
            truly = np.linalg.inv(true[first]) @ true[last]
            ratios.append(np.linalg.norm((np.linalg.inv(moved) @ truly)[:3, 3]) / length)
    final = np.linalg.inv(true[-1]) @ est[-1]
    yaw_error = math.degrees(math.atan2(final[1, 0], final[0, 0]))
    return {'drift_pct': 100.0 * float(np.mean(ratios)) if ratios else math.nan,
            'end_drift_pct': 100.0 * float(error[-1]) / path if path > 0 else math.nan,
            'stretches': len(ratios), 'path_m': path, 'final_error_m': float(error[-1]),
            'max_error_m': float(error.max()), 'final_yaw_error_deg': yaw_error,
            'z_error_m': float(est[-1, 2, 3] - true[-1, 2, 3])}


def run(names: list[str] | None = None, **changes: Any) -> list[tuple[str, float, str]]:
    """The rows ``names`` (default all); ``changes`` replace fields of every row (say
    ``deskew=False``), for looking into a figure."""
    if skip_reason('bench_odometry', 'kiss_icp'):
        return []
    figures = []
    for name in names or list(SETUPS):
        row = replace(SETUPS[name], **changes)
        if row.track.startswith(str(SHARED_TRACKS)) and skip_reason(f'odometry {name}', 'tracks'):
            continue
        row = sized(row, replace(row, max_sim_s=SMOKE_SIM_S, segments_m=SMOKE_SEGMENTS_M))
        result = measure(name, row)
        summary = ', '.join(f'{key} {value:.4g}' for key, value in result.items())
        print(f'[bench] odometry {name}: {summary}', file=sys.stderr, flush=True)
        figures += [(f'odometry_drift_pct_{name}', result['drift_pct'], 'pct'),
                    (f'odometry_end_drift_pct_{name}', result['end_drift_pct'], 'pct')]
    return figures


if __name__ == '__main__':
    chosen = take_smoke_flag() or list(SETUPS)
    sys.exit(main(lambda: run(chosen), [row for row in ROWS
                                        if row.name.split('_pct_', 1)[1] in chosen]))
