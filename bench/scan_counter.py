"""Subscriber used by the benchmarks: counts LaserScans on the given topics for a while and
prints, as JSON, the sim time they span over the wall time it took to receive them."""

from __future__ import annotations

import argparse
import json
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import LaserScan


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--seconds', type=float, default=20.0)
    parser.add_argument('--warmup', type=float, default=2.0)
    parser.add_argument('--start-timeout', type=float, default=120.0,
                        help='longest wait for the first scan on every topic [s]')
    parser.add_argument('topics', nargs='+')
    args = parser.parse_args()
    rclpy.init()
    node = Node('scan_counter')
    received: dict[str, list[tuple[float, int]]] = {t: [] for t in args.topics}
    for topic in args.topics:
        node.create_subscription(
            LaserScan, topic,
            lambda m, t=topic: received[t].append(
                (time.monotonic(), m.header.stamp.sec * 10**9 + m.header.stamp.nanosec)), 100)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    first = args.topics[0]
    give_up = time.monotonic() + args.start_timeout
    while not all(received.values()):
        executor.spin_once(timeout_sec=0.1)
        if time.monotonic() > give_up:
            missing = [t for t, v in received.items() if not v]
            print(json.dumps({'error': f'no scan on {missing} within {args.start_timeout} s'}))
            return 1
    warm_until = time.monotonic() + args.warmup
    while time.monotonic() < warm_until:
        executor.spin_once(timeout_sec=0.1)
    marks = {t: len(v) for t, v in received.items()}
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)
    window = received[first][marks[first]:]
    if len(window) < 2:
        print(json.dumps({'error': f'{len(window)} scan(s) on {first} in {args.seconds} s'}))
        return 1
    wall = window[-1][0] - window[0][0]
    sim = (window[-1][1] - window[0][1]) / 1e9
    counts = {t: len(v) - marks[t] for t, v in received.items()}
    print(json.dumps({'rtf': sim / wall, 'sim_s': sim, 'wall_s': wall, 'received': counts}))
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
