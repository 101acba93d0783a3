"""Fuzzing the bags users hand to ``arsim-dataset``: small real bags (a complete MCAP bag with a
camera and a LiDAR, the same bag unfinished as a killed recorder leaves it, and complete and
unfinished SQLite bags), copied for each input into a fresh folder beside a sentinel folder of
known files, then changed: ``metadata.yaml`` with values of any type in any field, keys removed
or added, file paths that are absolute, climb with ``..``, point into the sentinel or through a
link, huge numbers, text that is no longer YAML; the storage files truncated, with bytes
flipped, records duplicated or garbage appended; links and extra files in the bag.

Each input then goes through ``recover`` and ``export`` (what ``arsim-dataset recover`` and
``arsim-dataset export`` call). The only failures allowed are the project's errors naming a file
of the bag; any other exception fails, and so does a call that takes over HANG_S. Nothing
outside the bag's folder may change (the sentinel's files and links, the listing of the folder
the bag is in), and an export leaves either a complete dataset or nothing (no staging folder).
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from fuzzing import HANG_S, fuzz, key_paths, repeat, timeout_s
from hypothesis import given
from hypothesis import strategies as st

from arsim_core.dataset.export import FORMATS, export
from arsim_core.errors import ArsimError
from arsim_core.recording.bag import BagWriter, TopicQos
from arsim_core.recording.recover import recover
from arsim_core.recording.sqlite_file import SQLITE_ERRORS

IMAGE, CLOUD = 'sensor_msgs/msg/Image', 'sensor_msgs/msg/PointCloud2'
SCAN = 'sensor_msgs/msg/LaserScan'
TOPICS = {'/camera/image_raw': IMAGE, '/camera/semantic/image_raw': IMAGE,
          '/camera/depth/image_raw': IMAGE, '/lidar/points': CLOUD, '/scan': SCAN}
WIDTH, HEIGHT, FRAMES = 16, 12, 3
INFO = 'rosbag2_bagfile_information'


# --- the bags ----------------------------------------------------------------------------------
def _header(writer: BagWriter, sec: int, frame: str) -> Any:
    types = writer.typestore.types
    return types['std_msgs/msg/Header'](
        stamp=types['builtin_interfaces/msg/Time'](sec=sec, nanosec=0), frame_id=frame)


def _image(writer: BagWriter, sec: int, encoding: str, pixels: np.ndarray) -> bytes:
    msg = writer.typestore.types[IMAGE](
        header=_header(writer, sec, 'camera'), height=pixels.shape[0], width=pixels.shape[1],
        encoding=encoding, is_bigendian=0, step=pixels.strides[0],
        data=np.ascontiguousarray(pixels).reshape(-1).view(np.uint8))
    return bytes(writer.typestore.serialize_cdr(msg, IMAGE))


def _cloud(writer: BagWriter, sec: int) -> bytes:
    """Eight points: x, y, z, intensity (float32) and a label (uint8), 20 bytes a point."""
    types = writer.typestore.types
    fields = [types['sensor_msgs/msg/PointField'](name=name, offset=offset, datatype=datatype,
                                                   count=1)
              for name, offset, datatype in (('x', 0, 7), ('y', 4, 7), ('z', 8, 7),
                                             ('intensity', 12, 7), ('label', 16, 2))]
    points = np.zeros(8, np.dtype({'names': ['x', 'y', 'z', 'i', 'l'],
                                   'formats': ['<f4', '<f4', '<f4', '<f4', 'u1'],
                                   'offsets': [0, 4, 8, 12, 16], 'itemsize': 20}))
    points['x'], points['l'] = np.arange(8) + sec, 2
    msg = types[CLOUD](header=_header(writer, sec, 'lidar'), height=1, width=8, fields=fields,
                       is_bigendian=False, point_step=20, row_step=160,
                       data=points.view(np.uint8).reshape(-1), is_dense=True)
    return bytes(writer.typestore.serialize_cdr(msg, CLOUD))


def _scan(writer: BagWriter, sec: int) -> bytes:
    msg = writer.typestore.types[SCAN](
        header=_header(writer, sec, 'scan'), angle_min=-1.0, angle_max=1.0,
        angle_increment=0.25, time_increment=0.0, scan_time=0.1, range_min=0.1,
        range_max=30.0, ranges=np.linspace(1, 9, 9, dtype=np.float32),
        intensities=np.zeros(9, np.float32))
    return bytes(writer.typestore.serialize_cdr(msg, SCAN))


def _write_frames(writer: BagWriter) -> None:
    """FRAMES instants of every topic, a second apart (a cone in each semantic image)."""
    for topic, msgtype in TOPICS.items():
        writer.add_topic(topic, msgtype, TopicQos())
    rng = np.random.default_rng(1)
    for sec in range(FRAMES):
        semantic = np.zeros((HEIGHT, WIDTH), np.uint8)
        semantic[3:8, 2 + sec:6 + sec] = 2
        stamp = sec * 10**9
        writer.write('/camera/image_raw', stamp, _image(
            writer, sec, 'rgb8', rng.integers(0, 255, (HEIGHT, WIDTH, 3), dtype=np.uint8)))
        writer.write('/camera/semantic/image_raw', stamp, _image(writer, sec, 'mono8', semantic))
        writer.write('/camera/depth/image_raw', stamp, _image(
            writer, sec, '32FC1', np.full((HEIGHT, WIDTH), 5.0, np.float32)))
        writer.write('/lidar/points', stamp, _cloud(writer, sec))
        writer.write('/scan', stamp, _scan(writer, sec))


def complete_bag(path: Path, storage: str) -> Path:
    writer = BagWriter(path, lambda name: '', storage=storage)
    _write_frames(writer)
    writer.close()
    return path


def unfinished_bag(path: Path, storage: str) -> Path:
    """What a recorder killed after its last checkpoint leaves on disk: the bag's folder copied
    while its writer is open. An MCAP file reaches the disk a chunk (1 MiB) at a time, so a
    large message follows the frames to push them out."""
    writer = BagWriter(path.parent / f'{path.name}.writing', lambda name: '', storage=storage)
    _write_frames(writer)
    if storage == 'mcap':
        writer.add_topic('/filler', 'std_msgs/msg/String', TopicQos())
        store = writer.typestore
        writer.write('/filler', FRAMES * 10**9, bytes(store.serialize_cdr(
            store.types['std_msgs/msg/String'](data='x' * 2**20), 'std_msgs/msg/String')))
    writer.checkpoint()
    shutil.copytree(writer.path, path, symlinks=True)
    writer.close()
    shutil.rmtree(writer.path)
    return path


@pytest.fixture(scope='module')
def bags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp('bags').resolve()
    return {'mcap': complete_bag(root / 'mcap' / 'run', 'mcap'),
            'sqlite3': complete_bag(root / 'sqlite3' / 'run', 'sqlite3'),
            'unfinished mcap': unfinished_bag(root / 'unfinished_mcap' / 'run', 'mcap'),
            'unfinished sqlite3': unfinished_bag(root / 'unfinished_sqlite3' / 'run', 'sqlite3')}


# --- the folder each input runs in -------------------------------------------------------------
def make_sentinel(folder: Path, bags: dict[str, Path]) -> None:
    """Files a tampered bag may point at: real storage files (loose and as a recorder stages
    them) and a text file; nothing may change them."""
    staged = folder / '.run_9'
    staged.mkdir(parents=True)
    (folder / 'notes.txt').write_text('precious\n')
    shutil.copy(bags['mcap'] / 'run_0.mcap', folder / 'other.mcap')
    shutil.copy(bags['sqlite3'] / 'run_0.db3', folder / 'other.db3')
    shutil.copy(bags['mcap'] / 'run_0.mcap', staged / '.run_9.mcap')
    shutil.copy(bags['sqlite3'] / 'run_0.db3', staged / '.run_9.db3')


def snapshot(folder: Path) -> dict[str, Any]:
    """Every entry under ``folder``: a link's target, a file's bytes, a folder's mode."""
    state: dict[str, Any] = {}
    for path in sorted(folder.rglob('*')):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            state[name] = ('link', str(path.readlink()))
        elif path.is_file():
            state[name] = ('file', path.read_bytes(), path.stat().st_mode)
        else:
            state[name] = ('folder', path.stat().st_mode)
    return state


