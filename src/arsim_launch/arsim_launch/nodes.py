"""Turn a scenario into the list of processes to start, as plain data.

``sim.launch.py`` (ros2 launch) and ``python3 -m arsim_launch`` (no launch installed) both
start exactly this list, so the two ways of running arsim cannot drift apart.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from arsim_core.config.drivers import (
    FOLLOW_THE_GAP,
    LINE_DRIVERS,
    NO_DRIVER,
    ZOO_NAMES,
    is_policy,
)
from arsim_core.config.recording import new_directory_problem
from arsim_core.config.scenario import CarSpec, Scenario
from arsim_core.errors import ConfigError
from arsim_launch.node_spec import NodeSpec

if TYPE_CHECKING:
    from arsim_core.track import Track


GROUPED = ('dynamics', 'sensors', 'description')  # arsim_bridge nodes a container can host


def flatten(specs: list[NodeSpec]) -> list[NodeSpec]:
    """Every node, with containers replaced by the nodes they host."""
    return [member for spec in specs for member in (spec.members or (spec,))]


def container(name: str, members: list[NodeSpec]) -> NodeSpec:
    """One process hosting ``members`` (see arsim_bridge.container); required if any of
    them is."""
    described = [{'type': m.executable, 'name': m.name, 'namespace': m.namespace,
                  'parameters': m.parameters, 'remappings': list(m.remappings),
                  'required': m.required}
                 for m in members]
    return NodeSpec('arsim_bridge', 'container', name, 'arsim',
                    arguments=('--nodes', json.dumps(described)), members=tuple(members),
                    required=any(m.required for m in members))


def validate(scenario: Scenario) -> Track:
    """Checks that need the file system: the track loads, no two cars start on top of each
    other, and a recording's directory can be made and is new; the track, loaded.

    Run by every launcher before anything starts, so such mistakes stop the launch with one
    message instead of surfacing in a node.
    """
    from arsim_core.engine.collisions import check_start_poses
    from arsim_core.engine.start_grid import Lane, start_poses
    from arsim_core.track import load_track
    from arsim_core.track.scene import scene_problem

    track = load_track(scenario.track.name, scenario.resources / 'maps')
    check_start_poses(scenario.cars, start_poses(scenario.cars, track.start_pose,
                                                 staged_front=track.mission is not None,
                                                 lane=Lane.of(track)),
                      scenario.source)
    problem = scene_problem(track, scenario.track.scene.kind)
    if problem is not None:
        msg = f'{scenario.source}: track.scene: {problem}'
        raise ConfigError(msg)
    for car in scenario.cars:
        problem = ros_driver_problem(car, track)
        if problem is not None:
            msg = f'{scenario.source}: cars[{car.index}].driver ({car.name}): {problem}'
            raise ConfigError(msg)
    directory = scenario.recording.directory
    problem = None if directory is None else new_directory_problem(directory)
    if problem is not None:
        msg = f'{scenario.source}: recording.directory: {problem}'
        raise ConfigError(msg)
    return track


def ros_driver_problem(car: CarSpec, track: Track) -> str | None:
    """Why ``car``'s built-in driver cannot drive it in a ROS run, or None. There the line
    drivers drive from the bridge and follow_the_gap from the autopilot node, both on the
    car's Ackermann drive topic; a Gym policy drives only in process."""
    driver = car.driver
    if driver == NO_DRIVER:
        return None
    if is_policy(driver):
        return (f'a Gym policy ({driver}) drives only in process (arsim-race, the gym); in a '
                f'ROS run, start it as a node of your own, or pick one of {list(ZOO_NAMES)}')
    if car.names.vesc is not None:
        return (f'the built-in driver {driver!r} commands the Ackermann drive topic, and this '
                f'car takes its commands from its VESC topics')
    if driver in LINE_DRIVERS and track.centerline is None:
        return (f'the line driver {driver!r} follows the track\'s centerline, and '
                f'{track.name!r} has none')
    return None


