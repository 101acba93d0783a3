"""What ``arsim-fit`` makes of bags it cannot fully use: missing topics (one message naming
them and what would serve), a truncated bag (read up to the damage), a SQLite bag, a drive
too gentle to identify the limits (the report says so), a tampered bag."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from calibration_drive import record

from arsim_core.fit import FitError
from arsim_core.fit.recording import read_recording
from arsim_core.fit.run import fit_bag
from arsim_launch.fit_cli import main

REPO = Path(__file__).resolve().parents[2]
F1TENTH = REPO / 'config/cars/f1tenth.yaml'


def test_a_bag_without_commands_or_speed_is_one_message_naming_both(
        tmp_path: Path, hidden_car: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = tmp_path / 'no_drive'
    record(bag, hidden_car, 3.0, topics=['/sensors/imu/raw', '/clock'])
    status = main([str(bag), '--profile', str(F1TENTH), '-o', str(tmp_path / 'car.yaml'),
                   '--report', str(tmp_path / 'r.html'), '--quiet'])
    assert status == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f'arsim-fit: error: {bag}: cannot fit: missing drive commands: '
                           'expected /drive (ackermann_msgs/AckermannDriveStamped)'), line
    assert 'speed: expected /odom (nav_msgs/Odometry)' in line
    assert 'The bag holds: /clock (rosgraph_msgs/Clock, ' in line and '/sensors/imu/raw' in line
    assert not (tmp_path / 'car.yaml').exists()


def test_a_truncated_bag_is_read_up_to_the_damage(calibration_bag: Path,
                                                  tmp_path: Path) -> None:
    whole = read_recording(calibration_bag, None)
    bag = tmp_path / 'cut'
    shutil.copytree(calibration_bag, bag)
    (storage,) = bag.glob('*.mcap')
    data = storage.read_bytes()
    storage.write_bytes(data[:len(data) // 2])
    cut = read_recording(bag, None)
    assert any('damaged after' in note for note in cut.notes), cut.notes
    assert 0.3 * whole.duration < cut.duration < 0.7 * whole.duration
    n = len(cut.t)
    assert (cut.speed == whole.speed[:n]).all() and (cut.pose == whole.pose[:n]).all()


def test_a_sqlite_bag_reads_as_the_mcap_one(hidden_car: Path, tmp_path: Path) -> None:
    kinds = {}
    for storage in ('mcap', 'sqlite3'):
        record(tmp_path / storage, hidden_car, 4.0, storage=storage)
        kinds[storage] = read_recording(tmp_path / storage, None)
    a, b = kinds['mcap'], kinds['sqlite3']
    assert len(a.t) > 100 and (a.t == b.t).all() and (a.speed == b.speed).all()
    assert (a.commands.ackermann == b.commands.ackermann).all()
    assert a.topics == b.topics == {'drive': '/drive', 'speed': '/odom',
                                    'imu': '/sensors/imu/raw', 'pose': '/ground_truth/odom'}


def test_a_gentle_drive_leaves_the_limits_unidentified_and_says_why(
        gentle_bag: Path, tmp_path: Path) -> None:
    outcome = fit_bag(gentle_bag, F1TENTH, tmp_path / 'car.yaml', tmp_path / 'report.html',
                      tmp_path / 'dr.yaml', progress=False)
    report = (tmp_path / 'report.html').read_text()
    for name in ('max_acceleration', 'max_steering_rate', 'cornering_stiffness_front',
                 'steering_dead_time', 'steering_lag'):
        verdict = outcome.verdicts[name]
        assert not verdict.identified, name
        assert verdict.why.startswith('too gentle'), (name, verdict.why)
        assert verdict.value == verdict.start
    assert 'not identified: too gentle: the speed never changed faster than' in report
    assert 'not identified: too gentle: lateral acceleration up to' in report
    written = (tmp_path / 'car.yaml').read_text()
    assert 'max_acceleration: 9.51' in written and 'max_rate: 3.2' in written


def test_a_bag_whose_metadata_leads_out_of_it_is_refused(calibration_bag: Path,
                                                         tmp_path: Path) -> None:
    bag = tmp_path / 'tampered'
    shutil.copytree(calibration_bag, bag)
    meta = bag / 'metadata.yaml'
    name = next(bag.glob('*.mcap')).name
    meta.write_text(meta.read_text().replace(name, f'../{name}'))
    with pytest.raises(FitError, match=r"'\.\./.*\.mcap' is not a storage file of this bag"):
        read_recording(bag, None)

