"""What recording costs: ``record_rtf_ratio``, the real-time factor of the default scenario with
one 640x480 camera added (as ``rtf_default_sync`` measures it) while ``record:`` writes every
topic to an MCAP bag, divided by the same without recording. Runs alternate, with and without,
and the ratio is of the medians, so the machine's drift falls on both sides alike.

``record_scans_missing``: how many frames' scans the bag lacks against its own ``/clock``
(the median over the recorded runs); the frames still in flight when a run stops count too.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import yaml

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from bench_rtf import measure_rtf  # noqa: E402
from simharness import installed_resources  # noqa: E402

PAIRS = 3
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


def run() -> list[tuple[str, float, str]]:
    plain, recorded, missing = [], [], []
    with tempfile.TemporaryDirectory(prefix='arsim-bench-record-') as tmp:
        settings = {'cars': [{'name': 'ego', 'profile': str(profile_with_camera(Path(tmp)))}]}
        for pair in range(PAIRS):
            rtf, _result = measure_rtf(settings)
            plain.append(rtf)
            bag = Path(tmp) / f'bag{pair}'
            rtf, _result = measure_rtf({**settings, 'recording': {'directory': str(bag)}})
            recorded.append(rtf)
            counts = bag_counts(bag)
            missing.append(counts['/clock'] - counts['/scan'])
            size = sum(f.stat().st_size for f in bag.iterdir()) / 2**20
            print(f'[bench] rtf without recording {plain[-1]:.2f}, recording {recorded[-1]:.2f}; '
                  f'bag {size:.0f} MiB, /clock {counts["/clock"]}, /scan {counts["/scan"]}, '
                  f'/camera/image_raw {counts.get("/camera/image_raw", 0)}', file=sys.stderr)
    return [('record_rtf_ratio', statistics.median(recorded) / statistics.median(plain), 'ratio'),
            ('rtf_default_sync_camera_recording', statistics.median(recorded), 'x_realtime'),
            ('record_scans_missing', statistics.median(missing), 'frames')]


if __name__ == '__main__':
    for name, value, unit in run():
        print(f'BENCH {name} {value:.4g} {unit}')
