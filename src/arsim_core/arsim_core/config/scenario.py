"""Simulation settings: the scenario file that names the track, the cars and the topic map.

``load_scenario`` resolves every reference (profiles, topic map, track) once at start-up, so a
missing or malformed file stops the launch with one clear message instead of a crashing node.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeGuard

from arsim_core.config.calibration import load_calibration_target
from arsim_core.config.clips import ClipSettings, load_clips
from arsim_core.config.conditions import ConditionsRanges, load_conditions
from arsim_core.config.drivers import load_driver
from arsim_core.config.profile import CarProfile, load_profile
from arsim_core.config.race_event import EventSettings, load_race_event
from arsim_core.config.recording import BAG_VERSIONS, STORAGE_NAMES, TopicSelection
from arsim_core.config.stewards import StewardSettings, load_stewards
from arsim_core.config.topic_map import CarNames, TopicMap, load_topic_map
from arsim_core.endpoints import problem as endpoint_problem
from arsim_core.errors import ConfigError
from arsim_core.protocol.appearance import FIXED_DEFAULT as DEFAULT_APPEARANCE
from arsim_core.protocol.appearance import INTEGER_KEYS as APPEARANCE_INTEGERS
from arsim_core.protocol.appearance import KEYS as APPEARANCE_KEYS
from arsim_core.protocol.appearance import LIMITS as APPEARANCE_LIMITS
from arsim_core.protocol.appearance import AppearanceRanges
from arsim_core.protocol.target import CalibrationTarget
from arsim_core.track.scene.build import MAX_DENSITY, SCENE_KINDS
from arsim_core.yaml_fields import Section, describe_number, load_section, merge, parse_yaml

BACKEND_KINDS = ('embedded', 'unity', 'external')
AUTO_ADDRESS = 'auto'  # an endpoint the launcher picks for the run (arsim_launch.sockets)
TCP_BACKEND_ADDRESS = 'tcp://127.0.0.1:5555'  # a backend's request socket, Unity's default
COLLISION_RESPONSES = ('stop', 'bounce', 'ghost')
VIEW_KINDS = ('none', 'foxglove', 'web')
AUTOPILOTS = ('none', 'follow_the_gap')
VIEW_PORTS = {'foxglove': 8765, 'web': 8080}  # the default port of each kind
# The real-time factors a stepping loop keeps, besides 0 (as fast as possible): beyond them a
# factor is a mistake or an attack (1e-6 would hold one frame for hours, and 100 is already as
# fast as the machine allows for any scenario with something to simulate).
MIN_REAL_TIME_FACTOR = 0.01
MAX_REAL_TIME_FACTOR = 100.0
# ROS discovery: peers on this machine only (the default), or on the network as well.
ROS_DISCOVERY = ('localhost', 'network')
MAX_REQUEST_MIB = 128  # default: the largest request a backend takes (a track mesh of millions
                       # of triangles fits); more is refused before it is decoded


@dataclass(frozen=True)
class BackendSettings:
    kind: str
    address: str
    frames_address: str
    executable: str
    timeout_s: float
    startup_timeout_s: float
    allow_remote: bool  # may arsim bind its sockets to other interfaces than loopback?
    max_request_mib: int  # the embedded backend refuses larger requests

    @property
    def binds_address(self) -> bool:
        """Whether arsim binds ``address`` (it starts the embedded backend) or only connects
        to a backend that another program started."""
        return self.kind == 'embedded'


@dataclass(frozen=True)
class ViewSettings:
    """A live view of the simulation (docs/view.md): ``kind`` none, foxglove or web, served on
    ``host``:``port``, loopback unless ``allow_remote``."""

    kind: str
    host: str
    port: int
    allow_remote: bool


@dataclass(frozen=True)
class SceneSettings:
    """The scenery around the track (``arsim_core.track.scene.build_scene``): its kind, the
    seed that picks the variant, and how many objects (1.0: the default amount)."""

    kind: str = 'auto'
    seed: int = 0
    density: float = 1.0


@dataclass(frozen=True)
class TrackSettings:
    name: str
    map_resolution: float
    scene: SceneSettings = SceneSettings()


@dataclass(frozen=True)
class CollisionSettings:
    """How cars react to contact: ``stop`` and ``bounce`` apply to barriers and other cars;
    ``ghost`` lets cars pass through each other (barriers still stop them)."""

    response: str
    cars_visible: bool  # whether cars appear in each other's sensors


@dataclass(frozen=True)
class RaceSettings:
    """Race timing: ``sectors`` are the sector ends as lap fractions from the start line (the
    last sector ends at the line); none means one sector, the whole lap. ``stewards``: the
    incident rules' thresholds and penalties (docs/race-control.md)."""

    sectors: tuple[float, ...]
    stewards: StewardSettings = StewardSettings()
    clips: ClipSettings = ClipSettings()  # incident clips (docs/race-control.md)
    event: EventSettings | None = None  # sessions of a race event (race-control.md, formats)


