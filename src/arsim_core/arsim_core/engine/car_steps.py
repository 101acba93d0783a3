"""What happens to one car in a frame besides its dynamics: a placement taking effect, or a
model that diverged being sent back to its start pose.

The engine (cars stepped in process) and the ROS dynamics node (one car in its own process)
both go through these functions, so a placed or diverged car ends in the same state with the
same events, whichever face runs it.
"""

from __future__ import annotations

from arsim_core.dynamics import ModelDivergedError, Vehicle
from arsim_core.engine.referee import MODEL_ERROR, RESET, Event
from arsim_core.geometry import Pose2D


def place(vehicle: Vehicle, car: str, pose: Pose2D, speed: float = 0.0) -> Event:
    """Put ``car`` at ``pose`` with ``speed`` [m/s] along its heading; the event saying so."""
    vehicle.reset(*pose, speed)
    x, y, yaw = pose
    return Event(car, RESET, f'{car} placed at x={x:.3f} y={y:.3f} yaw={yaw:.3f} '
                             f'speed={speed:.2f}')


def recover(vehicle: Vehicle, car: str, error: ModelDivergedError,
            start_pose: Pose2D) -> tuple[Event, Event]:
    """Send a car whose model diverged back to ``start_pose``, at rest: the run goes on, and
    the two events tell the user what happened and where the car went."""
    vehicle.reset(*start_pose)
    return (Event(car, MODEL_ERROR, str(error)),
            Event(car, RESET, f'{car} back to its start pose after a model error'))


def advance(vehicle: Vehicle, car: str, dt: float, start_pose: Pose2D) -> tuple[Event, ...]:
    """Step one car by ``dt`` [s]; the events of a divergence, if it diverged."""
    try:
        vehicle.advance(dt)
    except ModelDivergedError as error:
        return recover(vehicle, car, error, start_pose)
    return ()
