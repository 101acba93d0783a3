"""``arsim-dataset export`` on bags written with the project's bag writer: a corrupt message is
one error naming its topic and place, a write that fails is one error naming the file, and
the dataset's folder exists only once the export is complete."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from arsim_core.dataset.export import export
from arsim_core.dataset.frames import DatasetError
from arsim_core.recording.bag import BagWriter, TopicQos

IMAGE = 'sensor_msgs/msg/Image'
WIDTH, HEIGHT, FRAMES = 64, 48, 5


def image(writer: BagWriter, index: int, encoding: str, pixels: np.ndarray) -> bytes:
    types = writer.typestore.types
    header = types['std_msgs/msg/Header'](
        stamp=types['builtin_interfaces/msg/Time'](sec=index, nanosec=0), frame_id='camera')
    msg = types[IMAGE](header=header, height=pixels.shape[0], width=pixels.shape[1],
                       encoding=encoding, is_bigendian=0,
                       step=pixels.shape[1] * (pixels.shape[2] if pixels.ndim > 2 else 1),
                       data=np.ascontiguousarray(pixels).reshape(-1).view(np.uint8))
    return bytes(writer.typestore.serialize_cdr(msg, IMAGE))


def camera_bag(path: Path, corrupt: Callable[[BagWriter, int], bytes] | None = None,
               times: int = 1, storage: str = 'mcap', cameras: tuple[str, ...] = ('/camera',)
               ) -> Path:
    """FRAMES frames of each of ``cameras`` (a blue cone in each); the colour image of frame 3
    replaced by ``corrupt(writer, 3)``; each message written ``times`` times."""
    writer = BagWriter(path, lambda name: '', storage=storage)
    for camera in cameras:
        for topic in (f'{camera}/image_raw', f'{camera}/semantic/image_raw'):
            writer.add_topic(topic, IMAGE, TopicQos())
    rng = np.random.default_rng(1)
    for index in range(FRAMES):
        semantic = np.zeros((HEIGHT, WIDTH), np.uint8)
        semantic[10:20, 5 + index:15 + index] = 2  # a blue cone
        rgb = rng.integers(0, 255, (HEIGHT, WIDTH, 3), dtype=np.uint8)
        data = image(writer, index, 'rgb8', rgb)
        if corrupt is not None and index == 3:
            data = corrupt(writer, index)
        for _, camera in itertools.product(range(times), cameras):
            writer.write(f'{camera}/image_raw', index * 10**9, data)
            writer.write(f'{camera}/semantic/image_raw', index * 10**9,
                         image(writer, index, 'mono8', semantic))
    writer.close()
    return path


@pytest.fixture(scope='module')
def bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return camera_bag(tmp_path_factory.mktemp('bags') / 'run')


def cli(*args: str, limit_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    """``arsim-dataset``, under a file size limit if given (writes past it fail as on a full
    disk)."""
    code = ('import resource, signal, sys\n'
            f'limit = {limit_bytes or 0}\n'
            'if limit:\n'
            '    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n'
            '    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))\n'
            'from arsim_launch.dataset_cli import main\n'
            'sys.exit(main(sys.argv[1:]))\n')
    return subprocess.run([sys.executable, '-c', code, *args], capture_output=True, text=True,
                          timeout=300)


def test_an_export_writes_every_frame(bag: Path, tmp_path: Path) -> None:
    out = tmp_path / 'data'
    assert export(bag, out, 'yolo') == FRAMES
    assert len(list((out / 'images').glob('*.png'))) == FRAMES
    labels = sorted((out / 'labels').glob('*.txt'))
    assert [p.read_text().split()[0] for p in labels] == ['0'] * FRAMES  # a blue cone each
    assert yaml.safe_load((out / 'data.yaml').read_text())['path'] == str(out.resolve())
    assert sorted(p.name for p in tmp_path.iterdir()) == ['data']
    with pytest.raises(DatasetError, match='exists already; an export needs a new folder'):
        export(bag, out, 'coco')  # a complete dataset is never written over


@pytest.mark.parametrize('fmt', ['yolo', 'coco'])
def test_an_instant_recorded_twice_is_one_frame(tmp_path: Path, fmt: str) -> None:
    """Each message of the bag twice (a damaged or merged bag): every file of the dataset
    once, and the count says what it holds."""
    bag = camera_bag(tmp_path / 'run', times=2)
    out = tmp_path / 'data'
    assert export(bag, out, fmt) == FRAMES
    assert len(list((out / 'images').glob('*.png'))) == FRAMES
    if fmt == 'coco':
        names = [entry['file_name'] for entry in
                 json.loads((out / 'annotations.json').read_text())['images']]
        assert sorted(names) == sorted(p.name for p in (out / 'images').glob('*.png'))


@pytest.mark.parametrize('fmt', ['yolo', 'coco'])
def test_cameras_whose_topics_give_one_file_name_are_refused_naming_both(tmp_path: Path,
                                                                         fmt: str) -> None:
    """/a/b and /a_b would both be written as a_b_<stamp>: one camera's frames would replace
    the other's. Each alone is exported whole."""
    bag = camera_bag(tmp_path / 'run', cameras=('/a/b', '/a_b'))
    with pytest.raises(DatasetError, match='the sensors /a/b and /a_b would share the file '
                                           r'names a_b_\*; export them one at a time'):
        export(bag, tmp_path / 'both', fmt)
    assert not (tmp_path / 'both').exists()
    for camera in ('/a/b', '/a_b'):
        assert export(bag, tmp_path / camera.replace('/', '-'), fmt, camera) == FRAMES


