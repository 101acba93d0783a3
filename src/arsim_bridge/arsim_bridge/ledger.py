"""Counting what a simulation node publishes, so that a recording can prove it lost nothing
(``arsim_core.recording.ledger``). Only a run that records counts; otherwise nothing changes.

A node opts in by deriving from :class:`CountingNode` and calling ``start_counting`` before it
makes its publishers: from then on every publisher it makes (its sensors' included) counts
its messages, and ``report_published`` sends the totals: once when every publisher is made,
then after every frame a report is due for (``REPORT_EVERY_FRAMES``). Reports are latched and
one deep, since each holds all the earlier ones: a recorder that starts late still hears every
node's last.
"""

from __future__ import annotations

from typing import Any

from rclpy.node import Node
from rclpy.publisher import Publisher

from arsim_bridge import qos
from arsim_bridge.common import to_time
from arsim_core.config.scenario import Scenario
from arsim_core.recording.ledger import PUBLISHED_TOPIC, report_due
from arsim_msgs.msg import PublishedCounts


def type_name(msg_type: Any) -> str:
    """``sensor_msgs/msg/LaserScan`` for the class LaserScan."""
    return f'{msg_type.__module__.split(".")[0]}/msg/{msg_type.__name__}'


class Ledger:
    """One node's message counts per topic, and their reports."""

    def __init__(self, node: Node, publisher: str, period_ns: int) -> None:
        self.period_ns = period_ns
        self.topics: list[str] = []
        self.types: list[str] = []
        self.counts: list[int] = []
        self._pub = node.create_publisher(PublishedCounts, PUBLISHED_TOPIC, qos.LATCHED)
        self._report = PublishedCounts(publisher=publisher)

    def count(self, publisher: Publisher, msg_type: Any) -> CountedPublisher:
        topic = publisher.topic_name
        if topic not in self.topics:
            self.topics.append(topic)
            self.types.append(type_name(msg_type))
            self.counts.append(0)
        return CountedPublisher(publisher, self.counts, self.topics.index(topic))

    def report(self, time_ns: int) -> None:
        if not report_due(time_ns, self.period_ns):
            return
        report = self._report
        report.stamp = to_time(time_ns)
        report.topics, report.types, report.counts = self.topics, self.types, self.counts
        self._pub.publish(report)


class CountedPublisher:
    """A publisher that adds each message it sends to its ledger's count."""

    __slots__ = ('_counts', '_index', '_publisher')

    def __init__(self, publisher: Publisher, counts: list[int], index: int) -> None:
        self._publisher, self._counts, self._index = publisher, counts, index

    def publish(self, msg: Any) -> None:
        self._publisher.publish(msg)
        self._counts[self._index] += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._publisher, name)


class CountingNode(Node):
    """A node whose publishers count their messages when the run records."""

    ledger: Ledger | None = None

    def start_counting(self, scenario: Scenario, publisher: str) -> None:
        """Count from here on, as ``publisher`` (``arsim_core.recording.ledger``), if
        ``scenario`` records."""
        if scenario.recording.directory is not None:
            self.ledger = Ledger(self, publisher, scenario.frame_period_ns)

    def create_publisher(self, msg_type: Any, topic: str, qos_profile: Any,
                         **kwargs: Any) -> Any:
        publisher = super().create_publisher(msg_type, topic, qos_profile, **kwargs)
        return publisher if self.ledger is None else self.ledger.count(publisher, msg_type)

    def report_published(self, time_ns: int) -> None:
        """Everything this node publishes for sim times up to ``time_ns`` is out: say so if a
        report is due after that frame."""
        if self.ledger is not None:
            self.ledger.report(time_ns)
