"""The recorder (``record:=DIR``, or ``recording:`` in a scenario): the simulation's topics into
a rosbag2 bag that ``ros2 bag info`` and ``ros2 bag play`` read (docs/datasets.md).

Every selected topic is subscribed to as the CDR bytes it travels in (nothing is deserialised),
with the durability its publishers offer: latched topics (/tf_static, /map,
robot_description) are caught whenever they were sent and recorded as latched. Topics are
looked for every second of wall time, so one that appears later (a stack's /drive) is recorded
from then on. A message is stamped with the sim time it arrived at (/clock), as
``ros2 bag record --use-sim-time`` does.

Nothing the simulation publishes is lost: its nodes report how many messages they published
(``arsim_core.recording.ledger``), the recorder says up to which sim time its bag holds all of
them (``/arsim/recording``), and the bridge does not move /clock on before it does. The
recorder says it is ready once it is subscribed to every topic those nodes publish, and the
first frame waits for that.

SIGINT and SIGTERM close the bag, and the summary (messages per topic, size) is logged; after
SIGKILL the metadata written every second keeps the bag readable. A bag
that cannot be written to (a full disk) stops the recorder, and with it the run, with one line
naming the bag.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock as ClockMessage

from arsim_bridge import qos
from arsim_bridge.common import declare_scenario, run_node, to_ns, to_time
from arsim_bridge.msg_definitions import message_class, message_text
from arsim_core.errors import ArsimError
from arsim_core.log_limit import LogLimit
from arsim_core.process.memory import keep_large_buffers
from arsim_core.recording.bag import (
    BagSummary,
    BagWriter,
    RecordingError,
    recorded_qos,
)
from arsim_core.recording.ledger import (
    INTERNAL_TOPICS,
    PUBLISHED_TOPIC,
    STATUS_TOPIC,
    Completeness,
    Report,
    counted_publishers,
)
from arsim_msgs.msg import PublishedCounts, RecordingStatus

DISCOVERY_PERIOD_S = 1.0
READY_PERIOD_S = 0.05  # how often a recorder not ready yet looks again
SETTLE_S = 0.2  # every counted topic matched this long before the first frame may go
# Every node's latest report, latched; deep enough that reports queued behind each other keep
# at least each node's last.
REPORTS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Recorder(Node):
    def __init__(self, **node_options: Any) -> None:
        super().__init__('recorder', **node_options)
        scenario = declare_scenario(self)
        recording = scenario.recording
        if recording.directory is None:
            msg = 'recorder: the scenario names no recording.directory'
            raise ArsimError(msg)
        self.selection = recording.selection
        self.bag = BagWriter.for_recording(recording, recording.directory, message_text)
        self.summary: BagSummary | None = None
        self.skipped: set[str] = set()  # topics that cannot be recorded, named once
        self._skip_log = LogLimit()  # topic and type names come from any peer on the graph
        self._raw_subscriptions: dict[str, Any] = {}  # topic -> its raw subscription
        self.received: dict[str, int] = {}  # topic -> messages, written or not
        self.unwritten = 0  # messages sent again while sim time stood at 0
        self._written_at_zero: set[tuple[str, bytes]] = set()
        self.sim_time_ns = 0
        self.completeness = Completeness(counted_publishers(scenario))
        self.ready = False
        self._matched_since: float | None = None
        self._held_sent: int | None = None
        self._held_at_last_look: int | None = None
        self.status_pub = self.create_publisher(RecordingStatus, STATUS_TOPIC, qos.LATCHED)
        if self.wanted('/clock'):
            self.bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock', recorded_qos(latched=False))
        self._subscribe('/clock', ClockMessage, qos.CLOCK, self._on_clock)
        self.create_subscription(PublishedCounts, PUBLISHED_TOPIC, self._on_report, REPORTS)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(DISCOVERY_PERIOD_S, self.discover, clock=steady)
        self._ready_timer = self.create_timer(READY_PERIOD_S, self._get_ready, clock=steady)
        self.discover()
        self.get_logger().info(f'recording into {recording.directory} ({recording.storage})')

    def _on_clock(self, data: bytes) -> None:
        self.sim_time_ns = to_ns(deserialize_message(data, ClockMessage).clock)

    def _on_report(self, msg: PublishedCounts) -> None:
        self.completeness.add(Report(msg.publisher, to_ns(msg.stamp),
                                     dict(zip(msg.topics, msg.counts, strict=True)),
                                     dict(zip(msg.topics, msg.types, strict=True))))
        self._check()

    def wanted(self, topic: str) -> bool:
        return self.selection.wants(topic) and topic not in INTERNAL_TOPICS \
            and topic not in self.skipped

    def discover(self) -> None:
        """Subscribe to every selected topic that has a publisher and is not recorded yet;
        checkpoint the bag's metadata (a killed recorder leaves a bag that opens); name what
        a recording that stopped advancing waits for."""
        self.bag.checkpoint()
        for topic, types in self.get_topic_names_and_types():
            if len(types) == 1 and self.wanted(topic) and not self.bag.has_topic(topic) \
                    and self.count_publishers(topic):  # latched or not is the publishers' say
                self._record(topic, types[0])
        held = self.completeness.held_ns
        if self.ready and held == self._held_at_last_look:
            missing = self.completeness.missing(self.received, self.wanted)
            if missing:
                waiting = ', '.join(f'{topic} ({held_count} of {published})'
                                    for topic, (held_count, published) in sorted(missing.items()))
                self.get_logger().warning(f'still waiting for {waiting}')
        self._held_at_last_look = held

    def _get_ready(self) -> None:
        """Ready once every counting node has reported and every topic they publish is
        subscribed and matched to all of them for SETTLE_S (a subscription misses what was
        sent before it matched)."""
        completeness = self.completeness
        if completeness.silent():
            return
        unmatched = []
        for topic, type_name in completeness.topics().items():
            if not self.wanted(topic):
                continue
            if not self.bag.has_topic(topic) and self.count_publishers(topic):
                self._record(topic, type_name)
            if self._matched_publishers(topic) < completeness.publishers_of(topic):
                unmatched.append(topic)
        now = time.monotonic()
        if unmatched or self._matched_since is None:
            self._matched_since = None if unmatched else now
            return
        if now - self._matched_since < SETTLE_S:
            return
        self._ready_timer.cancel()
        completeness.start(self.received)
        self.ready = True
        self.get_logger().info(f'ready: {len(self.bag.counts)} topics subscribed')
        self._check()

    def _matched_publishers(self, topic: str) -> int:
        """Publishers matched to the topic's subscription (ROS graph publishers where rclpy is
        too old to tell, as on Humble), 0 while not subscribed."""
        subscription = self._raw_subscriptions.get(topic)
        if subscription is None:
            return 0
        if hasattr(subscription, 'get_publisher_count'):
            return int(subscription.get_publisher_count())
        return self.count_publishers(topic)

    def _check(self) -> None:
        """Tell the bridge when the bag holds a later frame than it last said."""
        if not self.ready:
            return
        held = self.completeness.update(self.received, self.wanted)
        if held is not None and held != self._held_sent:
            self._held_sent = held
            self.status_pub.publish(RecordingStatus(
                held_until=to_time(held), ready=True, messages=sum(self.bag.counts.values())))

    def _record(self, topic: str, type_name: str) -> None:
        publishers = self.get_publishers_info_by_topic(topic)
        latched = any(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                      for p in publishers)
        try:
            message_type = message_class(type_name)
            self.bag.add_topic(topic, type_name, recorded_qos(latched))
        except (ImportError, AttributeError, ValueError, RecordingError) as exc:
            line = self._skip_log.admit(f'not recording {topic} ({type_name}): {exc}')
            if line is not None:
                self.get_logger().warning(line)
            self.skipped.add(topic)
            return

        self._subscribe(topic, message_type, qos.VIEWER_LATCHED if latched else qos.STREAM)

    def _subscribe(self, topic: str, message_type: Any, profile: QoSProfile,
                   on_message: Callable[[bytes], None] | None = None) -> None:
        """Take ``topic``'s messages as CDR bytes, into the bag if it records the topic.

        While sim time stands at 0, the start-up's pings and the t=0 frame are sent again and
        again (until a driver speaks): a message identical to one written then is counted but
        not written again, so the bag holds each frame once."""
        latched = profile.durability == DurabilityPolicy.TRANSIENT_LOCAL

        def take(data: bytes) -> None:
            if on_message is not None:
                on_message(data)
            self.received[topic] = self.received.get(topic, 0) + 1
            if self.bag.has_topic(topic):
                if latched or self.sim_time_ns > 0 or self._first_at_zero(topic, data):
                    self.bag.write(topic, self.sim_time_ns, data)
                else:
                    self.unwritten += 1
            if not self.completeness.caught_up:
                self._check()

        self._raw_subscriptions[topic] = self.create_subscription(message_type, topic, take,
                                                                  profile, raw=True)

    def _first_at_zero(self, topic: str, data: bytes) -> bool:
        """Whether ``data`` is new among the messages of ``topic`` written at sim time 0."""
        key = (topic, hashlib.blake2b(data, digest_size=16).digest())
        if key in self._written_at_zero:
            return False
        self._written_at_zero.add(key)
        return True

    def destroy_node(self) -> None:
        if self.summary is None:
            try:
                self.summary = self.bag.close()
                self.get_logger().info(self.summary.text() + self._completeness_text())
            except RecordingError as exc:
                self.get_logger().error(str(exc))
        super().destroy_node()

    def _completeness_text(self) -> str:
        held = self.completeness.held_ns
        if held is None:
            return '\n  never complete: the simulation did not start stepping'
        text = (f'\n  complete up to t={held / 1e9:.3f} s: every message the simulation '
                f'published until then is in the bag')
        in_flight = sum(published - got for got, published in
                        self.completeness.missing(self.received, self.wanted).values())
        if in_flight:
            text += f'; {in_flight} published later were still on their way when it stopped'
        if self.unwritten:
            text += (f'; {self.unwritten} repeats of messages sent while sim time stood at 0 '
                     f'(start-up, holding for a driver) were written once')
        return text


def main() -> int:
    keep_large_buffers()  # every image is copied into the bag several times
    return run_node(Recorder)
