"""Actuator dead time, lag and command noise (arsim_core.dynamics.actuators): when a command
reaches the car, how fast the actuators follow it and how exactly, on a single vehicle and
inside a fleet."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from arsim_core.dynamics import NUMBA_ENABLED, Vehicle, load_vehicle_config
from arsim_core.dynamics.actuators import ActuatorParameters, DeadTime
from arsim_core.dynamics.controllers import (
    ACCEL_APPLIED,
    N_CONTROL,
    SPEED_APPLIED,
    SPEED_TARGET,
    STEER_APPLIED,
    STEER_TARGET,
    THROTTLE_APPLIED,
)
from arsim_core.dynamics.fleet import Fleet
from arsim_core.errors import ArsimError

FRAME_S = 0.01


def car(profile: dict[str, Any], **actuators: dict[str, float]) -> Vehicle:
    profile['Actuators'] = actuators
    vehicle = Vehicle(load_vehicle_config(profile, 'car.yaml'))
    vehicle.reset(0.0, 0.0, 0.0)
    return vehicle


def first_response_s(vehicle: Vehicle, read: str, frames: int = 60) -> float:
    """Sim time of the first frame after which ``read`` (speed or steering) has moved."""
    for frame in range(1, frames + 1):
        vehicle.advance(FRAME_S)
        value = vehicle.speed if read == 'speed' else vehicle.steering_angle
        if abs(value) > 1e-9:
            return frame * FRAME_S
    raise AssertionError(f'{read} never moved')


@pytest.mark.parametrize(('dead_time', 'responds_after'),
                         [(0.0, 0.01), (0.05, 0.06), (0.045, 0.06), (0.2, 0.21)])
def test_a_drive_command_moves_the_car_after_the_dead_time(
        f1tenth_profile: dict[str, Any], dead_time: float, responds_after: float) -> None:
    """A command reaches the motor at the first frame at or after its dead time has passed;
    the car moves in the frame that follows (at most one frame late when the dead time is not
    a whole number of frames)."""
    vehicle = car(f1tenth_profile, drive={'dead_time': dead_time})
    vehicle.set_ackermann(2.0, 0.0)
    assert first_response_s(vehicle, 'speed') == pytest.approx(responds_after)


def test_steering_and_drive_wait_out_their_own_dead_times(
        f1tenth_profile: dict[str, Any]) -> None:
    vehicle = car(f1tenth_profile, steering={'dead_time': 0.08}, drive={'dead_time': 0.02})
    vehicle.set_ackermann(2.0, 0.3)
    rolling, steering = [], []
    for _ in range(10):
        vehicle.advance(FRAME_S)
        rolling.append(abs(vehicle.speed) > 0.0)
        steering.append(abs(vehicle.steering_angle) > 0.0)
    assert rolling == [False] * 2 + [True] * 8
    assert steering == [False] * 8 + [True] * 2


def test_commands_keep_their_order_and_spacing_through_the_dead_time(
        f1tenth_profile: dict[str, Any]) -> None:
    """Each command of a sequence arrives exactly the dead time after it was given: the speed
    targets the controller saw are the given ones, shifted by five frames."""
    vehicle = car(f1tenth_profile, drive={'dead_time': 0.05})
    given = [0.5 * i for i in range(12)]
    seen = []
    for target in given:
        vehicle.set_ackermann(target, 0.0)
        vehicle.advance(FRAME_S)
        seen.append(float(vehicle.controls[SPEED_APPLIED]))
    assert seen == [0.0] * 5 + given[:7]


def test_a_placed_car_has_no_command_in_flight(f1tenth_profile: dict[str, Any]) -> None:
    vehicle = car(f1tenth_profile, drive={'dead_time': 0.1})
    vehicle.set_ackermann(5.0, 0.0)
    for _ in range(5):
        vehicle.advance(FRAME_S)
    vehicle.reset(0.0, 0.0, 0.0, speed=1.0)
    for _ in range(20):  # past the dead time: the old 5 m/s must not arrive
        vehicle.advance(FRAME_S)
    assert vehicle.speed == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize('channel', ['steering', 'drive'])
def test_the_lag_follows_a_step_as_a_first_order_filter(f1tenth_profile: dict[str, Any],
                                                         channel: str) -> None:
    """After one time constant the actuator has come 1 - 1/e of the way, at any sub-step."""
    lag = 0.1
    vehicle = car(f1tenth_profile, **{channel: {'lag': lag}})
    target = 0.3 if channel == 'steering' else 3.0
    vehicle.set_ackermann(*((0.0, target) if channel == 'steering' else (target, 0.0)))
    for _ in range(round(lag / FRAME_S)):
        vehicle.advance(FRAME_S)
    slot = STEER_APPLIED if channel == 'steering' else SPEED_APPLIED
    assert vehicle.controls[slot] == pytest.approx(target * (1.0 - math.exp(-1.0)), rel=1e-9)


def test_a_lagged_car_reaches_its_command_later_than_an_ideal_one(
        f1tenth_profile: dict[str, Any]) -> None:
    ideal = car(dict(f1tenth_profile))
    lagged = car(f1tenth_profile, drive={'lag': 0.3})
    for vehicle in (ideal, lagged):
        vehicle.set_ackermann(3.0, 0.0)
        for _ in range(30):
            vehicle.advance(FRAME_S)
    assert 0.0 < lagged.speed < ideal.speed - 0.5


@pytest.mark.skipif(not NUMBA_ENABLED, reason='fleets step compiled kernels only')
def test_a_fleet_steps_lagged_cars_and_leaves_delayed_ones_to_themselves(
        f1tenth_profile: dict[str, Any]) -> None:
    """Lag runs in the shared kernel, so lagged cars still share a call; a dead time needs the
    car's own command line, so such a car is not grouped."""
    lagged = {name: car(dict(f1tenth_profile), drive={'lag': 0.2}) for name in ('a', 'b')}
    alone = car(dict(f1tenth_profile), drive={'lag': 0.2})
    delayed = car(dict(f1tenth_profile), drive={'dead_time': 0.05})
    fleets = Fleet.group({**lagged, 'delayed': delayed})
    assert [fleet.names for fleet in fleets] == [('a', 'b')]
    for vehicle in (*lagged.values(), alone):
        vehicle.set_ackermann(2.0, 0.1)
    for _ in range(25):
        fleets[0].advance(FRAME_S)
        alone.advance(FRAME_S)
    for vehicle in lagged.values():
        assert vehicle.state.tolist() == alone.state.tolist()


