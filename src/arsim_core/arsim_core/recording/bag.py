"""Writing rosbag2 bags without a ROS install, through the rosbags library.

A bag is a folder with ``metadata.yaml`` and its storage file (MCAP by default, or SQLite 3), in
bag version 8 unless asked otherwise, which ``ros2 bag info`` and ``ros2 bag play`` read on
Humble, Jazzy and Kilted. Each topic carries the QoS its publisher offered, so that latched
topics (``/tf_static``, ``/map``, ``robot_description``) replay latched.

Messages arrive already serialised (CDR, as a raw ROS subscription hands them over); the bag
needs each type's definition, which comes from rosbags' own store of the distribution's
standard types and, for the rest (``arsim_msgs``, ``ackermann_msgs``), from the ``.msg`` text a
caller looks up (``definition_of``), so this module needs no ROS import.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

try:  # libyaml's dumper where PyYAML was built with it: a checkpoint a second stays cheap
    from yaml import CSafeDumper as SafeDumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper  # type: ignore[assignment]
from rosbags.interfaces import (
    Connection,
    Nodetype,
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import (
    CompressionFormat,
    CompressionMode,
    StoragePlugin,
    Writer,
    WriterError,
)
from rosbags.rosbag2.metadata import dump_qos_v8, dump_qos_v9
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from arsim_core.errors import ArsimError
from arsim_core.recording.settings import BAG_VERSIONS

STORAGES: Final = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}
_STORES: Final = {'humble': Stores.ROS2_HUMBLE, 'jazzy': Stores.ROS2_JAZZY,
                  'kilted': Stores.ROS2_KILTED}
_INFINITE = QosTime(2147483647, 4294967295)


class RecordingError(ArsimError):
    """A bag cannot be created, or a message cannot be written to it."""


@dataclass(frozen=True)
class TopicQos:
    """What a publisher offers, as far as replaying it matters."""

    reliable: bool = True
    transient_local: bool = False  # latched: a late subscriber still gets the last messages
    depth: int = 10

    def as_rosbags(self) -> Qos:
        return Qos(QosHistory.KEEP_LAST, self.depth,
                   QosReliability.RELIABLE if self.reliable else QosReliability.BEST_EFFORT,
                   QosDurability.TRANSIENT_LOCAL if self.transient_local
                   else QosDurability.VOLATILE,
                   _INFINITE, _INFINITE, QosLiveliness.AUTOMATIC, _INFINITE, False)


@dataclass(frozen=True)
class BagSummary:
    """What a closed bag holds."""

    path: Path
    counts: dict[str, int]  # messages per topic
    size_bytes: int

    def text(self) -> str:
        width = max((len(topic) for topic in self.counts), default=5)
        lines = [f'  {topic:<{width}}  {count:>8}' for topic, count in sorted(self.counts.items())]
        return (f'bag {self.path}: {sum(self.counts.values())} messages on '
                f'{len(self.counts)} topics, {self.size_bytes / 2**20:.1f} MiB\n'
                + '\n'.join(lines))


def distro_store(distro: str | None = None) -> Stores:
    """rosbags' store of standard types for the ROS 2 distribution in use (``ROS_DISTRO``;
    Kilted, the PyPI runtime's, when unset or unknown)."""
    return _STORES.get((distro or os.environ.get('ROS_DISTRO', '')).lower(), Stores.ROS2_KILTED)


