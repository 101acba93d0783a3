"""A stand-in for a ROS node whose publishers write into a bag, with no DDS in between.

``arsim-dataset generate`` runs the engine in process and hands its frames to the same
publishing code the ROS nodes use (``car_outputs``); given a ``BagNode``, that code's
``create_publisher`` returns a publisher that serialises each message with rclpy's type support
and writes it into the bag, stamped with the sim time of the frame being written, as the
recorder stamps what it receives. Topics are named as in the ROS graph: a remapping first, then
a relative name under the node's namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.serialization import serialize_message

from arsim_bridge.ledger import type_name
from arsim_core.config.recording import TopicSelection
from arsim_core.recording.bag import TopicQos, recorded_qos


class MessageSink(Protocol):
    """Where serialised messages go: a bag (``BagWriter``) or one MCAP file (``McapFile``,
    an incident clip)."""

    def add_topic(self, topic: str, msgtype: str, qos: TopicQos) -> None: ...

    def write(self, topic: str, timestamp_ns: int, data: bytes | memoryview) -> None: ...


Sink = TypeVar('Sink', bound=MessageSink)


class BagRecording(Generic[Sink]):
    """One bag being written by several stand-in nodes, at one sim time. The nodes only
    publish: every value they pack comes with the engine's frame, none from another node."""

    def __init__(self, bag: Sink, selection: TopicSelection) -> None:
        self.bag = bag
        self.selection = selection
        self.time_ns = 0  # the sim time the next messages are written at

    def node(self, namespace: str = '/',
             remappings: Mapping[str, str] | None = None) -> BagNode:
        return BagNode(self, namespace, remappings)


class BagPublisher:
    """Writes every message published on one topic into the bag."""

    def __init__(self, recording: BagRecording, topic: str) -> None:
        self.recording, self.topic = recording, topic

    def publish(self, msg: Any) -> None:
        recording = self.recording
        recording.bag.write(self.topic, recording.time_ns, serialize_message(msg))


class UnrecordedPublisher:
    """A topic the recording does not keep: its messages go nowhere."""

    def __init__(self, recording: BagRecording, topic: str) -> None:
        self.recording, self.topic = recording, topic

    def publish(self, msg: Any) -> None:
        del msg


class BagNode:
    """``create_publisher`` for code written against rclpy nodes, into ``recording``."""

    def __init__(self, recording: BagRecording, namespace: str = '/',
                 remappings: Mapping[str, str] | None = None) -> None:
        self.recording = recording
        self.namespace = namespace.rstrip('/')
        self.remappings = dict(remappings or {})

    def resolve(self, topic: str) -> str:
        """The full name of ``topic`` as this node would publish it in the ROS graph."""
        topic = self.remappings.get(topic, topic)
        return topic if topic.startswith('/') else f'{self.namespace}/{topic}'

    def create_publisher(self, msg_type: Any, topic: str,
                         qos_profile: QoSProfile) -> BagPublisher | UnrecordedPublisher:
        name = self.resolve(topic)
        if not self.recording.selection.wants(name):
            return UnrecordedPublisher(self.recording, name)
        latched = qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
        self.recording.bag.add_topic(name, type_name(msg_type), recorded_qos(latched))
        return BagPublisher(self.recording, name)
