"""Topic maps: the names (topics and frames) a simulated car uses on the ROS graph.

A topic map makes arsim look like another simulator or the real car, so that a user's stack runs
unchanged. ``{car}`` and ``{sensor}`` in a template are replaced by the car and sensor names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arsim_core.yaml_fields import Section, load_section, merge

_CAR_KEYS = ('odom_topic', 'odom_aliases', 'drive_topic', 'command_topic', 'state_topic',
             'reset_topic', 'odom_frame', 'base_frame', 'sensor_topic',
             'sensor_frame', 'sensors', 'odom_relative_to_start', 'odom_tf', 'vesc')
#: The topics of a car driven as the real F1TENTH car's VESC: ``vesc_driver``'s names.
_VESC_TOPICS = {'speed_topic': '/commands/motor/speed', 'brake_topic': '/commands/motor/brake',
                'servo_topic': '/commands/servo/position', 'state_topic': '/sensors/core',
                'servo_state_topic': '/sensors/servo_position_command'}


@dataclass(frozen=True)
class VescTopics:
    """Where a car takes the VESC's commands and publishes its telemetry, as ``vesc_driver``
    does (``arsim_core.dynamics.vesc``); the car then takes no Ackermann command."""

    speed_topic: str  #: std_msgs/Float64, ERPM
    brake_topic: str  #: std_msgs/Float64, brake current [A]
    servo_topic: str  #: std_msgs/Float64, servo position [0-1]
    state_topic: str  #: vesc_msgs/VescStateStamped
    servo_state_topic: str  #: std_msgs/Float64, the servo position as the servo took it


@dataclass(frozen=True)
class CarNames:
    """Resolved names of one car."""

    odom_topic: str
    odom_aliases: tuple[str, ...]
    drive_topic: str
    command_topic: str
    state_topic: str
    reset_topic: str
    answered_topic: str  #: arsim's dynamics node: a driver's command reached the car
    odom_frame: str
    base_frame: str
    odom_relative_to_start: bool
    odom_tf: bool  #: publish odom -> base_link (off where the user's odometry node does)
    vesc: VescTopics | None  #: the car's VESC topics, or None: Ackermann commands
    sensor_topics: dict[str, str]
    sensor_frames: dict[str, str]


@dataclass(frozen=True)
class _CarTemplate:
    section: Section

    def resolve(self, car: str, sensors: tuple[str, ...]) -> CarNames:
        s = self.section
        s.reject_unknown(_CAR_KEYS)

        def fill(key: str, default: str | None = None, **extra: str) -> str:
            return s.string(key, default).format(car=car, **extra)

        overrides = s.section('sensors', {})
        topics, frames = {}, {}
        for sensor in sensors:
            override = overrides.section(sensor, {})
            override.reject_unknown({'topic', 'frame'})
            topics[sensor] = override.string('topic', fill('sensor_topic', sensor=sensor))
            frames[sensor] = override.string('frame', fill('sensor_frame', sensor=sensor))
        vesc = None
        if s.has('vesc'):
            section = s.section('vesc')
            section.reject_unknown(_VESC_TOPICS)
            vesc = VescTopics(**{key: section.string(key, default).format(car=car)
                                 for key, default in _VESC_TOPICS.items()})
        aliases = s.raw('odom_aliases', [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            s.fail(f'expected a list of topic names, got {aliases!r}', 'odom_aliases')
        return CarNames(
            odom_topic=fill('odom_topic'), odom_aliases=tuple(a.format(car=car) for a in aliases),
            drive_topic=fill('drive_topic'),
            command_topic=fill('command_topic', '/arsim/{car}/command'),
            state_topic=fill('state_topic', '/arsim/{car}/state'),
            reset_topic=fill('reset_topic', '/arsim/{car}/reset'),
            answered_topic=f'/arsim/{car}/answered',
            odom_frame=fill('odom_frame'), base_frame=fill('base_frame'),
            odom_relative_to_start=s.boolean('odom_relative_to_start', False),
            odom_tf=s.boolean('odom_tf', True), vesc=vesc,
            sensor_topics=topics, sensor_frames=frames)


@dataclass(frozen=True)
class TopicMap:
    """Names of the simulation-wide topics plus templates for the ego and the other cars."""

    name: str
    source: str
    world_frame: str
    map_topic: str
    track_topic: str
    initialpose_topic: str
    goal_pose_topic: str
    event_topic: str
    race_topic: str
    mission_topic: str  # arsim_msgs/MissionStatus of a Formula Student mission
    cones_topic: str  # the placed cones as they stand or lie, world frame
    as_state_topic: str  # eufs_msgs/CanState of the ego's mission; empty: not published
    ego: _CarTemplate
    opponent: _CarTemplate
    named: dict[str, Section]

    def car_names(self, car: str, index: int, sensors: tuple[str, ...]) -> CarNames:
        """Names of the car at ``index`` in the settings (0 is the ego); a car named in the
        map's ``named`` section takes those names over its template's."""
        template = (self.ego if index == 0 else self.opponent).section
        if car in self.named:
            template = template.child(merge(template.data, self.named[car].data),
                                      self.named[car].path)
        return _CarTemplate(template).resolve(car, sensors)


def load_topic_map(path: Path) -> TopicMap:
    root = load_section(path)
    root.reject_unknown({'description', 'world_frame', 'map_topic', 'track_topic',
                         'initialpose_topic', 'goal_pose_topic', 'event_topic', 'race_topic', 'ego',
                         'opponents', 'named', 'mission_topic', 'cones_topic',
                         'as_state_topic'})
    return TopicMap(
        name=path.stem, source=str(path),
        world_frame=root.string('world_frame'),
        map_topic=root.string('map_topic'),
        track_topic=root.string('track_topic', '/arsim/track'),
        initialpose_topic=root.string('initialpose_topic', '/initialpose'),
        goal_pose_topic=root.string('goal_pose_topic', '/goal_pose'),
        event_topic=root.string('event_topic', '/arsim/events'),
        race_topic=root.string('race_topic', '/arsim/race'),
        mission_topic=root.string('mission_topic', '/arsim/mission'),
        cones_topic=root.string('cones_topic', '/arsim/cones'),
        as_state_topic=root.string('as_state_topic', ''),
        ego=_CarTemplate(root.section('ego')),
        opponent=_CarTemplate(root.section('opponents')),
        named=dict(root.section('named', {}).items()))