def listing(folder: Path) -> list[tuple[str, bool, bool]]:
    return sorted((p.name, p.is_symlink(), p.is_dir()) for p in folder.iterdir())


def refused_naming(bag: Path, out: Path, exc: BaseException) -> None:
    """An allowed failure: the project's own error, its message starting with the bag, a file
    in it, or the dataset's folder."""
    assert isinstance(exc, ArsimError), exc
    named = str(exc).split(': ', 1)[0]
    assert named in (str(bag), str(out)) or named.startswith(f'{bag}/'), \
        f'no file of the bag named in: {exc}'


def complete_dataset(out: Path, fmt: str, count: int) -> None:
    """The files an export of ``count`` frames writes, all there."""
    def files(pattern: str) -> int:
        return len(list(out.glob(pattern)))
    assert count > 0
    if fmt == 'yolo':
        assert files('images/*.png') == files('labels/*.txt') == count
        assert yaml.safe_load((out / 'data.yaml').read_text())['path'] == str(out.resolve())
    elif fmt == 'coco':
        assert files('images/*.png') == count
        assert len(json.loads((out / 'annotations.json').read_text())['images']) == count
    elif fmt == 'kitti':
        assert files('velodyne/*.bin') == files('labels/*.label') == count
        assert (out / 'labels.yaml').is_file()
    else:
        assert files('clouds/*.npy') == count
        assert (out / 'labels.yaml').is_file()


