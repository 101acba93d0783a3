"""Sensor declarations of a car profile (the ``Sensors`` section).

Each entry is one sensor, named by its key, with a ``type`` that picks its parser:

- rendered by the backend from the scene: ``lidar2d`` (LaserScan), ``lidar3d`` (organised
  PointCloud2), ``camera`` (rgb8 / 32FC1 depth / mono8 semantic Image + CameraInfo);
- computed by the car's republisher from the ground-truth state, no rendering: ``imu``,
  ``gnss`` (NavSatFix), ``wheel_odometry`` and ``ground_truth`` (nav_msgs/Odometry),
  ``wheel_encoders`` (sensor_msgs/JointState of the rear wheels' encoder angles), and
  ``objects`` (vision_msgs/Detection3DArray: cones and other cars around the car) and
  ``cones`` (eufs_msgs/ConeArrayWithCovariance: the placed cones around the car, by colour).

Every sensor but ``ground_truth`` may also be late: ``latency`` [s] from capture to publication
and ``latency_jitter`` [s], a uniform extra delay drawn per sample (``arsim_core.sensors.latency``).

A spec says whether the backend renders it (``rendered``), so the bridge asks the backend only
for those, and whether it sits on the car (``mount``: a frame on /tf_static). Every value is
checked here, at start-up, so an impossible sensor stops the launch with one message naming the
profile file, the sensor and the key. Units are SI and angles radians, as everywhere in arsim.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import ClassVar, cast

from arsim_core.config.camera_effect_keys import KEYS as _EFFECT_KEYS
from arsim_core.config.camera_effect_keys import camera_effects
from arsim_core.lens import (
    MAX_COEFFICIENT,
    MAX_IDEAL_SIDE,
    MAX_OVERSAMPLE,
    MODELS,
    OVERSAMPLE,
    PINHOLE,
    Lens,
    LensError,
    focal_from_fov,
    ideal_intrinsics,
)
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol.camera_effects import CameraEffects
from arsim_core.yaml_fields import Section

TWO_PI = 2.0 * math.pi
# Renderer limits: the largest render target llvmpipe and common GPUs accept, and the memory
# one camera may take per frame (render targets plus the frames it sends).
MAX_IMAGE_SIDE = 16384
MAX_CAMERA_BYTES = 1 << 30
MAX_LIDAR_POINTS = 1 << 22
MAX_ENCODER_TICKS = 1 << 24  # per revolution: far beyond any optical encoder's
MAX_GEAR_RATIO = 1000.0  # encoder shaft turns per wheel turn
MAX_TRACK_WIDTH_M = 100.0
CAMERA_OUTPUTS = ('rgb', 'depth', 'semantic')
# Bytes per pixel: what each output sends, plus the colour, depth and label targets rendered.
_OUTPUT_BYTES = {'rgb': 3, 'depth': 4, 'semantic': 1}
_RENDER_BYTES_PER_PIXEL = 4 + 4 + 4 + 1
MAX_SENSOR_LATENCY_S = 10.0  # beyond, no sensor: a typo
# LiDAR effects (backend.lidar_effects, docs/sensors.md "LiDAR effects"), on by default: range
# noise growing 1 mm per metre (an Ouster OS1's repeatability widens from 1.5 cm at high signal
# to 10 cm near its detection limit), a 10 % target detected to a third of range_max (the
# OS1's 40 m at 10 % against 120 m at 80 %), and the full beam divergence of a small 2D
# scanner (SICK TiM8xx: 8.6 mrad) and of a spinning 3D LiDAR (OS1-64: 0.13 deg FWHM).
LIDAR_NOISE_PER_M = 0.001
LIDAR_DETECTION_FRACTION = 1.0 / 3.0
LIDAR2D_BEAM_DIVERGENCE = 0.0086
LIDAR3D_BEAM_DIVERGENCE = 0.0023
MAX_NOISE_PER_M = 0.1  # 10 cm per metre: beyond, no range finder
MAX_BEAM_DIVERGENCE = 0.1  # rad (5.7 deg): beyond, no laser beam
_LIDAR_EFFECT_KEYS = frozenset({'noise_per_m', 'detection_range', 'beam_divergence'})


@dataclass(frozen=True)
class Mount:
    """Sensor pose on the car, relative to base_link: position [m] and roll/pitch/yaw [rad]."""

    x: float
    y: float
    z: float
    roll: float
    pitch: float
    yaw: float

    def to_wire(self) -> list[float]:
        return [self.x, self.y, self.z, self.roll, self.pitch, self.yaw]


ORIGIN = Mount(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True, kw_only=True)
class SensorTiming:
    """When a sensor's samples reach its subscribers: ``latency`` [s] after capture, plus a
    uniform draw in [0, ``latency_jitter``] [s]; stamped with the capture time."""

    latency: float = 0.0
    latency_jitter: float = 0.0

    @property
    def late(self) -> bool:
        return self.latency > 0.0 or self.latency_jitter > 0.0


@dataclass(frozen=True)
class Lidar2DSpec(SensorTiming):
    """A planar scanning range finder, published as sensor_msgs/LaserScan."""

    name: str
    mount: Mount
    rate_hz: float
    beams: int
    fov_rad: float
    range_min: float
    range_max: float
    noise_std: float = 0.0
    dropout: float = 0.0
    noise_per_m: float = 0.0  # [m/m]: noise std = noise_std + noise_per_m * range
    detection_range: float = 0.0  # [m] of a 10 % target at normal incidence; 0: no threshold
    beam_divergence: float = 0.0  # [rad], full angle; 0: no mixed pixels

    kind: ClassVar[str] = 'lidar2d'
    rendered: ClassVar[bool] = True

    @property
    def angle_min(self) -> float:
        return -self.fov_rad / 2.0

    @property
    def angle_increment(self) -> float:
        return self.fov_rad / (self.beams - 1) if self.beams > 1 else 0.0

    def to_wire(self) -> dict[str, object]:
        """The description sent to the backend in InitialSettings."""
        return {'name': self.name, 'type': self.kind, 'rate_hz': self.rate_hz,
                'mount': self.mount.to_wire(), 'beams': self.beams,
                'angle_min': self.angle_min, 'angle_increment': self.angle_increment,
                'range_min': self.range_min, 'range_max': self.range_max,
                'noise_std': self.noise_std, 'dropout': self.dropout,
                'noise_per_m': self.noise_per_m, 'detection_range': self.detection_range,
                'beam_divergence': self.beam_divergence}


@dataclass(frozen=True)
class Lidar3DSpec(SensorTiming):
    """A spinning multi-channel LiDAR, published as an organised PointCloud2 (ouster-ros layout).

    One message per revolution: ``rate_hz`` is the scan (rotation) frequency. Columns are
    measured one after the other while the sensor turns clockwise seen from above (as Ouster
    and Velodyne sensors do), column ``j`` at azimuth ``horizontal_start_rad - j * step`` with
    ``step = horizontal_fov_rad / columns``; ring 0 is the top channel.
    """

    name: str
    mount: Mount
    rate_hz: float
    channels: int
    columns: int
    horizontal_fov_rad: float
    horizontal_start_rad: float
    elevations_rad: tuple[float, ...]
    range_min: float
    range_max: float
    noise_std: float = 0.0
    dropout: float = 0.0
    labels: bool = False  # each point's semantic label, as a ``label`` field
    noise_per_m: float = 0.0  # as Lidar2DSpec's
    detection_range: float = 0.0
    beam_divergence: float = 0.0

    kind: ClassVar[str] = 'lidar3d'
    rendered: ClassVar[bool] = True

    @property
    def azimuth_increment(self) -> float:
        """Signed: negative, the sensor turns clockwise."""
        return -self.horizontal_fov_rad / self.columns

    def to_wire(self) -> dict[str, object]:
        return {'name': self.name, 'type': self.kind, 'rate_hz': self.rate_hz,
                'mount': self.mount.to_wire(), 'channels': self.channels,
                'columns': self.columns, 'azimuth_start': self.horizontal_start_rad,
                'azimuth_increment': self.azimuth_increment,
                'elevations': list(self.elevations_rad), 'range_min': self.range_min,
                'range_max': self.range_max, 'noise_std': self.noise_std,
                'dropout': self.dropout, 'labels': self.labels,
                'noise_per_m': self.noise_per_m, 'detection_range': self.detection_range,
                'beam_divergence': self.beam_divergence}


@dataclass(frozen=True)
class CameraSpec(SensorTiming):
    """A camera: rgb8 colour, 32FC1 depth [m] and mono8 class ids, each optional.

    ``fov_rad`` is the horizontal field of view; pixels are square, so the vertical one follows
    from the aspect ratio. ``focal`` (fx, fy, cx, cy) [px] replaces it where the profile gives
    the intrinsics; ``distortion_model`` and ``distortion`` are the lens (``arsim_core.lens``),
    none for an ideal pinhole, rendered from an ideal image of ``lens_oversample`` pixels per
    output pixel where the lens is densest. ``noise_std`` is flat Gaussian noise per pixel and
    channel (colour in 0..255 units, ``depth_noise_std`` depth in metres); ``effects`` are the
    sensor's exposure, photon noise, vignetting, motion blur and rolling shutter
    (``protocol.camera_effects``).
    """

    name: str
    mount: Mount
    rate_hz: float
    width: int
    height: int
    fov_rad: float
    near_clip: float
    far_clip: float
    outputs: tuple[str, ...] = ('rgb',)
    noise_std: float = 0.0
    depth_noise_std: float = 0.0
    focal: tuple[float, float, float, float] | None = None  # fx, fy, cx, cy [px]
    distortion_model: str | None = None  # lens.MODELS; None: an ideal pinhole
    distortion: tuple[float, ...] = ()
    lens_oversample: float = OVERSAMPLE
    effects: CameraEffects = CameraEffects()

    kind: ClassVar[str] = 'camera'
    rendered: ClassVar[bool] = True

    @property
    def intrinsics(self) -> Intrinsics:
        """The camera matrix CameraInfo publishes and the renderer uses."""
        if self.focal is not None:
            return Intrinsics(self.width, self.height, *self.focal)
        f = focal_from_fov(self.width, self.fov_rad, self.distortion_model)
        return Intrinsics(self.width, self.height, f, f, (self.width - 1) / 2.0,
                          (self.height - 1) / 2.0)

    @property
    def lens(self) -> Lens | None:
        if self.distortion_model is None:
            return None
        return Lens(self.distortion_model, self.distortion)

    def to_wire(self) -> dict[str, object]:
        wire: dict[str, object] = {
            'name': self.name, 'type': self.kind, 'rate_hz': self.rate_hz,
            'mount': self.mount.to_wire(), 'width': self.width, 'height': self.height,
            'fov': self.fov_rad, 'near': self.near_clip, 'far': self.far_clip,
            'outputs': list(self.outputs), 'noise_std': self.noise_std,
            'depth_noise_std': self.depth_noise_std}
        if self.focal is not None or self.distortion_model is not None:
            k = self.intrinsics
            lens: dict[str, object] = {
                'model': self.distortion_model or PINHOLE, 'fx': k.fx, 'fy': k.fy, 'cx': k.cx,
                'cy': k.cy, 'distortion': list(self.distortion)}
            if self.lens_oversample != OVERSAMPLE:
                lens['oversample'] = self.lens_oversample
            wire['lens'] = lens
        wire.update(self.effects.to_wire())
        return wire


@dataclass(frozen=True)
class ImuSpec(SensorTiming):
    """An IMU on the car: specific force (gravity included: +g on z at rest), angular velocity
    and orientation in its own frame, each with Gaussian noise and a constant bias."""

    name: str
    mount: Mount
    rate_hz: float
    accel_noise_std: float = 0.0
    gyro_noise_std: float = 0.0
    orientation_noise_std: float = 0.0
    accel_bias: tuple[float, float, float] = (0.0, 0.0, 0.0)
    gyro_bias: tuple[float, float, float] = (0.0, 0.0, 0.0)
    gravity: float = 9.81

    kind: ClassVar[str] = 'imu'
    rendered: ClassVar[bool] = False

    def to_wire(self) -> dict[str, object]:
        """Listed for completeness: backends render nothing for it and ignore it."""
        return _computed_wire(self)


@dataclass(frozen=True)
class GnssSpec(SensorTiming):
    """A GNSS antenna: NavSatFix of its position, the world frame's origin placed at
    ``origin`` (latitude, longitude [deg], WGS84 altitude [m]) with x east and y north."""

    name: str
    mount: Mount
    rate_hz: float
    origin: tuple[float, float, float]
    horizontal_noise_std: float = 0.0
    vertical_noise_std: float = 0.0

    kind: ClassVar[str] = 'gnss'
    rendered: ClassVar[bool] = False

    def to_wire(self) -> dict[str, object]:
        """Listed for completeness: backends render nothing for it and ignore it."""
        return _computed_wire(self)




@dataclass(frozen=True)
class WheelOdometrySpec(SensorTiming):
    """Odometry as vesc_to_odom computes it: speed and steering angle (with noise) integrated
    with the wheelbase, in a frame that starts at the car's first pose."""

    name: str
    rate_hz: float
    wheelbase: float | None = None  # None: the car's, from CarParameters.body
    speed_noise_std: float = 0.0
    steering_noise_std: float = 0.0
    pose_covariance: tuple[float, float, float] = (0.2, 0.2, 0.4)  # x, y, yaw as vesc_to_odom

    kind: ClassVar[str] = 'wheel_odometry'
    rendered: ClassVar[bool] = False
    mount: ClassVar[Mount | None] = None

    def to_wire(self) -> dict[str, object]:
        """Listed for completeness: backends render nothing for it and ignore it."""
        return _computed_wire(self)



