"""Formula Student missions in the engine: the sample cone driver finishes every mission as
the mission referee judges it, cones a car hits fall where the sensors see them and cost the
rules' seconds, and off-course excursions, false starts and leaving the track are judged.

The car is the FS profile's (its sensors left out where a test needs none, so it runs fast),
driven in process by the engine at the scenario's frame rate.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from drivers.cone_planner import ConePlanner, PathFollower

from arsim_core import labels
from arsim_core.beams import spinning_directions
from arsim_core.config.scenario import load_scenario
from arsim_core.engine import Engine, TrackWorld
from arsim_core.engine.cones import CONE_DOWN, ConeField
from arsim_core.engine.missions import MISSION, OFF_COURSE
from arsim_core.geometry import rotation_matrix
from arsim_core.track import load_track
from arsim_core.track.fs import generate, rules
from arsim_core.track.fs.referee import AsState, MissionResult

MAX_SPEED = 20.0
VIEW_M = 25.0
CLASSES = {'blue': labels.CONE_BLUE, 'yellow': labels.CONE_YELLOW,
           'orange': labels.CONE_ORANGE, 'big_orange': labels.CONE_BIG_ORANGE}


@pytest.fixture(scope='module')
def fs_profile(tmp_path_factory, repo_root: Path):
    """``fs_profile(*sensors)``: the FS car profile with only the named sensors."""
    folder = tmp_path_factory.mktemp('profiles')

    def make(*sensors: str) -> str:
        data = yaml.safe_load((repo_root / 'config' / 'cars' / 'formula_student.yaml')
                              .read_text())
        data['Sensors'] = {k: v for k, v in data['Sensors'].items() if k in sensors}
        path = folder / f'fs_{"_".join(sensors) or "bare"}.yaml'
        path.write_text(yaml.safe_dump(data))
        return str(path)

    return make


@pytest.fixture
def fs_engine(make_scenario, fs_profile):
    """``fs_engine(kind, seed=0, sensors=())``: an engine with the FS car on that layout."""
    made: list[Engine] = []

    def make(kind: str, seed: int = 0, sensors: tuple[str, ...] = ()) -> Engine:
        engine = Engine(make_scenario(profile=fs_profile(*sensors)))
        engine.load_track(TrackWorld.from_track(generate(kind, seed)))
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.close()


def cones_seen(engine: Engine, pose: tuple[float, float, float]) -> dict[str, np.ndarray]:
    """The cones within VIEW_M, where they stand or lie now, in the car frame, by class."""
    assert engine.cones is not None
    rows = engine.cones.state_rows()
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    d = rows[:, :2] - (x, y)
    local = np.column_stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]])
    near = np.hypot(local[:, 0], local[:, 1]) <= VIEW_M
    return {name: local[near & (rows[:, 4] == label)] for name, label in CLASSES.items()}


def drive_mission(engine: Engine, max_time_s: float) -> tuple[MissionResult, list]:
    """The sample driver drives the mission until the referee ends it; result and events."""
    assert engine.world is not None and engine.world.mission is not None
    mission = engine.world.mission
    params = engine.configs['ego'].params
    body, max_steer = params.body, params.steering.max_angle
    half_length = engine.cars[0].profile.footprint.length / 2.0
    driver: ConePlanner | PathFollower
    if mission.kind == 'skidpad':
        assert mission.path is not None
        driver = PathFollower(mission.path, body.wheelbase, max_steer, MAX_SPEED,
                              rear_axle_x=-body.cog_to_rear_axle,
                              stop_short=body.cog_to_rear_axle + half_length + 1.0)
    else:
        driver = ConePlanner(body.wheelbase, max_steer, MAX_SPEED, mission.kind, mission.laps,
                             rear_axle_x=-body.cog_to_rear_axle)
    frame = engine.reset()
    events = list(frame.judgement.events)
    assert engine.missions is not None
    referee = engine.missions.referees['ego']
    while frame.time_ns * 1e-9 < max_time_s and referee.state not in (AsState.FINISHED,
                                                                      AsState.EMERGENCY):
        state = frame.states['ego']
        if referee.state != AsState.DRIVING:
            engine.drive('ego', 0.0, 0.0)
        elif isinstance(driver, PathFollower):
            engine.drive('ego', *driver.step(state.x, state.y, state.yaw, state.vx))
        else:
            engine.drive('ego', *driver.step(cones_seen(engine, state.pose), state.vx))
        frame = engine.advance()
        events.extend(frame.judgement.events)
    return referee.result, events


CASES = [('acceleration', 0, 40.0), ('skidpad', 0, 60.0), ('autocross', 0, 60.0),
         ('autocross', 1, 60.0), ('trackdrive', 0, 300.0)]


@pytest.mark.parametrize(('kind', 'seed', 'max_time_s'), CASES,
                         ids=[f'{kind}-{seed}' for kind, seed, _ in CASES])
def test_the_sample_driver_finishes_each_mission_clean(fs_engine, kind: str, seed: int,
                                                       max_time_s: float) -> None:
    engine = fs_engine(kind, seed)
    result, events = drive_mission(engine, max_time_s)
    assert result.state == AsState.FINISHED, (result.table(), [e.detail for e in events])
    assert not result.dnf
    assert len(result.lap_times) == engine.world.mission.laps
    assert result.cones_down == 0 and result.off_courses == 0
    assert result.total_time == pytest.approx(result.run_time)
    details = [e.detail for e in events if e.kind == MISSION]
    assert details[0] == 'ego: go signal, AS Driving'
    assert sum('lap ' in d for d in details) == engine.world.mission.laps
    assert 'AS Finished' in details[-1]
    if kind == 'skidpad':  # the mean of the two timed laps
        assert result.run_time == pytest.approx((result.lap_times[1] + result.lap_times[3]) / 2)


def test_the_car_is_staged_with_its_front_at_the_start(fs_engine) -> None:
    """The rules stage the foremost part; the car's centre sits half a length behind."""
    engine = fs_engine('acceleration')
    x, _, _ = engine.start_poses['ego']
    front = x + engine.cars[0].profile.footprint.length / 2.0
    assert front == pytest.approx(-rules.ACCELERATION_STAGING)


