"""The autopilot: follow-the-gap for every car without a driver of its own
(``simulation.autopilot: follow_the_gap``), so a simulation started without a stack (to watch
it, to try a track) races at once, and for each car whose ``driver`` is ``follow_the_gap``
(the line drivers of the zoo drive from the bridge, ``drivers.pilots``).

It drives as a user's stack does, on the car's own topics: each 2D scan in, one
AckermannDriveStamped out on the car's drive topic, stamped with the scan's time, so the
bridge's lockstep waits for it like for any driver. The driver is the zoo's ``GapDriver``:
``arsim_core.policies.autopilot``, the gym's follow-the-gap opponent at the car's steering
limit and a share of its top speed, which backs out of a wall it has stood against for a
second (its speed from the car's odometry). In a race event it holds its slots while a
standing start's lights are on, as /arsim/race shows them (10 times a second of sim time).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from ackermann_msgs.msg import AckermannDriveStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.publisher import Publisher
from sensor_msgs.msg import LaserScan

from arsim_bridge import qos
from arsim_bridge.common import declare_scenario, run_node
from arsim_core.config.drivers import FOLLOW_THE_GAP
from arsim_core.config.race_event import RACE, STANDING
from arsim_core.drivers.zoo import GapDriver
from arsim_msgs.msg import RaceStatus


class Autopilot(Node):
    def __init__(self, **node_options: Any) -> None:
        super().__init__('autopilot', **node_options)
        scenario = declare_scenario(self)
        event = scenario.race.event
        # a standing start holds from t=0, before the first /arsim/race arrives
        self.held = event is not None and event.sessions[0].start == STANDING \
            and event.sessions[0].kind == RACE
        self.create_subscription(RaceStatus, scenario.topic_map.race_topic, self._on_race,
                                 qos.LATCHED)
        driven = []
        self.speeds: dict[str, float] = {}  # each driven car's, from its odometry
        for car in scenario.cars:
            if car.driver != FOLLOW_THE_GAP and (car.driver or scenario.autopilot == 'none'):
                continue
            driver = GapDriver(car)  # acts on every scan
            scan = driver.scan
            assert scan is not None  # its car's first 2D LiDAR (GapDriver refuses one without)
            drive = self.create_publisher(AckermannDriveStamped, car.names.drive_topic,
                                          qos.STREAM)
            topic = car.names.sensor_topics[scan.name]
            self.speeds[car.name] = 0.0
            self.create_subscription(Odometry, car.names.odom_topic, functools.partial(
                self._on_odom, car.name), qos.SENSOR)
            self.create_subscription(LaserScan, topic, functools.partial(
                self._on_scan, car.name, driver, drive), qos.SENSOR)
            driven.append(f'{car.name} ({topic} -> {car.names.drive_topic})')
        self.get_logger().info(f'autopilot (follow the gap) drives {", ".join(driven)}')

    def _on_race(self, msg: RaceStatus) -> None:
        self.held = msg.flag == RaceStatus.FLAG_LIGHTS

    def _on_odom(self, car: str, odom: Odometry) -> None:
        self.speeds[car] = odom.twist.twist.linear.x

    def _on_scan(self, car: str, driver: GapDriver, drive: Publisher, scan: LaserScan) -> None:
        steering, speed = (0.0, 0.0) if self.held else \
            driver.drive(np.asarray(scan.ranges, np.float32), self.speeds[car])
        command = AckermannDriveStamped()
        command.header.stamp = scan.header.stamp
        command.header.frame_id = scan.header.frame_id
        command.drive.steering_angle, command.drive.speed = float(steering), float(speed)
        drive.publish(command)


def main() -> int:
    return run_node(Autopilot)