@dataclass(frozen=True)
class WheelEncodersSpec(SensorTiming):
    """Incremental encoders on the two rear wheels: whole ticks counted since the car's first
    sample, ``ticks_per_revolution`` of the encoder's shaft turning ``gear_ratio`` times per
    wheel revolution (so ticks = ticks_per_revolution x gear_ratio x wheel revolutions, as in
    the AutoDRIVE twins), the wheels ``track_width`` apart rolling without slip."""

    name: str
    rate_hz: float
    ticks_per_revolution: int
    gear_ratio: float
    track_width: float  # [m]
    joint_names: tuple[str, str] = ('rear_left_wheel', 'rear_right_wheel')

    kind: ClassVar[str] = 'wheel_encoders'
    rendered: ClassVar[bool] = False
    mount: ClassVar[Mount | None] = None

    @property
    def ticks_per_wheel_revolution(self) -> float:
        return self.ticks_per_revolution * self.gear_ratio

    def to_wire(self) -> dict[str, object]:
        """Listed for completeness: backends render nothing for it and ignore it."""
        return _computed_wire(self)


@dataclass(frozen=True)
class GroundTruthSpec(SensorTiming):
    """The exact pose and velocity of base_link in the world frame, as nav_msgs/Odometry."""

    name: str
    rate_hz: float

    kind: ClassVar[str] = 'ground_truth'
    rendered: ClassVar[bool] = False
    mount: ClassVar[Mount | None] = None

    def to_wire(self) -> dict[str, object]:
        """Listed for completeness: backends render nothing for it and ignore it."""
        return _computed_wire(self)


