"""Parameter presets and packing (arsim_core.dynamics.params)."""

from __future__ import annotations

import dataclasses

import pytest

from arsim_core.dynamics import F1TENTH, FULL_SCALE, PRESETS
from arsim_core.dynamics.params import N_PARAMS, PACEJKA, PACEJKA_NAMES, pack


def test_f1tenth_matches_f1tenth_gym() -> None:
    p = F1TENTH
    gym = {'mu': 1.0489, 'C_Sf': 4.718, 'C_Sr': 5.4562, 'lf': 0.15875, 'lr': 0.17145,
           'h': 0.074, 'm': 3.74, 'I': 0.04712, 's_min': -0.4189, 's_max': 0.4189,
           'sv_min': -3.2, 'sv_max': 3.2, 'v_switch': 7.319, 'a_max': 9.51, 'v_min': -5.0,
           'v_max': 20.0}
    ours = {'mu': p.tyre.friction, 'C_Sf': p.tyre.cornering_stiffness_front,
            'C_Sr': p.tyre.cornering_stiffness_rear, 'lf': p.body.cog_to_front_axle,
            'lr': p.body.cog_to_rear_axle, 'h': p.body.cog_height, 'm': p.body.mass,
            'I': p.body.yaw_inertia, 's_min': p.steering.min_angle, 's_max': p.steering.max_angle,
            'sv_min': p.steering.min_rate, 'sv_max': p.steering.max_rate,
            'v_switch': p.longitudinal.switching_speed, 'a_max': p.longitudinal.max_acceleration,
            'v_min': p.longitudinal.min_speed, 'v_max': p.longitudinal.max_speed}
    assert ours == gym
    # STD wheel: same I_y_w / (m R_w^2) as CommonRoad's BMW 320i
    ratio = p.tyre.wheel_inertia / (p.body.mass * p.tyre.wheel_radius ** 2)
    assert ratio == pytest.approx(1.7 / (1093.2952334674046 * 0.344 ** 2), rel=1e-5)


def test_full_scale_matches_commonroad_set_2() -> None:
    cr = pytest.importorskip('vehiclemodels.parameters_vehicle2').parameters_vehicle2()
    p = FULL_SCALE
    assert (p.body.mass, p.body.yaw_inertia, p.body.cog_to_front_axle, p.body.cog_to_rear_axle,
            p.body.cog_height) == (cr.m, cr.I_z, cr.a, cr.b, cr.h_s)
    assert p.tyre.friction == cr.tire.p_dy1
    assert p.tyre.cornering_stiffness_front == -cr.tire.p_ky1 / cr.tire.p_dy1
    assert p.tyre.cornering_stiffness_rear == -cr.tire.p_ky1 / cr.tire.p_dy1
    assert (p.tyre.wheel_radius, p.tyre.wheel_inertia) == (cr.R_w, cr.I_y_w)
    assert (p.drivetrain.brake_torque_split_front, p.drivetrain.drive_torque_split_front) == \
        (cr.T_sb, cr.T_se)
    assert (p.steering.min_angle, p.steering.max_angle, p.steering.min_rate,
            p.steering.max_rate) == (cr.steering.min, cr.steering.max, cr.steering.v_min,
                                     cr.steering.v_max)
    lo = p.longitudinal
    assert (lo.max_acceleration, lo.switching_speed, lo.min_speed, lo.max_speed) == \
        (cr.longitudinal.a_max, cr.longitudinal.v_switch, cr.longitudinal.v_min,
         cr.longitudinal.v_max)
    for name in PACEJKA_NAMES:
        assert getattr(p.tyre.pacejka, name) == getattr(cr.tire, name), name


def test_presets_are_frozen_and_packed() -> None:
    assert PRESETS['f1tenth'] is F1TENTH
    with pytest.raises(dataclasses.FrozenInstanceError):
        F1TENTH.body.mass = 1.0  # type: ignore[misc]
    flat = pack(FULL_SCALE)
    assert len(flat) == N_PARAMS
    assert flat[PACEJKA:] == dataclasses.astuple(FULL_SCALE.tyre.pacejka)
    assert F1TENTH.body.wheelbase == pytest.approx(0.3302)
