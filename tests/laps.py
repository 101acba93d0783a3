"""Following a car along the default track's centerline: how far it got, how close it came to a
wall, whether it lapped. Shared by the tests that drive laps on different backends."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import shapely
from nav_msgs.msg import Odometry
from shapely.geometry import LineString, Polygon
from simharness import (
    UNPACED,
    Probe,
    Simulation,
    driver_process,
    installed_resources,
    stop_process,
)

from arsim_core.config.scenario import load_scenario
from arsim_core.track import load_track

DRIVER = Path(__file__).resolve().parent / 'drivers' / 'follow_the_gap.py'
#: ``simulation`` settings for a driver in its own process: sim time held at 0 until it speaks,
#: then its answer to every scan waited for however loaded the machine is (with sim.yaml's
#: 0.25 s, a driver slowed down by other processes was left behind and steered on old scans
#: into the wall).
DRIVER_WAITED_FOR = {'start_on_first_command': True, 'driver_timeout_s': 10.0}
#: The settings of a lap: that, as fast as possible.
LAP_SIMULATION = {'simulation': {**DRIVER_WAITED_FOR, 'real_time_factor': UNPACED}}


def footprint(x: float, y: float, yaw: float, length: float, width: float) -> Polygon:
    c, s = math.cos(yaw), math.sin(yaw)
    corners = [(dx * length / 2, dy * width / 2) for dx, dy in ((1, 1), (-1, 1), (-1, -1),
                                                               (1, -1))]
    return Polygon([(x + c * px - s * py, y + s * px + c * py) for px, py in corners])


class LapJudge:
    """Follows the car along the centerline: progress, wall clearance, lap completion."""

    def __init__(self, resources: Path) -> None:
        scenario = load_scenario(resources / 'config' / 'sim.yaml', resources)
        self.track = load_track(scenario.track.name, resources / 'maps')
        self.car = scenario.cars[0].profile.footprint
        self.walls = shapely.MultiLineString([LineString(w) for w in self.track.walls])
        closed = np.vstack([self.track.centerline, self.track.centerline[:1]])
        self.centerline = LineString(closed)
        self.length = self.centerline.length
        self.progress = 0.0
        self.last_s: float | None = None
        self.min_clearance = math.inf
        self.samples = 0

    def on_odom(self, odom: Odometry) -> None:
        p, q = odom.pose.pose.position, odom.pose.pose.orientation
        yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y ** 2 + q.z ** 2))
        body = footprint(p.x, p.y, yaw, self.car.length, self.car.width)
        self.min_clearance = min(self.min_clearance, body.distance(self.walls))
        s = self.centerline.project(shapely.Point(p.x, p.y))
        if self.last_s is not None:
            step = (s - self.last_s + self.length / 2) % self.length - self.length / 2
            self.progress += step
        self.last_s = s
        self.samples += 1


def assert_follow_the_gap_laps(sim: Simulation, timeout_s: float = 240.0) -> LapJudge:
    """A follow-the-gap driver in its own process drives ``sim``'s car a whole lap of the
    default track at 3 m/s without touching a wall; how it went."""
    judge = LapJudge(installed_resources())
    driver = driver_process(DRIVER, sim.domain_id, '--speed', '3.0')
    probe = Probe(sim.domain_id)
    try:
        probe.node.create_subscription(Odometry, '/ego_racecar/odom', judge.on_odom, 100)
        lapped = probe.spin_until(lambda: abs(judge.progress) >= judge.length + 1.0, timeout_s)
        assert lapped, (f'progress {judge.progress:.1f} of {judge.length:.1f} m\n{sim.log}')
        assert judge.min_clearance > 0.0, f'touched a wall (clearance {judge.min_clearance})'
        assert judge.samples > 100
    finally:
        probe.close()
        stop_process(driver)
    return judge
