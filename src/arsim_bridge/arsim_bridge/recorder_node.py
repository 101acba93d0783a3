"""The recorder (``record:=DIR``, or ``recording:`` in a scenario): the simulation's topics into
a rosbag2 bag that ``ros2 bag info`` and ``ros2 bag play`` read (docs/datasets.md).

Every selected topic is subscribed to as the CDR bytes it travels in (nothing is deserialised),
with the durability its publishers offer: latched topics (/tf_static, /map,
robot_description) are caught whenever they were sent and recorded as latched. Topics are
looked for every second of wall time, so one that appears later (a stack's /drive) is recorded
from then on. A message is stamped with the sim time it arrived at (/clock), as
``ros2 bag record --use-sim-time`` does.

SIGINT and SIGTERM close the bag, and the summary (messages per topic, size) is logged. A bag
that cannot be written to (a full disk) stops the recorder, and with it the run, with one line
naming the bag. This
recorder takes what DDS delivers; it does not yet hold the lockstep back, so a recorder that
falls behind a simulation running many times faster than real time can miss messages.
"""

from __future__ import annotations

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMessage

from arsim_bridge import qos
from arsim_bridge.common import declare_scenario, run_node, to_ns
from arsim_bridge.msg_definitions import message_class, message_text
from arsim_core.errors import ArsimError
from arsim_core.recording.bag import BagSummary, BagWriter, RecordingError, TopicQos

DISCOVERY_PERIOD_S = 1.0


class Recorder(Node):
    def __init__(self) -> None:
        super().__init__('recorder')
        recording = declare_scenario(self).recording
        if recording.directory is None:
            msg = 'recorder: the scenario names no recording.directory'
            raise ArsimError(msg)
        self.selection = recording.selection
        self.bag = BagWriter(recording.directory, message_text, storage=recording.storage,
                             version=recording.bag_version, compress=recording.compress)
        self.summary: BagSummary | None = None
        self.skipped: set[str] = set()  # topics that cannot be recorded, named once
        self.sim_time_ns = 0
        self.create_subscription(ClockMessage, '/clock', self._on_clock, qos.CLOCK)
        self.create_timer(DISCOVERY_PERIOD_S, self.discover,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.discover()
        self.get_logger().info(f'recording into {recording.directory} ({recording.storage})')

    def _on_clock(self, msg: ClockMessage) -> None:
        self.sim_time_ns = to_ns(msg.clock)

    def discover(self) -> None:
        """Subscribe to every selected topic not recorded yet."""
        for topic, types in self.get_topic_names_and_types():
            if len(types) == 1 and self.selection.wants(topic) \
                    and not self.bag.has_topic(topic) and topic not in self.skipped:
                self._record(topic, types[0])

    def _record(self, topic: str, type_name: str) -> None:
        publishers = self.get_publishers_info_by_topic(topic)
        latched = any(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                      for p in publishers)
        try:
            message_type = message_class(type_name)
            self.bag.add_topic(topic, type_name, TopicQos(transient_local=latched,
                                                          depth=10 if latched else 100))
        except (ImportError, AttributeError, RecordingError) as exc:
            self.get_logger().warning(f'not recording {topic} ({type_name}): {exc}')
            self.skipped.add(topic)
            return

        def write(data: bytes) -> None:
            self.bag.write(topic, self.sim_time_ns, data)

        self.create_subscription(message_type, topic, write,
                                 qos.VIEWER_LATCHED if latched else qos.STREAM, raw=True)

    def destroy_node(self) -> None:
        if self.summary is None:
            try:
                self.summary = self.bag.close()
                self.get_logger().info(self.summary.text())
            except RecordingError as exc:
                self.get_logger().error(str(exc))
        super().destroy_node()


def main() -> int:
    return run_node(Recorder)