@pytest.mark.parametrize('text', [b'\x80 not UTF-8', b'x: ' + b'[' * 5000 + b']' * 5000])
def test_metadata_rosbags_cannot_parse_is_one_error_naming_the_bag(
        bag: Path, tmp_path: Path, text: bytes) -> None:
    copy = tmp_path / 'run'
    shutil.copytree(bag, copy)
    (copy / 'metadata.yaml').write_bytes(text)
    with pytest.raises(DatasetError, match=f'^{copy}'):
        export(copy, tmp_path / 'data', 'yolo')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run']


def test_an_mcap_file_whose_index_promises_more_than_memory_is_one_error(
        bag: Path, tmp_path: Path) -> None:
    """The first message index record (opcode 7) written three times: the summary's offsets
    then land in other records, where rosbags reads a length of exabytes to allocate."""
    copy = tmp_path / 'run'
    shutil.copytree(bag, copy)
    data = (copy / 'run_0.mcap').read_bytes()
    at = 8  # after the magic
    while data[at] != 7:
        at += 9 + int.from_bytes(data[at + 1:at + 9], 'little')
    end = at + 9 + int.from_bytes(data[at + 1:at + 9], 'little')
    (copy / 'run_0.mcap').write_bytes(data[:end] + data[at:end] * 2 + data[end:])
    with pytest.raises(DatasetError, match=f'^{copy}: cannot read the bag'):
        export(copy, tmp_path / 'data', 'yolo')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run']


