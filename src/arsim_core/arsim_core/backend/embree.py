"""Embree 4 packet ray casting, called from numba-compiled code.

``embreex`` traces one ray at a time from Cython (about 9 M rays/s on one core here for an
OS1-64 revolution on arsim_ring); calling Embree's packet intersector from a numba loop, with no
Python between packets, is several times faster. Packets are as wide as Embree traces natively
on the CPU (``packet_width``: 16 rays with AVX-512, 8 with AVX2, 4 with SSE); Embree emulates
wider ones, and its emulated 16-wide packets were 3 times slower on AVX2 than native 8-wide
ones. ``ARSIM_EMBREE_CONFIG`` is Embree's device configuration (``isa=avx2`` casts as an AVX2
machine would). The loop is single-threaded on purpose: numba's parallel loops slow down
ten-fold when their threads are preempted. A cast of many rays (a 3D LiDAR's revolution) is
instead shared with one helper thread (``helper_thread``). The library is the one the embreex
wheel ships (or a system ``libembree4``); scenes are built through its C API with ctypes, in
Embree's robust (watertight) mode.

A 2D LiDAR has a second kernel, ``scan``: the sensor's rays from the car's pose, the packets
and the range model in one call, so a 1080-beam scan on arsim_ring renders in about 30 us
(20 of them in Embree) where ``cast`` and the NumPy around it took 64. Its parallel build
(``threads`` > 1, about 20 us with two threads here) is for in-process users with cores to
spare, such as a Gymnasium environment; the backend process keeps one thread, for the reason
above.

Layouts follow ``rtcore_ray.h`` of Embree 4: a ``RTCRayHitN`` is the ray (12 arrays of N
floats/uints: org xyz, tnear, dir xyz, time, tfar, mask, id, flags) followed by the hit (Ng xyz,
u, v, primID, geomID, instID, and instPrimID in builds with instance arrays), 64-byte aligned.
Only fields before ``instID`` are read, so both builds work.

Packets are traced with ``RTC_RAY_QUERY_FLAG_COHERENT`` in their ``RTCIntersectArguments``:
sensor rays are coherent (neighbouring beams share an origin and nearly a direction), and
Embree's coherent traversal cast a 65k-ray OS1 revolution 2.6 times as fast here.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import importlib.util
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from arsim_core._jit import NUMBA_WANTED, cached_njit
from arsim_core.backend import helper_thread, lidar_effects, plane_scan
from arsim_core.backend.raycast import Cast, check_origins

_RTC_GEOMETRY_TYPE_TRIANGLE = 0
_RTC_BUILD_QUALITY_MEDIUM = 1
_RTC_BUFFER_TYPE_INDEX = 0
_RTC_BUFFER_TYPE_VERTEX = 1
_RTC_FORMAT_UINT3 = 0x5003
_RTC_FORMAT_FLOAT3 = 0x9003
_INVALID_ID = 0xFFFFFFFF
_RTC_RAY_QUERY_FLAG_COHERENT = 1 << 16
_RTC_FEATURE_FLAG_ALL = 0xFFFFFFFF
_RTC_SCENE_FLAG_ROBUST = 1 << 2
# rtcGetDeviceProperty: whether rtcIntersect4/8/16 run natively, not emulated
_RTC_DEVICE_PROPERTY_NATIVE_RAY = {4: 32, 8: 33, 16: 34}
PACKET = 16  # rays that callers pad their beams to: a multiple of every packet width
_PACKET_FIELDS = 12 + 9  # ray + hit, up to and including instPrimID
# ARSIM_EMBREE_CONFIG: Embree's device configuration (e.g. ``isa=avx2``), to run the casters as
# on a machine of another CPU class.
_DEVICE_CONFIG = os.environ.get('ARSIM_EMBREE_CONFIG', '')


class EmbreeUnavailableError(ImportError):
    """No usable Embree 4 library or numba on this machine."""


def _library_path() -> str:
    spec = importlib.util.find_spec('embreex')
    if spec is not None and spec.origin:
        libs = Path(spec.origin).parent.parent / 'embreex.libs'
        found = sorted(glob.glob(str(libs / 'libembree4*.so*')))
        if found:
            return found[0]
    name = ctypes.util.find_library('embree4')
    if name is None:
        msg = 'no Embree 4 library (install embreex, or libembree4 from the system)'
        raise EmbreeUnavailableError(msg)
    return name


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    p, u, i, s = ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_size_t
    for name, restype, argtypes in (
            ('rtcNewDevice', p, [ctypes.c_char_p]),
            ('rtcGetDeviceError', i, [p]),
            ('rtcGetDeviceProperty', ctypes.c_ssize_t, [p, i]),
            ('rtcNewScene', p, [p]),
            ('rtcSetSceneFlags', None, [p, i]),
            ('rtcSetSceneBuildQuality', None, [p, i]),
            ('rtcReleaseScene', None, [p]),
            ('rtcCommitScene', None, [p]),
            ('rtcNewGeometry', p, [p, i]),
            ('rtcSetNewGeometryBuffer', p, [p, i, u, i, s, s]),
            ('rtcSetGeometryBuildQuality', None, [p, i]),
            ('rtcCommitGeometry', None, [p]),
            ('rtcAttachGeometry', u, [p, p]),
            ('rtcReleaseGeometry', None, [p])):
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


class _Runtime:
    """The library, one device for the process, and the compiled packet kernels."""

    def __init__(self) -> None:
        try:
            import numba
        except ImportError as exc:
            msg = 'numba is not installed'
            raise EmbreeUnavailableError(msg) from exc
        if not NUMBA_WANTED:
            msg = 'numba disabled by ARSIM_NUMBA'
            raise EmbreeUnavailableError(msg)
        try:
            self.lib = _bind(ctypes.CDLL(_library_path()))
        except OSError as exc:
            raise EmbreeUnavailableError(str(exc)) from exc
        self.device = self.lib.rtcNewDevice(_DEVICE_CONFIG.encode() or None)
        if not self.device:
            msg = f'rtcNewDevice failed (ARSIM_EMBREE_CONFIG={_DEVICE_CONFIG!r})'
            raise EmbreeUnavailableError(msg)
        self.width = packet_width(self.lib, self.device)
        self._numba = numba
        self.intersect = _intersect(self.lib, self.width)
        _define_call(numba)
        self.kernel = _compile(self.width)
        self._scans: dict[tuple[bool, bool], tuple[Any, Any, Any, Any, Any]] = {}
        # Compile (about a second each) or load from numba's cache now, not in the middle of
        # the first frame.
        empty = np.empty((0, 3), np.float32)
        self.kernel(self.intersect, 0, empty, empty, np.float32(0.0), np.float32(1.0),
                    np.empty(0, np.float32), np.empty(0, np.int32), np.empty(0, np.float32))
        if _SCAN_WANTED:
            self.scanner(parallel=False)
            self.scanner(parallel=False, plane=True)

    def scanner(self, parallel: bool, plane: bool = False) -> tuple[Any, Any, Any, Any, Any]:
        """The kernels ``rays``, ``scan``, ``scan_many``, ``scan_measured`` and ``rays_many``
        of ``_compile_scan``, the scans serial or over numba's threads, on Embree's packets or
        rasterised into a ``PlaneSlice`` (``plane``); ``scan_many`` and ``rays_many`` compile
        on their first call."""
        kernels = self._scans.get((parallel, plane))
        if kernels is None:
            rays, scan, scan_many, scan_measured, rays_many = _compile_scan(
                self._numba, self.width, parallel, plane)
            caster = plane_scan.slice_mesh(np.zeros((0, 3)), np.zeros((0, 3)), 0.0).arrays() \
                if plane else (self.intersect, 0)
            pose, mount, local = np.zeros(6), np.zeros(12), np.empty((3, 0))
            if not parallel and not plane:  # ``rays`` is taken from the serial packets
                rays(pose, mount, local, np.empty(3), np.empty((0, 3)))
            floats, labels = np.empty(0, np.float32), np.zeros(1, np.uint8)
            scan(caster, pose, mount, local, labels, 1.0, 0.0, 1.0, 0.0, floats,
                 0.0, floats, floats, floats, labels, floats, floats, floats.copy(), 1)
            settings = np.zeros(lidar_effects.THRESHOLD + 1)
            settings.flags.writeable = False  # as ``RangeModel.effect_inputs`` hands it over
            scan_measured(caster, pose, mount, local, labels, 1.0, floats, floats,
                          labels[:0], floats, settings, np.zeros(0), np.uint64(0), False,
                          lidar_effects.NORMALS, np.zeros(1, np.uint16), 0.0, floats, floats,
                          floats, labels[:0], floats, floats, np.zeros(0, np.uint16),
                          labels[:0], 1)
            kernels = self._scans[parallel, plane] = (rays, scan, scan_many, scan_measured,
                                                      rays_many)
        return kernels


def packet_width(lib: ctypes.CDLL, device: int) -> int:
    """The widest packet (16, 8 or 4 rays) Embree traces natively on this CPU: wider ones are
    emulated, several times slower (16-wide packets on AVX2 took 5.5 times as long as on
    AVX-512 here for an OS1-64 revolution)."""
    for width in (16, 8):
        if lib.rtcGetDeviceProperty(device, _RTC_DEVICE_PROPERTY_NATIVE_RAY[width]):
            return width
    return 4


def _intersect(lib: ctypes.CDLL, width: int) -> int:
    """The address of ``rtcIntersect4``, ``8`` or ``16`` (valid, scene, rayhit, arguments),
    which the kernels take as an argument and call through ``_call``."""
    address = ctypes.cast(getattr(lib, f'rtcIntersect{width}'), ctypes.c_void_p).value
    if not address:
        msg = f'rtcIntersect{width} not found in the Embree library'
        raise EmbreeUnavailableError(msg)
    return address


_call: Any = None  # the intrinsic of ``_define_call``, once numba is imported


def _define_call(numba: Any) -> None:
    """``_call(function, valid, scene, rayhit, arguments)``: call the C function at address
    ``function`` with four pointer-sized arguments, from compiled code.

    The kernels take Embree's address as an argument instead of holding a ctypes function:
    compiled code with a ctypes function has its address built in, which the next process
    (the library loaded elsewhere) cannot use, so every process compiled the kernels anew
    (3 of the 4.3 s of CPU a simulation took to start here). With the address an argument,
    numba caches them (``_cached``) and a process loads them in milliseconds."""
    global _call
    if _call is not None:
        return
    from llvmlite import ir
    from numba.core import types

    @numba.extending.intrinsic
    def call(typingctx: Any, function: Any, valid: Any, scene: Any, rayhit: Any,
             arguments: Any) -> Any:
        signature = types.void(function, valid, scene, rayhit, arguments)

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> None:
            word = ir.IntType(64)
            pointer = ir.FunctionType(ir.VoidType(), [word] * 4).as_pointer()
            words = [context.cast(builder, value, kind, types.uint64)
                     for value, kind in zip(args, sig.args, strict=True)]
            builder.call(builder.inttoptr(words[0], pointer), words[1:])
            return context.get_dummy_value()

        return signature, codegen

    call._set_uuid('arsim.embree:_call')  # pickled into the cache keys (``_cached``)
    _call = call


def _cached(dispatcher: Any, *key: object) -> Any:
    """Let numba cache ``dispatcher``, a kernel or helper made by a function of this module
    for one packet width, across processes. Numba keys its cache on the pickled cells of a
    closure, and a pickled dispatcher carries a random id, so a kernel calling helpers made
    here would never find its cache again; an id made of the helper's name and ``key`` (the
    width, serial or parallel) is the same in every process."""
    name = dispatcher.py_func.__qualname__
    dispatcher._set_uuid(f'arsim.embree:{name}:' + ':'.join(map(str, key)))
    return dispatcher


def _compiled(*key: object, **options: Any) -> Callable[[Any], Any]:
    """``numba.njit``, releasing the GIL, cached across processes (``_cached``) where
    ``arsim_core._jit`` has a cache directory."""
    def decorate(function: Any) -> Any:
        return _cached(cached_njit(function, **options), *key)

    return decorate


def _packet_setup(width: int) -> Any:
    """Numba function ``new_packet(tnear) -> (ray, bits, arguments)``: a zeroed, 64-byte aligned
    ``RTCRayHit<width>`` as float32 (``ray``) and uint32 (``bits``) views, with the fields no
    intersection changes set (tnear, time, mask: every geometry, id, flags), and the
    ``RTCIntersectArguments`` of a coherent query (flags, feature_mask, context, filter,
    intersect (NULL), minWidthDistanceFactor, read only by builds with RTC_MIN_WIDTH). Field f
    of lane k is word ``f * width + k``."""
    words, invalid = _PACKET_FIELDS * width, np.uint32(_INVALID_ID)
    coherent = np.uint32(_RTC_RAY_QUERY_FLAG_COHERENT)
    all_features = np.uint32(_RTC_FEATURE_FLAG_ALL)
    unit_width = np.float32(1.0).view(np.uint32)

    @_compiled(width)
    def new_packet(tnear: np.float32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raw = np.empty(words + 16, np.float32)  # room to align to 64 bytes
        skip = ((64 - raw.ctypes.data % 64) % 64) // 4
        ray = raw[skip:skip + words]
        for k in range(words):  # no stale garbage (or slow denormals) in a miss's hit
            ray[k] = 0.0
        bits = ray.view(np.uint32)
        for k in range(width):  # time, id and flags stay 0
            ray[3 * width + k] = tnear
            bits[9 * width + k] = invalid
        arguments = np.zeros(10, np.uint32)
        arguments[0] = coherent
        arguments[1] = all_features
        arguments[8] = unit_width
        return ray, bits, arguments

    return new_packet


def _steady() -> Any:
    """Numba function ``steady(v) -> float32``: a direction component as Embree may take it.
    Embree replaces a component smaller than 1e-18 by +1e-18 before taking its reciprocal, so a
    tiny negative one (a float32 rotation by an exact quarter turn leaves -5e-24) flips the
    slab test's sign and the ray misses what it points at; zero is replaced the right way."""
    zero = np.float32(0.0)
    tiny = np.float32(1e-18)

    @_compiled(inline='always')
    def steady(value: np.float32) -> np.float32:
        return value if abs(value) >= tiny else zero

    return steady


