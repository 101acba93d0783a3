"""What every republisher gets: its spec and names when made, one CarFrame per frame."""

from __future__ import annotations

import array
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node

from arsim_core.beams import frames_per_sample
from arsim_core.config.scenario import Scenario
from arsim_core.config.sensors import Mount, SensorSpec
from arsim_core.errors import ProtocolError
from arsim_core.geometry import rpy_to_quaternion
from arsim_core.protocol.messages import FrameMeta
from arsim_core.sensors.computed import LAYOUTS, ROW_KINDS
from arsim_core.sensors.kinematics import PlanarState


@dataclass(frozen=True)
class SensorContext:
    """A sensor of one car: its spec, the node that publishes, and its names."""

    node: Node
    spec: Any  # the SensorSpec of the republisher's type
    car: str
    topic: str  # from the topic map (sensor_topic template or override)
    frame: str  # from the topic map (sensor_frame template or override)
    base_frame: str
    scenario: Scenario  # the whole simulation: other cars, the track's topic, the frame rate

    @property
    def world_frame(self) -> str:
        return self.scenario.topic_map.world_frame

    @property
    def frame_period_ns(self) -> int:
        return self.scenario.frame_period_ns

    def due(self, step: int) -> bool:
        """Whether a sensor the backend does not render is due at ``step`` (rate_hz divides
        the frame rate, as for rendered sensors)."""
        return step % frames_per_sample(self.spec.rate_hz, self.frame_period_ns) == 0


@dataclass(frozen=True)
class CarFrame:
    """One frame of a car as the bridge fans it out."""

    step: int
    time_ns: int
    state: PlanarState
    arrays: Mapping[str, np.ndarray]
    meta: Mapping[str, FrameMeta]

    def array(self, car: str, sensor: str, suffix: str = '') -> np.ndarray | None:
        return self.arrays.get(f'{car}/{sensor}{suffix}')

    def stamp_ns(self, car: str, sensor: str) -> int:
        meta = self.meta.get(f'{car}/{sensor}')
        return self.time_ns if meta is None else meta.stamp_ns

    def computed(self, car: str, sensor: str, kind: str) -> np.ndarray | None:
        """The engine's values of a computed sensor in this frame (None: not due), checked
        against the layout of ``kind`` (``arsim_core.sensors.computed.LAYOUTS``): one vector,
        or a row per item for the ``ROW_KINDS``."""
        values = self.array(car, sensor)
        if values is None:
            return None
        size = len(LAYOUTS[kind])
        rows = kind in ROW_KINDS
        fits = values.ndim == 2 and values.shape[1] == size if rows else values.shape == (size,)
        if values.dtype != np.float64 or not fits:
            expected = f'(n, {size})' if rows else f'({size},)'
            msg = (f'frame {car}/{sensor}: {kind} values are float64 {expected}, got '
                   f'{values.dtype} {values.shape}')
            raise ProtocolError(msg)
        return values


class Republisher(Protocol):
    def publish(self, frame: CarFrame) -> None: ...

    def static_transforms(self) -> list[TransformStamped]: ...


def static_transform(parent: str, child: str, mount: Mount) -> TransformStamped:
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.transform.translation.x, t.transform.translation.y = mount.x, mount.y
    t.transform.translation.z = mount.z
    r = t.transform.rotation
    r.x, r.y, r.z, r.w = rpy_to_quaternion(mount.roll, mount.pitch, mount.yaw)
    return t


def mount_transforms(ctx: SensorContext) -> list[TransformStamped]:
    """base_link -> the sensor's frame, for a sensor mounted on the car."""
    spec: SensorSpec = ctx.spec
    return [] if spec.mount is None else [static_transform(ctx.base_frame, ctx.frame,
                                                           spec.mount)]


def byte_array(values: np.ndarray) -> array.array[int]:
    """The bytes of ``values`` as the array.array a message's uint8[] field takes: one copy,
    straight from the buffer the frame arrived in."""
    data = array.array('B')
    data.frombytes(np.ascontiguousarray(values).data.cast('B'))
    return data


def float_array(values: np.ndarray) -> array.array[float]:
    data = array.array('f')
    data.frombytes(np.ascontiguousarray(values, dtype=np.float32).data.cast('B'))
    return data
