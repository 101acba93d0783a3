"""Subscriber used by the sensor benchmark: counts the messages of any topics for a while and
prints, as JSON, how many of each arrived per wall second and how many of the published ones
were lost.

Usage: ``sensor_counter.py [--seconds S] [--warmup S] TOPIC:PACKAGE/msg/TYPE ...``. Messages
are taken serialised (``raw``) and dispatched by rclpy's events executor where there is one, as
a C++ subscriber would take them before its own work; the stamp is read from the CDR header,
every message type counted here starts with a Header.
"""

from __future__ import annotations

import argparse
import importlib
import json
import struct
import time

import rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

from arsim_bridge.common import new_executor


def message_type(name: str) -> type:
    package, _, kind = name.partition('/msg/')
    return getattr(importlib.import_module(f'{package}.msg'), kind)


def stamp_of(raw: bytes) -> int:
    sec, nanosec = struct.unpack_from('<iI', raw, 4)  # after the 4-byte CDR encapsulation
    return sec * 1_000_000_000 + nanosec


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--seconds', type=float, default=15.0)
    parser.add_argument('--warmup', type=float, default=3.0)
    parser.add_argument('--period-ns', type=int, default=50_000_000)
    parser.add_argument('topics', nargs='+', help='TOPIC:PACKAGE/msg/TYPE')
    args = parser.parse_args()
    rclpy.init()
    node = Node('sensor_counter')
    received: dict[str, list[tuple[float, int]]] = {}
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    for entry in args.topics:
        topic, _, kind = entry.partition(':')
        received[topic] = []
        node.create_subscription(
            message_type(kind), topic,
            lambda raw, t=topic: received[t].append((time.monotonic(), stamp_of(raw))), qos,
            raw=True)
    executor = new_executor()
    executor.add_node(node)
    start = time.monotonic()
    while not all(received.values()):
        executor.spin_once(timeout_sec=0.1)
        if time.monotonic() - start > 120.0:
            missing = [t for t, v in received.items() if not v]
            print(json.dumps({'error': f'nothing received on {missing}'}))
            return 1
    warm_until = time.monotonic() + args.warmup
    while time.monotonic() < warm_until:
        executor.spin_once(timeout_sec=0.1)
    marks = {t: len(v) for t, v in received.items()}
    begin = time.monotonic()
    end = begin + args.seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)
    wall = time.monotonic() - begin
    result: dict[str, dict[str, float]] = {}
    for topic, values in received.items():
        window = values[marks[topic]:]
        stamps = sorted({s for _, s in window})
        published = (stamps[-1] - stamps[0]) // args.period_ns + 1 if stamps else 0
        result[topic] = {'hz': len(window) / wall, 'received': len(window),
                         'lost': max(0, published - len(stamps))}
    print(json.dumps({'wall_s': wall, 'topics': result}))
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
