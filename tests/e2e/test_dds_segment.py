"""Fast DDS's 32 MB shared-memory segment (``arsim_bridge.dds``) is resident memory, so a run
holds it only where a car's sensors publish images or point clouds."""

from __future__ import annotations

import pytest

from arsim_bridge.dds import SEGMENT_BYTES


@pytest.mark.parametrize(('profile', 'large'), [('f1tenth', False), ('calibration_car', True)])
def test_the_large_segment_only_where_a_sensor_needs_it(simulation, profile: str,
                                                        large: bool) -> None:
    sim = simulation(settings={'cars': [{'name': 'ego', 'profile': profile}]})
    assert sim.wait_for_log('ready; stepping', 120.0), sim.log
    sizes = [segment.stat().st_size for segment in sim.dds_segments()]
    assert sizes, sim.log
    assert (max(sizes) >= SEGMENT_BYTES) == large, (sizes, sim.log)
