"""The shipped RViz configurations show only what the simulation publishes.

A display on a misspelt topic, or in a frame that TF cannot connect to the fixed frame, fails
silently in RViz (an empty view and a status warning), so every .rviz file in rviz/ is checked
against the names its topic map gives: the topics the launch generator wires, the topic map's
own names, the car descriptions, and the fixed names of the track node.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.description import description_topic, fixed_joints, robot_description
from arsim_launch.nodes import flatten, generate_nodes

#: The topics the track node publishes under its own names (namespace arsim, not remapped),
#: all latched and in the world frame. One list, used by every check here.
TRACK_NODE_TOPICS = ('/arsim/track_markers', '/arsim/centerline', '/arsim/raceline')
#: The topic map each configuration is made for.
RVIZ_TOPIC_MAPS = {'arsim.rviz': 'f1tenth_gym', 'arsim_f1tenth_car.rviz': 'f1tenth_car'}
#: Plugin classes of rviz_common and rviz_default_plugins these files may use (Humble and later).
KNOWN_CLASSES = {
    'rviz_common/Displays', 'rviz_common/Selection', 'rviz_common/Tool Properties',
    'rviz_common/Views', 'rviz_common/Time', 'rviz_common/Group',
    'rviz_default_plugins/Grid', 'rviz_default_plugins/Map', 'rviz_default_plugins/RobotModel',
    'rviz_default_plugins/LaserScan', 'rviz_default_plugins/PointCloud2',
    'rviz_default_plugins/Image', 'rviz_default_plugins/TF', 'rviz_default_plugins/MarkerArray',
    'rviz_default_plugins/Path', 'rviz_default_plugins/Odometry',
    'rviz_default_plugins/Interact', 'rviz_default_plugins/MoveCamera',
    'rviz_default_plugins/Select', 'rviz_default_plugins/FocusCamera',
    'rviz_default_plugins/Measure', 'rviz_default_plugins/SetInitialPose',
    'rviz_default_plugins/SetGoal', 'rviz_default_plugins/PublishPoint',
    'rviz_default_plugins/Orbit', 'rviz_default_plugins/TopDownOrtho',
}
RVIZ_DIR = Path(__file__).resolve().parents[2] / 'rviz'


@dataclass
class Published:
    """What a scenario puts on the ROS graph, as far as RViz cares."""

    topics: set[str] = field(default_factory=set)
    #: frame_id of each topic whose messages carry one
    frame_of: dict[str, str] = field(default_factory=dict)
    latched: set[str] = field(default_factory=set)
    #: TF edges (either direction connects two frames for RViz)
    edges: set[tuple[str, str]] = field(default_factory=set)

    @property
    def frames(self) -> set[str]:
        return {frame for edge in self.edges for frame in edge} | set(self.frame_of.values())

    def connected(self, a: str, b: str) -> bool:
        reached, todo = {a}, [a]
        while todo:
            frame = todo.pop()
            for edge in self.edges:
                if frame in edge:
                    other = edge[1] if edge[0] == frame else edge[0]
                    if other not in reached:
                        reached.add(other)
                        todo.append(other)
        return b in reached


def published(repo_root: Path, topic_map: str) -> Published:
    settings = repo_root / 'config' / 'sim.yaml'
    overrides = {'topic_map': topic_map}
    scenario: Scenario = load_scenario(settings, repo_root, overrides)
    names = scenario.topic_map
    out = Published()
    for spec in flatten(generate_nodes(scenario, settings, overrides)):
        out.topics.update(target for _, target in spec.remappings)
    out.topics.update(value for key, value in vars(names).items()
                      if key.endswith('_topic') and isinstance(value, str))
    out.topics.update(TRACK_NODE_TOPICS)
    out.frame_of.update({topic: names.world_frame for topic in (*TRACK_NODE_TOPICS,
                                                                names.map_topic)})
    out.latched.update((*TRACK_NODE_TOPICS, names.map_topic))
    for car in scenario.cars:
        n = car.names
        description = description_topic(car)
        out.topics.add(description)
        out.latched.add(description)
        out.frame_of[description] = n.base_frame
        out.frame_of[n.odom_topic] = n.odom_frame
        for sensor, topic in n.sensor_topics.items():
            out.frame_of[topic] = n.sensor_frames[sensor]
        out.edges.add((n.odom_frame, n.base_frame))
        out.edges.update((j.parent, j.child) for j in fixed_joints(robot_description(car)))
    return out


def displays(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every display, also those inside groups."""
    for item in items:
        yield item
        yield from displays(item.get('Displays', []))