@dataclass(frozen=True)
class ObjectsSpec(SensorTiming):
    """3D ground truth of what is around the car: the track's cones and the other cars, as
    boxes in base_link (vision_msgs/Detection3DArray), those within ``range_m``."""

    name: str
    rate_hz: float
    range_m: float = 50.0

    kind: ClassVar[str] = 'objects'
    rendered: ClassVar[bool] = False
    mount: ClassVar[Mount | None] = None

    def to_wire(self) -> dict[str, object]:
        """Listed for completeness: backends render nothing for it and ignore it."""
        return _computed_wire(self)


@dataclass(frozen=True)
class ConesSpec(SensorTiming):
    """Ground-truth cones around the car, as EUFS sim publishes them: the track's placed cones
    (standing, or where they lie) within ``range_m``, by colour, in base_link
    (eufs_msgs/ConeArrayWithCovariance, zero covariance)."""

    name: str
    rate_hz: float
    range_m: float = 20.0

    kind: ClassVar[str] = 'cones'
    rendered: ClassVar[bool] = False
    mount: ClassVar[Mount | None] = None

    def to_wire(self) -> dict[str, object]:
        """Listed for completeness: backends render nothing for it and ignore it."""
        return _computed_wire(self)


def _computed_wire(spec: ImuSpec | GnssSpec | WheelOdometrySpec | WheelEncodersSpec
                   | GroundTruthSpec | ObjectsSpec | ConesSpec) -> dict[str, object]:
    wire: dict[str, object] = {'name': spec.name, 'type': spec.kind, 'rate_hz': spec.rate_hz}
    if spec.mount is not None:
        wire['mount'] = spec.mount.to_wire()
    return wire


