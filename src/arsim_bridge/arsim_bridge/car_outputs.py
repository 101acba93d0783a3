"""What one car publishes every frame: its odometry (and aliases such as opp_odom), its
odom -> base_link transform, and each sensor's messages through the sensor's republisher
(``arsim_bridge.republishers``), from the frame's rendered and computed arrays; the sensor
mounts (and camera optical frames) as static transforms, once. Nothing here draws noise: the
engine computes every sensor's values (``arsim_core.sensors.computed``).

The publishers come from any object with rclpy's ``create_publisher``: the car's sensor node
(``sensor_node``), or the bag writer of ``arsim-dataset generate`` (``bag_node``), so a run
recorded without DDS holds the same messages as one recorded from the ROS graph.
"""

from __future__ import annotations

from typing import Any

from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage

from arsim_bridge import qos
from arsim_bridge.common import set_pose_2d, to_time
from arsim_bridge.republishers import REPUBLISHERS, Republisher, SensorContext
from arsim_bridge.republishers.base import CarFrame
from arsim_core.config.scenario import CarSpec, Scenario
from arsim_core.geometry import relative_pose
from arsim_core.protocol.messages import FanoutFrame
from arsim_core.sensors.kinematics import PlanarState


class CarOutputs:
    """The publishers and the filled-once messages of one car; ``publish`` per frame."""

    def __init__(self, node: Any, scenario: Scenario, car: CarSpec) -> None:
        """``node`` makes the publishers; the odometry goes to its relative topic ``odom``,
        which the launcher remaps to the topic map's odom topic."""
        self.names = names = car.names
        self.odom_origin: tuple[float, float, float] | None = None
        self.odom_pubs = [node.create_publisher(Odometry, topic, qos.SENSOR)
                          for topic in ('odom', *names.odom_aliases)]
        self.tf_pub = node.create_publisher(TFMessage, '/tf', qos.TF)
        self.tf_static_pub = node.create_publisher(TFMessage, '/tf_static', qos.TF_STATIC)
        self.republishers: list[Republisher] = [
            REPUBLISHERS[spec.kind](SensorContext(
                node=node, spec=spec, car=car.name, topic=names.sensor_topics[spec.name],
                frame=names.sensor_frames[spec.name], base_frame=names.base_frame,
                scenario=scenario))
            for spec in car.profile.sensors]
        # Messages are filled once and only their changing fields are set per frame.
        self._odom = Odometry()
        self._odom.header.frame_id = names.odom_frame
        self._odom.child_frame_id = names.base_frame
        transform = TransformStamped()
        transform.header.frame_id = names.odom_frame
        transform.child_frame_id = names.base_frame
        self._tf = TFMessage(transforms=[transform])

    def publish_static(self) -> None:
        """The sensor mounts on /tf_static (latched), if the car has any."""
        transforms = [t for r in self.republishers for t in r.static_transforms()]
        if transforms:
            self.tf_static_pub.publish(TFMessage(transforms=transforms))

    def publish(self, step: int, time_ns: int, sent: FanoutFrame) -> None:
        """One frame: odometry and TF, then every sensor's messages."""
        current = PlanarState(time_ns, *sent.pose, *sent.twist, sent.steering_angle)
        self._publish_odometry(time_ns, current)
        frame = CarFrame(step=step, time_ns=time_ns, state=current, arrays=sent.arrays,
                         meta=sent.meta)
        for republisher in self.republishers:
            republisher.publish(frame)

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
        if not self.names.odom_tf:  # the user's odometry node owns odom -> base_link
            return
        tf = self._tf.transforms[0]
        tf.header.stamp = stamp
        tf.transform.translation.x, tf.transform.translation.y = float(x), float(y)
        tf.transform.rotation = odom.pose.pose.orientation
        self.tf_pub.publish(self._tf)
