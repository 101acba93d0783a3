"""Procedural scenery around a track (an indoor hall or an outdoor circuit), as a labelled
triangle mesh to join to the track's mesh; see :func:`build_scene`."""

from arsim_core.track.scene.build import SCENE_KINDS, build_scene, scene_kind, scene_problem
from arsim_core.track.scene.keepout import keep_out

__all__ = ['SCENE_KINDS', 'build_scene', 'keep_out', 'scene_kind', 'scene_problem']
