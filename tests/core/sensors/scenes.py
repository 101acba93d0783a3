"""Known scenes with analytic answers, and helpers to drive the embedded backend."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pytest

from arsim_core import labels
from arsim_core.backend.embree import EmbreePacketRaycaster, EmbreeUnavailableError
from arsim_core.backend.raycast_embreex import EmbreeRaycaster
from arsim_core.backend.raycast_numpy import NumpyRaycaster
from arsim_core.backend.scene import World
from arsim_core.geometry import Footprint
from arsim_core.track import Track, track_mesh

HALF = 5.0  # the room spans [-HALF, HALF] in x and y
HEIGHT = 2.0  # wall height [m]


def room(split_label: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Four walls around the origin on a ground plane (two triangles each). With
    ``split_label``, the +x wall's half at y > 0 carries that label instead of barrier."""
    vertices: list[tuple[float, float, float]] = []
    triangles: list[tuple[int, int, int]] = []
    tri_labels: list[int] = []

    def quad(a, b, c, d, label: int) -> None:
        k = len(vertices)
        vertices.extend([a, b, c, d])
        triangles.extend([(k, k + 1, k + 2), (k, k + 2, k + 3)])
        tri_labels.extend([label, label])

    h = HALF
    corners = [(-h, -h), (h, -h), (h, h), (-h, h)]
    for a, b in zip(corners, corners[1:] + corners[:1], strict=True):
        if split_label is not None and a == (h, -h):  # the +x wall, from y = -h to y = +h
            quad((h, -h, 0), (h, 0, 0), (h, 0, HEIGHT), (h, -h, HEIGHT), labels.BARRIER)
            quad((h, 0, 0), (h, h, 0), (h, h, HEIGHT), (h, 0, HEIGHT), split_label)
            continue
        quad((*a, 0.0), (*b, 0.0), (*b, HEIGHT), (*a, HEIGHT), labels.BARRIER)
    g = 3 * h
    quad((-g, -g, 0.0), (g, -g, 0.0), (g, g, 0.0), (-g, g, 0.0), labels.GROUND)
    return (np.array(vertices, np.float32), np.array(triangles, np.uint32),
            np.array(tri_labels, np.uint8))


def room_distance(origin: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Exact distance from ``origin`` (inside the room, above the ground) along unit
    ``directions`` (n, 3) to the walls or the ground; inf where the ray leaves over a wall."""
    ox, oy, oz = (float(v) for v in origin)
    dx, dy, dz = directions[:, 0], directions[:, 1], directions[:, 2]
    with np.errstate(divide='ignore', invalid='ignore'):
        tx = np.where(dx > 0, (HALF - ox) / dx, np.where(dx < 0, (-HALF - ox) / dx, np.inf))
        ty = np.where(dy > 0, (HALF - oy) / dy, np.where(dy < 0, (-HALF - oy) / dy, np.inf))
        wall = np.minimum(tx, ty)
        wall_z = oz + wall * dz
        wall = np.where((wall_z >= 0) & (wall_z <= HEIGHT), wall, np.inf)
        ground = np.where(dz < 0, -oz / dz, np.inf)
    return np.minimum(wall, ground)


def yaw_rotation(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def initial_settings(client, sensors: list[dict], footprints: dict | None = None,
                     frame_period_ns: int = 50_000_000, split_label: int | None = None,
                     cars_visible: bool = True, others: tuple[str, ...] = ()):
    """InitialSettings for car ``ego`` with ``sensors`` (plus sensor-less ``others``)."""
    from arsim_core.protocol import framing

    vertices, triangles, tri_labels = room(split_label)
    footprints = footprints or {}
    cars = [{'id': car, 'sensors': sensors if car == 'ego' else [],
             **({'footprint': footprints[car]} if car in footprints else {})}
            for car in ('ego', *others)]
    return client.request(framing.INITIAL_SETTINGS, 0, 0,
                          {'frame_period_ns': frame_period_ns, 'cars': cars,
                           'cars_visible': cars_visible, 'track': {'name': 'room'}},
                          {'track_vertices': vertices, 'track_triangles': triangles,
                           'track_labels': tri_labels})


def update(client, step: int, time_ns: int, poses: dict[str, list[float]],
           render: list[str]):
    from arsim_core.protocol import framing

    return client.request(framing.UPDATE, step, time_ns,
                          {'cars': [{'id': car, 'pose': pose} for car, pose in poses.items()],
                           'render': [{'car': 'ego', 'sensor': s} for s in render]})


def embree_packets(vertices: np.ndarray, triangles: np.ndarray) -> EmbreePacketRaycaster:
    """Embree packets, or a skip where this machine has none."""
    try:
        return EmbreePacketRaycaster(vertices, triangles)
    except EmbreeUnavailableError as exc:
        pytest.skip(f'Embree packets unavailable: {exc}')


def embreex_caster(vertices: np.ndarray, triangles: np.ndarray) -> EmbreeRaycaster:
    """embreex's single rays, or a skip where it is not installed."""
    pytest.importorskip('embreex')
    return EmbreeRaycaster(vertices, triangles)


#: Every ray caster, by name, for tests that hold them to the same answers.
CASTERS = {'embree-packets': embree_packets, 'embreex': embreex_caster, 'numpy': NumpyRaycaster}


class OtherCaster:
    """Embree packets behind another class: a World of these takes ``Lidar2D.render``'s
    generic NumPy path, with the same scene and so the same hits as the compiled scan."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray) -> None:
        self._packets = EmbreePacketRaycaster(vertices, triangles)

    def cast(self, origins: np.ndarray, directions: np.ndarray,
             max_distance: float = np.inf) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._packets.cast(origins, directions, max_distance)


def packet_and_generic_worlds(track: Track, cars: Mapping[str, Footprint]
                              ) -> tuple[World, World]:
    """``track`` cast by Embree packets (the compiled scan) and by ``OtherCaster`` (the
    generic path), both with ``cars``; the test is skipped where packets are unavailable."""
    mesh = track_mesh(track)
    try:
        fast = World(mesh.vertices, mesh.triangles, mesh.labels, factory=EmbreePacketRaycaster)
    except EmbreeUnavailableError as exc:
        pytest.skip(f'Embree packets unavailable: {exc}')
    generic = World(mesh.vertices, mesh.triangles, mesh.labels, factory=OtherCaster)
    for world in (fast, generic):
        world.set_cars(cars)
    return fast, generic