def timed(call: Callable[[], Any]) -> Any:
    started = time.monotonic()
    try:
        return call()
    finally:
        elapsed = time.monotonic() - started
        assert elapsed < HANG_S, f'a call took {elapsed:.1f} s (over {HANG_S} s)'


def run_tools(work: Path, bag: Path, fmt: str, sensor: str | None) -> None:
    """``recover`` then ``export`` on the changed ``bag`` in ``work``, checking the properties
    after each."""
    sentinel = work / 'sentinel'
    exports = work / 'exports'
    out = exports / 'data'
    before, around = snapshot(sentinel), listing(work)
    try:
        timed(lambda: recover(bag))
    except Exception as exc:  # noqa: BLE001 - which exceptions is the property
        refused_naming(bag, out, exc)
    assert snapshot(sentinel) == before, 'recover changed the sentinel folder'
    assert listing(work) == around, 'recover changed the folder the bag is in'
    try:
        count = timed(lambda: export(bag, out, fmt, sensor))
    except Exception as exc:  # noqa: BLE001 - which exceptions is the property
        refused_naming(bag, out, exc)
        assert list(exports.iterdir()) == [], 'a failed export left files behind'
    else:
        assert [p.name for p in exports.iterdir()] == ['data'], 'the staging folder was left'
        complete_dataset(out, fmt, count)
    assert snapshot(sentinel) == before, 'export changed the sentinel folder'
    assert listing(work) == around, 'export changed the folder the bag is in'


@pytest.fixture
def prepare(bags: dict[str, Path], tmp_path: Path) -> Callable[[str], Any]:
    """``prepare(kind)``: a fresh folder with a copy of that bag (``run``), the sentinel and an
    empty ``exports`` folder; a context manager giving (work folder, bag)."""
    @contextlib.contextmanager
    def fresh(kind: str) -> Iterator[tuple[Path, Path]]:
        with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
            work = Path(folder).resolve()
            bag = work / 'run'
            shutil.copytree(bags[kind], bag, symlinks=True)
            make_sentinel(work / 'sentinel', bags)
            (work / 'exports').mkdir()
            yield work, bag
    return fresh


# --- changes to a bag --------------------------------------------------------------------------
# Names a tampered metadata.yaml may give a storage file; SENTINEL stands for that folder's
# absolute path. Links of these names are planted in the bag by the 'links' change.
LINKS = {'link.mcap': 'SENTINEL/other.mcap', 'link.db3': 'SENTINEL/other.db3',
         '.run_9': 'SENTINEL/.run_9', 'dangling.mcap': 'SENTINEL/missing.mcap',
         'loop.mcap': 'loop.mcap'}
