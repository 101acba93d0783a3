"""Camera rendering by rasterisation: OpenGL 3.3 through moderngl on a headless EGL context.

Measured on two cores without a GPU (Mesa llvmpipe): a noiseless 1024 x 760 colour image of
an 8k-triangle track with read-back takes about 3 ms (4 ms of CPU) untextured, 5 ms with depth
and class ids as well, against about 45 ms for the same image cast as Embree rays; textures add
about a third to a large colour image (docs/sensors.md, "Appearance"). On a machine with a GPU,
EGL picks it up. One pass writes three targets: colour (RGBA8: textured, lit by the sun and
the sky of ``appearance``), depth along the optical axis (R32F, metres, +inf where nothing is
hit) and the class id (R8UI); appearance never changes the last two. The projection is
``Intrinsics.clip_matrix``, exactly the one CameraInfo publishes. Only the runs of the track's
triangles that meet the view volume are drawn (``frustum``), other cars as the car model
(``car_model``), and the sky is drawn once per camera and copied in.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from arsim_core import labels
from arsim_core.backend.car_model import car_mesh
from arsim_core.backend.frustum import Chunks, boxes_visible, frustum_planes
from arsim_core.backend.materials import (
    FADE_PIXELS,
    LABEL_MATERIAL,
    LAYERS,
    MATERIALS,
    PLAIN_BAND,
    SIZE,
    cone_axes,
    cone_band,
    textures,
)
from arsim_core.backend.materials import tints as material_tints
from arsim_core.backend.raycast import triangle_normals
from arsim_core.backend.target import Board
from arsim_core.geometry import Footprint
from arsim_core.pinhole import Intrinsics
from arsim_core.protocol.appearance import DEFAULT, SHOULDER, Appearance, sky_colors

# Faces are flat: everything but the texture coordinates is computed once per vertex (the same
# at a face's three corners), so a pixel costs one texture read, its fade with distance and one
# product. llvmpipe sets up every varying of every triangle, so they are packed into as few as
# can be: (u, v, depth, the depth where a texel spans FADE_PIXELS) and (shade, layer). The
# normal is turned towards the eye, as track meshes do not wind their faces consistently.
_VERTEX = '''
uniform mat4 world_to_clip;
uniform mat4 world_to_optical;
uniform mat4 model;
uniform vec3 model_scale;
in vec3 in_position;
in vec3 in_normal;
in float in_label;
out vec4 v_uvd;
flat out uint v_label;
#ifdef RGB
uniform vec3 eye;
uniform vec3 sun_direction;
uniform vec3 sun_light;
uniform vec3 sky_light;
uniform vec3 ground_light;
uniform float exposure;
uniform vec4 materials[MATERIALS];  // tint, tiles per metre
uniform vec2 layers[MATERIALS];  // texture layer, metres a texel spans (0: never fades)
uniform float focal;  // pixels per radian at the image centre
in float in_material;
in float in_band;
flat out vec4 v_shade;
vec3 encode(vec3 light) {  // appearance.encode
    vec3 over = max(light - SHOULDER, 0.0);
    return sqrt(min(light, SHOULDER) + over / (1.0 + over / (1.0 - SHOULDER)));
}
#endif
void main() {
    vec4 world = model * vec4(in_position, 1.0);
    gl_Position = world_to_clip * world;
    v_label = uint(in_label + 0.5);
    // Kerbs lie 2 cm on the road and the road 1 mm on the ground: far away the depth buffer
    // cannot tell them apart, so the lower layers are pushed back (nothing lies below them).
    float layer = v_label == GROUND_LABEL ? 2.0 : (v_label == ROAD_LABEL ? 1.0 : 0.0);
    gl_Position.z += layer * LAYER_DEPTH_BIAS * gl_Position.w;
    v_uvd = vec4(0.0, 0.0, (world_to_optical * world).z, 0.0);
#ifdef RGB
    vec3 local_normal = in_normal / model_scale;
    vec3 normal = normalize(mat3(model) * (local_normal / model_scale));
    if (dot(normal, eye - world.xyz) < 0.0) normal = -normal;
    int m = int(in_material + 0.5);
    vec3 n = abs(local_normal);
    vec3 p = in_position * model_scale;
    vec2 uv = n.z >= max(n.x, n.y) ? p.xy : (n.x >= n.y ? p.yz : p.xz);  // materials.texture_uv
    uv *= materials[m].a;
    // A cone's layer runs base to tip along v; a face labelled a cone that is not one (no
    // tip) shows the plain colour at the bottom of the layer.
    v_uvd.xy = layers[m].y == 0.0 ? vec2(uv.x, max(in_band, PLAIN_BAND)) : uv;
    float up = 0.5 + 0.5 * normal.z;
    vec3 light = max(dot(normal, sun_direction), 0.0) * sun_light + up * sky_light
        + (1.0 - up) * ground_light;
    v_shade = vec4(encode(exposure * light) * materials[m].rgb, layers[m].x);
    v_uvd.w = layers[m].y > 0.0 ? layers[m].y * focal / FADE_PIXELS : 1e30;
#endif
}
'''

# The sky: a grid over the image at the far plane, its colours computed per vertex on the CPU
# and interpolated (a pixel of it costs no more than a flat colour). Drawn once per camera and
# copied in before the geometry (Shading.sky_is_kept), or, with colour noise, drawn after the
# geometry where nothing covers it.
_SKY_VERTEX = '''
in vec2 in_corner;
in vec3 in_color;
out vec3 v_color;
void main() {
    v_color = in_color;
    gl_Position = vec4(in_corner, 1.0, 1.0);
}
'''

# Gaussian noise from a per-pixel hash (Box-Muller), seeded per frame: free on the GPU side.
_NOISE = '''
uniform uint seed;
uniform float color_noise;
uniform float depth_noise;
float uniform01(uint x) {
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return (float(x >> 8) + 0.5) / 16777216.0;
}
float gauss(uint stream) {
    uint pixel = uint(gl_FragCoord.x) + 65536u * uint(gl_FragCoord.y);
    uint key = pixel * 4u + stream + seed * 0x9e3779b9u;
    float u1 = uniform01(key * 2u + 1u);
    float u2 = uniform01(key * 2u + 0x68bc21ebu);
    return sqrt(-2.0 * log(u1)) * cos(6.28318530718 * u2);
}
'''

_SURFACE = '''
    vec3 texel = texture(textures, vec3(v_uvd.xy, v_shade.a)).rgb;
    vec3 c = mix(vec3(0.5), texel, min(v_uvd.w / v_uvd.z, 1.0)) * v_shade.rgb'''
_FLAT = '''
    vec3 c = 0.5 * v_shade.rgb'''  # texture_contrast 0: no texture read at all
_SKY = '''
    vec3 c = v_color'''


SKY_GRID = 16  # cells of the sky's grid a side
# How far the road, and twice as far the ground, are pushed back in normalised depth: some
# 80 steps of a 24-bit depth buffer, where a 1 mm gap seen 200 m away is only three or four.
LAYER_DEPTH_BIAS = 1e-5


def _header(shading: Shading) -> str:
    """The version and the constants every shader of ``shading`` sees."""
    defines = [f'#define MATERIALS {len(MATERIALS)}', f'#define SHOULDER {SHOULDER!r}',
               f'#define FADE_PIXELS {FADE_PIXELS!r}', f'#define PLAIN_BAND {PLAIN_BAND!r}',
               f'#define GROUND_LABEL {labels.GROUND}u', f'#define ROAD_LABEL {labels.ROAD}u',
               f'#define LAYER_DEPTH_BIAS {LAYER_DEPTH_BIAS!r}']
    if 'rgb' in shading.outputs:
        defines.append('#define RGB')
    return '\n'.join(['#version 330', *defines])


def _vertex(shading: Shading, sky: bool) -> str:
    return _header(shading) + (_SKY_VERTEX if sky else _VERTEX)


def _fragment(shading: Shading, sky: bool, textured: bool = True) -> str:
    """A fragment shader writing only the requested targets, in the order of ``outputs``.

    Noise is compiled in only where it is asked for: on llvmpipe the per-pixel hash costs more
    than the rest of the shading together.
    """
    outputs = shading.outputs
    lines = [_header(shading), _NOISE]
    if sky:
        lines.append('in vec3 v_color;')
    else:
        lines += ['in vec4 v_uvd;', 'flat in uint v_label;', 'flat in vec4 v_shade;',
                  'uniform sampler2DArray textures;']
    types = {'rgb': 'vec4', 'depth': 'float', 'semantic': 'uint'}
    for location, output in enumerate(outputs):
        lines.append(f'layout(location = {location}) out {types[output]} o_{output};')
    lines.append('void main() {')
    if 'rgb' in outputs:
        noise = ' + color_noise * vec3(gauss(0u), gauss(1u), gauss(2u))' \
            if shading.color_noise else ''
        surface = _SURFACE if textured else _FLAT
        lines.append(f'{_SKY if sky else surface}{noise};')
        lines.append('    o_rgb = vec4(clamp(c, 0.0, 1.0), 1.0);')
    if 'depth' in outputs:
        noise = ' + depth_noise * gauss(3u)' if shading.depth_noise else ''
        value = 'uintBitsToFloat(0x7f800000u)' if sky else f'v_uvd.z{noise}'
        lines.append(f'    o_depth = {value};')
    if 'semantic' in outputs:
        lines.append(f'    o_semantic = {labels.NONE}u;' if sky else '    o_semantic = v_label;')
    lines.append('}')
    return '\n'.join(lines)


@dataclass(frozen=True)
class Shading:
    """What a camera's shaders compute: its outputs, and whether each kind of noise is on."""

    outputs: tuple[str, ...]
    color_noise: bool
    depth_noise: bool

    @property
    def sky_is_kept(self) -> bool:
        """Without colour noise the sky of a camera is the same every frame it keeps its
        tilt: drawn once into a framebuffer of its own and copied in (a copy costs a sixth
        of a pass)."""
        return not self.color_noise


