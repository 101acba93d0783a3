"""A Foxglove WebSocket server for the whole simulation (``view: foxglove``; docs/view.md).

Every topic on the ROS graph is advertised with its ROS 2 schema and forwarded as the CDR
bytes it travels in, as foxglove_bridge does, so Foxglove's 3D, image and plot panels work
without a ROS install. Topics are found every second; latched ones (/tf_static, /map,
robot_description) are subscribed latched, and their messages are sent again when a client
subscribes later; every other topic is subscribed best effort, so the view may drop
messages but never slows the simulation. Messages are stamped with sim time (/clock).

The SDK's server accepts only the subprotocol ``foxglove.sdk.v1``, so it listens on a loopback
port of its own and the view's address is served by :mod:`arsim_bridge.foxglove_relay`, which
also accepts ``foxglove.websocket.v1`` (Lichtblick, older Foxglove Studio) and passes the frames
on unchanged.

Clients are outside input: a subscription a client already holds is not replayed again, a
burst of subscriptions costs one replay per topic and period, and each client's backlog is
BACKLOG_MESSAGES (the oldest message goes first), so a stalled client holds a few camera
images, not a thousand.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any

import foxglove
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy
from rosgraph_msgs.msg import Clock

from arsim_bridge import qos
from arsim_bridge.common import declare_scenario, run_node, to_ns
from arsim_bridge.foxglove_relay import FoxgloveRelay
from arsim_bridge.msg_definitions import definition, message_class
from arsim_core.errors import ArsimError
from arsim_core.log_limit import LogLimit

DISCOVERY_PERIOD_S = 1.0
REPLAY_PERIOD_S = 0.1  # how soon a new subscriber of a latched topic gets its messages
# Messages queued for one client that reads slower than they come; the SDK drops the oldest
# past it and counts messages, not bytes, so it is kept small for camera images (docs/view.md).
BACKLOG_MESSAGES = 16


class FoxgloveView(Node):
    def __init__(self, **node_options: Any) -> None:
        super().__init__('foxglove_view', **node_options)
        view = declare_scenario(self).view
        self.latched: dict[str, deque[tuple[bytes, int]]] = {}  # the messages to send again
        self.replay = _Replay()
        self._skip_log = LogLimit()  # topic and type names come from any peer on the graph
        _route_sdk_log(self.get_logger())
        try:  # on loopback, for the relay only; its port is any free one
            self.server = foxglove.start_server(name='arsim', host='127.0.0.1', port=0,
                                                server_listener=self.replay,
                                                message_backlog_size=BACKLOG_MESSAGES)
        except Exception as exc:  # the SDK reports its failures as plain RuntimeErrors
            raise ArsimError(f'view: cannot start the Foxglove server ({exc})') from exc
        self.relay = FoxgloveRelay(view.host, view.port, self.server.port, self._log)
        try:
            url = self.relay.start()
        except BaseException:
            self.server.stop()
            raise
        self.get_logger().info(f'Foxglove: open {url} in Foxglove or Lichtblick '
                               f'(docs/view.md)')
        self.sim_time_ns: int | None = None
        self.channels: dict[str, foxglove.Channel | None] = {}  # None: cannot be described
        self.create_subscription(Clock, '/clock', self._on_clock, qos.CLOCK)
        self.create_timer(DISCOVERY_PERIOD_S, self.discover)
        self.create_timer(REPLAY_PERIOD_S, self._send_latched_again)
        self.discover()

    def _on_clock(self, msg: Clock) -> None:
        self.sim_time_ns = to_ns(msg.clock)

    def discover(self) -> None:
        """Advertise and forward every topic not seen before."""
        for topic, types in self.get_topic_names_and_types():
            if topic not in self.channels and len(types) == 1:
                self.channels[topic] = self._forward(topic, types[0])

    def _forward(self, topic: str, type_name: str) -> foxglove.Channel | None:
        try:
            message_type = message_class(type_name)
            schema = definition(type_name)
        except (ImportError, AttributeError, OSError, ValueError, LookupError) as exc:
            line = self._skip_log.admit(f'not forwarding {topic} ({type_name}): {exc}')
            if line is not None:
                self.get_logger().warning(line)
            return None
        channel = foxglove.Channel(topic, message_encoding='cdr', schema=foxglove.Schema(
            name=type_name, encoding='ros2msg', data=schema.encode()))
        latched = any(info.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                      for info in self.get_publishers_info_by_topic(topic))
        kept: deque[tuple[bytes, int]] | None = None
        if latched:
            kept = self.latched[topic] = deque(maxlen=qos.VIEWER_LATCHED.depth)

        def log(data: bytes) -> None:
            log_time = self.sim_time_ns if self.sim_time_ns is not None else time.time_ns()
            channel.log(data, log_time=log_time)
            if kept is not None:
                kept.append((data, log_time))

        self.create_subscription(message_type, topic, log,
                                 qos.VIEWER_LATCHED if latched else qos.VIEWER, raw=True)
        return channel

    def _send_latched_again(self) -> None:
        """A client that subscribed to a latched topic gets its kept messages, as a late
        subscriber gets them from a latched publisher."""
        for topic in self.replay.take():
            channel, kept = self.channels.get(topic), self.latched.get(topic)
            if channel is not None and kept:
                for data, log_time in list(kept):
                    channel.log(data, log_time=log_time)

    def _log(self, level: str, text: str) -> None:
        """The relay's lines (already limited), from its thread, into the node's log."""
        logger = self.get_logger()
        {'info': logger.info, 'warn': logger.warning}.get(level, logger.error)(text)

    def destroy_node(self) -> None:
        self.relay.stop()  # the clients first, told the simulation stopped
        self.server.stop()
        super().destroy_node()


def _route_sdk_log(node_logger: Any) -> None:
    """The SDK's own log lines (one for each bad request a client sends) into the node's log
    through a LogLimit, instead of Python logging's unlimited stderr."""
    sdk_logger = logging.getLogger('foxglove')
    sdk_logger.handlers = [_LimitedHandler(node_logger)]
    sdk_logger.propagate = False


class _LimitedHandler(logging.Handler):
    def __init__(self, node_logger: Any) -> None:
        super().__init__(logging.INFO)
        self._node_logger, self._limit = node_logger, LogLimit()

    def emit(self, record: logging.LogRecord) -> None:
        line = self._limit.admit(record.getMessage())
        if line is None:
            return
        if record.levelno >= logging.ERROR:
            self._node_logger.error(line)
        elif record.levelno >= logging.WARNING:
            self._node_logger.warning(line)
        else:
            self._node_logger.info(line)


class _Replay(foxglove.ServerListener):
    """Notes the topics clients newly subscribe to (called from the server's thread).

    A replay goes to every subscriber of the channel, so requests are counted once: a client's
    subscription to a channel it already holds adds nothing, and each topic is replayed at most
    once per period however many clients subscribed in it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._topics: set[str] = set()
        self._held: set[tuple[int, int]] = set()  # (client, channel) subscriptions

    def on_subscribe(self, client: Any, channel: Any) -> None:
        with self._lock:
            if (client.id, channel.id) not in self._held:
                self._held.add((client.id, channel.id))
                self._topics.add(channel.topic)

    def on_unsubscribe(self, client: Any, channel: Any) -> None:
        """Also called for each subscription of a client that disconnects."""
        with self._lock:
            self._held.discard((client.id, channel.id))

    def take(self) -> set[str]:
        with self._lock:
            topics, self._topics = self._topics, set()
        return topics


def main() -> int:
    return run_node(FoxgloveView)
