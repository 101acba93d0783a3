"""``record:=DIR``: a run stopped with SIGTERM leaves a rosbag2 bag that readers sharing no code
with the recorder open, with the simulation's topics, latched ones marked latched; a directory
that exists stops the launch before anything starts."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml
from mcap.exceptions import EndOfFile
from mcap.reader import make_reader
from mcap.records import Channel, Schema
from mcap.records import Message as McapMessage
from mcap.stream_reader import StreamReader
from mcap_ros2.decoder import DecoderFactory
from rosbags.highlevel import AnyReader
from rosgraph_msgs.msg import Clock
from simharness import (
    LoggedProcess,
    Probe,
    Simulation,
    installed_resources,
    remove_dds_segments,
    ros_env,
)

from arsim_core.engine.lockstep import RECORDING_CLOCK_LEAD_FRAMES as IN_FLIGHT


def read_bag(bag: Path) -> tuple[dict[str, dict], dict[str, list]]:
    """The metadata's topics by name, and every message decoded, by topic."""
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    topics = {t['topic_metadata']['name']: t for t in info['topics_with_message_count']}
    (path,) = [bag / name for name in info['relative_file_paths']]
    messages: dict[str, list] = defaultdict(list)
    with path.open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _, channel, _, decoded in reader.iter_decoded_messages():
            messages[channel.topic].append(decoded)
    return topics, messages


def stamp_ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def test_a_run_stopped_with_sigterm_leaves_a_bag_independent_readers_open(
        simulation, tmp_path: Path) -> None:
    bag = tmp_path / 'bags' / 'run1'
    sim = simulation(arguments=(f'record:={bag}',))
    assert sim.wait_for_log('ready; stepping', 90.0), sim.log
    assert sim.wait_for_log(f'recording into {bag}', 30.0), sim.log
    time.sleep(4.0)  # stepping at full speed, every node publishing
    os.kill(sim.process.pid, signal.SIGTERM)
    assert sim.process.wait(30) == 0, sim.log
    assert f'bag {bag}:' in sim.log, sim.log  # the summary

    topics, messages = read_bag(bag)
    for topic in ('/clock', '/scan', '/ego_racecar/odom', '/tf', '/tf_static', '/map'):
        assert topics[topic]['message_count'] == len(messages[topic]) > 0, topic
    latched = {name for name, t in topics.items()
               if yaml.safe_load(t['topic_metadata']['offered_qos_profiles'])[0]['durability']
               == 1}
    assert {'/tf_static', '/map'} <= latched and '/scan' not in latched
    assert topics['/scan']['topic_metadata']['type'] == 'sensor_msgs/msg/LaserScan'
    # Lossless: every frame once (t=0 too, however often start-up sent it) to the run's end;
    # only the frames still on their way when SIGTERM came may be missing at the end.
    clocks = [stamp_ns(clock.clock) for clock in messages['/clock']]
    period = clocks[2] - clocks[1]
    assert clocks == [period * k for k in range(len(clocks))]
    for topic in ('/scan', '/ego_racecar/odom'):  # the first frame rendered is the first step
        stamps = [stamp_ns(m.header.stamp) for m in messages[topic]]
        assert stamps == clocks[1:len(stamps) + 1], f'{topic}: a frame missing or twice'
        assert len(clocks) - 1 - len(stamps) <= IN_FLIGHT, topic  # sent out, not yet held
    held = float(re.search(r'complete up to t=([\d.]+) s', sim.log).group(1))
    assert round(held * 1e9) >= clocks[-1] - IN_FLIGHT * period, sim.log
    assert len(messages['/scan'][0].ranges) == 1080
    frames = {t.child_frame_id for tf in messages['/tf_static'] for t in tf.transforms}
    assert 'ego_racecar/laser' in frames, frames


