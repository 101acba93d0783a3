"""``arsim-fit`` on a drive recorded from arsim with a hidden car: the parameters the drive
identifies come back within 10 %, and the fitted profile replays the drive at least five times
better than the profile the fit started from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from calibration_drive import HIDDEN

from arsim_core.config.profile import load_profile
from arsim_core.engine.randomization import Randomization
from arsim_launch.fit_cli import main

REPO = Path(__file__).resolve().parents[2]
#: What a calibration drive must identify (the speed gain for braking may stay a guess: the
#: braking the programme asks for runs into the acceleration limit).
MUST_IDENTIFY = {'steering_dead_time', 'drive_dead_time', 'steering_lag', 'drive_lag',
                 'max_steering_rate', 'max_acceleration', 'cornering_stiffness_front',
                 'cornering_stiffness_rear'}


@pytest.fixture(scope='module')
def fitted(calibration_bag: Path, tmp_path_factory: pytest.TempPathFactory
           ) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp('fitted')
    import io
    from contextlib import redirect_stdout

    printed = io.StringIO()
    with redirect_stdout(printed):
        status = main([str(calibration_bag), '--profile', str(REPO / 'config/cars/f1tenth.yaml'),
                       '-o', str(out / 'car.yaml'), '--report', str(out / 'report.html'),
                       '--quiet'])
    assert status == 0, printed.getvalue()
    return out, printed.getvalue()


def _values(profile: Path) -> dict[str, float]:
    vehicle = load_profile(profile).vehicle
    a, p, s = vehicle.actuators, vehicle.params, vehicle.controller.speed
    return {'steering_dead_time': a.steering_dead_time, 'drive_dead_time': a.drive_dead_time,
            'steering_lag': a.steering_lag, 'drive_lag': a.drive_lag,
            'max_steering_rate': p.steering.max_rate,
            'max_acceleration': p.longitudinal.max_acceleration,
            'cornering_stiffness_front': p.tyre.cornering_stiffness_front,
            'cornering_stiffness_rear': p.tyre.cornering_stiffness_rear,
            'kp_accelerate_forward': s.kp_accelerate_forward,
            'kp_brake_forward': s.kp_brake_forward}


def test_identified_parameters_come_back_within_ten_percent(fitted: tuple[Path, str]) -> None:
    out, printed = fitted
    identified = set(re.search(r'^identified: (.*)$', printed, re.M).group(1).split(', '))
    assert MUST_IDENTIFY <= identified, printed
    got = _values(out / 'car.yaml')
    start = _values(REPO / 'config/cars/f1tenth.yaml')
    for name in identified & HIDDEN.keys():
        assert got[name] == pytest.approx(HIDDEN[name], rel=0.1), (name, got[name])
        assert got[name] != start[name]
    # the profile is the starting one otherwise: its sensors, footprint and friction
    assert load_profile(out / 'car.yaml').vehicle.params.tyre.friction == 1.0489


def test_the_fitted_profile_replays_the_drive_five_times_better(
        fitted: tuple[Path, str]) -> None:
    _, printed = fitted
    before, after, ratio = re.search(
        r'replay error ([\d.]+)% -> ([\d.]+)% \(([\d.]+) times lower\)', printed).groups()
    assert float(before) / float(after) >= 5.0, printed
    assert float(ratio) >= 5.0


def test_the_report_and_the_randomisation_file(fitted: tuple[Path, str]) -> None:
    out, _ = fitted
    report = (out / 'report.html').read_text()
    for part in ('Errors', 'Parameters', 'speed', 'yaw rate', 'lateral acceleration', 'path',
                 'Domain randomisation', '/drive', '/sensors/imu/raw'):
        assert part in report, part
    assert report.count('<svg') == 4 and 'http' not in report.split('</style>')[1]
    assert 'friction coefficient' in report and 'flat cost direction' in report
    ranges = yaml.safe_load((out / 'car.randomization.yaml').read_text())
    loaded = Randomization.load(out / 'car.randomization.yaml')
    assert set(loaded.ranges) == set(ranges) >= {'steering_dead_time', 'drive_lag',
                                                 'max_acceleration', 'friction'}
    for key in ('steering_dead_time', 'drive_dead_time', 'max_steering_rate',
                'max_acceleration'):
        lo, hi = ranges[key]
        assert lo <= HIDDEN[key] * 1.1 and hi >= HIDDEN[key] * 0.9 and hi - lo < 0.3 * hi, key