SensorSpec = (Lidar2DSpec | Lidar3DSpec | CameraSpec | ImuSpec | GnssSpec | WheelOdometrySpec
              | WheelEncodersSpec | GroundTruthSpec | ObjectsSpec | ConesSpec)
RenderedSpec = Lidar2DSpec | Lidar3DSpec | CameraSpec

_TIMING = frozenset({'latency', 'latency_jitter'})
_COMMON = frozenset({'type', 'rate_hz'}) | _TIMING
_MOUNTED = _COMMON | {'position', 'rotation'}


def _mount(section: Section) -> Mount:
    x, y, z = section.vector('position', 3)
    roll, pitch, yaw = section.vector('rotation', 3, [0.0, 0.0, 0.0])
    return Mount(x, y, z, roll, pitch, yaw)


def _rate(section: Section) -> float:
    return section.number('rate_hz', minimum=0.0, exclusive_minimum=True)


def _std(section: Section, key: str) -> float:
    return section.number(key, 0.0, minimum=0.0)


def _dropout(section: Section) -> float:
    value = section.number('dropout', 0.0, minimum=0.0)
    if value >= 1.0:
        section.fail(f'expected a probability in [0, 1), got {value!r}', 'dropout')
    return value


def _ranges(section: Section) -> tuple[float, float]:
    range_min = section.number('range_min', 0.0, minimum=0.0)
    range_max = section.number('range_max', minimum=0.0, exclusive_minimum=True)
    if range_max <= range_min:
        section.fail(f'expected range_max > range_min ({range_min}), got {range_max}',
                     'range_max')
    return range_min, range_max


