"""Making a bag whole after its recorder was killed (SIGKILL, a power cut).

The recorder's last MCAP file is then unfinished: it reads with a stream reader up to its last
complete chunk, but readers that need its index (rosbags, random access) refuse it. Recovery
copies what it holds into a complete file, ``<bag>_<k>.mcap`` beside the others, and rewrites
``metadata.yaml`` with the counts the files really hold, as ``ros2 bag reindex`` would.
"""

from __future__ import annotations

import contextlib
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.records import Channel, Message, Schema
from mcap.stream_reader import StreamReader
from mcap.writer import CompressionType, Writer

from arsim_core.recording.bag import METADATA, RecordingError, write_metadata


def recover(bag: Path) -> dict[str, int]:
    """Complete the unfinished last file of ``bag``; the messages per topic the bag holds.
    A bag that needs nothing is left as it is."""
    bag = Path(bag)
    try:
        document = yaml.safe_load((bag / METADATA).read_text())
        info = document['rosbag2_bagfile_information']
        files = info['files']
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        msg = f'{bag}: not a bag arsim recorded ({METADATA}: {exc})'
        raise RecordingError(msg) from exc
    last = files[-1]
    unfinished = bag / last['path']
    if unfinished.parent != bag:  # still in the folder it was written in
        complete = bag / f'{unfinished.parent.name.lstrip(".")}{unfinished.suffix}'
        last['message_count'], first, end = _copy_complete(unfinished, complete)
        last['path'] = complete.name
        last['starting_time'] = {'nanoseconds_since_epoch': first}
        last['duration'] = {'nanoseconds': max(0, end - first)}
        shutil.rmtree(unfinished.parent)
    counts = Counter[str]()
    for entry in files:
        counts.update(_topic_counts(bag / entry['path']))
    info['relative_file_paths'] = [entry['path'] for entry in files]
    info['message_count'] = sum(counts.values())
    for topic in info['topics_with_message_count']:
        topic['message_count'] = counts[topic['topic_metadata']['name']]
    starts = [entry['starting_time']['nanoseconds_since_epoch'] for entry in files]
    ends = [s + entry['duration']['nanoseconds'] for s, entry in zip(starts, files, strict=True)]
    info['starting_time'] = {'nanoseconds_since_epoch': min(starts)}
    info['duration'] = {'nanoseconds': max(ends) - min(starts)}
    write_metadata(bag, document)
    return dict(counts)


def _copy_complete(source: Path, target: Path) -> tuple[int, int, int]:
    """Every record ``source`` holds up to its last complete chunk, into a complete MCAP
    file; (messages, first and last log time)."""
    schemas: dict[int, int] = {}
    channels: dict[int, int] = {}
    count, first, end = 0, 0, 0
    with source.open('rb') as stream, target.open('wb') as out:
        writer = Writer(out, compression=CompressionType.NONE)
        writer.start(profile='ros2', library='arsim recover')
        with contextlib.suppress(McapError, EOFError, ValueError):
            for record in StreamReader(stream).records:
                if isinstance(record, Schema):
                    schemas[record.id] = writer.register_schema(record.name, record.encoding,
                                                                record.data)
                elif isinstance(record, Channel):
                    channels[record.id] = writer.register_channel(
                        record.topic, record.message_encoding, schemas.get(record.schema_id, 0),
                        dict(record.metadata))
                elif isinstance(record, Message) and record.channel_id in channels:
                    writer.add_message(channels[record.channel_id], record.log_time,
                                       record.data, record.publish_time, record.sequence)
                    first = record.log_time if not count else min(first, record.log_time)
                    end, count = max(end, record.log_time), count + 1
        writer.finish()  # type: ignore[no-untyped-call]
    return count, first, end


def _topic_counts(path: Path) -> Counter[str]:
    """Messages per topic of a complete MCAP file, from its summary."""
    with path.open('rb') as stream:
        summary: Any = make_reader(stream).get_summary()
    if summary is None or summary.statistics is None:
        msg = f'{path}: no summary to count its messages from'
        raise RecordingError(msg)
    return Counter({summary.channels[channel].topic: count for channel, count
                    in summary.statistics.channel_message_counts.items()})