def _incidence(width: int) -> Any:
    """Numba function ``incidence(ray, k) -> float32``: |cos| of the angle between lane k's
    ray and the surface it hit, from Embree's geometric normal Ng (unnormalised; no
    instancing, so in the world frame); 0 for a degenerate normal."""
    zero = np.float32(0.0)
    normal, direction = 12 * width, 4 * width

    @_compiled(width, inline='always')
    def incidence(ray: np.ndarray, k: int) -> np.float32:
        nx, ny, nz = ray[normal + k], ray[normal + width + k], ray[normal + 2 * width + k]
        length = np.sqrt(nx * nx + ny * ny + nz * nz)
        dot = (nx * ray[direction + k] + ny * ray[direction + width + k]
               + nz * ray[direction + 2 * width + k])
        return abs(dot) / length if length > 0.0 else zero

    return incidence


def _compile(width: int) -> Any:
    """Numba kernel ``cast(intersect, scene, origins, directions, tnear, tfar, distance,
    primitive, cosine)``: cast n rays in packets of ``width`` with Embree's ``intersect``
    (``_intersect``)."""
    new_packet = _packet_setup(width)
    incidence = _incidence(width)
    steady = _steady()
    w = width
    oy, oz, dx, dy, dz, tfar = w, 2 * w, 4 * w, 5 * w, 6 * w, 8 * w
    prim, geom, inst = 17 * w, 18 * w, 19 * w
    invalid = np.uint32(_INVALID_ID)
    inf, zero = np.float32(np.inf), np.float32(0.0)

    @_compiled(width)
    def cast(intersect: int, scene: int, origins: np.ndarray, directions: np.ndarray, tnear: float,
             tfar_value: float, distance: np.ndarray, primitive: np.ndarray,
             cosine: np.ndarray) -> None:
        n = directions.shape[0]
        m = origins.shape[0]
        packets = (n + w - 1) // w
        ray, bits, arguments = new_packet(tnear)
        valid = np.empty(w, np.int32)
        for packet in range(packets):
            base = packet * w
            first = base % m
            # Whole-packet loops, stored as vectors: Embree reads the packet with vector loads
            # right away, which scalar stores would stall. Lanes past n repeat ray n - 1.
            for k in range(w):
                i = min(base + k, n - 1)
                if m == 1:
                    o = 0
                elif m >= w:
                    o = first + k
                    if o >= m:
                        o -= m
                else:
                    o = i % m
                valid[k] = -1 if base + k < n else 0
                ray[k] = origins[o, 0]
                ray[oy + k] = origins[o, 1]
                ray[oz + k] = origins[o, 2]
                ray[dx + k] = steady(directions[i, 0])
                ray[dy + k] = steady(directions[i, 1])
                ray[dz + k] = steady(directions[i, 2])
                ray[tfar + k] = tfar_value
                bits[prim + k] = invalid
                bits[geom + k] = invalid
                bits[inst + k] = invalid
            _call(intersect, valid.ctypes.data, scene, ray.ctypes.data, arguments.ctypes.data)
            for k in range(min(w, n - base)):  # branch-free; misses read stale normals
                i = base + k
                hit = bits[geom + k] != invalid
                distance[i] = ray[tfar + k] if hit else inf
                primitive[i] = np.int32(bits[prim + k]) if hit else -1
                cosine[i] = incidence(ray, k) if hit else zero

    return cast


