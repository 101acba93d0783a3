"""The sensor node's wheelbase for wheel odometry: the profile's, or none at all (then the
republisher that needs one says so), never a made-up 1 m."""

from __future__ import annotations

from pathlib import Path

import pytest

from arsim_bridge.sensor_node import _wheelbase
from arsim_core.config.profile import load_profile


def test_the_wheelbase_is_the_profiles_axle_distances(repo_root: Path) -> None:
    profile = load_profile(repo_root / 'config' / 'cars' / 'f1tenth.yaml')
    body = profile.raw['CarParameters']['body']
    assert _wheelbase(profile) == pytest.approx(body['cog_to_front_axle']
                                                + body['cog_to_rear_axle'])


def test_a_profile_without_axle_distances_gives_no_wheelbase(repo_root: Path) -> None:
    profile = load_profile(repo_root / 'config' / 'cars' / 'f1tenth.yaml')
    del profile.raw['CarParameters']['body']['cog_to_front_axle']
    assert _wheelbase(profile) is None
