"""A recorded drive as aligned arrays: the commands the car was given and what it did.

Which topics serve (the real F1TENTH car's, or any of the right type):

- commands: ``/drive`` (``ackermann_msgs/AckermannDriveStamped``), or the VESC's
  ``/commands/motor/speed`` and ``/commands/servo/position`` (``std_msgs/Float64``, with
  ``/commands/motor/brake`` if recorded) for a profile with a ``Vesc`` section;
- speed: ``/odom`` (``nav_msgs/Odometry``), or ``/sensors/core``
  (``vesc_msgs/VescStateStamped``), or a ground-truth odometry;
- yaw rate and lateral acceleration: ``/sensors/imu/raw`` or any ``sensor_msgs/Imu`` (without
  one, the odometry's yaw rate, and no lateral acceleration);
- pose: a ``*ground_truth*`` odometry if recorded, else the odometry's, else dead reckoning.

Commands count from their receive times (when the car's controller got them); measurements
(speed, IMU, pose) from their header stamps, the times they were taken, where every stamp of
the topic lies within a second before its receive time, else from their receive times too (a
sensor's data arrives after it was taken: a fit on receive times would see that delay as the
car's). The samples are those of the speed topic, and the IMU is interpolated onto them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray
from rosbags.typesys import get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from arsim_core.dynamics.vesc import VescParameters
from arsim_core.fit import FitError
from arsim_core.fit.bagfile import DAMAGE, BagContents, Topic, read_bag
from arsim_core.recording.bag import distro_store

ACKERMANN: Final = 'ackermann_msgs/msg/AckermannDriveStamped'
ODOMETRY: Final = 'nav_msgs/msg/Odometry'
IMU: Final = 'sensor_msgs/msg/Imu'
FLOAT64: Final = 'std_msgs/msg/Float64'
VESC_STATE: Final = 'vesc_msgs/msg/VescStateStamped'
VESC_COMMANDS: Final = {'speed': 'commands/motor/speed', 'servo': 'commands/servo/position',
                        'brake': 'commands/motor/brake'}
TYPES: Final = (ACKERMANN, ODOMETRY, IMU, FLOAT64, VESC_STATE)
#: Commands of one VESC channel, in ``Commands.vesc``.
SPEED, SERVO, BRAKE = 0, 1, 2
# ackermann_msgs is no standard type of rosbags' store: its definition, for bags without one.
_ACKERMANN_DEFINITIONS: Final = {
    'ackermann_msgs/msg/AckermannDrive':
        'float32 steering_angle\nfloat32 steering_angle_velocity\nfloat32 speed\n'
        'float32 acceleration\nfloat32 jerk\n',
    ACKERMANN: 'std_msgs/Header header\nackermann_msgs/AckermannDrive drive\n',
}
MIN_SECONDS: Final = 1.0  # below this there is nothing to replay at all
#: The longest a measurement may be stamped before it was received for its stamp to count.
MAX_STAMP_LAG_NS: Final = 1_000_000_000


@dataclass(frozen=True)
class Commands:
    """What the car was told, at its receive times [s from the recording's start].

    ``ackermann``: rows of speed, steering angle, steering rate, acceleration and jerk limits;
    ``vesc``: rows of (channel ``SPEED``/``SERVO``/``BRAKE``, value) instead."""

    times: NDArray[np.float64]
    ackermann: NDArray[np.float64] | None = None
    vesc: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class Recording:
    """A drive, sampled at the speed topic's times ``t`` [s from ``start_ns``]."""

    bag: str
    start_ns: int
    t: NDArray[np.float64]
    speed: NDArray[np.float64]  # [m/s]; from the VESC, with the starting profile's gain
    yaw_rate: NDArray[np.float64]  # [rad/s]
    lateral_acceleration: NDArray[np.float64] | None  # [m/s^2], the IMU's
    pose: NDArray[np.float64]  # (N, 3): x, y [m], yaw [rad], unwrapped
    commands: Commands
    erpm: NDArray[np.float64] | None = None  # the VESC's forward ERPM, when it is the speed
    topics: dict[str, str] = field(default_factory=dict)  # role -> topic
    notes: tuple[str, ...] = ()  # damage, corrupt messages, sources replaced

    @property
    def period(self) -> float:
        """The median sample period [s]."""
        return float(np.median(np.diff(self.t)))

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])