@dataclass(frozen=True)
class RecordingSettings:
    """What to record and where (docs/datasets.md); no ``directory``: nothing is recorded."""

    directory: Path | None
    selection: TopicSelection
    storage: str  # mcap or sqlite3
    compress: bool  # zstd, per message
    bag_version: int
    max_bag_size_mib: float | None = None  # a new storage file after this much data
    max_bag_duration_s: float | None = None  # ... or after this much sim time


@dataclass(frozen=True)
class CarSpec:
    name: str
    index: int
    profile: CarProfile
    names: CarNames
    pose: tuple[float, float, float] | None
    external_dynamics: bool  # a user's node integrates this car (docs/dynamics-node.md)
    driver: str = ''  # a zoo driver or Gym policy (config.drivers) for in-process races


@dataclass(frozen=True)
class Scenario:
    source: str
    resources: Path
    frame_rate_hz: float
    real_time_factor: float
    wait_for_drivers: bool
    driver_timeout_s: float
    dynamics_timeout_s: float  # a car's dynamics silent this long (wall time) stop the run
    heartbeat_timeout_s: float  # a required process without a sign of life this long stops it
    start_on_first_command: bool  # hold sim time at 0 until a driver's first command
    group_car_nodes: bool
    one_process: bool  # every node in one process, rendering the embedded backend in process
    autopilot: str  # none, or the built-in driver of every car (follow_the_gap)
    seed: int  # a ROS run's seed: every sensor's noise draws from it (docs/sensors.md)
    backend: BackendSettings
    track: TrackSettings
    collisions: CollisionSettings
    race: RaceSettings
    view: ViewSettings
    recording: RecordingSettings
    topic_map: TopicMap
    cars: tuple[CarSpec, ...]
    appearance: AppearanceRanges = DEFAULT_APPEARANCE  # cameras' light, sky and textures
    ros_discovery: str = 'localhost'  # ROS_DISCOVERY: which peers the ROS middleware looks for
    calibration_target: CalibrationTarget | None = None  # a checkerboard the cameras see
    conditions: ConditionsRanges | None = None  # time, place and weather (docs/scenes.md)

    @property
    def frame_period_ns(self) -> int:
        return round(1e9 / self.frame_rate_hz)

    def car(self, name: str) -> CarSpec:
        return next(c for c in self.cars if c.name == name)


def resolve(section: Section, key: str, default: str | None, kind_dir: Path) -> Path:
    """A file reference: a path (relative to the settings file) or a name in ``kind_dir``."""
    reference = section.string(key) if default is None else section.string(key, default)
    if reference.endswith(('.yaml', '.yml')) or '/' in reference:
        path = Path(reference)
        path = path if path.is_absolute() else Path(section.source).parent / path
        if not path.is_file():
            section.fail(f'file {str(path)!r} does not exist', key)
        return path
    path = kind_dir / f'{reference}.yaml'
    if not path.is_file():
        known = sorted(p.stem for p in kind_dir.glob('*.yaml'))
        section.fail(f'unknown name {reference!r}; expected one of {known} or a path to a '
                     f'.yaml file', key)
    return path


