"""Topic maps: the names (topics and frames) a simulated car uses on the ROS graph.

A topic map makes arsim look like another simulator or the real car, so that a user's stack runs
unchanged. ``{car}`` and ``{sensor}`` in a template are replaced by the car and sensor names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arsim_core.config.fields import Section, load_yaml

_CAR_KEYS = ('odom_topic', 'drive_topic', 'command_topic', 'state_topic', 'event_topic',
             'odom_frame', 'base_frame', 'sensor_topic', 'sensor_frame', 'sensors',
             'odom_relative_to_start')


@dataclass(frozen=True)
class CarNames:
    """Resolved names of one car."""

    odom_topic: str
    drive_topic: str
    command_topic: str
    state_topic: str
    event_topic: str
    odom_frame: str
    base_frame: str
    odom_relative_to_start: bool
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
        return CarNames(
            odom_topic=fill('odom_topic'), drive_topic=fill('drive_topic'),
            command_topic=fill('command_topic', '/arsim/{car}/command'),
            state_topic=fill('state_topic', '/arsim/{car}/state'),
            event_topic=fill('event_topic', '/arsim/events'),
            odom_frame=fill('odom_frame'), base_frame=fill('base_frame'),
            odom_relative_to_start=s.boolean('odom_relative_to_start', False),
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
    ego: _CarTemplate
    opponent: _CarTemplate

    def car_names(self, car: str, index: int, sensors: tuple[str, ...]) -> CarNames:
        """Names of the car at ``index`` in the settings (0 is the ego)."""
        template = self.ego if index == 0 else self.opponent
        return template.resolve(car, sensors)


def load_topic_map(path: Path) -> TopicMap:
    root = Section(load_yaml(path), path)
    root.reject_unknown({'description', 'world_frame', 'map_topic', 'track_topic',
                         'initialpose_topic', 'ego', 'opponents'})
    return TopicMap(
        name=path.stem, source=str(path),
        world_frame=root.string('world_frame'),
        map_topic=root.string('map_topic'),
        track_topic=root.string('track_topic', '/arsim/track'),
        initialpose_topic=root.string('initialpose_topic', '/initialpose'),
        ego=_CarTemplate(root.section('ego')),
        opponent=_CarTemplate(root.section('opponents')))