def read_recording(bag: Path, vesc: VescParameters | None) -> Recording:
    """The drive of ``bag``; one FitError naming everything missing if it lacks topics."""
    contents = read_bag(bag, lambda name, msgtype: msgtype in TYPES)
    decoder = _Decoder(contents)
    chosen = _choose(bag, contents, vesc is not None, decoder)
    return _align(bag, contents, chosen, decoder, vesc)


# --- which topics serve -------------------------------------------------------------------------
def _by_type(contents: BagContents, msgtype: str, preferred: str,
             truth: bool | None = None) -> Topic | None:
    """The topic of ``msgtype`` named ``preferred``, else the one with most messages; with
    ``truth`` set, only ground-truth topics (or only others)."""
    found = [t for t in contents.topics.values() if t.msgtype == msgtype and t.messages
             and (truth is None or ('ground_truth' in t.name) == truth)]
    for topic in found:
        if topic.name == preferred:
            return topic
    return max(found, key=lambda t: len(t.messages), default=None)


def _vesc_topics(contents: BagContents) -> dict[str, Topic]:
    return {role: topic for role, suffix in VESC_COMMANDS.items()
            for topic in contents.topics.values()
            if topic.msgtype == FLOAT64 and topic.messages and topic.name.endswith(suffix)}


def _choose(bag: Path, contents: BagContents, has_vesc: bool,
            decoder: _Decoder) -> dict[str, Topic]:
    chosen: dict[str, Topic] = {}
    missing = []
    vesc = _vesc_topics(contents)
    drive = _by_type(contents, ACKERMANN, '/drive')
    if has_vesc and {'speed', 'servo'} <= vesc.keys():
        chosen.update({f'vesc_{role}': topic for role, topic in vesc.items()})
    elif drive is not None:
        chosen['drive'] = drive
    else:
        hint = '' if has_vesc or not vesc else ' (the VESC commands are there: give a ' \
                                                'profile with a Vesc section)'
        missing.append('drive commands: expected /drive (ackermann_msgs/AckermannDriveStamped) '
                       'or /commands/motor/speed and /commands/servo/position (std_msgs/Float64,'
                       f' for a profile with a Vesc section){hint}')
    speed = _by_type(contents, ODOMETRY, '/odom', truth=False)
    core = _by_type(contents, VESC_STATE, '/sensors/core') if has_vesc else None
    truth = _by_type(contents, ODOMETRY, '/ground_truth/odom', truth=True)
    source = speed or core or truth
    if source is None:
        missing.append('speed: expected /odom (nav_msgs/Odometry) or /sensors/core '
                       '(vesc_msgs/VescStateStamped, for a profile with a Vesc section)')
    else:
        chosen['speed'] = source
    imu = _by_type(contents, IMU, '/sensors/imu/raw')
    if imu is not None:
        chosen['imu'] = imu
    elif source is not None and source.msgtype == VESC_STATE and truth is None:
        missing.append('yaw rate: expected an IMU (sensor_msgs/Imu, e.g. /sensors/imu/raw) '
                       'beside /sensors/core')
    if truth is not None:
        chosen['pose'] = truth
    elif speed is not None:
        chosen['pose'] = speed
    undecodable = [t.name for t in chosen.values() if not decoder.knows(t)]
    if undecodable:
        missing.append(f'message definitions of {", ".join(sorted(undecodable))} (the bag '
                       f'holds none, and they are no standard type)')
    if missing:
        have = ', '.join(f'{t.name} ({t.msgtype.replace("/msg/", "/")}, {len(t.messages)})'
                         for t in sorted(contents.topics.values(), key=lambda t: t.name)[:40])
        msg = f'{bag}: cannot fit: missing {"; ".join(missing)}. The bag holds: {have or "nothing"}'
        raise FitError(msg)
    return chosen


