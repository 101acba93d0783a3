"""The messages of a few topics of a rosbag2 bag, read as hostile input and up to any damage.

A bag from a real car may come from anywhere, and a recording that was killed leaves a last
file without its index (MCAP) or with a transaction cut short (SQLite). So the bag's
``metadata.yaml`` is checked first (``recording.metadata``: only regular files inside the bag
are opened), MCAP files are read record by record with a stream reader, as ``arsim-dataset
recover`` reads them, and SQLite files read-only, row by row: what lies before the damage is
kept, and the damage is noted, never a reason to give up. Every size read from the bag is
bounded before anything is allocated for it: records, decompressed chunks and messages, their
number, and the message definitions.
"""

from __future__ import annotations

import contextlib
import io
import sqlite3
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from mcap.exceptions import EndOfFile, McapError
from mcap.records import Channel, Chunk, Message, Schema
from mcap.stream_reader import StreamReader

from arsim_core.fit import FitError
from arsim_core.recording.bag import RecordingError
from arsim_core.recording.metadata import BagMetadata, load_metadata

MAX_MESSAGE_BYTES: Final = 1 << 20  # far above an Odometry or Imu message (under 1 kB)
MAX_CHUNK_BYTES: Final = 64 << 20  # the recorder writes chunks of about 1 MiB
MAX_MESSAGES: Final = 5_000_000  # on the topics read: hours of a car at 100 Hz
MAX_DEFINITION_BYTES: Final = 1 << 16
#: What a damaged MCAP record or SQLite page raises while it is read.
DAMAGE: Final = (McapError, EOFError, ValueError, KeyError, IndexError, struct.error,
                 OverflowError, MemoryError, RecursionError, UnicodeDecodeError, sqlite3.Error)

Wanted = Callable[[str, str], bool]  # (topic, type) -> whether its messages are read


@dataclass
class Topic:
    """One topic of the bag: its type, its definition as the bag holds it (if it does) and,
    for a wanted topic, its messages as (receive time [ns], serialised bytes)."""

    name: str
    msgtype: str
    definition: str | None = None
    messages: list[tuple[int, bytes]] = field(default_factory=list)


@dataclass
class BagContents:
    """What could be read: the topics by name, and what stopped the reading of a file early."""

    topics: dict[str, Topic] = field(default_factory=dict)
    damage: list[str] = field(default_factory=list)
    oversized: int = 0  # messages left out for their size
    compression: str = ''  # 'zstd' when every message is compressed on its own

    def add(self, topic: Topic, time_ns: int, data: bytes) -> None:
        if len(data) > MAX_MESSAGE_BYTES:
            self.oversized += 1
            return
        if sum(len(t.messages) for t in self.topics.values()) >= MAX_MESSAGES:
            msg = f'more than {MAX_MESSAGES} messages on the topics a fit reads; split the bag'
            raise FitError(msg)
        topic.messages.append((time_ns, data))


def read_bag(bag: Path, wanted: Wanted) -> BagContents:
    """Every topic of ``bag`` and the messages of those ``wanted`` says to read."""
    try:
        meta = load_metadata(Path(bag))
    except RecordingError as exc:
        raise FitError(str(exc)) from exc
    contents = BagContents()
    if meta.info.get('compression_mode') == 'message':
        contents.compression = str(meta.info.get('compression_format', ''))
    read = _mcap_file if meta.storage == 'mcap' else _sqlite_file
    for path in meta.paths:
        read(path, wanted, contents)
    _declared_topics(meta, contents)
    if contents.compression:
        _decompress_messages(contents)
    for topic in contents.topics.values():
        topic.messages.sort(key=lambda message: message[0])
    return contents


def _declared_topics(meta: BagMetadata, contents: BagContents) -> None:
    """Topics the metadata names that no readable part of a file declared (a file cut before
    its channel records): known by name and type, without messages."""
    for entry in meta.topics:
        described = entry.get('topic_metadata', {})
        name, msgtype = described.get('name'), described.get('type')
        if isinstance(name, str) and isinstance(msgtype, str) and len(msgtype) < 256:
            contents.topics.setdefault(name, Topic(name, msgtype))


def _note(contents: BagContents, path: Path, read: int, exc: BaseException) -> None:
    problem = ' '.join(str(exc).split())[:200] or type(exc).__name__
    contents.damage.append(f'{path.name}: damaged after {read} messages ({problem}); '
                           f'read up to there')


# --- MCAP ---------------------------------------------------------------------------------------
def _mcap_file(path: Path, wanted: Wanted, contents: BagContents) -> None:
    schemas: dict[int, Schema] = {}
    channels: dict[int, Topic | None] = {}  # None: a topic that is not read
    read = 0
    try:
        with path.open('rb') as stream:
            reader = StreamReader(stream, emit_chunks=True, record_size_limit=MAX_CHUNK_BYTES)
            for record in reader.records:
                for inner in _chunk_records(record):
                    read += _mcap_record(inner, schemas, channels, wanted, contents)
    except OSError as exc:
        msg = f'{path}: cannot read it ({exc.strerror or exc})'
        raise FitError(msg) from exc
    except DAMAGE as exc:
        _note(contents, path, read, exc)


