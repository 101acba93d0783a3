"""How a test driver runs: rclpy with Python's own signal handling, so SIGTERM ends the process
at once and Ctrl-C raises KeyboardInterrupt; a driver must never outlive the test that started
it."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions


def spin_driver(make_node: Callable[[], Node]) -> int:
    """Start rclpy, make the driver's node, say it is ready, and spin until stopped."""
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = make_node()
    print(f'{node.get_name()} ready', flush=True)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
