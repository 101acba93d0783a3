"""Incident clips: the seconds around every incident of a race, each written as one small
MCAP file that Foxglove opens, without recording the whole race (docs/race-control.md,
"Clips").

The rule of what goes into a clip lives here, for every face that runs races:

- **what is an incident**: every steward's ruling (``RULING`` events: contacts, forcing off
  the track, track limits, a disqualification), and, with ``race.clips.contacts``, a contact
  between two cars that no ruling judged (stewards switched off, a track without a
  centerline). Events of one frame about the same cars are one incident, one clip.
- **which seconds**: from ``before_s`` before the incident to ``after_s`` after it, by sim
  time. A run that ends (or is reset) first writes the clip with what it has, marked
  incomplete.
- **what of them**: every car's state in every frame; the sensor data of the cars involved
  only; every event of the window (the verdict among them); the verdict again in the file's
  metadata (``arsim.incident`` and one ``arsim.ruling`` record per ruling).
- **bounds**: at most ``max_clips`` a run; each clip at most ``max_clip_mib`` of messages
  (the involved cars' heaviest sensor streams are thinned, every other sample at a time,
  until the estimate fits; the file drops whatever would still go past it); the seconds
  before an incident are kept for every car, their sensor data at most ``buffer_mib``
  together (the oldest samples' data goes first, the states stay).

A face hands the recorder every frame it fans out (``observe``: each car's ``FanoutFrame``,
its arrays copied) and every event it publishes (``events``); packing the clip's frames into
messages is the face's (a ``ClipPacker``: the ROS nodes' publishing code,
``arsim_bridge.clip_packer``), so a clip holds the topics, types and frames of a normal
recording.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

import numpy as np

from arsim_core.config.clips import ClipSettings
from arsim_core.engine.referee import COLLISION, RULING, Event
from arsim_core.engine.stewards import Ruling
from arsim_core.errors import ArsimError
from arsim_core.protocol.messages import FanoutFrame, FrameMeta
from arsim_core.recording.mcap_file import McapFile, McapSummary

CONTACT = 'contact'  # the rule named for a contact no ruling judged
INCIDENT_RECORD = 'arsim.incident'
RULING_RECORD = 'arsim.ruling'
#: Message bytes of one car's state in one frame (CarState, odometry with its covariances,
#: TF, /clock), for the estimate a clip's sensor data is thinned by.
STATE_BYTES = 1600
EVENT_BYTES = 300
_UNSAFE = re.compile(r'[^A-Za-z0-9_.]+')


class Incident(NamedTuple):
    """What happened at ``time_ns``: the rule that decided (``contact`` for a contact nobody
    ruled on), the cars involved (the one at fault first) and the events that make it."""

    time_ns: int
    rule: str
    cars: tuple[str, ...]
    events: tuple[Event, ...]


class ClipFrame(NamedTuple):
    """One frame of a clip: every car's fan-out frame (its state, and for the cars involved
    their sensor data)."""

    step: int
    time_ns: int
    cars: Mapping[str, FanoutFrame]


# The buffer holds plain tuples, the quickest things to make every frame. One car:
# ``FanoutFrame``'s fields after the car's name, its arrays copied.
_Kept = tuple[tuple[float, float, float], tuple[float, float, float], float,
              tuple[float, ...] | None, Mapping[str, np.ndarray], Mapping[str, FrameMeta]]
# One frame: step, time [ns] (index 1), the cars (2), the bytes of their sensor data (3).
_Buffered = tuple[int, int, dict[str, _Kept], int]


class Clip(NamedTuple):
    """One incident's clip as a face packs it: its frames (only the involved cars keep their
    sensor data), every event of the window with its time, and whether it spans the whole
    window."""

    incident: Incident
    path: Path
    frames: tuple[ClipFrame, ...]
    events: tuple[tuple[int, Event], ...]
    complete: bool


class ClipPacker(Protocol):
    """Packs ``clip`` into ROS messages written to ``file`` (``McapFile.add_topic``/``write``)."""

    def __call__(self, clip: Clip, file: McapFile) -> None: ...


@dataclasses.dataclass
class _Pending:
    incident: Incident
    end_ns: int
    frames: list[_Buffered]
    events: list[tuple[int, Event]]


class ClipRecorder:
    """The clips of one run of ``cars`` with ``settings``, written into ``directory``
    (default: ``settings.directory``) by ``pack``; ``schema_of`` gives each message type's
    ``ros2msg`` definition. ``log`` hears one line per clip written or refused."""

    def __init__(self, settings: ClipSettings, cars: Sequence[str], pack: ClipPacker,
                 schema_of: Callable[[str], str], directory: Path | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        directory = directory if directory is not None else settings.directory
        if directory is None:
            msg = 'incident clips need a directory (race.clips.directory)'
            raise ArsimError(msg)
        self.settings = settings
        self.directory = Path(directory)
        self.cars = frozenset(cars)
        self.pack = pack
        self.schema_of = schema_of
        self.log = log or (lambda _line: None)
        self.before_ns = round(settings.before_s * 1e9)
        self.after_ns = round(settings.after_s * 1e9)
        self.max_bytes = int(settings.max_clip_mib * 2**20)
        self.buffer_bytes = int(settings.buffer_mib * 2**20)
        self.written: list[McapSummary] = []
        self.refused = 0  # incidents beyond max_clips
        self._started = 0  # clips begun: written, pending or failed
        self._frames: deque[_Buffered] = deque()
        self._bare = 0  # leading frames of ``_frames`` whose sensor data is gone
        self._buffered = 0  # bytes of sensor data in ``_frames``
        self._events: deque[tuple[int, Event]] = deque()
        self._pending: list[_Pending] = []
        self._latest_ns = -1

    # --- what the faces hand in -------------------------------------------------------------
    def observe(self, step: int, time_ns: int, cars: Mapping[str, FanoutFrame]
                ) -> list[McapSummary]:
        """One frame of every car as fanned out; the clips it completes, written. Every frame
        pays for this: a tuple per car and a copy of its sensor arrays. Copies, not the arrays
        themselves: the embedded renderer reads images back into two sets of arrays used in
        turn, and holding a renderer's fresh arrays for seconds costs it more (its next ones
        land in memory gone cold) than copying them does."""
        if time_ns <= self._latest_ns:
            if time_ns == self._latest_ns and self._frames:
                return []  # the same frame again (sim time held at 0 until a driver speaks)
            self._restart()  # a new race (a reset): what came before is over
        self._latest_ns = time_ns
        kept: dict[str, _Kept] = {}
        nbytes = 0
        for name, sent in cars.items():
            arrays = sent.arrays
            if arrays:
                copies = {}
                for key, value in arrays.items():
                    copies[key] = copy = value.copy()
                    nbytes += copy.nbytes
                arrays = copies
            kept[name] = (sent.pose, sent.twist, sent.steering_angle, sent.accel, arrays,
                          sent.meta)
        frame: _Buffered = (step, time_ns, kept, nbytes)
        frames = self._frames
        frames.append(frame)
        self._buffered += nbytes
        oldest = time_ns - self.before_ns
        while frames[0][1] < oldest:
            self._buffered -= frames.popleft()[3]
            if self._bare:
                self._bare -= 1
        if self._buffered > self.buffer_bytes:
            self._shed()
        if not self._pending:
            return []
        done = []
        for pending in self._pending:
            if time_ns <= pending.end_ns:
                pending.frames.append(frame)
            if time_ns >= pending.end_ns:
                done.append(pending)
        return self._finish(done, complete=True)

    def events(self, time_ns: int, events: Iterable[Event]) -> list[McapSummary]:
        """The events published at ``time_ns``; each incident among them begins a clip (the
        clips it completes at once, where no time after it is asked for, are returned)."""
        events = tuple(events)
        if not events:
            return []
        for event in events:
            self._events.append((time_ns, event))
            for pending in self._pending:
                if time_ns <= pending.end_ns:
                    pending.events.append((time_ns, event))
        self._trim(time_ns)
        for incident in self.incidents(time_ns, events):
            self._begin(incident)
        return self._finish([p for p in self._pending if self._latest_ns >= p.end_ns],
                            complete=True)

    def close(self) -> list[McapSummary]:
        """The run is over: the clips still waiting for their last seconds, written with what
        they have."""
        return self._finish(list(self._pending), complete=False)

    # --- the rule ---------------------------------------------------------------------------
    def incidents(self, time_ns: int, events: Sequence[Event]) -> list[Incident]:
        """The incidents among one frame's ``events``: its rulings, grouped by the cars they
        involve, and (with ``contacts``) the car-to-car contacts none of them judged."""
        groups: dict[frozenset[str], list[Event]] = {}
        for event in events:
            if event.kind == RULING:
                groups.setdefault(self._involved(event), []).append(event)
        incidents = [Incident(time_ns, _rule(found[0]), _ordered(found[0], cars), tuple(found))
                     for cars, found in groups.items()]
        if self.settings.contacts:
            ruled = set(groups)
            for event in events:
                pair = self._involved(event)
                if event.kind == COLLISION and len(pair) == 2 and pair not in ruled:
                    ruled.add(pair)
                    incidents.append(Incident(time_ns, CONTACT, _ordered(event, pair),
                                              (event,)))
        return incidents

    def _involved(self, event: Event) -> frozenset[str]:
        return frozenset(car for car in (event.car, event.other) if car in self.cars)

    # --- the buffer -------------------------------------------------------------------------
    def _shed(self) -> None:
        """The oldest sensor data out of the buffer until it is within ``buffer_mib``."""
        frames = self._frames
        while self._buffered > self.buffer_bytes and self._bare < len(frames):
            step, time_ns, cars, nbytes = frames[self._bare]
            frames[self._bare] = (step, time_ns, {name: (k[0], k[1], k[2], k[3], {}, {})
                                                  for name, k in cars.items()}, 0)
            self._buffered -= nbytes
            self._bare += 1

    def _trim(self, now_ns: int) -> None:
        oldest = now_ns - self.before_ns
        frames = self._frames
        while frames and frames[0][1] < oldest:
            self._buffered -= frames.popleft()[3]
            self._bare = max(0, self._bare - 1)
        while self._events and self._events[0][0] < oldest:
            self._events.popleft()

    def _restart(self) -> None:
        self._finish(list(self._pending), complete=False)
        self._frames.clear()
        self._events.clear()
        self._buffered = self._bare = 0

    # --- the clips --------------------------------------------------------------------------
    def _begin(self, incident: Incident) -> None:
        if self._started >= self.settings.max_clips:
            self.refused += 1
            if self.refused == 1:
                self.log(f'incident clips: {self.settings.max_clips} written '
                         f'(race.clips.max_clips); no more in this run')
            return
        self._started += 1
        start = incident.time_ns - self.before_ns
        self._pending.append(_Pending(
            incident, incident.time_ns + self.after_ns,
            [f for f in self._frames if f[1] >= start],
            [e for e in self._events if e[0] >= start]))

    def _finish(self, done: list[_Pending], complete: bool) -> list[McapSummary]:
        written = []
        for pending in done:
            self._pending.remove(pending)
            summary = self._write(pending, complete)
            if summary is not None:
                written.append(summary)
        return written

    def _write(self, pending: _Pending, complete: bool) -> McapSummary | None:
        """One clip's file; a clip that cannot be written is reported, and the run goes on."""
        incident = pending.incident
        involved = set(incident.cars)
        frames = thinned([_clip_frame(f, involved) for f in pending.frames],
                         self.max_bytes - _fixed_bytes(pending))
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            path = self._new_path(incident)
            file = McapFile(path, self.schema_of, self.max_bytes)
        except (OSError, ArsimError) as exc:
            self.log(f'incident clip at t={incident.time_ns / 1e9:.3f} s not written: {exc}')
            return None
        clip = Clip(incident, path, tuple(frames), tuple(pending.events), complete)
        try:
            self.pack(clip, file)
            for name, values in clip_metadata(clip, self.settings):
                file.add_metadata(name, values)
            summary = file.close()
        except Exception as exc:
            file.discard()
            self.log(f'incident clip {path.name} not written: {exc}')
            return None
        self.written.append(summary)
        dropped = f', {summary.dropped} messages over max_clip_mib left out' \
            if summary.dropped else ''
        self.log(f'incident clip {path} ({sum(summary.counts.values())} messages, '
                 f'{summary.size_bytes / 1024:.0f} KiB{dropped})')
        return summary

    def _new_path(self, incident: Incident) -> Path:
        """``t<seconds>_<cars>_<rule>.mcap``, e.g. ``t0012.350_ego-opp1_rear_end.mcap``;
        ``_2``, ``_3``, ... where that is taken."""
        cars = '-'.join(_UNSAFE.sub('_', car) for car in incident.cars) or 'race'
        stem = f't{incident.time_ns / 1e9:08.3f}_{cars}_{_UNSAFE.sub("_", incident.rule)}'
        path = self.directory / f'{stem}.mcap'
        k = 1
        while path.exists() or path.with_name(f'.{path.name}.part').exists():
            k += 1
            path = self.directory / f'{stem}_{k}.mcap'
        return path