def load_scenario(path: str | Path, resources: str | Path,
                  overrides: Mapping[str, Any] | None = None) -> Scenario:
    """Load the settings file at ``path``; ``resources`` holds config/ and maps/.

    ``overrides`` (e.g. from launch arguments) replace keys of the file before it is checked.
    """
    path, resources = Path(path), Path(resources)
    file = load_section(path)
    root = file.child(merge(file.data, overrides or {}), '')
    root.reject_unknown({'description', 'simulation', 'backend', 'track', 'collisions',
                         'race', 'view', 'recording', 'topic_map', 'cars', 'appearance',
                         'ros', 'calibration_target', 'conditions'})
    config_dir = resources / 'config'

    sim = root.section('simulation')
    sim.reject_unknown({'frame_rate_hz', 'real_time_factor', 'wait_for_drivers',
                        'driver_timeout_s', 'dynamics_timeout_s', 'heartbeat_timeout_s',
                        'start_on_first_command', 'group_car_nodes', 'one_process', 'autopilot',
                        'seed'})
    frame_rate = sim.number('frame_rate_hz', 40.0, minimum=1.0, maximum=10000.0)

    backend = root.section('backend', {})
    backend.reject_unknown({'kind', 'address', 'frames_address', 'executable', 'timeout_s',
                            'startup_timeout_s', 'allow_remote', 'max_request_mib'})
    track = root.section('track')
    track.reject_unknown({'name', 'map_resolution', 'scene', 'scene_seed', 'scene_density'})
    collisions = root.section('collisions', {})
    collisions.reject_unknown({'response', 'cars_visible'})
    race = root.section('race', {})
    race.reject_unknown({'sectors', 'stewards', 'clips', 'event'})
    ros = root.section('ros', {})
    ros.reject_unknown({'discovery'})

    topic_map = load_topic_map(resolve(root, 'topic_map', 'f1tenth_gym',
                                       config_dir / 'topic_maps'))
    cars = _load_cars(root, config_dir / 'cars', topic_map, frame_rate)
    wait_for_drivers = sim.boolean('wait_for_drivers', True)
    return Scenario(
        source=str(path), resources=resources, frame_rate_hz=frame_rate,
        real_time_factor=_real_time_factor(sim),
        wait_for_drivers=wait_for_drivers,
        driver_timeout_s=sim.number('driver_timeout_s', 0.25, minimum=0.0),
        dynamics_timeout_s=sim.number('dynamics_timeout_s', 5.0, minimum=0.1),
        heartbeat_timeout_s=sim.number('heartbeat_timeout_s', 20.0, minimum=1.0),
        start_on_first_command=_auto_boolean(sim, 'start_on_first_command', wait_for_drivers),
        group_car_nodes=sim.boolean('group_car_nodes', True),
        one_process=sim.boolean('one_process', True),
        autopilot=sim.string('autopilot', 'none', choices=AUTOPILOTS),
        seed=sim.integer('seed', 0, minimum=0),
        backend=_backend(backend),
        track=TrackSettings(name=track.string('name'),
                            map_resolution=track.number('map_resolution', 0.05, minimum=0.001),
                            scene=SceneSettings(
                                kind=track.string('scene', 'auto', choices=SCENE_KINDS),
                                seed=track.integer('scene_seed', 0, minimum=0),
                                density=track.number('scene_density', 1.0, minimum=0.0,
                                                     maximum=MAX_DENSITY))),
        collisions=CollisionSettings(
            response=collisions.string('response', 'stop', choices=COLLISION_RESPONSES),
            cars_visible=collisions.boolean('cars_visible', True)),
        race=RaceSettings(sectors=_sectors(race), stewards=load_stewards(race),
                          clips=load_clips(race),
                          event=load_race_event(race, [car.name for car in cars])),
        view=_view(root.section('view', {})),
        recording=_recording(root.section('recording', {})),
        topic_map=topic_map, cars=cars,
        appearance=_appearance(root.section('appearance', {})),
        ros_discovery=ros.string('discovery', 'localhost', choices=ROS_DISCOVERY),
        calibration_target=load_calibration_target(
            root.section('calibration_target'), [car.name for car in cars])
        if root.has('calibration_target') else None,
        conditions=load_conditions(root.section('conditions'), root.section('appearance', {}),
                                   [s for car in cars for s in car.profile.sensors])
        if root.has('conditions') else None)


REAL_TIME_FACTORS = (f'0 (as fast as possible) or a number from {MIN_REAL_TIME_FACTOR} to '
                     f'{MAX_REAL_TIME_FACTOR}')


