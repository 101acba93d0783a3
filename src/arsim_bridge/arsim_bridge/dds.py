"""Fast DDS settings for the sensor republishers' large messages.

Fast DDS's default shared-memory segment is 0.5 MB, so a point cloud or an image of a few MB is
cut into 64 kB fragments; measured here, a subscriber then loses a third of the 3 MB messages
sent at 100 Hz. A participant with a 32 MB segment and shared memory allowed to carry whole
messages delivers every one (UDP stays available for subscribers on other machines). This
only concerns the publishing side; subscribers keep their own settings.

The segment is resident memory (32 MB of a run's PSS, written round by round), so a run whose
sensors publish only small messages (2D scans, IMU, odometry) keeps Fast DDS's defaults: its
launcher sets ``LARGE_MESSAGES_ENV`` to 0 (``large_sensor_messages``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from arsim_core.config.sensors import CameraSpec, Lidar3DSpec

SEGMENT_BYTES = 32 * 1024 * 1024
LARGE_MESSAGES_ENV = 'ARSIM_DDS_LARGE_MESSAGES'  # 0: no sensor here publishes large messages
LARGE_SENSOR_KINDS = frozenset({CameraSpec.kind, Lidar3DSpec.kind})  # images, point clouds

PROFILE = f'''<?xml version="1.0" encoding="UTF-8"?>
<profiles xmlns="http://www.eprosima.com">
  <transport_descriptors>
    <transport_descriptor>
      <transport_id>arsim_shm</transport_id>
      <type>SHM</type>
      <segment_size>{SEGMENT_BYTES}</segment_size>
      <maxMessageSize>{SEGMENT_BYTES // 2}</maxMessageSize>
    </transport_descriptor>
    <transport_descriptor>
      <transport_id>arsim_udp</transport_id>
      <type>UDPv4</type>
    </transport_descriptor>
  </transport_descriptors>
  <participant profile_name="arsim_sensors" is_default_profile="true">
    <rtps>
      <userTransports>
        <transport_id>arsim_shm</transport_id>
        <transport_id>arsim_udp</transport_id>
      </userTransports>
      <useBuiltinTransports>false</useBuiltinTransports>
    </rtps>
  </participant>
</profiles>
'''


def prefer_large_shared_memory() -> None:
    """Point this process's Fast DDS at the profile above, unless the user chose a profile or
    another RMW, or the launcher said no sensor publishes large messages. Must run before
    rclpy.init."""
    rmw = os.environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
    if rmw != 'rmw_fastrtps_cpp' or os.environ.get('FASTDDS_DEFAULT_PROFILES_FILE') \
            or os.environ.get('FASTRTPS_DEFAULT_PROFILES_FILE') \
            or os.environ.get(LARGE_MESSAGES_ENV) == '0':
        return
    path = Path(tempfile.gettempdir()) / f'arsim-fastdds-{os.getuid()}-{SEGMENT_BYTES}.xml'
    try:
        if not path.is_file() or path.read_text() != PROFILE:
            scratch = path.with_suffix(f'.{os.getpid()}.tmp')
            scratch.write_text(PROFILE)
            scratch.replace(path)
    except OSError:
        return
    os.environ['FASTDDS_DEFAULT_PROFILES_FILE'] = str(path)


def large_sensor_messages(sensor_kinds: Iterable[str]) -> dict[str, str]:
    """The environment for a run's node processes whose cars carry sensors of
    ``sensor_kinds``: without a camera or 3D LiDAR, Fast DDS keeps its default transports."""
    return {} if LARGE_SENSOR_KINDS & set(sensor_kinds) else {LARGE_MESSAGES_ENV: '0'}