def clip_metadata(clip: Clip, settings: ClipSettings) -> list[tuple[str, dict[str, str]]]:
    """The file's metadata records: the incident, then each of its events."""
    incident = clip.incident
    first = incident.events[0]
    verdict = first.verdict if isinstance(first, Ruling) else ''
    times = [f.time_ns for f in clip.frames]
    records = [(INCIDENT_RECORD, {
        'time_s': f'{incident.time_ns / 1e9:.9f}', 'rule': incident.rule, 'verdict': verdict,
        'cars': ','.join(incident.cars), 'detail': first.detail,
        'before_s': f'{settings.before_s:g}', 'after_s': f'{settings.after_s:g}',
        'start_s': f'{min(times, default=incident.time_ns) / 1e9:.9f}',
        'end_s': f'{max(times, default=incident.time_ns) / 1e9:.9f}',
        'complete': str(clip.complete).lower()})]
    for event in incident.events:
        ruling = event if isinstance(event, Ruling) else None
        records.append((RULING_RECORD, {
            'time_s': f'{incident.time_ns / 1e9:.9f}', 'car': event.car, 'other': event.other,
            'kind': event.kind, 'rule': _rule(event),
            'verdict': '' if ruling is None else ruling.verdict,
            'penalty_s': '0' if ruling is None else f'{ruling.penalty_s:g}',
            'detail': event.detail}))
    return records