def test_a_record_directory_that_exists_stops_the_launch_before_anything_starts(
        tmp_path: Path) -> None:
    taken = tmp_path / 'run1'
    taken.mkdir()
    config = installed_resources() / 'config' / 'sim.yaml'
    result = subprocess.run([sys.executable, '-m', 'arsim_launch', f'config:={config}',
                             f'record:={taken}'], env=ros_env(79), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert f'recording.directory: {taken} exists already' in result.stderr
    assert 'ready; stepping' not in result.stderr and 'Traceback' not in result.stderr
    assert list(taken.iterdir()) == []


def _file_size_limit() -> None:
    """In the launched processes: a write past 5 MiB fails as on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (5 * 2**20, 5 * 2**20))


def test_a_bag_that_cannot_grow_stops_the_run_with_one_message(tmp_path: Path) -> None:
    bag = tmp_path / 'run1'
    sim = Simulation(tmp_path / 'sim')
    sim.launch = LoggedProcess(
        [sys.executable, '-m', 'arsim_launch', f'config:={sim.settings_file}', f'record:={bag}'],
        sim.env, sim.log_path, start_new_session=True, preexec_fn=_file_size_limit)
    try:
        assert sim.process.wait(120) == 1, sim.log
    finally:
        sim.stop()
    log = sim.log
    assert f'{bag}: cannot write to the bag (File too large)' in log, log
    [stopped] = [line for line in log.splitlines() if '[arsim] required process' in line]
    assert 'recorder' in stopped and 'exited with code 1' in stopped, log
    assert 'Traceback' not in log, log
    # What was written before stays, where the last metadata checkpoint says.
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    (name,) = info['relative_file_paths']
    assert (bag / name).stat().st_size > 2**20


CAMERA = {'type': 'camera', 'position': [0.2, 0.0, 0.2], 'rate_hz': 20.0, 'width': 640,
          'height': 480, 'fov_rad': 1.5, 'outputs': ['rgb']}


def test_two_cars_with_cameras_at_full_speed_lose_nothing(simulation, tmp_path: Path) -> None:
    """The load under which a recorder that only listens drops messages: two cars, each
    with a 640x480 camera, at full speed, their nodes grouped in shared processes."""
    profile = yaml.safe_load((installed_resources() / 'config' / 'cars' / 'f1tenth.yaml')
                             .read_text())
    profile['Sensors']['camera'] = CAMERA
    (tmp_path / 'camera_car.yaml').write_text(yaml.safe_dump(profile, sort_keys=False))
    bag = tmp_path / 'bag'
    cars = [{'name': name, 'profile': str(tmp_path / 'camera_car.yaml')}
            for name in ('ego', 'opp')]
    sim = simulation(settings={'cars': cars, 'recording': {'directory': str(bag)}})
    assert sim.wait_for_log('ready; stepping', 90.0), sim.log
    # Over 100 frames whatever the machine's load: watched on /clock, not waited for by the
    # wall clock.
    probe = Probe(sim.domain_id)
    try:
        seen: list[int] = []
        probe.node.create_subscription(Clock, '/clock', lambda m: seen.append(m.clock.sec), 10)
        assert probe.spin_until(lambda: seen and seen[-1] >= 3, 120.0), sim.log
    finally:
        probe.close()
    os.kill(sim.process.pid, signal.SIGTERM)
    assert sim.process.wait(30) == 0, sim.log

    topics, messages = read_bag(bag)
    clocks = [stamp_ns(clock.clock) for clock in messages['/clock']]
    period = clocks[2] - clocks[1]
    assert clocks == [period * k for k in range(len(clocks))] and len(clocks) > 100
    tf_stamps = [stamp_ns(t.header.stamp) for tf in messages['/tf'] for t in tf.transforms]
    complete = len(clocks) - IN_FLIGHT  # the frames that may still have been on their way
    for stamp in clocks[1:complete]:  # t=0 is only a clock: the first frame rendered is the next
        assert tf_stamps.count(stamp) == 2, stamp  # one transform per car and frame
    images = [name for name, t in topics.items()
              if t['topic_metadata']['type'] == 'sensor_msgs/msg/Image']
    assert len(images) == 2, topics
    for topic in images:  # 20 Hz of a 40 Hz simulation: every second frame, each once
        stamps = [stamp_ns(m.header.stamp) for m in messages[topic]]
        assert stamps == [2 * period * k for k in range(1, len(stamps) + 1)], topic
        assert len(stamps) >= complete // 2 - 1, topic


def test_a_killed_run_leaves_a_bag_whose_metadata_and_messages_read(simulation,
                                                                    tmp_path: Path) -> None:
    bag = tmp_path / 'bag'
    sim = simulation(arguments=(f'record:={bag}',))
    assert sim.wait_for_log('ready; stepping', 90.0), sim.log
    time.sleep(5.0)
    orphaned = sim.dds_segments()
    for pid in sim.session_processes():  # the runner and every process it started, at once
        os.kill(pid, signal.SIGKILL)
    sim.process.wait(30)
    deadline = time.monotonic() + 10.0
    while sim.session_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sim.session_processes()
    remove_dds_segments(orphaned)

    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    counted = {t['topic_metadata']['name']: t['message_count']
               for t in info['topics_with_message_count']}
    assert counted['/scan'] > 0 and '/tf_static' in counted, counted
    (path,) = [bag / name for name in info['relative_file_paths']]
    decoder = DecoderFactory()
    decoders, scan_channels, scans = {}, {}, []
    with path.open('rb') as stream, contextlib.suppress(EndOfFile):
        for record in StreamReader(stream).records:
            if isinstance(record, Schema):
                decoders[record.id] = decoder.decoder_for('cdr', record)
            elif isinstance(record, Channel) and record.topic == '/scan':
                scan_channels[record.id] = decoders[record.schema_id]
            elif isinstance(record, McapMessage) and record.channel_id in scan_channels:
                scans.append(scan_channels[record.channel_id](record.data))
    assert len(scans) > 0 and len(scans[-1].ranges) == 1080

    # Made whole, it opens with rosbags, which needs every file's index.
    done = subprocess.run([sys.executable, '-m', 'arsim_launch.dataset_cli', 'recover', str(bag)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with AnyReader([bag]) as reader:
        (connection,) = [c for c in reader.connections if c.topic == '/scan']
        recovered = [reader.deserialize(raw, connection.msgtype)
                     for _, _, raw in reader.messages(connections=[connection])]
    assert [stamp_ns(s.header.stamp) for s in recovered] == \
        [stamp_ns(s.header.stamp) for s in scans]
