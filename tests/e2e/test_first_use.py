"""First use: the commands the documentation shows work in a fresh shell after
``source tools/env.sh``, the launch arguments shape the simulation, and sim time waits for the
first driver."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ackermann_msgs.msg import AckermannDriveStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan
from simharness import Probe, ros_env


def fresh_shell(repo: Path, command: str) -> subprocess.CompletedProcess:
    """``command`` in a bash with only the system PATH, after ``source tools/env.sh``."""
    env = {'HOME': os.environ.get('HOME', '/tmp'), 'PATH': '/usr/local/bin:/usr/bin:/bin'}
    return subprocess.run(['bash', '-c', f'source tools/env.sh && {command}'], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=60)


def test_arsim_track_is_on_the_path(repo_root: Path) -> None:
    result = fresh_shell(repo_root, 'arsim-track --help')
    assert result.returncode == 0, result.stderr
    assert 'usage: arsim-track' in result.stdout


def test_arsim_track_runs_from_another_directory(repo_root: Path, tmp_path: Path) -> None:
    result = fresh_shell(repo_root, f'cd {tmp_path} && arsim-track info arsim_ring')
    assert result.returncode == 0, result.stderr
    assert 'arsim_ring' in result.stdout


def run_sim(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'arsim_launch', *arguments],
                          env=ros_env(79), capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(('argument', 'message'), [
    ('cars:=many', "launch argument cars: expected a whole number of cars from 1 to 64, got "
                   "'many'"),
    ('track:=monza', 'launch argument track: expected a track name in maps/ (arsim_ring, '
                     'arsim_ring_1_14, arsim_ring_1_5, arsim_ring_full_scale, fs_acceleration, '
                     'fs_autocross, fs_skidpad, fs_trackdrive)'),
    ('profile:=racecar', "launch argument profile: expected one of ['calibration_car', "
                         "'f1tenth', 'formula_student', 'full_scale', 'model_1_14', "
                         "'platform_1_5']"),
])
def test_a_bad_launch_argument_stops_start_up_naming_it(argument: str, message: str) -> None:
    result = run_sim(argument)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and 'Traceback' not in result.stderr


def test_track_cars_and_profile_arguments_shape_the_running_simulation(
        simulation, tmp_path: Path) -> None:
    track = tmp_path / 'random_track'
    subprocess.run(['arsim-track', 'random', str(track), '--seed', '3'], check=True,
                   capture_output=True, timeout=60)
    sim = simulation(arguments=(f'track:={track}', 'cars:=3', 'profile:=f1tenth'))
    probe = Probe(sim.domain_id)
    try:
        odoms: dict[str, list] = {}
        for topic in ('/ego_racecar/odom', '/car2/odom', '/car3/odom'):
            odoms[topic] = []
            probe.node.create_subscription(Odometry, topic, odoms[topic].append, 10)
        assert probe.spin_until(lambda: all(odoms.values()), 90.0), sim.log
        assert "3 car(s) on" in sim.log and str(track) in sim.log
        assert "track 'random_track' loaded" in sim.log
    finally:
        probe.close()


def test_sim_time_holds_at_zero_until_the_first_drive_command(simulation) -> None:
    sim = simulation(settings={'simulation': {'start_on_first_command': True}})
    probe = Probe(sim.domain_id)
    try:
        clocks: list[Clock] = []
        scans: list[LaserScan] = []
        probe.node.create_subscription(Clock, '/clock', clocks.append, 10)
        probe.node.create_subscription(LaserScan, '/scan', scans.append, 10)
        drive = probe.node.create_publisher(AckermannDriveStamped, '/drive', 10)
        assert probe.spin_until(lambda: len(scans) >= 2, 90.0), sim.log  # sent again
        probe.spin_until(lambda: False, 1.0)
        assert {(m.clock.sec, m.clock.nanosec) for m in clocks} <= {(0, 0)}, sim.log
        assert all((s.header.stamp.sec, s.header.stamp.nanosec) == (0, 0) for s in scans)
        assert sim.log.count('holding sim time at 0 until a driver sends its first command '
                             'on /drive') == 1

        drive.publish(AckermannDriveStamped())
        assert probe.spin_until(lambda: clocks and clocks[-1].clock.sec >= 1, 60.0), sim.log
        assert "first command from the driver of ['ego']" in sim.log
    finally:
        probe.close()
