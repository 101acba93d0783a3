"""Sensor republisher: turns one car's raw frames from the bridge into ROS messages.

It reads the bridge's ZeroMQ fan-out in a background thread. Every frame it publishes the car's
odometry and TF (the topic map's odom topic and frames) and hands the frame to one republisher
per sensor of the car profile (``arsim_bridge.republishers``): LaserScan, PointCloud2, images,
IMU, NavSatFix, wheel and ground-truth odometry, all stamped in sim time. Sensor mounts (and
camera optical frames) go to /tf_static once.
"""

from __future__ import annotations

import threading
from typing import Any

import zmq
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage

from arsim_bridge import dds, qos, stopping
from arsim_bridge.common import declare_car, declare_scenario, run_node, set_pose_2d, to_time
from arsim_bridge.fanout import car_topic, decode_car_frame
from arsim_bridge.ledger import CountingNode
from arsim_bridge.republishers import REPUBLISHERS, Republisher, SensorContext
from arsim_bridge.republishers.base import CarFrame
from arsim_core.errors import ProtocolError
from arsim_core.geometry import relative_pose
from arsim_core.heartbeat import Heartbeat
from arsim_core.messages import FanoutFrame
from arsim_core.recording.ledger import sensors_publisher
from arsim_core.sensors.kinematics import PlanarState, body_acceleration

# Large clouds and images need a bigger shared-memory segment than Fast DDS's default; set
# before any node of this process initialises rclpy (also when a container imports it).
dds.prefer_large_shared_memory()

THREAD_STOP_S = 5.0  # the receive thread checks for a stop every 0.1 s between frames


class SensorNode(CountingNode):
    def __init__(self, **node_options: Any) -> None:
        super().__init__('sensors', **node_options)
        # destroy_node also runs for a node whose construction stopped half-way (a bad
        # scenario, a stop signal): what it tears down exists from here on.
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._socket: zmq.Socket[bytes] | None = None
        scenario = declare_scenario(self)
        self.car = declare_car(self, scenario)
        name = self.car.name
        self.names = self.car.names
        self.odom_origin: tuple[float, float, float] | None = None
        self.previous: PlanarState | None = None

        self.start_counting(scenario, sensors_publisher(name))
        self.odom_pubs = [self.create_publisher(Odometry, topic, qos.SENSOR)
                          for topic in ('odom', *self.names.odom_aliases)]
        self.tf_pub = self.create_publisher(TFMessage, '/tf', qos.TF)
        self.tf_static_pub = self.create_publisher(TFMessage, '/tf_static', qos.TF_STATIC)
        self.republishers: list[Republisher] = [
            REPUBLISHERS[spec.kind](SensorContext(
                node=self, spec=spec, car=name, topic=self.names.sensor_topics[spec.name],
                frame=self.names.sensor_frames[spec.name], base_frame=self.names.base_frame,
                seed=1000 * self.car.index + index,
                wheelbase=self.car.profile.vehicle.params.body.wheelbase, scenario=scenario))
            for index, spec in enumerate(self.car.profile.sensors)]
        # Messages are filled once and only their changing fields are set per frame.
        self._odom = Odometry()
        self._odom.header.frame_id = self.names.odom_frame
        self._odom.child_frame_id = self.names.base_frame
        transform = TransformStamped()
        transform.header.frame_id = self.names.odom_frame
        transform.child_frame_id = self.names.base_frame
        self._tf = TFMessage(transforms=[transform])
        transforms = [t for r in self.republishers for t in r.static_transforms()]
        if transforms:
            self.tf_static_pub.publish(TFMessage(transforms=transforms))
        self.report_published(0)

        socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.SUB)
        self._socket = socket
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.SUBSCRIBE, car_topic(name))
        socket.connect(scenario.backend.frames_address)
        self._thread = stopping.start_worker(self, lambda: self._receive(socket),
                                             'frame receive')

    def _receive(self, socket: zmq.Socket[bytes]) -> None:
        poller = zmq.Poller()
        poller.register(socket, zmq.POLLIN)
        alive = Heartbeat.from_environment(f'{self.get_name()}-receive')
        while not self._stop.is_set():
            alive.beat()
            if not poller.poll(100):
                continue
            frames = socket.recv_multipart(copy=False)
            try:
                self._publish(*decode_car_frame(frames))
            except (ProtocolError, KeyError, TypeError, ValueError) as exc:
                self.get_logger().error(f'dropped a malformed frame: {exc}',
                                        throttle_duration_sec=2.0)

    def _publish(self, step: int, time_ns: int, sent: FanoutFrame) -> None:
        current = PlanarState(time_ns, *sent.pose, *sent.twist, sent.steering_angle)
        self._publish_odometry(time_ns, current)
        frame = CarFrame(step=step, time_ns=time_ns, state=current, previous=self.previous,
                         accel=self._accel(sent.accel, current), arrays=sent.arrays,
                         meta=sent.meta)
        for republisher in self.republishers:
            republisher.publish(frame)
        self.previous = current
        self.report_published(time_ns)

    def _accel(self, accel: tuple[float, ...] | None,
               current: PlanarState) -> tuple[float, float, float] | None:
        """The bridge's ``state.accel`` [ax, ay(, yaw acceleration)] if it sends one; a missing
        yaw acceleration is differenced. None: the IMU differences everything itself."""
        if not accel:
            return None
        yaw_acceleration = accel[2] if len(accel) > 2 else \
            body_acceleration(self.previous, current)[2]
        return accel[0], accel[1], yaw_acceleration

    def _publish_odometry(self, time_ns: int, state: PlanarState) -> None:
        stamp = to_time(time_ns)
        x, y, yaw = state.x, state.y, state.yaw
        if self.names.odom_relative_to_start:
            if self.odom_origin is None:
                self.odom_origin = (x, y, yaw)
            x, y, yaw = relative_pose(self.odom_origin, (x, y, yaw))
        odom = self._odom
        odom.header.stamp = stamp
        set_pose_2d(odom.pose.pose, x, y, yaw)
        odom.twist.twist.linear.x, odom.twist.twist.linear.y = state.vx, state.vy
        odom.twist.twist.angular.z = state.yaw_rate
        for publisher in self.odom_pubs:  # the odom topic, then aliases such as opp_odom
            publisher.publish(odom)

        tf = self._tf.transforms[0]
        tf.header.stamp = stamp
        tf.transform.translation.x, tf.transform.translation.y = float(x), float(y)
        tf.transform.rotation = odom.pose.pose.orientation
        self.tf_pub.publish(self._tf)

    def destroy_node(self) -> None:
        # The thread publishes: it must be gone before the publishers and the context are.
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=THREAD_STOP_S)
        if self._socket is not None:
            self._socket.close()
        super().destroy_node()


def main() -> int:
    return run_node(SensorNode)
