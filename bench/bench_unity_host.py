"""The full ROS pipeline's rate with the C# console host (unity/host) as the backend, beside the
embedded backend's in the same run: bench_sensors' configurations, measured the same way, the
host started by the launcher from ``backend: {kind: unity, executable: ...}``. No goal: the host
is the reference that the C# side speaks protocol v1; this says what it costs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(ROOT / 'tests'))

import bench_sensors  # noqa: E402
from simharness import free_port  # noqa: E402

HOST = ROOT / 'unity' / 'host' / 'bin' / 'arsim-unity-host.exe'
ROWS = ('hokuyo_1080x1', 'os1_1024x32')


def host_backend() -> dict:
    """Scenario ``backend`` settings that start the console host on a free loopback port."""
    subprocess.run(['bash', str(ROOT / 'unity' / 'build.sh'), 'host'], check=True,
                   stdout=subprocess.DEVNULL)
    return {'kind': 'unity', 'executable': str(HOST),
            'address': f'tcp://127.0.0.1:{free_port()}'}


def run(names: list[str] | None = None) -> list[tuple[str, float, str]]:
    figures = []
    for name in names or ROWS:
        rates = {}
        for label, backend in (('embedded', None), ('host', host_backend())):
            result = bench_sensors.measure(name, bench_sensors.CONFIGS[name], backend=backend)
            rates[label] = min(t['hz'] for t in result['topics'].values())
        print(f'[bench] {name}: C# console host {rates["host"]:.1f} Hz, embedded backend '
              f'{rates["embedded"]:.1f} Hz (x{rates["host"] / rates["embedded"]:.2f})',
              file=sys.stderr, flush=True)
        figures += [(f'unity_host_rate_{name}', rates['host'], 'Hz'),
                    (f'unity_host_embedded_rate_{name}', rates['embedded'], 'Hz')]
    return figures


if __name__ == '__main__':
    for figure, value, unit in run(sys.argv[1:] or None):
        print(f'BENCH {figure} {value:.4g} {unit}', flush=True)
