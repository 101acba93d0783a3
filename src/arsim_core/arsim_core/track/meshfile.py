"""Ready-made 3D tracks (obj, stl, glb, ...) read with trimesh, and mesh export.

Triangles are labelled by the name of the object they belong to (``road``, ``ground``,
``cone_blue``, ``cone_yellow``; anything else is barrier), so a track modelled in Blender only
needs sensible object names. The 2D walls are the section of the non-ground geometry at LiDAR
height, which is exactly what a horizontal scan would see.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from types import MappingProxyType

import numpy as np

from arsim_core import labels as semantic
from arsim_core.errors import TrackError
from arsim_core.track.model import (
    LABEL_BARRIER,
    LABEL_CONE_BIG_ORANGE,
    LABEL_CONE_BLUE,
    LABEL_CONE_ORANGE,
    LABEL_CONE_YELLOW,
    LABEL_GROUND,
    LABEL_KERB,
    LABEL_ROAD,
    LABEL_SCENERY_OBJECT,
    LABEL_SCENERY_STRUCTURE,
    LABEL_SCENERY_VEGETATION,
    TrackMesh,
)

NAME_LABELS = MappingProxyType(
    {
        'scenery_structure': LABEL_SCENERY_STRUCTURE,
        'scenery_vegetation': LABEL_SCENERY_VEGETATION,
        'scenery_object': LABEL_SCENERY_OBJECT,
        'big_orange': LABEL_CONE_BIG_ORANGE,
        'orange': LABEL_CONE_ORANGE,
        'blue': LABEL_CONE_BLUE,
        'yellow': LABEL_CONE_YELLOW,
        'kerb': LABEL_KERB,
        'curb': LABEL_KERB,
        'road': LABEL_ROAD,
        'asphalt': LABEL_ROAD,
        'ground': LABEL_GROUND,
        'grass': LABEL_GROUND,
        'floor': LABEL_GROUND,
    }
)
"""Substring of an object name -> triangle label; first match wins, default barrier."""

LABEL_NAMES = MappingProxyType({label: semantic.NAMES[label] for label in (
    LABEL_ROAD, LABEL_BARRIER, LABEL_CONE_BLUE, LABEL_CONE_YELLOW, LABEL_GROUND,
    LABEL_CONE_ORANGE, LABEL_CONE_BIG_ORANGE, LABEL_SCENERY_STRUCTURE, LABEL_SCENERY_VEGETATION,
    LABEL_SCENERY_OBJECT, LABEL_KERB)})
"""Object names used when exporting, chosen so that reading the file back keeps the labels."""

_Y_UP_SUFFIXES = ('.glb', '.gltf')
_Y_TO_Z = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


def _label_of(name: str) -> int:
    """Triangle label for an object name."""
    low = name.lower()
    return next((lab for key, lab in NAME_LABELS.items() if key in low), LABEL_BARRIER)


def _read_obj(path: Path) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Objects of a Wavefront OBJ as (name, vertices, triangles).

    Read here rather than with trimesh because trimesh merges OBJ objects that share a
    material, and the object names carry the labels. Polygons are fanned into triangles.
    """
    vertices: list[list[float]] = []
    groups: dict[str, list[list[int]]] = defaultdict(list)
    name = 'barrier'
    material = ''
    try:
        lines = path.read_text(encoding='utf-8', errors='replace').splitlines()
    except OSError as exc:
        msg = f'{path}: cannot read mesh: {exc}'
        raise TrackError(msg) from exc
    for lineno, raw in enumerate(lines, start=1):
        parts = raw.split()
        if not parts:
            continue
        try:
            if parts[0] == 'v':
                vertices.append([float(v) for v in parts[1:4]])
            elif parts[0] in ('o', 'g'):
                name = ' '.join(parts[1:]) or name
            elif parts[0] == 'usemtl':
                material = ' '.join(parts[1:])
            elif parts[0] == 'f':
                idx = [int(p.split('/')[0]) for p in parts[1:]]
                idx = [i - 1 if i > 0 else len(vertices) + i for i in idx]
                key = f'{name} {material}'.strip()
                groups[key].extend([idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1))
        except (ValueError, IndexError) as exc:
            msg = f'{path}:{lineno}: malformed OBJ line {raw[:60]!r}'
            raise TrackError(msg) from exc
    verts = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    out = []
    for key, faces in groups.items():
        tris = np.asarray(faces, dtype=np.int64)
        if tris.size and (tris.min() < 0 or tris.max() >= verts.shape[0]):
            msg = f'{path}: object {key!r} refers to a vertex that does not exist'
            raise TrackError(msg)
        out.append((key, verts, tris))
    return out


