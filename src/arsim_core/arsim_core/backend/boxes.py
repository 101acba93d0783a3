"""Other cars as exact boxes for the embedded backend's ray casts, with no scene to build.

``World.boxes`` turns the cars' boxes into a small triangle scene for every observing car in
every frame; building it and casting into it costs more than the rays themselves. A car's box
is simple enough to intersect analytically: ``BoxLayer`` casts rays against oriented boxes
(the slab test) in one compiled call, with the hits the mesh of ``shapes.box_mesh`` gives.

Most rays miss most cars, so a ray is tested against a box only if it points into the cone
from its origin around the box's bounding sphere: one dot product per ray and box, in a loop
numba vectorises.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arsim_core._jit import kernel
from arsim_core.backend.hits import Hits
from arsim_core.backend.plane_scan import rasterise_boxes
from arsim_core.backend.raycast import check_origins
from arsim_core.geometry import Footprint, Pose
from arsim_core.labels import CAR, NONE

# Nearest hit accepted along a ray [m]: a ray starting on a face leaves through the far side,
# as it does through the box's mesh (the NumPy ray caster's tolerance).
EPSILON = 1e-6
# Boxes per bit mask of candidates (uint32); more boxes are cast in groups of this many.
_GROUP = 32
# Relative widening of the bounding cones: rays are unit vectors only to float32 precision.
_CONE_SLACK = 1e-5

# Columns of the per-box frame: centre (x, y, z), the box's x, y, z axes in the world,
# half extents along them, and the bounding-sphere radius.
_FRAME = 16


@kernel
def box_frames(boxes: np.ndarray) -> np.ndarray:
    """Frames (k, 16) of boxes (k, 9): length, width, height, then the pose x, y, z, roll,
    pitch, yaw, with R = Rz(yaw) Ry(pitch) Rx(roll) as ``geometry.rotation_matrix``."""
    frames = np.empty((boxes.shape[0], _FRAME))
    for b in range(boxes.shape[0]):
        hx, hy, hz = 0.5 * boxes[b, 0], 0.5 * boxes[b, 1], 0.5 * boxes[b, 2]
        cr, sr = np.cos(boxes[b, 6]), np.sin(boxes[b, 6])
        cp, sp = np.cos(boxes[b, 7]), np.sin(boxes[b, 7])
        cy, sy = np.cos(boxes[b, 8]), np.sin(boxes[b, 8])
        # Columns of R: the box's axes in the world.
        ax, ay, az = cy * cp, sy * cp, -sp
        bx, by, bz = cy * sp * sr - sy * cr, sy * sp * sr + cy * cr, cp * sr
        zx, zy, zz = cy * sp * cr + sy * sr, sy * sp * cr - cy * sr, cp * cr
        frames[b, 0] = boxes[b, 3] + hz * zx
        frames[b, 1] = boxes[b, 4] + hz * zy
        frames[b, 2] = boxes[b, 5] + hz * zz
        frames[b, 3], frames[b, 4], frames[b, 5] = ax, ay, az
        frames[b, 6], frames[b, 7], frames[b, 8] = bx, by, bz
        frames[b, 9], frames[b, 10], frames[b, 11] = zx, zy, zz
        frames[b, 12], frames[b, 13], frames[b, 14] = hx, hy, hz
        frames[b, 15] = np.sqrt(hx * hx + hy * hy + hz * hz)
    return frames


@kernel
def cast_boxes(frames: np.ndarray, skip: int, origins: np.ndarray, directions: np.ndarray,
               max_distance: float, distance: np.ndarray, label: np.ndarray,
               cosine: np.ndarray) -> None:
    """First hit of each ray on the boxes of ``frames`` (``box_frames``) but box ``skip``
    (-1: none) within ``max_distance``, written in place: ``distance`` (float32, inf on a
    miss), ``label`` (CAR, or NONE on a miss) and |cos| of incidence (float32, 0 on a miss).
    ``origins`` (m, 3) and ``directions`` (n, 3) come flattened (flat arrays let numba
    vectorise the loops); ray i starts at origin i % m."""
    n = distance.shape[0]
    m = origins.shape[0] // 3
    k = frames.shape[0]
    rows = n // m
    for i in range(n):
        distance[i] = np.inf
        label[i] = NONE
        cosine[i] = 0.0
    if k == 0 or n == 0:
        return
    # A ray of unit direction d from origin o can meet box b only if it points into the cone
    # from o around the box's bounding sphere (centre c, radius r): d.(c - o) >= sqrt(|c - o|^2
    # - r^2). Per box and origin: c - o (x, y, z) and that bound (-inf from inside the sphere,
    # +inf when the sphere is out of reach), held in the directions' precision so that the
    # test vectorises.
    px = np.empty(k * m, directions.dtype)
    py = np.empty(k * m, directions.dtype)
    pz = np.empty(k * m, directions.dtype)
    bound = np.empty(k * m, directions.dtype)
    for b in range(k):
        cx, cy, cz, radius = frames[b, 0], frames[b, 1], frames[b, 2], frames[b, 15]
        inner = radius * radius
        reach = (max_distance + radius) * (max_distance + radius)
        for j in range(m):
            x = cx - origins[3 * j]
            y = cy - origins[3 * j + 1]
            z = cz - origins[3 * j + 2]
            px[b * m + j] = x
            py[b * m + j] = y
            pz[b * m + j] = z
            squared = x * x + y * y + z * z
            edge = squared - inner
            tangent = np.sqrt(edge if edge > 0.0 else 0.0)
            bound[b * m + j] = (-np.inf if edge <= 0.0 else np.inf if squared > reach
                                else tangent - _CONE_SLACK * (tangent + radius))
    mask = np.empty(n, np.uint32)
    for group in range((k + _GROUP - 1) // _GROUP):
        first = group * _GROUP
        count = min(k - first, _GROUP)
        for i in range(n):
            mask[i] = 0
        for g in range(count):
            if first + g == skip:  # never a candidate: its bit stays 0
                continue
            bit = np.uint32(1) << np.uint32(g)
            box = (first + g) * m
            if m == 1:
                x, y, z, c = px[box], py[box], pz[box], bound[box]
                for i in range(n):
                    dot = (directions[3 * i] * x + directions[3 * i + 1] * y
                           + directions[3 * i + 2] * z)
                    mask[i] |= bit * np.uint32(dot >= c)
                continue
            for r in range(rows):
                row = r * m
                for j in range(m):
                    dot = (directions[3 * (row + j)] * px[box + j]
                           + directions[3 * (row + j) + 1] * py[box + j]
                           + directions[3 * (row + j) + 2] * pz[box + j])
                    mask[row + j] |= bit * np.uint32(dot >= bound[box + j])
        for r in range(rows):
            for j in range(m):
                i = r * m + j
                candidates = mask[i]
                if candidates == 0:
                    continue
                dx, dy, dz = directions[3 * i], directions[3 * i + 1], directions[3 * i + 2]
                for g in range(count):
                    if (candidates >> np.uint32(g)) & np.uint32(1) == 0:
                        continue
                    b = first + g
                    # The slab test in the box's frame: the ray is inside the box between the
                    # last of the three entries into a pair of parallel faces (tmin) and the
                    # first exit (tmax).
                    ox = origins[3 * j] - frames[b, 0]
                    oy = origins[3 * j + 1] - frames[b, 1]
                    oz = origins[3 * j + 2] - frames[b, 2]
                    tmin, tmax = -np.inf, np.inf
                    enter, leave = 0.0, 0.0
                    missed = False
                    for axis in range(3):
                        a = 3 + 3 * axis
                        ax, ay, az = frames[b, a], frames[b, a + 1], frames[b, a + 2]
                        slope = dx * ax + dy * ay + dz * az
                        start = ox * ax + oy * ay + oz * az
                        half = frames[b, 12 + axis]
                        if slope == 0.0:  # parallel to these faces: between them or a miss
                            missed = missed or start < -half or start > half
                            continue
                        inverse = 1.0 / slope
                        low = (-half - start) * inverse
                        high = (half - start) * inverse
                        near = low if slope > 0.0 else high
                        far = high if slope > 0.0 else low
                        incidence = abs(slope)
                        enter = incidence if near > tmin else enter
                        tmin = near if near > tmin else tmin
                        leave = incidence if far < tmax else leave
                        tmax = far if far < tmax else tmax
                    if missed or tmin > tmax:
                        continue
                    if tmin > EPSILON:
                        t, incidence = tmin, enter
                    elif tmax > EPSILON:  # from inside the box: its far side
                        t, incidence = tmax, leave
                    else:
                        continue
                    if t <= max_distance and t < distance[i]:
                        distance[i] = t
                        label[i] = CAR
                        cosine[i] = incidence


class BoxLayer:
    """The boxes of cars (footprint, pose x, y, z, roll, pitch, yaw, as ``World.others``
    gives them), cast like ``scene.Layer``: hits are labelled CAR, misses NONE. Box ``skip``
    (-1: none) is left out, so every car's sensors can share one layer of all the cars, each
    without its own (``without``)."""

    def __init__(self, boxes: Sequence[tuple[Footprint, Pose]], skip: int = -1) -> None:
        raw = np.array([(f.length, f.width, f.height, *pose) for f, pose in boxes],
                       np.float64).reshape(-1, 9)
        self.frames = box_frames(raw)
        self.skip = skip

    def without(self, box: int) -> BoxLayer:
        """These boxes but ``box`` (-1: all of them), sharing their frames."""
        layer = BoxLayer.__new__(BoxLayer)
        layer.frames, layer.skip = self.frames, box
        return layer

    def cast_level(self, origin: np.ndarray, directions: np.ndarray,
                   max_distance: float) -> Hits:
        """``cast`` for a level 2D scanner's rays: one ``origin``, horizontal ``directions``
        (n, 3) evenly turned in beam order. The boxes are cut to their outlines at the rays'
        height and rasterised into them (``plane_scan.rasterise_boxes``): the hits of
        ``cast`` within micrometres, without a test per ray and box. Cast by ``cast`` if a
        box is tilted."""
        n = len(directions)
        directions = np.ascontiguousarray(directions, np.float64).reshape(-1, 3)
        distance = np.empty(n, np.float32)
        label = np.empty(n, np.uint8)
        cosine = np.empty(n, np.float32)
        if n and rasterise_boxes(self.frames, self.skip,
                                 np.ascontiguousarray(origin, np.float64).reshape(3),
                                 directions, float(max_distance), distance, label, cosine):
            return Hits(distance, label, cosine)
        return self.cast(np.reshape(origin, (1, 3)), directions, max_distance)

    def cast(self, origins: np.ndarray, directions: np.ndarray, max_distance: float) -> Hits:
        """What each ray hits among the boxes; ``origins`` (m, 3) cycled over the n unit
        ``directions`` (n, 3) as ``Raycaster.cast`` reads them."""
        origins = _floats(origins)
        directions = _floats(directions)
        n = len(directions)
        check_origins(len(origins), n)
        distance = np.empty(n, np.float32)
        label = np.empty(n, np.uint8)
        cosine = np.empty(n, np.float32)
        cast_boxes(self.frames, self.skip, origins.reshape(-1), directions.reshape(-1),
                   float(max_distance), distance, label, cosine)
        return Hits(distance, label, cosine)


def _floats(array: np.ndarray) -> np.ndarray:
    """``array`` as contiguous (-1, 3) float32 or float64, copied only if it must be."""
    array = np.asarray(array)
    if array.dtype != np.float32:
        array = array.astype(np.float64, copy=False)
    return np.ascontiguousarray(array).reshape(-1, 3)
