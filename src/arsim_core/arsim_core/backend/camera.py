"""Cameras of the embedded backend: colour, depth and class-id images of the scene.

A camera with a lens (``arsim_core.lens``) renders an ideal pinhole image wide enough for its
rays and resamples it through the lens each frame (``cv2.remap``: bilinear for colour,
nearest for depth and class ids, so pixels stay aligned and labels never blend); a camera
without one renders its image directly, at no extra cost. After the lens and the weather come
the camera's motion during its exposure and readout (``motion_blur``) and its sensor:
vignetting, exposure and photon noise (``exposure``), each only where the camera has it.

Images are rasterised with OpenGL (``raster.GLRenderer``: headless EGL, llvmpipe on a CPU, the
GPU when there is one). Where no EGL context can be made, ``RayRenderer`` casts one Embree ray
per pixel instead: the same geometry, depth and labels, about ten times slower, lit and
textured by the same model (``appearance``), other cars drawn as their boxes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from arsim_core import labels
from arsim_core.backend import camera_weather as weather
from arsim_core.backend import helper_thread
from arsim_core.backend.exposure import ImageSensor
from arsim_core.backend.motion_blur import CameraMotion
from arsim_core.backend.opengl import View, seed_of
from arsim_core.backend.outputs import Context, Output, Rendered
from arsim_core.backend.ray_shading import TrackSurfaces, shade, with_cars
from arsim_core.backend.scene import World
from arsim_core.backend.target import Board
from arsim_core.errors import ProtocolError
from arsim_core.geometry import Footprint, Pose, rotation_matrix
from arsim_core.lens import OVERSAMPLE, PINHOLE, Lens, LensError, Resampling, resampling
from arsim_core.pinhole import OPTICAL_ROTATION, Intrinsics
from arsim_core.protocol.appearance import DEFAULT, Appearance
from arsim_core.protocol.camera_effects import CameraEffects

LOG = logging.getLogger('arsim.backend')
ENCODINGS = {'rgb': 'rgb8', 'depth': '32FC1', 'semantic': 'mono8'}
# What a lens camera's pixel shows where its ray leaves the ideal image (none does: the ideal
# image holds every ray, with a margin).
FILL = {'rgb': 0.0, 'depth': float('inf'), 'semantic': float(labels.NONE)}
PlacedBoard = tuple[Board, np.ndarray]  # the board and its model matrix (board -> world)
SENSOR_NOISE = 1  # the stream of a frame's seed its sensor's photon noise draws from


class Renderer(Protocol):
    name: str

    def set_track(self, vertices: np.ndarray, triangles: np.ndarray,
                  triangle_labels: np.ndarray) -> None: ...

    def set_appearance(self, appearance: Appearance) -> None:
        """Light, sky and textures of the frames from now on (InitialSettings'
        ``appearance``)."""
        ...

    def render(self, key: tuple[str, str], view: View,
               boxes: Sequence[tuple[Footprint, Sequence[float]]],
               board: PlacedBoard | None = None) -> dict[str, np.ndarray]: ...


def _transform(rotation: np.ndarray, translation: Pose) -> np.ndarray:
    matrix = np.eye(4)
    matrix[:3, :3], matrix[:3, 3] = rotation, translation
    return matrix


@dataclass
class Camera:
    """A camera on a car, a pinhole or one with a lens (``resampling``); renders at the frame
    time from the car's current pose."""

    car: str
    name: str
    mount_to_car: np.ndarray  # 4 x 4, the mount's body frame in base_link
    intrinsics: Intrinsics
    near: float
    far: float
    outputs: tuple[str, ...]
    noise_std: float
    depth_noise_std: float
    seed: int
    resampling: Resampling | None = None  # None: the image is rendered as it is published
    sensor: ImageSensor | None = None  # vignetting, exposure, photon noise (backend.exposure)
    motion: CameraMotion | None = None  # motion blur, rolling shutter (backend.motion_blur)

    kind = 'camera'

    def reseed(self, seed: int) -> None:
        """Pixel noise from ``seed`` afresh (it is drawn from the seed and the frame time),
        and the auto exposure from its start."""
        self.seed = seed
        if self.sensor is not None:
            self.sensor.reset()

    @classmethod
    def from_wire(cls, car: str, spec: Mapping[str, Any], seed: int,
                  frame_period_ns: int = 0) -> Camera:
        x, y, z, roll, pitch, yaw = (float(v) for v in spec['mount'])
        outputs = tuple(str(o) for o in spec.get('outputs', ['rgb']))
        unknown = set(outputs) - set(ENCODINGS)
        if unknown or not outputs:
            msg = f'camera {spec["name"]!r}: outputs must be some of {sorted(ENCODINGS)}'
            raise ValueError(msg)
        width, height = int(spec['width']), int(spec['height'])
        near, far = float(spec['near']), float(spec['far'])
        if width < 1 or height < 1 or not 0 < near < far:
            msg = f'camera {spec["name"]!r}: needs width, height >= 1 and 0 < near < far'
            raise ValueError(msg)
        intrinsics, lens = _lens(spec, width, height)
        oversample = float((spec.get('lens') or {}).get('oversample', OVERSAMPLE))
        try:
            resampled = None if lens is None else resampling(intrinsics, lens, oversample)
        except LensError as exc:
            msg = f'camera {spec["name"]!r}: {exc}'
            raise ProtocolError(msg) from exc
        sensor, motion = _effects(CameraEffects.from_wire(spec), intrinsics, resampled, outputs)
        return cls(car=car, name=str(spec['name']),
                   mount_to_car=_transform(rotation_matrix(roll, pitch, yaw), [x, y, z]),
                   intrinsics=intrinsics, near=near, far=far, outputs=outputs,
                   noise_std=float(spec.get('noise_std', 0.0)),
                   depth_noise_std=float(spec.get('depth_noise_std', 0.0)), seed=seed,
                   resampling=resampled, sensor=sensor, motion=motion)

    def optical_to_world(self, car_pose: Pose) -> np.ndarray:
        """The camera's optical frame in the world (4 x 4) for the car at ``car_pose``."""
        x, y, z, roll, pitch, yaw = car_pose
        car_to_world = _transform(rotation_matrix(roll, pitch, yaw), [x, y, z])
        return car_to_world @ self.mount_to_car @ _transform(OPTICAL_ROTATION, np.zeros(3))

    def view(self, car_pose: Pose, time_ns: int) -> View:
        world_to_optical = np.linalg.inv(self.optical_to_world(car_pose))
        intrinsics = self.intrinsics if self.resampling is None else self.resampling.ideal
        clip = intrinsics.clip_matrix(self.near, self.far) @ world_to_optical
        outputs = self.outputs  # motion needs each pixel's depth, published or not
        if self.motion is not None and 'depth' not in outputs:
            outputs = (*outputs, 'depth')
        return View(world_to_optical, clip, intrinsics, self.near, self.far, outputs,
                    self.noise_std, self.depth_noise_std, seed_of(self.seed, time_ns))

    def render(self, ctx: Context) -> Rendered:
        poses = ctx.timeline.poses(-1)
        boxes = ctx.world.others(self.car, poses)
        board = ctx.world.board
        model = None if board is None else board.model(ctx.time_ns, poses)
        view = weather.view_for(ctx.world.weather, self.view(poses[self.car], ctx.time_ns))
        images = ctx.renderer().render((self.car, self.name), view, boxes,
                                       None if board is None or model is None
                                       else (board, model))
        lens = self.resampling
        if lens is not None:
            images = {o: _through_lens(lens, self.intrinsics, images[o], o) for o in view.outputs}
        images = weather.weathered(ctx.world, self.intrinsics, view, poses[self.car], images)
        if self.motion is not None:
            images = self.motion.apply(images, ctx.timeline, self.car, self.optical_to_world)
        if self.sensor is not None:
            images = {**images, 'rgb': self.sensor.apply(
                images['rgb'], ctx.time_ns, seed_of(self.seed, ctx.time_ns, SENSOR_NOISE))}
        return Rendered(ctx.time_ns, tuple(Output(f'/{o}', images[o], ENCODINGS[o])
                                       for o in self.outputs))


