"""The race stewards' settings (``race.stewards`` in a scenario): the thresholds of every
incident rule and the penalties of the verdict ladder (docs/race-control.md).

Distances along the track are in lengths of the car concerned and lateral moves in its widths,
so one set of defaults fits a 1:10 car and a full-scale one alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arsim_core.yaml_fields import Section

NO_ACTION = 'no_action'
WARNING = 'warning'
TIME_PENALTY = 'time_penalty'
DRIVE_THROUGH = 'drive_through'
DISQUALIFIED = 'disqualified'
#: The verdicts a rule may give an offence, mildest first.
OFFENCE_VERDICTS = (WARNING, TIME_PENALTY, DRIVE_THROUGH)


@dataclass(frozen=True)
class RearEndSettings:
    """Contact with one car clearly behind (not alongside): the car behind is at fault from
    ``warning_speed`` [m/s] of closing speed (a warning) and from ``penalty_speed``
    (``verdict``)."""

    warning_speed: float = 0.5
    penalty_speed: float = 1.5
    verdict: str = TIME_PENALTY


@dataclass(frozen=True)
class SideBySideSettings:
    """Contact alongside: the car that moved more than ``lateral_move`` of its width towards
    the other within ``race.stewards.lookback_s`` (the other not) is at fault."""

    lateral_move: float = 0.5
    verdict: str = TIME_PENALTY


@dataclass(frozen=True)
class DiveBombSettings:
    """Contact alongside by a car that ``race.stewards.lookback_s`` earlier was more than
    ``gap`` of its lengths behind the other, bumper to bumper."""

    gap: float = 1.0
    verdict: str = DRIVE_THROUGH


@dataclass(frozen=True)
class RejoinSettings:
    """Contact by a car off the track now or within ``window_s`` [s], with one that stayed
    on it."""

    window_s: float = 2.0
    verdict: str = TIME_PENALTY


@dataclass(frozen=True)
class ForcingOffSettings:
    """A car leaves the track alongside another that moved more than ``lateral_move`` of its
    width towards it within ``race.stewards.lookback_s``."""

    lateral_move: float = 0.5
    verdict: str = TIME_PENALTY


@dataclass(frozen=True)
class TrackLimitsSettings:
    """An excursion off the track longer than ``min_time_s`` [s] that gained more than
    ``min_gain_s`` [s] over driving along the edge it left: ``warnings`` warnings, then
    ``verdict`` for each further one."""

    min_time_s: float = 0.0
    min_gain_s: float = 0.1
    warnings: int = 2
    verdict: str = TIME_PENALTY


@dataclass(frozen=True)
class StewardSettings:
    """Every rule's thresholds, what a time penalty and a drive-through cost [s], and after
    how many of them a car is disqualified (0: never). A car is alongside another when more
    than ``overlap`` of its length is level with it; ``lookback_s`` is how far back the rules
    look for lateral moves and gaps (the braking zone before a contact)."""

    enabled: bool = True
    overlap: float = 0.3
    lookback_s: float = 1.0
    time_penalty_s: float = 5.0
    drive_through_s: float = 20.0
    disqualify_after: int = 3
    rear_end: RearEndSettings = field(default_factory=RearEndSettings)
    side_by_side: SideBySideSettings = field(default_factory=SideBySideSettings)
    dive_bomb: DiveBombSettings = field(default_factory=DiveBombSettings)
    unsafe_rejoin: RejoinSettings = field(default_factory=RejoinSettings)
    forcing_off_track: ForcingOffSettings = field(default_factory=ForcingOffSettings)
    track_limits: TrackLimitsSettings = field(default_factory=TrackLimitsSettings)


def load_stewards(race: Section) -> StewardSettings:
    """``race.stewards`` checked, every key optional (the defaults above)."""
    section = race.section('stewards', {})
    rules = ('rear_end', 'side_by_side', 'dive_bomb', 'unsafe_rejoin', 'forcing_off_track',
             'track_limits')
    section.reject_unknown({'enabled', 'overlap', 'lookback_s', 'time_penalty_s', 'drive_through_s',
                            'disqualify_after', *rules})
    sub = {name: section.section(name, {}) for name in rules}
    allowed = {'rear_end': {'warning_speed', 'penalty_speed', 'verdict'},
               'side_by_side': {'lateral_move', 'verdict'},
               'dive_bomb': {'gap', 'verdict'},
               'unsafe_rejoin': {'window_s', 'verdict'},
               'forcing_off_track': {'lateral_move', 'verdict'},
               'track_limits': {'min_time_s', 'min_gain_s', 'warnings', 'verdict'}}
    for name, keys in allowed.items():
        sub[name].reject_unknown(keys)

    def verdict(name: str, default: str) -> str:
        return sub[name].string('verdict', default, choices=OFFENCE_VERDICTS)

    rear = sub['rear_end']
    warning_speed = rear.number('warning_speed', 0.5, minimum=0.0)
    return StewardSettings(
        enabled=section.boolean('enabled', True),
        overlap=section.number('overlap', 0.3, minimum=0.0, maximum=1.0),
        lookback_s=section.number('lookback_s', 1.0, minimum=0.0, exclusive_minimum=True,
                                  maximum=10.0),
        time_penalty_s=section.number('time_penalty_s', 5.0, minimum=0.0),
        drive_through_s=section.number('drive_through_s', 20.0, minimum=0.0),
        disqualify_after=section.integer('disqualify_after', 3, minimum=0),
        rear_end=RearEndSettings(
            warning_speed=warning_speed,
            penalty_speed=rear.number('penalty_speed', max(1.5, warning_speed),
                                      minimum=warning_speed),
            verdict=verdict('rear_end', TIME_PENALTY)),
        side_by_side=SideBySideSettings(
            lateral_move=sub['side_by_side'].number('lateral_move', 0.5, minimum=0.0),
            verdict=verdict('side_by_side', TIME_PENALTY)),
        dive_bomb=DiveBombSettings(
            gap=sub['dive_bomb'].number('gap', 1.0, minimum=0.0),
            verdict=verdict('dive_bomb', DRIVE_THROUGH)),
        unsafe_rejoin=RejoinSettings(
            window_s=sub['unsafe_rejoin'].number('window_s', 2.0, minimum=0.0, maximum=10.0),
            verdict=verdict('unsafe_rejoin', TIME_PENALTY)),
        forcing_off_track=ForcingOffSettings(
            lateral_move=sub['forcing_off_track'].number('lateral_move', 0.5, minimum=0.0),
            verdict=verdict('forcing_off_track', TIME_PENALTY)),
        track_limits=TrackLimitsSettings(
            min_time_s=sub['track_limits'].number('min_time_s', 0.0, minimum=0.0),
            min_gain_s=sub['track_limits'].number('min_gain_s', 0.1, minimum=0.0),
            warnings=sub['track_limits'].integer('warnings', 2, minimum=0),
            verdict=verdict('track_limits', TIME_PENALTY)))
