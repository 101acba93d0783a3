"""Geometry of the Formula Student driverless events, every number in one place.

Each value names where it comes from. The official FS Rules PDF was not available when these
were written, so the sources are rules texts quoted elsewhere and reference simulators:

- [S] a secondary quote of a rules text (FSAE 2014 rules, FS-AI 2023 rules quoted rule by rule,
  FS Rules 2020 quoted in simulator issues);
- [V] read directly from the file of a reference simulator (AMZ fssim, EUFS sim);
- ASSUMPTION: not confirmed by any rules text; check against the official FS Rules.

Lengths are metres, along the direction of travel unless said otherwise.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# Cones

SMALL_CONE_BASE = 0.228
"""Base width of the small blue, yellow and orange cones. [S] "DD.1.3.2" as quoted by
third-party code, and a write-up citing FS Rules 2024 v1.1 (228 x 228 x 325 mm)."""
SMALL_CONE_HEIGHT = 0.325
"""Height of the small cones. [S] same sources as ``SMALL_CONE_BASE``."""
BIG_CONE_BASE = 0.285
"""Base width of the big orange cone. [S] "DD.1.3.2" as quoted (285 x 285 x 505 mm)."""
BIG_CONE_HEIGHT = 0.505
"""Height of the big orange cone. [S] as ``BIG_CONE_BASE``."""
CONE_EDGE_OFFSET = 0.15
"""Cone centres sit this far outside the edge of the driving lane, so the lane width is the
free width between the cones. [V] AMZ fssim skidpad.yaml puts its cones 0.15 m outside the
7.625 m and 10.625 m lane edges. ASSUMPTION that the same holds on the other events."""
BIG_CONE_PAIR_GAP = 0.5
"""Along-track distance of the two big orange cones on each side of a line. [V] EUFS sim
acceleration.csv (start gate cones at x = -50 and -50.5). ASSUMPTION for the rules."""

# ---------------------------------------------------------------------------------------------
# Acceleration

ACCELERATION_LENGTH = 75.0
"""Start line to finish line. [S] FSAE 2014 D5.2; AMZ: "75 m distance with a standing start"."""
ACCELERATION_WIDTH = 3.0
"""Width of the lane. ASSUMPTION: the FS driverless width is not confirmed; 3 m is the common
minimum and the lane of EUFS sim's acceleration layout [V]. (FSAE 2014 D5 says >= 4.9 m [S].)"""
ACCELERATION_CONE_SPACING = 5.0
"""Distance between the cones along each lane edge. ASSUMPTION from EUFS sim's layout [V]
(FSAE 2014 says about every 5 paces, ~6 m [S])."""
ACCELERATION_STAGING = 0.30
"""The foremost part of the car is this far behind the start line. [S] FSAE 2014 D5.2.1,
FS-AI 2023 D5.3.3."""
ACCELERATION_STOP_LENGTH = 100.0
"""The car stops within this distance after the finish line, inside the exit lane.
[S] FS-AI 2023 D5.3.6. ASSUMPTION for FSG (a 75 m figure also circulates)."""
ACCELERATION_ENTRY_LENGTH = 5.0
"""Lane cones reaching back behind the start line, around the staged car. ASSUMPTION."""
ACCELERATION_LAPS = 1
"""One run from start line to finish line. [S] FS-AI 2023 D5."""

# ---------------------------------------------------------------------------------------------
# Skidpad

