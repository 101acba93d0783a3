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
from benchkit import Row, main, skip_reason, take_smoke_flag  # noqa: E402
from simharness import free_port  # noqa: E402

HOST = ROOT / 'unity' / 'host' / 'bin' / 'arsim-unity-host.exe'
CONFIGS = ('hokuyo_1080x1', 'os1_1024x32')
ROWS = tuple(Row(f'{prefix}_{name}', 'Hz', ('mono',)) for name in CONFIGS
             for prefix in ('unity_host_rate', 'unity_host_embedded_rate'))


def host_backend() -> dict:
    """Scenario ``backend`` settings that start the console host on a free loopback port."""
    subprocess.run(['bash', str(ROOT / 'unity' / 'build.sh'), 'host'], check=True,
                   stdout=subprocess.DEVNULL)
    return {'kind': 'unity', 'executable': str(HOST),
            'address': f'tcp://127.0.0.1:{free_port()}'}


def run(names: list[str] | None = None) -> list[tuple[str, float, str]]:
    if skip_reason('bench_unity_host', 'mono'):
        return []
    figures = []
    for name in names or CONFIGS:
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
    chosen = take_smoke_flag() or list(CONFIGS)
    sys.exit(main(lambda: run(chosen), [row for row in ROWS
                                        if row.name.rsplit('_rate_', 1)[1] in chosen]))
