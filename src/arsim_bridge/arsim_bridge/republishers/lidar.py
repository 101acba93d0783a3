"""LiDAR republishers: LaserScan from a 2D scanner's ranges, an organised PointCloud2 in the
ouster-ros layout from a 3D LiDAR's ranges, intensities and reflectivities."""

from __future__ import annotations

import array

import numpy as np
from sensor_msgs.msg import LaserScan, PointCloud2, PointField

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_bridge.republishers.base import (
    CarFrame,
    SensorContext,
    float_array,
    mount_transforms,
)
from arsim_core import beams, labels
from arsim_core.config.sensors import Lidar2DSpec, Lidar3DSpec
from arsim_core.sensors import cloud


class ScanRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        spec: Lidar2DSpec = ctx.spec
        self.pub = ctx.node.create_publisher(LaserScan, ctx.topic, qos.SENSOR)
        scan = self.msg = LaserScan()  # filled once; stamp, ranges, intensities per frame
        scan.header.frame_id = ctx.frame
        scan.angle_min = spec.angle_min
        scan.angle_max = spec.angle_min + spec.angle_increment * (spec.beams - 1)
        scan.angle_increment = spec.angle_increment
        scan.scan_time = 1.0 / spec.rate_hz
        scan.range_min, scan.range_max = spec.range_min, spec.range_max

    def static_transforms(self) -> list:
        return mount_transforms(self.ctx)

    def publish(self, frame: CarFrame) -> None:
        car, name = self.ctx.car, self.ctx.spec.name
        ranges = frame.array(car, name)
        if ranges is None:
            return
        self.msg.header.stamp = to_time(frame.stamp_ns(car, name))
        self.msg.ranges = float_array(ranges)
        intensity = frame.array(car, name, '/intensity')
        self.msg.intensities = float_array(intensity) if intensity is not None \
            else array.array('f')
        self.pub.publish(self.msg)


class CloudRepublisher:
    """Points are written straight into the message's byte buffer through a structured numpy
    view; the fields that never change (t, ring, ambient) are written once."""

    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        spec: Lidar3DSpec = ctx.spec
        self.pub = ctx.node.create_publisher(PointCloud2, ctx.topic, qos.SENSOR)
        rows, columns = spec.channels, spec.columns
        directions = beams.spinning_directions(spec.horizontal_start_rad,
                                               spec.azimuth_increment, columns,
                                               spec.elevations_rad).astype(np.float32)
        self.directions = [np.ascontiguousarray(directions[..., i]) for i in range(3)]
        msg = self.msg = PointCloud2()
        msg.header.frame_id = ctx.frame
        msg.height, msg.width = rows, columns
        fields = (*cloud.FIELDS, cloud.LABEL_FIELD) if spec.labels else cloud.FIELDS
        msg.fields = [PointField(name=n, offset=o, datatype=t, count=1) for n, o, t in fields]
        msg.is_bigendian = False
        msg.point_step = cloud.POINT_STEP
        msg.row_step = cloud.POINT_STEP * columns
        msg.is_dense = False
        self.buffer = array.array('B', bytes(rows * columns * cloud.POINT_STEP))
        self.points = np.frombuffer(self.buffer, dtype=cloud.POINT_DTYPE).reshape(rows, columns)
        period = beams.scan_period_ns(spec.rate_hz, ctx.frame_period_ns)
        self.points['t'] = beams.column_offsets_ns(period, columns)[None, :]
        self.points['ring'] = np.arange(rows, dtype=np.uint16)[:, None]
        self.points['ambient'] = 0
        self.points['label'] = labels.NONE
        msg.data = self.buffer

    def static_transforms(self) -> list:
        return mount_transforms(self.ctx)

    def publish(self, frame: CarFrame) -> None:
        car, name = self.ctx.car, self.ctx.spec.name
        ranges = frame.array(car, name)
        if ranges is None:
            return
        points = self.points
        invalid = ~np.isfinite(ranges)
        with np.errstate(invalid='ignore'):  # inf * 0; replaced just below
            for axis, direction in zip('xyz', self.directions, strict=True):
                np.multiply(ranges, direction, out=points[axis])
                np.copyto(points[axis], ranges, where=invalid)  # REP-117 value on all three
        intensity = frame.array(car, name, '/intensity')
        reflectivity = frame.array(car, name, '/reflectivity')
        points['intensity'] = 0.0 if intensity is None else intensity
        points['reflectivity'] = 0 if reflectivity is None else reflectivity
        millimetres = np.rint(np.where(invalid, 0.0, ranges) * 1000.0)
        points['range'] = millimetres.astype(np.uint32)
        point_labels = frame.array(car, name, '/labels')
        if point_labels is not None:
            points['label'] = point_labels
        self.msg.header.stamp = to_time(frame.stamp_ns(car, name))
        self.msg.data = self.buffer
        self.pub.publish(self.msg)
