"""Fuzzing the YAML and CSV files users hand to arsim: generated scenarios (loaded with
``load_scenario``) and track folders (a track.yaml, a centerline CSV, a map yaml; loaded with
``load_track``), from valid ones changed into wrong types, unknown keys, aliases and alias bombs,
deep nesting, huge numbers, odd unicode and binary garbage, written to real files.

The only failures allowed are the project's errors (ConfigError, TrackError) naming the file; any
other exception, or a file that takes over HANG_S (Hypothesis's deadline in the long run), fails. A
track whose files name a path outside its folder must be refused.
"""

from __future__ import annotations

import copy
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzing import REPO, fuzz, key_paths, repeat, timeout_s
from hypothesis import given
from hypothesis import strategies as st

from arsim_core.config.scenario import load_scenario
from arsim_core.errors import ArsimError
from arsim_core.track import load_track

SCENARIO = yaml.safe_load((REPO / 'config' / 'sim.yaml').read_text())
TRACK = {'name': 'fuzz', 'format': 'tum_csv', 'file': 'centerline.csv', 'units': 'm',
         'barrier_height': 0.3, 'start': {'index': 2, 'direction': 'forward'}}
MAP_YAML = {'image': 'map.pgm', 'resolution': 0.05, 'origin': [-1.0, -1.0, 0.0], 'negate': 0,
            'occupied_thresh': 0.65, 'free_thresh': 0.196}

# --- values ------------------------------------------------------------------------------------
odd_text = st.sampled_from(['', ' ', '\u202e', '\ufeff', 'é', '🏎', '\x85', '\u2028', 'a\tb',
                            'x' * 10_000, '~', 'null', 'yes', '0x1F', '1e400', '.nan', '-.inf',
                            '!!python/object:os.system', '*missing', '&a', '{', '[', ':'])
hostile = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 10 ** 400, -(10 ** 400), 2 ** 63, 1e308, 5e-324, math.nan,
                     math.inf]), st.text(max_size=30), odd_text)
values = st.recursive(hostile, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=10) | odd_text, inner, max_size=4), max_leaves=10)


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any], names: list[str]) -> Any:
    """``base`` with up to four values replaced, keys removed or unknown keys added."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, 4))):
        paths = list(key_paths(doc))
        kind = draw(st.sampled_from(['value', 'value', 'delete', 'add', 'name']))
        if not paths or kind == 'add':
            target = doc
            if paths and draw(st.booleans()):
                for key in draw(st.sampled_from(paths)):
                    target = target[key] if isinstance(target, (dict, list)) else target
            if isinstance(target, dict):
                target[draw(st.text(max_size=10) | odd_text)] = draw(values)
            continue
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if kind == 'delete':
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(st.sampled_from(names)) if kind == 'name' else draw(values)
    return doc if draw(st.integers(0, 9)) else draw(values)  # now and then not a mapping


def _dump(doc: Any) -> str:
    try:
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, ValueError):
        return repr(doc)


ALIAS_BOMB = ''.join(f'{c}: &{c} [{", ".join([f"*{p}"] * 9)}]\n'
                     for p, c in zip('abcdefgh', 'bcdefghi', strict=True))


@st.composite
def yaml_text(draw: st.DrawFn, base: dict[str, Any], names: list[str]) -> bytes:
    """The YAML of a changed document, then perhaps its text changed too."""
    text = _dump(draw(mutated(base, names)))
    kind = draw(st.sampled_from(['as is', 'as is', 'bytes', 'alias', 'bomb', 'recursive',
                                 'deep', 'unicode', 'garbage']))
    if kind == 'bytes' and text:
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(max_size=6)) + text[at + draw(st.integers(0, 6)):]
    elif kind == 'alias':  # a whole top-level section reused elsewhere
        text = text.replace('simulation:', 'simulation: &s', 1) + 'extra: *s\n'
    elif kind == 'bomb':  # a billion laughs: nine to the eighth references
        text = 'a: &a ["lol"]\n' + ALIAS_BOMB + text
    elif kind == 'recursive':
        text = draw(st.sampled_from(['a: &a [*a]\n', '&a {x: *a}\n', 'cars: &c [*c]\n'])) + text
    elif kind == 'deep':
        depth = draw(st.integers(1, 3000))
        text = 'track: ' + '[' * depth + ']' * depth + '\n' + text
    elif kind == 'unicode':
        return draw(st.sampled_from([b'\xff\xfe', b'\xef\xbb\xbf', b'\xed\xa0\x80', b'\x00'])) \
            + text.encode('utf-8', 'surrogatepass')
    elif kind == 'garbage':
        return draw(st.binary(max_size=300))
    return text.encode('utf-8', 'surrogatepass')


def refused_naming(files: list[Path], exc: BaseException) -> None:
    """An allowed failure: the project's own error, naming one of ``files``."""
    assert isinstance(exc, ArsimError), exc
    assert any(file.name in str(exc) for file in files), f'no file named in: {exc}'


