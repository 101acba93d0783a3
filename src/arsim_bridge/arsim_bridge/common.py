"""Helpers every arsim node shares: parameters, scenario loading, time and pose conversions."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
import rclpy.logging
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from arsim_bridge import stopping
from arsim_core.config.scenario import CarSpec, Scenario, load_scenario, parse_overrides
from arsim_core.engine.world import TrackWorld
from arsim_core.errors import ArsimError
from arsim_core.geometry import quaternion_to_yaw, yaw_to_quaternion
from arsim_core.track.fs.mission import Mission
from arsim_core.track.model import Cones
from arsim_msgs.msg import TrackGeometry


def declare_scenario(node: Node) -> Scenario:
    """Declare the parameters every arsim node takes and load the scenario they name."""
    settings: str = node.declare_parameter('settings_file', '').value
    resources: str = node.declare_parameter('resources_dir', '').value
    overrides: str = node.declare_parameter('settings_overrides', '').value
    if not settings or not resources:
        msg = 'parameters settings_file and resources_dir are required'
        raise ArsimError(msg)
    return load_scenario(Path(settings), Path(resources), parse_overrides(overrides))


def declare_car(node: Node, scenario: Scenario) -> CarSpec:
    """The car a per-car node serves, named by its ``car`` parameter."""
    name: str = node.declare_parameter('car', '').value
    if name not in [c.name for c in scenario.cars]:
        msg = f'{scenario.source}: no car named {name!r} (parameter car)'
        raise ArsimError(msg)
    return scenario.car(name)


def to_time(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def to_ns(stamp: Time) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def pose_2d(x: float, y: float, yaw: float) -> Pose:
    pose = Pose()
    set_pose_2d(pose, x, y, yaw)
    return pose


def set_pose_2d(pose: Pose, x: float, y: float, yaw: float) -> None:
    """Write a planar pose into an existing message (republishers reuse theirs every frame)."""
    pose.position.x, pose.position.y = float(x), float(y)
    q = pose.orientation
    q.x, q.y, q.z, q.w = yaw_to_quaternion(yaw)


def yaw_of(pose: Pose) -> float:
    q = pose.orientation
    return quaternion_to_yaw(q.x, q.y, q.z, q.w)


def planar(pose: Pose) -> tuple[float, float, float]:
    """x, y and yaw of a pose: the inverse of ``pose_2d``."""
    return pose.position.x, pose.position.y, yaw_of(pose)


def finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


def new_executor() -> Executor:
    """rclpy's events executor where there is one (Kilted and newer): it dispatches in C++ and
    costs a fraction of the Python executor's CPU and latency per message, which a lockstep
    simulation pays several times a frame. Humble and Jazzy get the single-threaded one."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor()
    return EventsExecutor()


Spin = Callable[[Any], None]  # a node's own main loop; node.executor serves every node


def run_node(factory: Callable[[], Node], spin: Spin | None = None) -> int:
    """Create a node, spin it until SIGINT or SIGTERM, and turn arsim errors into one clear log
    line and a non-zero exit code instead of a traceback. ``spin`` replaces the executor loop;
    a stop request reaches it as a KeyboardInterrupt while the ROS context still works, so it
    can publish on its way out (see ``arsim_bridge.stopping``)."""
    return run_nodes([factory], spin)


def run_nodes(factories: Sequence[Callable[[], Node | None]], spin: Spin | None = None) -> int:
    """``run_node`` for several nodes sharing one executor, which the first node's own loop
    (``spin``, given that node) spins through ``node.executor`` when there is one.

    The executor lives in this function only: a node holding it would make a reference cycle
    through rclpy's events executor (C++) that Python's collector cannot see, keeping the DDS
    participant past the interpreter's exit, and Fast DDS would never remove the process's
    shared-memory segment from /dev/shm (32 MB with ``arsim_bridge.dds``'s profile).

    Exit code: 0 when stopped by a signal, 1 after a fatal error (logged in one line)."""
    from rclpy.signals import SignalHandlerOptions

    stopping.install()
    nodes: list[Node] = []
    code = 0
    try:
        # rclpy's handlers would shut the context down under running callbacks and threads.
        rclpy.init(args=sys.argv, signal_handler_options=SignalHandlerOptions.NO)
        for factory in factories:
            node = factory()
            if node is not None:  # None: an optional node that could not start (reported)
                nodes.append(node)
        executor = new_executor()
        for node in nodes:
            executor.add_node(node)
        if spin is not None:
            spin(nodes[0])
        else:
            # spin_once in a loop: the events executor's spin() (rclpy 9.1) never dispatched
            # messages from other processes in our tests.
            while rclpy.ok():
                stopping.spin_once(executor, timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ArsimError as exc:
        (nodes[-1].get_logger() if nodes else rclpy.logging.get_logger('arsim')).fatal(str(exc))
        code = 1
    finally:
        stopping.shutting_down()
        for node in nodes:  # each stops its own threads before its publishers go
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 1 if stopping.failure() else code


def track_world(msg: TrackGeometry) -> TrackWorld:
    """The engine's track from the track loader's message."""
    centerline = np.asarray(msg.centerline, np.float64).reshape(-1, 2)
    cones = None
    if len(msg.cone_labels):
        cones = Cones(np.asarray(msg.cones, np.float64).reshape(-1, 2),
                      np.asarray(msg.cone_labels, np.uint8))
    mission = None
    if msg.mission.kind:
        m = msg.mission
        mission = Mission(m.kind, m.laps, np.asarray(m.start_line), np.asarray(m.finish_line),
                          np.asarray(m.stop_zone), tuple(m.timed_laps),
                          np.asarray(m.path).reshape(-1, 2) if len(m.path) else None)
    return TrackWorld(
        name=msg.name,
        vertices=np.asarray(msg.vertices, dtype=np.float32).reshape(-1, 3),
        triangles=np.asarray(msg.triangles, dtype=np.uint32).reshape(-1, 3),
        labels=np.asarray(msg.labels, dtype=np.uint8),
        start_pose=planar(msg.start_pose),
        centerline=centerline if len(centerline) >= 3 else None,
        width_left=np.asarray(msg.width_left, np.float64),
        width_right=np.asarray(msg.width_right, np.float64),
        cones=cones, mission=mission)
