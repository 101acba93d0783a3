"""The benchmark smoke tests carry the ``bench_smoke`` mark: they start many simulations, so
``pytest -m 'not bench_smoke'`` leaves them out of a quick run."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line('markers', 'bench_smoke: runs a benchmark module in smoke mode')