# --- scenarios ---------------------------------------------------------------------------------
PROFILE_NAMES = ['f1tenth', 'fs_car', '../../etc/passwd', '/etc/hostname', 'arsim_ring',
                 'fs_skidpad', 'web', 'foxglove', 'embedded', 'ipc:///tmp/x', 'tcp://8.8.8.8:1']


@pytest.mark.timeout(timeout_s(10))
def test_generated_scenarios_load_or_are_refused_naming_the_file(tmp_path: Path) -> None:
    @fuzz(30)
    @given(text=yaml_text(SCENARIO, PROFILE_NAMES))
    def one(text: bytes) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
            path = Path(folder) / 'scenario.yaml'
            path.write_bytes(text)
            try:
                load_scenario(path, REPO)
            except Exception as exc:  # noqa: BLE001 - which exceptions is the property
                # A scenario may name a profile anywhere the user can read (docs/security.md),
                # so the file an error names may be one of PROFILE_NAMES's paths.
                refused_naming([path, *(REPO / 'config').rglob('*.yaml'),
                                Path('/etc/hostname'), Path('/etc/passwd')], exc)

    repeat(one)


# --- tracks ------------------------------------------------------------------------------------
def circle_csv(points: int) -> str:
    rows = [f'{10 * math.cos(2 * math.pi * i / points):.6f},'
            f'{10 * math.sin(2 * math.pi * i / points):.6f},1.0,1.0' for i in range(points)]
    return '# x_m,y_m,w_tr_right_m,w_tr_left_m\n' + '\n'.join(rows) + '\n'


@st.composite
def centerline(draw: st.DrawFn) -> bytes:
    """A centerline CSV: a circle, perhaps with rows or cells changed, or anything at all."""
    rows = circle_csv(draw(st.integers(0, 60))).splitlines()
    for _ in range(draw(st.integers(0, 3))):
        if len(rows) > 1:
            at = draw(st.integers(1, len(rows) - 1))
            cells = rows[at].split(',')
            cells[draw(st.integers(0, len(cells) - 1))] = draw(
                st.sampled_from(['nan', 'inf', '-inf', '1e400', '', 'x', '0', '-1', '1e-300',
                                 '9' * 400]) | st.text(max_size=8))
            rows[at] = ','.join(cells) + draw(st.sampled_from(['', ',', ',1', '\t']))
    text = '\n'.join(rows).encode()
    return text if draw(st.integers(0, 9)) else draw(st.binary(max_size=200))


OUTSIDE = ['../outside.csv', '../../outside.csv', '/etc/hostname', 'sub/../../outside.csv']
TRACK_NAMES = ['centerline.csv', 'map.yaml', 'map.pgm', 'missing.csv', '.', '', *OUTSIDE]


def _outside(doc: Any) -> bool:
    """Whether a track.yaml names a file outside its folder."""
    return isinstance(doc, dict) and any(
        isinstance(doc.get(key), str) and (doc[key].startswith('/') or '..' in doc[key])
        for key in ('file', 'raceline', 'centerline', 'cones', 'mission'))


@pytest.mark.timeout(timeout_s(15))
def test_generated_tracks_load_or_are_refused_naming_the_file(tmp_path: Path) -> None:
    @fuzz(12)
    @given(descriptor=yaml_text(TRACK, TRACK_NAMES), csv=centerline(),
           map_yaml=yaml_text(MAP_YAML, TRACK_NAMES),
           image=st.sampled_from([b'P5 4 4 255\n' + bytes(range(16)), b'P5 9999 9999 255\n',
                                  b'']) | st.binary(max_size=64))
    def one(descriptor: bytes, csv: bytes, map_yaml: bytes, image: bytes) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as work:
            (Path(work) / 'outside.csv').write_text(circle_csv(40))  # a valid file outside
            folder = Path(work) / 'track'
            folder.mkdir()
            files = {'track.yaml': descriptor, 'centerline.csv': csv, 'map.yaml': map_yaml,
                     'map.pgm': image}
            for name, data in files.items():
                (folder / name).write_bytes(data)
            try:
                doc = yaml.safe_load(descriptor)
            except (yaml.YAMLError, ValueError, RecursionError):
                doc = None
            try:
                load_track(folder)
            except Exception as exc:  # noqa: BLE001 - which exceptions is the property
                refused_naming([folder / name for name in files] + [folder], exc)
            else:
                assert not _outside(doc), f'a track naming a file outside its folder loaded: {doc}'

    repeat(one)


def test_the_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    """The bomb the generators use, alone: refused as the loader promises (docs/security.md)."""
    path = tmp_path / 'bomb.yaml'
    path.write_text('a: &a ["lol"]\n' + ALIAS_BOMB + _dump(SCENARIO))
    with pytest.raises(ArsimError, match='bomb.yaml'):
        load_scenario(path, REPO)
