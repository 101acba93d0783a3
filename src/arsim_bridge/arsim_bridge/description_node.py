"""Car description publisher: one car's URDF and its body transforms, for RViz's RobotModel.

It stands in for robot_state_publisher where that is not installed (the ROS 2 runtime from
PyPI has none). Both are latched, so RViz started at any time gets them:

* ``robot_description`` (std_msgs/String, transient local, depth 1), remapped by the launch to
  the car's namespace, e.g. ``/ego_racecar/robot_description``;
* ``/tf_static``: the URDF's fixed joints in one message, except the sensor frames, which the
  car's sensor node already publishes from the same profile mounts; publishing them twice from
  two nodes would only invite the two to drift apart.
"""

from __future__ import annotations

from typing import Any

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from arsim_bridge import qos
from arsim_bridge.common import declare_car, declare_scenario, run_node
from arsim_core.description import FixedJoint, fixed_joints, robot_description
from arsim_core.geometry import rpy_to_quaternion


class DescriptionNode(Node):
    def __init__(self, **node_options: Any) -> None:
        super().__init__('description', **node_options)
        scenario = declare_scenario(self)
        car = declare_car(self, scenario)
        name = car.name
        urdf = robot_description(car)
        sensor_frames = set(car.names.sensor_frames.values())
        body = [j for j in fixed_joints(urdf) if j.child not in sensor_frames]

        self.description_pub = self.create_publisher(String, 'robot_description', qos.LATCHED)
        self.tf_static_pub = self.create_publisher(TFMessage, '/tf_static', qos.TF_STATIC)
        self.description_pub.publish(String(data=urdf))
        self.tf_static_pub.publish(TFMessage(transforms=[_transform(j) for j in body]))
        self.get_logger().info(
            f'description of car {name!r} on {self.description_pub.topic_name}, '
            f'{len(body)} body transform(s) on /tf_static')


def _transform(joint: FixedJoint) -> TransformStamped:
    """A static transform, stamped 0 as the sensor node's: static transforms hold at all times."""
    t = TransformStamped()
    t.header.frame_id = joint.parent
    t.child_frame_id = joint.child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = joint.xyz
    q = t.transform.rotation
    q.x, q.y, q.z, q.w = rpy_to_quaternion(*joint.rpy)
    return t


def main() -> int:
    return run_node(DescriptionNode)