def _lidar_effects(section: Section, range_max: float, divergence: float
                   ) -> dict[str, float]:
    """``noise_per_m``, ``detection_range`` and ``beam_divergence``: on by default at
    realistic values, 0 turns each off."""
    return {'noise_per_m': section.number('noise_per_m', LIDAR_NOISE_PER_M, minimum=0.0,
                                          maximum=MAX_NOISE_PER_M),
            'detection_range': section.number('detection_range',
                                              range_max * LIDAR_DETECTION_FRACTION,
                                              minimum=0.0),
            'beam_divergence': section.number('beam_divergence', divergence, minimum=0.0,
                                              maximum=MAX_BEAM_DIVERGENCE)}


def _lidar2d(name: str, section: Section) -> Lidar2DSpec:
    section.reject_unknown(_MOUNTED | _LIDAR_EFFECT_KEYS | {
        'beams', 'fov_rad', 'range_min', 'range_max', 'noise_std', 'dropout'})
    range_min, range_max = _ranges(section)
    return Lidar2DSpec(
        name=name, mount=_mount(section), rate_hz=_rate(section),
        beams=section.integer('beams', minimum=1),
        fov_rad=section.number('fov_rad', minimum=0.0, maximum=TWO_PI, exclusive_minimum=True),
        range_min=range_min, range_max=range_max, noise_std=_std(section, 'noise_std'),
        dropout=_dropout(section), **_lidar_effects(section, range_max, LIDAR2D_BEAM_DIVERGENCE))


def _elevations(section: Section, channels: int) -> tuple[float, ...]:
    """Ring elevations, top first: an explicit list, or spread evenly over the vertical FOV."""
    if section.has('elevations_rad'):
        for key in ('vertical_fov_rad', 'vertical_start_rad'):
            if section.has(key):
                section.fail('give either elevations_rad or vertical_fov_rad/vertical_start_rad',
                             key)
        values = section.vector('elevations_rad', channels)
        if any(abs(v) > math.pi / 2 for v in values):
            section.fail(f'expected elevations within [-pi/2, pi/2], got {list(values)}',
                         'elevations_rad')
        return values
    if channels == 1:
        fov = section.number('vertical_fov_rad', 0.0, minimum=0.0, maximum=math.pi)
    else:
        fov = section.number('vertical_fov_rad', minimum=0.0, maximum=math.pi,
                             exclusive_minimum=True)
    start = section.number('vertical_start_rad', fov / 2.0, minimum=-math.pi / 2,
                           maximum=math.pi / 2)
    if start - fov < -math.pi / 2 - 1e-9:
        section.fail(f'the lowest ring would point at {math.degrees(start - fov):.1f} deg, '
                     f'below straight down', 'vertical_start_rad')
    step = fov / (channels - 1) if channels > 1 else 0.0
    return tuple(start - i * step for i in range(channels))


