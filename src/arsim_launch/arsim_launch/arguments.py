"""Launch arguments (``name:=value``) and the settings overrides they stand for.

One table serves ``python3 -m arsim_launch`` and ``sim.launch.py``, so both take the same
arguments. Each is checked here, before anything starts, and a bad value stops the launch with
a message naming the argument and what it expects.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from arsim_core.config.scenario import (
    AUTOPILOTS,
    REAL_TIME_FACTORS,
    VIEW_KINDS,
    is_real_time_factor,
)
from arsim_core.errors import ArsimError

MAX_CARS = 64


@dataclass(frozen=True)
class Argument:
    name: str
    description: str
    default: str = ''  # '' means: as in the settings file


ARGUMENTS = (
    Argument('config', 'simulation settings file (default: config/sim.yaml)'),
    Argument('track', 'a track folder in maps/, or a path to a track folder or file'),
    Argument('cars', 'number of cars: the first N of the settings file, more are added '
                     '(car2, car3, ...) with the last car\'s profile on the starting grid'),
    Argument('profile', 'car profile of every car: a file in config/cars/, or a path'),
    Argument('topic_map', 'topic map name or file (f1tenth_gym, f1tenth_car, f1tenth_vesc, eufs)'),
    Argument('rtf', 'real-time factor, 0 = as fast as possible'),
    Argument('backend', 'embedded, unity, or the address of a running one'),
    Argument('rviz', 'start RViz2 with the layout for the topic map', 'false'),
    Argument('autopilot', 'a built-in driver for every car: none, or follow_the_gap (to watch '
                          'a race without a stack of your own)'),
    Argument('view', 'a live view: none, web (a page in the browser) or foxglove (a Foxglove '
                     'server): docs/view.md'),
    Argument('record', 'record a rosbag2 bag into this new directory (docs/datasets.md)'),
    Argument('one_process', 'true: every node in one process (the default); false: a process '
                            'per node and one for the backend'),
)
NAMES = tuple(a.name for a in ARGUMENTS)


def usage() -> str:
    width = max(len(name) for name in NAMES)
    lines = [f'  {a.name + ":=":<{width + 2}} {a.description}' for a in ARGUMENTS]
    return 'arguments (all optional, as name:=value):\n' + '\n'.join(lines)


def parse_arguments(argv: list[str]) -> dict[str, str]:
    arguments = {}
    for item in argv:
        key, sep, value = item.partition(':=')
        if not sep:
            msg = f'expected arguments as name:=value, got {item!r}'
            raise ArsimError(msg)
        arguments[key] = value
    check_names(arguments)
    return arguments


def check_names(arguments: dict[str, str]) -> None:
    unknown = sorted(set(arguments) - set(NAMES))
    if unknown:
        msg = f'unknown launch argument(s) {unknown}; expected {", ".join(NAMES)}'
        raise ArsimError(msg)


def fail(name: str, expected: str, value: str) -> NoReturn:
    msg = f'launch argument {name}: expected {expected}, got {value!r}'
    raise ArsimError(msg)


def launch_overrides(arguments: dict[str, str], settings: Path,
                     resources: Path) -> dict[str, Any]:
    """Settings overrides from launch arguments (empty values mean 'as in the file');
    ``config`` and ``rviz`` are the launcher's own."""
    check_names(arguments)
    given = {k: v.strip() for k, v in arguments.items() if v.strip()}
    overrides: dict[str, Any] = {}
    if 'topic_map' in given:
        overrides['topic_map'] = _config_file('topic_map', given['topic_map'],
                                              resources / 'config' / 'topic_maps')
    if 'rtf' in given:
        overrides.setdefault('simulation', {})['real_time_factor'] = _rtf(given['rtf'])
    if 'one_process' in given:
        overrides.setdefault('simulation', {})['one_process'] = _boolean(
            'one_process', given['one_process'])
    if 'autopilot' in given:
        overrides.setdefault('simulation', {})['autopilot'] = _choice(
            'autopilot', given['autopilot'], AUTOPILOTS)
    backend = given.get('backend', '')
    if backend in ('embedded', 'unity'):
        overrides['backend'] = {'kind': backend}
    elif backend:
        overrides['backend'] = {'kind': 'external', 'address': backend}
    if 'track' in given:
        overrides['track'] = {'name': _track(given['track'], resources / 'maps')}
    if 'view' in given:
        overrides['view'] = {'kind': _choice('view', given['view'], VIEW_KINDS)}
    if 'record' in given:  # relative to where the launch was started, not to the settings
        overrides['recording'] = {'directory': str(Path(given['record']).expanduser().resolve())}
    if 'cars' in given or 'profile' in given:
        profile = given.get('profile') and _config_file('profile', given['profile'],
                                                         resources / 'config' / 'cars')
        count = _count(given['cars']) if 'cars' in given else None
        cars = _cars(_file_cars(settings), count, profile)
        if cars is not None:
            overrides['cars'] = cars
    return overrides