def thinned(frames: Sequence[ClipFrame], budget: int) -> list[ClipFrame]:
    """``frames`` with their heaviest sensor streams (one car's sensor, all its outputs)
    halved, then halved again, until their data fits ``budget`` bytes (a stream halved below
    one sample is dropped). Every frame stays, with every car's state."""
    totals: dict[tuple[str, str], int] = {}
    counts: dict[tuple[str, str], int] = {}
    for frame in frames:
        for sent in frame.cars.values():
            for key, nbytes in _streams(sent).items():
                totals[key] = totals.get(key, 0) + nbytes
                counts[key] = counts.get(key, 0) + 1
    strides = dict.fromkeys(totals, 1)

    def size() -> float:
        return sum(totals[k] / strides[k] for k in totals if strides[k] <= counts[k])

    while totals and size() > max(budget, 0):
        live = [k for k in totals if strides[k] <= counts[k]]
        if not live:
            break
        heaviest = max(live, key=lambda k: totals[k] / strides[k])
        strides[heaviest] *= 2
    if all(s == 1 for s in strides.values()):
        return list(frames)
    seen = dict.fromkeys(totals, 0)
    out = []
    for frame in frames:
        cars = {}
        for name, sent in frame.cars.items():
            drop = set()
            for key in _streams(sent):
                if seen[key] % strides[key] or strides[key] > counts[key]:
                    drop.add(key)
                seen[key] += 1
            if drop:
                sent = _without(sent, drop)
            cars[name] = sent
        out.append(frame._replace(cars=cars))
    return out