def test_no_actuators_section_is_an_ideal_car(f1tenth_profile: dict[str, Any]) -> None:
    config = load_vehicle_config(f1tenth_profile, 'car.yaml')
    assert config.actuators == ActuatorParameters()
    assert not config.actuators.delayed


@pytest.mark.parametrize(('section', 'message'), [
    ({'steering': {'dead_time': -0.1}}, 'Actuators.steering.dead_time'),
    ({'drive': {'lag': 'slow'}}, 'Actuators.drive.lag'),
    ({'drive': {'delay': 0.1}}, 'delay'),
    ({'throttle': {'lag': 0.1}}, 'throttle'),
    ({'steering': {'lag': 60.0}}, 'Actuators.steering.lag'),
    ({'drive': {'noise_std': -0.1}}, 'Actuators.drive.noise_std'),
    ({'steering': {'noise_std': 1e308}}, 'Actuators.steering.noise_std'),
])
def test_a_bad_actuators_section_names_its_key(f1tenth_profile: dict[str, Any],
                                               section: dict[str, Any], message: str) -> None:
    f1tenth_profile['Actuators'] = section
    with pytest.raises(ArsimError, match=message) as raised:
        load_vehicle_config(f1tenth_profile, 'car.yaml')
    assert 'car.yaml' in str(raised.value)


def noisy_targets(profile: dict[str, Any], seed: int, commands: int = 2000
                  ) -> list[tuple[float, float]]:
    profile['Actuators'] = {'steering': {'noise_std': 0.01}, 'drive': {'noise_std': 0.2}}
    vehicle = Vehicle(load_vehicle_config(profile, 'car.yaml'), seed, car_index=1)
    targets = []
    for _ in range(commands):
        vehicle.set_ackermann(3.0, 0.1)
        targets.append((float(vehicle.controls[SPEED_TARGET]),
                        float(vehicle.controls[STEER_TARGET])))
    return targets


