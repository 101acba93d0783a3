"""LogLimit: lines caused by outside input are clipped and rate-limited, with a count of what
was held back."""

from __future__ import annotations

import pytest

from arsim_core.log_limit import LogLimit, TokenBucket, clip


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_clip_keeps_short_text_and_cuts_long_text_saying_how_long() -> None:
    assert clip('short', 10) == 'short'
    assert clip('x' * 4096, 10) == 'x' * 10 + '... (4096 characters)'


def test_a_burst_passes_then_one_line_per_period_with_the_count_held_back() -> None:
    clock = Clock()
    limit = LogLimit(burst=3, period_s=1.0, max_chars=20, clock=clock)
    admitted = [limit.admit(f'bad request {i}') for i in range(10_000)]
    assert admitted[:3] == ['bad request 0', 'bad request 1', 'bad request 2']
    assert all(line is None for line in admitted[3:])
    assert limit.suppressed == 9_997
    clock.now = 1.0
    assert limit.admit('bad request again') == 'bad request again (9997 similar lines suppressed)'
    assert limit.admit('and again') is None
    clock.now = 100.0  # the bucket refills to the burst, not beyond
    assert [limit.admit('x') for _ in range(4)] == ['x (1 similar lines suppressed)', 'x', 'x',
                                                    None]


def test_admitted_lines_are_clipped() -> None:
    line = LogLimit(max_chars=8).admit('{"op": ' + '[' * 4000)
    assert line is not None and line.startswith('{"op": [... (') and len(line) < 40


@pytest.mark.parametrize('arguments', [{'burst': 0}, {'period_s': 0.0}, {'max_chars': 0},
                                       {'period_s': float('nan')}])
def test_nonsense_limits_are_refused(arguments: dict[str, float]) -> None:
    with pytest.raises(ValueError, match='expected burst >= 1'):
        LogLimit(**arguments)  # type: ignore[arg-type]


def test_a_token_bucket_allows_a_burst_then_one_event_per_period() -> None:
    clock = Clock()
    bucket = TokenBucket(burst=2, period_s=0.5, clock=clock)
    assert [bucket.take() for _ in range(4)] == [True, True, False, False]
    clock.now = 0.5
    assert [bucket.take() for _ in range(2)] == [True, False]
