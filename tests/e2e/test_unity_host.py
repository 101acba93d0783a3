"""The C# console host as the simulation's backend: an F1TENTH stack laps on it, whether the
host was started by hand (``backend:=tcp://...``) or by the launcher (``backend.executable``)."""

from __future__ import annotations

from pathlib import Path

from csharp_host import built_host, running_host
from laps import LAP_SIMULATION, assert_follow_the_gap_laps
from sensor_msgs.msg import LaserScan
from simharness import Probe, free_port

READY = "backend 'arsim-csharp-host' ready"


def test_follow_the_gap_laps_on_a_host_started_by_hand(simulation, tmp_path: Path) -> None:
    with running_host(tmp_path / 'host') as (address, host):
        sim = simulation(settings=LAP_SIMULATION, arguments=(f'backend:={address}',))
        assert_follow_the_gap_laps(sim)
        assert READY in sim.log, sim.log
        assert host.process.poll() is None, host.log


def test_the_launcher_starts_and_stops_the_host_of_backend_executable(simulation) -> None:
    sim = simulation(settings={'backend': {
        'kind': 'unity', 'executable': str(built_host()),
        'address': f'tcp://127.0.0.1:{free_port()}'}})
    probe = Probe(sim.domain_id)
    scans: list[LaserScan] = []
    try:
        probe.node.create_subscription(LaserScan, '/scan', scans.append, 10)
        assert probe.spin_until(lambda: len(scans) >= 5, 60.0), sim.log
        finite = [r for r in scans[-1].ranges if 0.0 < r < float('inf')]
        assert len(finite) > len(scans[-1].ranges) // 2, 'the host sees no walls'
    finally:
        probe.close()
    assert READY in sim.log
    assert sim.stop() == 0, sim.log
    assert not sim.session_processes(), 'the host outlived the simulation'
