"""Message type names come from the ROS graph, so from any peer on the domain: only
``pkg/msg/Type`` names of interface packages the ament index lists are looked up, and a refused
name imports nothing and reads nothing."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arsim_bridge.msg_definitions import definition, message_class, message_text

TRAP = 'arsimtrap'  # a module that must never be imported: importing it writes a file


@pytest.fixture
def trap(tmp_path: Path) -> Iterator[Path]:
    """An importable package ``arsimtrap`` (with ``arsimtrap.msg``) on sys.path; the path of
    the file its import would create."""
    marker = tmp_path / 'imported'
    package = tmp_path / 'lib' / TRAP
    (package / 'msg').mkdir(parents=True)
    code = f'open({str(marker)!r}, "w").close()\nThing = 1\n'
    (package / '__init__.py').write_text(code)
    (package / 'msg' / '__init__.py').write_text(code)
    (package / 'x').mkdir()
    (package / 'x' / '__init__.py').write_text(code)
    sys.path.insert(0, str(tmp_path / 'lib'))
    try:
        yield marker
    finally:
        sys.path.remove(str(tmp_path / 'lib'))
        for name in [n for n in sys.modules if n == TRAP or n.startswith(f'{TRAP}.')]:
            del sys.modules[name]


REFUSED = [
    f'{TRAP}/msg/Thing',  # well formed, but no package the ament index lists
    f'{TRAP}/x/Thing',
    'os/path/join',
    'arsim_core/backend/server',
    'arsim_core/msg/Server',  # listed in the index, but no interface package
    '../x/msg/Y',
    'std_msgs/msg/../../X',
    'sensor_msgs/msg/NoSuchType',  # an interface package without that type
    'sensor_msgs/msg/laserScan',
    'Sensor_msgs/msg/LaserScan',
    'sensor_msgs/srv/SetCameraInfo',
    'sensor_msgs/msg/LaserScan/x',
    'sensor_msgs/LaserScan',  # a field's short form is no topic type
    'sensor_msgs/msg/',
    '',
    'sensor_msgs/msg/Laser Scan',
    'sensor_msgs/msg/LaserScan\n',
    'a' * 300 + '/msg/X',
]


@pytest.mark.parametrize('type_name', REFUSED)
def test_a_refused_type_name_imports_nothing(trap: Path, type_name: str) -> None:
    with pytest.raises(ValueError, match='message type'):
        message_class(type_name)
    assert TRAP not in sys.modules
    assert not trap.exists()


@pytest.mark.parametrize('type_name', [
    f'{TRAP}/msg/Thing', f'{TRAP}/Thing', '../x/msg/Y', 'std_msgs/msg/../../X', '../../etc/passwd',
    'std_msgs/../../../../etc/passwd', 'sensor_msgs/msg/NoSuchType', 'arsim_core/Thing'])
def test_a_refused_type_name_reads_nothing(type_name: str) -> None:
    read: list[tuple[str, str]] = []

    def reader(package: str, name: str) -> str:
        read.append((package, name))
        return 'int32 x\n'

    with pytest.raises(ValueError, match='message type'):
        definition(type_name, reader)
    with pytest.raises(ValueError, match='message type'):
        message_text(type_name)
    assert read == []


@pytest.mark.parametrize('field_type', ['evilpkg/Thing', 'std_msgs/NoSuchType', 'os/path/join',
                                        'std_msgs/srv/Header', 'lowercase', 'Bad_Name'])
def test_a_type_a_definition_uses_passes_the_same_checks(field_type: str) -> None:
    read: list[tuple[str, str]] = []

    def reader(package: str, name: str) -> str:
        read.append((package, name))
        return f'int32 x\n{field_type} nested\n'

    with pytest.raises(ValueError, match='message type'):
        definition('std_msgs/msg/Header', reader)
    assert read == [('std_msgs', 'Header')]


def test_installed_message_types_are_still_described() -> None:
    from sensor_msgs.msg import LaserScan

    assert message_class('sensor_msgs/msg/LaserScan') is LaserScan
    text = definition('sensor_msgs/msg/LaserScan')
    assert text.startswith(message_text('sensor_msgs/msg/LaserScan').rstrip('\n'))
    assert 'MSG: std_msgs/Header' in text and 'MSG: builtin_interfaces/Time' in text
    assert 'float32[] ranges' in text
    assert message_class('arsim_msgs/msg/RecordingStatus').__name__ == 'RecordingStatus'
    assert 'held_until' in definition('arsim_msgs/msg/RecordingStatus')
