"""One self-contained MCAP file of ROS 2 messages (no rosbag2 folder around it), as Foxglove,
``ros2 bag play <file>`` and any MCAP reader open it: CDR message encoding, ``ros2msg``
schemas, rosbag2's ``offered_qos_profiles`` on each channel, zstd chunks, and metadata records
of the writer's choosing (an incident clip's verdict).

It takes the same calls as :class:`arsim_core.recording.bag.BagWriter` (``add_topic``,
``has_topic``, ``write``), so the ROS nodes' publishing code writes into it through
``arsim_bridge.bag_node`` unchanged. Its size is bounded: a message that would take the data
written past ``max_bytes`` is dropped and counted. The file is written under a hidden name and
renamed when complete, so a reader never sees half of one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from mcap.writer import CompressionType, Writer
from rosbags.rosbag2.metadata import dump_qos_v8

from arsim_core.recording.bag import RecordingError, TopicQos

CHUNK_BYTES: Final = 1 << 20


@dataclass(frozen=True)
class McapSummary:
    """What a closed file holds."""

    path: Path
    counts: dict[str, int]  # messages per topic
    size_bytes: int
    dropped: int  # messages left out to stay within ``max_bytes``


class McapFile:
    """A new MCAP file at ``path``; ``schema_of(msgtype)`` is the ``ros2msg`` definition of a
    type with every type it uses (``arsim_bridge.msg_definitions.definition``)."""

    def __init__(self, path: Path, schema_of: Callable[[str], str],
                 max_bytes: int | None = None) -> None:
        self.path = Path(path)
        self.schema_of = schema_of
        self.max_bytes = max_bytes
        self.counts: dict[str, int] = {}
        self.bytes = 0  # of message data written
        self.dropped = 0
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self._staged = self.path.with_name(f'.{self.path.name}.part')
        try:
            self._stream: BinaryIO = self._staged.open('xb')
        except OSError as exc:
            msg = f'{self.path}: cannot create the file ({exc.strerror or exc})'
            raise RecordingError(msg) from exc
        self._writer = Writer(self._stream, chunk_size=CHUNK_BYTES,
                              compression=CompressionType.ZSTD)
        self._writer.start(profile='ros2', library='arsim')

    def add_topic(self, topic: str, msgtype: str, qos: TopicQos) -> None:
        """Record ``topic`` of ``msgtype`` (``pkg/msg/Name``) from now on."""
        if topic in self._channels:
            return
        schema = self._schemas.get(msgtype)
        if schema is None:
            try:
                text = self.schema_of(msgtype)
            except (OSError, LookupError) as exc:
                msg = f'no definition of message type {msgtype!r} to record it with: {exc}'
                raise RecordingError(msg) from exc
            schema = self._writer.register_schema(msgtype, 'ros2msg', text.encode())
            self._schemas[msgtype] = schema
        self._channels[topic] = self._writer.register_channel(
            topic, 'cdr', schema,
            {'offered_qos_profiles': dump_qos_v8([qos.as_rosbags()])})
        self.counts[topic] = 0

    def has_topic(self, topic: str) -> bool:
        return topic in self._channels

    def write(self, topic: str, timestamp_ns: int, data: bytes | memoryview) -> None:
        """One serialised (CDR) message of an added topic, logged at ``timestamp_ns``; dropped
        (and counted) if it would take the file past ``max_bytes`` of message data."""
        size = len(data)
        if self.max_bytes is not None and self.bytes + size > self.max_bytes:
            self.dropped += 1
            return
        try:
            self._writer.add_message(self._channels[topic], timestamp_ns, bytes(data),
                                     timestamp_ns, self.counts[topic])
        except OSError as exc:
            msg = f'{self.path}: cannot write ({exc.strerror or exc})'
            raise RecordingError(msg) from exc
        self.counts[topic] += 1
        self.bytes += size

    def add_metadata(self, name: str, values: Mapping[str, str]) -> None:
        """A metadata record ``name`` (the file's own, outside every topic)."""
        self._writer.add_metadata(name, dict(values))

    def close(self) -> McapSummary:
        """Finish the file (summary, index) and give it its name."""
        try:
            self._writer.finish()  # type: ignore[no-untyped-call]
            self._stream.close()
            self._staged.replace(self.path)
        except OSError as exc:
            msg = f'{self.path}: cannot finish the file ({exc.strerror or exc})'
            raise RecordingError(msg) from exc
        return McapSummary(self.path, dict(self.counts), self.path.stat().st_size,
                           self.dropped)

    def discard(self) -> None:
        """Give the file up: nothing of it stays."""
        try:
            self._stream.close()
        finally:
            self._staged.unlink(missing_ok=True)
