"""Making a bag whole after its recorder was killed (SIGKILL, a power cut).

The recorder's last MCAP file is then unfinished: it reads with a stream reader up to its last
complete chunk, but readers that need its index (rosbags, random access) refuse it. Recovery
copies what it holds into a complete file, ``<bag>_<k>.mcap`` beside the others, and rewrites
``metadata.yaml`` with the counts the files really hold, as ``ros2 bag reindex`` would. A SQLite
file is opened by SQLite itself, which rolls back the transaction the kill cut short, and moved
beside the others.

The bag may come from anywhere, so its ``metadata.yaml`` is checked before anything is read or
moved: every file it names must be a regular file inside the bag (the unfinished one in the
staging folder the recorder writes it in), and only that staging folder is ever removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.records import Channel, Message, Schema
from mcap.stream_reader import StreamReader
from mcap.writer import CompressionType, Writer

from arsim_core.log_limit import clip
from arsim_core.recording import sqlite_file
from arsim_core.recording.bag import METADATA, RecordingError, write_metadata
from arsim_core.recording.metadata import BagMetadata, load_metadata

T = TypeVar('T')
MCAP_ERRORS: Final = (McapError, EOFError, ValueError, KeyError, struct.error)


def recover(bag: Path) -> dict[str, int]:
    """Complete the unfinished last file of ``bag``; the messages per topic the bag holds.
    A bag that needs nothing is left as it is."""
    bag = Path(bag)
    meta: BagMetadata = load_metadata(bag)
    files = meta.files
    if meta.staging is not None:
        last = files[-1]
        staged = meta.paths[-1]
        complete = meta.root / f'{meta.staging.name.lstrip(".")}{meta.suffix}'
        if meta.storage == 'mcap':
            recovering = meta.staging / f'{complete.name}.recovering'
            recovering.unlink(missing_ok=True)  # a link left there is not followed
            last['message_count'], first, end = _copy_complete(staged, recovering)
        else:
            recovering = staged
            last['message_count'], first, end = _sqlite(sqlite_file.settle, staged)
        try:
            os.replace(recovering, complete)  # over a link named so, never through it
            shutil.rmtree(meta.staging)
        except OSError as exc:
            msg = f'{bag}: cannot move the recovered file to {complete.name} ({exc})'
            raise RecordingError(msg) from exc
        last['path'] = complete.name
        last['starting_time'] = {'nanoseconds_since_epoch': first}
        last['duration'] = {'nanoseconds': max(0, end - first)}
        meta.paths[-1] = complete
    counts = Counter[str]()
    for path in meta.paths:
        counts.update(_topic_counts(path) if meta.storage == 'mcap'
                      else _sqlite(sqlite_file.topic_counts, path))
    info = meta.info
    info['relative_file_paths'] = [entry['path'] for entry in files]
    info['message_count'] = sum(counts.values())
    for topic in meta.topics:
        topic['message_count'] = counts[topic['topic_metadata']['name']]
    starts = [entry['starting_time']['nanoseconds_since_epoch'] for entry in files]
    ends = [s + entry['duration']['nanoseconds'] for s, entry in zip(starts, files, strict=True)]
    info['starting_time'] = {'nanoseconds_since_epoch': min(starts)}
    info['duration'] = {'nanoseconds': max(ends) - min(starts)}
    write_metadata(bag, meta.document)
    return dict(counts)


def _copy_complete(source: Path, target: Path) -> tuple[int, int, int]:
    """Every record ``source`` holds up to its last complete chunk, into a new complete MCAP
    file ``target``; (messages, first and last log time)."""
    schemas: dict[int, int] = {}
    channels: dict[int, int] = {}
    count, first, end = 0, 0, 0
    try:
        with source.open('rb') as stream, target.open('xb') as out:
            writer = Writer(out, compression=CompressionType.NONE)
            writer.start(profile='ros2', library='arsim recover')
            with contextlib.suppress(*MCAP_ERRORS):
                for record in StreamReader(stream).records:
                    if isinstance(record, Schema):
                        schemas[record.id] = writer.register_schema(record.name, record.encoding,
                                                                    record.data)
                    elif isinstance(record, Channel):
                        channels[record.id] = writer.register_channel(
                            record.topic, record.message_encoding,
                            schemas.get(record.schema_id, 0), dict(record.metadata))
                    elif isinstance(record, Message) and record.channel_id in channels:
                        writer.add_message(channels[record.channel_id], record.log_time,
                                           record.data, record.publish_time, record.sequence)
                        first = record.log_time if not count else min(first, record.log_time)
                        end, count = max(end, record.log_time), count + 1
            writer.finish()  # type: ignore[no-untyped-call]
    except OSError as exc:
        msg = f'{source}: cannot copy it into {target.name} ({exc.strerror or exc})'
        raise RecordingError(msg) from exc
    return count, first, end


def _topic_counts(path: Path) -> Counter[str]:
    """Messages per topic of a complete MCAP file, from its summary."""
    try:
        with path.open('rb') as stream:
            summary: Any = make_reader(stream).get_summary()
            if summary is None or summary.statistics is None:
                msg = f'{path}: no summary to count its messages from'
                raise RecordingError(msg)
            return Counter({str(summary.channels[channel].topic): int(count) for channel, count
                            in summary.statistics.channel_message_counts.items()})
    except (OSError, *MCAP_ERRORS) as exc:
        msg = f'{path}: not a complete MCAP file ({exc})'
        raise RecordingError(msg) from exc


def _sqlite(read: Callable[[Path], T], path: Path) -> T:
    try:
        return read(path)
    except sqlite_file.SQLITE_ERRORS as exc:
        msg = f'{path}: not a readable SQLite bag file ({clip(str(exc), 200)})'
        raise RecordingError(msg) from exc


__all__ = ['METADATA', 'recover']
