"""Which peers the simulation's ROS processes discover: this machine's only, unless the scenario
asks for the network (``ros.discovery: network``) or the user chose for themselves.

A simulation needs nothing from other machines, and DDS discovery on the network would let any
host on it publish drive commands to the cars or read every sensor. ROS 2 Jazzy and later read
``ROS_AUTOMATIC_DISCOVERY_RANGE``; Humble and Iron only ``ROS_LOCALHOST_ONLY``, which Jazzy
still honours with a deprecation warning at every node's start and later releases ignore. So
the old variable is set only where the ROS release predates Jazzy, or cannot be told.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata

RANGE = 'ROS_AUTOMATIC_DISCOVERY_RANGE'
LOCALHOST_ONLY = 'ROS_LOCALHOST_ONLY'
USER_CHOICES = (RANGE, LOCALHOST_ONLY, 'ROS_STATIC_PEERS')
BEFORE_RANGE = ('humble', 'iron')  # ROS releases that know only ROS_LOCALHOST_ONLY
FIRST_RCLPY_WITH_RANGE = 7  # rclpy's major version in Jazzy


def discovery_environment(discovery: str, environ: Mapping[str, str]
                          ) -> tuple[dict[str, str], str]:
    """The variables to add to the processes' environment ``environ`` for the scenario's
    ``discovery`` (``localhost`` or ``network``), and one line saying what was chosen."""
    chosen = {name: environ[name] for name in USER_CHOICES if environ.get(name)}
    if chosen:
        given = ', '.join(f'{name}={value}' for name, value in chosen.items())
        return {}, f'ROS discovery as set in the environment ({given})'
    if discovery == 'network':
        return {}, ('ROS discovery reaches the network (ros.discovery: network): other hosts '
                    'can see and drive the simulation')
    added = {RANGE: 'LOCALHOST'}
    if _predates_range(environ):
        added[LOCALHOST_ONLY] = '1'
    return added, ('ROS discovery stays on this machine (ros.discovery: network in the '
                   'scenario reaches other hosts)')


def _predates_range(environ: Mapping[str, str]) -> bool:
    """Whether the ROS release here may not know ROS_AUTOMATIC_DISCOVERY_RANGE: named by
    ROS_DISTRO, else told by rclpy's version (a ROS installed from PyPI sets no ROS_DISTRO);
    True if neither can tell."""
    distro = environ.get('ROS_DISTRO', '').strip().lower()
    if distro:
        return distro in BEFORE_RANGE
    try:
        major = int(metadata.version('rclpy').split('.')[0])
    except (metadata.PackageNotFoundError, ValueError):
        return True
    return major < FIRST_RCLPY_WITH_RANGE