def drive_straight(engine: Engine, y: float, seconds: float, speed: float = 10.0,
                   steer: float = 0.0) -> list:
    """Reset with the car staged at lateral offset ``y``, wait for the go signal, then drive
    at ``speed`` with ``steer`` for ``seconds`` and stop; the events."""
    x, _, yaw = engine.start_poses['ego']
    events = list(engine.reset({'ego': (x, y, yaw)}).judgement.events)
    frames_per_s = round(1e9 / engine.period_ns)
    for k in range(int((rules.READY_BEFORE_GO_S + seconds) * frames_per_s)):
        going = k * engine.period_ns * 1e-9 > rules.READY_BEFORE_GO_S
        engine.drive('ego', speed if going else 0.0, steer if going else 0.0)
        events.extend(engine.advance().judgement.events)
    return events


def test_a_car_that_drives_over_cones_knocks_them_over_and_pays(fs_engine) -> None:
    engine = fs_engine('acceleration')
    assert engine.cones is not None
    # A metre left of the middle the car's left side (0.7 m out) runs over the blue cones
    # (bases from 1.536 m).
    events = drive_straight(engine, 1.0, 4.0)
    hits = [e for e in events if e.kind == CONE_DOWN]
    down = np.flatnonzero(engine.cones.down)
    assert len(hits) == len(down) >= 3
    assert set(engine.cones.cones.labels[down].tolist()) <= {labels.CONE_BLUE,
                                                             labels.CONE_BIG_ORANGE}
    # Penalties count from the go signal: a cone the staged car stands on is down already.
    go = next(i for i, e in enumerate(events) if e.detail == 'ego: go signal, AS Driving')
    driven_over = [int(e.detail.split()[3]) for e in events[go:] if e.kind == CONE_DOWN]
    counted = len(driven_over)
    assert counted >= 3
    result = engine.missions.results['ego']
    assert result.cones_down == counted
    assert result.penalty_s == pytest.approx(counted * rules.CONE_DOWN_PENALTY_S)
    # Knocked ahead of the car, off their places, lying along the direction of travel.
    rows = engine.cones.state_rows()[driven_over]
    placed = engine.cones.cones.positions[driven_over]
    assert np.all(rows[:, 0] > placed[:, 0] + 0.3)
    assert np.allclose(rows[:, 2], 0.0, atol=0.3)
    # Each cone counts once, though the car stays on top of the row.
    assert len(set(driven_over)) == counted


def test_a_knocked_cone_is_seen_where_it_lies(fs_engine) -> None:
    """The front-wing LiDAR sees each knocked cone ahead where it lies, low on the ground,
    and nothing where it stood."""
    engine = fs_engine('acceleration', sensors=('lidar',))
    assert engine.cones is not None
    drive_straight(engine, 1.0, 1.5, speed=6.0)
    # The car drove on over what it knocked: back to the start to look at it, at rest.
    x, _, yaw = engine.start_poses['ego']
    engine.restart({'ego': (x, 0.0, yaw)})
    engine.drive('ego', 0.0, 0.0)
    frame = engine.advance()
    while 'ego/lidar' not in frame.sensors:
        frame = engine.advance()
    rows = engine.cones.state_rows()
    knocked = np.flatnonzero(rows[:, 3] == 1.0)
    assert len(knocked)
    checked = set()
    for index in knocked:
        lies, stood = rows[index, :2], engine.cones.cones.positions[index]
        if lies[0] < frame.states['ego'].x + 1.5 or np.hypot(*(lies - stood)) < 0.5:
            continue  # out of the front-wing LiDAR's view, or barely moved
        seen = lidar_points(engine, frame, int(rows[index, 4]))
        at_cone = np.hypot(*(seen[:, :2] - lies).T) < 0.35
        assert at_cone.any(), f'cone {index} not seen where it lies'
        assert seen[at_cone, 2].max() < 0.3, f'cone {index} seen standing'
        assert np.hypot(*(seen[:, :2] - stood).T).min() > 0.1, f'cone {index} seen where it stood'
        checked.add(int(rows[index, 4]))
    assert labels.CONE_BLUE in checked