def wrong_length(writer: BagWriter, index: int) -> bytes:
    """Fields that promise more pixels than the data holds."""
    return image(writer, index, 'rgb8', np.zeros((HEIGHT // 2, WIDTH, 3), np.uint8)).replace(
        (HEIGHT // 2).to_bytes(4, 'little') + WIDTH.to_bytes(4, 'little'),
        HEIGHT.to_bytes(4, 'little') + WIDTH.to_bytes(4, 'little'), 1)


def truncated(writer: BagWriter, index: int) -> bytes:
    return image(writer, index, 'rgb8', np.zeros((HEIGHT, WIDTH, 3), np.uint8))[:60]


def other_size(writer: BagWriter, index: int) -> bytes:
    return image(writer, index, 'rgb8', np.zeros((HEIGHT, WIDTH // 2, 3), np.uint8))


@pytest.mark.parametrize(('corrupt', 'topic', 'problem'), [
    (wrong_length, '/camera/image_raw', 'image fields do not fit its data: 64x48 rgb8'),
    (truncated, '/camera/image_raw', 'is corrupt: '),
    # found when the semantic image of that instant comes
    (other_size, '/camera/semantic/image_raw', 'its image is 64x48, the other images of its'),
])
@pytest.mark.parametrize('fmt', ['yolo', 'coco'])
def test_a_corrupt_image_is_one_error_naming_its_topic_and_place(
        tmp_path: Path, corrupt: Callable[[BagWriter, int], bytes], topic: str, problem: str,
        fmt: str) -> None:
    bag = camera_bag(tmp_path / 'run', corrupt)
    out = tmp_path / 'data'
    done = cli('export', str(bag), str(out), '--format', fmt)
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f'arsim-dataset: error: {bag}: {topic}: message 4 '
                           f'(recorded at t=3.000 s) is corrupt'), line
    assert problem in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run']  # nothing half-written


def test_an_export_whose_writes_fail_names_the_file_and_leaves_no_dataset(
        bag: Path, tmp_path: Path) -> None:
    """Each PNG is about 9 kB: under a 4 kB file size limit the first one cannot be written,
    as on a full disk."""
    out = tmp_path / 'data'
    done = cli('export', str(bag), str(out), limit_bytes=4096)
    assert done.returncode == 1, done.stderr
    (line,) = [line for line in done.stderr.splitlines()  # libpng says 'Write Error' too
               if not line.startswith('libpng')]
    assert line == (f'arsim-dataset: error: {out}: cannot write '
                    f'images/camera_{0:019d}.png (is the disk full?)'), line
    assert list(tmp_path.iterdir()) == []


def test_an_export_into_a_path_through_a_file_names_it(bag: Path, tmp_path: Path) -> None:
    (tmp_path / 'file').write_text('not a folder')
    done = cli('export', str(bag), str(tmp_path / 'file' / 'data'))
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f'arsim-dataset: error: {tmp_path}/file/data: cannot write '
                           f'.data.partial (File exists: {tmp_path}/file)'), line


KILLED_EXPORT = '''
import os, signal, sys
from pathlib import Path
from arsim_core.dataset.export import export

def progress(count):
    if count == 3:
        os.kill(os.getpid(), signal.SIGKILL)

export(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], progress=progress)
'''


@pytest.mark.parametrize('fmt', ['yolo', 'coco'])
def test_the_dataset_folder_exists_only_once_the_export_is_complete(
        bag: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / 'data'
    done = subprocess.run([sys.executable, '-c', KILLED_EXPORT, str(bag), str(out), fmt],
                          timeout=300)
    assert done.returncode == -signal.SIGKILL
    assert not out.exists()
    partial = tmp_path / '.data.partial'
    assert len(list((partial / 'images').glob('*.png'))) == 3  # what it had written
    seen: list[bool] = []
    assert export(bag, out, fmt, progress=lambda _: seen.append(out.exists())) == FRAMES
    assert seen == [False] * FRAMES
    assert sorted(p.name for p in tmp_path.iterdir()) == ['data']
    assert len(list((out / 'images').glob('*.png'))) == FRAMES
    for png in (out / 'images').glob('*.png'):
        assert cv2.imread(str(png)).shape == (HEIGHT, WIDTH, 3)
    assert os.access(out, os.W_OK)


def test_a_chunk_that_breaks_while_it_is_read_is_one_error(bag: Path, tmp_path: Path) -> None:
    """The first message in the (uncompressed) chunk claims more bytes than the chunk holds:
    the index and summary are whole, so the bag opens, and reading its messages fails."""
    copy = tmp_path / 'run'
    shutil.copytree(bag, copy)
    data = bytearray((copy / 'run_0.mcap').read_bytes())
    at = 8  # after the magic
    while data[at] != 6:  # a chunk
        at += 9 + int.from_bytes(data[at + 1:at + 9], 'little')
    compression = int.from_bytes(data[at + 37:at + 41], 'little')
    assert compression == 0, 'the bag writer compresses its chunks now: damage it otherwise'
    inner = at + 41 + compression + 8  # its records
    while data[inner] != 5:  # a message
        inner += 9 + int.from_bytes(data[inner + 1:inner + 9], 'little')
    data[inner + 1:inner + 9] = (2**40).to_bytes(8, 'little')
    (copy / 'run_0.mcap').write_bytes(bytes(data))
    with pytest.raises(DatasetError, match=f'^{copy}: cannot read the bag'):
        export(copy, tmp_path / 'data', 'yolo')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run']


def test_a_storage_file_that_links_out_of_the_bag_is_not_read(bag: Path,
                                                             tmp_path: Path) -> None:
    """rosbags opens <bag>/<file> as the metadata names it, following links: a bag whose
    storage file is a link to a file elsewhere would export that file."""
    elsewhere = tmp_path / 'elsewhere'
    shutil.copytree(bag, elsewhere)
    copy = tmp_path / 'run'
    shutil.copytree(bag, copy)
    (copy / 'run_0.mcap').unlink()
    (copy / 'run_0.mcap').symlink_to(elsewhere / 'run_0.mcap')
    with pytest.raises(DatasetError, match=f'^{copy}/metadata.yaml: .*files\\[0\\].path: .*link'):
        export(copy, tmp_path / 'data', 'yolo')
    assert not (tmp_path / 'data').exists()


def test_a_sqlite_file_that_breaks_while_it_is_read_is_one_error(tmp_path: Path) -> None:
    """Each page of the SQLite file written twice in turn: the file still opens, and SQLite
    (through apsw, as rosbags reads it) finds some of them malformed while the messages are
    read. Every export ends complete or in one DatasetError naming the bag."""
    bag = camera_bag(tmp_path / 'bags' / 'run', storage='sqlite3')
    data = (bag / 'run_0.db3').read_bytes()
    page = int.from_bytes(data[16:18], 'big')
    unreadable = 0
    for start in range(0, len(data), page):
        case = tmp_path / f'page_{start // page}'
        copy = case / 'run'
        shutil.copytree(bag, copy)
        (copy / 'run_0.db3').write_bytes(data[:start + page] + data[start:])
        try:
            export(copy, case / 'data', 'yolo')
        except DatasetError as exc:
            assert str(exc).startswith(f'{copy}'), exc
            assert sorted(p.name for p in case.iterdir()) == ['run']
            unreadable += 'cannot read the bag' in str(exc)
    assert unreadable
