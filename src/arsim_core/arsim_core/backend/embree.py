"""Embree 4 packet ray casting, called from numba-compiled code.

``embreex`` traces one ray at a time from Cython (about 9 M rays/s on one core here for an
OS1-64 revolution on arsim_ring); calling Embree's 16-wide packet intersector from a numba loop,
with no Python between packets, gives about 60 M rays/s on one core. The loop is
single-threaded on purpose: the simulation's processes already keep every core busy, and
numba's parallel loops slow down ten-fold when their threads are preempted. The library is the
one the embreex wheel ships (or a system ``libembree4``); scenes are built through its C API
with ctypes.

Layouts follow ``rtcore_ray.h`` of Embree 4: a ``RTCRayHit16`` is the ray (12 arrays of 16
floats/uints: org xyz, tnear, dir xyz, time, tfar, mask, id, flags) followed by the hit (Ng xyz,
u, v, primID, geomID, instID, and instPrimID in builds with instance arrays), 64-byte aligned.
Only fields before ``instID`` are read, so both builds work.

Packets are traced with ``RTC_RAY_QUERY_FLAG_COHERENT`` in their ``RTCIntersectArguments``:
sensor rays are coherent (neighbouring beams share an origin and nearly a direction), and
Embree's coherent traversal cast a 65k-ray OS1 revolution 2.6 times as fast here, with the same
hits as single-ray ``embreex``. (The default incoherent packet traversal missed a wall for 9 of
720k rays on arsim_ring where the other casters hit it.)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib.util
import os
from pathlib import Path
from typing import Any

import numpy as np

from arsim_core.backend.raycast import Cast, check_origins

_RTC_GEOMETRY_TYPE_TRIANGLE = 0
_RTC_BUFFER_TYPE_INDEX = 0
_RTC_BUFFER_TYPE_VERTEX = 1
_RTC_FORMAT_UINT3 = 0x5003
_RTC_FORMAT_FLOAT3 = 0x9003
_INVALID_ID = 0xFFFFFFFF
_RTC_RAY_QUERY_FLAG_COHERENT = 1 << 16
_RTC_FEATURE_FLAG_ALL = 0xFFFFFFFF
PACKET = 16
_PACKET_WORDS = 12 * PACKET + 9 * PACKET  # ray + hit up to and including instPrimID


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
            ('rtcNewScene', p, [p]),
            ('rtcReleaseScene', None, [p]),
            ('rtcCommitScene', None, [p]),
            ('rtcNewGeometry', p, [p, i]),
            ('rtcSetNewGeometryBuffer', p, [p, i, u, i, s, s]),
            ('rtcCommitGeometry', None, [p]),
            ('rtcAttachGeometry', u, [p, p]),
            ('rtcReleaseGeometry', None, [p])):
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


class _Runtime:
    """The library, one device for the process, and the compiled packet kernel."""

    def __init__(self) -> None:
        try:
            import numba
        except ImportError as exc:
            msg = 'numba is not installed'
            raise EmbreeUnavailableError(msg) from exc
        if os.environ.get('ARSIM_NUMBA', '1').strip().lower() in ('0', 'false', 'no', 'off'):
            msg = 'numba disabled by ARSIM_NUMBA'
            raise EmbreeUnavailableError(msg)
        try:
            self.lib = _bind(ctypes.CDLL(_library_path()))
        except OSError as exc:
            raise EmbreeUnavailableError(str(exc)) from exc
        self.device = self.lib.rtcNewDevice(None)
        if not self.device:
            msg = 'rtcNewDevice failed'
            raise EmbreeUnavailableError(msg)
        self.kernel = _compile(numba, self.lib)
        # Compile now (about a second), not in the middle of the first frame.
        empty = np.empty((0, 3), np.float32)
        self.kernel(0, empty, empty, np.float32(0.0), np.float32(1.0),
                    np.empty(0, np.float32), np.empty(0, np.int32), np.empty(0, np.float32))


def _compile(numba: Any, lib: ctypes.CDLL) -> Any:
    """Numba kernel: cast n rays in 16-wide packets.

    The ctypes function pointer is a compile-time constant, so the kernel is compiled per
    process (about a second) rather than cached.
    """
    sz = ctypes.c_size_t
    intersect16 = ctypes.CFUNCTYPE(None, sz, sz, sz, sz)(('rtcIntersect16', lib))
    words, invalid = _PACKET_WORDS, np.uint32(_INVALID_ID)
    coherent = np.uint32(_RTC_RAY_QUERY_FLAG_COHERENT)
    all_features = np.uint32(_RTC_FEATURE_FLAG_ALL)
    unit_width = np.float32(1.0).view(np.uint32)

    @numba.njit(nogil=True, cache=False)
    def cast(scene: int, origins: np.ndarray, directions: np.ndarray, tnear: float,
             tfar: float, distance: np.ndarray, primitive: np.ndarray,
             cosine: np.ndarray) -> None:
        n = directions.shape[0]
        m = origins.shape[0]
        packets = (n + 15) // 16
        raw = np.empty(words + 16, np.float32)
        skip = ((64 - raw.ctypes.data % 64) % 64) // 4
        ray = raw[skip:skip + words]
        bits = ray.view(np.uint32)
        valid = np.empty(16, np.int32)
        # RTCIntersectArguments: flags, feature_mask, context, filter, intersect (NULL),
        # minWidthDistanceFactor (read only by builds with RTC_MIN_WIDTH).
        arguments = np.zeros(10, np.uint32)
        arguments[0] = coherent
        arguments[1] = all_features
        arguments[8] = unit_width
        for packet in range(packets):
            base = packet * 16
            for k in range(16):
                i = base + k
                if i < n:
                    o = i % m
                    valid[k] = -1
                    ray[k] = origins[o, 0]
                    ray[16 + k] = origins[o, 1]
                    ray[32 + k] = origins[o, 2]
                    ray[48 + k] = tnear
                    ray[64 + k] = directions[i, 0]
                    ray[80 + k] = directions[i, 1]
                    ray[96 + k] = directions[i, 2]
                    ray[112 + k] = 0.0
                    ray[128 + k] = tfar
                    bits[144 + k] = invalid  # mask: every geometry
                    bits[160 + k] = 0
                    bits[176 + k] = 0
                    bits[272 + k] = invalid  # primID
                    bits[288 + k] = invalid  # geomID
                    bits[304 + k] = invalid  # instID
                else:
                    valid[k] = 0
            intersect16(valid.ctypes.data, scene, ray.ctypes.data, arguments.ctypes.data)
            for k in range(16):
                i = base + k
                if i < n:
                    if bits[288 + k] != invalid:
                        distance[i] = ray[128 + k]
                        primitive[i] = np.int32(bits[272 + k])
                        # Ng, the unnormalised geometric normal (no instancing: world).
                        nx, ny, nz = ray[192 + k], ray[208 + k], ray[224 + k]
                        length = np.sqrt(nx * nx + ny * ny + nz * nz)
                        dot = (nx * directions[i, 0] + ny * directions[i, 1]
                               + nz * directions[i, 2])
                        cosine[i] = abs(dot) / length if length > 0.0 else 0.0
                    else:
                        distance[i] = np.inf
                        primitive[i] = -1
                        cosine[i] = 0.0

    return cast


_RUNTIME: _Runtime | None = None


def runtime() -> _Runtime:
    """The process-wide Embree runtime, made on first use (raises EmbreeUnavailableError)."""
    global _RUNTIME
    if _RUNTIME is None:
        _RUNTIME = _Runtime()
    return _RUNTIME


class EmbreePacketRaycaster:
    """A static triangle scene; ``cast`` traces packets of 16 rays from compiled code."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        rt = runtime()
        self._rt = rt
        lib = rt.lib
        self._scene = lib.rtcNewScene(rt.device)
        vertices = np.ascontiguousarray(vertices, dtype=np.float32).reshape(-1, 3)
        triangles = np.ascontiguousarray(triangles, dtype=np.uint32).reshape(-1, 3)
        if len(triangles):
            geometry = lib.rtcNewGeometry(rt.device, _RTC_GEOMETRY_TYPE_TRIANGLE)
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
        distance = np.empty(len(directions), np.float32)
        primitive = np.empty(len(directions), np.int32)
        cosine = np.empty(len(directions), np.float32)
        if len(directions):
            far = np.float32(min(float(max_distance), 3.0e38))
            self._rt.kernel(self._scene, origins, directions, np.float32(0.0), far, distance,
                            primitive, cosine)
        return distance, primitive, cosine

    def __del__(self) -> None:
        scene = getattr(self, '_scene', None)
        if scene:
            self._rt.lib.rtcReleaseScene(scene)
            self._scene = None
