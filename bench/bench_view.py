"""What watching costs: ``view_rtf_ratio``, the default scenario's real-time factor in
synchronous mode (as ``rtf_default_sync`` measures it) with ``view: web`` and the page open in
headless Chromium, divided by the same without a view. Runs alternate, with and without,
and the ratio is of the medians, so the machine's drift falls on both sides alike.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from bench_rtf import measure_rtf  # noqa: E402
from benchkit import Row, main, sized, skip_reason, take_smoke_flag  # noqa: E402
from browser import available, headless_chromium, wait_for  # noqa: E402
from simharness import Simulation, free_port  # noqa: E402

PAIRS = 3
ROWS = (Row('view_rtf_ratio', 'ratio', ('chromium',)),
        Row('rtf_default_sync_view_web', 'x_realtime', ('chromium',)))


def page_open(port: int) -> Callable[[Simulation], AbstractContextManager[None]]:
    """A watcher for measure_rtf: headless Chromium showing the page of the simulation on
    ``port``, its track drawn and frames arriving, before the measurement starts."""

    @contextmanager
    def watch(sim: Simulation) -> Iterator[None]:
        if not sim.wait_for_log('web view: open', 90.0):
            msg = f'the web view did not start:\n{sim.log}'
            raise RuntimeError(msg)
        with tempfile.TemporaryDirectory(prefix='arsim-chromium-') as profile, \
                headless_chromium(Path(profile)) as browser:
            browser.get(f'http://127.0.0.1:{port}/')
            wait_for(browser, 'window.arsimView.trackLoaded && window.arsimView.frames > 5', 90.0)
            yield
            frames = browser.execute_script('return window.arsimView.frames')
            print(f'[bench] the page drew {frames} frames', file=sys.stderr)

    return watch


def run() -> list[tuple[str, float, str]]:
    if skip_reason('bench_view', 'chromium') or not available():
        return []
    without, viewed = [], []
    for _ in range(sized(PAIRS, 1)):
        rtf, _result = measure_rtf()
        without.append(rtf)
        port = free_port()
        rtf, _result = measure_rtf({'view': {'kind': 'web', 'port': port}},
                                   watcher=page_open(port))
        viewed.append(rtf)
        print(f'[bench] rtf without a view {without[-1]:.2f}, with the page open '
              f'{viewed[-1]:.2f}', file=sys.stderr)
    return [('view_rtf_ratio', statistics.median(viewed) / statistics.median(without), 'ratio'),
            ('rtf_default_sync_view_web', statistics.median(viewed), 'x_realtime')]


if __name__ == '__main__':
    take_smoke_flag()
    sys.exit(main(run, ROWS))
