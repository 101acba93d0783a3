"""``recover`` on bags from elsewhere: a tampered ``metadata.yaml`` or a link in the bag's
folder must never make it read, replace or remove anything outside the bag."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from rosbags.rosbag2 import Reader

from arsim_core.recording.bag import RecordingError
from arsim_core.recording.recover import recover

KILLED_WRITER = '''
import os, signal, sys
from pathlib import Path
from arsim_core.recording.bag import BagWriter, TopicQos
writer = BagWriter(Path(sys.argv[1]), lambda name: '', storage=sys.argv[2])
writer.add_topic('/s', 'std_msgs/msg/String', TopicQos())
store = writer.typestore
data = bytes(store.serialize_cdr(store.types['std_msgs/msg/String'](data='x' * 10000),
                                 'std_msgs/msg/String'))
for step in range(300):
    writer.write('/s', step, data)
    if step % 100 == 0:
        writer.checkpoint()  # as the recorder does every second
os.kill(os.getpid(), signal.SIGKILL)
'''


def killed_bag(path: Path, storage: str = 'mcap') -> Path:
    done = subprocess.run([sys.executable, '-c', KILLED_WRITER, str(path), storage],
                          timeout=120)
    assert done.returncode == -signal.SIGKILL
    return path


@pytest.fixture(scope='module')
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return killed_bag(tmp_path_factory.mktemp('template') / 'run')


@pytest.fixture
def bag(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / 'bags' / 'run'
    shutil.copytree(template, copy)
    return copy


@pytest.fixture
def outside(bag: Path, tmp_path: Path) -> Path:
    """A folder beside the bag's that nothing may touch."""
    keep = tmp_path / 'outside' / 'keep'
    keep.mkdir(parents=True)
    (keep / 'notes.txt').write_text('precious\n')
    shutil.copy(bag / '.run_0' / '.run_0.mcap', keep / 'other.mcap')
    return keep


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob('*'))
            if p.is_file()}