# --- decoding -----------------------------------------------------------------------------------
class _Decoder:
    """Messages decoded with rosbags, from the bag's own definitions or the standard ones."""

    def __init__(self, contents: BagContents) -> None:
        self.store: Typestore = get_typestore(distro_store())
        self.corrupt: dict[str, int] = {}
        for topic in contents.topics.values():
            if topic.msgtype in TYPES and topic.msgtype not in self.store.fielddefs:
                self._register(topic)

    def _register(self, topic: Topic) -> None:
        texts = [] if topic.definition is None else [(topic.definition, topic.msgtype)]
        texts += list(_ACKERMANN_DEFINITIONS.items()) if topic.msgtype == ACKERMANN else []
        for text, name in [(t, n) for t, n in texts]:
            try:
                self.store.register(get_types_from_msg(text, name))
            except Exception:  # noqa: BLE001,S112 - a hostile definition: try the next one
                continue

    def knows(self, topic: Topic) -> bool:
        return topic.msgtype in self.store.fielddefs

    def messages(self, topic: Topic) -> list[tuple[int, Any]]:
        """Every message of ``topic`` that decodes, with its time; corrupt ones counted."""
        decoded = []
        for time_ns, data in topic.messages:
            try:
                decoded.append((time_ns, self.store.deserialize_cdr(data, topic.msgtype)))
            except (*DAMAGE, TypeError, AttributeError, AssertionError):
                self.corrupt[topic.name] = self.corrupt.get(topic.name, 0) + 1
        return decoded


def _taken(messages: list[tuple[int, Any]]) -> tuple[list[tuple[int, Any]], bool]:
    """Measurements at the times they were taken, their header stamps, where each is within
    ``MAX_STAMP_LAG_NS`` before its receive time (else at their receive times); and whether
    the stamps served."""
    stamps = [m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec for _, m in messages]
    if messages and all(0 <= received - stamp <= MAX_STAMP_LAG_NS
                        for (received, _), stamp in zip(messages, stamps, strict=True)):
        return [(stamp, m) for stamp, (_, m) in zip(stamps, messages, strict=True)], True
    return messages, False


# --- arrays -------------------------------------------------------------------------------------
def _yaw(q: Any) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def _series(rows: Sequence[tuple[int, Sequence[float]]]) -> tuple[NDArray[np.int64],
                                                                 NDArray[np.float64]]:
    """Times and values, non-finite rows and repeated times left out."""
    if not rows:
        return np.zeros(0, np.int64), np.zeros((0, 0))
    times = np.array([r[0] for r in rows], np.int64)
    values = np.array([r[1] for r in rows], np.float64)
    keep = np.all(np.isfinite(values), axis=1)
    times, values = times[keep], values[keep]
    times, first = np.unique(times, return_index=True)
    return times, values[first]


def _align(bag: Path, contents: BagContents, chosen: dict[str, Topic], decoder: _Decoder,
           vesc: VescParameters | None) -> Recording:
    speed_topic = chosen['speed']
    measured, stamped = _taken(decoder.messages(speed_topic))
    if speed_topic.msgtype == VESC_STATE:
        assert vesc is not None
        s_times, s_values = _series([(t, (m.state.speed * vesc.reported_speed_sign,))
                                     for t, m in measured])
        erpm_all = s_values[:, 0] if len(s_values) else np.zeros(0)
        speed_all = (erpm_all - vesc.speed_to_erpm_offset) / vesc.speed_to_erpm_gain
        yaw_all = None
    else:
        s_times, s_values = _series([(t, (m.twist.twist.linear.x, m.twist.twist.angular.z))
                                     for t, m in measured])
        speed_all = s_values[:, 0] if len(s_values) else np.zeros(0)
        yaw_all = s_values[:, 1] if len(s_values) else np.zeros(0)
        erpm_all = None
    commands_t, ackermann, vesc_rows = _commands(chosen, decoder)
    imu_t = np.zeros(0, np.int64)
    imu_values = np.zeros((0, 2))
    if 'imu' in chosen:
        imu, imu_stamped = _taken(decoder.messages(chosen['imu']))
        stamped = stamped and imu_stamped
        imu_t, imu_values = _series([(t, (m.angular_velocity.z, m.linear_acceleration.y))
                                     for t, m in imu])
    # the samples where every source has data, from the first command on
    starts = [s_times[0] if len(s_times) else 0, commands_t[0] if len(commands_t) else 0]
    ends = [s_times[-1] if len(s_times) else 0]
    if len(imu_t):
        starts.append(imu_t[0])
        ends.append(imu_t[-1])
    keep = (s_times >= max(starts)) & (s_times <= min(ends))
    if keep.sum() < 2 or (s_times[keep][-1] - s_times[keep][0]) * 1e-9 < MIN_SECONDS:
        msg = (f'{bag}: too short to fit: the commands, the speed ({speed_topic.name})'
               f'{" and the IMU" if len(imu_t) else ""} overlap for less than {MIN_SECONDS:g} s')
        raise FitError(msg)
    times = s_times[keep]
    start_ns = int(times[0])
    t = np.asarray((times - start_ns) * 1e-9, np.float64)
    speed = np.asarray(speed_all[keep], np.float64)
    if len(imu_t):
        imu_s = (imu_t - start_ns) * 1e-9
        yaw_rate = np.interp(t, imu_s, imu_values[:, 0])
        lateral = np.interp(t, imu_s, imu_values[:, 1])
    else:
        assert yaw_all is not None
        yaw_rate, lateral = yaw_all[keep], None
    pose = _pose(chosen.get('pose'), decoder, times, t, speed, yaw_rate)
    notes = list(contents.damage)
    if contents.oversized:
        notes.append(f'{contents.oversized} messages left out (too large, or not decompressible)')
    notes += [f'{topic}: {count} corrupt messages skipped'
              for topic, count in sorted(decoder.corrupt.items())]
    if not stamped:
        notes.append('measurements at their receive times: their header stamps are missing or '
                     'not within a second before them')
    if 'pose' not in chosen:
        notes.append('no pose recorded: the path is dead-reckoned from speed and yaw rate')
    if 'imu' not in chosen:
        notes.append('no IMU: yaw rate from the odometry, no lateral acceleration')
    return Recording(
        bag=str(bag), start_ns=start_ns, t=t, speed=speed, yaw_rate=yaw_rate,
        lateral_acceleration=lateral, pose=pose,
        commands=Commands(np.asarray((commands_t - start_ns) * 1e-9, np.float64), ackermann,
                          vesc_rows),
        erpm=None if erpm_all is None else erpm_all[keep],
        topics={role: topic.name for role, topic in chosen.items()}, notes=tuple(notes))


