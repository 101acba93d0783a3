"""A car's ``arsim_msgs/CarState`` message, built in one place from its vehicle: what the ROS
dynamics node publishes each frame and what the dataset runner records are the same fields."""

from __future__ import annotations

from arsim_bridge.common import pose_2d, to_time
from arsim_core.dynamics import Vehicle
from arsim_msgs.msg import CarState


def car_state_message(car: str, vehicle: Vehicle, time_ns: int, world_frame: str) -> CarState:
    """``vehicle``'s pose, body velocity and acceleration, steering angle and model state at
    ``time_ns``, in ``world_frame``."""
    msg = CarState(car_id=car, model=vehicle.model_name, steering_angle=vehicle.steering_angle)
    msg.header.stamp = to_time(time_ns)
    msg.header.frame_id = world_frame
    msg.pose = pose_2d(*vehicle.pose)
    msg.twist.linear.x, msg.twist.linear.y, msg.twist.angular.z = vehicle.body_velocity
    msg.accel.linear.x, msg.accel.linear.y = vehicle.body_acceleration
    msg.model_state = [float(s) for s in vehicle.state]
    return msg
