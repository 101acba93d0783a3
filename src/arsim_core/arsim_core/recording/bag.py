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
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

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
from rosbags.rosbag2.storage_sqlite3 import Sqlite3Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from arsim_core.config.recording import BAG_VERSIONS, STORAGE_NAMES
from arsim_core.errors import ArsimError
from arsim_core.recording import sqlite_file

if TYPE_CHECKING:
    from arsim_core.config.scenario import RecordingSettings

STORAGES: Final = {name: StoragePlugin[name.upper()] for name in STORAGE_NAMES}
_STORES: Final = {'humble': Stores.ROS2_HUMBLE, 'jazzy': Stores.ROS2_JAZZY,
                  'kilted': Stores.ROS2_KILTED}
_INFINITE = QosTime(2147483647, 4294967295)
METADATA: Final = 'metadata.yaml'
COMMIT_PERIOD_NS: Final = 1_000_000_000  # of sim time, between SQLite commits at the latest


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


def recorded_qos(latched: bool) -> TopicQos:
    """The QoS a topic is recorded with: a latched topic's latched, any other as a stream whose
    replay may burst."""
    return TopicQos(transient_local=latched, depth=10 if latched else 100)


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


def staged_file(bag: Path, name: str) -> Path:
    """Where the storage file ``name`` of ``bag`` is written until it is complete: in a folder
    of its own (rosbags writes each file as a bag), ``.<stem>/.<stem><suffix>``."""
    staging = bag / f'.{Path(name).stem}'
    return staging / f'{staging.name}{Path(name).suffix}'


def write_metadata(bag: Path, document: dict[str, Any]) -> None:
    """``metadata.yaml`` of ``bag``, replaced whole (a reader never sees half of it)."""
    staged = bag / f'{METADATA}.tmp'
    try:
        staged.unlink(missing_ok=True)  # a link left there (a tampered bag) is not followed
        with staged.open('x') as stream:
            stream.write(yaml.dump(document, Dumper=SafeDumper, sort_keys=False))
        staged.replace(bag / METADATA)
    except OSError as exc:
        msg = f'{bag}: cannot write {METADATA} ({exc.strerror or exc})'
        raise RecordingError(msg) from exc


def distro_store(distro: str | None = None) -> Stores:
    """rosbags' store of standard types for the ROS 2 distribution in use (``ROS_DISTRO``;
    Kilted, the PyPI runtime's, when unset or unknown)."""
    return _STORES.get((distro or os.environ.get('ROS_DISTRO', '')).lower(), Stores.ROS2_KILTED)


@dataclass
class _Part:
    """One storage file of a bag: its name in the bag's folder and what it holds."""

    name: str
    first_ns: int | None = None
    last_ns: int = 0
    count: int = 0
    size: int = 0  # bytes of message data written to it

    def add(self, timestamp_ns: int, size: int) -> None:
        if self.first_ns is None:
            self.first_ns = timestamp_ns
        self.last_ns = max(self.last_ns, timestamp_ns)
        self.count += 1
        self.size += size

    def entry(self) -> dict[str, Any]:
        start = self.first_ns or 0
        return {'path': self.name, 'starting_time': {'nanoseconds_since_epoch': start},
                'duration': {'nanoseconds': max(0, self.last_ns - start)},
                'message_count': self.count}