def _through_lens(lens: Resampling, intrinsics: Intrinsics, ideal: np.ndarray,
                  output: str) -> np.ndarray:
    """The camera's ``output`` image, resampled from the ``ideal`` image through its lens
    (shared with the helper thread in bands of rows when large)."""
    height, width = intrinsics.height, intrinsics.width
    image = np.empty((height, width, *ideal.shape[2:]), ideal.dtype)

    def band(rows: slice) -> None:
        lens.remap(ideal, output != 'rgb', FILL[output], rows, image[rows])

    helper_thread.share(band, helper_thread.image_rows(height, width))
    return image


def _effects(effects: CameraEffects, intrinsics: Intrinsics, resampled: Resampling | None,
             outputs: tuple[str, ...]) -> tuple[ImageSensor | None, CameraMotion | None]:
    """The camera's sensor (for colour) and motion, each None where it has none of them."""
    sensor = ImageSensor(effects, intrinsics, resampled) if 'rgb' in outputs and (
        effects.exposure or effects.photon_noise or effects.vignetting) else None
    motion = CameraMotion(effects.motion_blur, effects.rolling_shutter, intrinsics, resampled) \
        if effects.motion_blur or effects.rolling_shutter else None
    return sensor, motion


def _lens(spec: Mapping[str, Any], width: int, height: int) -> tuple[Intrinsics, Lens | None]:
    """A camera's intrinsics and lens: its ``lens`` (checked by ``protocol.wire``), or a
    centred pinhole of its horizontal ``fov``."""
    given = spec.get('lens')
    if given is None:
        return Intrinsics.from_fov(width, height, float(spec['fov'])), None
    intrinsics = Intrinsics(width, height, float(given['fx']), float(given['fy']),
                            float(given['cx']), float(given['cy']))
    model = str(given['model'])
    if model == PINHOLE:
        return intrinsics, None
    return intrinsics, Lens(model, tuple(float(v) for v in given['distortion']))