PATHS = ['run_0.mcap', 'run_0.db3', '.run_0/.run_0.mcap', '.run_0/.run_0.db3', 'run_1.mcap',
         'SENTINEL/other.mcap', 'SENTINEL/other.db3', 'SENTINEL/notes.txt', '/etc/hostname',
         '../sentinel/other.mcap', '../sentinel/other.db3', '.run_0/../../sentinel/other.mcap',
         '../sentinel/.run_9/.run_9.mcap', '.run_9/.run_9.mcap', '.run_9/.run_9.db3',
         '../run/run_0.mcap', './run_0.mcap', 'run_0.mcap/', '.run_0', '.', '..', '',
         'metadata.yaml', 'sub/.sub/.sub.mcap', '\\run_0.mcap', 'run_0.mcap\0', 'x' * 5000,
         *LINKS]
HUGE = [-1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30, 10**400,
        1e308, math.inf, -math.inf, math.nan, 0.5]
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                    st.sampled_from(HUGE), st.text(max_size=12), st.sampled_from(PATHS),
                    st.sampled_from(['mcap', 'sqlite3', 'zstd', 'file', 'message', 'cdr']))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=8) | st.sampled_from(['path', 'nanoseconds', 'name']), inner,
    max_size=3), max_leaves=8)


@st.composite
def metadata_changes(draw: st.DrawFn, document: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Up to four changes of the metadata's fields: ('set', keys, value), ('delete', keys),
    ('add', keys, key, value) or ('path', index, name), files[index] and its entry of
    relative_file_paths renamed together."""
    changes: list[tuple[Any, ...]] = []
    doc = copy.deepcopy(document)
    files = len(doc[INFO]['files'])
    for _ in range(draw(st.integers(1, 4))):
        keys = list(key_paths(doc))
        kind = draw(st.sampled_from(['set', 'set', 'delete', 'add', 'path', 'path']))
        if kind == 'path':
            change: tuple[Any, ...] = ('path', draw(st.integers(0, files - 1)),
                                       draw(st.sampled_from(PATHS)))
        elif kind == 'add' or not keys:
            parents = [(), *(k for k in keys if isinstance(_at(doc, k), dict))]
            change = ('add', draw(st.sampled_from(parents)),
                      draw(st.text(max_size=8) | st.sampled_from(['files', 'path'])),
                      draw(values))
        elif kind == 'set':
            change = ('set', draw(st.sampled_from(keys)), draw(values))
        else:
            change = ('delete', draw(st.sampled_from(keys)))
        try:
            _change_document(doc, change, Path('SENTINEL'))
        except (KeyError, IndexError, TypeError):
            continue
        changes.append(change)
    return changes


def _at(doc: Any, keys: tuple[Any, ...]) -> Any:
    for key in keys:
        doc = doc[key]
    return doc


def _change_document(doc: dict[str, Any], change: tuple[Any, ...], sentinel: Path) -> None:
    """Apply ``change``; one that an earlier change left nothing to apply to (it removed or
    replaced the list or key it names) does nothing."""
    with contextlib.suppress(IndexError, KeyError, TypeError):
        _apply_change(doc, change, sentinel)


def _apply_change(doc: dict[str, Any], change: tuple[Any, ...], sentinel: Path) -> None:
    def name(text: Any) -> Any:
        return text.replace('SENTINEL', str(sentinel)) if isinstance(text, str) else text
    if change[0] == 'path':
        _, index, path = change
        info = doc[INFO]
        info['files'][index]['path'] = name(path)
        info['relative_file_paths'][index] = name(path)
    elif change[0] == 'set':
        _, keys, value = change
        _at(doc, keys[:-1])[keys[-1]] = name(value)
    elif change[0] == 'delete':
        _, keys = change
        del _at(doc, keys[:-1])[keys[-1]]
    else:
        _, keys, key, value = change
        _at(doc, keys)[key] = name(value)


LONG_NUMBER = '9' * 5000  # more digits than Python turns into an int
TEXT_CHANGES = ['none', 'none', 'none', 'long number', 'alias', 'recursive', 'deep', 'garbage',
                'empty', 'binary']


def write_metadata_text(bag: Path, doc: dict[str, Any], change: str, garbage: bytes) -> None:
    """The changed document as YAML, perhaps changed as text too."""
    try:
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, ValueError):
        text = repr(doc)
    if change == 'long number':
        text = text.replace('message_count: ', f'message_count: {LONG_NUMBER}', 1)
    elif change == 'alias':  # one node reused where another is expected
        text = text.replace('  files:\n', '  files: &f\n', 1).replace(
            '  topics_with_message_count:', '  topics_with_message_count: *f\n  x:', 1)
    elif change == 'recursive':
        text = text.replace('  custom_data:', '  custom_data: &c [*c]\n  y:', 1)
    elif change == 'deep':
        text = text.replace('  custom_data:', '  custom_data: ' + '[' * 2000 + ']' * 2000
                            + '\n  y:', 1)
    elif change == 'garbage':
        text += garbage.decode('latin-1')
    elif change == 'empty':
        text = ''
    elif change == 'binary':
        (bag / 'metadata.yaml').write_bytes(garbage)
        return
    (bag / 'metadata.yaml').write_text(text, encoding='utf-8', errors='surrogatepass')


def plant(bag: Path, sentinel: Path, extras: list[str]) -> None:
    """Links and extra entries in the bag (and its staging folder, if it has one)."""
    for extra in extras:
        if extra == 'links':
            for name, target in LINKS.items():
                link = bag / name
                if not (link.exists() or link.is_symlink()):
                    link.symlink_to(target.replace('SENTINEL', str(sentinel)))
        elif extra == 'staged link':
            for staging in bag.glob('.run_0'):
                (staging / 'extra.mcap').symlink_to(sentinel / 'other.mcap')
        elif extra == 'staged folder':
            for staging in bag.glob('.run_0'):
                (staging / 'sub').mkdir(exist_ok=True)
        elif extra == 'recover targets':  # where recover writes: links to the sentinel
            for name in ('run_0.mcap', 'run_0.db3', 'metadata.yaml.tmp',
                         '.run_0/run_0.mcap.recovering'):
                path = bag / name
                if path.parent.is_dir() and not (path.exists() or path.is_symlink()):
                    path.symlink_to(sentinel / 'notes.txt')
        elif extra == 'export targets':  # where export writes, already there
            (bag.parent / 'exports' / '.data.partial').mkdir()
            (bag.parent / 'exports' / '.data.partial' / 'old').write_text('left')
        else:
            (bag / extra).write_bytes(b'not a storage file')


extras = st.lists(st.sampled_from(['links', 'staged link', 'staged folder', 'recover targets',
                                   'export targets', 'extra.mcap', 'extra.db3', 'run_5.mcap']),
                  max_size=2, unique=True)
formats = st.sampled_from(FORMATS)
sensors = st.sampled_from([None, None, '/camera', '/lidar/points', '/scan', '/nothing'])


# --- changes to a storage file -----------------------------------------------------------------
def _mcap_records(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each top-level record of an MCAP file, after its magic."""
    records, at = [], 8
    while at + 9 <= len(data):
        end = at + 9 + int.from_bytes(data[at + 1:at + 9], 'little')
        if end > len(data):
            break
        records.append((at, end))
        at = end
    return records


def _sqlite_units(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each page of a SQLite file."""
    size = int.from_bytes(data[16:18], 'big') if len(data) >= 100 else 0
    size = 65536 if size == 1 else size or 4096
    return [(at, min(at + size, len(data))) for at in range(0, len(data), size)]


@st.composite
def storage_changes(draw: st.DrawFn, files: list[str]) -> list[tuple[Any, ...]]:
    """Up to four changes of the bag's storage files, each (kind, file, ...): 'truncate' at a
    fraction of its length, 'flip' a byte at a fraction with a mask, 'duplicate' its k-th
    record (MCAP) or page (SQLite), 'append' garbage, 'rows' (a SQLite file's message rows
    inserted again)."""
    changes = []
    for _ in range(draw(st.integers(1, 4))):
        file = draw(st.sampled_from(files))
        kind = draw(st.sampled_from(['truncate', 'flip', 'flip', 'duplicate', 'append']
                                    + (['rows'] if file.endswith('.db3') else [])))
        if kind in ('truncate', 'flip'):
            at = draw(st.floats(0, 1) | st.sampled_from([0.0, 0.001, 0.01, 0.5, 0.99]))
            changes.append((kind, file, at, draw(st.integers(1, 255))))
        elif kind == 'duplicate':
            changes.append((kind, file, draw(st.integers(0, 1000)), draw(st.integers(1, 3))))
        elif kind == 'append':
            changes.append((kind, file, draw(st.binary(min_size=1, max_size=64)
                                             | st.sampled_from([b'\x89MCAP0\r\n', b'\0' * 9]))))
        else:
            changes.append((kind, file, draw(st.integers(1, 3))))
    return changes


def change_storage(bag: Path, change: tuple[Any, ...]) -> None:
    kind, name = change[:2]
    path = bag / name
    if kind == 'rows':  # not where an earlier change left no table to copy rows of
        db = sqlite3.connect(path)
        try:
            for _ in range(change[2]):
                db.execute('INSERT INTO messages (topic_id, timestamp, data) '
                           'SELECT topic_id, timestamp, data FROM messages')
            db.commit()
        except SQLITE_ERRORS:
            pass  # the change does not apply (an earlier one damaged the file)
        finally:
            db.close()
        return
    data = path.read_bytes()
    if kind == 'truncate':
        data = data[:int(change[2] * len(data))]
    elif kind == 'flip' and data:
        at = min(int(change[2] * len(data)), len(data) - 1)
        data = data[:at] + bytes([data[at] ^ change[3]]) + data[at + 1:]
    elif kind == 'duplicate':
        units = (_mcap_records if name.endswith('.mcap') else _sqlite_units)(data)
        if units:
            start, end = units[change[2] % len(units)]
            data = data[:end] + data[start:end] * change[3] + data[end:]
    elif kind == 'append':
        data += change[2]
    path.write_bytes(data)


def storage_files(bag: Path) -> list[str]:
    return sorted(str(p.relative_to(bag)) for p in bag.rglob('*')
                  if p.is_file() and p.suffix in ('.mcap', '.db3'))


KINDS = ['mcap', 'sqlite3', 'unfinished mcap', 'unfinished sqlite3']


# --- the tests ---------------------------------------------------------------------------------
@pytest.mark.parametrize('kind', KINDS)
def test_the_unchanged_bags_recover_and_export(prepare: Any, kind: str) -> None:
    """The starting points are bags the tools take: the fuzzing starts from inputs that work."""
    for fmt in FORMATS:
        with prepare(kind) as (work, bag):
            counts = recover(bag)
            assert counts['/camera/image_raw'] == FRAMES
            assert counts['/scan'] == FRAMES
            out = work / 'exports' / 'data'
            complete_dataset(out, fmt, export(bag, out, fmt))


@pytest.mark.timeout(timeout_s(10))
def test_bags_with_tampered_metadata_are_refused_naming_a_file(
        bags: dict[str, Path], prepare: Any) -> None:
    documents = {kind: yaml.safe_load((bag / 'metadata.yaml').read_text())
                 for kind, bag in bags.items()}

    @fuzz(40)
    @given(data=st.data(), kind=st.sampled_from(KINDS), text=st.sampled_from(TEXT_CHANGES),
           garbage=st.binary(max_size=40), planted=extras, fmt=formats, sensor=sensors)
    def one(data: st.DataObject, kind: str, text: str, garbage: bytes, planted: list[str],
            fmt: str, sensor: str | None) -> None:
        changes = data.draw(metadata_changes(documents[kind]), label='changes')
        with prepare(kind) as (work, bag):
            doc = copy.deepcopy(documents[kind])
            for change in changes:
                _change_document(doc, change, work / 'sentinel')
            write_metadata_text(bag, doc, text, garbage)
            plant(bag, work / 'sentinel', planted)
            run_tools(work, bag, fmt, sensor)

    repeat(one)


@pytest.mark.timeout(timeout_s(10))
def test_bags_with_damaged_storage_files_are_refused_naming_a_file(
        bags: dict[str, Path], prepare: Any) -> None:
    files = {kind: storage_files(bag) for kind, bag in bags.items()}

    @fuzz(40)
    @given(data=st.data(), kind=st.sampled_from(KINDS), planted=extras, fmt=formats,
           sensor=sensors)
    def one(data: st.DataObject, kind: str, planted: list[str], fmt: str,
            sensor: str | None) -> None:
        changes = data.draw(storage_changes(files[kind]), label='changes')
        with prepare(kind) as (work, bag):
            for change in changes:
                change_storage(bag, change)
            plant(bag, work / 'sentinel', planted)
            run_tools(work, bag, fmt, sensor)

    repeat(one)
