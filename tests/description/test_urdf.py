"""Car descriptions: the URDF of every car matches its profile and its topic map's frames.

RViz draws a car from the URDF and places it with TF; a link name that differs from the frame
the sensor node publishes, or a joint off its profile mount, shows as a car in the wrong place
or a RobotModel error, so these are checked for both profiles and both topic maps.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from urdf_parser_py.urdf import URDF

from arsim_core.config.scenario import CarSpec, load_scenario
from arsim_core.description import (
    car_xacro,
    description_topic,
    fixed_joints,
    frame_prefix,
    robot_description,
)
from arsim_core.description import wheels as description_wheels
from arsim_core.errors import ConfigError

TOPIC_MAPS = ('f1tenth_gym', 'f1tenth_car')
PROFILES = ('f1tenth', 'full_scale', 'formula_student', 'model_1_14', 'platform_1_5')
EGO_PREFIX = {'f1tenth_gym': 'ego_racecar/', 'f1tenth_car': ''}
WHEELS = ('front_left_wheel', 'front_right_wheel', 'rear_left_wheel', 'rear_right_wheel')


def cars(repo_root: Path, topic_map: str, profile: str | Path) -> tuple[CarSpec, ...]:
    """An ego and one opponent with ``profile``, named by ``topic_map``."""
    overrides = {'topic_map': topic_map,
                 'cars': [{'name': 'ego', 'profile': str(profile)},
                          {'name': 'rival', 'profile': str(profile)}]}
    return load_scenario(repo_root / 'config' / 'sim.yaml', repo_root, overrides).cars


def joint_to(robot: URDF, child: str):
    return next(j for j in robot.joints if j.child == child)


@pytest.fixture(params=[(m, p) for m in TOPIC_MAPS for p in PROFILES],
                ids=lambda mp: f'{mp[0]}-{mp[1]}')
def case(request) -> tuple[str, str]:
    """(topic map, profile)."""
    return request.param


@pytest.fixture
def described(case: tuple[str, str], repo_root: Path) -> list[tuple[CarSpec, URDF, str]]:
    """Each car of a two-car scenario with its parsed and its raw URDF."""
    topic_map, profile = case
    result = []
    for car in cars(repo_root, topic_map, profile):
        urdf = robot_description(car)
        result.append((car, URDF.from_xml_string(urdf), urdf))
    return result


def test_every_sensor_frame_is_a_link_at_its_profile_mount(described) -> None:
    for car, robot, _ in described:
        links = {link.name for link in robot.links}
        mounted = [s for s in car.profile.sensors if s.mount is not None]
        assert mounted
        for sensor in mounted:
            frame = car.names.sensor_frames[sensor.name]
            assert frame in links
            joint = joint_to(robot, frame)
            assert joint.type == 'fixed' and joint.parent == car.names.base_frame
            m = sensor.mount
            assert joint.origin.xyz == pytest.approx([m.x, m.y, m.z], abs=1e-12)
            assert joint.origin.rpy == pytest.approx([m.roll, m.pitch, m.yaw], abs=1e-12)


def test_links_carry_the_frame_prefix_of_their_car(case, described) -> None:
    seen: set[str] = set()
    for car, robot, _ in described:
        prefix = frame_prefix(car.names.base_frame)
        sensor_frames = set(car.names.sensor_frames.values())
        assert robot.name == car.name
        assert robot.get_root() == car.names.base_frame
        names = {link.name for link in robot.links}
        assert names >= {f'{prefix}chassis', *(f'{prefix}{w}' for w in WHEELS)}
        assert all(n.startswith(prefix) for n in names - sensor_frames)
        assert not names & seen, 'two cars share a link name, so TF cannot tell them apart'
        seen |= names
    ego, rival = (car for car, _, _ in described)
    assert frame_prefix(ego.names.base_frame) == EGO_PREFIX[case[0]]
    assert frame_prefix(rival.names.base_frame) == 'rival/'


def test_wheels_and_chassis_are_sized_from_the_profile(described) -> None:
    for car, robot, _ in described:
        parameters = yaml.safe_load(Path(car.profile.source).read_text())['CarParameters']
        body, radius = parameters['body'], parameters['tyre']['wheel_radius']
        prefix = frame_prefix(car.names.base_frame)
        origin = {w: joint_to(robot, f'{prefix}{w}').origin.xyz for w in WHEELS}
        # base_link is the centre of gravity of the st model.
        assert origin['front_left_wheel'][0] == pytest.approx(body['cog_to_front_axle'])
        assert origin['rear_right_wheel'][0] == pytest.approx(-body['cog_to_rear_axle'])
        for wheel in WHEELS:
            x, y, z = origin[wheel]
            assert z == pytest.approx(radius)
            assert (y > 0) == ('left' in wheel)
            link = robot.link_map[f'{prefix}{wheel}']
            assert link.visual.geometry.radius == pytest.approx(radius)
            assert abs(y) + link.visual.geometry.length / 2 == \
                pytest.approx(car.profile.footprint.width / 2)
        chassis = robot.link_map[f'{prefix}chassis'].visual.geometry
        length, width, _ = chassis.size
        assert length == pytest.approx(car.profile.footprint.length)
        assert width < car.profile.footprint.width
        # Up to the height other cars' sensors see.
        top = joint_to(robot, f'{prefix}chassis').origin.xyz[2] + chassis.size[2] / 2
        assert top == pytest.approx(car.profile.footprint.height)


def test_the_wheels_cameras_draw_are_the_descriptions(described) -> None:
    """``description.wheels`` (what the camera's car model is built from) reads the same
    axles, radius and width as the URDF's wheels."""
    for car, robot, _ in described:
        prefix = frame_prefix(car.names.base_frame)
        wheels = description_wheels(car)
        assert joint_to(robot, f'{prefix}rear_left_wheel').origin.xyz[0] == \
            pytest.approx(wheels.rear_x)
        assert joint_to(robot, f'{prefix}front_right_wheel').origin.xyz[0] == \
            pytest.approx(wheels.front_x)
        link = robot.link_map[f'{prefix}front_left_wheel'].visual.geometry
        assert (link.radius, link.length) == pytest.approx((wheels.radius, wheels.width))


def test_kinematic_model_puts_base_link_on_the_rear_axle(repo_root: Path, tmp_path: Path) -> None:
    data = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    data['model'] = 'ks'
    profile = tmp_path / 'ks_car.yaml'
    profile.write_text(yaml.safe_dump(data))
    car = cars(repo_root, 'f1tenth_gym', profile)[0]
    robot = URDF.from_xml_string(robot_description(car))
    body = data['CarParameters']['body']
    wheelbase = body['cog_to_front_axle'] + body['cog_to_rear_axle']
    assert joint_to(robot, 'ego_racecar/rear_left_wheel').origin.xyz[0] == 0.0
    assert joint_to(robot, 'ego_racecar/front_left_wheel').origin.xyz[0] == \
        pytest.approx(wheelbase)


def test_description_topic_is_in_the_namespace_of_the_frame_prefix(repo_root: Path) -> None:
    gym_ego, gym_rival = cars(repo_root, 'f1tenth_gym', 'f1tenth')
    car_ego, car_rival = cars(repo_root, 'f1tenth_car', 'f1tenth')
    assert description_topic(gym_ego) == '/ego_racecar/robot_description'
    assert description_topic(gym_rival) == '/rival/robot_description'
    assert description_topic(car_ego) == '/robot_description'
    assert description_topic(car_rival) == '/rival/robot_description'


def test_fixed_joints_read_the_urdf_as_urdf_parser_does(described) -> None:
    for _, robot, urdf in described:
        ours = {j.child: j for j in fixed_joints(urdf)}
        assert set(ours) == {j.child for j in robot.joints}
        for joint in robot.joints:
            mine = ours[joint.child]
            assert (mine.name, mine.parent) == (joint.name, joint.parent)
            assert list(mine.xyz) == pytest.approx(joint.origin.xyz)
            assert list(mine.rpy) == pytest.approx(joint.origin.rpy)


def test_description_survives_launch_parameter_parsing(described) -> None:
    """ros2 launch reads string parameters as YAML: the URDF must come out as the same text
    up to whitespace, as robot_state_publisher gets it."""
    for _, robot, urdf in described:
        parsed = yaml.safe_load(urdf)
        assert isinstance(parsed, str)
        again = URDF.from_xml_string(parsed)
        assert [link.name for link in again.links] == [link.name for link in robot.links]
        assert '<!--' not in urdf


@pytest.mark.parametrize('profile', PROFILES)
def test_standalone_xacro_file_draws_the_same_car(repo_root: Path, profile: str) -> None:
    """``xacro <profile>.urdf.xacro`` (f1tenth_gym names) gives what the simulator publishes."""
    import xacro
    from ament_index_python.packages import get_package_share_directory

    path = Path(get_package_share_directory('arsim_description'), 'urdf', f'{profile}.urdf.xacro')
    standalone = URDF.from_xml_string(xacro.process_file(str(path)).toxml())
    generated = URDF.from_xml_string(robot_description(cars(repo_root, 'f1tenth_gym',
                                                            profile)[0]))
    assert standalone.name == profile

    def shape(robot: URDF) -> dict[str, tuple]:
        return {j.child: (j.parent, *j.origin.xyz, *j.origin.rpy) for j in robot.joints}
    assert shape(standalone).keys() == shape(generated).keys()
    for child, values in shape(standalone).items():
        assert values[0] == shape(generated)[child][0]
        assert values[1:] == pytest.approx(shape(generated)[child][1:], abs=1e-9)


def test_missing_xacro_file_names_the_file(repo_root: Path, tmp_path: Path) -> None:
    car = cars(repo_root, 'f1tenth_gym', 'f1tenth')[0]
    expected = "missing.xacro: cannot build the description of car 'ego'"
    with pytest.raises(ConfigError, match=expected):
        robot_description(car, tmp_path / 'missing.xacro')


def test_the_chassis_top_is_the_profiles_footprint_height(repo_root: Path,
                                                         tmp_path: Path) -> None:
    data = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    data['Footprint']['height'] = 0.31
    profile = tmp_path / 'tall.yaml'
    profile.write_text(yaml.safe_dump(data))
    car = cars(repo_root, 'f1tenth_gym', profile)[0]
    robot = URDF.from_xml_string(robot_description(car))
    chassis = robot.link_map['ego_racecar/chassis'].visual.geometry
    top = joint_to(robot, 'ego_racecar/chassis').origin.xyz[2] + chassis.size[2] / 2
    assert top == pytest.approx(0.31)


def test_sensor_without_a_position_has_no_frame(repo_root: Path, tmp_path: Path) -> None:
    """Sensors computed from the car's state (ground truth, wheel odometry) are not mounted."""
    import xacro

    data = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    data['Sensors']['truth'] = {'type': 'ground_truth', 'rate_hz': 40.0}
    data['Sensors']['front_camera'] = {'type': 'camera', 'position': [0.2, 0.0, 0.15]}
    profile = tmp_path / 'more_sensors.yaml'
    profile.write_text(yaml.safe_dump(data))
    doc = xacro.process_file(str(car_xacro()), mappings={'profile': str(profile)})
    robot = URDF.from_xml_string(doc.toxml())
    links = {link.name for link in robot.links}
    assert {'ego_racecar/scan', 'ego_racecar/front_camera'} <= links
    assert 'ego_racecar/truth' not in links
    camera = robot.link_map['ego_racecar/front_camera'].visual.geometry
    assert hasattr(camera, 'size'), 'a sensor other than a LiDAR is drawn as a cube'
    assert joint_to(robot, 'ego_racecar/front_camera').origin.xyz == pytest.approx([0.2, 0, 0.15])


def test_sensor_rotation_reaches_the_joint(repo_root: Path, tmp_path: Path) -> None:
    data = yaml.safe_load((repo_root / 'config' / 'cars' / 'f1tenth.yaml').read_text())
    data['Sensors']['scan']['rotation'] = [0.0, 0.1, math.pi / 2]
    profile = tmp_path / 'tilted.yaml'
    profile.write_text(yaml.safe_dump(data))
    car = cars(repo_root, 'f1tenth_car', profile)[0]
    joint = joint_to(URDF.from_xml_string(robot_description(car)), 'laser')
    assert joint.origin.rpy == pytest.approx([0.0, 0.1, math.pi / 2])
