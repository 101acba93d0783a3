"""A race as the environment needs it: a scenario whose frame period is the step, whose
observed sensors render every step, on a loaded track."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.config.sensors import (
    GnssSpec,
    ImuSpec,
    Lidar2DSpec,
    Mount,
    SensorSpec,
    WheelOdometrySpec,
)
from arsim_core.engine import TrackWorld
from arsim_core.errors import ConfigError
from arsim_core.track import Track, load_track

EGO = 'ego'


@dataclass(frozen=True)
class RaceSetup:
    scenario: Scenario
    track: Track
    world: TrackWorld
    scan: dict[str, Lidar2DSpec]  # each car's 2D LiDAR, by car
    # the computed sensors observed: observation key -> (sensor name, kind), as every car has
    computed: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)


#: ``observe`` names of the engine's computed sensors, and their kinds
COMPUTED = {'imu': 'imu', 'gnss': 'gnss', 'odometry': 'wheel_odometry',
            'encoders': 'wheel_encoders'}
BASE_LINK = Mount(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def computed_spec(key: str, sensors: Sequence[SensorSpec], rate: float,
                  source: str = 'the car profile') -> SensorSpec:
    """The car's first computed sensor of ``key``'s kind, else a noiseless one at base_link
    (a GNSS anchored at latitude 0, longitude 0): observing a car's IMU needs no profile of
    its own. Wheel encoders have no such default: their resolution and track are the car's."""
    kind = COMPUTED[key]
    for spec in sensors:
        if spec.kind == kind:
            return dataclasses.replace(spec, rate_hz=rate)
    if kind == 'wheel_encoders':
        msg = (f'{source}: Sensors: observing {key!r} needs a wheel_encoders sensor in the car '
               f'profile (its ticks_per_revolution, gear_ratio and track_width)')
        raise ConfigError(msg)
    if kind == 'imu':
        return ImuSpec(name=key, mount=BASE_LINK, rate_hz=rate)
    if kind == 'gnss':
        return GnssSpec(name=key, mount=BASE_LINK, rate_hz=rate, origin=(0.0, 0.0, 0.0))
    return WheelOdometrySpec(name=key, rate_hz=rate)


def resources_dir() -> Path:
    """config/ and maps/: ``ARSIM_RESOURCES`` if set, else the installed arsim_launch share
    (a sourced workspace), else the source checkout this package lies in. Only the second
    needs ROS's ament_index, so the gym runs from a plain checkout without ROS."""
    named = os.environ.get('ARSIM_RESOURCES')
    if named:
        return _resources(Path(named), 'ARSIM_RESOURCES')
    try:
        from ament_index_python.packages import (
            PackageNotFoundError,
            get_package_share_directory,
        )
    except ImportError:
        pass
    else:
        try:
            return Path(get_package_share_directory('arsim_launch'))
        except PackageNotFoundError:
            pass
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / 'config' / 'sim.yaml').is_file():
        return checkout
    msg = ('no arsim resources (config/ and maps/) found: source install/setup.bash, run from '
           'a source checkout, or set ARSIM_RESOURCES to the folder holding them')
    raise ConfigError(msg)


def _resources(folder: Path, where: str) -> Path:
    if not (folder / 'config' / 'sim.yaml').is_file():
        msg = f'{where}: {folder} holds no config/sim.yaml'
        raise ConfigError(msg)
    return folder


def build_race(*, scenario: str | Path | None, track: str | Track | None,
               num_cars: int | None, profile: str | None, timestep: float,
               observe: Sequence[str], scan_all: bool, scan: bool = True,
               gap_opponents: bool = False,
               collisions: Mapping[str, Any] | None = None) -> RaceSetup:
    """Load the scenario (the default one unless ``scenario`` names a file), apply the
    keywords given, and make every observed sensor render every step: the first car's, and
    every car's with ``scan_all``. An observed car's 2D LiDAR renders with ``scan``, and the
    cars after the first with ``gap_opponents`` (follow-the-gap drives them by it). The other
    cars' rendered sensors are dropped, which is most of a step's cost. ``track`` is a name or
    path, or a track already loaded."""
    if not timestep > 0.0:
        msg = f'timestep: expected a positive number of seconds, got {timestep!r}'
        raise ConfigError(msg)
    resources = resources_dir()
    path = Path(scenario) if scenario is not None else resources / 'config' / 'sim.yaml'
    overrides: dict[str, Any] = {}
    if isinstance(track, (str, Path)):
        overrides['track'] = {'name': str(track)}
    if collisions is not None:
        overrides['collisions'] = dict(collisions)
    if num_cars is not None or profile is not None:
        if num_cars is not None and (not isinstance(num_cars, int) or num_cars < 1):
            msg = f'num_cars: expected a whole number >= 1, got {num_cars!r}'
            raise ConfigError(msg)
        base = load_scenario(path, resources)
        count = num_cars if num_cars is not None else len(base.cars)
        profile_ref = profile if profile is not None else base.cars[0].profile.source
        overrides['cars'] = [{'name': EGO if i == 0 else f'opp{i}', 'profile': profile_ref}
                             for i in range(count)]
    loaded = load_scenario(path, resources, overrides)
    rate = 1.0 / timestep
    cars, scans = [], {}
    computed: dict[str, tuple[str, str]] = {}
    rendered_observe = [name for name in observe if name not in COMPUTED]
    for index, car in enumerate(loaded.cars):
        scanned = scan_all or index == 0
        lidars = [s for s in car.profile.sensors if isinstance(s, Lidar2DSpec)]
        lidar = scanned and (scan or (gap_opponents and index > 0))
        if lidar and not lidars:
            msg = (f'{car.profile.source}: Sensors: the car needs a lidar2d sensor for the '
                   f'scan observation')
            raise ConfigError(msg)
        names = {s.name for s in car.profile.sensors if s.rendered}
        unknown = sorted(set(rendered_observe) - names)
        if unknown:
            msg = (f'observe: unknown sensor(s) {unknown} of {car.profile.source}; its rendered '
                   f'sensors are {sorted(names)}, and the computed ones {sorted(COMPUTED)}')
            raise ConfigError(msg)
        wanted = set(rendered_observe) if scanned else set()
        if lidar:
            wanted.add(lidars[0].name)
        sensors = tuple(dataclasses.replace(s, rate_hz=rate) for s in car.profile.sensors
                        if s.name in wanted and s.rendered)
        if scanned:
            extra = [computed_spec(key, car.profile.sensors, rate, car.profile.source)
                     for key in observe if key in COMPUTED]
            sensors += tuple(extra)
            for key, spec in zip([k for k in observe if k in COMPUTED], extra, strict=True):
                computed[key] = (spec.name, spec.kind)
        if lidar:
            scans[car.name] = dataclasses.replace(lidars[0], rate_hz=rate)
        cars.append(dataclasses.replace(
            car, profile=dataclasses.replace(car.profile, sensors=sensors)))
    loaded_track = track if isinstance(track, Track) else \
        load_track(loaded.track.name, resources / 'maps')
    race_scenario = dataclasses.replace(
        loaded, frame_rate_hz=rate, cars=tuple(cars),
        track=dataclasses.replace(loaded.track, name=loaded_track.name))
    return RaceSetup(race_scenario, loaded_track,
                     TrackWorld.from_track(loaded_track, loaded.track.scene), scans, computed)
