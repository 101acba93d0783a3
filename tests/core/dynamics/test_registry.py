"""Model registry and user models loaded from a file named in the profile."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from arsim_core.dynamics import (
    MODELS,
    KinematicSingleTrack,
    ModelDivergedError,
    SingleTrack,
    SingleTrackDrift,
    Vehicle,
    VehicleModel,
    load_vehicle_config_file,
    resolve_model,
)
from arsim_core.dynamics.stepping import MODEL_IDS
from arsim_core.errors import ConfigError

USER_MODEL = '''
import math
from arsim_core.dynamics import VehicleModel, constraints


class Unicycle(VehicleModel):
    """Point mass turning at a yaw rate proportional to the steering angle."""

    name = 'unicycle'
    state_names = ('x', 'y', 'steering_angle', 'speed', 'yaw')
    reference_point = 'body centre'

    @staticmethod
    def derivative(x, u, p):
        s, lo = p.steering, p.longitudinal
        sv = constraints.steering_rate(x[2], u[0], s.min_angle, s.max_angle, s.min_rate,
                                       s.max_rate)
        acc = constraints.acceleration(x[3], u[1], lo.switching_speed, lo.max_acceleration,
                                       lo.min_speed, lo.max_speed)
        return [x[3] * math.cos(x[4]), x[3] * math.sin(x[4]), sv, acc, 2.0 * x[2]]


class Exploding(Unicycle):
    """Returns NaN once it moves: a broken model."""

    @staticmethod
    def derivative(x, u, p):
        nan = float('nan') if x[3] > 0.5 else 0.0
        return [x[3], nan, u[0], u[1], 0.0]
'''


def write_profile(tmp_path: Path, profile: dict[str, Any], model: str) -> Path:
    (tmp_path / 'models').mkdir(exist_ok=True)
    (tmp_path / 'models' / 'unicycle.py').write_text(USER_MODEL)
    profile['model'] = model
    path = tmp_path / 'car.yaml'
    path.write_text(yaml.safe_dump(profile))
    return path


def test_registry_maps_names_to_classes() -> None:
    assert dict(MODELS) == {'ks': KinematicSingleTrack, 'st': SingleTrack,
                            'std': SingleTrackDrift}
    with pytest.raises(TypeError):
        MODELS['mine'] = SingleTrack  # type: ignore[index]
    for cls in MODELS.values():
        assert issubclass(cls, VehicleModel)
        assert cls in MODEL_IDS  # the compiled sub-step loop knows it
        assert len(cls.initial_state(0, 0, 0, 0, _params())) == len(cls.state_names)


def _params() -> Any:
    from arsim_core.dynamics import F1TENTH
    return F1TENTH


def test_user_model_from_file_drives(tmp_path: Path, f1tenth_profile: dict[str, Any]) -> None:
    path = write_profile(tmp_path, f1tenth_profile, 'models/unicycle.py:Unicycle')
    config = load_vehicle_config_file(path)
    assert config.model.__name__ == 'Unicycle'
    car = Vehicle(config)
    assert not car.compiled
    assert car.model_name == 'models/unicycle.py:Unicycle'
    car.reset(1.0, 0.0, 0.0)
    car.set_ackermann(2.0, 0.1)
    for _ in range(200):  # 5 s
        car.advance(0.025)
    vx, vy, r = car.body_velocity
    assert vx == pytest.approx(2.0, abs=1e-6)
    assert vy == pytest.approx(0.0, abs=1e-9)
    assert r == pytest.approx(0.2, abs=1e-6)
    ax, ay = car.body_acceleration
    assert ay == pytest.approx(vx * r, rel=1e-4)  # default finite-difference read-out
    assert abs(ax) < 1e-4
    x, y, yaw = car.pose
    assert math.hypot(x - 1.0, y) > 1.0
    assert yaw == pytest.approx((0.2 * car.time - 0.2 * 0.1 / 3.2 / 2 + math.pi) % math.tau
                                - math.pi, abs=1e-3)  # steering ramps up at 3.2 rad/s first


def test_user_model_producing_nan_raises(tmp_path: Path, f1tenth_profile: dict[str, Any]) -> None:
    car = Vehicle(load_vehicle_config_file(
        write_profile(tmp_path, f1tenth_profile, 'models/unicycle.py:Exploding')))
    car.set_ackermann(3.0, 0.0)
    with pytest.raises(ModelDivergedError, match=r'car\.yaml: model models/unicycle\.py:'
                                                 r'Exploding diverged'):
        for _ in range(100):
            car.advance(0.025)
    car.reset(0.0, 0.0, 0.0)
    car.set_ackermann(0.2, 0.0)
    car.advance(0.025)
    assert car.pose[1] == 0.0


@pytest.mark.parametrize(('spec', 'message'), [
    ('models/missing.py:Unicycle', r"model file '.*missing\.py' does not exist"),
    ('models/unicycle.py:Bicycle', r"unicycle\.py defines no 'Bicycle'"),
    ('models/unicycle.py:math', r'math in unicycle\.py must subclass'),
    ('models/unicycle.txt:Unicycle', r"unknown model 'models/unicycle\.txt:Unicycle', expected "
                                     r'one of: ks, st, std or path/to/model\.py:ClassName'),
])
def test_bad_user_model_specs(tmp_path: Path, f1tenth_profile: dict[str, Any], spec: str,
                              message: str) -> None:
    path = write_profile(tmp_path, f1tenth_profile, spec)
    with pytest.raises(ConfigError, match=rf'^{path}: model: {message}'):
        load_vehicle_config_file(path)


def test_import_error_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / 'broken.py').write_text('raise RuntimeError("boom")\n')
    with pytest.raises(ConfigError, match=r'importing broken\.py failed: RuntimeError: boom'):
        resolve_model('broken.py:Model', str(tmp_path / 'car.yaml'))


def test_abstract_user_model_is_rejected(tmp_path: Path) -> None:
    (tmp_path / 'half.py').write_text(
        'from arsim_core.dynamics import VehicleModel\n'
        'class Half(VehicleModel):\n    state_names = ("x",)\n')
    with pytest.raises(ConfigError, match=r'Half does not implement derivative'):
        resolve_model('half.py:Half', str(tmp_path / 'car.yaml'))