@dataclass(frozen=True)
class View:
    """Where and how a camera looks: transforms (4 x 4, world -> optical and -> clip), the
    pinhole model and clip distances, requested outputs and noise."""

    world_to_optical: np.ndarray
    world_to_clip: np.ndarray
    intrinsics: Intrinsics
    near: float
    far: float
    outputs: tuple[str, ...]
    color_noise: float = 0.0  # standard deviation, 0..255 units
    depth_noise: float = 0.0  # standard deviation [m]
    seed: int = 0

    @property
    def width(self) -> int:
        return self.intrinsics.width

    @property
    def height(self) -> int:
        return self.intrinsics.height

    @property
    def shading(self) -> Shading:
        return Shading(self.outputs, self.color_noise > 0.0, self.depth_noise > 0.0)


@dataclass
class _Target:
    framebuffer: Any
    sky: Any  # the same attachments holding only the sky (Shading.sky_is_kept)
    buffers: list[dict[str, np.ndarray]] = field(default_factory=list)
    flip: int = 0
    rgba: np.ndarray | None = None  # colour as read back, before dropping alpha
    sky_key: Any = None  # what the sky was drawn for: the camera's tilt and the appearance


# numpy dtype and components of each output's array, and the GL type it is read back as.
_DTYPES = {'rgb': ('u1', 3), 'depth': ('f4', 1), 'semantic': ('u1', 1)}
_READ_TYPES = {'depth': 'f4', 'semantic': 'u1'}  # rgb is read as RGBA, see GLRenderer.render
_FORMATS = {'rgb': (4, 'f1'), 'depth': (1, 'f4'), 'semantic': (1, 'u1')}