class BagWriter:
    """One bag being written: ``add_topic`` once per topic, then ``write`` its messages, then
    ``close``, which writes ``metadata.yaml``.

    The bag is split into storage files ``<name>_0.mcap``, ``<name>_1.mcap``, ... (as
    ``ros2 bag record`` names them) when a file reaches ``max_size_bytes`` of messages or
    spans ``max_duration_ns``; the file being written lives in ``.<name>_<k>/`` until it is
    complete, and ``metadata.yaml`` lists them all."""

    def __init__(self, path: Path, definition_of: Callable[[str], str], *,
                 storage: str = 'mcap', version: int = 8, compress: bool = False,
                 store: Stores | None = None, max_size_bytes: int | None = None,
                 max_duration_ns: int | None = None) -> None:
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
        self.storage = storage
        self.version = version
        self.compress = compress
        self.max_size_bytes = max_size_bytes
        self.max_duration_ns = max_duration_ns
        # topic -> type, offered QoS, and that QoS as the metadata holds it (dumped once: the
        # dump is slow and the metadata is rewritten every second)
        self._topics: dict[str, tuple[str, list[Qos], Any]] = {}
        self._connections: dict[str, Connection] = {}  # of the file being written
        self.counts: dict[str, int] = {}
        self._parts: list[_Part] = []
        self._checkpoint_ns = 0  # sim time of the last message before the last checkpoint
        try:
            self.path.mkdir(parents=True)
        except OSError as exc:
            msg = f'{self.path}: cannot create the bag: {exc}'
            raise RecordingError(msg) from exc
        self._writer = self._open_part()

    @classmethod
    def for_recording(cls, recording: RecordingSettings, directory: Path,
                      definition_of: Callable[[str], str]) -> BagWriter:
        """A bag at ``directory`` as a scenario's ``recording:`` section asks for it."""
        size, duration = recording.max_bag_size_mib, recording.max_bag_duration_s
        return cls(directory, definition_of, storage=recording.storage,
                   version=recording.bag_version, compress=recording.compress,
                   max_size_bytes=None if size is None else int(size * 2**20),
                   max_duration_ns=None if duration is None else int(duration * 1e9))

    @property
    def _suffix(self) -> str:
        return '.mcap' if self.storage == 'mcap' else '.db3'

    def _open_part(self) -> Writer:
        part = _Part(f'{self.path.name}_{len(self._parts)}{self._suffix}')
        try:
            writer = Writer(staged_file(self.path, part.name).parent, version=self.version,  # type: ignore[arg-type]
                            storage_plugin=STORAGES[self.storage])
            if self.compress:
                writer.set_compression(CompressionMode.MESSAGE, CompressionFormat.ZSTD)
            writer.open()
            if self.storage == 'sqlite3':
                sqlite_file.start_logging(_database(writer))
        except (WriterError, OSError, sqlite3.Error) as exc:
            msg = f'{self.path}: cannot create the bag: {exc}'
            raise RecordingError(msg) from exc
        self._parts.append(part)
        self._connections = {
            topic: writer.add_connection(topic, msgtype, typestore=self.typestore,
                                         offered_qos_profiles=offered)
            for topic, (msgtype, offered, _) in self._topics.items()}
        return writer

    def _close_part(self) -> None:
        """Close the file being written and move it into the bag's folder."""
        part = self._parts[-1]
        staged = staged_file(self.path, part.name)
        try:
            if self.storage == 'sqlite3':
                sqlite_file.stop_logging(_database(self._writer))
            self._writer.close()
            staged.replace(self.path / part.name)
            shutil.rmtree(staged.parent)
        except (OSError, sqlite3.Error) as exc:
            msg = f'{self.path}: cannot close {part.name} ({_reason(exc)})'
            raise RecordingError(msg) from exc

    def add_topic(self, topic: str, msgtype: str, qos: TopicQos) -> None:
        """Record ``topic`` of ``msgtype`` (``pkg/msg/Name``) from now on."""
        if topic in self._topics:
            return
        self._register(msgtype)
        offered = [qos.as_rosbags()]
        dump_qos = dump_qos_v9 if self.version >= 9 else dump_qos_v8
        self._topics[topic] = (msgtype, offered, dump_qos(offered))
        self._connections[topic] = self._writer.add_connection(
            topic, msgtype, typestore=self.typestore, offered_qos_profiles=offered)
        self.counts[topic] = 0

    def has_topic(self, topic: str) -> bool:
        return topic in self._topics

    def write(self, topic: str, timestamp_ns: int, data: bytes | memoryview) -> None:
        """One serialised message of an added topic, received at ``timestamp_ns``; a full
        disk (or any write error) is a RecordingError, after which the bag holds what was
        written before."""
        part = self._parts[-1]
        if part.count and self._full(part, timestamp_ns):
            self._close_part()
            self._writer = self._open_part()
            part = self._parts[-1]
        try:
            self._writer.write(self._connections[topic], timestamp_ns, data)
        except (OSError, sqlite3.Error) as exc:
            msg = (f'{self.path}: cannot write to the bag ({_reason(exc)}); it holds '
                   f'what was written before')
            raise RecordingError(msg) from exc
        self.counts[topic] += 1
        part.add(timestamp_ns, len(data))
        if self.storage == 'sqlite3' and timestamp_ns - self._checkpoint_ns >= COMMIT_PERIOD_NS:
            self.checkpoint()  # whoever records, a kill loses at most a second of sim time

    def _full(self, part: _Part, timestamp_ns: int) -> bool:
        return (self.max_size_bytes is not None and part.size >= self.max_size_bytes) or (
            self.max_duration_ns is not None and part.first_ns is not None
            and timestamp_ns - part.first_ns >= self.max_duration_ns)

    def checkpoint(self) -> None:
        """Write ``metadata.yaml`` for what the bag holds so far, so that a bag whose recorder
        is killed (SIGKILL, a power cut) still opens with ``ros2 bag``: its MCAP files read
        up to the last chunk written, its SQLite files hold what was committed here (callers
        checkpoint every second, and ``write`` does for SQLite bags after each second of sim
        time); ``close`` replaces it with the final one."""
        if self.storage == 'sqlite3':
            self._checkpoint_ns = max(self._checkpoint_ns, self._parts[-1].last_ns)
            try:
                sqlite_file.commit(_database(self._writer))
            except (OSError, sqlite3.Error) as exc:
                msg = (f'{self.path}: cannot write to the bag ({_reason(exc)}); it holds '
                       f'what was written before')
                raise RecordingError(msg) from exc
        staged = staged_file(self.path, self._parts[-1].name)
        self._write_metadata(str(staged.relative_to(self.path)))

    def close(self) -> BagSummary:
        """Close the last file, write the metadata; the summary of what the bag holds."""
        self._close_part()
        self._write_metadata(self._parts[-1].name)
        size = sum(f.stat().st_size for f in self.path.iterdir() if f.is_file())
        return BagSummary(self.path, dict(self.counts), size)

    def _write_metadata(self, last_file: str) -> None:
        """rosbag2's ``metadata.yaml``: every file (the last one at ``last_file``, relative to
        the bag's folder), every topic with its count and offered QoS."""
        files = [part.entry() for part in self._parts]
        files[-1]['path'] = last_file
        starts = [part.first_ns for part in self._parts if part.first_ns is not None]
        start = min(starts, default=0)
        end = max((part.last_ns for part in self._parts), default=0)
        topics = [{'topic_metadata': {
            'name': topic, 'type': msgtype, 'serialization_format': 'cdr',
            'offered_qos_profiles': offered_dumped,
            'type_description_hash': self._connections[topic].digest},
            'message_count': self.counts[topic]}
            for topic, (msgtype, _, offered_dumped) in self._topics.items()]
        information = {
            'version': self.version, 'storage_identifier': self.storage,
            'relative_file_paths': [entry['path'] for entry in files],
            'duration': {'nanoseconds': max(0, end - start)},
            'starting_time': {'nanoseconds_since_epoch': start},
            'message_count': sum(self.counts.values()), 'topics_with_message_count': topics,
            'compression_format': 'zstd' if self.compress else '',
            'compression_mode': 'message' if self.compress else '',
            'files': files, 'custom_data': None, 'ros_distro': 'rosbags'}
        write_metadata(self.path, {'rosbag2_bagfile_information': information})

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


def _reason(exc: OSError | sqlite3.Error) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


def _database(writer: Writer) -> sqlite3.Connection:
    """The connection rosbags' SQLite storage writes through."""
    storage = writer.storage
    assert isinstance(storage, Sqlite3Writer)
    return storage.conn


def _named_types(field: Any) -> list[str]:
    """The message types a parsed field refers to, arrays and sequences included."""
    kind, detail = field
    if kind == Nodetype.NAME:
        return [detail]
    if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
        return _named_types(detail[0])
    return []