def _lidar3d(name: str, section: Section) -> Lidar3DSpec:
    section.reject_unknown(_MOUNTED | _LIDAR_EFFECT_KEYS | {
        'channels', 'columns', 'horizontal_fov_rad', 'horizontal_start_rad', 'vertical_fov_rad',
        'vertical_start_rad', 'elevations_rad', 'range_min', 'range_max', 'noise_std',
        'dropout', 'labels'})
    channels = section.integer('channels', minimum=1)
    columns = section.integer('columns', minimum=1)
    if channels * columns > MAX_LIDAR_POINTS:
        section.fail(f'{channels} x {columns} points per scan is more than the '
                     f'{MAX_LIDAR_POINTS} a scan may have', 'columns')
    fov = section.number('horizontal_fov_rad', TWO_PI, minimum=0.0, maximum=TWO_PI,
                         exclusive_minimum=True)
    range_min, range_max = _ranges(section)
    return Lidar3DSpec(
        name=name, mount=_mount(section), rate_hz=_rate(section), channels=channels,
        columns=columns, horizontal_fov_rad=fov,
        horizontal_start_rad=section.number('horizontal_start_rad', fov / 2.0,
                                            minimum=-TWO_PI, maximum=TWO_PI),
        elevations_rad=_elevations(section, channels), range_min=range_min,
        range_max=range_max, noise_std=_std(section, 'noise_std'), dropout=_dropout(section),
        labels=section.boolean('labels', False),
        **_lidar_effects(section, range_max, LIDAR3D_BEAM_DIVERGENCE))


def _outputs(section: Section) -> tuple[str, ...]:
    value = section.raw('outputs', ['rgb'])
    if not isinstance(value, list) or not value or not all(
            isinstance(v, str) and v in CAMERA_OUTPUTS for v in value) \
            or len(set(value)) != len(value):
        section.fail(f'expected a non-empty list of distinct outputs from '
                     f'{list(CAMERA_OUTPUTS)}, got {value!r}', 'outputs')
    return tuple(value)


def _camera(name: str, section: Section) -> CameraSpec:
    section.reject_unknown(_MOUNTED | {'width', 'height', 'fov_rad', 'near_clip', 'far_clip',
                                       'outputs', 'noise_std', 'depth_noise_std', *_LENS_KEYS,
                                       'lens_oversample', *_EFFECT_KEYS})
    width = section.integer('width', minimum=1)
    height = section.integer('height', minimum=1)
    for key, value in (('width', width), ('height', height)):
        if value > MAX_IMAGE_SIDE:
            section.fail(f'expected at most {MAX_IMAGE_SIDE} pixels (the largest render '
                         f'target), got {value}', key)
    outputs = _outputs(section)
    near = section.number('near_clip', 0.05, minimum=0.0, exclusive_minimum=True)
    far = section.number('far_clip', 100.0, minimum=0.0, exclusive_minimum=True)
    if far <= near:
        section.fail(f'expected far_clip > near_clip ({near}), got {far}', 'far_clip')
    model, distortion = _distortion(section)
    focal = _focal(section, width, height)
    if focal is None:
        fov = section.number('fov_rad', minimum=0.0, maximum=math.radians(170.0),
                             exclusive_minimum=True)
    else:
        fov = 2.0 * math.atan(width / (2.0 * focal[0]))  # the ideal pinhole's, for old peers
    spec = CameraSpec(
        name=name, mount=_mount(section), rate_hz=_rate(section), width=width, height=height,
        fov_rad=fov, near_clip=near, far_clip=far, outputs=outputs,
        noise_std=_std(section, 'noise_std'), depth_noise_std=_std(section, 'depth_noise_std'),
        focal=focal, distortion_model=model, distortion=distortion,
        lens_oversample=_oversample(section, model), effects=camera_effects(section))
    pixels = width * height
    lens = spec.lens
    if lens is not None:
        try:
            ideal = ideal_intrinsics(spec.intrinsics, lens, spec.lens_oversample)
        except LensError as exc:
            key = exc.key if exc.key != 'fov_rad' or focal is None else 'fx'
            section.fail(str(exc), key)
        pixels += ideal.width * ideal.height  # the ideal image rendered and resampled
    frame_bytes = width * height * sum(_OUTPUT_BYTES[o] for o in outputs) \
        + pixels * _RENDER_BYTES_PER_PIXEL
    if frame_bytes > MAX_CAMERA_BYTES:
        section.fail(f'a {width} x {height} image with outputs {list(outputs)} needs '
                     f'{frame_bytes / 2**20:.0f} MiB per frame, more than the '
                     f'{MAX_CAMERA_BYTES / 2**20:.0f} MiB a camera may use', 'width')
    return spec


_LENS_KEYS = ('fx', 'fy', 'cx', 'cy', 'distortion_model', 'distortion')


def _oversample(section: Section, model: str | None) -> float:
    """``lens_oversample``: ideal pixels per output pixel where a lens is densest."""
    if model is None and section.has('lens_oversample'):
        section.fail('needs a distortion_model (a camera without a lens is rendered as it is '
                     'published)', 'lens_oversample')
    return section.number('lens_oversample', OVERSAMPLE, minimum=1.0, maximum=MAX_OVERSAMPLE)


