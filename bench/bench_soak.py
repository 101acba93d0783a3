"""Soak: a long run of a busy scene, watching memory, speed and lost frames.

Four F1TENTH cars, each with its LiDAR and a 320x240 camera, each driven by a follow-the-gap
driver in its own process that answers every scan; synchronous, as fast as the machine allows.
Every ``--every`` seconds it prints the RSS of every process (the simulation's and the drivers')
and the real-time factor since the last report.

Figures (``run()``, two minutes in ``make bench``; ``make soak`` runs an hour):

- ``soak_rss_growth_pct``: growth of the summed RSS of all processes from the end of the
  warm-up to the end of the run. Goal: under 5 %.
- ``soak_lost_frames``: sensor frames the bridge rendered that the subscriber here never
  received. Each sensor renders exactly one frame per period of its rate, stamped with the
  frame's sim time, so between the first and the last stamp received on a topic the frames
  rendered are ``(last - first) / period + 1``; the lost ones are those minus the distinct
  stamps received, summed over every car's scan and image topics. Goal: 0.
"""

from __future__ import annotations

import argparse
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / 'tests'))

from benchkit import Row, main, simulation_pace, sized, take_smoke_flag  # noqa: E402
from simharness import (  # noqa: E402
    Probe,
    Simulation,
    driver_process,
    installed_resources,
    stop_process,
)

DRIVER = BENCH_DIR.parent / 'tests' / 'drivers' / 'follow_the_gap.py'
CARS = ('ego', 'car2', 'car3', 'car4')
ROWS = (Row('soak_rss_growth_pct', '%'), Row('soak_lost_frames', 'frames'))
CAMERA = {'type': 'camera', 'position': [0.2, 0.0, 0.2], 'rate_hz': 40.0, 'width': 320,
          'height': 240, 'fov_rad': 1.5, 'outputs': ['rgb']}


def stamp_of(raw: bytes) -> int:
    """The header stamp of a serialised message that starts with a Header."""
    sec, nanosec = struct.unpack_from('<iI', raw, 4)  # after the 4-byte CDR encapsulation
    return sec * 1_000_000_000 + nanosec


class StampCounter:
    """Distinct stamps per topic, taken raw (no deserialisation) in a thread of their own."""

    def __init__(self, probe: Probe, topics: dict[str, tuple[type, int]]) -> None:
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        self.probe = probe
        self.period = {topic: period for topic, (_, period) in topics.items()}
        self.stamps: dict[str, set[int]] = {topic: set() for topic in topics}
        self._lock = threading.Lock()  # the spin thread adds while the main thread counts
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        for topic, (kind, _) in topics.items():
            probe.node.create_subscription(
                kind, topic, lambda raw, t=topic: self._add(t, raw), qos, raw=True)
        self._running = True
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _add(self, topic: str, raw: bytes) -> None:
        with self._lock:
            self.stamps[topic].add(stamp_of(raw))

    def _spin(self) -> None:
        while self._running:
            self.probe.executor.spin_once(timeout_sec=0.1)

    def stop(self) -> None:
        self._running = False
        self._thread.join(5.0)

    def latest(self, topic: str) -> int:
        with self._lock:
            return max(self.stamps[topic], default=0)

    def lost(self) -> int:
        total = 0
        with self._lock:
            snapshot = {topic: set(stamps) for topic, stamps in self.stamps.items()}
        for topic, stamps in snapshot.items():
            if len(stamps) >= 2:
                rendered = (max(stamps) - min(stamps)) // self.period[topic] + 1
                total += rendered - len(stamps)
        return total


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f'/proc/{pid}/status').read_text().splitlines():
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def process_name(pid: int) -> str:
    try:
        args = Path(f'/proc/{pid}/cmdline').read_bytes().split(b'\0')
    except OSError:
        return str(pid)
    for arg in args:
        if arg.startswith(b'__node:='):
            return arg[8:].decode()
    names = [Path(a.decode()).name for a in args if a and not a.startswith(b'-')]
    return ' '.join(names[:2]) or str(pid)


