"""Endpoints in settings: syntax, loopback unless remote access is allowed, and binds that fail
with a message naming the key instead of a ZMQError."""

from __future__ import annotations

from pathlib import Path

import pytest
import zmq
from simharness import free_port

from arsim_core import endpoints
from arsim_core.errors import ArsimError


@pytest.mark.parametrize('address', ['tcp://127.0.0.1:5555', 'tcp://127.3.2.1:1',
                                     'tcp://localhost:65535', 'ipc://@arsim-abstract'])
def test_loopback_and_ipc_endpoints_may_be_bound(address: str) -> None:
    assert endpoints.problem(address, binds=True, allow_remote=False) is None


def test_an_ipc_endpoint_needs_an_existing_folder_to_be_bound(tmp_path: Path) -> None:
    assert endpoints.problem(f'ipc://{tmp_path}/x', binds=True, allow_remote=False) is None
    trouble = endpoints.problem(f'ipc://{tmp_path}/missing/x', binds=True, allow_remote=False)
    assert trouble is not None and 'does not exist' in trouble
    assert endpoints.problem(f'ipc://{tmp_path}/missing/x', binds=False,
                             allow_remote=False) is None


@pytest.mark.parametrize('address', ['tcp://0.0.0.0:5555', 'tcp://*:5555', 'tcp://eth0:5555',
                                     'tcp://192.168.1.20:5555', 'tcp://127.1:5555'])
def test_other_interfaces_only_when_remote_access_is_allowed(address: str) -> None:
    trouble = endpoints.problem(address, binds=True, allow_remote=False)
    assert trouble is not None and 'allow_remote: true' in trouble and address in trouble
    assert endpoints.problem(address, binds=True, allow_remote=True) is None
    assert endpoints.problem(address, binds=False, allow_remote=False) is None  # connects


@pytest.mark.parametrize(('address', 'expected'), [
    ('tcp://127.0.0.1:99999', 'port between 1 and 65535'),  # ZeroMQ binds a random port
    ('tcp://127.0.0.1:0', 'port between 1 and 65535'),
    ('tcp://127.0.0.1:*', 'port between 1 and 65535'),
    ('tcp://127.0.0.1:55a5', 'port between 1 and 65535'),
    ('tcp://127.0.0.1', 'no port'),
    ('tcp://:5555', 'no port'),
    ('tcp//127.0.0.1:5555', 'expected tcp://'),
    ('tpc://127.0.0.1:5555', 'expected tcp://'),
    ('inproc://backend', 'expected tcp://'),
    ('127.0.0.1:5555', 'expected tcp://'),
    ('tcp://[::1]:5555', 'IPv6'),
    ('tcp://127.0.0.1;127.0.0.2:5555', "host '127.0.0.1;127.0.0.2'"),
    ('ipc://', 'no path'),
    ('ipc://' + '/x' * 60, 'at most 107 bytes'),
    (5555, 'expected a string'),
])
def test_malformed_endpoints_say_what_was_expected(address: object, expected: str) -> None:
    for binds in (True, False):
        trouble = endpoints.problem(address, binds=binds, allow_remote=True)
        assert trouble is not None and expected in trouble


def test_bind_names_the_key_instead_of_raising_zmq_errors() -> None:
    context = zmq.Context.instance()
    address = f'tcp://127.0.0.1:{free_port()}'
    first, second = context.socket(zmq.PUB), context.socket(zmq.PUB)
    try:
        endpoints.bind(first, address, 'backend.frames_address')
        with pytest.raises(ArsimError, match=r'backend.frames_address: cannot bind .*in use.*'
                                             r'another simulation running'):
            endpoints.bind(second, address, 'backend.frames_address')
        with pytest.raises(ArsimError, match='backend.frames_address: expected tcp://127'):
            endpoints.bind(second, 'tcp://0.0.0.0:5556', 'backend.frames_address')
    finally:
        first.close(0)
        second.close(0)
