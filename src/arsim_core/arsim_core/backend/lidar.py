"""LiDAR rendering for the embedded backend: beams cast into the world, REP-117 ranges,
intensity from surface reflectivity.

A 2D scanner (LaserScan) is rendered at the frame time. A spinning 3D LiDAR measures its
columns one after the other during a revolution; each column is cast from the pose the car had
at that column's time (interpolated between frames) against the other cars where they were at
the end of that frame, so a moving car's cloud shows the motion distortion a real one does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from arsim_core import beams
from arsim_core.backend import lidar_effects, sweep
from arsim_core.backend.boxes import BoxLayer
from arsim_core.backend.embree import PACKET, EmbreePacketRaycaster, prepare_scan
from arsim_core.backend.hits import Hits, nearer
from arsim_core.backend.lidar_weather import changes_scans, weathered
from arsim_core.backend.outputs import Context, Output, Rendered, frame_name
from arsim_core.backend.plane_scan import PlaneSlice, rasterise_boxes_rows
from arsim_core.backend.target import Board
from arsim_core.backend.timeline import PoseRows
from arsim_core.geometry import Pose, rotation_matrix
from arsim_core.labels import NONE, reflectivity_table
from arsim_core.protocol.weather import Weather

# intensity = INTENSITY_SCALE * reflectivity * |cos(incidence)| / max(range, 1 m)^2: a signal
# photon count like Ouster's, falling with distance and grazing angle (the LiDAR equation of
# ``lidar_effects``, which also attenuates and thresholds it).
INTENSITY_SCALE = lidar_effects.SCALE
# By label: INTENSITY_SCALE * reflectivity, and reflectivity in percent; zero for a miss.
_INTENSITY_GAIN = np.float32(INTENSITY_SCALE) * np.asarray(reflectivity_table(), np.float32)
_INTENSITY_GAIN[NONE] = 0.0
_REFLECTIVITY_PERCENT = np.rint(np.asarray(reflectivity_table()) * 100.0).astype(np.uint16)
_REFLECTIVITY_PERCENT[NONE] = 0


@dataclass(frozen=True)
class Returns:
    """One scan's measurements, all float32 but reflectivity (uint16, 100 = white diffuse);
    ``label``: what each return hit, where the effects may change it (else None: the hits')."""

    ranges: np.ndarray
    intensity: np.ndarray
    reflectivity: np.ndarray
    label: np.ndarray | None = None


@dataclass
class RangeModel:
    """How hits become measurements: Gaussian noise, dropout and the REP-117 special values
    (+inf: no return within range_max, -inf: closer than range_min, NaN: dropped).

    With any of ``noise_per_m`` (noise growing with range), ``detection_range`` (a threshold
    on received power), ``beam_divergence`` (mixed pixels at edges) or ``extinction_per_m``
    (two-way atmospheric attenuation, which the weather sets) above 0, ``lidar_effects``
    measures instead; ``column_spacing`` and ``row_spacing`` [rad] are the angles between
    neighbouring beams the footprints need."""

    range_min: float
    range_max: float
    noise_std: float
    dropout: float
    rng: np.random.Generator
    noise_per_m: float = 0.0
    detection_range: float = 0.0
    beam_divergence: float = 0.0
    extinction_per_m: float = 0.0
    column_spacing: float = 0.0
    row_spacing: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # the last settings of ``effect_inputs`` and their array
    _settings: tuple[tuple[float, ...], np.ndarray] = field(
        default=((), np.zeros(0)), init=False, repr=False, compare=False)

    @classmethod
    def from_wire(cls, spec: Mapping[str, Any], seed: int, column_spacing: float = 0.0,
                  row_spacing: np.ndarray | None = None) -> RangeModel:
        """The wire's effect keys default to off (a peer that predates them)."""
        return cls(float(spec['range_min']), float(spec['range_max']),
                   float(spec.get('noise_std', 0.0)), float(spec.get('dropout', 0.0)),
                   np.random.default_rng(seed), float(spec.get('noise_per_m', 0.0)),
                   float(spec.get('detection_range', 0.0)),
                   float(spec.get('beam_divergence', 0.0)), 0.0, abs(column_spacing),
                   np.zeros(0) if row_spacing is None
                   else np.abs(np.asarray(row_spacing, np.float64)))

    @property
    def effects(self) -> bool:
        """Whether any effect of ``lidar_effects`` is on."""
        return (self.noise_per_m > 0.0 or self.detection_range > 0.0
                or self.beam_divergence > 0.0 or self.extinction_per_m > 0.0)

    def measure(self, hits: Hits) -> Returns:
        """A miss (label NONE, infinite distance, zero cosine) gets zero intensity and
        reflectivity through the tables, with no masks."""
        if self.effects:
            return self._measure_effects(hits)
        noise = self.rng.standard_normal(hits.distance.shape, np.float32) \
            if self.noise_std > 0.0 else _NONE
        if sweep.ENABLED:
            ranges = np.empty(hits.distance.shape, np.float32)
            intensity = np.empty(hits.distance.shape, np.float32)
            reflectivity = np.empty(hits.distance.shape, np.uint16)
            sweep.measure(hits.distance.reshape(-1), hits.label.reshape(-1),
                          hits.cosine.reshape(-1), noise.reshape(-1),
                          np.float32(self.noise_std), np.float32(self.range_min),
                          np.float32(self.range_max), _INTENSITY_GAIN, _REFLECTIVITY_PERCENT,
                          ranges.reshape(-1), intensity.reshape(-1), reflectivity.reshape(-1))
        else:
            ranges = hits.distance.astype(np.float32)  # a copy, changed in place below
            if self.noise_std > 0.0:
                ranges += noise * np.float32(self.noise_std)
            clamped = np.maximum(ranges, np.float32(1.0))
            intensity = _INTENSITY_GAIN[hits.label] * hits.cosine / (clamped * clamped)
            reflectivity = _REFLECTIVITY_PERCENT[hits.label]
            ranges[ranges > self.range_max] = np.inf
            ranges[ranges < self.range_min] = -np.inf
        return self._drop(Returns(ranges, intensity, reflectivity))

    def _rows(self, count: int) -> np.ndarray:
        """``row_spacing`` for ``count`` rows (zeros where it has too few)."""
        rows = self.row_spacing
        if len(rows) != count - 1:
            rows = np.zeros(max(count - 1, 0), np.float64)
            rows[:len(self.row_spacing)] = self.row_spacing[:count - 1]
            self.row_spacing = rows
        return rows

    def _drop(self, returns: Returns) -> Returns:
        """Dropout: NaN with zero intensity and reflectivity, in place."""
        if self.dropout > 0.0:
            ranges = returns.ranges
            dropped = self.rng.random(ranges.shape, np.float32) < self.dropout
            ranges[dropped] = np.nan
            returns.intensity[dropped] = 0.0
            returns.reflectivity[dropped] = 0
        return returns

    def _measure_effects(self, hits: Hits) -> Returns:
        """``lidar_effects`` on the hits."""
        shape = hits.distance.shape
        grid = shape if len(shape) == 2 else (1, hits.distance.size)
        distance = np.ascontiguousarray(hits.distance, np.float32).reshape(grid)
        label = np.ascontiguousarray(hits.label, np.uint8).reshape(grid)
        cosine = np.ascontiguousarray(hits.cosine, np.float32).reshape(grid)
        strength = lidar_effects.signal(distance, label, cosine, _INTENSITY_GAIN)
        returns = self.measure_signal(distance, strength, label)
        return Returns(returns.ranges.reshape(shape), returns.intensity.reshape(shape),
                       returns.reflectivity.reshape(shape),
                       None if returns.label is None else returns.label.reshape(shape))

    def effect_inputs(self) -> tuple[np.uint64, bool, np.ndarray]:
        """What ``lidar_effects.measure`` takes of this model for one scan: the scan's key
        (drawn now where the edges or the noise need one, else 0), whether ranges get noise,
        and the settings (one array, made again only when a setting has changed)."""
        noisy = self.noise_std > 0.0 or self.noise_per_m > 0.0
        # 32 random bits, the high half of the generator's next word (``integers(1 << 32)``
        # takes seven times as long, and a vector of 256 environments draws 256 keys a step)
        key = np.uint64(self.rng.bit_generator.random_raw() >> 32) \
            if self.beam_divergence > 0.0 or noisy else np.uint64(0)
        values = (self.noise_std, self.noise_per_m, self.range_min, self.range_max,
                  self.beam_divergence, self.column_spacing, self.extinction_per_m,
                  self.detection_range)
        if values != self._settings[0]:
            settings = np.array((self.noise_std, self.noise_per_m, np.float32(self.range_min),
                                 np.float32(self.range_max), self.beam_divergence,
                                 self.column_spacing, self.extinction_per_m,
                                 lidar_effects.detection_signal(self.detection_range)))
            settings.flags.writeable = False
            self._settings = (values, settings)
        return key, noisy, self._settings[1]

    def measure_signal(self, distance: np.ndarray, strength: np.ndarray,
                       label: np.ndarray | None = None) -> Returns:
        """``lidar_effects.measure`` on ideal ranges (inf: a miss) and signals, float32 of one
        shape, as (rows, columns) or one row; ``label`` (uint8) where the returns' labels and
        reflectivity matter (else zeros, as for a 2D scan). Draws: the scan's key (the edges'
        offsets and the noise's deviates are hashed from it), then the dropout."""
        shape = distance.shape
        grid = shape if len(shape) == 2 else (1, distance.size)
        distance = distance.reshape(grid)
        strength = strength.reshape(grid)
        label = np.zeros(grid, np.uint8) if label is None else label.reshape(grid)
        rows = self._rows(grid[0])
        key, noisy, settings = self.effect_inputs()
        if sweep.ENABLED:
            ranges = np.empty(grid, np.float32)
            intensity = np.empty(grid, np.float32)
            reflectivity = np.empty(grid, np.uint16)
            returned = np.empty(grid, np.uint8)
            lidar_effects.measure(distance, strength, label, settings, rows, key, noisy,
                                  lidar_effects.NORMALS, _REFLECTIVITY_PERCENT, ranges,
                                  intensity, reflectivity, returned)
        else:
            ranges, intensity, reflectivity, returned = lidar_effects.measure_numpy(
                distance, strength, label, settings, rows, key, noisy, lidar_effects.NORMALS,
                _REFLECTIVITY_PERCENT)
        return self._drop(Returns(ranges.reshape(shape), intensity.reshape(shape),
                                  reflectivity.reshape(shape), returned.reshape(shape)))


def _mount(spec: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    x, y, z, roll, pitch, yaw = (float(v) for v in spec['mount'])
    return np.array([x, y, z]), rotation_matrix(roll, pitch, yaw)


@dataclass
class Lidar2D:
    """A planar scanner: one ray per beam in the sensor's x-y plane, at the frame time.

    On Embree packets (``EmbreePacketRaycaster``) a scan is one compiled call, pose to ranges
    (``EmbreePacketRaycaster.scanner``), with the very results of the NumPy path the other ray
    casters take; ``threads`` > 1 spreads it over numba's threads, for in-process users only
    (see ``arsim_core.backend.embree``). Without ``with_intensity`` (in-process users that read
    only ranges) a scan has no ``/intensity`` output, and is faster. A level scanner (car and
    mount not tilted) is rasterised into the world's slice at its height instead
    (``plane_scan``): the same ranges within micrometres, in less time, the more so without
    AVX-512 (docs/sensors.md); ``plane`` False keeps it on the packets."""

    car: str
    name: str
    mount_position: np.ndarray
    mount_rotation: np.ndarray
    local_directions: np.ndarray
    model: RangeModel
    threads: int = 1
    with_intensity: bool = True
    plane: bool = True  # level scans rasterised into the world's slice (``plane_scan``)

    kind = 'lidar2d'

    def reseed(self, seed: int) -> None:
        """Noise and dropout from ``seed`` afresh."""
        self.model.rng = np.random.default_rng(seed)

    @classmethod
    def from_wire(cls, car: str, spec: Mapping[str, Any], seed: int,
                  frame_period_ns: int = 0) -> Lidar2D:
        position, rotation = _mount(spec)
        directions = beams.planar_directions(float(spec['angle_min']),
                                             float(spec['angle_increment']), int(spec['beams']))
        prepare_scan()  # compiled with the Embree runtime, if one is made
        return cls(car=car, name=str(spec['name']), mount_position=position,
                   mount_rotation=rotation, local_directions=directions,
                   model=RangeModel.from_wire(spec, seed, float(spec['angle_increment'])))

    def render(self, ctx: Context) -> Rendered:
        world, time_ns = ctx.world, ctx.time_ns
        poses = ctx.timeline.poses(-1)
        pose = poses[self.car]
        obstacles = world.obstacles(self.car, poses, time_ns)
        model = self.model
        layer = world.track
        track = layer.raycaster
        if not isinstance(track, EmbreePacketRaycaster):
            returns = self.measured(ctx, pose, obstacles)
            return self._rendered(time_ns, returns.ranges, returns.intensity)
        # One compiled call; noise and dropout are RangeModel's draws in its order, and the
        # other cars are cast along the very rays of the path above. With the LiDAR effects,
        # the call gives the ideal ranges and signals (intensities) that RangeModel then
        # measures, the bits of the path above.
        frame = self._frame
        beams = frame.beams
        effects = model.effects
        noise = model.rng.standard_normal(beams, np.float32) \
            if model.noise_std > 0.0 and not effects else _NONE
        draws = model.rng.random(beams, np.float32) \
            if model.dropout > 0.0 and not effects else _NONE
        if pose.dtype != np.float64 or not pose.flags.carray:
            pose = np.array(pose, np.float64)  # the layout the kernel is compiled for
        plane = layer.plane(frame.height(pose)) if self.plane and frame.level(pose) else None
        boxes = _NO_HITS
        if obstacles is not None:
            origin, directions = track.rays(pose, frame.mount, frame.local, beams)
            hits = obstacles.cast(origin[None, :], directions, model.range_max) \
                if plane is None else obstacles.cast_level(origin, directions, model.range_max)
            boxes = (np.ascontiguousarray(hits.distance, np.float32),
                     np.ascontiguousarray(hits.label, np.uint8),
                     np.ascontiguousarray(hits.cosine, np.float32))
        ranges = np.empty(beams, np.float32)
        intensity = np.empty(beams, np.float32) if self.with_intensity or effects else _NONE
        threads = self.threads
        if effects:  # RangeModel.measure_signal's draws and arithmetic, in the same call
            key, noisy, settings = model.effect_inputs()
            draws = model.rng.random(beams, np.float32) if model.dropout > 0.0 else _NONE
            ideal, strength = np.empty(beams, np.float32), np.empty(beams, np.float32)
            reflectivity, returned = np.empty(beams, np.uint16), np.empty(beams, np.uint8)
            track.measured_scanner(threads, plane)(
                pose, frame.mount, frame.local, layer.labels, model.range_max, _INTENSITY_GAIN,
                *boxes, settings, model._rows(1), key, noisy, lidar_effects.NORMALS,
                _REFLECTIVITY_PERCENT, model.dropout, draws, ideal, strength, frame.no_labels,
                ranges, intensity, reflectivity, returned, threads)
            returns = weathered(world.weather, model, Hits(ideal, returned, strength),
                                Returns(ranges, intensity, reflectivity, returned))
            return self._rendered(time_ns, returns.ranges, returns.intensity)
        track.scanner(threads, plane)(
            pose, frame.mount, frame.local, layer.labels, model.range_max, model.range_min,
            model.range_max, model.noise_std, noise, model.dropout, draws, _INTENSITY_GAIN,
            *boxes, ranges, intensity, threads)
        return self._rendered(time_ns, ranges, intensity)

    def measured(self, ctx: Context, pose: Pose | None = None,
                 obstacles: BoxLayer | None = None) -> Returns:
        """The scan cast ray by ray and measured by ``RangeModel.measure``, at ``pose`` among
        ``obstacles`` (default: the car's at the frame time and the other cars)."""
        if pose is None:
            poses = ctx.timeline.poses(-1)
            pose = poses[self.car]
            obstacles = ctx.world.obstacles(self.car, poses, ctx.time_ns)
        track = ctx.world.track.raycaster
        if isinstance(track, EmbreePacketRaycaster):  # compiled, the very rays of sensor_rays
            frame = self._frame
            origin, directions = track.rays(np.ascontiguousarray(pose, np.float64),
                                            frame.mount, frame.local, frame.beams)
        else:
            origin, directions = sensor_rays(pose, self.mount_position, self.mount_rotation,
                                             self.local_directions)
        hits = ctx.world.cast(origin[None, :], directions, self.model.range_max, obstacles)
        return weathered(ctx.world.weather, self.model, hits, self.model.measure(hits))

    def _rendered(self, time_ns: int, ranges: np.ndarray, intensity: np.ndarray) -> Rendered:
        if not self.with_intensity:
            return Rendered(time_ns, (Output('', ranges, 'ranges'),))
        return Rendered(time_ns, (Output('', ranges, 'ranges'),
                                  Output('/intensity', intensity, 'intensity')))

    @cached_property
    def _frame(self) -> _ScanFrame:
        local = np.asarray(self.local_directions, np.float64).reshape(-1, 3)
        padded = np.zeros((3, -(-len(local) // PACKET) * PACKET))
        padded[0] = 1.0  # a harmless direction for the unused rays of the last packet
        padded[:, :len(local)] = local.T
        return _ScanFrame(
            np.concatenate([np.asarray(self.mount_position, np.float64).reshape(3),
                            np.asarray(self.mount_rotation, np.float64).reshape(9)]),
            padded, len(local))


class Lidar2DBatch:
    """2D scanners with the same number of beams, rendered in one compiled call: the cars of
    a vector of simulations, or of a race. The same draws, rays and results as each one's own
    ``render``; made for a fixed set of sensors, so the stacked mounts and beams are reused."""

    def __init__(self, sensors: Sequence[Lidar2D]) -> None:
        self.sensors = tuple(sensors)
        frames = self.frames = [sensor._frame for sensor in self.sensors]
        self.beams = frames[0].beams
        if any(frame.beams != self.beams for frame in frames):
            msg = 'a Lidar2DBatch needs sensors with the same number of beams'
            raise ValueError(msg)
        self.mounts = np.stack([frame.mount for frame in frames])
        self.level_mounts = np.array([frame.level_mount for frame in frames])
        self.local = np.ascontiguousarray(np.stack([frame.local for frame in frames]))
        self.frame_names = tuple(
            [frame_name(sensor, Output(suffix, _NONE, encoding)) for sensor in self.sensors]
            for suffix, encoding in (('', 'ranges'), ('/intensity', 'intensity')))
        self.range_index = {name: i for i, name in enumerate(self.frame_names[0])}
        self.cars = tuple(sensor.car for sensor in self.sensors)
        self.with_intensity = any(sensor.with_intensity for sensor in self.sensors)
        models = self.models = [sensor.model for sensor in self.sensors]
        self.settings = np.array([(m.range_max, m.range_min, m.range_max, m.noise_std,
                                   m.dropout) for m in models], np.float64)
        # the effects' settings rows, with the rows and each model's settings they were made of
        self._effect_rows: tuple[list[int], list[np.ndarray], np.ndarray] | None = None

    def render(self, ctx: Context, threads: int = 1) -> list[Rendered]:
        """Each sensor's ``render``."""
        ranges, intensity = self.scan(ctx, threads)
        shines = [_NONE] * len(ranges) if intensity is None else intensity
        return [sensor._rendered(ctx.time_ns, row, shine)  # rows as views
                for sensor, row, shine in zip(self.sensors, ranges, shines, strict=True)]

    def scan(self, ctx: Context, threads: int = 1) -> tuple[np.ndarray, np.ndarray | None]:
        """Every sensor's ranges and intensities as rows of two (sensors, beams) arrays, named
        by ``frame_names``; no intensities if no sensor wants them."""
        world, time_ns = ctx.world, ctx.time_ns
        poses = ctx.timeline.poses(-1)
        layer = world.track
        track = layer.raycaster
        assert isinstance(track, EmbreePacketRaycaster)
        n, beams = len(self.sensors), self.beams
        stacked = PoseRows.of(poses).take(self.cars)
        # each sensor's ``_ScanFrame.level`` and ``height``, for all at once
        level = self.level_mounts & np.array([sensor.plane for sensor in self.sensors]) \
            & (stacked[:, 3] == 0.0) & (stacked[:, 4] == 0.0)
        heights = (stacked[:, 2] + self.mounts[:, 2]).astype(np.float32)
        if level.all() and (heights == heights[0]).all():
            plane: PlaneSlice | None = layer.plane(float(heights[0]))
        elif not level.any():
            plane = None
        else:
            return self._one_by_one(ctx)  # the batch takes one slice, or the packets
        models = self.models
        # randomisation may change them; a sensor with LiDAR effects is scanned ideal (no
        # noise, dropout or range limits) and measured by its RangeModel after, as ``render``
        effects = [m.effects for m in models]
        noise_std = [0.0 if e else m.noise_std for m, e in zip(models, effects, strict=True)]
        dropout = [0.0 if e else m.dropout for m, e in zip(models, effects, strict=True)]
        self.settings[:, 1] = [0.0 if e else m.range_min
                               for m, e in zip(models, effects, strict=True)]
        self.settings[:, 2] = [np.inf if e else m.range_max
                               for m, e in zip(models, effects, strict=True)]
        self.settings[:, 3] = noise_std
        self.settings[:, 4] = dropout
        noise, draws = _NONE_ROWS, _NONE_ROWS
        if any(noise_std):  # standard deviations are never negative
            noise = np.zeros((n, beams), np.float32)
            for row, model, std in zip(noise, models, noise_std, strict=True):
                if std > 0.0:
                    row[:] = model.rng.standard_normal(beams, np.float32)
        if any(dropout):
            draws = np.zeros((n, beams), np.float32)
            for row, model, drop in zip(draws, models, dropout, strict=True):
                if drop > 0.0:
                    row[:] = model.rng.random(beams, np.float32)
        boxes = _NO_BOX_ROWS
        obstacles = [world.obstacles(sensor.car, poses, time_ns) for sensor in self.sensors] \
            if world.cars_visible else []
        if any(o is not None for o in obstacles):
            boxes = self._box_hits(track, stacked, obstacles, plane is not None)
        ranges = np.empty((n, beams), np.float32)
        shining = self.with_intensity or any(effects)
        intensity = np.empty((n, beams), np.float32) if shining else _NONE_ROWS
        track.batch_scanner(threads, plane)(
            stacked, self.mounts, self.local, layer.labels, self.settings, noise, draws,
            _INTENSITY_GAIN, *boxes, ranges, intensity, threads)
        measured = [i for i, on in enumerate(effects) if on]
        if measured:
            ranges, intensity = self._measure(world.weather, measured, ranges, intensity,
                                              threads)
        return ranges, intensity if self.with_intensity else None

    def _box_hits(self, track: EmbreePacketRaycaster, poses: np.ndarray,
                  obstacles: list[BoxLayer | None],
                  level: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The other cars' hits (distance, label, cosine; rows of (sensors, beams)) along each
        sensor's rays, as its own ``render`` casts them; level scans among the same boxes
        rasterised in one compiled call."""
        n, beams = len(self.sensors), self.beams
        distance = np.full((n, beams), np.inf, np.float32)
        label, cosine = np.zeros((n, beams), np.uint8), np.zeros((n, beams), np.float32)
        origins, directions = track.rays_many(poses, self.mounts, self.local, beams)
        seeing = [(i, found) for i, found in enumerate(obstacles) if found is not None]
        far = np.array([model.range_max for model in self.models])
        done = np.zeros(n, np.bool_)
        frames = seeing[0][1].frames
        if level and all(found.frames is frames for _, found in seeing):
            skips = np.array([-1 if found is None else found.skip for found in obstacles])
            rasterise_boxes_rows(frames, skips, np.array([i for i, _ in seeing]), origins,
                                 directions, far, distance, label, cosine, done)
        for i, found in seeing:
            if not done[i]:
                hits = found.cast(origins[i][None, :], directions[i], far[i])
                distance[i], label[i], cosine[i] = hits.distance, hits.label, hits.cosine
        return distance, label, cosine

    def _one_by_one(self, ctx: Context) -> tuple[np.ndarray, np.ndarray | None]:
        """``scan`` as each sensor's own ``render``: for sensors that scan different slices
        of the world (level at different heights), or some a slice and some packets."""
        rendered = [sensor.render(ctx).outputs for sensor in self.sensors]
        ranges = np.stack([outputs[0].array for outputs in rendered])
        if not self.with_intensity:
            return ranges, None
        return ranges, np.stack([outputs[1].array if len(outputs) > 1
                                 else np.zeros(self.beams, np.float32) for outputs in rendered])

    def _measure(self, weather: Weather, rows: list[int], ranges: np.ndarray,
                 intensity: np.ndarray, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The LiDAR effects of the sensors ``rows`` on their ideal ranges and signals, in one
        compiled call (its rows over ``threads`` of numba's threads, as the scans): each
        one's ``RangeModel.measure_signal`` (its draws in its order: the scan's key, then the
        dropout) and its weather. The scan's ranges and intensities: new arrays, or the
        ones given with ``rows`` overwritten."""
        n, beams = ranges.shape
        models = self.models
        inputs = [models[i].effect_inputs() for i in rows]
        keys, noisy, dropout = np.zeros(n, np.uint64), np.zeros(n, np.bool_), np.zeros(n)
        keys[rows] = [key for key, _, _ in inputs]
        noisy[rows] = [wanted for _, wanted, _ in inputs]
        dropout[rows] = [models[i].dropout for i in rows]
        settings = self._effect_settings(rows, [chosen for _, _, chosen in inputs])
        draws = _NONE_ROWS
        if dropout.any():
            draws = np.zeros((n, beams), np.float32)
            for i in rows:
                if dropout[i] > 0.0:
                    draws[i] = models[i].rng.random(beams, np.float32)
        measured = np.empty((n, beams), np.float32), np.empty((n, beams), np.float32)
        reflectivity, returned = np.empty((n, beams), np.uint16), np.empty((n, beams), np.uint8)
        arguments = (ranges, intensity, self.no_labels, settings, keys, noisy, _NO_ROWS,
                     lidar_effects.NORMALS, _REFLECTIVITY_PERCENT, dropout, draws,
                     np.asarray(rows, np.intp), *measured, reflectivity, returned)
        runs = min(threads, len(rows))
        if runs > 1:
            lidar_effects.measure_rows_threaded(*arguments, runs)
        else:
            lidar_effects.measure_rows(*arguments)
        if not changes_scans(weather):
            if len(rows) == n:  # every sensor's: the measured rows are the scan
                return measured
            ranges[rows], intensity[rows] = measured[0][rows], measured[1][rows]
            return ranges, intensity
        for i in rows:
            returns = weathered(weather, models[i], Hits(ranges[i], returned[i], intensity[i]),
                                Returns(measured[0][i], measured[1][i], reflectivity[i],
                                        returned[i]))
            ranges[i], intensity[i] = returns.ranges, returns.intensity
        return ranges, intensity

    def _effect_settings(self, rows: list[int], chosen: list[np.ndarray]) -> np.ndarray:
        """The settings rows of ``measure_rows`` (zeros but ``rows``, which take ``chosen``),
        made again only when a model has made new settings (``effect_inputs`` keeps them)."""
        kept = self._effect_rows
        if kept is not None and kept[0] == rows and all(
                new is old for new, old in zip(chosen, kept[1], strict=True)):
            return kept[2]
        settings = np.zeros((len(self.sensors), lidar_effects.THRESHOLD + 1))
        settings[rows] = chosen
        self._effect_rows = (list(rows), chosen, settings)
        return settings

    @cached_property
    def no_labels(self) -> np.ndarray:
        """The labels the sensors' effects take: none (zeros), as ``measure_signal``'s."""
        return np.zeros((len(self.sensors), self.beams), np.uint8)


@dataclass(frozen=True)
class _ScanFrame:
    """What ``EmbreePacketRaycaster.scanner`` takes of a Lidar2D: the mount (position, then the
    rotation row by row) and the beams' directions in the sensor frame (3, beams padded to a
    multiple of 16), float64."""

    mount: np.ndarray
    local: np.ndarray
    beams: int

    @cached_property
    def level_mount(self) -> bool:
        """Whether the beams stay horizontal on a level car, evenly turned as ``plane_scan``
        needs: they lie in the sensor's x-y plane, one turn apart (not zero) within 1e-6 of a
        radian, and the mount keeps that plane horizontal (up to 1e-9 of a radian, the
        rounding of a mount turned upside down)."""
        x, y, z = self.local[:, :self.beams]
        turns = np.angle(np.exp(1j * np.diff(np.arctan2(y, x))))
        even = len(turns) == 0 or (abs(turns[0]) > 1e-9
                                   and bool(np.all(np.abs(turns - turns[0]) <= 1e-6)))
        return bool(abs(self.mount[9]) <= 1e-9 and abs(self.mount[10]) <= 1e-9
                    and not z.any() and even)

    def level(self, pose: np.ndarray) -> bool:
        """Whether the beams are horizontal on a car at ``pose``: neither rolled nor
        pitched, and a level mount."""
        return pose[3] == 0.0 and pose[4] == 0.0 and self.level_mount

    def height(self, pose: np.ndarray) -> float:
        """The beams' height on a level car at ``pose``: the float32 origin Embree's rays
        would have, which the compiled ``sensor_frame`` makes ``z + mount z`` exactly."""
        return float(np.float32(pose[2] + self.mount[2]))

    @cached_property
    def no_labels(self) -> np.ndarray:
        """The labels a 2D scan's effects take: none (zeros), as ``measure_signal``'s."""
        return np.zeros(self.beams, np.uint8)


_NONE = np.empty(0, np.float32)  # no noise or dropout draws
_NO_HITS = (_NONE, np.empty(0, np.uint8), _NONE)  # no other cars
_NONE_ROWS = np.empty((1, 0), np.float32)  # no sensor of a batch draws noise or dropout
_NO_ROWS = np.zeros(0)  # the row spacing of a 2D scan: it has one row
_NO_BOX_ROWS = (_NONE_ROWS, np.empty((1, 0), np.uint8), _NONE_ROWS)  # no sensor sees a car


def sensor_rays(pose: Pose, mount_position: np.ndarray, mount_rotation: np.ndarray,
                local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Origin (3,) and world directions (n, 3), float64, of a sensor at ``mount_position``
    and ``mount_rotation`` on a car at ``pose`` (x, y, z, roll, pitch, yaw), with beams
    ``local`` (n, 3) in its frame: ``R(pose) @ R_mount`` and ``pose + R(pose) @ mount``, term
    by term as ``EmbreePacketRaycaster.rays`` computes them (a BLAS matmul fuses multiplies
    and adds, and rounds differently), so both paths cast the same rays."""
    x, y, z, roll, pitch, yaw = pose
    car = rotation_matrix(roll, pitch, yaw)
    mount_rotation = np.asarray(mount_rotation, np.float64)
    rotation = (car[:, 0:1] * mount_rotation[0] + car[:, 1:2] * mount_rotation[1]
                + car[:, 2:3] * mount_rotation[2])
    origin = np.array([x, y, z]) + (car[:, 0] * mount_position[0] + car[:, 1] * mount_position[1]
                                    + car[:, 2] * mount_position[2])
    local = np.asarray(local, np.float64)
    directions = (local[:, 0:1] * rotation[:, 0] + local[:, 1:2] * rotation[:, 1]
                  + local[:, 2:3] * rotation[:, 2])
    return origin, directions


def _rotations(poses: np.ndarray) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of poses (n, 6), R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = np.cos(poses[:, 3]), np.sin(poses[:, 3])
    cp, sp = np.cos(poses[:, 4]), np.sin(poses[:, 4])
    cy, sy = np.cos(poses[:, 5]), np.sin(poses[:, 5])
    return np.stack([
        np.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], axis=-1),
        np.stack([sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], axis=-1),
        np.stack([-sp, cp * sr, cp * cr], axis=-1)], axis=1)


@dataclass
class Lidar3D:
    """A spinning multi-channel LiDAR; one revolution per render, columns swept in time."""

    car: str
    name: str
    mount_position: np.ndarray
    mount_rotation: np.ndarray
    local_directions: np.ndarray  # (channels, columns, 3)
    period_ns: int
    column_offsets_ns: np.ndarray
    model: RangeModel
    labels: bool = False  # also send each return's semantic label ('/labels')

    kind = 'lidar3d'

    def reseed(self, seed: int) -> None:
        """Noise and dropout from ``seed`` afresh."""
        self.model.rng = np.random.default_rng(seed)

    @classmethod
    def from_wire(cls, car: str, spec: Mapping[str, Any], seed: int,
                  frame_period_ns: int = 0) -> Lidar3D:
        position, rotation = _mount(spec)
        columns = int(spec['columns'])
        directions = beams.spinning_directions(float(spec['azimuth_start']),
                                               float(spec['azimuth_increment']), columns,
                                               [float(e) for e in spec['elevations']])
        if len(spec['elevations']) != int(spec['channels']):
            msg = f'lidar3d {spec["name"]!r}: channels and the number of elevations differ'
            raise ValueError(msg)
        period = beams.scan_period_ns(float(spec['rate_hz']), frame_period_ns) \
            if frame_period_ns > 0 else round(1e9 / float(spec['rate_hz']))
        return cls(car=car, name=str(spec['name']), mount_position=position,
                   mount_rotation=rotation, local_directions=directions, period_ns=period,
                   column_offsets_ns=beams.column_offsets_ns(period, columns),
                   model=RangeModel.from_wire(spec, seed, float(spec['azimuth_increment']),
                                              -np.diff(np.asarray(spec['elevations'], float))),
                   labels=bool(spec.get('labels')))

    @cached_property
    def _column_directions(self) -> np.ndarray:
        """``local_directions`` as (columns, 3, channels) float32, the layout ``render``
        rotates per column."""
        return np.ascontiguousarray(self.local_directions.transpose(1, 2, 0), dtype=np.float32)

    def _rays(self, poses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each column's origin (columns, 3) and ray directions (channels, columns, 3), float32,
        in the world, from the car's pose at the column's time."""
        if sweep.ENABLED:
            origins = np.empty((len(poses), 3), np.float32)
            directions = np.empty(self.local_directions.shape, np.float32)
            sweep.column_rays(poses, self.mount_position, self.mount_rotation,
                              self._local_directions, origins, directions)
            return origins, directions
        car_rotation = _rotations(poses)
        origins = (poses[:, :3] + car_rotation @ self.mount_position).astype(np.float32)
        sensor_rotation = (car_rotation @ self.mount_rotation).astype(np.float32)
        # (columns, 3, 3) @ (columns, 3, channels) -> directions (channels, columns, 3)
        directions = np.ascontiguousarray(
            np.matmul(sensor_rotation, self._column_directions).transpose(2, 0, 1))
        return origins, directions

    @cached_property
    def _local_directions(self) -> np.ndarray:
        """``local_directions`` as float32, the compiled sweep's input."""
        return np.ascontiguousarray(self.local_directions, dtype=np.float32)

    def revolution_start(self, time_ns: int) -> int:
        """Start of the last revolution completed by ``time_ns`` (the cloud's stamp)."""
        return max(0, (time_ns // self.period_ns - 1) * self.period_ns)

    def render(self, ctx: Context) -> Rendered:
        timeline = ctx.timeline
        start = self.revolution_start(ctx.time_ns)
        times = start + self.column_offsets_ns
        poses = timeline.pose_at(self.car, times)
        origins, directions = self._rays(poses)
        world = ctx.world
        # The track stands still: one cast for the whole revolution (each channel row cycles
        # through the columns' origins). The other cars are cast per frame, each group of
        # columns against the cars where they were at its frame.
        hits = _shaped(world.track.cast(origins, directions.reshape(-1, 3),
                                        self.model.range_max), directions.shape[:2])
        frames = timeline.frame_after(times)
        for frame in np.unique(frames):
            obstacles = world.obstacles(self.car, timeline.poses(int(frame)),
                                        int(timeline.times[frame]))
            if obstacles is not None:
                self._occlude(hits, obstacles, origins, directions, frames == frame)
            if world.board is not None:  # a calibration board: its extrinsics checked on it
                self._occlude_board(hits, world.board, origins, directions, frames == frame,
                                    int(timeline.times[frame]), timeline.poses(int(frame)))
        returns = weathered(world.weather, self.model, hits, self.model.measure(hits))
        outputs: tuple[Output, ...] = (
            Output('', returns.ranges, 'ranges'),
            Output('/intensity', returns.intensity, 'intensity'),
            Output('/reflectivity', returns.reflectivity, 'reflectivity'))
        if self.labels:  # what each return hit; NONE where there is no return
            hit = hits.label if returns.label is None else returns.label
            point_labels = np.where(np.isfinite(returns.ranges), hit, NONE)
            outputs += (Output('/labels', point_labels.astype(np.uint8), 'labels'),)
        return Rendered(start, outputs)

    def _occlude(self, hits: Hits, obstacles: BoxLayer, origins: np.ndarray,
                 directions: np.ndarray, columns: np.ndarray) -> None:
        """Cast the ``columns`` (a mask) against ``obstacles`` too; nearer hits replace those
        in ``hits``, in place."""
        rays = directions[:, columns]
        boxes = _shaped(obstacles.cast(origins[columns], rays.reshape(-1, 3),
                                       self.model.range_max), rays.shape[:2])
        fields = (hits.distance, hits.label, hits.cosine)
        near = nearer(Hits(*(f[:, columns] for f in fields)), boxes)
        for whole, part in zip(fields, (near.distance, near.label, near.cosine), strict=True):
            whole[:, columns] = part


    def _occlude_board(self, hits: Hits, board: Board, origins: np.ndarray,
                       directions: np.ndarray, columns: np.ndarray, time_ns: int,
                       poses: Mapping[str, Pose]) -> None:
        """``_occlude`` for the calibration board where it stands at ``time_ns``."""
        rays = directions[:, columns]
        starts = np.broadcast_to(origins[columns], rays.shape).reshape(-1, 3)
        found = board.cast(starts, rays.reshape(-1, 3), self.model.range_max, time_ns, poses)
        if found is None:
            return
        fields = (hits.distance, hits.label, hits.cosine)
        near = nearer(Hits(*(f[:, columns] for f in fields)), _shaped(found, rays.shape[:2]))
        for whole, part in zip(fields, (near.distance, near.label, near.cosine), strict=True):
            whole[:, columns] = part


def _shaped(hits: Hits, shape: tuple[int, ...]) -> Hits:
    """Flat hits of an (channels x columns) grid of rays as (channels, columns) arrays."""
    return Hits(hits.distance.reshape(shape), hits.label.reshape(shape),
                hits.cosine.reshape(shape))
