"""What recording costs: ``record_rtf_ratio``, the real-time factor of the default scenario with
one 640x480 camera added (as ``rtf_default_sync`` measures it) while ``record:`` writes every
topic to an MCAP bag, divided by the same without recording. Runs alternate, with and without,
and the ratio is of the medians, so the machine's drift falls on both sides alike.

``record_lost_messages``: scans and camera images the bag lacks, or holds twice, against its
own ``/clock`` (the most over the recorded runs), read from the messages' header stamps; the
last frames, still on their way when a run stops, are not counted.
"""

from __future__ import annotations

import contextlib
import statistics
import struct
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml
from mcap.exceptions import EndOfFile
from mcap.records import Channel, Message
from mcap.stream_reader import StreamReader

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from bench_rtf import measure_rtf  # noqa: E402
from benchkit import Row, main, sized, take_smoke_flag  # noqa: E402
from simharness import installed_resources  # noqa: E402

from arsim_core.engine.lockstep import RECORDING_CLOCK_LEAD_FRAMES  # noqa: E402

PAIRS = 3
ROWS = (Row('record_rtf_ratio', 'ratio'), Row('rtf_default_sync_camera_recording', 'x_realtime'),
        Row('record_lost_messages', 'messages'))
CAMERA = {'type': 'camera', 'position': [0.2, 0.0, 0.2], 'rate_hz': 20.0, 'width': 640,
          'height': 480, 'fov_rad': 1.5, 'outputs': ['rgb']}


def profile_with_camera(folder: Path) -> Path:
    profile = yaml.safe_load((installed_resources() / 'config' / 'cars' / 'f1tenth.yaml')
                             .read_text())
    profile['Sensors']['camera'] = CAMERA
    path = folder / 'f1tenth_camera.yaml'
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    return path


def bag_counts(bag: Path) -> dict[str, int]:
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    return {t['topic_metadata']['name']: t['message_count']
            for t in info['topics_with_message_count']}


def header_stamps(bag: Path, topics: set[str]) -> dict[str, list[int]]:
    """The header stamps [ns] of every message of ``topics`` (and /clock's time), read from
    the CDR without deserialising: a header (or a Clock's time) is the first field."""
    stamps: dict[str, list[int]] = {topic: [] for topic in topics | {'/clock'}}
    channels: dict[int, str] = {}
    (path,) = bag.glob('*.mcap')
    with path.open('rb') as stream, contextlib.suppress(EndOfFile):
        for record in StreamReader(stream).records:
            if isinstance(record, Channel):
                channels[record.id] = record.topic
            elif isinstance(record, Message) and channels[record.channel_id] in stamps:
                sec, nanosec = struct.unpack_from('<iI', record.data, 4)
                stamps[channels[record.channel_id]].append(sec * 1_000_000_000 + nanosec)
    return stamps


def lost_messages(bag: Path, topics: dict[str, int]) -> int:
    """Messages of ``topics`` (topic -> frames per message) missing from the bag, or in it
    twice, over every frame but the last few."""
    stamps = header_stamps(bag, set(topics))
    clocks = stamps.pop('/clock')
    period = clocks[2] - clocks[1]
    last = clocks[-1] - RECORDING_CLOCK_LEAD_FRAMES * period  # sent, not proven recorded
    lost = 0
    for topic, every in topics.items():
        expected = Counter(t for t in clocks  # t=0 is only a clock: nothing is rendered then
                           if 0 < t <= last and (t // period) % every == 0)
        held = Counter(t for t in stamps[topic] if t <= last)
        lost += sum(((expected - held) + (held - expected)).values())
    return lost


def run() -> list[tuple[str, float, str]]:
    plain, recorded, missing = [], [], []
    with tempfile.TemporaryDirectory(prefix='arsim-bench-record-') as tmp:
        settings = {'cars': [{'name': 'ego', 'profile': str(profile_with_camera(Path(tmp)))}]}
        for pair in range(sized(PAIRS, 1)):
            rtf, _result = measure_rtf(settings)
            plain.append(rtf)
            bag = Path(tmp) / f'bag{pair}'
            rtf, _result = measure_rtf({**settings, 'recording': {'directory': str(bag)}})
            recorded.append(rtf)
            counts = bag_counts(bag)
            missing.append(lost_messages(bag, {'/scan': 1, '/camera/image_raw': 2}))
            size = sum(f.stat().st_size for f in bag.iterdir()) / 2**20
            print(f'[bench] rtf without recording {plain[-1]:.2f}, recording {recorded[-1]:.2f}; '
                  f'bag {size:.0f} MiB, /clock {counts["/clock"]}, /scan {counts["/scan"]}, '
                  f'/camera/image_raw {counts.get("/camera/image_raw", 0)}, lost {missing[-1]}',
                  file=sys.stderr)
    return [('record_rtf_ratio', statistics.median(recorded) / statistics.median(plain), 'ratio'),
            ('rtf_default_sync_camera_recording', statistics.median(recorded), 'x_realtime'),
            ('record_lost_messages', max(missing), 'messages')]


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
