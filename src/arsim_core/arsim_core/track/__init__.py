"""Race tracks: loading, validation, 3D meshes and occupancy grids, without any ROS import.

Typical use::

    track = load_track('arsim_ring')           # a folder in maps/, or any path
    mesh = track_mesh(track)                   # for the ray-casting backend
    grid = rasterize(track, resolution=0.05)   # for the /map topic
"""

from arsim_core.track.loaders import (
    TRACK_LOADERS,
    TrackLoader,
    TrackOptions,
    available_tracks,
    default_maps_dir,
    load_track,
    track_from_centerline,
)
from arsim_core.track.mesh import BARRIER_PROFILES, track_mesh
from arsim_core.track.model import (
    LABEL_BARRIER,
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    LABEL_GROUND,
    LABEL_KERB,
    LABEL_ROAD,
    Cones,
    OccupancyGridData,
    Track,
    TrackMesh,
)
from arsim_core.track.occupancy import rasterize

DEFAULT_TRACK = 'arsim_ring'
"""Name of the track the simulator loads when none is configured."""

__all__ = [
    'BARRIER_PROFILES',
    'DEFAULT_TRACK',
    'LABEL_BARRIER',
    'LABEL_CONE_BIG_ORANGE',
    'LABEL_CONE_BLUE',
    'LABEL_CONE_ORANGE',
    'LABEL_CONE_YELLOW',
    'LABEL_GROUND',
    'LABEL_KERB',
    'LABEL_ROAD',
    'TRACK_LOADERS',
    'Cones',
    'OccupancyGridData',
    'Track',
    'TrackLoader',
    'TrackMesh',
    'TrackOptions',
    'available_tracks',
    'default_maps_dir',
    'load_track',
    'rasterize',
    'track_from_centerline',
    'track_mesh',
]