def _compile_scan(numba: Any, width: int, parallel: bool,
                  plane: bool = False) -> tuple[Any, Any, Any, Any, Any]:
    """Numba kernels of a scanner with a single origin (a 2D LiDAR): ``rays``, its rays in
    the world, ``scan``, pose to measured ranges in one call, ``scan_many``, several
    sensors' scans, ``scan_measured``, a scan with the LiDAR effects, and ``rays_many``,
    several sensors' rays.

    ``rays(pose, mount, local, origin, directions)`` writes the sensor's origin (3,) and the
    world directions (n, 3) of its ``local`` ones (3, n), float64, where ``pose`` is the car's
    x, y, z, roll, pitch, yaw and ``mount`` the sensor's x, y, z and rotation (row-major): the
    rotation ``R(pose) @ R_mount`` (``geometry.rotation_matrix``) and the origin ``pose +
    R(pose) @ mount``, term by term, as ``lidar.sensor_rays`` computes them in NumPy.

    ``scan(caster, pose, mount, local, labels, max_distance, range_min, range_max,
    noise_std, noise, dropout, draws, gain, box_distance, box_label, box_cosine, ranges,
    intensity, chunks)`` does what ``Lidar2D.render`` does on the generic path, with the same
    arithmetic, so the results are the same bits:

    - the rays of ``rays``, rounded to float32, cast against the track (``caster``: Embree's
      ``intersect`` (``_intersect``) and the scene) within ``max_distance``, hits labelled by
      ``labels`` (its last entry for a miss);
    - where the other cars' hits ``box_distance`` (empty if there are none: the caller casts
      them along ``rays``) are strictly nearer, theirs instead (``scene.nearer``);
    - ``lidar.RangeModel.measure``: ``noise`` (the caller's float32 standard normals, or
      empty) times ``noise_std`` added, intensity ``gain[label] * cosine / max(range, 1)^2``,
      +inf beyond ``range_max``, -inf below ``range_min``, and NaN with zero intensity where
      ``draws`` (the caller's uniform float32, or empty) fall below ``dropout``; thresholds in
      float32, as NumPy compares a float32 array with a Python float.

    An empty ``intensity`` skips the intensities (a user who reads only ranges, such as a
    Gymnasium environment; 8 % of a scan here). Rays are traced in packets of ``width``; the
    parallel build spreads ``chunks`` runs of packets over numba's threads, the serial one
    ignores ``chunks``.

    With ``plane``, the kernels take a level scanner's ``plane_scan.PlaneSlice`` as their
    ``caster`` (its ``arrays()``) and rasterise the beams into it instead of tracing packets:
    the same results within micrometres of range, not the same bits (``plane_scan``).
    """
    new_packet = _packet_setup(width)
    incidence = _incidence(width)
    steady = _steady()
    w = width
    oy, oz, dx, dy, dz, tfar = w, 2 * w, 4 * w, 5 * w, 6 * w, 8 * w
    prim, geom, inst = 17 * w, 18 * w, 19 * w
    invalid = np.uint32(_INVALID_ID)
    inf, nan = np.float32(np.inf), np.float32(np.nan)
    one, zero = np.float32(1.0), np.float32(0.0)

    @_compiled(width, parallel, plane)
    def sensor_frame(pose: np.ndarray, mount: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sensor's origin (3,) and rotation (3, 3) in the world, float64."""
        cr, sr = np.cos(pose[3]), np.sin(pose[3])
        cp, sp = np.cos(pose[4]), np.sin(pose[4])
        cy, sy = np.cos(pose[5]), np.sin(pose[5])
        car = np.empty((3, 3))
        car[0, 0], car[0, 1], car[0, 2] = cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr
        car[1, 0], car[1, 1], car[1, 2] = sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr
        car[2, 0], car[2, 1], car[2, 2] = -sp, cp * sr, cp * cr
        rotation = np.empty((3, 3))
        origin = np.empty(3)
        for row in range(3):
            for column in range(3):
                rotation[row, column] = (car[row, 0] * mount[3 + column]
                                         + car[row, 1] * mount[6 + column]
                                         + car[row, 2] * mount[9 + column])
            origin[row] = pose[row] + (car[row, 0] * mount[0] + car[row, 1] * mount[1]
                                       + car[row, 2] * mount[2])
        return origin, rotation

    @_compiled(width, parallel, plane)
    def rays(pose: np.ndarray, mount: np.ndarray, local: np.ndarray, origin: np.ndarray,
             directions: np.ndarray) -> None:
        where, rotation = sensor_frame(pose, mount)
        for row in range(3):
            origin[row] = where[row]
        r00, r01, r02 = rotation[0, 0], rotation[0, 1], rotation[0, 2]
        r10, r11, r12 = rotation[1, 0], rotation[1, 1], rotation[1, 2]
        r20, r21, r22 = rotation[2, 0], rotation[2, 1], rotation[2, 2]
        lx, ly, lz = local[0], local[1], local[2]
        for i in range(directions.shape[0]):
            x, y, z = lx[i], ly[i], lz[i]
            directions[i, 0] = x * r00 + y * r01 + z * r02
            directions[i, 1] = x * r10 + y * r11 + z * r12
            directions[i, 2] = x * r20 + y * r21 + z * r22

    @_compiled(width, parallel, plane)
    def rays_many(poses: np.ndarray, mounts: np.ndarray, local: np.ndarray,
                  origins: np.ndarray, directions: np.ndarray) -> None:
        """``rays`` of n sensors: row i of ``poses``, ``mounts``, ``local`` (n, 3, beams
        padded), ``origins`` (n, 3) and ``directions`` (n, beams, 3) is sensor i's."""
        for i in range(poses.shape[0]):
            rays(poses[i], mounts[i], local[i], origins[i], directions[i])

    @_compiled(width, parallel, plane, inline='always')
    def settle(distance: np.ndarray, cosine: np.ndarray, triangle: np.ndarray,
               strength: np.ndarray, base: int, count: int, labels: np.ndarray,
               range_min: np.float32, range_max: np.float32, noise_std: np.float32,
               noise: np.ndarray, dropout: np.float32, draws: np.ndarray, gain: np.ndarray,
               box_distance: np.ndarray, box_label: np.ndarray, box_cosine: np.ndarray,
               ranges: np.ndarray, intensity: np.ndarray) -> None:
        """Beams ``base`` to ``base + count`` from their hits (``distance``, inf for none,
        ``cosine`` and ``triangle``, the miss label's index for none; the first ``count``
        entries of each, ``strength`` room for as many): the other cars, the range model."""
        shining = intensity.shape[0] > 0
        lanes = distance.shape[0]
        if shining:
            for k in range(lanes):
                strength[k] = gain[labels[triangle[k]]]
        if box_distance.shape[0] > 0:  # scene.nearer
            for k in range(count):
                i = base + k
                if box_distance[i] < distance[k]:
                    distance[k] = box_distance[i]
                    cosine[k] = box_cosine[i]
                    strength[k] = gain[box_label[i]]
        if noise.shape[0] > 0:
            for k in range(count):
                distance[k] = distance[k] + noise[base + k] * noise_std
        if shining:  # before the range limits change ``distance``
            for k in range(count):
                clamped = max(distance[k], one)
                intensity[base + k] = strength[k] * cosine[k] / (clamped * clamped)
        for k in range(count):  # lidar.RangeModel.measure
            value = distance[k]
            if value > range_max:
                value = inf
            if value < range_min:
                value = -inf
            ranges[base + k] = value
        if draws.shape[0] > 0:
            for k in range(count):
                if draws[base + k] < dropout:
                    ranges[base + k] = nan
            if shining:
                for k in range(count):
                    if draws[base + k] < dropout:
                        intensity[base + k] = zero

    @_compiled(width, parallel, plane)
    def trace_packets(caster: tuple[int, int], origin: np.ndarray, rotation: np.ndarray,
                      local: np.ndarray, labels: np.ndarray, far: np.float32,
                      range_min: np.float32, range_max: np.float32, noise_std: np.float32,
                      noise: np.ndarray, dropout: np.float32, draws: np.ndarray,
                      gain: np.ndarray, box_distance: np.ndarray, box_label: np.ndarray,
                      box_cosine: np.ndarray, ranges: np.ndarray, intensity: np.ndarray,
                      first: int, last: int) -> None:
        """Packets first to last (excluded) of the scan, cast with Embree (``caster``: its
        ``intersect`` and the scene)."""
        intersect, scene = caster
        n = ranges.shape[0]
        shining = intensity.shape[0] > 0
        ray, bits, arguments = new_packet(np.float32(0.0))
        valid = np.empty(w, np.int32)
        distance = np.empty(w, np.float32)
        cosine = np.empty(w, np.float32)
        triangle = np.empty(w, np.uint32)
        strength = np.empty(w, np.float32)
        last_label = np.uint32(labels.shape[0] - 1)  # a miss
        for k in range(w):  # one origin for every ray
            ray[k] = np.float32(origin[0])
            ray[oy + k] = np.float32(origin[1])
            ray[oz + k] = np.float32(origin[2])
        r00, r01, r02 = rotation[0, 0], rotation[0, 1], rotation[0, 2]
        r10, r11, r12 = rotation[1, 0], rotation[1, 1], rotation[1, 2]
        r20, r21, r22 = rotation[2, 0], rotation[2, 1], rotation[2, 2]
        lx, ly, lz = local[0], local[1], local[2]  # padded to whole packets
        for packet in range(first, last):
            base = packet * w
            count = min(w, n - base)
            # Whole-packet loops, stored as vectors: Embree reads the packet with vector loads
            # right away, which scalar stores would stall.
            for k in range(w):
                x, y, z = lx[base + k], ly[base + k], lz[base + k]
                ray[dx + k] = steady(np.float32(x * r00 + y * r01 + z * r02))
                ray[dy + k] = steady(np.float32(x * r10 + y * r11 + z * r12))
                ray[dz + k] = steady(np.float32(x * r20 + y * r21 + z * r22))
                ray[tfar + k] = far
                bits[prim + k] = invalid
                bits[geom + k] = invalid
                bits[inst + k] = invalid
                valid[k] = -1 if k < count else 0
            _call(intersect, valid.ctypes.data, scene, ray.ctypes.data, arguments.ctypes.data)
            for k in range(w):  # branch-free, so it vectorises
                distance[k] = ray[tfar + k] if bits[geom + k] != invalid else inf
            if shining:
                for k in range(w):  # misses read stale normals, and are then discarded
                    hit = bits[geom + k] != invalid
                    cosine[k] = incidence(ray, k) if hit else zero
                    triangle[k] = bits[prim + k] if hit else last_label
            settle(distance, cosine, triangle, strength, base, count, labels, range_min,
                   range_max, noise_std, noise, dropout, draws, gain, box_distance, box_label,
                   box_cosine, ranges, intensity)

    @_compiled(width, parallel, plane)
    def trace_plane(caster: tuple[np.ndarray, ...],
                    origin: np.ndarray, rotation: np.ndarray, local: np.ndarray,
                    labels: np.ndarray, far: np.float32, range_min: np.float32,
                    range_max: np.float32, noise_std: np.float32, noise: np.ndarray,
                    dropout: np.float32, draws: np.ndarray, gain: np.ndarray,
                    box_distance: np.ndarray, box_label: np.ndarray, box_cosine: np.ndarray,
                    ranges: np.ndarray, intensity: np.ndarray, first: int, last: int) -> None:
        """``trace_packets`` on a level scanner's ``plane_scan.PlaneSlice`` (``caster``: its
        arrays): the beams of packets first to last, rasterised into at once."""
        n = ranges.shape[0]
        start, end = first * w, min(last * w, n)
        count = end - start
        if count <= 0:
            return
        r00, r01, r02 = rotation[0, 0], rotation[0, 1], rotation[0, 2]
        r10, r11, r12 = rotation[1, 0], rotation[1, 1], rotation[1, 2]
        lx, ly, lz = local[0], local[1], local[2]
        beam_x, beam_y = np.empty(count), np.empty(count)
        for k in range(count):  # the very (float32) directions Embree would be given
            x, y, z = lx[start + k], ly[start + k], lz[start + k]
            beam_x[k] = steady(np.float32(x * r00 + y * r01 + z * r02))
            beam_y[k] = steady(np.float32(x * r10 + y * r11 + z * r12))
        # beam 0's heading and the turn per beam, in float64: they only pick candidate beams
        # (``local`` is padded, so it has a beam 1 even for a scan of one)
        theta0, step = plane_scan.beam_turn(
            lx[0] * r00 + ly[0] * r01, lx[0] * r10 + ly[0] * r11,
            lx[1] * r00 + ly[1] * r01, lx[1] * r10 + ly[1] * r11, n)
        depth = np.empty(count)
        hit = np.empty(count, np.int32)
        incidence_cosine = np.empty(count)
        plane_scan.rasterise(caster, float(np.float32(origin[0])),
                             float(np.float32(origin[1])), theta0, step, n, start, beam_x,
                             beam_y, float(far), depth, hit, incidence_cosine)
        distance = np.empty(count, np.float32)
        cosine = np.empty(count, np.float32)
        triangle = np.empty(count, np.uint32)
        strength = np.empty(count, np.float32)
        last_label = np.uint32(labels.shape[0] - 1)  # a miss
        for k in range(count):
            missed = hit[k] < 0
            distance[k] = inf if missed else np.float32(depth[k])
            cosine[k] = zero if missed else np.float32(incidence_cosine[k])
            triangle[k] = last_label if missed else np.uint32(hit[k])
        settle(distance, cosine, triangle, strength, start, count, labels, range_min,
               range_max, noise_std, noise, dropout, draws, gain, box_distance, box_label,
               box_cosine, ranges, intensity)

    trace = trace_plane if plane else trace_packets

    @_compiled(width, parallel, plane, parallel=parallel)
    def scan(caster: Any, pose: np.ndarray, mount: np.ndarray, local: np.ndarray,
             labels: np.ndarray, max_distance: float, range_min: float, range_max: float,
             noise_std: float, noise: np.ndarray, dropout: float, draws: np.ndarray,
             gain: np.ndarray, box_distance: np.ndarray, box_label: np.ndarray,
             box_cosine: np.ndarray, ranges: np.ndarray, intensity: np.ndarray,
             chunks: int) -> None:
        origin, rotation = sensor_frame(pose, mount)
        far = np.float32(min(max_distance, 3.0e38))
        low, high = np.float32(range_min), np.float32(range_max)
        std, drop = np.float32(noise_std), np.float32(dropout)
        packets = (ranges.shape[0] + w - 1) // w
        runs = max(1, min(chunks, packets)) if parallel else 1
        for run in numba.prange(runs):  # contiguous runs: interleaved ones share cache lines
            trace(caster, origin, rotation, local, labels, far, low, high, std, noise,
                  drop, draws, gain, box_distance, box_label, box_cosine, ranges, intensity,
                  run * packets // runs, (run + 1) * packets // runs)

    @_compiled(width, parallel, plane, parallel=parallel)
    def scan_many(caster: Any, poses: np.ndarray, mounts: np.ndarray,
                  local: np.ndarray, labels: np.ndarray, settings: np.ndarray, noise: np.ndarray,
                  draws: np.ndarray, gain: np.ndarray, box_distance: np.ndarray,
                  box_label: np.ndarray, box_cosine: np.ndarray, ranges: np.ndarray,
                  intensity: np.ndarray, chunks: int) -> None:
        """``scan`` of n sensors with as many beams in one call: row i of ``poses``,
        ``mounts``, ``local`` (n, 3, padded beams), ``ranges`` and ``intensity`` is sensor
        i's, ``settings`` rows are its max_distance, range_min, range_max, noise_std and
        dropout. ``noise``, ``draws``, ``intensity`` and the ``box_`` arrays are (n, beams),
        or (1, 0) where no sensor has any (or no intensity is wanted). The parallel build
        spreads the sensors (and, for fewer sensors than ``chunks``, runs of their packets)
        over numba's threads."""
        sensors = poses.shape[0]
        packets = (ranges.shape[1] + w - 1) // w
        runs = max(1, min(chunks // sensors, packets)) if parallel and sensors < chunks else 1
        for job in numba.prange(sensors * runs):
            i = job // runs
            run = job - i * runs
            origin, rotation = sensor_frame(poses[i], mounts[i])
            row = min(i, noise.shape[0] - 1)
            drawn = min(i, draws.shape[0] - 1)
            boxed = min(i, box_distance.shape[0] - 1)
            shone = min(i, intensity.shape[0] - 1)
            trace(caster, origin, rotation, local[i], labels,
                  np.float32(min(settings[i, 0], 3.0e38)), np.float32(settings[i, 1]),
                  np.float32(settings[i, 2]), np.float32(settings[i, 3]), noise[row],
                  np.float32(settings[i, 4]), draws[drawn], gain, box_distance[boxed],
                  box_label[boxed], box_cosine[boxed], ranges[i], intensity[shone],
                  run * packets // runs, (run + 1) * packets // runs)

    @_compiled(width, parallel, plane)  # parallel where it calls ``scan``
    def scan_measured(caster: Any, pose: np.ndarray, mount: np.ndarray,
                      local: np.ndarray, labels: np.ndarray, max_distance: float,
                      gain: np.ndarray, box_distance: np.ndarray, box_label: np.ndarray,
                      box_cosine: np.ndarray, settings: np.ndarray, row_spacing: np.ndarray,
                      key: np.uint64, noisy: bool, normals: np.ndarray, percent: np.ndarray,
                      dropout: float, draws: np.ndarray, ideal: np.ndarray,
                      strength: np.ndarray, label: np.ndarray, ranges: np.ndarray,
                      intensity: np.ndarray, reflectivity: np.ndarray, returned: np.ndarray,
                      chunks: int) -> None:
        """``scan`` to the ideal ranges and signals (into ``ideal`` and ``strength``), then
        ``lidar_effects.measure`` on them as one row (``label`` their labels, ``settings``,
        ``row_spacing``, ``key``, ``noisy``, ``normals`` and ``percent`` its arguments) into
        ``ranges``, ``intensity``, ``reflectivity`` and ``returned``, then the dropout: NaN
        with zero intensity and reflectivity where ``draws`` (empty: none) fall below
        ``dropout`` in float32. What ``lidar.RangeModel.measure_signal`` does after a scan,
        in the same order and arithmetic, with no Python between."""
        n = ranges.shape[0]
        scan(caster, pose, mount, local, labels, max_distance, 0.0, np.inf, 0.0,
             ideal[:0], 0.0, ideal[:0], gain, box_distance, box_label, box_cosine, ideal,
             strength, chunks)
        lidar_effects.measure(ideal.reshape((1, n)), strength.reshape((1, n)),
                              label.reshape((1, n)), settings, row_spacing, key, noisy,
                              normals, percent, ranges.reshape((1, n)),
                              intensity.reshape((1, n)), reflectivity.reshape((1, n)),
                              returned.reshape((1, n)))
        drop = np.float32(dropout)
        for i in range(draws.shape[0]):
            if draws[i] < drop:
                ranges[i] = nan
                intensity[i] = zero
                reflectivity[i] = 0

    return rays, scan, scan_many, scan_measured, rays_many


_RUNTIME: _Runtime | None = None
_SCAN_WANTED = False


def prepare_scan() -> None:
    """A 2D LiDAR will use ``EmbreePacketRaycaster.scanner``: compile its kernels with the
    runtime (a second or two the first time, then loaded from numba's cache; now if the
    runtime exists), so that the first scan does not.
    A backend makes its sensors before it loads the track, so processes without such a
    sensor never compile them, and those with one do it before their first frame."""
    global _SCAN_WANTED
    _SCAN_WANTED = True
    if _RUNTIME is not None:
        _RUNTIME.scanner(parallel=False)
        _RUNTIME.scanner(parallel=False, plane=True)


def runtime() -> _Runtime:
    """The process-wide Embree runtime, made on first use (raises EmbreeUnavailableError)."""
    global _RUNTIME
    if _RUNTIME is None:
        _RUNTIME = _Runtime()
    return _RUNTIME


SPLIT_RAYS = 8192  # a cast of at least this many rays is shared with the helper thread


def _parts(rays: int, origins: int) -> list[slice]:
    """A cast of ``rays`` from ``origins`` (one, one per ray, or cycled) cut for the helper
    thread: on whole packets and on multiples of a cycled origin count."""
    step = PACKET if origins in (1, rays) else math.lcm(PACKET, origins)
    return helper_thread.parts(rays, step, SPLIT_RAYS)


class EmbreePacketRaycaster:
    """A static triangle scene; ``cast`` traces packets of rays from compiled code, as wide as
    Embree traces natively on the CPU (``packet_width``).

    Scenes are built with Embree's medium-quality (SAH) builder: in robust mode its BVH traces
    a 1080-beam scan 35 % faster than the low-quality (Morton) one on arsim_ring and 15 % on
    F1TENTH Spielberg, an OS1 revolution as fast (within 5 %), with the same hits; building
    Spielberg's 38k triangles takes 8 ms instead of 2.
    """

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        rt = runtime()
        self._rt = rt
        self._scanners: dict[tuple[int, bool, bool], functools.partial[None]] = {}
        lib = rt.lib
        self._scene = lib.rtcNewScene(rt.device)
        lib.rtcSetSceneBuildQuality(self._scene, _RTC_BUILD_QUALITY_MEDIUM)
        # Watertight triangle tests: without them a ray along the shared edge of two
        # triangles may pass between them, and did (9 of 655k rays of an OS1 revolution on
        # arsim_ring missed a wall with 8-wide packets on AVX2 and with incoherent 16-wide
        # ones on AVX-512; single rays hit it)
        lib.rtcSetSceneFlags(self._scene, _RTC_SCENE_FLAG_ROBUST)
        vertices = np.ascontiguousarray(vertices, dtype=np.float32).reshape(-1, 3)
        triangles = np.ascontiguousarray(triangles, dtype=np.uint32).reshape(-1, 3)
        if len(triangles):
            geometry = lib.rtcNewGeometry(rt.device, _RTC_GEOMETRY_TYPE_TRIANGLE)
            lib.rtcSetGeometryBuildQuality(geometry, _RTC_BUILD_QUALITY_MEDIUM)
            # Embree's own buffers are padded as its SIMD loads need; copy into them.
            target = lib.rtcSetNewGeometryBuffer(geometry, _RTC_BUFFER_TYPE_VERTEX, 0,
                                                 _RTC_FORMAT_FLOAT3, 12, len(vertices))
            ctypes.memmove(target, vertices.ctypes.data, vertices.nbytes)
            target = lib.rtcSetNewGeometryBuffer(geometry, _RTC_BUFFER_TYPE_INDEX, 0,
                                                 _RTC_FORMAT_UINT3, 12, len(triangles))
            ctypes.memmove(target, triangles.ctypes.data, triangles.nbytes)
            lib.rtcCommitGeometry(geometry)
            lib.rtcAttachGeometry(self._scene, geometry)
            lib.rtcReleaseGeometry(geometry)
        lib.rtcCommitScene(self._scene)
        error = lib.rtcGetDeviceError(rt.device)
        if error:
            msg = f'Embree could not build the scene (error {error})'
            raise EmbreeUnavailableError(msg)

    def cast(self, origins: np.ndarray, directions: np.ndarray,
             max_distance: float = np.inf) -> Cast:
        """As ``Raycaster.cast``; the incidence cosine comes from Embree's geometric normal."""
        origins = np.ascontiguousarray(origins, dtype=np.float32).reshape(-1, 3)
        directions = np.ascontiguousarray(directions, dtype=np.float32).reshape(-1, 3)
        check_origins(len(origins), len(directions))
        n = len(directions)
        distance = np.empty(n, np.float32)
        primitive = np.empty(n, np.int32)
        cosine = np.empty(n, np.float32)
        far = np.float32(min(float(max_distance), 3.0e38))

        def cast_part(part: slice) -> None:
            # origins cycle through the rays (ray i from origin i mod m); a part starts at a
            # multiple of m, or takes its own origins when there is one per ray
            own = origins[part] if len(origins) == n and n > 1 else origins
            self._rt.kernel(self._rt.intersect, self._scene, own, directions[part],
                            np.float32(0.0), far, distance[part], primitive[part], cosine[part])

        if n:
            helper_thread.share(cast_part, _parts(n, len(origins)))
        return distance, primitive, cosine

    def rays(self, pose: np.ndarray, mount: np.ndarray, local: np.ndarray,
             beams: int) -> tuple[np.ndarray, np.ndarray]:
        """The origin (3,) and directions (beams, 3) in the world, float64, of a sensor
        mounted at ``mount`` (x, y, z, then the rotation row by row) on a car at ``pose`` (x,
        y, z, roll, pitch, yaw), with beams ``local`` (3, n >= beams) in its frame: the rays
        ``scan`` casts."""
        origin, directions = np.empty(3), np.empty((beams, 3))
        self._rt.scanner(False)[0](pose, mount, local, origin, directions)
        return origin, directions

    def rays_many(self, poses: np.ndarray, mounts: np.ndarray, local: np.ndarray,
                  beams: int) -> tuple[np.ndarray, np.ndarray]:
        """``rays`` of n sensors in one call: the origins (n, 3) and directions (n, beams, 3)
        of sensor i mounted at ``mounts[i]`` on a car at ``poses[i]`` with beams
        ``local[i]``."""
        count = len(poses)
        origins, directions = np.empty((count, 3)), np.empty((count, beams, 3))
        self._rt.scanner(False)[4](np.ascontiguousarray(poses, np.float64), mounts, local,
                                   origins, directions)
        return origins, directions

    def scanner(self, threads: int = 1,
                plane: plane_scan.PlaneSlice | None = None) -> Callable[..., None]:
        """One scan of a single-origin sensor on this scene, as ``_compile_scan`` describes:
        ``scanner(threads)(pose, mount, local, labels, max_distance, range_min, range_max,
        noise_std, noise, dropout, draws, gain, box_distance, box_label, box_cosine, ranges,
        intensity, threads)`` fills ``ranges`` and ``intensity`` (float32, one per beam;
        ``local`` may be padded to whole packets). ``labels`` label this scene's triangles,
        the ``box_`` arrays are the other cars' hits along ``rays`` (empty for none).
        ``threads`` > 1 spreads the packets over numba's threads, for in-process users only
        (see the module docstring). With ``plane``, this scene's slice at a level scanner's
        height, the beams are rasterised into it instead (``plane_scan``)."""
        return self._bound(1, threads, plane)

    def measured_scanner(self, threads: int = 1,
                         plane: plane_scan.PlaneSlice | None = None) -> Callable[..., None]:
        """``scan_measured`` of ``_compile_scan`` on this scene, a scan with the LiDAR
        effects: ``measured_scanner(threads)(pose, mount, local, labels, max_distance, gain,
        box_distance, box_label, box_cosine, settings, row_spacing, key, noisy, normals,
        percent, dropout, draws, ideal, strength, label, ranges, intensity, reflectivity,
        returned, threads)``; ``plane`` as for ``scanner``."""
        return self._bound(3, threads, plane)

    def batch_scanner(self, threads: int = 1,
                      plane: plane_scan.PlaneSlice | None = None) -> Callable[..., None]:
        """``scan_many`` of ``_compile_scan`` on this scene: ``batch_scanner(threads)(poses,
        mounts, local, labels, settings, noise, draws, gain, box_distance, box_label,
        box_cosine, ranges, intensity, threads)``, several sensors' scans in one call;
        ``plane`` as for ``scanner``, one height for every sensor."""
        return self._bound(2, threads, plane)

    def _bound(self, kernel: int, threads: int,
               plane: plane_scan.PlaneSlice | None) -> Callable[..., None]:
        """Kernel ``kernel`` of ``_Runtime.scanner`` (1: scan, 2: scan_many, 3: scan_measured),
        serial or over threads, on packets or ``plane``, bound to this scene (or the slice)
        once: a scan is too short to make a partial each time. One slice is bound at a time."""
        key = (kernel, threads > 1, plane is not None)
        bound = self._scanners.get(key)
        if bound is None or (plane is not None and bound.args[0][0] is not plane.segments):
            caster = (self._rt.intersect, self._scene) if plane is None else plane.arrays()
            bound = self._scanners[key] = functools.partial(
                self._rt.scanner(threads > 1, plane is not None)[kernel], caster)
        return bound

    def __del__(self) -> None:
        scene = getattr(self, '_scene', None)
        if scene:
            self._rt.lib.rtcReleaseScene(scene)
            self._scene = None
