"""Sensor republisher: turns one car's raw frames from the bridge into ROS messages.

It reads the bridge's ZeroMQ fan-out in a background thread and hands every frame to the car's
outputs (``arsim_bridge.car_outputs``): odometry and TF (the topic map's odom topic and
frames), and one republisher per sensor of the car profile: LaserScan, PointCloud2, images,
IMU, NavSatFix, wheel and ground-truth odometry, all stamped in sim time. Sensor mounts (and
camera optical frames) go to /tf_static once.
"""

from __future__ import annotations

import threading
from typing import Any

import zmq

from arsim_bridge import dds, stopping
from arsim_bridge.car_outputs import CarOutputs
from arsim_bridge.common import declare_car, declare_scenario, run_node
from arsim_bridge.fanout import car_topic, decode_car_frame
from arsim_bridge.ledger import CountingNode
from arsim_core.errors import ProtocolError
from arsim_core.process.heartbeat import Heartbeat
from arsim_core.process.memory import keep_large_buffers
from arsim_core.protocol.messages import FanoutFrame
from arsim_core.recording.ledger import sensors_publisher

# Large clouds and images need a bigger shared-memory segment than Fast DDS's default; set
# before any node of this process initialises rclpy (also when a container imports it). They
# are copied into messages every frame: kept in the heap, not faulted in afresh each time.
dds.prefer_large_shared_memory()
keep_large_buffers()

THREAD_STOP_S = 5.0  # the receive thread checks for a stop every 0.1 s between frames


class SensorNode(CountingNode):
    def __init__(self, **node_options: Any) -> None:
        super().__init__('sensors', **node_options)
        # destroy_node also runs for a node whose construction stopped half-way (a bad
        # scenario, a stop signal): what it tears down exists from here on.
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._socket: zmq.Socket[bytes] | None = None
        scenario = declare_scenario(self)
        self.car = declare_car(self, scenario)
        name = self.car.name
        self.start_counting(scenario, sensors_publisher(name))
        self.outputs = CarOutputs(self, scenario, self.car)
        self.outputs.publish_static()
        self.report_published(0)

        socket: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.SUB)
        self._socket = socket
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.SUBSCRIBE, car_topic(name))
        socket.connect(scenario.backend.frames_address)
        self._thread = stopping.start_worker(self, lambda: self._receive(socket),
                                             'frame receive')

    def _receive(self, socket: zmq.Socket[bytes]) -> None:
        poller = zmq.Poller()
        poller.register(socket, zmq.POLLIN)
        alive = Heartbeat.from_environment(f'{self.get_name()}-receive')
        while not self._stop.is_set():
            alive.beat()
            if not poller.poll(100):
                continue
            frames = socket.recv_multipart(copy=False)
            try:
                self._publish(*decode_car_frame(frames))
            except (ProtocolError, KeyError, TypeError, ValueError) as exc:
                self.get_logger().error(f'dropped a malformed frame: {exc}',
                                        throttle_duration_sec=2.0)

    def _publish(self, step: int, time_ns: int, sent: FanoutFrame) -> None:
        self.outputs.publish(step, time_ns, sent)
        self.report_published(time_ns)

    def destroy_node(self) -> None:
        # The thread publishes: it must be gone before the publishers and the context are.
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=THREAD_STOP_S)
        if self._socket is not None:
            self._socket.close()
        super().destroy_node()


def main() -> int:
    return run_node(SensorNode)
