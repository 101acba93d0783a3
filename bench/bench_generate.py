"""What ``arsim-dataset generate`` makes per second: ``dataset_labelled_frames_per_s``, camera
frames with their 2D ground truth (a semantic image and ``/camera/detections``) written per
second of wall time by a batch of runs on every CPU, from the command's start (process start-up
and the renderers' compilation included) to its end; and ``dataset_bag_mib_per_frame``, the
bag bytes per labelled frame (the scans, odometry, TF and clock of the frames between
included).

The car is the default F1TENTH car with a 640x480 camera (colour, semantic, depth at 20 Hz)
and the 3D ground truth, on arsim_ring with cones, driven by the autopilot; each run draws its
friction and scan noise.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from benchkit import Row, main, sized, take_smoke_flag  # noqa: E402
from e2e.test_dataset_export import coned_track  # noqa: E402
from simharness import installed_resources  # noqa: E402

RUNS = 4
DURATION_S = 15.0
ROWS = (Row('dataset_labelled_frames_per_s', 'frames/s'), Row('dataset_bag_mib_per_frame', 'MiB'))
CAMERA = {'type': 'camera', 'position': [0.2, 0.0, 0.2], 'rate_hz': 20.0, 'width': 640,
          'height': 480, 'fov_rad': 1.5, 'outputs': ['rgb', 'semantic', 'depth']}


def run() -> list[tuple[str, float, str]]:
    runs, duration_s = sized(RUNS, 1), sized(DURATION_S, 1.0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        coned_track(folder / 'track')
        profile = yaml.safe_load((installed_resources() / 'config' / 'cars' / 'f1tenth.yaml')
                                 .read_text())
        profile['Sensors']['camera'] = CAMERA
        profile['Sensors']['objects'] = {'type': 'objects', 'rate_hz': 20.0}
        (folder / 'car.yaml').write_text(yaml.safe_dump(profile))
        spec = folder / 'spec.yaml'
        spec.write_text(yaml.safe_dump({
            'runs': runs, 'duration_s': duration_s, 'track': 'track', 'profile': 'car.yaml',
            'randomization': {'friction': [0.9, 1.1], 'scan_noise_std': [0.0, 0.01]}}))
        started = time.monotonic()
        done = subprocess.run([sys.executable, '-m', 'arsim_launch.dataset_cli', 'generate',
                               str(spec), str(folder / 'out')], capture_output=True, text=True,
                              check=False)
        elapsed = time.monotonic() - started
        if done.returncode != 0:
            raise RuntimeError(done.stdout + done.stderr)
        runs = json.loads((folder / 'out' / 'manifest.json').read_text())['runs']
        labelled = sum(r['result']['messages']['/camera/detections'] for r in runs)
        size = sum(r['result']['bag_bytes'] for r in runs)
    print(f'[bench_generate] {runs} runs of {duration_s:g} s: {labelled} labelled frames in '
          f'{elapsed:.1f} s, {size / 2**20:.0f} MiB', file=sys.stderr)
    return [('dataset_labelled_frames_per_s', labelled / elapsed, 'frames/s'),
            ('dataset_bag_mib_per_frame', size / 2**20 / labelled, 'MiB')]


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