def _focal(section: Section, width: int, height: int
           ) -> tuple[float, float, float, float] | None:
    """fx, fy, cx, cy [px] where the profile gives them (fx and fy together, instead of
    fov_rad; the principal point defaults to the image centre), else None."""
    given = [key for key in ('fx', 'fy', 'cx', 'cy') if section.has(key)]
    if not given:
        return None
    if section.has('fov_rad'):
        section.fail(f'give either fov_rad or the intrinsics fx, fy (cx, cy), not both; '
                     f'{given[0]} is given too', 'fov_rad')
    limit = MAX_IDEAL_SIDE * 64.0  # pixels: a focal length far beyond any lens
    fx, fy = (section.number(key, minimum=0.0, exclusive_minimum=True, maximum=limit)
              for key in ('fx', 'fy'))
    cx = section.number('cx', (width - 1) / 2.0, minimum=-0.5, maximum=width - 0.5)
    cy = section.number('cy', (height - 1) / 2.0, minimum=-0.5, maximum=height - 0.5)
    return fx, fy, cx, cy


def _distortion(section: Section) -> tuple[str | None, tuple[float, ...]]:
    """The lens model and its coefficients (OpenCV's order), both or neither."""
    if not section.has('distortion_model'):
        if section.has('distortion'):
            section.fail(f'distortion needs a distortion_model, one of {sorted(MODELS)}',
                         'distortion')
        return None, ()
    model = section.string('distortion_model', choices=MODELS.keys())
    names = MODELS[model]
    value = section.raw('distortion', what=f'a list of {len(names)} numbers '
                                           f'[{", ".join(names)}]')
    if not isinstance(value, list) or len(value) != len(names) or not all(
            not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
            and abs(v) <= MAX_COEFFICIENT for v in value):
        count = len(value) if isinstance(value, list) else 'no list'
        section.fail(f'expected {len(names)} coefficients [{", ".join(names)}] for '
                     f'{model}, each a number within +-{MAX_COEFFICIENT:g}, got {count}: '
                     f'{value!r:.80}', 'distortion')
    return model, tuple(float(v) for v in value)


def _vector3(section: Section, key: str) -> tuple[float, float, float]:
    x, y, z = section.vector(key, 3, [0.0, 0.0, 0.0])
    return x, y, z


def _imu(name: str, section: Section) -> ImuSpec:
    section.reject_unknown(_MOUNTED | {'accel_noise_std', 'gyro_noise_std',
                                       'orientation_noise_std', 'accel_bias', 'gyro_bias',
                                       'gravity'})
    return ImuSpec(
        name=name, mount=_mount(section), rate_hz=_rate(section),
        accel_noise_std=_std(section, 'accel_noise_std'),
        gyro_noise_std=_std(section, 'gyro_noise_std'),
        orientation_noise_std=_std(section, 'orientation_noise_std'),
        accel_bias=_vector3(section, 'accel_bias'), gyro_bias=_vector3(section, 'gyro_bias'),
        gravity=section.number('gravity', 9.81, minimum=0.0))


def _gnss(name: str, section: Section) -> GnssSpec:
    section.reject_unknown(_MOUNTED | {'origin', 'horizontal_noise_std', 'vertical_noise_std'})
    latitude, longitude, altitude = section.vector('origin', 3)
    if abs(latitude) >= 90.0 or abs(longitude) > 180.0:
        section.fail(f'expected [latitude in (-90, 90), longitude in [-180, 180], altitude], '
                     f'got {[latitude, longitude, altitude]}', 'origin')
    return GnssSpec(
        name=name, mount=_mount(section), rate_hz=_rate(section),
        origin=(latitude, longitude, altitude),
        horizontal_noise_std=_std(section, 'horizontal_noise_std'),
        vertical_noise_std=_std(section, 'vertical_noise_std'))


def _wheel_odometry(name: str, section: Section) -> WheelOdometrySpec:
    section.reject_unknown(_COMMON | {'wheelbase', 'speed_noise_std', 'steering_noise_std',
                                      'pose_covariance'})
    wheelbase = (section.number('wheelbase', minimum=0.0, exclusive_minimum=True)
                 if section.has('wheelbase') else None)
    x, y, yaw = section.vector('pose_covariance', 3, [0.2, 0.2, 0.4])
    if min(x, y, yaw) < 0.0:
        section.fail(f'expected variances >= 0, got {[x, y, yaw]}', 'pose_covariance')
    return WheelOdometrySpec(
        name=name, rate_hz=_rate(section), wheelbase=wheelbase,
        speed_noise_std=_std(section, 'speed_noise_std'),
        steering_noise_std=_std(section, 'steering_noise_std'), pose_covariance=(x, y, yaw))