def has_package(name: str) -> bool:
    """Whether the environment provides the ROS package ``name``."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        get_package_prefix(name)
    except PackageNotFoundError:
        return False
    return True


def generate_nodes(scenario: Scenario, settings_file: Path,
                   overrides: dict[str, Any] | None = None,
                   state_publisher: bool | None = None) -> list[NodeSpec]:
    """Every process of the scenario: backend (if embedded), bridge, track loader, per car a
    dynamics node, a sensor republisher and a description publisher, and the autopilot, the
    live view and the recorder if they are asked for.

    ``state_publisher``: describe cars with robot_state_publisher (default: where installed),
    else with arsim's own description node. A one-process run (``simulation.one_process``)
    hosts all of arsim's nodes in one container process, which renders the sensors itself.
    """
    if state_publisher is None:
        state_publisher = has_package('robot_state_publisher')
    # No node here needs a TimeSource: the bridge owns /clock and the others stamp their output
    # with the frame time they were handed, so every stamp is sim time without one.
    common = {'settings_file': str(settings_file), 'resources_dir': str(scenario.resources),
              'settings_overrides': yaml.safe_dump(overrides) if overrides else ''}
    names = scenario.topic_map
    nodes: list[NodeSpec] = []
    if scenario.backend.kind == 'embedded':
        nodes.append(NodeSpec('arsim_core', 'backend', 'backend', ros=False, required=True,
                              arguments=backend_arguments(scenario)))
    elif scenario.backend.executable:
        nodes.append(NodeSpec('', scenario.backend.executable, 'unity', ros=False,
                              required=True, command=unity_command(scenario)))
    nodes.append(NodeSpec('arsim_bridge', 'bridge', 'arsim_bridge', 'arsim', common,
                          (('track', names.track_topic),), required=True))
    nodes.append(NodeSpec('arsim_bridge', 'track_loader', 'track_loader', 'arsim', common,
                          (('map', names.map_topic), ('track', names.track_topic)),
                          required=True))
    car_nodes = [node for car in scenario.cars
                 for node in _car_nodes(scenario, car, common, state_publisher)]
    if scenario.group_car_nodes and len(scenario.cars) > 1:
        for kind in GROUPED:
            members = [n for n in car_nodes if n.package == 'arsim_bridge' and n.executable == kind]
            if members:  # e.g. no dynamics container when every car's model is external
                nodes.append(container(f'cars_{kind}', members))
        car_nodes = [n for n in car_nodes if not any(n in c.members for c in nodes)]
    nodes.extend(car_nodes)
    if scenario.autopilot != 'none' or any(car.driver == FOLLOW_THE_GAP
                                           for car in scenario.cars):
        nodes.append(NodeSpec('arsim_bridge', 'autopilot', 'autopilot', 'arsim', common,
                              required=True))
    if scenario.view.kind == 'foxglove':  # a view that ends is reported; the run goes on
        nodes.append(NodeSpec('arsim_bridge', 'foxglove', 'foxglove_view', 'arsim', common))
    if scenario.recording.directory is not None:  # a run that cannot record must not go on
        nodes.append(NodeSpec('arsim_bridge', 'recorder', 'recorder', 'arsim', common,
                              required=True))
    if scenario.one_process:
        return one_process(nodes)
    return nodes


def one_process(specs: list[NodeSpec]) -> list[NodeSpec]:
    """``specs`` with every arsim node hosted by one container process (``simulation`` in the
    launchers' messages) and no embedded backend process: the bridge renders in process. A
    program of another package (a Unity player, robot_state_publisher) still runs on its own."""
    own = [member for spec in specs for member in (spec.members or (spec,))
           if member.package == 'arsim_bridge']
    others = [spec for spec in specs if spec.package not in ('arsim_bridge', 'arsim_core')]
    return [*others, container('simulation', own)]


def backend_arguments(scenario: Scenario) -> tuple[str, ...]:
    """The embedded backend's command line: its address and limits from the settings."""
    backend = scenario.backend
    arguments = ('--address', backend.address, '--max-request-mib', str(backend.max_request_mib))
    return (*arguments, '--allow-remote') if backend.allow_remote else arguments


def unity_command(scenario: Scenario) -> tuple[str, ...]:
    """The command line of a ``unity`` backend the launcher starts: a Unity player, or the C#
    console host (a .NET assembly, run with mono), with the embedded backend's arguments."""
    executable = scenario.backend.executable
    program: tuple[str, ...] = (executable,)
    if executable.endswith('.exe'):
        mono = shutil.which('mono')
        if mono is None:
            msg = (f'{scenario.source}: backend.executable: {executable} runs on mono, which is '
                   'not installed; install it with: sudo apt-get install mono-runtime')
            raise ConfigError(msg)
        program = (mono, executable)
    return (*program, *backend_arguments(scenario))


def _car_nodes(scenario: Scenario, car: CarSpec, parameters: dict[str, Any],
               state_publisher: bool) -> list[NodeSpec]:
    n = car.names
    params = {**parameters, 'car': car.name}
    dynamics = [('state', n.state_topic), ('drive', n.drive_topic),
                ('command', n.command_topic), ('reset', n.reset_topic),
                ('answered', n.answered_topic),
                ('events', scenario.topic_map.event_topic),
                ('track', scenario.topic_map.track_topic)]
    sensors = [('odom', n.odom_topic), *n.sensor_topics.items()]
    nodes = []
    if not car.external_dynamics:  # else the user's node keeps docs/dynamics-node.md
        nodes.append(NodeSpec('arsim_bridge', 'dynamics', f'{car.name}_dynamics', 'arsim',
                              params, tuple(dynamics), required=True))
    nodes.append(NodeSpec('arsim_bridge', 'sensors', f'{car.name}_sensors', 'arsim', params,
                          tuple(sensors), required=True))
    nodes.append(_description_node(car, params, state_publisher))
    return nodes


def _description_node(car: CarSpec, params: dict[str, Any], state_publisher: bool) -> NodeSpec:
    """The car's URDF for RViz: robot_state_publisher where installed, else our publisher."""
    from arsim_core.description import description_topic, robot_description

    topic = description_topic(car)
    if state_publisher:
        return NodeSpec('robot_state_publisher', 'robot_state_publisher',
                        f'{car.name}_robot_state_publisher', 'arsim',
                        {'robot_description': robot_description(car)},
                        (('robot_description', topic),
                         ('joint_states', f'{topic.rsplit("/", 1)[0]}/joint_states')))
    return NodeSpec('arsim_bridge', 'description', f'{car.name}_description', 'arsim', params,
                    (('robot_description', topic),))


def rviz_node(scenario: Scenario) -> NodeSpec:
    """RViz2 with the layout made for the scenario's topic map."""
    folder = scenario.resources / 'rviz'
    layout = folder / f'arsim_{scenario.topic_map.name}.rviz'
    if not layout.is_file():
        layout = folder / 'arsim.rviz'
    return NodeSpec('rviz2', 'rviz2', 'rviz2', '', {'use_sim_time': True},
                    arguments=('-d', str(layout)))