def is_real_time_factor(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a real-time factor a simulation runs at: the scenario's, and any
    that a live view sets (``arsim_core.engine.pacing``). NaN is none; a huge integer compares
    exactly, never overflowing a float."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) \
        and (value == 0 or MIN_REAL_TIME_FACTOR <= value <= MAX_REAL_TIME_FACTOR)


def _real_time_factor(sim: Section) -> float:
    value = sim.raw('real_time_factor', 0.0)
    if not is_real_time_factor(value):
        sim.fail(f'expected {REAL_TIME_FACTORS}, got {value!r:.40}', 'real_time_factor')
    return float(value)


def _auto_boolean(section: Section, key: str, auto: bool) -> bool:
    """A boolean that may also be ``auto`` (the default): then ``auto``."""
    value = section.raw(key, 'auto')
    if value == 'auto':
        return auto
    if not isinstance(value, bool):
        section.fail(f'expected true, false or auto, got {value!r}', key)
    return value


def _backend(backend: Section) -> BackendSettings:
    kind = backend.string('kind', 'embedded', choices=BACKEND_KINDS)
    allow_remote = backend.boolean('allow_remote', False)
    settings = BackendSettings(
        kind=kind, address=backend.string('address', AUTO_ADDRESS),
        frames_address=backend.string('frames_address', AUTO_ADDRESS),
        executable=_executable(backend, kind),
        timeout_s=backend.number('timeout_s', 5.0, minimum=0.1),
        startup_timeout_s=backend.number('startup_timeout_s', 60.0, minimum=1.0),
        allow_remote=allow_remote,
        max_request_mib=backend.integer('max_request_mib', MAX_REQUEST_MIB, minimum=1))
    # The bridge binds the fan-out; the embedded backend, which the launcher starts, binds
    # the request socket; Unity and external backends bind it themselves.
    for key, binds in (('address', settings.binds_address), ('frames_address', True)):
        value = getattr(settings, key)
        trouble = None if value == AUTO_ADDRESS else endpoint_problem(
            value, binds=binds, allow_remote=allow_remote)
        if trouble is not None:
            backend.fail(trouble, key)
    return settings


def _executable(backend: Section, kind: str) -> str:
    """The program the launcher starts as a ``unity`` backend (a built Unity player, or the C#
    console host), as an absolute path; empty: connect to one started by hand."""
    given = backend.string('executable', '')
    if not given:
        return ''
    if kind != 'unity':
        backend.fail(f'only a unity backend is started from an executable, and kind is {kind!r}',
                     'executable')
    path = Path(given).expanduser()
    path = path if path.is_absolute() else Path(backend.source).parent / path
    if not path.is_file():
        backend.fail(f'{path} is not a file; expected a built Unity player, or the C# console '
                     'host that `make unity-host` builds (unity/host/bin/arsim-unity-host.exe)',
                     'executable')
    return str(path.resolve())


def _view(view: Section) -> ViewSettings:
    view.reject_unknown({'kind', 'host', 'port', 'allow_remote'})
    kind = view.string('kind', 'none', choices=VIEW_KINDS)
    settings = ViewSettings(kind=kind, host=view.string('host', '127.0.0.1'),
                            port=view.integer('port', VIEW_PORTS.get(kind, 8765), minimum=1),
                            allow_remote=view.boolean('allow_remote', False))
    if settings.port > 65535:
        view.fail(f'expected a port from 1 to 65535, got {settings.port}', 'port')
    trouble = endpoint_problem(f'tcp://{settings.host}:{settings.port}', binds=True,
                               allow_remote=settings.allow_remote)
    if trouble is not None:
        view.fail(trouble, 'host')
    return settings


def _recording(recording: Section) -> RecordingSettings:
    """The recording settings. Whether the directory can be made is the launcher's check
    (``config.recording.new_directory_problem``): once the recorder has made it, the other
    processes load these settings too."""
    recording.reject_unknown({'directory', 'topics', 'topic_regex', 'storage', 'compression',
                              'bag_version', 'max_bag_size_mib', 'max_bag_duration_s'})
    directory = None
    if recording.has('directory'):
        directory = Path(recording.string('directory')).expanduser()
        if not directory.is_absolute():
            directory = Path(recording.source).parent / directory
    topics = recording.raw('topics', [])
    if not isinstance(topics, list) or not all(isinstance(t, str) and t.startswith('/')
                                               for t in topics):
        recording.fail(f'expected a list of topic names starting with /, got {topics!r}',
                       'topics')
    pattern = None
    if recording.has('topic_regex'):
        try:
            pattern = re.compile(recording.string('topic_regex'))
        except re.error as exc:
            recording.fail(f'expected a regular expression: {exc}', 'topic_regex')
    return RecordingSettings(
        directory=directory, selection=TopicSelection(frozenset(topics), pattern),
        storage=recording.string('storage', 'mcap', choices=STORAGE_NAMES),
        compress=recording.string('compression', 'none', choices=('none', 'zstd')) == 'zstd',
        bag_version=_bag_version(recording),
        max_bag_size_mib=recording.number('max_bag_size_mib', minimum=0.0, exclusive_minimum=True)
        if recording.has('max_bag_size_mib') else None,
        max_bag_duration_s=recording.number('max_bag_duration_s', minimum=0.0,
                                            exclusive_minimum=True)
        if recording.has('max_bag_duration_s') else None)


def _appearance(section: Section) -> AppearanceRanges:
    """The cameras' appearance: per key a number or a range [low, high] drawn once per run
    (``AppearanceRanges.draw``), each within the key's limits."""
    section.reject_unknown({*APPEARANCE_KEYS, 'seed'})
    ranges = {key: _appearance_range(section, key) for key in APPEARANCE_KEYS
              if section.has(key)}
    return AppearanceRanges(ranges, section.integer('seed', 0, minimum=0))


def _appearance_range(section: Section, key: str) -> tuple[float, float]:
    """``key`` as (low, high): a number gives equal ends."""
    low, high, open_low = APPEARANCE_LIMITS[key]
    integer = key in APPEARANCE_INTEGERS
    what = f'an integer in [{low}, {high}]' if integer else describe_number(
        low, high, exclusive_minimum=open_low)
    value = section.raw(key)
    ends = value if isinstance(value, list) and len(value) == 2 else [value]

    def fits(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, int if integer else (int, float)):
            return False
        return (v > low if open_low else v >= low) and v <= high

    if not all(fits(v) for v in ends) or ends[0] > ends[-1]:
        section.fail(f'expected {what}, or a range [low, high] of them (low <= high), '
                     f'got {value!r}', key)
    return float(ends[0]), float(ends[-1])


def _bag_version(recording: Section) -> int:
    version = recording.integer('bag_version', BAG_VERSIONS[0])
    if version not in BAG_VERSIONS:
        recording.fail(f'expected one of {list(BAG_VERSIONS)}, got {version}', 'bag_version')
    return version


def _sectors(race: Section) -> tuple[float, ...]:
    raw = race.raw('sectors', [])
    if not isinstance(raw, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 < v < 1.0
            for v in raw) or any(a >= b for a, b in pairwise(raw)):
        race.fail(f'expected increasing lap fractions between 0 and 1, e.g. [0.33, 0.66], '
                  f'got {raw!r}', 'sectors')
    return tuple(float(v) for v in raw)


def _load_cars(root: Section, profiles_dir: Path, topic_map: TopicMap,
               frame_rate: float) -> tuple[CarSpec, ...]:
    entries = root.raw('cars')
    if not isinstance(entries, list) or not entries:
        root.fail('expected a non-empty list of cars', 'cars')
    cars: list[CarSpec] = []
    for index, entry in enumerate(entries):
        car = root.child(entry, f'cars[{index}]')
        car.reject_unknown({'name', 'profile', 'pose', 'dynamics', 'driver'})
        name = car.string('name')
        if not name.isidentifier():
            car.fail(f'expected a name of letters, digits and underscores, got {name!r}', 'name')
        if any(c.name == name for c in cars):
            car.fail(f'duplicate car name {name!r}', 'name')
        profile = load_profile(resolve(car, 'profile', None, profiles_dir))
        for sensor in profile.sensors:
            ratio = frame_rate / sensor.rate_hz
            if sensor.rate_hz > frame_rate or abs(ratio - round(ratio)) > 1e-6:
                msg = (f'sensor {sensor.name!r} of {profile.source} runs at {sensor.rate_hz} Hz, '
                       f'which does not divide simulation.frame_rate_hz {frame_rate}')
                car.fail(msg, 'profile')
        names = topic_map.car_names(name, index, tuple(s.name for s in profile.sensors))
        pose = None
        if car.has('pose'):
            x, y, yaw = car.vector('pose', 3)
            pose = (x, y, yaw)
        external = car.string('dynamics', 'arsim', choices=('arsim', 'external')) == 'external'
        if names.vesc is not None and profile.vehicle.vesc is None:
            car.fail(f'topic map {topic_map.source} drives this car through its VESC, but its '
                     f'profile {profile.source} has no Vesc section (see config/cars/'
                     f'f1tenth.yaml)', 'profile')
        cars.append(CarSpec(name, index, profile, names, pose, external,
                            load_driver(car, 'driver')))
    return tuple(cars)


def parse_overrides(text: str) -> dict[str, Any]:
    """Overrides as passed between processes: a YAML mapping in one string ('' for none)."""
    data = parse_yaml(text, 'settings overrides')[0] if text else {}
    if not isinstance(data, dict):
        msg = f'settings overrides must be a mapping, got {text!r}'
        raise ConfigError(msg)
    return data
