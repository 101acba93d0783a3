"""Addresses left at ``auto`` become private endpoints of the run, the same for every node."""

from __future__ import annotations

import stat
from pathlib import Path

import yaml

from arsim_core.config.scenario import TCP_BACKEND_ADDRESS, load_scenario
from arsim_launch.sockets import load_run


def test_the_embedded_backend_and_the_fan_out_get_private_unix_sockets(repo_root: Path) -> None:
    settings = repo_root / 'config' / 'sim.yaml'
    scenario, overrides = load_run(settings, repo_root, {})
    backend = scenario.backend
    assert backend.address.startswith('ipc://') and backend.frames_address.startswith('ipc://')
    folder = Path(backend.address.removeprefix('ipc://')).parent
    assert folder == Path(backend.frames_address.removeprefix('ipc://')).parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    # What the nodes read (settings file + overrides) names the very same sockets.
    again = load_scenario(settings, repo_root, yaml.safe_load(yaml.safe_dump(overrides)))
    assert again.backend == backend
    assert load_run(settings, repo_root, {})[0].backend.address != backend.address  # per run


def test_unity_keeps_its_tcp_default_and_set_addresses_stay(repo_root: Path) -> None:
    settings = repo_root / 'config' / 'sim.yaml'
    unity = load_run(settings, repo_root, {'backend': {'kind': 'unity'}})[0].backend
    assert unity.address == TCP_BACKEND_ADDRESS and unity.frames_address.startswith('ipc://')
    chosen = {'kind': 'external', 'address': 'tcp://127.0.0.1:7000',
              'frames_address': 'tcp://127.0.0.1:7001'}
    scenario, overrides = load_run(settings, repo_root, {'backend': chosen})
    assert (scenario.backend.address, scenario.backend.frames_address) == \
        ('tcp://127.0.0.1:7000', 'tcp://127.0.0.1:7001')
    assert overrides == {'backend': chosen}
