"""Semantic classes the sensors report: the track's per-triangle labels plus the cars.

Track meshes carry one label per triangle (arsim_msgs/TrackGeometry LABEL_*); the backend adds
``CAR`` for the boxes of other cars and ``NONE`` where a ray or pixel hits nothing. The same ids
are the pixel values of a camera's semantic image, whose legend is published next to it.
"""

from __future__ import annotations

import json
from types import MappingProxyType

ROAD = 0
BARRIER = 1
CONE_BLUE = 2
CONE_YELLOW = 3
GROUND = 4
CAR = 5
CONE_ORANGE = 6  # Formula Student small orange cone (start and braking areas)
CONE_BIG_ORANGE = 7  # Formula Student big orange cone (start, finish and timekeeping lines)
SCENERY_STRUCTURE = 8  # scenery around a track: walls, buildings, grandstands, pillars, doors
SCENERY_VEGETATION = 9  # scenery: trees and bushes
SCENERY_OBJECT = 10  # scenery: furniture, clutter, fences, poles and signs
KERB = 11  # the red and white kerbs at the corners of full-scale circuits (drivable)
CALIBRATION_TARGET = 12  # a scenario's camera calibration board (the cameras see it)
NONE = 255

CONES = (CONE_BLUE, CONE_YELLOW, CONE_ORANGE, CONE_BIG_ORANGE)
OBSTACLES = (BARRIER, *CONES)  # what a car collides with on a track
SCENERY = (SCENERY_STRUCTURE, SCENERY_VEGETATION, SCENERY_OBJECT)  # never on the drivable area

NAMES = MappingProxyType({ROAD: 'road', BARRIER: 'barrier', CONE_BLUE: 'cone_blue',
                          CONE_YELLOW: 'cone_yellow', GROUND: 'ground', CAR: 'car',
                          CONE_ORANGE: 'cone_orange', CONE_BIG_ORANGE: 'cone_big_orange',
                          SCENERY_STRUCTURE: 'scenery_structure',
                          SCENERY_VEGETATION: 'scenery_vegetation',
                          SCENERY_OBJECT: 'scenery_object', KERB: 'kerb',
                          CALIBRATION_TARGET: 'calibration_target', NONE: 'none'})

# Diffuse reflectivity at the LiDAR's wavelength, 0..1 (asphalt ~0.1, painted barriers and
# car bodies ~0.5, cones carry retro-reflective tape, which Ouster reports above 100).
# Scenery: concrete and plaster ~0.35, foliage bright in the near infrared ~0.45, painted
# objects and kerbs ~0.5 (unity/Assets/Arsim/Core/Labels.cs holds the same table).
REFLECTIVITY = MappingProxyType({ROAD: 0.12, BARRIER: 0.6, CONE_BLUE: 1.5, CONE_YELLOW: 1.5,
                                 GROUND: 0.25, CAR: 0.5, CONE_ORANGE: 1.5,
                                 CONE_BIG_ORANGE: 1.5, SCENERY_STRUCTURE: 0.35,
                                 SCENERY_VEGETATION: 0.45, SCENERY_OBJECT: 0.5, KERB: 0.5})
DEFAULT_REFLECTIVITY = 0.3  # a label not listed above

# Camera colours, linear RGB 0..1, before shading.
COLORS = MappingProxyType({ROAD: (0.33, 0.33, 0.35), BARRIER: (0.92, 0.92, 0.92),
                           CONE_BLUE: (0.08, 0.25, 0.85), CONE_YELLOW: (0.95, 0.8, 0.08),
                           GROUND: (0.3, 0.5, 0.22), CAR: (0.75, 0.08, 0.08),
                           CONE_ORANGE: (0.95, 0.35, 0.03), CONE_BIG_ORANGE: (0.95, 0.35, 0.03),
                           SCENERY_STRUCTURE: (0.55, 0.53, 0.5),
                           SCENERY_VEGETATION: (0.1, 0.3, 0.08),
                           SCENERY_OBJECT: (0.45, 0.3, 0.18), KERB: (0.8, 0.1, 0.08)})
DEFAULT_COLOR = (0.6, 0.6, 0.6)


def reflectivity_table(size: int = 256) -> list[float]:
    """Reflectivity indexed by label, for array lookups."""
    return [REFLECTIVITY.get(label, DEFAULT_REFLECTIVITY) for label in range(size)]


def color_table(size: int = 256) -> list[tuple[float, float, float]]:
    """Base colour indexed by label, for array lookups."""
    return [COLORS.get(label, DEFAULT_COLOR) for label in range(size)]


def legend_json() -> str:
    """The semantic legend as published next to each camera: ``{"0": "road", ...}``."""
    return json.dumps({str(k): v for k, v in sorted(NAMES.items())}, separators=(',', ':'))