class RayRenderer:
    """One ray per pixel: the fallback where OpenGL is unavailable."""

    name = 'rays'

    def __init__(self, world_of: Any, appearance: Appearance = DEFAULT) -> None:
        self._world_of = world_of  # callable returning the current World (for the cars)
        self._rays: dict[tuple[str, str], np.ndarray] = {}
        self._rng = np.random.default_rng(0)
        self._track: TrackSurfaces | None = None
        self.appearance = appearance

    def set_track(self, vertices: np.ndarray, triangles: np.ndarray,
                  triangle_labels: np.ndarray) -> None:
        self._track = TrackSurfaces(vertices, triangles, triangle_labels)

    def set_appearance(self, appearance: Appearance) -> None:
        self.appearance = appearance

    def render(self, key: tuple[str, str], view: View,
               boxes: Sequence[tuple[Footprint, Sequence[float]]],
               board: PlacedBoard | None = None) -> dict[str, np.ndarray]:
        if board is not None:  # the backend refuses a board with this renderer (Ready)
            msg = 'the ray-cast camera renderer cannot draw a calibration target'
            raise ProtocolError(msg)
        if self._track is None:
            world: World = self._world_of()
            self.set_track(world.vertices, world.triangles, world.triangle_labels)
        assert self._track is not None
        rays = self._rays.get(key)
        if rays is None or rays.shape[:2] != (view.height, view.width):
            rays = self._rays[key] = view.intrinsics.pixel_directions()
        optical_to_world = np.linalg.inv(view.world_to_optical)
        directions = (rays.reshape(-1, 3) @ optical_to_world[:3, :3].T).astype(np.float32)
        z = rays[..., 2].reshape(-1)
        far, origin = view.far, optical_to_world[:3, 3]
        reach = far / float(z.min())
        appearance = self.appearance
        hits = with_cars(self._track.cast(origin, directions, reach, appearance),
                         self._world_of().boxes(boxes), origin, directions, reach, appearance)
        depth = hits.distance * z
        missed = ~(depth <= far)
        images: dict[str, np.ndarray] = {}
        shape = (view.height, view.width)
        if 'rgb' in view.outputs:
            color = shade(hits, origin, directions, np.where(missed, np.inf, depth),
                          view.intrinsics.fx, appearance)
            if view.color_noise > 0.0:
                color = color + self._rng.standard_normal(color.shape, np.float32) \
                    * np.float32(view.color_noise / 255.0)
            images['rgb'] = np.rint(np.clip(color, 0.0, 1.0) * 255.0).astype(np.uint8) \
                .reshape(*shape, 3)
        if 'depth' in view.outputs:
            if view.depth_noise > 0.0:
                depth = depth + self._rng.standard_normal(depth.shape, np.float32) \
                    * np.float32(view.depth_noise)
            images['depth'] = np.where(missed, np.float32(np.inf), depth) \
                .astype(np.float32).reshape(shape)
        if 'semantic' in view.outputs:
            images['semantic'] = np.where(missed, np.uint8(labels.NONE), hits.label) \
                .astype(np.uint8).reshape(shape)
        return images


def make_renderer(world_of: Any) -> Renderer:
    """OpenGL (EGL) when it works here, else rays; ``ARSIM_CAMERA_RENDERER=rays|opengl``
    forces one."""
    wanted = os.environ.get('ARSIM_CAMERA_RENDERER', '').strip().lower()
    if wanted != 'rays':
        try:
            from arsim_core.backend.opengl import GLRenderer

            renderer = GLRenderer()
            LOG.info('cameras rendered with OpenGL on %s', renderer.device)
            return renderer
        except Exception as exc:  # noqa: BLE001 - any EGL/driver failure means: use rays
            if wanted == 'opengl':
                raise
            LOG.warning('OpenGL (EGL) unavailable (%s); cameras are ray cast, which is slower',
                        exc)
    return RayRenderer(world_of)
