"""Sensor latency: a sample captured at t reaches its subscribers at t + latency, stamped t.

A real sensor's data is late: a LiDAR turns, packs and sends a revolution, a camera exposes,
reads out and encodes, a driver converts. A profile gives a sensor ``latency`` [s] and
optionally ``latency_jitter`` [s] (``config.sensors.SensorTiming``); this line holds each sample
from the frame it was captured in to the first frame at or after capture + latency + a uniform
draw in [0, jitter], and then passes it on with its capture stamp. Samples of one sensor keep
their order (a draw never lets one overtake its predecessor); where jitter bunches several
into one frame, the newest goes out, as a subscriber keeping the last message sees it. So a
latency is exact in whole frames and at most one frame late otherwise, as an actuator's dead
time.

Every face takes its sensors from a line like this one: the engine's in-process frames
(Gymnasium, datasets) and the lockstep loop's fan-out (ROS). The jitter draws come from the
run seed, the car and the sensor, so a run repeats exactly.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

import numpy as np

from arsim_core.config.scenario import CarSpec

#: Where a sensor's jitter stream sits among a car's streams: past its noise and commands.
LATENCY_STREAM = 1 << 17
_TOLERANCE_NS = 1  # sim time is a sum of integer periods: a sample due "at" a frame is on it

Payload = TypeVar('Payload')


class _Delay:
    """One sensor's latency, its jitter draws and when its last sample is due."""

    def __init__(self, latency_s: float, jitter_s: float, seed: int, car: int,
                 sensor: int) -> None:
        self.latency_ns = round(latency_s * 1e9)
        self.jitter_ns = jitter_s * 1e9
        self.rng = np.random.default_rng([seed, car, LATENCY_STREAM + sensor])
        self.last_due = -1

    def due(self, capture_ns: int) -> int:
        extra = int(self.rng.uniform(0.0, self.jitter_ns)) if self.jitter_ns > 0.0 else 0
        due = max(capture_ns + self.latency_ns + extra, self.last_due)
        self.last_due = due
        return due


class SensorLatency(Generic[Payload]):
    """The latency line of every late sensor of a simulation's cars. Frames are named
    ``<car>/<sensor>`` plus an output suffix, and each comes with a payload (its description,
    or its capture time) that travels with it unchanged."""

    def __init__(self, cars: Sequence[CarSpec], seed: int = 0) -> None:
        self._seed = seed
        self._index = {(car.name, spec.name): (car.index, i)
                       for car in cars for i, spec in enumerate(car.profile.sensors)}
        self._timing = {(car.name, spec.name): (spec.latency, spec.latency_jitter)
                        for car in cars for spec in car.profile.sensors if spec.late}
        self.active = bool(self._timing)  # no late sensor: faces skip the line entirely
        self._delays: dict[tuple[str, str], _Delay] = {}
        self._held: dict[str, deque[tuple[int, np.ndarray, Payload]]] = {}
        self.reset(seed)

    def set_latency(self, car: str, sensor: str, latency_s: float) -> None:
        """Give ``car``'s ``sensor`` another latency [s] from the next sample on (domain
        randomisation); its jitter stays, its samples in flight keep their times."""
        jitter = self._timing.get((car, sensor), (0.0, 0.0))[1]
        self._timing[car, sensor] = (latency_s, jitter)
        car_index, index = self._index[car, sensor]
        delay = self._delays.get((car, sensor))
        if delay is None:
            self._delays[car, sensor] = _Delay(latency_s, jitter, self._seed, car_index, index)
        else:
            delay.latency_ns = round(latency_s * 1e9)
        self.active = True

    def reset(self, seed: int | None = None) -> None:
        """Drop every sample in flight (a new episode) and restart the jitter draws."""
        if seed is not None:
            self._seed = seed
        self._delays = {key: _Delay(latency, jitter, self._seed, *self._index[key])
                        for key, (latency, jitter) in self._timing.items()}
        self._held.clear()

    def forget(self, cars: Mapping[str, object] | Sequence[str]) -> None:
        """Drop the samples in flight of ``cars``, put back at rest: as after ``reset``, their
        next samples come a latency after they are taken."""
        for name, held in self._held.items():
            if name.partition('/')[0] in cars:
                held.clear()

    def release(self, time_ns: int, arrays: Mapping[str, np.ndarray],
                payloads: Mapping[str, Payload]) -> tuple[dict[str, np.ndarray],
                                                          dict[str, Payload]]:
        """The frames to pass on at ``time_ns``: those of this frame's samples that are not
        late, and the late samples now due; ``arrays`` are this frame's captures."""
        out_arrays: dict[str, np.ndarray] = {}
        out_payloads: dict[str, Payload] = {}
        dues: dict[tuple[str, str], int] = {}  # a sensor's outputs (a camera's) go together
        for name, values in arrays.items():
            car, _, rest = name.partition('/')
            key = (car, rest.partition('/')[0])
            delay = self._delays.get(key)
            if delay is None:
                out_arrays[name] = values
                out_payloads[name] = payloads[name]
                continue
            due = dues.get(key)
            if due is None:
                due = dues[key] = delay.due(time_ns)
            self._held.setdefault(name, deque()).append((due, values, payloads[name]))
        for name, held in self._held.items():
            while held and held[0][0] <= time_ns + _TOLERANCE_NS:  # the newest due goes out
                _, values, payload = held.popleft()
                out_arrays[name] = values
                out_payloads[name] = payload
        return out_arrays, out_payloads