def _commands(chosen: dict[str, Topic], decoder: _Decoder
              ) -> tuple[NDArray[np.int64], NDArray[np.float64] | None,
                         NDArray[np.float64] | None]:
    if 'drive' in chosen:
        drives = [(t, (m.drive.speed, m.drive.steering_angle, m.drive.steering_angle_velocity,
                       m.drive.acceleration, m.drive.jerk))
                  for t, m in decoder.messages(chosen['drive'])]
        times = np.array([r[0] for r in drives], np.int64)
        values = np.array([r[1] for r in drives], np.float64).reshape(-1, 5)
        keep = np.all(np.isfinite(values), axis=1)  # the car ignores such a command too
        order = np.argsort(times[keep], kind='stable')
        return times[keep][order], values[keep][order], None
    rows: list[tuple[int, tuple[float, float]]] = []
    for role, channel in (('vesc_speed', SPEED), ('vesc_servo', SERVO), ('vesc_brake', BRAKE)):
        if role in chosen:
            rows += [(t, (float(channel), m.data)) for t, m in decoder.messages(chosen[role])
                     if math.isfinite(m.data)]
    rows.sort(key=lambda r: r[0])
    times = np.array([r[0] for r in rows], np.int64)
    return times, None, np.array([r[1] for r in rows], np.float64).reshape(-1, 2)


def _pose(topic: Topic | None, decoder: _Decoder, times: NDArray[np.int64],
          t: NDArray[np.float64], speed: NDArray[np.float64],
          yaw_rate: NDArray[np.float64]) -> NDArray[np.float64]:
    """x, y, unwrapped yaw at the samples: recorded, or dead-reckoned."""
    if topic is not None:
        p_times, p_values = _series([(s, (m.pose.pose.position.x, m.pose.pose.position.y,
                                          _yaw(m.pose.pose.orientation)))
                                     for s, m in _taken(decoder.messages(topic))[0]])
        if len(p_times) >= 2:
            seconds = (p_times - times[0]) * 1e-9
            yaw = np.unwrap(p_values[:, 2])
            return np.column_stack([np.interp(t, seconds, p_values[:, 0]),
                                    np.interp(t, seconds, p_values[:, 1]),
                                    np.interp(t, seconds, yaw)])
    dt = np.diff(t, prepend=t[0])
    yaw = np.cumsum(yaw_rate * dt)
    return np.column_stack([np.cumsum(speed * np.cos(yaw) * dt),
                            np.cumsum(speed * np.sin(yaw) * dt), yaw])
