"""The standings as the RaceStatus message: what the bridge publishes on the race topic and
the dataset runner records as the final results."""

from __future__ import annotations

import math

from arsim_core.config import race_event as formats
from arsim_core.engine import RaceMetrics
from arsim_core.engine import race_event as ev
from arsim_msgs.msg import CarRaceStatus, RaceStatus

SESSION_KINDS = {formats.PRACTICE: RaceStatus.SESSION_PRACTICE,
                 formats.QUALIFYING: RaceStatus.SESSION_QUALIFYING,
                 formats.RACE: RaceStatus.SESSION_RACE}
FLAGS = {ev.LIGHTS: RaceStatus.FLAG_LIGHTS, ev.FORMATION: RaceStatus.FLAG_FORMATION,
         ev.GREEN: RaceStatus.FLAG_GREEN, ev.WHITE: RaceStatus.FLAG_WHITE,
         ev.CHEQUERED: RaceStatus.FLAG_CHEQUERED}
STATUSES = {ev.RUNNING: CarRaceStatus.STATUS_RUNNING, ev.FINISHED: CarRaceStatus.STATUS_FINISHED,
            ev.DNF: CarRaceStatus.STATUS_DNF, ev.DSQ: CarRaceStatus.STATUS_DSQ}


def race_status(metrics: RaceMetrics, track: str, final: bool,
                event: ev.EventState | None = None) -> RaceStatus:
    """The standings as a RaceStatus message (NaN for times not there yet), with the race
    event's session, flag and each car's entry in its results where there is one."""
    def seconds(value: float | None) -> float:
        return math.nan if value is None else float(value)

    cars = [CarRaceStatus(
        car_id=c.name, position=c.position, s=c.s, lap_fraction=c.lap_fraction,
        progress=c.progress, laps=c.laps, lap_time=c.lap_time, last_lap=seconds(c.last_lap),
        best_lap=seconds(c.best_lap), lap_times=[float(t) for t in c.lap_times],
        sector_times=[seconds(t) for t in c.sector_times],
        best_sector_times=[seconds(t) for t in c.best_sector_times],
        time_off_track=c.time_off_track, off_track=c.off_track, collisions=c.collisions)
        for c in metrics.standings()]
    msg = RaceStatus(track=track, track_length=metrics.length,
                     sectors=[float(s) for s in metrics.sectors], final=final, cars=cars)
    if event is not None:
        add_event(msg, event)
    return msg


def add_event(msg: RaceStatus, event: ev.EventState) -> None:
    """The event's state into ``msg``, and each car's result into its entry."""
    msg.session = event.session
    msg.session_kind = SESSION_KINDS[event.kind]
    msg.session_index = event.session_index
    msg.flag = FLAGS[event.flag]
    msg.lights = event.lights
    msg.laps_remaining = event.laps_remaining
    msg.time_remaining = float(event.time_remaining_s)
    msg.session_time = float(event.session_time_s)
    msg.event_finished = event.finished
    rows = {row.car: row for row in event.results}
    for car in msg.cars:
        row = rows.get(car.car_id)
        if row is not None:
            car.status = STATUSES[row.status]
            car.session_position = row.position
            car.penalty_time = float(row.penalty_s)
            car.warnings = row.warnings