def topics_of(entry: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(property, topic, QoS settings) of each topic property of a display or tool."""
    for key, value in entry.items():
        if key.endswith('Topic'):
            if isinstance(value, dict):
                yield key, value['Value'], value
            else:
                yield key, value, {}


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((RVIZ_DIR / name).read_text())


def test_every_configuration_names_its_topic_map() -> None:
    files = sorted(p.name for p in RVIZ_DIR.glob('*.rviz'))
    assert files, f'no .rviz file in {RVIZ_DIR}'
    assert set(files) == set(RVIZ_TOPIC_MAPS), \
        'add each .rviz file to RVIZ_TOPIC_MAPS with the topic map it is made for'


@pytest.mark.parametrize(('name', 'topic_map'), sorted(RVIZ_TOPIC_MAPS.items()))
def test_displays_show_published_topics_in_connected_frames(repo_root: Path, name: str,
                                                           topic_map: str) -> None:
    graph = published(repo_root, topic_map)
    config = load(name)
    manager = config['Visualization Manager']
    fixed = manager['Global Options']['Fixed Frame']
    assert fixed in graph.frames, f'{name}: fixed frame {fixed!r} is not published'

    shown = []
    for display in displays(manager['Displays']):
        assert display['Class'] in KNOWN_CLASSES, f'{name}: unknown class {display["Class"]}'
        for key, topic, qos in topics_of(display):
            where = f'{name}: display {display["Name"]!r} {key}'
            assert topic in graph.topics, f'{where}: {topic} is not published'
            if topic in graph.frame_of:
                frame = graph.frame_of[topic]
                assert graph.connected(fixed, frame), \
                    f'{where}: {topic} is in frame {frame!r}, not connected to {fixed!r}'
            if topic in graph.latched:
                assert qos.get('Durability Policy') == 'Transient Local', \
                    f'{where}: {topic} is latched; Volatile would miss it when RViz starts late'
            shown.append(topic)
    assert len(shown) == len(set(shown)), f'{name}: a topic is shown twice'
    for item in config['Panels']:
        assert item['Class'] in KNOWN_CLASSES
    assert manager['Views']['Current']['Class'] in KNOWN_CLASSES


@pytest.mark.parametrize(('name', 'topic_map'), sorted(RVIZ_TOPIC_MAPS.items()))
def test_pose_tools_publish_where_the_simulation_listens(repo_root: Path, name: str,
                                                         topic_map: str) -> None:
    tools = {tool['Class']: tool for tool in load(name)['Visualization Manager']['Tools']}
    assert set(tools) <= KNOWN_CLASSES
    names = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                          {'topic_map': topic_map}).topic_map
    initial = tools['rviz_default_plugins/SetInitialPose']['Topic']['Value']
    assert initial == names.initialpose_topic
    goal = tools['rviz_default_plugins/SetGoal']['Topic']['Value']
    assert goal == names.goal_pose_topic


@pytest.mark.parametrize(('name', 'topic_map'), sorted(RVIZ_TOPIC_MAPS.items()))
def test_every_car_of_the_default_scenario_is_drawn(repo_root: Path, name: str,
                                                    topic_map: str) -> None:
    scenario = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                             {'topic_map': topic_map})
    models = {display['Description Topic']['Value']
              for display in displays(load(name)['Visualization Manager']['Displays'])
              if display['Class'] == 'rviz_default_plugins/RobotModel'}
    assert models == {description_topic(car) for car in scenario.cars}


def test_the_foxglove_layout_shows_published_topics(repo_root: Path) -> None:
    """rviz/arsim.foxglove.json (docs/view.md) for the default topic map: its panels' topics
    are published and the 3D view follows a published frame."""
    graph = published(repo_root, 'f1tenth_gym')
    layout = json.loads((RVIZ_DIR / 'arsim.foxglove.json').read_text())
    panels = layout['configById']
    three_d = panels['3D!arsim']
    assert three_d['followTf'] in graph.frames
    topics = {*three_d['topics'], three_d['publish']['poseTopic'],
              panels['RawMessages!race']['topicPath'],
              *(path['value'].split('.')[0] for path in panels['Plot!speed']['paths'])}
    assert topics == {'/map', '/scan', '/ego_racecar/odom', '/initialpose', '/arsim/race'}
    assert topics <= graph.topics, topics - graph.topics

    def leaves(node: Any) -> set[str]:
        return {node} if isinstance(node, str) else leaves(node['first']) | leaves(node['second'])

    assert leaves(layout['layout']) == set(panels)