def _rtf(value: str) -> float:
    try:
        rtf = float(value)
    except ValueError:
        rtf = -1.0
    if not is_real_time_factor(rtf):
        fail('rtf', f'a real-time factor of {REAL_TIME_FACTORS}', value)
    return rtf


def _boolean(name: str, value: str) -> bool:
    if value.lower() not in ('true', 'false'):
        fail(name, 'true or false', value)
    return value.lower() == 'true'


def _choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        fail(name, f'one of {", ".join(choices)}', value)
    return value


def _count(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= MAX_CARS:
        fail('cars', f'a whole number of cars from 1 to {MAX_CARS}', value)
    return int(value)


def _config_file(name: str, value: str, folder: Path) -> str:
    """A name in ``folder`` as it is, or a path made absolute (nodes may run elsewhere)."""
    if value.endswith(('.yaml', '.yml')) or '/' in value:
        path = Path(value).expanduser().resolve()
        if not path.is_file():
            fail(name, f'a name in {folder} or an existing .yaml file', value)
        return str(path)
    known = sorted(p.stem for p in folder.glob('*.yaml'))
    if value not in known:
        fail(name, f'one of {known} or a path to a .yaml file', value)
    return value


def _track(value: str, maps_dir: Path) -> str:
    from arsim_core.track import available_tracks
    from arsim_core.track.loaders import resolve_track

    path = Path(value).expanduser()
    if path.exists():
        value = str(path.resolve())
    try:
        resolve_track(value, maps_dir)
    except ArsimError as exc:
        fail('track', f'a track name in maps/ ({", ".join(available_tracks(maps_dir))}) or '
                      f'a path to a track folder or file ({exc})', value)
    return value


def _file_cars(settings: Path) -> list[dict[str, Any]] | None:
    """The settings file's car entries, or None if they are not a list of mappings (the
    scenario loader then says what is wrong with them)."""
    from arsim_core.yaml_fields import load_yaml

    entries = (load_yaml(Path(settings)) or {}).get('cars')
    if not isinstance(entries, list) or not entries \
            or not all(isinstance(e, dict) for e in entries):
        return None
    return entries


def _cars(entries: list[dict[str, Any]] | None, count: int | None,
          profile: str | None) -> list[dict[str, Any]] | None:
    """The file's cars cut or extended to ``count``, all with ``profile`` if given."""
    if entries is None:
        return None
    cars = [dict(e) for e in entries[:count]]
    names = {str(e.get('name')) for e in entries}
    template = entries[-1]
    while count is not None and len(cars) < count:
        index = len(cars) + 1
        while f'car{index}' in names:
            index += 1
        names.add(f'car{index}')
        cars.append({'name': f'car{index}', 'profile': template.get('profile', 'f1tenth')})
    if profile:
        for car in cars:
            car['profile'] = profile
    return cars
