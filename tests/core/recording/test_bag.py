"""Bags written by ``BagWriter`` read with readers that share no code with it: the ``mcap``
library for MCAP, SQLite itself for sqlite3, and the metadata as plain YAML."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from mcap.exceptions import EndOfFile
from mcap.reader import make_reader
from mcap.records import Message as McapMessage
from mcap.stream_reader import StreamReader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader, ReaderError
from rosbags.rosbag2.storage_sqlite3 import Sqlite3Reader
from rosbags.typesys import Stores, get_typestore

from arsim_core.recording.bag import BagWriter, RecordingError, TopicQos
from arsim_core.recording.recover import recover

TF = 'tf2_msgs/msg/TFMessage'
RACE = 'arsim_msgs/msg/RaceStatus'  # not in rosbags' store: its .msg text comes from the repo


@pytest.fixture
def definition_of(repo_root: Path):
    def read(type_name: str) -> str:
        package, _, name = type_name.split('/')
        return (repo_root / 'src' / package / 'msg' / f'{name}.msg').read_text()
    return read


def tf_message(writer: BagWriter, x: float) -> bytes:
    store = writer.typestore
    types = store.types
    stamp = types['builtin_interfaces/msg/Time'](sec=1, nanosec=0)
    transform = types['geometry_msgs/msg/TransformStamped'](
        header=types['std_msgs/msg/Header'](stamp=stamp, frame_id='map'), child_frame_id='car',
        transform=types['geometry_msgs/msg/Transform'](
            translation=types['geometry_msgs/msg/Vector3'](x=x, y=0.0, z=0.0),
            rotation=types['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)))
    return bytes(store.serialize_cdr(types[TF](transforms=[transform]), TF))


def topics_of(bag: Path) -> dict[str, dict]:
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert info['version'] == 8
    return {entry['topic_metadata']['name']: entry for entry in info['topics_with_message_count']}


def test_an_mcap_bag_holds_every_message_and_its_topics_qos(tmp_path: Path,
                                                            definition_of) -> None:
    bag = tmp_path / 'run'
    writer = BagWriter(bag, definition_of)
    writer.add_topic('/tf_static', TF, TopicQos(transient_local=True, depth=1))
    writer.add_topic('/tf', TF, TopicQos())
    writer.add_topic('/race', RACE, TopicQos())
    for step in range(50):
        writer.write('/tf', step * 25_000_000, tf_message(writer, float(step)))
    writer.write('/tf_static', 0, tf_message(writer, -1.0))
    summary = writer.close()

    assert summary.counts == {'/tf_static': 1, '/tf': 50, '/race': 0}
    assert summary.size_bytes == sum(f.stat().st_size for f in bag.iterdir())
    assert '/tf' in summary.text() and 'MiB' in summary.text()
    topics = topics_of(bag)
    assert {name: entry['message_count'] for name, entry in topics.items()} == summary.counts
    static_qos = yaml.safe_load(topics['/tf_static']['topic_metadata']['offered_qos_profiles'])
    assert static_qos[0]['durability'] == 1  # transient local: replays latched
    tf_qos = yaml.safe_load(topics['/tf']['topic_metadata']['offered_qos_profiles'])
    assert tf_qos[0]['durability'] == 2  # volatile
    assert topics['/race']['topic_metadata']['type'] == RACE

    files = list(bag.glob('*.mcap'))
    assert len(files) == 1
    with files[0].open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        read = [(channel.topic, message.log_time, decoded)
                for _, channel, message, decoded in reader.iter_decoded_messages()]
    tf = [(time, msg.transforms[0].transform.translation.x) for topic, time, msg in read
          if topic == '/tf']
    assert tf == [(step * 25_000_000, float(step)) for step in range(50)]
    assert [msg.transforms[0].child_frame_id for topic, _, msg in read
            if topic == '/tf_static'] == ['car']


def test_an_sqlite3_bag_holds_every_message(tmp_path: Path, definition_of) -> None:
    bag = tmp_path / 'run'
    writer = BagWriter(bag, definition_of, storage='sqlite3', compress=False)
    writer.add_topic('/tf', TF, TopicQos())
    for step in range(20):
        writer.write('/tf', step, tf_message(writer, float(step)))
    writer.close()
    (database,) = bag.glob('*.db3')
    with sqlite3.connect(database) as db:
        rows = db.execute('SELECT topics.name, COUNT(*) FROM messages JOIN topics ON '
                          'messages.topic_id = topics.id GROUP BY topics.name').fetchall()
    assert rows == [('/tf', 20)]
    assert topics_of(bag)['/tf']['message_count'] == 20


def test_a_bag_is_never_written_over(tmp_path: Path, definition_of) -> None:
    (tmp_path / 'run').mkdir()
    with pytest.raises(RecordingError, match='cannot create the bag'):
        BagWriter(tmp_path / 'run', definition_of)


@pytest.mark.parametrize(('options', 'message'), [
    ({'storage': 'rosbag1'}, "storage must be one of \\['mcap', 'sqlite3'\\]"),
    ({'version': 5}, 'bag version must be one of \\(8, 9\\)'),
])
def test_bad_options_are_refused(tmp_path: Path, definition_of, options: dict,
                                 message: str) -> None:
    with pytest.raises(RecordingError, match=message):
        BagWriter(tmp_path / 'run', definition_of, **options)
    assert not (tmp_path / 'run').exists()


def test_a_type_without_a_definition_is_named(tmp_path: Path) -> None:
    def nothing(type_name: str) -> str:
        raise FileNotFoundError(type_name)
    writer = BagWriter(tmp_path / 'run', nothing)
    with pytest.raises(RecordingError, match="no definition of message type 'mine/msg/Thing'"):
        writer.add_topic('/thing', 'mine/msg/Thing', TopicQos())
    writer.close()


KILLED_WRITER = '''
import os, signal, sys
from pathlib import Path
from arsim_core.recording.bag import BagWriter, TopicQos
split = int(sys.argv[2]) if len(sys.argv) > 2 else None
writer = BagWriter(Path(sys.argv[1]), lambda name: '', max_size_bytes=split)
writer.add_topic('/s', 'std_msgs/msg/String', TopicQos())
store = writer.typestore
data = bytes(store.serialize_cdr(store.types['std_msgs/msg/String'](data='x' * 10000),
                                 'std_msgs/msg/String'))
for step in range(2000):
    writer.write('/s', step, data)
    if step % 100 == 0:
        writer.checkpoint()  # as the recorder does every second
os.kill(os.getpid(), signal.SIGKILL)
'''


def test_an_mcap_bag_killed_while_writing_reads_up_to_its_last_chunk(tmp_path: Path) -> None:
    bag = tmp_path / 'run'
    done = subprocess.run([sys.executable, '-c', KILLED_WRITER, str(bag)], timeout=120)
    assert done.returncode == -signal.SIGKILL
    # The last checkpoint's metadata (at the 1901st message) names the file being written.
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    (name,) = info['relative_file_paths']
    assert name == '.run_0/.run_0.mcap' and info['message_count'] == 1901
    (topic,) = info['topics_with_message_count']
    assert topic['message_count'] == 1901
    assert topic['topic_metadata']['name'] == '/s'
    assert topic['topic_metadata']['type'] == 'std_msgs/msg/String'
    read = 0
    with (bag / name).open('rb') as stream, contextlib.suppress(EndOfFile):
        for record in StreamReader(stream).records:
            read += isinstance(record, McapMessage)
    unflushed = 2**20 // 10_000 + 1  # at most one chunk of about 1 MiB was still being filled
    assert 2000 - unflushed <= read < 2000


KILLED_SQLITE_WRITER = '''
import os, signal, sys
from pathlib import Path
from arsim_core.recording.bag import BagWriter, TopicQos
writer = BagWriter(Path(sys.argv[1]), lambda name: '', storage='sqlite3')
writer.add_topic('/s', 'std_msgs/msg/String', TopicQos())
store = writer.typestore
for step in range(130):  # 3.25 s of sim time, a message every 25 ms; the writer commits
    writer.write('/s', step * 25_000_000, bytes(store.serialize_cdr(
        store.types['std_msgs/msg/String'](data=str(step) + 'x' * 50000), 'std_msgs/msg/String')))
os.kill(os.getpid(), signal.SIGKILL)
'''


def test_an_sqlite3_bag_killed_while_writing_keeps_what_was_checkpointed(tmp_path: Path) -> None:
    """6.5 MB of messages, more than SQLite caches: they reach the file before a commit."""
    bag = tmp_path / 'run'
    done = subprocess.run([sys.executable, '-c', KILLED_SQLITE_WRITER, str(bag)], timeout=120)
    assert done.returncode == -signal.SIGKILL
    store = get_typestore(Stores.ROS2_KILTED)
    # committed at each second of sim time: the last time after the message of step 120
    expected = [(step * 25_000_000, str(step)) for step in range(121)]
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert info['relative_file_paths'] == ['.run_0/.run_0.db3']
    assert info['message_count'] == 121
    storage = Sqlite3Reader(bag / '.run_0' / '.run_0.db3')  # as rosbags reads it: the file alone
    storage.open()
    try:
        read = [(time, store.deserialize_cdr(data, connection.msgtype).data.rstrip('x'))
                for connection, time, data in storage.messages(storage.connections)]
    finally:
        storage.close()
    assert read == expected
    assert recover(bag) == {'/s': 121}
    with Reader(bag) as reader:
        assert [(time, store.deserialize_cdr(data, connection.msgtype).data.rstrip('x'))
                for connection, time, data in reader.messages()] == expected


def read_all(bag: Path) -> list[tuple[str, int, float]]:
    """(topic, time, x of the first transform) of every message, read by rosbags' own reader
    from the metadata and files as written."""
    with Reader(bag) as reader:
        return [(connection.topic, time, reader_x(reader, connection, data))
                for connection, time, data in reader.messages()]


def test_recover_makes_a_killed_bag_whole_for_every_reader(tmp_path: Path) -> None:
    """Split every 8 MiB: files 0 and 1 complete, file 2 unfinished when the writer died."""
    bag = tmp_path / 'run'
    done = subprocess.run([sys.executable, '-c', KILLED_WRITER, str(bag), str(8 * 2**20)],
                          timeout=120)
    assert done.returncode == -signal.SIGKILL
    with pytest.raises(ReaderError):
        read_all(bag)  # rosbags needs the index the unfinished file lacks
    counts = recover(bag)
    assert sorted(p.name for p in bag.iterdir()) == ['metadata.yaml', 'run_0.mcap',
                                                     'run_1.mcap', 'run_2.mcap']
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert info['relative_file_paths'] == ['run_0.mcap', 'run_1.mcap', 'run_2.mcap']
    with Reader(bag) as reader:
        times = [time for _, time, _ in reader.messages()]
    unflushed = 2**20 // 10_000 + 1
    assert times == list(range(len(times))) and 2000 - unflushed <= len(times) < 2000
    assert counts == {'/s': len(times)} == {t['topic_metadata']['name']: t['message_count']
                                           for t in info['topics_with_message_count']}
    assert sum(f['message_count'] for f in info['files']) == len(times)
    assert recover(bag) == counts  # a whole bag is left as it is


def reader_x(reader: Reader, connection, data: bytes) -> float:
    store = get_typestore(Stores.ROS2_KILTED)
    return store.deserialize_cdr(data, connection.msgtype).transforms[0].transform.translation.x


def test_a_checkpoint_writes_the_metadata_close_writes_but_for_the_files_place(
        tmp_path: Path, definition_of) -> None:
    bag = tmp_path / 'run'
    writer = BagWriter(bag, definition_of, version=9, compress=True)
    writer.add_topic('/tf_static', TF, TopicQos(transient_local=True, depth=1))
    writer.add_topic('/race', RACE, TopicQos())
    for stamp in (5, 7, 9):
        writer.write('/tf_static', stamp, tf_message(writer, float(stamp)))
    writer.checkpoint()
    checkpointed = yaml.safe_load((bag / 'metadata.yaml').read_text())
    writer.close()
    closed = yaml.safe_load((bag / 'metadata.yaml').read_text())
    moved = checkpointed['rosbag2_bagfile_information']
    moved['relative_file_paths'] = [moved['files'][0]['path']] = ['run_0.mcap']
    moved['files'][0]['path'] = 'run_0.mcap'
    assert checkpointed == closed
    assert sorted(p.name for p in bag.iterdir()) == ['metadata.yaml', 'run_0.mcap']
    assert read_all(bag) == [('/tf_static', 5, 5.0), ('/tf_static', 7, 7.0), ('/tf_static', 9, 9.0)]


@pytest.mark.parametrize(('split', 'per_file'), [
    ({'max_duration_ns': 1_000_000_000}, [40, 40, 20]),  # 25 ms apart: 40 a second
    ({'max_size_bytes': 10}, [10] * 10),  # in messages here: 10 a file
])
def test_a_split_bag_lists_its_files_in_order_and_reads_whole(tmp_path: Path, definition_of,
                                                              split: dict,
                                                              per_file: list[int]) -> None:
    bag = tmp_path / 'run'
    if 'max_size_bytes' in split:
        sizer = BagWriter(tmp_path / 'sizing', definition_of)
        size = len(tf_message(sizer, 0.0))
        sizer.close()
        split = {'max_size_bytes': split['max_size_bytes'] * size}
    writer = BagWriter(bag, definition_of, **split)
    writer.add_topic('/tf', TF, TopicQos())
    for step in range(100):
        writer.write('/tf', step * 25_000_000, tf_message(writer, float(step)))
    writer.close()
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    names = [f'run_{index}.mcap' for index in range(len(per_file))]
    assert info['relative_file_paths'] == names
    assert [f['message_count'] for f in info['files']] == per_file
    assert sorted(p.name for p in bag.iterdir()) == sorted([*names, 'metadata.yaml'])
    assert read_all(bag) == [('/tf', step * 25_000_000, float(step)) for step in range(100)]


LIMITED_WRITER = '''
import resource, signal, sys
from pathlib import Path

from arsim_core.recording.bag import BagWriter, RecordingError, TopicQos
from arsim_core.recording.recover import recover
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (5 * 2**20, 5 * 2**20))
writer = BagWriter(Path(sys.argv[1]), lambda name: '')
writer.add_topic('/s', 'std_msgs/msg/String', TopicQos())
store = writer.typestore
data = bytes(store.serialize_cdr(store.types['std_msgs/msg/String'](data='x' * 10000),
                                 'std_msgs/msg/String'))
try:
    for step in range(2000):
        writer.write('/s', step, data)
except RecordingError as exc:
    print(exc)
'''


def test_a_bag_that_cannot_grow_says_so_and_keeps_what_was_written(tmp_path: Path) -> None:
    bag = tmp_path / 'run'
    done = subprocess.run([sys.executable, '-c', LIMITED_WRITER, str(bag)], timeout=120,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f'{bag}: cannot write to the bag (File too large); it holds '
                                  f'what was written before'), done.stdout
    (path,) = bag.glob('.run_0/*.mcap')  # never completed: still where it was written
    read = 0
    with path.open('rb') as stream, contextlib.suppress(EndOfFile):
        for record in StreamReader(stream).records:
            read += isinstance(record, McapMessage)
    assert read > 400  # of the 5 MiB the file could take, in 10 kB messages


LIMITED_SQLITE_WRITER = '''
import resource, signal, sys
from pathlib import Path

from arsim_core.recording.bag import BagWriter, RecordingError, TopicQos
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (5 * 2**20, 5 * 2**20))
writer = BagWriter(Path(sys.argv[1]), lambda name: '', storage='sqlite3')
writer.add_topic('/s', 'std_msgs/msg/String', TopicQos())
store = writer.typestore
data = bytes(store.serialize_cdr(store.types['std_msgs/msg/String'](data='x' * 10000),
                                 'std_msgs/msg/String'))
try:
    for step in range(2000):
        writer.write('/s', step, data)
        if step % 100 == 0:
            writer.checkpoint()
except RecordingError as exc:
    print(exc)
try:
    writer.close()
except RecordingError as exc:
    print(exc)
'''


def test_an_sqlite3_bag_that_cannot_grow_says_so_and_keeps_what_was_committed(
        tmp_path: Path) -> None:
    bag = tmp_path / 'run'
    done = subprocess.run([sys.executable, '-c', LIMITED_SQLITE_WRITER, str(bag)], timeout=120,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f'{bag}: cannot write to the bag ('), done.stdout
    assert 'it holds what was written before' in done.stdout
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    kept = info['message_count']
    assert kept > 100  # of the 5 MiB the file could take, in 10 kB messages
    # SQLite itself reads what was committed after the file's last copy into place, if any
    (recovered,) = recover(bag).values()
    assert kept <= recovered < 2000
    with Reader(bag) as reader:
        assert [time for _, time, _ in reader.messages()] == list(range(recovered))