def _wheel_encoders(name: str, section: Section) -> WheelEncodersSpec:
    section.reject_unknown(_COMMON | {'ticks_per_revolution', 'gear_ratio', 'track_width',
                                      'joint_names'})
    joints = section.raw('joint_names', ['rear_left_wheel', 'rear_right_wheel'],
                         what='two joint names')
    if not (isinstance(joints, list) and len(joints) == 2
            and all(isinstance(j, str) and j for j in joints) and joints[0] != joints[1]):
        section.fail(f'expected two different joint names (left, right), got {joints!r}',
                     'joint_names')
    ticks = section.integer('ticks_per_revolution', minimum=1)
    if ticks > MAX_ENCODER_TICKS:
        section.fail(f'expected at most {MAX_ENCODER_TICKS} ticks, got {ticks}',
                     'ticks_per_revolution')
    return WheelEncodersSpec(
        name=name, rate_hz=_rate(section), ticks_per_revolution=ticks,
        gear_ratio=section.number('gear_ratio', 1.0, minimum=0.0, exclusive_minimum=True,
                                  maximum=MAX_GEAR_RATIO),
        track_width=section.number('track_width', minimum=0.0, exclusive_minimum=True,
                                   maximum=MAX_TRACK_WIDTH_M),
        joint_names=(joints[0], joints[1]))


def _ground_truth(name: str, section: Section) -> GroundTruthSpec:
    section.reject_unknown(_COMMON - _TIMING)  # the truth, now: never late
    return GroundTruthSpec(name=name, rate_hz=_rate(section))


def _objects(name: str, section: Section) -> ObjectsSpec:
    section.reject_unknown(_COMMON | {'range_m'})
    return ObjectsSpec(name=name, rate_hz=_rate(section),
                       range_m=section.number('range_m', 50.0, minimum=0.0,
                                              exclusive_minimum=True))


def _cones(name: str, section: Section) -> ConesSpec:
    section.reject_unknown(_COMMON | {'range_m'})
    return ConesSpec(name=name, rate_hz=_rate(section),
                     range_m=section.number('range_m', 20.0, minimum=0.0,
                                            exclusive_minimum=True))


# The one registry of sensor kinds: each kind's spec and its parser.
SENSOR_TYPES: Mapping[str, tuple[type[SensorSpec], Callable[[str, Section], SensorSpec]]] = {
    spec.kind: (spec, parse) for spec, parse in (
        (Lidar2DSpec, _lidar2d), (Lidar3DSpec, _lidar3d), (CameraSpec, _camera),
        (ImuSpec, _imu), (GnssSpec, _gnss), (WheelOdometrySpec, _wheel_odometry),
        (WheelEncodersSpec, _wheel_encoders), (GroundTruthSpec, _ground_truth),
        (ObjectsSpec, _objects), (ConesSpec, _cones))}
# Kinds a sensor republisher computes from the car's state; a backend renders none of them.
COMPUTED_KINDS = frozenset(kind for kind, (spec, _) in SENSOR_TYPES.items() if not spec.rendered)


def load_sensors(section: Section) -> tuple[SensorSpec, ...]:
    """Parse every sensor of a profile; the ``type`` key picks the parser."""
    sensors = []
    for name, entry in section.items():
        if not name.isidentifier():
            section.fail(f'expected a sensor name of letters, digits and underscores, got '
                         f'{name!r}', name)
        kind = entry.string('type', choices=SENSOR_TYPES.keys())
        spec = SENSOR_TYPES[kind][1](name, entry)
        latency, jitter = (entry.number(key, 0.0, minimum=0.0, maximum=MAX_SENSOR_LATENCY_S)
                           for key in ('latency', 'latency_jitter'))
        late = latency > 0.0 or jitter > 0.0
        sensors.append(replace(spec, latency=latency, latency_jitter=jitter) if late else spec)
    return tuple(sensors)


def rendered(sensors: tuple[SensorSpec, ...]) -> tuple[RenderedSpec, ...]:
    """The sensors the backend renders (the others are computed by the republisher)."""
    return tuple(cast(RenderedSpec, s) for s in sensors if s.rendered)
