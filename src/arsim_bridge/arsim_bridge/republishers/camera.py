"""Camera republisher: rgb8, 32FC1 depth [m] and mono8 class-id images, each with its
CameraInfo, in the camera's optical frame (REP-103: ``<frame>_optical``, z forward, x right,
y down), and the class legend latched as JSON.

Topics, under the camera's topic ``<topic>``: ``<topic>/image_raw`` + ``<topic>/camera_info``,
``<topic>/depth/image_raw`` + ``<topic>/depth/camera_info``, ``<topic>/semantic/image_raw`` +
``<topic>/semantic/camera_info``, and ``<topic>/legend`` (std_msgs/String, transient local).
A camera with the semantic output also publishes its 2D ground truth on ``<topic>/detections``
(vision_msgs/Detection2DArray): a box per object seen, from the semantic image's own pixels
(``arsim_core.sensors.ground_truth``), the class as FSOCO names it, score 1, id 1, 2, ...;
with each box's truncation and occlusion flags and pixel count on
``<topic>/detections/flags`` (arsim_msgs/Detection2DFlags) and the instance mask on
``<topic>/instances/image_raw`` (16UC1: the id of the detection each pixel shows, 0 none).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import String
from vision_msgs.msg import (
    Detection2D,
    Detection2DArray,
    ObjectHypothesis,
    ObjectHypothesisWithPose,
)

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_bridge.republishers.base import (
    CarFrame,
    SensorContext,
    byte_array,
    mount_transforms,
    static_transform,
)
from arsim_core.config.sensors import CameraSpec, Mount
from arsim_core.labels import legend_json
from arsim_core.pinhole import OPTICAL_RPY
from arsim_core.sensors.ground_truth import Box2D, boxes
from arsim_msgs.msg import Detection2DFlags

# output -> (topic below the camera's, encoding, bytes per pixel)
OUTPUTS = {'rgb': ('', 'rgb8', 3), 'depth': ('/depth', '32FC1', 4),
           'semantic': ('/semantic', 'mono8', 1)}


def camera_info(spec: CameraSpec, frame: str) -> CameraInfo:
    """The camera's model exactly as the backend renders it: K (and P) from its intrinsics or
    its horizontal field of view, and its lens's model and coefficients in OpenCV's order
    (``plumb_bob`` with zeros for an ideal pinhole); R the identity (a monocular camera)."""
    intrinsics = spec.intrinsics
    info = CameraInfo()
    info.header.frame_id = frame
    info.width, info.height = spec.width, spec.height
    info.distortion_model = spec.distortion_model or 'plumb_bob'
    info.d = list(spec.distortion) if spec.distortion_model else [0.0] * 5
    info.k = intrinsics.k
    info.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    info.p = intrinsics.p
    return info


class CameraRepublisher:
    def __init__(self, ctx: SensorContext) -> None:
        self.ctx = ctx
        spec: CameraSpec = ctx.spec
        self.optical_frame = f'{ctx.frame}_optical'
        node = ctx.node
        self.images: dict[str, tuple[Any, Image]] = {}
        self.infos: dict[str, tuple[Any, CameraInfo]] = {}
        for output in spec.outputs:
            below, encoding, size = OUTPUTS[output]
            image = Image()
            image.header.frame_id = self.optical_frame
            image.height, image.width = spec.height, spec.width
            image.encoding, image.is_bigendian, image.step = encoding, 0, spec.width * size
            self.images[output] = (node.create_publisher(Image, f'{ctx.topic}{below}/image_raw',
                                                         qos.SENSOR), image)
            self.infos[output] = (node.create_publisher(
                CameraInfo, f'{ctx.topic}{below}/camera_info', qos.SENSOR),
                camera_info(spec, self.optical_frame))
        self.detections = None
        if 'semantic' in spec.outputs:
            self.legend = node.create_publisher(String, f'{ctx.topic}/legend', qos.LATCHED)
            self.legend.publish(String(data=legend_json()))
            self.detections = node.create_publisher(Detection2DArray, f'{ctx.topic}/detections',
                                                    qos.SENSOR)
            self.flags = node.create_publisher(Detection2DFlags,
                                               f'{ctx.topic}/detections/flags', qos.SENSOR)
            self.instances = node.create_publisher(Image, f'{ctx.topic}/instances/image_raw',
                                                   qos.SENSOR)
            mask = self.instance_mask = Image()
            mask.header.frame_id = self.optical_frame
            mask.height, mask.width = spec.height, spec.width
            mask.encoding, mask.is_bigendian, mask.step = '16UC1', 0, spec.width * 2

    def static_transforms(self) -> list:
        optical = static_transform(self.ctx.frame, self.optical_frame, Mount(0, 0, 0,
                                                                              *OPTICAL_RPY))
        return [*mount_transforms(self.ctx), optical]

    def publish(self, frame: CarFrame) -> None:
        car, name = self.ctx.car, self.ctx.spec.name
        for output, (publisher, image) in self.images.items():
            data = frame.array(car, name, f'/{output}')
            if data is None:
                continue
            stamp = to_time(frame.stamp_ns(car, f'{name}/{output}'))
            image.header.stamp = stamp
            image.data = byte_array(np.asarray(data))
            publisher.publish(image)
            info_publisher, info = self.infos[output]
            info.header.stamp = stamp
            info_publisher.publish(info)
        semantic = frame.array(car, name, '/semantic')
        if self.detections is not None and semantic is not None:
            depth = frame.array(car, name, '/depth')
            found, instances = boxes(np.asarray(semantic),
                                     None if depth is None else np.asarray(depth))
            stamp = to_time(frame.stamp_ns(car, f'{name}/semantic'))
            boxed = detections(found, stamp, self.optical_frame)
            self.detections.publish(boxed)
            self.flags.publish(flags(found, boxed))
            mask = self.instance_mask
            mask.header.stamp = stamp
            mask.data = byte_array(instances.astype(np.uint16))
            self.instances.publish(mask)


def flags(found: list[Box2D], boxed: Detection2DArray) -> Detection2DFlags:
    """What the detections ``boxed`` of ``found`` cannot carry, in their order and with their
    ids and header."""
    return Detection2DFlags(header=boxed.header, ids=[d.id for d in boxed.detections],
                            truncated=[box.truncated for box in found],
                            occluded=[box.occluded for box in found],
                            pixels=[int(box.pixels) for box in found])


def detections(found: list[Box2D], stamp: Any, frame: str) -> Detection2DArray:
    """The ground-truth boxes of one image as vision_msgs detections (id: the instance)."""
    array = Detection2DArray()
    array.header.stamp, array.header.frame_id = stamp, frame
    for index, box in enumerate(found, start=1):
        detection = Detection2D(id=str(index))
        detection.header = array.header
        detection.bbox.center.position.x, detection.bbox.center.position.y = box.center()
        detection.bbox.size_x, detection.bbox.size_y = float(box.width), float(box.height)
        detection.results = [ObjectHypothesisWithPose(
            hypothesis=ObjectHypothesis(class_id=box.name, score=1.0))]
        array.detections.append(detection)
    return array