def test_command_noise_has_its_spread_and_repeats_with_the_seed(
        f1tenth_profile: dict[str, Any]) -> None:
    targets = noisy_targets(dict(f1tenth_profile), seed=7)
    speeds, angles = (np.array(column) for column in zip(*targets, strict=True))
    assert speeds.mean() == pytest.approx(3.0, abs=0.02)
    assert speeds.std() == pytest.approx(0.2, rel=0.1)
    assert angles.mean() == pytest.approx(0.1, abs=0.001)
    assert angles.std() == pytest.approx(0.01, rel=0.1)
    assert noisy_targets(dict(f1tenth_profile), seed=7) == targets
    assert noisy_targets(dict(f1tenth_profile), seed=8) != targets


def test_a_standstill_command_stays_exact_under_drive_noise(
        f1tenth_profile: dict[str, Any]) -> None:
    vehicle = car(f1tenth_profile, drive={'noise_std': 0.5})
    for _ in range(50):
        vehicle.set_ackermann(0.0, 0.0)
        vehicle.advance(FRAME_S)
    assert vehicle.speed == 0.0


def test_reseeding_repeats_the_noise_of_a_car(f1tenth_profile: dict[str, Any]) -> None:
    vehicle = car(f1tenth_profile, steering={'noise_std': 0.05})
    draws = []
    for _ in range(2):
        vehicle.reseed(3, 0)
        vehicle.set_normalised(0.5, 0.0, 0.2)
        draws.append(float(vehicle.controls[STEER_TARGET]))
    vehicle.reseed(3, 1)  # another car of the same run: another stream
    vehicle.set_normalised(0.5, 0.0, 0.2)
    assert draws[0] == draws[1] != float(vehicle.controls[STEER_TARGET])


def test_a_placed_noisy_car_holds_its_speed_with_straight_wheels(
        f1tenth_profile: dict[str, Any]) -> None:
    vehicle = car(f1tenth_profile, steering={'noise_std': 0.05}, drive={'noise_std': 0.5})
    vehicle.reset(0.0, 0.0, 0.0, speed=2.0)
    assert (vehicle.controls[SPEED_TARGET], vehicle.controls[STEER_TARGET]) == (2.0, 0.0)


@pytest.mark.parametrize('command', ['direct', 'normalised'])
def test_the_drive_lag_filters_every_drive_interface(f1tenth_profile: dict[str, Any],
                                                     command: str) -> None:
    """A direct acceleration input and a normalised throttle lag as a speed target does."""
    vehicle = car(f1tenth_profile, drive={'lag': 0.1})
    if command == 'direct':
        vehicle.set_inputs(0.0, 5.0)
        slot, commanded = ACCEL_APPLIED, 5.0
    else:
        vehicle.set_normalised(0.8, 0.0, 0.0)
        slot, commanded = THROTTLE_APPLIED, 0.8
    for _ in range(10):  # one time constant
        vehicle.advance(FRAME_S)
    assert vehicle.controls[slot] == pytest.approx(commanded * (1.0 - math.exp(-1.0)), rel=1e-9)


def test_a_long_dead_time_at_a_high_rate_releases_every_command_in_turn() -> None:
    """0.25 s at 1 kHz holds 250 commands in flight at once; over 3000 steps (the line
    forgetting what has passed as it goes) each arrives exactly 250 steps after it was given,
    steering the same way with its own 0.1 s."""
    line = DeadTime(ActuatorParameters(steering_dead_time=0.1, drive_dead_time=0.25))
    controls = [0.0] * N_CONTROL
    given = [0.0] * N_CONTROL
    for step in range(3000):
        given[SPEED_TARGET] = given[STEER_TARGET] = float(step + 1)
        line.release(step * 0.001, given, controls)
        assert controls[SPEED_TARGET] == max(step - 250 + 1, 0)
        assert controls[STEER_TARGET] == max(step - 100 + 1, 0)