def gil_free_finish() -> Callable[[], None] | None:
    """``glFinish`` called through ctypes, which lets go of the GIL while the driver works;
    None where no OpenGL library loads.

    moderngl holds the GIL in its calls, and the frame is rasterised (by llvmpipe on a CPU)
    inside the first one that needs its pixels, so a camera would stop every other Python
    thread of the process for as long: in a run that hosts every node in one process, the
    thread that publishes the previous frame's messages. Waiting here first leaves the read-back
    a copy. The function acts on the calling thread's current context, moderngl's."""
    for name in ('libOpenGL.so.0', 'libGL.so.1'):
        try:
            finish = ctypes.CDLL(name).glFinish
        except (OSError, AttributeError):
            continue
        finish.restype, finish.argtypes = None, []
        return finish
    return None


class GLRenderer:
    """One EGL context per backend process; one framebuffer per camera."""

    name = 'opengl'

    def __init__(self, appearance: Appearance = DEFAULT) -> None:
        import moderngl

        # Mesa's llvmpipe splits each frame over rasteriser threads, one per core. With the
        # simulation's other processes on those cores the threads only add work: a 1024 x 760
        # frame in a hall took 20 ms of CPU with them and 13 ms without, in the same wall
        # time. Read when the context is made; a GPU driver ignores it; the caller may set it.
        os.environ.setdefault('LP_NUM_THREADS', '0')

        self._gl = moderngl
        # moderngl's annotations type ``backend`` as a dict; its documented value is a name.
        self.ctx = moderngl.create_context(standalone=True,
                                           backend='egl')  # type: ignore[arg-type]
        self.device = self.ctx.info.get('GL_RENDERER', '?')
        self._finish = gil_free_finish()
        self._programs: dict[tuple[Shading, bool, bool], Any] = {}
        self._lit: dict[int, Appearance] = {}  # the appearance each program's uniforms hold
        self._targets: dict[tuple[str, str], _Target] = {}
        self._track: Any = None
        self._vaos: dict[tuple[Shading, bool, Hashable], Any] = {}
        self._cars: dict[Hashable, Any] = {}  # a car model's buffer per footprint
        self._sky_buffer = self.ctx.buffer(reserve=SKY_GRID**2 * 6 * 5 * 4)
        self._sky: dict[Shading, Any] = {}
        self._chunks = Chunks(np.zeros((0, 3)))
        self._car_corners = np.array([[x, y, z, 1.0] for x in (-1, 1) for y in (-1, 1)
                                      for z in (0, 1)])
        self._textures: Any = None
        self._texture_key: tuple[int, float] | None = None
        self.appearance = appearance

    def set_appearance(self, appearance: Appearance) -> None:
        """Light, sky and textures of the frames from now on."""
        self.appearance = appearance

    @property
    def _textured(self) -> bool:
        return self.appearance.texture_contrast > 0.0

    def _program(self, shading: Shading, sky: bool) -> Any:
        """The program of ``shading`` (the sky's or the geometry's), compiled on first use,
        its appearance uniforms brought up to date."""
        key = (shading, sky, self._textured and not sky)
        program = self._programs.get(key)
        if program is None:
            program = self._programs[key] = self.ctx.program(
                vertex_shader=_vertex(shading, sky),
                fragment_shader=_fragment(shading, sky, key[2]))
        if self._lit.get(id(program)) is not self.appearance:
            _light(program, self.appearance)
            self._lit[id(program)] = self.appearance
        return program

    def _use_textures(self) -> None:
        """The material layers of the appearance's seed and contrast, made on first need,
        bound to unit 0."""
        key = (self.appearance.texture_seed, self.appearance.texture_contrast)
        if self._texture_key != key:
            if self._textures is not None:
                self._textures.release()
            layers = textures(*key)
            self._textures = self.ctx.texture_array((SIZE, SIZE, LAYERS), 4, layers.tobytes())
            self._textures.filter = (self._gl.NEAREST, self._gl.NEAREST)
            self._texture_key = key
        self._textures.use(0)

    def _mesh(self, vertices: np.ndarray, triangles: np.ndarray, triangle_labels: np.ndarray,
              materials: np.ndarray | None = None) -> tuple[Any, int]:
        """Unshared vertices (position, face normal, label, material, place along a cone)
        so each face is flat-shaded."""
        triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
        triangle_labels = np.asarray(triangle_labels, np.uint8)
        corners = np.asarray(vertices, np.float32)[triangles].reshape(-1, 3)
        if materials is None:
            materials = LABEL_MATERIAL[triangle_labels]
        base, axis = cone_axes(vertices, triangles, triangle_labels)
        band = cone_band(corners, np.repeat(base, 3, axis=0), np.repeat(axis, 3, axis=0))
        per_face = np.column_stack([triangle_normals(vertices, triangles), triangle_labels,
                                    materials])
        data = np.column_stack([corners, np.repeat(per_face, 3, axis=0), band]).astype('f4')
        return (self.ctx.buffer(data.tobytes()) if len(data) else None), len(data)

    def set_track(self, vertices: np.ndarray, triangles: np.ndarray,
                  triangle_labels: np.ndarray) -> None:
        if self._track is not None and self._track[0] is not None:
            self._track[0].release()
        for vao in self._vaos.values():
            vao.release()
        self._track = self._mesh(vertices, triangles, triangle_labels)
        self._chunks = Chunks(np.asarray(vertices, np.float64)[
            np.asarray(triangles, np.int64).reshape(-1)])
        self._vaos = {}

    def _car_vao(self, shading: Shading, footprint: Footprint) -> Any:
        """The car model for ``footprint`` (its wheels in its box), made on first need."""
        if footprint not in self._cars:
            self._cars[footprint] = self._mesh(*_car(footprint))[0]
        return self._vao(shading, footprint)

    def _vao(self, shading: Shading, which: Hashable) -> Any:
        """The vertex array of the track (``'track'``) or of a car model (its footprint)."""
        key = (shading, self._textured, which)
        if key not in self._vaos:
            buffer = self._track[0] if which == 'track' else self._cars[which]
            self._vaos[key] = self.ctx.vertex_array(
                self._program(shading, False),
                [(buffer, '3f 3f 1f 1f 1f', 'in_position', 'in_normal', 'in_label',
                  'in_material', 'in_band')],
                skip_errors=True)  # attributes an output set does not use are compiled out
        return self._vaos[key]

    def _target(self, key: tuple[str, str], view: View) -> _Target:
        target = self._targets.get(key)
        if target is not None and target.buffers[0].keys() != set(view.outputs):
            self.forget(key)  # other outputs (the weather's) from now on: attachments anew
            target = None
        if target is None:
            size = (view.width, view.height)
            framebuffer, sky = (self.ctx.framebuffer(
                [self.ctx.renderbuffer(size, components=_FORMATS[o][0], dtype=_FORMATS[o][1])
                 for o in view.outputs], depth) for depth in
                (self.ctx.depth_renderbuffer(size), None))
            # Two sets of read-back arrays, used in turn: the previous frame's arrays may still
            # be referenced by the reply being sent.
            buffers = [{o: _image(view, o) for o in view.outputs} for _ in range(2)]
            rgba = np.empty((view.height, view.width, 4), np.uint8) \
                if 'rgb' in view.outputs else None
            target = self._targets[key] = _Target(framebuffer, sky, buffers, rgba=rgba)
        return target

    def render(self, key: tuple[str, str], view: View,
               boxes: Sequence[tuple[Footprint, Sequence[float]]],
               board: tuple[Board, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Draw the track, a car in each of ``boxes`` (footprint, pose) and the calibration
        ``board`` at its model matrix, then the sky, from ``view``; the arrays returned are
        the camera's own and stay valid until its next-but-one render."""
        gl = self._gl
        target = self._target(key, view)
        framebuffer = target.framebuffer
        shading = view.shading
        framebuffer.use()
        framebuffer.clear(depth=1.0)
        if shading.sky_is_kept:
            self._copy_sky(target, view)
            framebuffer.use()
        self.ctx.enable(gl.DEPTH_TEST)
        self.ctx.disable(gl.CULL_FACE)
        self.ctx.depth_func = '<'
        program = self._program(shading, False)
        if 'rgb' in view.outputs and self._textured:
            self._use_textures()
        _set_view(program, view)
        planes = frustum_planes(view.world_to_clip)
        self._draw_track(program, shading, planes)
        for footprint, pose in boxes:
            model, scale = _box_model(footprint, pose)
            corners = (self._car_corners @ model.T)[:, :3]
            if not boxes_visible(corners.min(axis=0)[None], corners.max(axis=0)[None],
                                 planes)[0]:
                continue
            _set_model(program, model, scale)
            self._car_vao(shading, footprint).render(gl.TRIANGLES)
        if board is not None:
            self._draw_board(program, shading, *board)
        if not shading.sky_is_kept:
            self.ctx.depth_func = '<='
            self._draw_sky(view)
        if self._finish is not None:
            self._finish()
        target.flip ^= 1
        arrays = target.buffers[target.flip]
        for attachment, output in enumerate(view.outputs):
            if output == 'rgb':
                # Mesa reads RGBA8 back as RGB pixel by pixel (0.75 ms for 1024 x 760 here);
                # as RGBA it copies (0.34 ms), and OpenCV drops the alpha in 0.06 ms.
                framebuffer.read_into(target.rgba, components=4, attachment=attachment,
                                      dtype='f1')
                cv2.cvtColor(target.rgba, cv2.COLOR_RGBA2RGB, dst=arrays[output])
            else:
                framebuffer.read_into(arrays[output], components=_DTYPES[output][1],
                                      attachment=attachment, dtype=_READ_TYPES[output])
        return arrays

    def _draw_board(self, program: Any, shading: Shading, board: Board,
                    model: np.ndarray) -> None:
        """The calibration board (a few hundred triangles: never culled), its mesh made on
        first need."""
        key = ('board', board.target)
        if key not in self._cars:
            mesh = board.mesh
            self._cars[key] = self._mesh(mesh.vertices, mesh.triangles, mesh.labels,
                                         mesh.materials)[0]
        _set_model(program, model, (1.0, 1.0, 1.0))
        self._vao(shading, key).render(self._gl.TRIANGLES)

    def _draw_track(self, program: Any, shading: Shading, planes: np.ndarray) -> None:
        """The runs of the track's triangles that may show in the view volume."""
        if self._track is None or not self._track[1]:
            return
        _set_model(program, np.eye(4), (1.0, 1.0, 1.0))
        vao = self._vao(shading, 'track')
        for first, count in self._chunks.runs(planes):
            vao.render(self._gl.TRIANGLES, vertices=count, first=first)

    def _copy_sky(self, target: _Target, view: View) -> None:
        """The camera's sky into its framebuffer: drawn into ``target.sky`` when the camera's
        tilt (the world's up in its optical frame: turning about the vertical changes no
        pixel of the sky) or the appearance changed, then copied."""
        key = (tuple(np.round(view.world_to_optical[:3, 2], 9)), self.appearance)
        if target.sky_key != key:
            target.sky.use()
            self.ctx.disable(self._gl.DEPTH_TEST)
            self._draw_sky(view)
            target.sky_key = key
        self.ctx.copy_framebuffer(target.framebuffer, target.sky)

    def _draw_sky(self, view: View) -> None:
        """The sky's grid at the far plane: its gradient, +inf depth, class NONE."""
        shading = view.shading
        sky = self._sky.get(shading)
        if sky is None:
            sky = self._sky[shading] = self.ctx.vertex_array(
                self._program(shading, True),
                [(self._sky_buffer, '2f 3f', 'in_corner', 'in_color')], skip_errors=True)
        _set_noise(self._program(shading, True), view)
        mesh = sky_mesh(_corner_directions(view), self.appearance)
        self._sky_buffer.write(mesh.astype('f4').tobytes())
        sky.render(self._gl.TRIANGLES, vertices=len(mesh))

    def forget(self, key: tuple[str, str]) -> None:
        target = self._targets.pop(key, None)
        if target is not None:
            target.framebuffer.release()
            target.sky.release()


def _set_view(program: Any, view: View) -> None:
    """The per-frame uniforms of the geometry's program; the ones an output set compiles
    out are skipped."""
    _set_noise(program, view)
    program['world_to_clip'].write(view.world_to_clip.T.astype('f4').tobytes())
    if 'world_to_optical' in program:
        program['world_to_optical'].write(view.world_to_optical.T.astype('f4').tobytes())
    if 'eye' in program:
        program['eye'].value = tuple(float(v) for v in _eye(view))
    if 'focal' in program:
        program['focal'].value = view.intrinsics.fx


def _set_model(program: Any, model: np.ndarray, scale: tuple[float, float, float]) -> None:
    """Where the mesh drawn next stands (4 x 4) and the unit box's scale in it (the scale is
    compiled out without colour)."""
    program['model'].write(model.T.astype('f4').tobytes())
    if 'model_scale' in program:
        program['model_scale'].value = scale


def _set_noise(program: Any, view: View) -> None:
    for name, value in (('seed', view.seed & 0xFFFFFFFF),
                        ('color_noise', view.color_noise / 255.0),
                        ('depth_noise', view.depth_noise)):
        if name in program:  # compiled out when that noise is off
            program[name].value = value


def _light(program: Any, appearance: Appearance) -> None:
    """The appearance's uniforms, written once per program and appearance."""
    tints = np.column_stack([material_tints(appearance.texture_seed, appearance.color_jitter),
                             [1.0 / m.scale_m for m in MATERIALS]])
    values: dict[str, Any] = {
        'sun_direction': appearance.sun_direction, 'sun_light': appearance.sun_light,
        'sky_light': appearance.sky_light, 'ground_light': appearance.ground_light,
        'materials': tints,
        'layers': [(m.layer, 0.0 if m.stripes else m.scale_m / SIZE) for m in MATERIALS]}
    for name, value in values.items():
        if name in program:
            program[name].write(np.asarray(value, 'f4').tobytes())
    if 'exposure' in program:
        program['exposure'].value = appearance.exposure
    if 'textures' in program:
        program['textures'].value = 0


def _eye(view: View) -> np.ndarray:
    """The camera's position in the world."""
    rotation, translation = view.world_to_optical[:3, :3], view.world_to_optical[:3, 3]
    return -rotation.T @ translation


def sky_mesh(directions: np.ndarray, appearance: Appearance) -> np.ndarray:
    """The sky as triangles (n, 5: clip x, y and display RGB) over a SKY_GRID x SKY_GRID grid
    of the image, given the view directions at its corners (-1, -1), (1, -1), (-1, 1),
    (1, 1). Directions are affine across the image, so the grid's vertices take theirs
    exactly; colours between them are interpolated."""
    steps = np.linspace(-1.0, 1.0, SKY_GRID + 1)
    x, y = np.meshgrid(steps, steps)
    along_x = 0.5 * (directions[1] - directions[0])
    along_y = 0.5 * (directions[2] - directions[0])
    centre = directions[0] + along_x + along_y
    points = centre + x[..., None] * along_x + y[..., None] * along_y
    colors = sky_colors(points.reshape(-1, 3), appearance).reshape(*x.shape, 3)
    vertices = np.concatenate([x[..., None], y[..., None], colors], axis=2)
    quads = np.stack([vertices[:-1, :-1], vertices[:-1, 1:], vertices[1:, :-1],
                      vertices[1:, :-1], vertices[:-1, 1:], vertices[1:, 1:]], axis=2)
    return quads.reshape(-1, 5)


def _corner_directions(view: View) -> np.ndarray:
    """The view directions (4, 3, world frame, not unit) through the corners of the image in
    the sky quad's order: points of the far plane, less the eye."""
    corners = np.array([[-1, -1, 1, 1], [1, -1, 1, 1], [-1, 1, 1, 1], [1, 1, 1, 1]], float)
    far = corners @ np.linalg.inv(view.world_to_clip).T
    return far[:, :3] / far[:, 3:] - _eye(view)


def _image(view: View, output: str) -> np.ndarray:
    dtype, components = _DTYPES[output]
    shape = (view.height, view.width, components) if components > 1 else (view.height,
                                                                          view.width)
    return np.empty(shape, dtype)


def _car(footprint: Footprint) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The car's mesh in the unit box, every face labelled CAR."""
    vertices, triangles, materials = car_mesh(footprint)
    return vertices, triangles, np.full(len(triangles), labels.CAR, np.uint8), materials


def _box_model(footprint: Footprint, pose: Sequence[float]
               ) -> tuple[np.ndarray, tuple[float, float, float]]:
    """Model matrix of the unit box (x, y in [-1, 1], z in [0, 1]) scaled to a footprint, and
    that scale."""
    from arsim_core.geometry import rotation_matrix

    x, y, z, roll, pitch, yaw = pose
    scale = (footprint.length / 2.0, footprint.width / 2.0, footprint.height)
    model = np.eye(4)
    model[:3, :3] = rotation_matrix(roll, pitch, yaw) @ np.diag(scale)
    model[:3, 3] = [x, y, z]
    return model, scale


def seed_of(*parts: int) -> int:
    """A 32-bit frame seed from integers (sensor seed, frame time)."""
    value = 0
    for part in parts:
        value = (value * 0x100000001B3 + int(part)) % (1 << 61)
    return int(value ^ (value >> 29)) & 0xFFFFFFFF

