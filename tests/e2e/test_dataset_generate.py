"""``arsim-dataset generate``: a spec of randomised runs becomes one complete bag per run, side
by side in separate processes (or as Ray tasks), with a manifest that resumes a stopped batch.
The bags are read with rosbags and with MCAP's own reader, as any user's tool would."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from e2e.test_dataset_export import coned_track
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from raylock import one_ray_cluster
from rosbags.highlevel import AnyReader
from simharness import free_port, installed_resources

CAMERA = {'type': 'camera', 'position': [0.2, 0.0, 0.15], 'rate_hz': 10.0, 'width': 160,
          'height': 120, 'fov_rad': 1.6, 'outputs': ['rgb', 'semantic', 'depth']}
DURATION_S = 2.0
FRAMES = int(DURATION_S * 40) + 1  # 40 Hz, t=0 included
IMAGES = int(DURATION_S * 10) + 1


@pytest.fixture(scope='module')
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A coned track and a car with a camera and 3D ground truth."""
    folder = tmp_path_factory.mktemp('generate')
    coned_track(folder / 'track')
    resources = installed_resources()
    profile = yaml.safe_load((resources / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    profile['Sensors']['camera'] = CAMERA
    profile['Sensors']['objects'] = {'type': 'objects', 'rate_hz': 10.0}
    (folder / 'camera_car.yaml').write_text(yaml.safe_dump(profile))
    return folder


def write_spec(folder: Path, name: str = 'spec.yaml', **changes: object) -> Path:
    spec = {'runs': 2, 'duration_s': DURATION_S, 'seed': 7, 'track': 'track',
            'profile': str(folder / 'camera_car.yaml'),
            'randomization': {'friction': [0.8, 1.1], 'scan_noise_std': [0.0, 0.01],
                              'opponents': [1, 1]},
            'recording': {'max_bag_duration_s': 60.0}, **changes}
    path = folder / name
    path.write_text(yaml.safe_dump(spec))
    return path


def generate(spec: Path, out: Path, *args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, '-m', 'arsim_launch.dataset_cli', 'generate',
                           str(spec), str(out), *args], capture_output=True, text=True,
                          timeout=600, cwd=spec.parent, env=env)


def manifest(out: Path) -> dict:
    return json.loads((out / 'manifest.json').read_text())


def check_bag(bag: Path) -> dict[str, int]:
    """Every frame once, the camera's images with their ground truth, both cars in the 3D
    ground truth; the counts per topic."""
    with AnyReader([bag]) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
        assert counts['/clock'] == counts['/scan'] == counts['/car2/scan'] == FRAMES
        assert counts['/ego_racecar/odom'] == counts['/car2/odom'] == FRAMES
        assert counts['/tf'] == 2 * FRAMES  # each car's odom -> base_link
        for topic in ('/camera/image_raw', '/camera/semantic/image_raw', '/camera/detections',
                      '/camera/detections/flags', '/camera/instances/image_raw', '/objects'):
            assert counts[topic] == IMAGES, topic
        latched = {c.topic for c in reader.connections
                   if 'transient_local' in str(c.ext.offered_qos_profiles).lower()}
        assert {'/tf_static', '/camera/legend', '/arsim/race', '/map'} <= latched
        assert counts['/map'] == 1
        scans = [m for c, _, m in reader.messages(
            [c for c in reader.connections if c.topic == '/scan'])]
        assert len({m for m in scans}) == FRAMES  # one message per frame, none twice
        classes = set()
        objects = [c for c in reader.connections if c.topic == '/objects']
        for connection, _, raw in reader.messages(objects):
            detections = reader.deserialize(raw, connection.msgtype).detections
            classes |= {d.results[0].hypothesis.class_id for d in detections}
        assert {'blue_cone', 'yellow_cone', 'car'} <= classes
        states = [c for c in reader.connections if c.msgtype == 'arsim_msgs/msg/CarState']
        assert {c.topic for c in states} >= {'/arsim/ego/state', '/arsim/car2/state'}
        for connection, _, raw in reader.messages(states):  # as a dynamics node says it
            state = reader.deserialize(raw, connection.msgtype)
            assert state.model and len(state.model_state) >= 5, connection.topic
    with open(next(bag.glob('*.mcap')), 'rb') as stream:  # MCAP's own reader, too
        decoded = sum(1 for _ in make_reader(stream, decoder_factories=[DecoderFactory()])
                      .iter_decoded_messages(topics=['/camera/detections']))
    assert decoded == IMAGES
    return counts


def test_a_batch_writes_a_complete_bag_per_run_side_by_side(workspace: Path) -> None:
    spec, out = write_spec(workspace), workspace / 'out'
    done = generate(spec, out, '--workers', '2')
    assert done.returncode == 0, done.stderr
    assert '2 of 2 runs done' in done.stdout
    runs = manifest(out)['runs']
    assert [r['state'] for r in runs] == ['done', 'done']
    assert [r['seed'] for r in runs] == [7, 8]
    for run in runs:
        result = run['result']
        assert result['frames'] == FRAMES and result['cars'] == 2
        assert 0.8 <= result['drawn']['friction'] <= 1.1
        assert check_bag(Path(run['bag']))['/camera/image_raw'] == IMAGES
    assert runs[0]['result']['drawn'] != runs[1]['result']['drawn']

    # Another spec never mixes its runs into this folder.
    other = generate(write_spec(workspace, 'other.yaml', duration_s=1.0), out)
    assert other.returncode == 1
    assert 'holds runs of another spec' in other.stderr


def test_ctrl_c_stops_a_batch_and_the_same_command_resumes_it(workspace: Path) -> None:
    spec, out = write_spec(workspace, 'long.yaml', duration_s=3 * DURATION_S), workspace / 'cut'
    batch = subprocess.Popen([sys.executable, '-m', 'arsim_launch.dataset_cli', 'generate',
                              str(spec), str(out), '--workers', '1'], start_new_session=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not (out / 'manifest.json').exists() or manifest(out)['runs'][0]['state'] != 'done':
        assert batch.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    os.killpg(batch.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the batch and its workers
    _, err = batch.communicate(timeout=60)
    assert batch.returncode == 130, err
    assert 'the same command resumes the batch' in err
    assert [r['state'] for r in manifest(out)['runs']] == ['done', 'pending']
    kept = Path(manifest(out)['runs'][0]['bag']) / 'metadata.yaml'
    kept_stamp = kept.stat().st_mtime_ns

    again = generate(spec, out)
    assert again.returncode == 0, again.stderr
    assert '1 of 2 runs already done' in again.stdout
    assert kept.stat().st_mtime_ns == kept_stamp
    runs = manifest(out)['runs']
    assert [r['state'] for r in runs] == ['done', 'done']
    for run in runs:
        assert run['result']['frames'] == int(3 * DURATION_S * 40) + 1


@pytest.mark.parametrize(('change', 'expected'), [
    ({'runs': 0}, 'runs: expected an integer >= 1, got 0'),
    ({'colour': 'red'}, 'colour: unknown key'),
    ({'driver': 'fast'}, "driver: expected one of ['follow_the_gap', 'none']"),
    ({'randomization': {'friction': [1.2, 0.8]}}, 'randomization.friction'),
    ({'track': 'no_such_track'}, 'no_such_track'),
    ({'recording': {'storage': 'tape'}}, 'recording.storage'),
])
def test_a_bad_spec_is_one_error_naming_the_file_and_key(workspace: Path, change: dict,
                                                         expected: str) -> None:
    spec = write_spec(workspace, 'bad.yaml', **change)
    done = generate(spec, workspace / 'never')
    assert done.returncode == 1
    assert str(spec) in done.stderr and expected in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_same_runs_go_to_a_ray_cluster(workspace: Path) -> None:
    """A small local Ray cluster, started here as a user starts theirs."""
    with one_ray_cluster():  # `ray stop --force` below ends every cluster on the machine
        ray = shutil.which('ray', path=os.path.dirname(sys.executable)) or 'ray'
        port = free_port()
        # One authentication mode for the cluster and its clients, whatever this process or
        # machine holds: a Ray started earlier (ray.init of a local cluster) leaves
        # RAY_AUTH_MODE=token in its process and a token in ~/.ray, and a cluster that took
        # one mode refuses clients of the other.
        env = {**{k: v for k, v in os.environ.items() if not k.startswith('RAY_')},
               'RAY_USAGE_STATS_ENABLED': '0', 'RAY_AUTH_MODE': 'disabled'}
        started = subprocess.run([ray, 'start', '--head', f'--port={port}', '--num-cpus=2',
                                  '--include-dashboard=false', '--disable-usage-stats'],
                                 capture_output=True, text=True, timeout=120, env=env)
        assert started.returncode == 0, started.stderr
        try:
            spec, out = write_spec(workspace, 'ray.yaml', duration_s=DURATION_S), workspace / 'ray'
            done = generate(spec, out, '--ray', f'127.0.0.1:{port}', env=env)
            assert done.returncode == 0, done.stderr
            assert '2 of 2 runs done' in done.stdout
            for run in manifest(out)['runs']:
                check_bag(Path(run['bag']))
        finally:
            subprocess.run([ray, 'stop', '--force'], capture_output=True, timeout=60, env=env)


def noise_payloads(out: Path) -> dict[str, list[tuple[float, ...]]]:
    """The values of the /imu and /gnss messages of the one run in ``out`` (their raw bytes
    hold CDR padding, which is not theirs to compare)."""
    with AnyReader([Path(manifest(out)['runs'][0]['bag'])]) as reader:
        wanted = [c for c in reader.connections if c.topic in ('/imu', '/gnss')]
        found: dict[str, list[tuple[float, ...]]] = {'/imu': [], '/gnss': []}
        for connection, _, raw in reader.messages(wanted):
            m = reader.deserialize(raw, connection.msgtype)
            if connection.topic == '/imu':
                q, w, a = m.orientation, m.angular_velocity, m.linear_acceleration
                found['/imu'].append((q.x, q.y, q.z, q.w, w.x, w.y, w.z, a.x, a.y, a.z))
            else:
                found['/gnss'].append((m.latitude, m.longitude, m.altitude))
    return found


def test_imu_and_gnss_noise_comes_from_the_run_seed(workspace: Path) -> None:
    """Runs with other seeds record other IMU and GNSS noise; the same seed, the same."""
    profile = yaml.safe_load((installed_resources() / 'config' / 'cars' / 'f1tenth.yaml')
                             .read_text())
    profile['Sensors']['imu'] = {'type': 'imu', 'position': [0.1, 0.0, 0.05], 'rate_hz': 40.0,
                                 'accel_noise_std': 0.05, 'gyro_noise_std': 0.01}
    profile['Sensors']['gnss'] = {'type': 'gnss', 'position': [0.0, 0.0, 0.4], 'rate_hz': 10.0,
                                  'origin': [48.2626, 11.6681, 480.0],
                                  'horizontal_noise_std': 0.5, 'vertical_noise_std': 1.0}
    profile['Sensors']['encoders'] = {'type': 'wheel_encoders', 'rate_hz': 40.0,
                                      'ticks_per_revolution': 4096, 'track_width': 0.24}
    (workspace / 'imu_car.yaml').write_text(yaml.safe_dump(profile))
    payloads = {}
    for name, seed in (('a', 7), ('b', 7), ('c', 8)):
        spec = workspace / f'seed_{name}.yaml'
        spec.write_text(yaml.safe_dump({'runs': 1, 'duration_s': 1.0, 'seed': seed,
                                        'track': 'track',
                                        'profile': str(workspace / 'imu_car.yaml')}))
        done = generate(spec, workspace / f'seed_{name}')
        assert done.returncode == 0, done.stderr
        payloads[name] = noise_payloads(workspace / f'seed_{name}')
    a, b, c = payloads['a'], payloads['b'], payloads['c']
    assert len(a['/imu']) == 41 and len(a['/gnss']) == 11  # 1 s at 40 and 10 Hz, t=0 too
    assert a == b
    assert len(c['/imu']) == 41 and len(c['/gnss']) == 11
    assert all(x != y for x, y in zip(a['/imu'], c['/imu'], strict=True))
    assert all(x != y for x, y in zip(a['/gnss'], c['/gnss'], strict=True))
    # every computed sensor is recorded as the ROS nodes publish it, the encoders too
    with AnyReader([Path(manifest(workspace / 'seed_a')['runs'][0]['bag'])]) as reader:
        encoders = [c for c in reader.connections if c.topic == '/encoders']
        assert [c.msgtype for c in encoders] == ['sensor_msgs/msg/JointState']
        assert sum(1 for _ in reader.messages(encoders)) == 41


def test_late_sensors_are_recorded_when_they_arrive_stamped_when_captured(
        workspace: Path) -> None:
    """A scan 50 ms and an IMU 25 ms late (two and one frames at 40 Hz): each message is
    written at the frame it arrives in, stamped with the frame it was captured in; none is
    lost on the way, and the samples of t=0 go out at once (the car stood there before)."""
    profile = yaml.safe_load((installed_resources() / 'config' / 'cars' / 'f1tenth.yaml')
                             .read_text())
    profile['Sensors']['scan']['latency'] = 0.05
    profile['Sensors']['imu'] = {'type': 'imu', 'position': [0.1, 0.0, 0.05], 'rate_hz': 40.0,
                                 'latency': 0.025}
    (workspace / 'late_car.yaml').write_text(yaml.safe_dump(profile))
    spec = workspace / 'late.yaml'
    spec.write_text(yaml.safe_dump({'runs': 1, 'duration_s': 1.0, 'seed': 1, 'track': 'track',
                                    'profile': str(workspace / 'late_car.yaml')}))
    done = generate(spec, workspace / 'late')
    assert done.returncode == 0, done.stderr
    frame_ns = 25_000_000
    with AnyReader([Path(manifest(workspace / 'late')['runs'][0]['bag'])]) as reader:
        for topic, frames in (('/scan', 2), ('/imu', 1)):
            connections = [c for c in reader.connections if c.topic == topic]
            written = []
            for connection, log_ns, raw in reader.messages(connections):
                stamp = reader.deserialize(raw, connection.msgtype).header.stamp
                written.append((log_ns, stamp.sec * 1_000_000_000 + stamp.nanosec))
            assert written[0] == (0, 0), topic
            assert all(log - stamp == frames * frame_ns for log, stamp in written[1:]), topic
            stamps = [stamp for _, stamp in written]
            assert stamps == [i * frame_ns for i in range(41 - frames)], topic
