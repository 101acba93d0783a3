"""Sensor republisher: turns one car's raw frames from the bridge into ROS messages.

It reads the bridge's ZeroMQ fan-out in a background thread and publishes LaserScan, odometry
and TF, all stamped with the frame's sim time. Static sensor mounts go to /tf_static once.
"""

from __future__ import annotations

import array
import threading
from collections.abc import Mapping
from typing import Any

import zmq
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import LaserScan
from tf2_msgs.msg import TFMessage

from arsim_bridge import qos
from arsim_bridge.common import declare_scenario, run_node, to_time
from arsim_bridge.frames import car_topic, decode_car_frame
from arsim_core.config.sensors import Lidar2DSpec
from arsim_core.errors import ArsimError, ProtocolError
from arsim_core.geometry import relative_pose, rpy_to_quaternion, yaw_to_quaternion


class SensorNode(Node):
    def __init__(self, **node_options: Any) -> None:
        super().__init__('sensors', **node_options)
        scenario = declare_scenario(self)
        name = self.declare_parameter('car', '').value
        if name not in [c.name for c in scenario.cars]:
            msg = f'{scenario.source}: no car named {name!r} (parameter car)'
            raise ArsimError(msg)
        self.car = scenario.car(name)
        self.names = self.car.names
        self.odom_origin: tuple[float, float, float] | None = None

        self.odom_pub = self.create_publisher(Odometry, 'odom', qos.SENSOR)
        self.tf_pub = self.create_publisher(TFMessage, '/tf', qos.TF)
        self.tf_static_pub = self.create_publisher(TFMessage, '/tf_static', qos.TF_STATIC)
        lidars = [s for s in self.car.profile.sensors if isinstance(s, Lidar2DSpec)]
        self.scan_pubs = {s.name: self.create_publisher(LaserScan, s.name, qos.SENSOR)
                          for s in lidars}
        # Messages are filled once and only their changing fields are set per frame.
        self._scans = {s.name: self._scan_template(s) for s in lidars}
        self._odom = Odometry()
        self._odom.header.frame_id = self.names.odom_frame
        self._odom.child_frame_id = self.names.base_frame
        transform = TransformStamped()
        transform.header.frame_id = self.names.odom_frame
        transform.child_frame_id = self.names.base_frame
        self._tf = TFMessage(transforms=[transform])
        self._publish_static()

        self._socket = zmq.Context.instance().socket(zmq.SUB)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.SUBSCRIBE, car_topic(name))
        self._socket.connect(scenario.backend.frames_address)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def _publish_static(self) -> None:
        transforms = []
        for sensor in self.car.profile.sensors:
            m = sensor.mount
            t = TransformStamped()
            t.header.frame_id = self.names.base_frame
            t.child_frame_id = self.names.sensor_frames[sensor.name]
            t.transform.translation.x, t.transform.translation.y = m.x, m.y
            t.transform.translation.z = m.z
            q = rpy_to_quaternion(m.roll, m.pitch, m.yaw)
            (t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
             t.transform.rotation.w) = q
            transforms.append(t)
        self.tf_static_pub.publish(TFMessage(transforms=transforms))

    def _receive(self) -> None:
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(100):
                continue
            frames = self._socket.recv_multipart(copy=False)
            try:
                message = decode_car_frame(frames)
                self._publish(message.time_ns, message.header['state'], message)
            except (ProtocolError, KeyError, TypeError, ValueError) as exc:
                self.get_logger().error(f'dropped a malformed frame: {exc}',
                                        throttle_duration_sec=2.0)

    def _publish(self, time_ns: int, state: Mapping[str, Any], message: Any) -> None:
        stamp = to_time(time_ns)
        x, y, yaw = state['pose']
        if self.names.odom_relative_to_start:
            if self.odom_origin is None:
                self.odom_origin = (x, y, yaw)
            x, y, yaw = relative_pose(self.odom_origin, (x, y, yaw))
        q = self._odom.pose.pose.orientation
        q.x, q.y, q.z, q.w = yaw_to_quaternion(yaw)
        odom = self._odom
        odom.header.stamp = stamp
        p = odom.pose.pose.position
        p.x, p.y = float(x), float(y)
        vx, vy, wz = state['twist']
        odom.twist.twist.linear.x, odom.twist.twist.linear.y = float(vx), float(vy)
        odom.twist.twist.angular.z = float(wz)
        self.odom_pub.publish(odom)

        tf = self._tf.transforms[0]
        tf.header.stamp = stamp
        tf.transform.translation.x, tf.transform.translation.y = float(x), float(y)
        tf.transform.rotation = q
        self.tf_pub.publish(self._tf)

        for entry in message.header['frames']:
            scan = self._scans.get(entry.get('sensor'))
            if scan is not None:
                scan.header.stamp = stamp
                values = array.array('f')
                values.frombytes(message.arrays[entry['name']].tobytes())
                scan.ranges = values
                self.scan_pubs[entry['sensor']].publish(scan)

    def _scan_template(self, spec: Lidar2DSpec) -> LaserScan:
        """Everything of a LaserScan but the stamp and the ranges, filled once."""
        scan = LaserScan()
        scan.header.frame_id = self.names.sensor_frames[spec.name]
        scan.angle_min = spec.angle_min
        scan.angle_max = spec.angle_min + spec.angle_increment * (spec.beams - 1)
        scan.angle_increment = spec.angle_increment
        scan.scan_time = 1.0 / spec.rate_hz
        scan.range_min = spec.range_min
        scan.range_max = spec.range_max
        return scan

    def destroy_node(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)
        self._socket.close()
        super().destroy_node()


def main() -> int:
    return run_node(SensorNode)
