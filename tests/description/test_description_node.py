"""The description node, started as the launch starts it, seen from another process over DDS.

RViz usually starts after the simulation, so the description and the body transforms must be
latched: the probe subscribes only after the node has published.
"""

from __future__ import annotations

import dataclasses
import signal
from pathlib import Path

import pytest
import yaml
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from simharness import LoggedProcess, Probe, allocate_domain, installed_resources, ros_env
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from arsim_core.config.scenario import CarSpec, load_scenario
from arsim_core.description import description_topic, fixed_joints, robot_description
from arsim_launch.node_spec import NodeSpec
from arsim_launch.runner import STOP_GRACE_S, command

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
STARTUP_S = 30.0
# Apart from simharness's domains (10 + pid % 50 upwards), so suites running side by side on one
# machine do not hear each other.


def description_spec(car: CarSpec, settings: Path, resources: Path,
                     overrides: dict) -> NodeSpec:
    """The node as the launch generator starts it (one per car)."""
    parameters = {'settings_file': str(settings), 'resources_dir': str(resources),
                  'settings_overrides': yaml.safe_dump(overrides) if overrides else '',
                  'car': car.name}
    return NodeSpec('arsim_bridge', 'description', f'{car.name}_description', 'arsim',
                    parameters, (('robot_description', description_topic(car)),))


class DescriptionProcess:
    """The description node of the default scenario's ego car, in its own process;
    ``car_parameter`` replaces the car name it is given."""

    def __init__(self, workdir: Path, overrides: dict, car_parameter: str = 'ego') -> None:
        workdir.mkdir(parents=True)
        resources = installed_resources()
        settings = resources / 'config' / 'sim.yaml'
        self.car = load_scenario(settings, resources, overrides).car('ego')
        spec = description_spec(self.car, settings, resources, overrides)
        spec = dataclasses.replace(spec, parameters={**spec.parameters, 'car': car_parameter})
        self.domain_id = allocate_domain()
        self.node = LoggedProcess(command(spec, workdir), ros_env(self.domain_id),
                                  workdir / 'description.log')
        self.process = self.node.process

    @property
    def log(self) -> str:
        return self.node.log

    def wait_for_log(self, text: str, timeout_s: float) -> bool:
        return self.node.wait_for_log(text, timeout_s)

    def stop(self) -> None:
        """Ctrl-C as the runner sends it; killed if it has not ended after the runner's grace."""
        self.node.stop(signal.SIGINT, STOP_GRACE_S)


@pytest.fixture
def start(tmp_path: Path):
    started: list[DescriptionProcess] = []
    probes: list[Probe] = []

    def make(overrides: dict, car_parameter: str = 'ego') -> tuple[DescriptionProcess, Probe]:
        node = DescriptionProcess(tmp_path / str(len(started)), overrides, car_parameter)
        started.append(node)
        probes.append(Probe(node.domain_id, 'description_probe'))
        return node, probes[-1]

    yield make
    for probe in probes:
        probe.close()
    for node in started:
        node.stop()


@pytest.mark.parametrize(('topic_map', 'topic'),
                         [('f1tenth_gym', '/ego_racecar/robot_description'),
                          ('f1tenth_car', '/robot_description')])
def test_late_subscriber_receives_description_and_body_transforms(start, topic_map: str,
                                                                  topic: str) -> None:
    node, probe = start({'topic_map': topic_map})
    assert node.wait_for_log('description of car', STARTUP_S), node.log
    assert topic in node.log

    # Subscribed only now, after the node published: transient local hands both over.
    descriptions: list[String] = []
    statics: list[TFMessage] = []
    probe.node.create_subscription(String, topic, descriptions.append, LATCHED)
    probe.node.create_subscription(TFMessage, '/tf_static', statics.append, LATCHED)
    assert probe.spin_until(lambda: descriptions and statics, 15.0), node.log

    urdf = descriptions[-1].data
    assert urdf == robot_description(node.car)
    assert len(statics) == 1, 'the body transforms come as one complete message'
    published = {(t.header.frame_id, t.child_frame_id): t for t in statics[0].transforms}
    sensor_frames = set(node.car.names.sensor_frames.values())
    body = {(j.parent, j.child): j for j in fixed_joints(urdf) if j.child not in sensor_frames}
    assert set(published) == set(body)
    assert len(body) == 5  # chassis and four wheels; the sensor node publishes the sensors
    for key, joint in body.items():
        t = published[key].transform
        assert (t.translation.x, t.translation.y, t.translation.z) == pytest.approx(joint.xyz)
        assert (t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w) == \
            pytest.approx((0.0, 0.0, 0.0, 1.0))
    assert node.process.poll() is None


def test_unknown_car_stops_with_one_message(start) -> None:
    node, _ = start({}, car_parameter='nobody')
    assert node.process.wait(STARTUP_S) == 1
    assert "no car named 'nobody'" in node.log
    assert 'Traceback' not in node.log
