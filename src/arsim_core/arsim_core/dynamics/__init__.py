"""Vehicle dynamics for arsim: CommonRoad single-track models, integrators, controllers.

Pure Python (numba optional), no ROS imports. Typical use::

    from arsim_core.dynamics import Vehicle, load_vehicle_config_file
    car = Vehicle(load_vehicle_config_file('config/cars/f1tenth.yaml'))
    car.reset(0.0, 0.0, 0.0)
    car.set_ackermann(speed=2.0, steering_angle=0.1)
    car.advance(0.025)
    x, y, yaw = car.pose
"""

from .._jit import NUMBA_ENABLED
from . import constraints, integrators
from .base import VehicleModel
from .controllers import ControllerGains, SpeedGains, SteeringGains
from .integrators import INTEGRATORS, euler_step, rk4_step
from .ks import KinematicSingleTrack
from .params import (
    F1TENTH,
    FULL_SCALE,
    PRESETS,
    BodyParameters,
    CarParameters,
    DrivetrainParameters,
    LongitudinalParameters,
    PacejkaParameters,
    SteeringParameters,
    TyreParameters,
)
from .registry import MODELS, resolve_model
from .st import SingleTrack
from .std import SingleTrackDrift
from .vehicle import ModelDivergedError, Vehicle, ackermann_out_of_range, drive_command_problem
from .vehicle_config import (
    FOREIGN_KEYS,
    VehicleConfig,
    load_vehicle_config,
    load_vehicle_config_file,
)

__all__ = [
    'F1TENTH', 'FOREIGN_KEYS', 'FULL_SCALE', 'INTEGRATORS', 'MODELS', 'NUMBA_ENABLED', 'PRESETS',
    'BodyParameters', 'CarParameters', 'ControllerGains', 'DrivetrainParameters',
    'KinematicSingleTrack', 'LongitudinalParameters', 'ModelDivergedError', 'PacejkaParameters',
    'SingleTrack', 'SingleTrackDrift', 'SpeedGains', 'SteeringGains', 'SteeringParameters',
    'TyreParameters', 'Vehicle', 'VehicleConfig', 'VehicleModel', 'ackermann_out_of_range',
    'drive_command_problem',
    'constraints', 'euler_step',
    'integrators', 'load_vehicle_config', 'load_vehicle_config_file', 'resolve_model', 'rk4_step',
]
