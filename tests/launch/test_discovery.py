"""ROS discovery stays on this machine unless the scenario asks for the network or the user
set it: the environment of every process the launcher starts says so."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import yaml

from arsim_core.config.scenario import load_scenario
from arsim_core.errors import ConfigError
from arsim_launch.discovery import LOCALHOST_ONLY, RANGE, discovery_environment
from arsim_launch.node_spec import NodeSpec
from arsim_launch.runner import ProcessGroup

DISCOVERY_VARIABLES = (RANGE, LOCALHOST_ONLY, 'ROS_STATIC_PEERS')


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No discovery variable of the caller's own."""
    for name in DISCOVERY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def settings_with(tmp_path: Path, repo_root: Path, **changes) -> Path:
    data = yaml.safe_load((repo_root / 'config' / 'sim.yaml').read_text())
    data.update(changes)
    path = tmp_path / 'sim.yaml'
    path.write_text(yaml.safe_dump(data))
    return path


def child_environment_of(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    """The environment a process the runner starts really has."""
    out = tmp_path / 'env.txt'
    program = ('import os, sys; open(sys.argv[1], "w").write('
               '"\\n".join(f"{k}={v}" for k, v in os.environ.items()))')
    spec = NodeSpec('', 'env', 'env', ros=False, command=(sys.executable, '-c', program, str(out)))
    group = ProcessGroup([spec], env=env)
    group.start()
    try:
        deadline = time.monotonic() + 60
        while group.children[0][1].poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        group.stop()
    return dict(line.split('=', 1) for line in out.read_text().splitlines() if '=' in line)


def test_a_scenario_keeps_discovery_on_this_machine_by_default(
        tmp_path: Path, repo_root: Path, clean_environment: pytest.MonkeyPatch) -> None:
    scenario = load_scenario(repo_root / 'config' / 'sim.yaml', repo_root)
    assert scenario.ros_discovery == 'localhost'
    env, line = discovery_environment(scenario.ros_discovery, {})
    assert env[RANGE] == 'LOCALHOST'
    assert 'stays on this machine' in line
    child = child_environment_of(tmp_path, env)
    assert child[RANGE] == 'LOCALHOST'


@pytest.mark.parametrize(('distro', 'legacy'), [('humble', True), ('iron', True),
                                                ('jazzy', False), ('kilted', False)])
def test_the_old_variable_only_for_releases_that_need_it(distro: str, legacy: bool) -> None:
    """Humble reads only ROS_LOCALHOST_ONLY; Jazzy warns about it at every node's start."""
    env, _ = discovery_environment('localhost', {'ROS_DISTRO': distro})
    assert env[RANGE] == 'LOCALHOST'
    assert (env.get(LOCALHOST_ONLY) == '1') is legacy
    assert legacy or LOCALHOST_ONLY not in env


def test_a_scenario_may_ask_for_the_network(tmp_path: Path, repo_root: Path,
                                            clean_environment: pytest.MonkeyPatch) -> None:
    scenario = load_scenario(settings_with(tmp_path, repo_root, ros={'discovery': 'network'}),
                             repo_root)
    assert scenario.ros_discovery == 'network'
    env, line = discovery_environment(scenario.ros_discovery, {})
    assert env == {}
    assert 'network' in line
    child = child_environment_of(tmp_path, env)
    assert RANGE not in child and LOCALHOST_ONLY not in child


@pytest.mark.parametrize(('name', 'value'), [(RANGE, 'SUBNET'), (LOCALHOST_ONLY, '0'),
                                             ('ROS_STATIC_PEERS', '192.168.1.7')])
def test_a_users_own_choice_is_kept(tmp_path: Path, clean_environment: pytest.MonkeyPatch,
                                    name: str, value: str) -> None:
    clean_environment.setenv(name, value)
    env, line = discovery_environment('localhost', os.environ)
    assert env == {}
    assert f'{name}={value}' in line
    child = child_environment_of(tmp_path, env)
    assert child[name] == value
    assert all(child.get(other) is None for other in DISCOVERY_VARIABLES if other != name)


@pytest.mark.parametrize(('ros', 'message'), [
    ({'discovery': 'lan'}, r"ros\.discovery: expected one of \['localhost', 'network'\]"),
    ({'discovery': True}, r'ros\.discovery: expected one of'),
    ({'range': 'localhost'}, r'ros.*range'),
    ('network', r'ros'),
])
def test_the_discovery_key_is_checked(tmp_path: Path, repo_root: Path, ros: object,
                                      message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_scenario(settings_with(tmp_path, repo_root, ros=ros), repo_root)

