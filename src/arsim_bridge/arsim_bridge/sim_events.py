"""The engine's events as ``arsim_msgs/SimEvent`` messages: one table of kinds and one builder,
for the bridge (events its referee judged) and the dynamics nodes (events of the car they
step)."""

from __future__ import annotations

from arsim_bridge.common import to_time
from arsim_core.engine import referee
from arsim_core.engine.cones import CONE_DOWN
from arsim_core.engine.missions import MISSION, OFF_COURSE
from arsim_msgs.msg import SimEvent

EVENT_KINDS = {referee.COLLISION: SimEvent.COLLISION, referee.RESET: SimEvent.RESET,
               referee.MODEL_ERROR: SimEvent.MODEL_ERROR,
               referee.INVALID_STATE: SimEvent.INVALID_STATE, CONE_DOWN: SimEvent.CONE_DOWN,
               OFF_COURSE: SimEvent.OFF_COURSE, MISSION: SimEvent.MISSION,
               referee.RULING: SimEvent.RULING}


def sim_event(event: referee.Event, stamp_ns: int, frame_id: str) -> SimEvent:
    """``event`` stamped ``stamp_ns`` (the frame whose state shows its outcome)."""
    msg = SimEvent(car_id=event.car, kind=EVENT_KINDS[event.kind], other=event.other,
                   detail=event.detail)
    msg.header.stamp = to_time(stamp_ns)
    msg.header.frame_id = frame_id
    return msg