def soak(seconds: float, every_s: float, warmup_s: float, out=sys.stderr) -> dict[str, float]:
    """Run the scene for ``seconds``, report every ``every_s``; the figures as a dict."""
    from sensor_msgs.msg import Image, LaserScan

    from arsim_core.config.scenario import load_scenario

    with tempfile.TemporaryDirectory(prefix='arsim-soak-') as tmp:
        resources = installed_resources()
        profile = yaml.safe_load((resources / 'config' / 'cars' / 'f1tenth.yaml').read_text())
        profile['Sensors']['cam'] = CAMERA
        path = Path(tmp) / 'soak_car.yaml'
        path.write_text(yaml.safe_dump(profile, sort_keys=False))
        sim = Simulation(Path(tmp) / 'sim', {'cars': [{'name': n, 'profile': str(path)}
                                                      for n in CARS]}, pace=simulation_pace())
        scenario = load_scenario(sim.settings_file, resources)
        topics: dict[str, tuple[type, int]] = {}
        for car in scenario.cars:
            for spec in car.profile.sensors:
                topic, period = car.names.sensor_topics[spec.name], round(1e9 / spec.rate_hz)
                if spec.name == 'scan':
                    topics[topic] = (LaserScan, period)
                elif spec.name == 'cam':
                    topics[f'{topic}/image_raw'] = (Image, period)
        sim.start()
        probe = Probe(sim.domain_id, 'soak_counter')
        counter = StampCounter(probe, topics)
        drivers = [driver_process(DRIVER, sim.domain_id, '--scan',
                                  car.names.sensor_topics['scan'], '--drive',
                                  car.names.drive_topic) for car in scenario.cars]
        first_scan = scenario.cars[0].names.sensor_topics['scan']
        try:
            if not sim.wait_for_log('ready; stepping', 180.0):
                msg = f'the simulation did not start:\n{sim.log}'
                raise RuntimeError(msg)
            start = time.monotonic()
            last_wall, last_sim = start, counter.latest(first_scan)
            baseline = None
            report_at = start + every_s
            end = start + seconds
            while time.monotonic() < end:
                if sim.process.poll() is not None:
                    msg = f'the simulation stopped during the soak:\n{sim.log[-4000:]}'
                    raise RuntimeError(msg)
                time.sleep(0.5)
                now = time.monotonic()
                if baseline is None and now - start >= warmup_s:
                    baseline = _rss(sim, drivers)
                if now >= report_at or now >= end:
                    report_at += every_s
                    sim_ns = counter.latest(first_scan)
                    rtf = (sim_ns - last_sim) / 1e9 / (now - last_wall)
                    last_wall, last_sim = now, sim_ns
                    usage = _rss(sim, drivers)
                    print(f'[soak] {now - start:7.0f} s  real-time factor {rtf:.2f}  RSS total '
                          f'{sum(usage.values()) / 1024:.0f} MB  lost frames {counter.lost()}  '
                          + '  '.join(f'{n} {kb / 1024:.0f}' for n, kb in sorted(usage.items())),
                          file=out, flush=True)
            final = _rss(sim, drivers)
            base = sum((baseline or final).values())
            return {'rss_growth_pct': 100.0 * (sum(final.values()) - base) / base,
                    'lost_frames': float(counter.lost())}
        finally:
            counter.stop()
            probe.close()
            for process in drivers:
                stop_process(process)
            sim.stop()


def _rss(sim: Simulation, drivers: list) -> dict[str, int]:
    """RSS [kB] of every process of the simulation and of every driver, by name."""
    usage: dict[str, int] = {}
    labels = {d.pid: f'driver{i + 1}' for i, d in enumerate(drivers)}
    for pid in [*sim.session_processes(), *labels]:
        name = labels.get(pid) or process_name(pid)
        if name in usage:
            name = f'{name}#{pid}'
        usage[name] = rss_kb(pid)
    return usage


def run(seconds: float | None = None, every_s: float | None = None,
        warmup_s: float | None = None) -> list[tuple[str, float, str]]:
    """Two minutes (``make bench``), reports every 30 s, RSS growth counted after 30 s; three
    seconds, reports every second, after one, in a smoke run."""
    result = soak(seconds if seconds is not None else sized(120.0, 3.0),
                  every_s if every_s is not None else sized(30.0, 1.0),
                  warmup_s if warmup_s is not None else sized(30.0, 1.0))
    return [('soak_rss_growth_pct', result['rss_growth_pct'], '%'),
            ('soak_lost_frames', result['lost_frames'], 'frames')]


def cli() -> int:
    """``make soak``: an hour by default; ``--smoke`` a few seconds."""
    argv = take_smoke_flag()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=sized(3600.0, 3.0))
    parser.add_argument('--every', type=float, default=sized(60.0, 1.0),
                        help='report period [s]')
    parser.add_argument('--warmup', type=float, default=sized(60.0, 1.0),
                        help='RSS growth counts from here [s]')
    parser.add_argument('--smoke', action='store_true', help='a few seconds (benchkit)')
    args = parser.parse_args(argv)
    return main(lambda: run(args.seconds, args.every, args.warmup), ROWS)


if __name__ == '__main__':
    sys.exit(cli())
