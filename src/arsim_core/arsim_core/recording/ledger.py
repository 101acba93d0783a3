"""Proving a recording complete while the simulation runs.

The simulation's own nodes count what they publish and report their counts after every
``REPORT_EVERY_FRAMES``-th frame (``PublishedCounts``: who, up to which sim time, how many
messages on which topic). The recorder counts what its bag holds. A sim time is held once every
node has reported up to it and every count it reported is matched by the bag; the bridge never
lets /clock run further ahead of that than the frames between two reports and the one being
rendered (``engine.lockstep.RECORDING_LAG_FRAMES``), so at any real-time factor the bag misses
nothing those nodes published.

Counts are totals since a node started, so a report that is lost costs nothing: the next one
says everything the lost one said.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from arsim_core.config.scenario import Scenario

PUBLISHED_TOPIC: Final = '/arsim/published'  # the nodes' reports
STATUS_TOPIC: Final = '/arsim/recording'  # the recorder's progress
INTERNAL_TOPICS: Final = frozenset({PUBLISHED_TOPIC, STATUS_TOPIC})  # never recorded
BRIDGE: Final = 'bridge'
# Each report is a message for its node to send and for the recorder to take, three or more a
# frame between them: reporting after every fourth frame instead of every one cut the CPU that
# recording adds by about a third, and raised record_rtf_ratio from 0.79 to 0.85
# (bench/bench_record.py). The bag is proven complete in steps of 0.1 s of sim time at 40 Hz.
REPORT_EVERY_FRAMES: Final = 4


def report_due(time_ns: int, period_ns: int) -> bool:
    """Whether the nodes report after the frame at ``time_ns`` (t=0, the start, always)."""
    return time_ns % (REPORT_EVERY_FRAMES * period_ns) == 0


def dynamics_publisher(car: str) -> str:
    return f'{car}/dynamics'


def sensors_publisher(car: str) -> str:
    return f'{car}/sensors'


def counted_publishers(scenario: Scenario) -> frozenset[str]:
    """Every node whose reports a recording of ``scenario`` waits for: the bridge, and per car
    its sensor republisher and (unless the car's model runs in the user's node) its dynamics.
    Drivers are not among them: they answer the simulation rather than being part of it."""
    names = {BRIDGE}
    for car in scenario.cars:
        names.add(sensors_publisher(car.name))
        if not car.external_dynamics:
            names.add(dynamics_publisher(car.name))
    return frozenset(names)


@dataclass(frozen=True)
class Report:
    """One node's counts: every message it published for sim times up to ``stamp_ns``."""

    publisher: str
    stamp_ns: int
    counts: Mapping[str, int]  # topic -> messages since the node started
    types: Mapping[str, str]  # topic -> type, e.g. sensor_msgs/msg/LaserScan


@dataclass
class Completeness:
    """Which sim time a bag holds everything up to, from the nodes' reports and the bag's
    own counts.

    Counting starts with ``start``, when the recorder is subscribed to every counted topic:
    what was published before it could subscribe (start-up messages at t=0) is not asked for.
    """

    expected: frozenset[str]  # the publishers to hear from (``counted_publishers``)
    reports: dict[str, Report] = field(default_factory=dict)
    claimed: dict[str, int] = field(default_factory=dict)  # topic -> messages, every node's
    before_start: dict[str, int] | None = None  # topic -> messages published, never received
    held_ns: int | None = None  # None until started
    caught_up: bool = False  # every report so far is held: nothing to look at until the next

    def add(self, report: Report) -> None:
        """Take a node's report in place of its last (one node's reports arrive in order)."""
        previous = self.reports.get(report.publisher)
        if previous is not None:
            for topic, count in previous.counts.items():
                self.claimed[topic] -= count
        self.reports[report.publisher] = report
        for topic, count in report.counts.items():
            self.claimed[topic] = self.claimed.get(topic, 0) + count
        self.caught_up = False

    def silent(self) -> list[str]:
        """The expected publishers that have not reported yet."""
        return sorted(self.expected - self.reports.keys())

    def topics(self) -> dict[str, str]:
        """Every topic reported on, with its type."""
        return {topic: kind for report in self.reports.values()
                for topic, kind in report.types.items()}

    def publishers_of(self, topic: str) -> int:
        """How many reporting nodes publish on ``topic``."""
        return sum(topic in report.counts for report in self.reports.values())

    def start(self, held: Mapping[str, int]) -> None:
        """Count from now on; ``held``: the bag's messages per topic so far."""
        self.before_start = {topic: max(0, count - held.get(topic, 0))
                             for topic, count in self.claimed.items()}

    def missing(self, held: Mapping[str, int],
                recorded: Callable[[str], bool]) -> dict[str, tuple[int, int]]:
        """Topics the bag holds fewer messages of than were published since the start:
        topic -> (held, published). ``recorded(topic)``: whether the bag records that topic."""
        skipped = self.before_start or {}
        return {topic: (held.get(topic, 0), count - skipped.get(topic, 0))
                for topic, count in self.claimed.items()
                if count - skipped.get(topic, 0) > held.get(topic, 0) and recorded(topic)}

    def update(self, held: Mapping[str, int], recorded: Callable[[str], bool]) -> int | None:
        """The sim time the bag now holds everything up to (it never goes back), or None
        before the start."""
        if self.before_start is None or not self.expected <= self.reports.keys():
            return None
        if not self.missing(held, recorded):
            stamp = min(self.reports[name].stamp_ns for name in self.expected)
            self.held_ns = stamp if self.held_ns is None else max(self.held_ns, stamp)
            self.caught_up = True
        return self.held_ns
