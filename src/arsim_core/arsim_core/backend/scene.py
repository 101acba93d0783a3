"""What the embedded backend's sensors see: the static track plus a box for every other car.

The track is one ray-casting scene built when it is loaded. Cars move every frame, so their
boxes are cast analytically (``BoxLayer``), one set per observing car (every car but the
observer, so a sensor never sees the car it sits on), made when a sensor of that car first needs
it in a frame and dropped when the poses change. A ray's hit is the nearer of the two.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from arsim_core import labels
from arsim_core.backend.boxes import BoxLayer
from arsim_core.backend.hits import Hits, nearer
from arsim_core.backend.plane_scan import PlaneSlice, slice_mesh
from arsim_core.backend.raycast import Raycaster
from arsim_core.backend.raycasters import make_raycaster
from arsim_core.backend.target import Board
from arsim_core.geometry import Footprint, Pose
from arsim_core.protocol.appearance import DEFAULT as DEFAULT_APPEARANCE
from arsim_core.protocol.appearance import Appearance
from arsim_core.protocol.weather import CLEAR, Weather

RaycasterFactory = Callable[[np.ndarray, np.ndarray], Raycaster]
_PLANES_KEPT = 8  # heights a Layer keeps slices for: one per scanner mount height, in practice

class Layer:
    """One ray-casting scene with per-triangle labels; the table carries one extra entry at the
    end, so a miss (triangle index -1) looks up NONE."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray, triangle_labels: np.ndarray,
                 factory: RaycasterFactory) -> None:
        triangles = np.asarray(triangles).reshape(-1, 3)
        triangle_labels = np.asarray(triangle_labels, np.uint8)
        # Zero-thickness walls carry every face twice, once per side, for renderers that cull
        # back faces. A ray caster hits either copy at the same distance, with the same label
        # and |cos|, so one copy serves, and the smaller scene casts 15 % faster.
        keys = np.column_stack([np.sort(triangles, axis=1).astype(np.int64), triangle_labels])
        _, first = np.unique(keys, axis=0, return_index=True)
        first.sort()
        kept = triangles[first]
        self.raycaster = factory(vertices, kept)
        self.labels = np.append(triangle_labels[first], np.uint8(labels.NONE))
        self._mesh = (vertices, kept)
        self._planes: dict[float, PlaneSlice] = {}

    def plane(self, height: float) -> PlaneSlice:
        """This scene sliced at ``height``, for the level 2D scanners there (``plane_scan``):
        made on first use, a few heights kept."""
        found = self._planes.get(height)
        if found is None:
            if len(self._planes) >= _PLANES_KEPT:
                self._planes.clear()
            found = self._planes[height] = slice_mesh(*self._mesh, height, self.labels[:-1])
        return found

    def cast(self, origins: np.ndarray, directions: np.ndarray, max_distance: float) -> Hits:
        """What each ray hits in this scene."""
        distance, triangle, cosine = self.raycaster.cast(origins, directions, max_distance)
        return Hits(distance, self.labels[triangle], cosine)


class World:
    """The track and the cars, as the backend's sensors see them at the current frame."""

    def __init__(self, vertices: np.ndarray, triangles: np.ndarray,
                 triangle_labels: np.ndarray | None = None,
                 factory: RaycasterFactory = make_raycaster) -> None:
        triangles = np.asarray(triangles).reshape(-1, 3)
        if triangle_labels is None:
            triangle_labels = np.full(len(triangles), labels.BARRIER, np.uint8)
        self.vertices = np.asarray(vertices, dtype=np.float32).reshape(-1, 3)
        self.triangles = triangles.astype(np.uint32)
        self.triangle_labels = np.asarray(triangle_labels, np.uint8)
        self._factory = factory
        self.track = Layer(self.vertices, self.triangles, self.triangle_labels, factory)
        self.footprints: dict[str, Footprint] = {}
        self.cars_visible = True
        self.board: Board | None = None  # a calibration board, for the cameras and 3D LiDARs
        self.weather: Weather = CLEAR  # and the light it falls in (docs/scenes.md)
        self.appearance: Appearance = DEFAULT_APPEARANCE
        # per frame key: one layer of every visible car's box, and each car's row in it
        self._obstacles: dict[int, tuple[BoxLayer, dict[str, int]]] = {}

    def set_cars(self, footprints: Mapping[str, Footprint], visible: bool = True) -> None:
        """The cars that other cars' sensors can see; a car without a footprint is invisible."""
        self.footprints = dict(footprints)
        self.cars_visible = visible
        self._obstacles.clear()

    def boxes(self, boxes: Sequence[tuple[Footprint, Pose]]) -> BoxLayer | None:
        """The car boxes (footprint, pose) as one analytic caster, or None for no boxes: a few
        microseconds to set up per frame, where a mesh scene took a quarter of a millisecond."""
        return BoxLayer(boxes) if boxes else None

    def others(self, observer: str, poses: Mapping[str, Pose]) -> list[tuple[Footprint, Pose]]:
        """Footprint and pose of every visible car but ``observer``."""
        if not self.cars_visible:
            return []
        return [(self.footprints[car], pose) for car, pose in poses.items()
                if car != observer and car in self.footprints]

    def obstacles(self, observer: str, poses: Mapping[str, Pose],
                  key: int) -> BoxLayer | None:
        """The boxes of every car but ``observer`` at ``poses``; cached under ``key`` (the
        frame time), so all sensors of a car share one build per frame."""
        if not self.cars_visible or len(self.footprints) < 2:
            return None
        cars = self._obstacles.get(key)
        if cars is None:
            if len(self._obstacles) > 64:
                self._obstacles.clear()
            shown = [car for car in poses if car in self.footprints]
            cars = self._obstacles[key] = (
                BoxLayer([(self.footprints[car], poses[car]) for car in shown]),
                {car: row for row, car in enumerate(shown)})
        layer, rows = cars
        row = rows.get(observer, -1)
        if len(rows) - (row >= 0) == 0:
            return None
        return layer.without(row)

    def cast(self, origins: np.ndarray, directions: np.ndarray, max_distance: float,
             obstacles: BoxLayer | None = None) -> Hits:
        """First hit of each ray on the track or an obstacle box within ``max_distance``.

        ``directions`` are unit vectors (n, 3); ``origins`` (m, 3), cycled as
        ``Raycaster.cast`` does: (1, 3) is one origin for all rays.
        """
        hits = self.track.cast(origins, directions, max_distance)
        if obstacles is None:
            return hits
        return nearer(hits, obstacles.cast(origins, directions, max_distance))