def _streams(sent: FanoutFrame) -> dict[tuple[str, str], int]:
    """Bytes of each sensor's data in one car's frame, by (car, sensor)."""
    streams: dict[tuple[str, str], int] = {}
    for name, array in sent.arrays.items():
        meta = sent.meta.get(name)
        key = (meta.car, meta.sensor) if meta is not None else (sent.car, name)
        streams[key] = streams.get(key, 0) + array.nbytes
    return streams


def _without(sent: FanoutFrame, streams: set[tuple[str, str]]) -> FanoutFrame:
    def dropped(name: str) -> bool:
        meta = sent.meta.get(name)
        return ((meta.car, meta.sensor) if meta is not None else (sent.car, name)) in streams
    return dataclasses.replace(
        sent, arrays={k: v for k, v in sent.arrays.items() if not dropped(k)},
        meta={k: v for k, v in sent.meta.items() if not dropped(k)})


def _clip_frame(frame: _Buffered, involved: set[str]) -> ClipFrame:
    """A buffered frame as a clip shows it: the sensor data of the ``involved`` cars only."""
    step, time_ns, cars, _ = frame
    return ClipFrame(step, time_ns, {
        name: FanoutFrame(name, *k) if name in involved else
        FanoutFrame(name, k[0], k[1], k[2], k[3])
        for name, k in cars.items()})


def _fixed_bytes(pending: _Pending) -> int:
    """The estimated message bytes of a clip besides its sensor data."""
    cars = max((len(f[2]) for f in pending.frames), default=0)
    return len(pending.frames) * cars * STATE_BYTES + len(pending.events) * EVENT_BYTES


def _rule(event: Event) -> str:
    return event.rule if isinstance(event, Ruling) and event.rule else CONTACT


def _ordered(event: Event, cars: Iterable[str]) -> tuple[str, ...]:
    """The cars of an incident, the one ``event`` names first (the one at fault)."""
    cars = set(cars)
    first = [car for car in (event.car, event.other) if car in cars]
    return tuple(first + sorted(cars - set(first)))


__all__ = ['CONTACT', 'Clip', 'ClipFrame', 'ClipPacker', 'ClipRecorder', 'Incident',
           'clip_metadata', 'thinned']
