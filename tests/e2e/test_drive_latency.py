"""Actuator dead time seen from outside: an independent node drives a step and times the response.

The probe is the car's driver: it answers every scan (``wait_for_drivers``, so the pipeline's own
latency is exactly the documented two frames, docs/dynamics-node.md), first with a standstill
command, then with a step to 2 m/s. The first odometry that shows the car moving, against the
scan the step answered, gives the latency; a profile's drive dead time must add to it, to within
one frame.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from ackermann_msgs.msg import AckermannDriveStamped
from nav_msgs.msg import Odometry
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan
from simharness import Probe, Simulation, installed_resources

from arsim_core.config.scenario import load_scenario

FRAME_RATE_HZ = 40.0
STEP_AT_S = 0.5  # the probe answers scans stamped from here on with the step
PIPELINE_FRAMES = 2  # a driver's answer to the scan of t_k first moves the car in t_{k+2}


def stamp_s(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


class StepProbe:
    """Answers each scan of ``car`` with 0 m/s before ``STEP_AT_S`` and 2 m/s after; notes the
    stamp of the first scan answered with the step and of the first odometry in motion."""

    def __init__(self, sim: Simulation, car: str) -> None:
        names = load_scenario(sim.settings_file, installed_resources()).car(car).names
        self.probe = Probe(sim.domain_id, 'latency_probe')
        node = self.probe.node
        self.drive = node.create_publisher(AckermannDriveStamped, names.drive_topic, 10)
        self.stepped_at: float | None = None
        self.moving_at: float | None = None
        node.create_subscription(LaserScan, names.sensor_topics['scan'], self.on_scan,
                                 qos_profile_sensor_data)
        node.create_subscription(Odometry, names.odom_topic, self.on_odom,
                                 qos_profile_sensor_data)

    def on_scan(self, scan: LaserScan) -> None:
        command = AckermannDriveStamped()
        command.header.stamp = scan.header.stamp
        t = stamp_s(scan.header.stamp)
        if t >= STEP_AT_S - 1e-9:
            command.drive.speed = 2.0
            if self.stepped_at is None:
                self.stepped_at = t
        self.drive.publish(command)

    def on_odom(self, odom: Odometry) -> None:
        if self.moving_at is None and odom.twist.twist.linear.x > 1e-6:
            self.moving_at = stamp_s(odom.header.stamp)

    def latency_s(self, sim: Simulation) -> float:
        assert self.probe.spin_until(lambda: self.moving_at is not None, 60.0), sim.log
        assert self.stepped_at is not None
        return self.moving_at - self.stepped_at


def profile_with(folder: Path, actuators: str) -> Path:
    """config/cars/f1tenth.yaml with an ``Actuators`` section (flow YAML); its scan runs at
    40 Hz, the frame rate, so every frame has a scan to answer."""
    text = (installed_resources() / 'config' / 'cars' / 'f1tenth.yaml').read_text()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / 'car.yaml'
    path.write_text(f'{text}\nActuators: {actuators}\n')
    return path


def test_a_drive_step_reaches_the_odometry_after_the_dead_time(simulation, tmp_path) -> None:
    dead_time_s = 0.1  # four frames
    profile = profile_with(tmp_path / 'profiles', f'{{drive: {{dead_time: {dead_time_s}}}}}')
    sim = simulation(settings={
        'simulation': {'frame_rate_hz': FRAME_RATE_HZ, 'wait_for_drivers': True},
        'cars': [{'name': 'ego', 'profile': str(profile)}]})
    probe = StepProbe(sim, 'ego')
    try:
        latency = probe.latency_s(sim)
    finally:
        probe.probe.close()
    frame = 1.0 / FRAME_RATE_HZ
    expected = PIPELINE_FRAMES * frame + dead_time_s
    assert abs(latency - expected) <= frame + 1e-6, (latency, expected)


class LateScanProbe:
    """Answers each ``scan`` of the ego with a standstill command and notes, for each sample of
    its second LiDAR ``late_scan``, the stamp of the ``scan`` that went out in the same frame
    (the car's republisher publishes its sensors in the profile's order) and its own stamp."""

    def __init__(self, sim: Simulation) -> None:
        names = load_scenario(sim.settings_file, installed_resources()).car('ego').names
        self.probe = Probe(sim.domain_id, 'scan_latency_probe')
        node = self.probe.node
        self.scan_s: float | None = None
        self.seen: list[tuple[float, float]] = []  # (stamp of the frame's scan, late stamp)
        self.drive = node.create_publisher(AckermannDriveStamped, names.drive_topic, 10)
        node.create_subscription(LaserScan, names.sensor_topics['scan'], self.on_scan,
                                 qos_profile_sensor_data)
        node.create_subscription(LaserScan, names.sensor_topics['late_scan'], self.on_late,
                                 qos_profile_sensor_data)

    def on_scan(self, scan: LaserScan) -> None:
        self.scan_s = stamp_s(scan.header.stamp)
        command = AckermannDriveStamped()
        command.header.stamp = scan.header.stamp
        self.drive.publish(command)

    def on_late(self, scan: LaserScan) -> None:
        if self.scan_s is not None:
            self.seen.append((self.scan_s, stamp_s(scan.header.stamp)))


def test_a_late_scan_goes_out_its_latency_after_its_capture_stamped_then(simulation,
                                                                          tmp_path) -> None:
    """A second LiDAR 50 ms late (two frames) beside the car's scan: each of its samples goes
    out with the scan captured 50 ms after it, to 1 us, and none is lost."""
    latency_s = 0.05
    text = (installed_resources() / 'config' / 'cars' / 'f1tenth.yaml').read_text()
    late = (f'  late_scan:\n    type: lidar2d\n    position: [0.27, 0.0, 0.11]\n'
            f'    rate_hz: 40.0\n    beams: 270\n    fov_rad: 4.7\n    range_max: 30.0\n'
            f'    latency: {latency_s}\n')
    profile = tmp_path / 'late' / 'car.yaml'
    profile.parent.mkdir(parents=True)
    profile.write_text(text.replace('    range_max: 30.0\n', '    range_max: 30.0\n' + late, 1))
    sim = simulation(settings={
        'simulation': {'frame_rate_hz': FRAME_RATE_HZ, 'wait_for_drivers': True},
        'cars': [{'name': 'ego', 'profile': str(profile)}]})
    probe = LateScanProbe(sim)
    try:
        assert probe.probe.spin_until(lambda: len(probe.seen) >= 40, 60.0), sim.log
    finally:
        probe.probe.close()
    settled = probe.seen[10:40]
    for scan_s, late_s in settled:
        assert abs(scan_s - late_s - latency_s) < 1e-6, (scan_s, late_s)
    stamps = [late_s for _, late_s in settled]
    assert all(abs(b - a - 1.0 / FRAME_RATE_HZ) < 1e-6 for a, b in itertools.pairwise(stamps))
    assert sim.stop() == 0, sim.log
