"""Robot descriptions (URDF) of the cars of a scenario, for RViz's RobotModel.

The shape of a car is defined once, in the xacro files of the ``arsim_description`` package
(``urdf/car.urdf.xacro`` and the macros it includes). This module does not draw anything itself:
it runs those files with xacro's Python API, handing over what only the scenario knows (the
profile file, the frame names of the topic map, the model's reference point). So the simulator,
a hand-run ``xacro car.urdf.xacro ...`` and any launch file produce the same model, and there is
no second template to keep in step.

Names follow the car's base frame: a car whose base frame is ``ego_racecar/base_link`` has links
``ego_racecar/chassis``, ``ego_racecar/front_left_wheel``, ... and publishes its description on
``/ego_racecar/robot_description`` (the namespace f1tenth_gym_ros uses for its ego car); a car
whose base frame has no prefix (``base_link``, the real car's names) publishes on
``/robot_description``, the ROS default.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arsim_core.config.scenario import CarSpec
from arsim_core.errors import ArsimError, ConfigError
from arsim_core.geometry import Wheels

DESCRIPTION_PACKAGE = 'arsim_description'
CAR_XACRO = 'car.urdf.xacro'
DESCRIPTION_TOPIC = 'robot_description'
WHEEL_WIDTH_PER_RADIUS = 0.7  # arsim_car.xacro's wheel_width_per_radius
#: The package's urdf/ folder in a source checkout, for use before the workspace is built.
_SOURCE_URDF_DIR = Path(__file__).resolve().parents[2] / DESCRIPTION_PACKAGE / 'urdf'


@dataclass(frozen=True)
class FixedJoint:
    """A fixed joint of a URDF: the transform parent -> child, xyz [m] and roll/pitch/yaw
    [rad] as in its ``<origin>``."""

    name: str
    parent: str
    child: str
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]


def frame_prefix(base_frame: str) -> str:
    """The part of ``base_frame`` up to and including its last '/': ``ego_racecar/`` for
    ``ego_racecar/base_link``, ``''`` for ``base_link``. Every link of the car carries it."""
    head, sep, _ = base_frame.rpartition('/')
    return head + sep


def description_namespace(car: CarSpec) -> str:
    """The namespace of the car's description topic, without slashes ('' for none)."""
    return frame_prefix(car.names.base_frame).strip('/')


def description_topic(car: CarSpec) -> str:
    """Where the car's URDF is published: ``/<namespace>/robot_description``."""
    namespace = description_namespace(car)
    return f'/{namespace}/{DESCRIPTION_TOPIC}' if namespace else f'/{DESCRIPTION_TOPIC}'


def rear_axle_x(car: CarSpec) -> float:
    """x of the rear axle in base_link, which is the dynamics model's reference point."""
    config = car.profile.vehicle
    body = config.params.body
    reference = config.model.reference_point.lower()
    if 'rear axle' in reference:
        return 0.0
    if 'front axle' in reference:
        return -body.wheelbase
    return -body.cog_to_rear_axle


def wheels(car: CarSpec) -> Wheels:
    """The car's wheels where its description puts them (arsim_car.xacro): the axles a
    wheelbase apart from ``rear_axle_x``, the tyre's radius, a width of 0.7 radii."""
    params = car.profile.vehicle.params
    rear = rear_axle_x(car)
    radius = params.tyre.wheel_radius
    return Wheels(rear, rear + params.body.wheelbase, radius,
                  round(WHEEL_WIDTH_PER_RADIUS * radius, 6))


def xacro_arguments(car: CarSpec) -> dict[str, str]:
    """The arguments of ``car.urdf.xacro`` for one car (all strings, as on xacro's command
    line)."""
    frames = ' '.join(f'{sensor}={frame}' for sensor, frame in car.names.sensor_frames.items())
    return {'profile': str(Path(car.profile.source).resolve()),
            'base_frame': car.names.base_frame,
            'sensor_frames': frames,
            'rear_axle_x': repr(rear_axle_x(car)),
            'body_top': repr(car.profile.footprint.height),
            'robot_name': car.name}


def car_xacro() -> Path:
    """``car.urdf.xacro`` of the installed arsim_description package, else of the source tree."""
    try:
        from ament_index_python.packages import get_package_share_directory

        path = Path(get_package_share_directory(DESCRIPTION_PACKAGE)) / 'urdf' / CAR_XACRO
    except (ImportError, LookupError, OSError):  # no ament index, or no such package in it
        path = _SOURCE_URDF_DIR / CAR_XACRO
    if not path.is_file():
        msg = (f'{DESCRIPTION_PACKAGE} is not installed ({CAR_XACRO} not found); build the '
               f'workspace and source install/setup.bash')
        raise ArsimError(msg)
    return path


def robot_description(car: CarSpec, xacro_file: Path | None = None) -> str:
    """The URDF of ``car``, with the frame names of the scenario's topic map.

    ``xacro_file`` defaults to the package's ``car.urdf.xacro``. Comments are left out: the
    string goes into a parameter and a latched topic, where they only cost bytes.
    """
    try:
        import xacro
    except ImportError as exc:
        msg = ('robot descriptions need xacro: pip install xacro (or, with a system ROS 2, '
               'apt install ros-$ROS_DISTRO-xacro)')
        raise ArsimError(msg) from exc
    path = xacro_file or car_xacro()
    try:
        doc = xacro.process_file(str(path), mappings=xacro_arguments(car))
    except (xacro.XacroException, OSError, KeyError, TypeError, ValueError) as exc:
        msg = f'{path}: cannot build the description of car {car.name!r}: {exc}'
        raise ConfigError(msg) from exc
    _remove_comments(doc)
    return doc.toprettyxml(indent='  ')


def _remove_comments(node: Any) -> None:
    """Drop the comment nodes under ``node`` (a minidom node: its stubs give child removal to
    only some node classes)."""
    for child in list(node.childNodes):
        if child.nodeType == child.COMMENT_NODE:
            node.removeChild(child)
        else:
            _remove_comments(child)


def fixed_joints(urdf: str) -> list[FixedJoint]:
    """Every fixed joint of a URDF string, in document order.

    Publishers of static transforms read the transforms from the description itself, so what
    RViz draws and what TF says are the same numbers.
    """
    joints = []
    for joint in ET.fromstring(urdf).iter('joint'):
        if joint.get('type') != 'fixed':
            continue
        origin = joint.find('origin')
        attrs = origin.attrib if origin is not None else {}
        xyz = _vector(attrs.get('xyz', '0 0 0'))
        rpy = _vector(attrs.get('rpy', '0 0 0'))
        parent, child = joint.find('parent'), joint.find('child')
        if parent is None or child is None:
            msg = f'fixed joint {joint.get("name")!r}: expected a parent and a child link'
            raise ValueError(msg)
        joints.append(FixedJoint(joint.get('name', ''), parent.get('link', ''),
                                 child.get('link', ''), xyz, rpy))
    return joints


def _vector(text: str) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in text.split())
    return x, y, z
