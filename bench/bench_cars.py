"""Real-time factor with 1, 2, 4 and 8 cars, each with a 2D LiDAR, in synchronous mode.

Every car's scans are received by a subscriber in another process; the figure is the sim time
spanned by the received scans over the wall time it took (see bench_rtf).
"""

from __future__ import annotations

import sys

from bench_rtf import measure_rtf
from benchkit import Row, main, sized, take_smoke_flag

CAR_COUNTS = (1, 2, 4, 8)
MEASURE_S = 10.0
ROWS = tuple(Row(f'rtf_cars_{count}', 'x_realtime') for count in CAR_COUNTS)


def car_names(count: int) -> list[str]:
    return ['ego'] + [f'car{i}' for i in range(1, count)]


def run() -> list[tuple[str, float, str]]:
    figures = []
    for count in CAR_COUNTS:
        names = car_names(count)
        cars = [{'name': name, 'profile': 'f1tenth'} for name in names]
        topics = tuple('/scan' if name == 'ego' else f'/{name}/scan' for name in names)
        rtf, result = measure_rtf({'cars': cars}, topics, measure_s=sized(MEASURE_S, 1.0))
        print(f'[bench] rtf_cars_{count}: {result}', file=sys.stderr)
        figures.append((f'rtf_cars_{count}', rtf, 'x_realtime'))
    return figures


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