def lidar_points(engine: Engine, frame, label: int) -> np.ndarray:
    """World points (n, 3) of the ego's LiDAR returns of one class, the car at rest."""
    spec = engine.cars[0].profile.sensor('lidar')
    directions = spinning_directions(spec.horizontal_start_rad, spec.azimuth_increment,
                                     spec.columns, spec.elevations_rad)
    ranges = frame.sensors['ego/lidar']
    hit = (frame.sensors['ego/lidar/labels'] == label) & np.isfinite(ranges)
    local = directions[hit] * ranges[hit][:, None]
    mount = spec.mount
    local = local @ rotation_matrix(mount.roll, mount.pitch, mount.yaw).T \
        + (mount.x, mount.y, mount.z)
    x, y, yaw = frame.states['ego'].pose
    return local @ rotation_matrix(0.0, 0.0, yaw).T + (x, y, 0.0)


def test_leaving_the_course_costs_an_off_course_and_going_far_ends_the_run(fs_engine) -> None:
    engine = fs_engine('acceleration')
    events = drive_straight(engine, 0.0, 6.0, speed=8.0, steer=0.05)  # a 30 m circle
    result = engine.missions.results['ego']
    assert [e.kind for e in events].count(OFF_COURSE) == 1
    assert result.off_courses == 1
    assert result.penalty_s >= rules.OFF_COURSE_PENALTY_S
    assert result.state == AsState.EMERGENCY and result.dnf == 'left the course'
    assert result.total_time is None


def test_a_car_that_moves_before_the_go_signal_does_not_finish(fs_engine) -> None:
    engine = fs_engine('acceleration')
    engine.reset()
    for _ in range(20):
        engine.drive('ego', 5.0, 0.0)
        engine.advance()
    result = engine.missions.results['ego']
    assert result.state == AsState.EMERGENCY
    assert result.dnf == 'moved before the go signal'


def test_a_cone_field_knocks_each_cone_once_and_resets(fs_engine) -> None:
    engine = fs_engine('acceleration')
    field = ConeField(engine.world.cones)
    first = int(np.argmin(np.hypot(*(field.positions - (10.0, 1.65)).T)))
    x, y = field.positions[first]
    pose = np.array([[x, y - 0.6, 0.0]])
    hits = field.strike(['ego'], pose, np.array([[1.45, 0.7]]), np.array([[10.0, 0.0]]))
    assert [h.index for h in hits] == [first] and field.version == 1
    # Carried to the car's front edge along its travel, and on by 0.1 s of its speed.
    assert field.positions[first][0] == pytest.approx(x + 1.45 + field.radius[first] + 1.0,
                                                      abs=0.01)
    assert field.strike(['ego'], pose, np.array([[1.45, 0.7]]), np.array([[10.0, 0.0]])) == []
    mesh = field.mesh()
    near = np.hypot(*(mesh.vertices[:, :2] - field.positions[first]).T) < 0.4
    assert 0.0 <= mesh.vertices[near, 2].min() < 1e-6  # on the ground,
    assert mesh.vertices[near, 2].max() < 2.0 * field.radius[first] + 1e-6  # on its side
    field.reset()
    assert not field.down.any() and field.version == 2
    assert np.array_equal(field.positions, engine.world.cones.positions)


@pytest.mark.parametrize('kind', ['acceleration', 'skidpad', 'autocross', 'trackdrive'])
def test_each_shipped_scenario_runs_its_mission_on_the_shipped_layout(repo_root: Path,
                                                                      kind: str) -> None:
    scenario = load_scenario(repo_root / 'config' / 'formula_student' / f'{kind}.yaml',
                             repo_root)
    assert scenario.topic_map.name == 'eufs'
    assert {s.kind for s in scenario.cars[0].profile.sensors} >= {'cones', 'lidar3d', 'camera'}
    track = load_track(scenario.track.name, repo_root / 'maps')
    assert track.mission is not None and track.mission.kind == kind
    made = generate(kind, 0)  # the shipped layout is the generator's, as the docs say
    assert made.cones is not None and track.cones is not None
    assert np.allclose(track.cones.positions, made.cones.positions, atol=1e-5)
    assert np.array_equal(track.cones.labels, made.cones.labels)