def tamper(bag: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = yaml.safe_load((bag / 'metadata.yaml').read_text())
    change(document['rosbag2_bagfile_information'])
    (bag / 'metadata.yaml').write_text(yaml.safe_dump(document))


def last_path(path: str) -> Callable[[dict[str, Any]], None]:
    def change(info: dict[str, Any]) -> None:
        info['files'][-1]['path'] = path
        info['relative_file_paths'][-1] = path
    return change


@pytest.mark.parametrize('path', [
    'ABSOLUTE/other.mcap',  # an absolute path, to a real MCAP file outside
    '../../outside/keep/other.mcap',
    '../../outside/keep/notes.txt',  # not an MCAP file: its parent was removed all the same
    '.run_0/../../../outside/keep/other.mcap',
    '.run_0/.run_0.txt',  # the recorder's layout but not a storage file
    'sub/.sub/.sub.mcap',
])
def test_a_file_named_outside_the_bag_is_refused_and_nothing_is_removed(
        bag: Path, outside: Path, path: str) -> None:
    path = path.replace('ABSOLUTE', str(outside))
    tamper(bag, last_path(path))
    before, bag_before = snapshot(outside), snapshot(bag)
    with pytest.raises(RecordingError, match=r"metadata.yaml: rosbag2_bagfile_information"
                                             r"\.files\[0\]\.path: .*expected"):
        recover(bag)
    assert snapshot(outside) == before
    assert snapshot(bag) == bag_before


@pytest.mark.parametrize('link', ['folder', 'file'])
def test_a_link_out_of_the_bag_is_refused(bag: Path, outside: Path, link: str) -> None:
    """The metadata as the recorder wrote it, but the staging folder (or the file in it) is a
    link to a folder (a file) outside."""
    staging = bag / '.run_0'
    if link == 'folder':
        shutil.rmtree(staging)
        shutil.copy(outside / 'other.mcap', outside / '.run_0.mcap')
        staging.symlink_to(outside, target_is_directory=True)
    else:
        (staging / '.run_0.mcap').unlink()
        (staging / '.run_0.mcap').symlink_to(outside / 'other.mcap')
    before = snapshot(outside)
    with pytest.raises(RecordingError, match=r'files\[0\]\.path: .*link or leads out'):
        recover(bag)
    assert snapshot(outside) == before
    assert outside.is_dir()


def test_links_where_recover_writes_are_replaced_not_followed(bag: Path, outside: Path) -> None:
    """The complete file's name and the metadata's temporary name, links to files outside."""
    (bag / 'run_0.mcap').symlink_to(outside / 'notes.txt')
    (bag / 'metadata.yaml.tmp').symlink_to(outside / 'other.mcap')
    before = snapshot(outside)
    counts = recover(bag)
    assert snapshot(outside) == before
    assert sorted(p.name for p in bag.iterdir()) == ['metadata.yaml', 'run_0.mcap']
    assert not (bag / 'run_0.mcap').is_symlink()
    with Reader(bag) as reader:
        assert sum(1 for _ in reader.messages()) == counts['/s'] > 0


@pytest.mark.parametrize(('change', 'key'), [
    (lambda info: info.update(files='run_0.mcap'), r'\.files: expected a non-empty list'),
    (lambda info: info.update(files=[]), r'\.files: expected a non-empty list'),
    (lambda info: info['files'][0].update(path=5), r'\.files\[0\]\.path: expected a name'),
    (lambda info: info['files'][0].pop('path'), r'\.files\[0\]\.path: expected a name'),
    (lambda info: info['files'][0].update(message_count='many'),
     r'\.files\[0\]\.message_count: expected a whole number'),
    (lambda info: info['files'][0].update(duration=[1]),
     r'\.files\[0\]\.duration: expected a mapping'),
    (lambda info: info.update(topics_with_message_count=3),
     r'\.topics_with_message_count: expected a list'),
    (lambda info: info['topics_with_message_count'][0].pop('topic_metadata'),
     r'\.topics_with_message_count\[0\]\.topic_metadata: expected a mapping'),
    (lambda info: info.update(storage_identifier='rosbag1'),
     r"\.storage_identifier: expected one of \['mcap', 'sqlite3'\]"),
    (lambda info: info.update(storage_identifier=['mcap']),  # unhashable
     r"\.storage_identifier: expected one of \['mcap', 'sqlite3'\], got \['mcap'\]"),
    (lambda info: info.update(relative_file_paths=['/etc/passwd']),
     r'\.relative_file_paths: expected the paths of files'),
])
def test_malformed_metadata_is_one_error_naming_the_key(bag: Path, change: Any,
                                                        key: str) -> None:
    tamper(bag, change)
    before = snapshot(bag)
    with pytest.raises(RecordingError, match=r'metadata\.yaml: rosbag2_bagfile_information'
                                             + key):
        recover(bag)
    assert snapshot(bag) == before


def test_metadata_that_is_not_a_mapping_or_too_large_is_refused(bag: Path) -> None:
    (bag / 'metadata.yaml').write_text('- just\n- a list\n')
    with pytest.raises(RecordingError, match=r'metadata\.yaml: top level: expected a mapping'):
        recover(bag)
    with (bag / 'metadata.yaml').open('w') as stream:
        stream.write('# padding\n' * (2 * 2**20))
    with pytest.raises(RecordingError, match=r'metadata\.yaml: larger than 16 MiB'):
        recover(bag)
    (bag / 'metadata.yaml').unlink()
    with pytest.raises(RecordingError, match=r'not a bag \(metadata\.yaml: No such file'):
        recover(bag)


@pytest.mark.parametrize('text', [
    'custom_data: ' + '[' * 5000 + ']' * 5000,  # PyYAML parses by recursion
    'message_count: ' + '9' * 5000,  # more digits than Python turns into an int
    'custom_data: "\x07"',  # a control character
])
def test_metadata_yaml_cannot_build_is_refused_naming_it(bag: Path, text: str) -> None:
    """Text PyYAML cannot turn into data: one error naming the file, the bag left as it was."""
    document = (bag / 'metadata.yaml').read_text()
    (bag / 'metadata.yaml').write_text(document.replace('rosbag2_bagfile_information:',
                                                        f'{text}\nrosbag2_bagfile_information:'))
    before = snapshot(bag)
    with pytest.raises(RecordingError, match=r'metadata\.yaml(:\d+:\d+)?: (not|invalid) YAML'):
        recover(bag)
    assert snapshot(bag) == before


def test_a_missing_or_broken_storage_file_is_named(bag: Path) -> None:
    recover(bag)
    (bag / 'run_0.mcap').write_bytes(b'not mcap at all')
    with pytest.raises(RecordingError, match=r'run_0\.mcap: not a complete MCAP file'):
        recover(bag)
    (bag / 'run_0.mcap').unlink()
    with pytest.raises(RecordingError, match=r"files\[0\]\.path: 'run_0\.mcap' is not a file"):
        recover(bag)


def test_a_killed_sqlite3_bag_is_made_whole(tmp_path: Path) -> None:
    bag = killed_bag(tmp_path / 'run', 'sqlite3')
    counts = recover(bag)
    assert sorted(p.name for p in bag.iterdir()) == ['metadata.yaml', 'run_0.db3']
    with Reader(bag) as reader:
        times = [time for _, time, _ in reader.messages()]
    assert counts == {'/s': len(times)}
    assert times == list(range(201))  # committed at the last checkpoint, at the 201st
    assert recover(bag) == counts


def test_a_sqlite3_file_whose_schema_names_are_not_utf8_is_named(tmp_path: Path) -> None:
    """A flipped byte in a table's name makes SQLite's error message hold it, and Python's
    sqlite3 decodes that message as UTF-8: the UnicodeDecodeError is a damaged file too."""
    bag = killed_bag(tmp_path / 'run', 'sqlite3')
    recover(bag)
    storage = bag / 'run_0.db3'
    data = storage.read_bytes()
    at = data.index(b'metadata')  # the table's name in SQLite's schema
    storage.write_bytes(data[:at] + b'meta\xe4ata' + data[at + 8:])
    with pytest.raises(RecordingError, match=r'run_0\.db3: not a readable SQLite bag file'):
        recover(bag)
