"""One republisher per sensor type: each turns a car's frame (its state and the backend's raw
arrays) into that sensor's ROS messages, on topics and frames named by the topic map."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from arsim_bridge.republishers.base import Republisher, SensorContext
from arsim_bridge.republishers.camera import CameraRepublisher
from arsim_bridge.republishers.cones import ConesRepublisher
from arsim_bridge.republishers.encoders import WheelEncodersRepublisher
from arsim_bridge.republishers.gnss import GnssRepublisher
from arsim_bridge.republishers.imu import ImuRepublisher
from arsim_bridge.republishers.lidar import CloudRepublisher, ScanRepublisher
from arsim_bridge.republishers.objects import ObjectsRepublisher
from arsim_bridge.republishers.odometry import GroundTruthRepublisher, WheelOdometryRepublisher

REPUBLISHERS: Mapping[str, Callable[[SensorContext], Republisher]] = {
    'lidar2d': ScanRepublisher,
    'lidar3d': CloudRepublisher,
    'camera': CameraRepublisher,
    'imu': ImuRepublisher,
    'gnss': GnssRepublisher,
    'wheel_odometry': WheelOdometryRepublisher,
    'wheel_encoders': WheelEncodersRepublisher,
    'ground_truth': GroundTruthRepublisher,
    'objects': ObjectsRepublisher,
    'cones': ConesRepublisher,
}

__all__ = ['REPUBLISHERS', 'Republisher', 'SensorContext']