SKIDPAD_CENTRE_DISTANCE = 18.25
"""Distance between the centres of the two circles. [U/S] quoted as FSAE 2026 D.10.1.1 by a
third party; [V] AMZ fssim skidpad.yaml (centres at y = +-9.125)."""
SKIDPAD_INNER_DIAMETER = 15.25
"""Diameter of the inner edge of the driving lane. [U/S], [V] as the centre distance."""
SKIDPAD_OUTER_DIAMETER = 21.25
"""Diameter of the outer edge of the driving lane (3 m lane). [U/S], [V] as above."""
SKIDPAD_INNER_CONES = 16
"""Cones on each inner circle. [V] AMZ fssim skidpad.yaml."""
SKIDPAD_OUTER_CONES = 13
"""Cones on each outer circle: 16 evenly spaced places less the 3 inside the crossing.
[V] AMZ fssim skidpad.yaml."""
SKIDPAD_OUTER_PLACES = 16
"""Evenly spaced places on an outer circle before those in the crossing are left out.
ASSUMPTION consistent with ``SKIDPAD_OUTER_CONES``."""
SKIDPAD_TIMING_CONES = ((-1.3, -2.0), (1.3, -2.0), (-1.3, 2.0), (1.3, 2.0))
"""The 4 big orange cones at the timekeeping line, (along, across) the entry direction from
the crossing point. [V] AMZ fssim skidpad.yaml."""
SKIDPAD_LANE_WIDTH = 3.0
"""Width of the entry and exit lanes. [U] (AMZ fssim uses 3.3 m)."""
SKIDPAD_STAGING = 15.0
"""The foremost part of the car is this far before the timekeeping line. [S] FS-AI 2023
D4.3.3."""
SKIDPAD_ENTRY_LENGTH = 18.0
"""The entry lane starts this far before the timekeeping line. ASSUMPTION (the staged car
needs room behind it; AMZ fssim starts the car at 16.5 m)."""
SKIDPAD_STOP_LENGTH = 25.0
"""The car stops within this distance after the timekeeping line. [S] FS-AI 2023 D4.3.6."""
SKIDPAD_LANE_CONE_SPACING = 5.0
"""Cone spacing along the entry and exit lanes. ASSUMPTION (AMZ fssim: 3.75 to 5 m)."""
SKIDPAD_LAPS = 4
"""Right circle twice, then left circle twice; laps 2 and 4 are timed. [S] FS-AI 2023 D4.3.5,
FSAE D.10.2.3."""
SKIDPAD_TIMED_LAPS = (2, 4)
"""The timed laps; the result is their mean. [S] FSAE D.10.4.1 as quoted."""

# ---------------------------------------------------------------------------------------------
# Autocross and trackdrive: limits of the track. [U/S] third-party summaries of the rules
# that agree with one another (valigatotuS/LiDAR-FSAE docu/FSAE/Circuit.md and others).

TRACK_MIN_WIDTH = 3.0
"""Minimum track width. [U/S]"""
TRACK_MAX_STRAIGHT = 80.0
"""Longest straight. [U/S]"""
TRACK_MAX_TURN_DIAMETER = 50.0
"""Largest constant turn (diameter). A stretch wider than this counts as a straight. [U/S]"""
TRACK_MIN_HAIRPIN_OUTSIDE_DIAMETER = 9.0
"""Smallest hairpin, outside diameter. [U/S]"""
TRACK_MAX_CONE_SPACING = 5.0
"""Largest distance between neighbouring cones along a track edge. [U/S]"""
TRACK_MIN_LAP = 200.0
"""Shortest lap. [U/S] ("about 200-500 m")"""
TRACK_MAX_LAP = 500.0
"""Longest lap. [U/S]"""
TRACK_CONE_SPACING = 4.0
"""Spacing the generator uses along the edges, under ``TRACK_MAX_CONE_SPACING``. ASSUMPTION."""
TRACK_STAGING = 6.0
"""The staged car's foremost part is this far before the timekeeping line. ASSUMPTION."""
TRACK_START_AREA = 10.0
"""Small orange cones line the edges this far before the timekeeping line (the start area
around the staged car) instead of blue and yellow ones. ASSUMPTION."""
TRACK_STOP_LENGTH = 30.0
"""After the finish the car stops within this distance. [U] (a PacSim-derived summary)."""
AUTOCROSS_LAPS = 1
"""[S] FSDS docs/competition-signals.md."""
TRACKDRIVE_LAPS = 10
"""[S] FSDS docs/competition-signals.md, AMZ ("autonomous race over 10 laps")."""

# ---------------------------------------------------------------------------------------------
# Penalties and the autonomous system's states (the mission referee)

CONE_DOWN_PENALTY_S = 2.0
"""Per cone down or out (DOO) on acceleration, autocross and trackdrive; gate cones count.
[S] FSAE 2014 D5.6.1; FSG Handbook 2020 4.2.3 (via FSDS #215). The FSG value is [U]."""
SKIDPAD_CONE_DOWN_PENALTY_S = 0.2
"""Per DOO on the skidpad. ASSUMPTION (FSAE uses 0.125 s, per a third-party quote)."""
OFF_COURSE_PENALTY_S = 10.0
"""Per off course (all four wheels outside the track). [U] (PacSim-derived summaries)."""
READY_BEFORE_GO_S = 5.0
"""The go signal is taken only after this long in AS Ready. [S] FS Rules 2026 T14.8.4."""
STANDSTILL_SPEED = 0.05
"""Below this speed [m/s] the car counts as at standstill. ASSUMPTION (the rules say
"standstill" without a number)."""
LEFT_COURSE_M = 10.0
"""A car this far outside the course has left the track entirely: the run ends (DNF).
ASSUMPTION."""
STOPPED_IN_COURSE_S = 10.0
"""A car at standstill in the course this long before finishing does not finish (DNF).
ASSUMPTION."""
