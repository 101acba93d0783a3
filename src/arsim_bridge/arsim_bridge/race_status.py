"""The standings as the RaceStatus message: what the bridge publishes on the race topic and
the dataset runner records as the final results."""

from __future__ import annotations

import math

from arsim_core.engine import RaceMetrics
from arsim_msgs.msg import CarRaceStatus, RaceStatus


def race_status(metrics: RaceMetrics, track: str, final: bool) -> RaceStatus:
    """The standings as a RaceStatus message (NaN for times not there yet)."""
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
    return RaceStatus(track=track, track_length=metrics.length,
                      sectors=[float(s) for s in metrics.sectors], final=final, cars=cars)