class BagWriter:
    """One bag being written: ``add_topic`` once per topic, then ``write`` its messages, then
    ``close``, which writes ``metadata.yaml``."""

    def __init__(self, path: Path, definition_of: Callable[[str], str], *,
                 storage: str = 'mcap', version: int = 8, compress: bool = False,
                 store: Stores | None = None) -> None:
        """``definition_of(msgtype)`` is the ``.msg`` text of a type rosbags' store lacks,
        e.g. ``'arsim_msgs/msg/RaceStatus'``."""
        if storage not in STORAGES:
            msg = f'storage must be one of {sorted(STORAGES)}, got {storage!r}'
            raise RecordingError(msg)
        if version not in BAG_VERSIONS:
            msg = f'bag version must be one of {BAG_VERSIONS}, got {version!r}'
            raise RecordingError(msg)
        self.path = Path(path)
        self.definition_of = definition_of
        self.typestore: Typestore = get_typestore(store or distro_store())
        self._connections: dict[str, Connection] = {}
        self._qos: dict[str, Any] = {}  # topic -> its offered QoS as the metadata holds it
        self.counts: dict[str, int] = {}
        self.storage = storage
        self.version = version
        self.compress = compress
        self._first_ns: int | None = None
        self._last_ns = 0
        try:
            self._writer = Writer(self.path, version=version,  # type: ignore[arg-type]
                                  storage_plugin=STORAGES[storage])
            if compress:
                self._writer.set_compression(CompressionMode.MESSAGE, CompressionFormat.ZSTD)
            self._writer.open()
        except (WriterError, OSError) as exc:
            msg = f'{self.path}: cannot create the bag: {exc}'
            raise RecordingError(msg) from exc

    def add_topic(self, topic: str, msgtype: str, qos: TopicQos) -> None:
        """Record ``topic`` of ``msgtype`` (``pkg/msg/Name``) from now on."""
        if topic in self._connections:
            return
        self._register(msgtype)
        offered = [qos.as_rosbags()]
        self._qos[topic] = (dump_qos_v9 if self.version >= 9 else dump_qos_v8)(offered)
        self._connections[topic] = self._writer.add_connection(
            topic, msgtype, typestore=self.typestore, offered_qos_profiles=offered)
        self.counts[topic] = 0

    def has_topic(self, topic: str) -> bool:
        return topic in self._connections

    def write(self, topic: str, timestamp_ns: int, data: bytes | memoryview) -> None:
        """One serialised message of an added topic, received at ``timestamp_ns``; a full
        disk (or any write error) is a RecordingError, after which the bag holds what was
        written before."""
        try:
            self._writer.write(self._connections[topic], timestamp_ns, data)
        except OSError as exc:
            msg = (f'{self.path}: cannot write to the bag ({exc.strerror or exc}); it holds '
                   f'what was written before')
            raise RecordingError(msg) from exc
        self.counts[topic] += 1
        if self._first_ns is None:
            self._first_ns = timestamp_ns
        self._last_ns = max(self._last_ns, timestamp_ns)

    def checkpoint(self) -> None:
        """Write ``metadata.yaml`` for what the bag holds so far, so that a bag whose recorder
        is killed (SIGKILL, a power cut) still opens with ``ros2 bag`` and rosbags, its MCAP
        file reading up to the last chunk written; ``close`` replaces it with the final one.
        SQLite keeps nothing before closing, so its bags get none."""
        if self.storage != 'mcap':
            return
        storage_file = f'{self.path.name}.mcap'
        start = self._first_ns or 0
        duration = max(0, self._last_ns - start)
        count = sum(self.counts.values())
        topics = [{'topic_metadata': {
            'name': topic, 'type': connection.msgtype, 'serialization_format': 'cdr',
            'offered_qos_profiles': self._qos[topic],
            'type_description_hash': connection.digest},
            'message_count': self.counts[topic]}
            for topic, connection in self._connections.items()]
        information = {
            'version': self.version, 'storage_identifier': 'mcap',
            'relative_file_paths': [storage_file],
            'duration': {'nanoseconds': duration},
            'starting_time': {'nanoseconds_since_epoch': start},
            'message_count': count, 'topics_with_message_count': topics,
            'compression_format': 'zstd' if self.compress else '',
            'compression_mode': 'message' if self.compress else '',
            'files': [{'path': storage_file, 'starting_time': {'nanoseconds_since_epoch': start},
                       'duration': {'nanoseconds': duration}, 'message_count': count}],
            'custom_data': None, 'ros_distro': 'rosbags'}
        staged = self.path / 'metadata.yaml.tmp'
        try:
            staged.write_text(yaml.dump({'rosbag2_bagfile_information': information},
                                        Dumper=SafeDumper, sort_keys=False))
            staged.replace(self.path / 'metadata.yaml')
        except OSError as exc:
            msg = f'{self.path}: cannot write metadata.yaml ({exc.strerror or exc})'
            raise RecordingError(msg) from exc

    def close(self) -> BagSummary:
        """Write the metadata and close; the summary of what the bag holds."""
        try:
            self._writer.close()
        except OSError as exc:
            msg = f'{self.path}: cannot close the bag ({exc.strerror or exc})'
            raise RecordingError(msg) from exc
        size = sum(f.stat().st_size for f in self.path.iterdir() if f.is_file())
        return BagSummary(self.path, dict(self.counts), size)

    def _register(self, msgtype: str) -> None:
        """Make ``msgtype`` and every type it nests known to the typestore."""
        pending = [msgtype]
        while pending:
            name = pending.pop()
            if name in self.typestore.fielddefs:
                continue
            try:
                parsed = get_types_from_msg(self.definition_of(name), name)
            except (OSError, LookupError) as exc:
                msg = f'no definition of message type {name!r} to record it with: {exc}'
                raise RecordingError(msg) from exc
            self.typestore.register(parsed)
            pending += [nested for _, fields in parsed.values() for _, field in fields
                        for nested in _named_types(field)]


def _named_types(field: Any) -> list[str]:
    """The message types a parsed field refers to, arrays and sequences included."""
    kind, detail = field
    if kind == Nodetype.NAME:
        return [detail]
    if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
        return _named_types(detail[0])
    return []
