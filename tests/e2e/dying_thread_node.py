"""A node whose worker thread raises once the node spins: the process must stop with one line
and a non-zero exit code, as the sensor node's receive thread does."""

from __future__ import annotations

import sys
import time

from rclpy.node import Node
from std_msgs.msg import String

from arsim_bridge import stopping
from arsim_bridge.common import run_node


class DyingThreadNode(Node):
    def __init__(self) -> None:
        super().__init__('dying_thread')
        self.pub = self.create_publisher(String, 'chatter', 10)
        self.thread = stopping.start_worker(self, self._work, 'chatter')

    def _work(self) -> None:
        for _ in range(5):
            self.pub.publish(String(data='alive'))
            time.sleep(0.1)
        msg = 'the socket went away'
        raise RuntimeError(msg)


if __name__ == '__main__':
    sys.exit(run_node(DyingThreadNode))