def _read_with_trimesh(path: Path) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Objects of any trimesh-readable file as (name, world vertices, triangles)."""
    import trimesh

    try:
        scene = trimesh.load(str(path), force='scene')
    except Exception as exc:  # trimesh raises many types for corrupt files
        msg = f'{path}: cannot read mesh: {exc}'
        raise TrackError(msg) from exc
    out = []
    for node in scene.graph.nodes_geometry:
        transform, geom_name = scene.graph[node]
        geom = scene.geometry[geom_name]
        if not hasattr(geom, 'faces') or len(geom.faces) == 0:
            continue
        v = np.asarray(geom.vertices, dtype=np.float64)
        v = v @ transform[:3, :3].T + transform[:3, 3]
        out.append((f'{node} {geom_name}', v, np.asarray(geom.faces, dtype=np.int64)))
    return out


def read_track_mesh(path: Path, scale: float = 1.0, up_axis: str = 'auto') -> TrackMesh:
    """Read a mesh file into a labelled ``TrackMesh`` in the z-up world frame.

    ``up_axis`` is ``z``, ``y`` or ``auto`` (y for glTF, whose convention is y-up; z else).
    """
    path = Path(path)
    if not path.is_file():
        msg = f'{path}: mesh file not found'
        raise TrackError(msg)
    if up_axis not in ('auto', 'y', 'z'):
        msg = f'{path}: up_axis must be auto, y or z, got {up_axis!r}'
        raise TrackError(msg)
    reader = _read_obj if path.suffix.lower() == '.obj' else _read_with_trimesh
    verts, tris, labels = [], [], []
    offset = 0
    for name, v, faces in reader(path):
        verts.append(v)
        tris.append(faces + offset)
        labels.append(np.full(faces.shape[0], _label_of(name), np.uint8))
        offset += v.shape[0]
    if not verts:
        msg = f'{path}: the file holds no triangles'
        raise TrackError(msg)
    vertices = np.concatenate(verts)
    y_up = up_axis == 'y' or (up_axis == 'auto' and path.suffix.lower() in _Y_UP_SUFFIXES)
    if y_up:
        vertices = vertices @ _Y_TO_Z.T
    return TrackMesh(vertices * scale, np.concatenate(tris), np.concatenate(labels))


def _chain_segments(segments: np.ndarray, tol: float) -> list[np.ndarray]:
    """Join 2D segments (S, 2, 2) that share end points into polylines.

    End points are matched on a ``tol`` grid. Closed loops come back with their first point
    repeated, the wall convention.
    """
    keys = np.round(segments / tol).astype(np.int64)
    point_of: dict[tuple[int, int], np.ndarray] = {}
    adjacency: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    seen: set[tuple[tuple[int, int], tuple[int, int]]] = set()
    for seg, key in zip(segments, keys, strict=True):
        a, b = (int(key[0, 0]), int(key[0, 1])), (int(key[1, 0]), int(key[1, 1]))
        if a == b or (a, b) in seen or (b, a) in seen:
            continue
        seen.add((a, b))
        point_of.setdefault(a, seg[0])
        point_of.setdefault(b, seg[1])
        adjacency[a].append(b)
        adjacency[b].append(a)
    used: set[frozenset[tuple[int, int]]] = set()
    polylines = []
    # Start open chains at their ends first, then walk what is left (closed loops).
    starts = [k for k, n in adjacency.items() if len(n) != 2] + list(adjacency)
    for start in starts:
        for first in adjacency[start]:
            if frozenset((start, first)) in used:
                continue
            chain = [start, first]
            used.add(frozenset((start, first)))
            while True:
                tail = chain[-1]
                nxt = next((n for n in adjacency[tail] if frozenset((tail, n)) not in used), None)
                if nxt is None:
                    break
                used.add(frozenset((tail, nxt)))
                chain.append(nxt)
                if nxt == chain[0]:
                    break
            polylines.append(np.array([point_of[k] for k in chain]))
    return polylines


def walls_from_mesh(mesh: TrackMesh, height: float,
                    path: Path | None = None) -> tuple[np.ndarray, ...]:
    """Polylines where the plane ``z = height`` cuts the barriers and cones of a mesh."""
    import trimesh

    keep = ~np.isin(mesh.labels, (LABEL_ROAD, LABEL_GROUND, LABEL_KERB))
    if not keep.any():
        msg = f'{path}: the mesh has no barrier objects to make walls of'
        raise TrackError(msg)
    solid = trimesh.Trimesh(mesh.vertices, mesh.triangles[keep], process=False)
    lines = trimesh.intersections.mesh_plane(solid, [0.0, 0.0, 1.0], [0.0, 0.0, height])
    if len(lines) == 0:
        msg = f'{path}: no barrier crosses the height {height} m, so there are no walls'
        raise TrackError(msg)
    extent = float(np.ptp(mesh.vertices[:, :2], axis=0).max())
    return tuple(_chain_segments(np.asarray(lines)[:, :, :2], tol=max(extent, 1.0) * 1e-7))


def export_mesh(mesh: TrackMesh, path: Path) -> Path:
    """Write a ``TrackMesh`` to obj/stl/glb/ply (by suffix), one object per label.

    glTF files are written y-up as the format requires; the loader turns them back.
    """
    import trimesh

    path = Path(path)
    scene = trimesh.Scene()
    y_up = path.suffix.lower() in _Y_UP_SUFFIXES
    vertices = mesh.vertices.astype(np.float64)
    if y_up:
        vertices = vertices @ _Y_TO_Z
    for label in np.unique(mesh.labels):
        faces = mesh.triangles[mesh.labels == label]
        used, local = np.unique(faces, return_inverse=True)
        part = trimesh.Trimesh(vertices[used], local.reshape(-1, 3), process=False)
        name = LABEL_NAMES.get(int(label), 'barrier')
        scene.add_geometry(part, geom_name=name, node_name=name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == '.obj':
            _write_obj(mesh, path)
        elif path.suffix.lower() == '.stl':
            # STL has no objects: keep only what a 2D section needs to be right.
            scene.to_mesh().export(str(path))
        else:
            scene.export(str(path))
    except (OSError, ValueError) as exc:
        msg = f'{path}: cannot write mesh: {exc}'
        raise TrackError(msg) from exc
    return path


def _write_obj(mesh: TrackMesh, path: Path) -> None:
    """OBJ with one named object per label, which trimesh's exporter does not keep apart."""
    lines = ['# track mesh, z up, metres']
    lines += [f'v {x:.6f} {y:.6f} {z:.6f}' for x, y, z in mesh.vertices]
    for label in np.unique(mesh.labels):
        lines.append(f'o {LABEL_NAMES.get(int(label), "barrier")}')
        faces = mesh.triangles[mesh.labels == label] + 1
        lines += [f'f {a} {b} {c}' for a, b, c in faces]
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')
