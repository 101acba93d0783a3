"""The simulation engine: sim time, cars, referee, sensor schedule, rendering and race
metrics in one ROS-free object, which the ROS bridge and the Gymnasium environment both drive.

Reading order: :mod:`.engine` (the object), :mod:`.lockstep` (the loop for cars integrated
elsewhere), :mod:`.referee`, :mod:`.race_metrics`, :mod:`.render`.
"""

from arsim_core.engine.engine import Engine, Frame
from arsim_core.engine.lockstep import Drivers, Link, Lockstep
from arsim_core.engine.pacing import Pacing, PacingStatus
from arsim_core.engine.race_metrics import CarRaceStatus, RaceMetrics
from arsim_core.engine.referee import Event, Judgement, Placement, Referee
from arsim_core.engine.render import InProcessRenderer, ProtocolRenderer, Renderer
from arsim_core.engine.schedule import SensorSchedule
from arsim_core.engine.state import CarState, StateTable
from arsim_core.engine.world import TrackWorld
from arsim_core.geometry import Pose2D

__all__ = [
    'CarRaceStatus', 'CarState', 'Drivers', 'Engine', 'Event', 'Frame', 'InProcessRenderer',
    'Judgement', 'Link', 'Lockstep', 'Pacing', 'PacingStatus', 'Placement', 'Pose2D',
    'ProtocolRenderer', 'RaceMetrics', 'Referee', 'Renderer', 'SensorSchedule', 'StateTable',
    'TrackWorld',
]