def _chunk_records(record: Any) -> Iterator[Any]:
    """The records a chunk holds (decompressed within bounds), or the record itself."""
    if not isinstance(record, Chunk):
        yield record
        return
    if record.uncompressed_size > MAX_CHUNK_BYTES:
        msg = f'a chunk of {record.uncompressed_size} bytes'
        raise ValueError(msg)
    data = _decompress(record.compression, record.data, record.uncompressed_size)
    inner = StreamReader(io.BytesIO(data), skip_magic=True, record_size_limit=MAX_CHUNK_BYTES)
    with contextlib.suppress(EOFError, EndOfFile):  # a chunk ends without a footer
        yield from inner.records


def _decompress(compression: str, data: bytes, size: int) -> bytes:
    if compression == '':
        return data
    if compression == 'zstd':
        return _unzstd(data, size)
    if compression == 'lz4':
        import lz4.frame  # type: ignore[import-untyped]

        try:
            return bytes(lz4.frame.LZ4FrameDecompressor().decompress(data, max_length=size))
        except RuntimeError as exc:
            raise ValueError(str(exc)) from exc
    msg = f'unknown chunk compression {compression[:40]!r}'
    raise ValueError(msg)


def _mcap_record(record: Any, schemas: dict[int, Schema], channels: dict[int, Topic | None],
                 wanted: Wanted, contents: BagContents) -> int:
    """Take one record in; 1 if it was a message read, else 0."""
    if isinstance(record, Schema):
        schemas[record.id] = record
    elif isinstance(record, Channel):
        schema = schemas.get(record.schema_id)
        msgtype = schema.name if schema is not None else ''
        topic = contents.topics.setdefault(record.topic, Topic(record.topic, msgtype))
        if topic.definition is None and schema is not None and schema.encoding == 'ros2msg' \
                and len(schema.data) <= MAX_DEFINITION_BYTES:
            topic.definition = schema.data.decode('utf-8', 'replace')
        channels[record.id] = topic if wanted(topic.name, topic.msgtype) else None
    elif isinstance(record, Message):
        reading = channels.get(record.channel_id)
        if reading is not None:
            contents.add(reading, record.log_time, bytes(record.data))
            return 1
    return 0


# --- SQLite -------------------------------------------------------------------------------------
def _sqlite_file(path: Path, wanted: Wanted, contents: BagContents) -> None:
    """Read-only and immutable: the file is never written to, not even a journal beside it."""
    read = 0
    try:
        database = sqlite3.connect(f'file:{quote(str(path))}?mode=ro&immutable=1', uri=True)
    except sqlite3.Error as exc:
        msg = f'{path}: not a readable SQLite bag file ({exc})'
        raise FitError(msg) from exc
    try:
        definitions = _sqlite_definitions(database)
        ids: dict[int, Topic] = {}
        for topic_id, name, msgtype in database.execute('SELECT id, name, type FROM topics'):
            if not (isinstance(name, str) and isinstance(msgtype, str)):
                continue
            topic = contents.topics.setdefault(name, Topic(name, msgtype))
            topic.definition = topic.definition or definitions.get(msgtype)
            if wanted(name, msgtype):
                ids[int(topic_id)] = topic
        if ids:
            marks = ','.join('?' * len(ids))
            rows = database.execute(
                f'SELECT topic_id, timestamp, data FROM messages WHERE topic_id IN ({marks}) '
                'AND length(data) <= ?', (*ids, MAX_MESSAGE_BYTES))
            for topic_id, timestamp, data in rows:
                if isinstance(timestamp, int) and isinstance(data, bytes):
                    contents.add(ids[topic_id], timestamp, data)
                    read += 1
    except DAMAGE as exc:
        _note(contents, path, read, exc)
    finally:
        database.close()


def _sqlite_definitions(database: sqlite3.Connection) -> dict[str, str]:
    """The message definitions a bag of schema version 4 or later holds (none before)."""
    found = {}
    with contextlib.suppress(sqlite3.Error):
        for msgtype, encoding, text in database.execute(
                'SELECT topic_type, encoding, encoded_message_definition '
                'FROM message_definitions'):
            if encoding == 'ros2msg' and isinstance(text, str) \
                    and len(text) <= MAX_DEFINITION_BYTES and isinstance(msgtype, str):
                found[msgtype] = text
    return found


def _decompress_messages(contents: BagContents) -> None:
    """Each message of a bag compressed message by message (``compression_mode: message``)."""
    if contents.compression != 'zstd':
        msg = f'messages compressed with {contents.compression[:40]!r}; expected zstd'
        raise FitError(msg)
    for topic in contents.topics.values():
        kept = []
        for time_ns, data in topic.messages:
            try:
                kept.append((time_ns, _unzstd(data, MAX_MESSAGE_BYTES)))
            except ValueError:
                contents.oversized += 1
        topic.messages = kept


def _unzstd(data: bytes, limit: int) -> bytes:
    """``data`` decompressed, read as a stream so that no more than ``limit`` bytes are
    ever allocated, whatever size the frame claims."""
    import zstandard

    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as stream:
            out = stream.read(limit + 1)
    except zstandard.ZstdError as exc:
        raise ValueError(str(exc)) from exc
    if len(out) > limit:
        msg = f'decompresses to more than {limit} bytes'
        raise ValueError(msg)
    return bytes(out)
