"""The built-in drivers against closed-form answers on a circle, scans ray-cast against walls,
and closed loops on the real arsim_ring track with the real vehicle dynamics."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from arsim_core.dynamics import Vehicle, load_vehicle_config_file
from arsim_core.engine.state import CarState
from arsim_core.policies import GRAVITY, FollowTheGap, PurePursuit
from arsim_core.track import Track, load_track

R = 10.0  # circle radius [m]
N = 2000  # circle points
F1TENTH_L = 0.33  # wheelbase [m]
MAX_STEER = 0.4189  # [rad]
BEAMS = 1080
FOV = 4.7  # [rad]
A0 = -FOV / 2.0
INC = FOV / (BEAMS - 1)


def circle(radius: float = R, n: int = N, clockwise: bool = False) -> np.ndarray:
    """A circle starting at (radius, 0), counter-clockwise unless ``clockwise``."""
    angles = 2.0 * math.pi * np.arange(n) / n
    pts = radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return pts * [1.0, -1.0] if clockwise else pts


def on_circle(arc: float, radius: float = R, offset: float = 0.0, speed: float = 3.0,
              clockwise: bool = False) -> CarState:
    """A car ``arc`` metres along the circle, ``offset`` metres outside it, heading along it."""
    angle = arc / radius
    sign = -1.0 if clockwise else 1.0
    rad = radius + offset
    return CarState(rad * math.cos(angle), sign * rad * math.sin(angle),
                    sign * (angle + math.pi / 2.0), vx=speed)


def driver(line: np.ndarray | None = None, **kw: float) -> PurePursuit:
    args = {'wheelbase': F1TENTH_L, 'max_steering': MAX_STEER, 'max_speed': 20.0, **kw}
    return PurePursuit(circle() if line is None else line, **args)


# --- PurePursuit ---------------------------------------------------------------------------
@pytest.mark.parametrize(('wheelbase', 'lookahead', 'speed'),
                         [(0.33, None, 3.0), (0.33, None, 9.0), (0.33, 2.5, 3.0),
                          (3.0, None, 20.0)])
def test_steady_state_steering_on_a_circle_is_atan_l_over_r(
        wheelbase: float, lookahead: float | None, speed: float) -> None:
    for clockwise, sign in ((False, 1.0), (True, -1.0)):
        pp = driver(circle(clockwise=clockwise), wheelbase=wheelbase, max_steering=1.0,
                    lookahead=lookahead)
        state = on_circle(7.0, speed=speed, clockwise=clockwise)
        pp.reset(state.pose)
        steer, _ = pp.act(state)
        expected = sign * math.atan(wheelbase / R)
        assert steer == pytest.approx(expected, rel=0.01)


def test_steers_back_towards_the_line_and_clips_at_max_steering() -> None:
    on_line = driver().act(on_circle(0.0))[0]
    outside = driver().act(on_circle(0.0, offset=0.5))[0]
    inside = driver().act(on_circle(0.0, offset=-0.5))[0]
    assert outside > on_line + 0.05
    assert inside < on_line - 0.05
    x, y, yaw = on_circle(0.0).pose
    assert driver().act(CarState(x, y, yaw - 1.0, vx=1.0))[0] == pytest.approx(MAX_STEER)
    assert driver().act(CarState(x, y, yaw + 1.0, vx=1.0))[0] == pytest.approx(-MAX_STEER)
    # facing the wrong way round: the target is behind, turn round at full lock
    assert abs(driver().act(CarState(x, y, yaw + math.pi, vx=1.0))[0]) == pytest.approx(MAX_STEER)


def test_lookahead_point_advances_with_the_car_one_lookahead_ahead() -> None:
    pp = driver(lookahead=1.5)
    pp.reset(on_circle(0.0).pose)
    indices, targets = [], []
    for k in range(200):
        arc = 0.05 * k
        pp.act(on_circle(arc))
        indices.append(pp.nearest_index)
        tx, ty = pp.target
        # the target lies on the circle, 1.5 m of arc ahead of the car
        assert math.hypot(tx, ty) == pytest.approx(R, abs=1e-3)
        ahead = (math.atan2(ty, tx) - arc / R) % (2.0 * math.pi)
        assert ahead * R == pytest.approx(1.5, abs=0.01)
        targets.append(math.atan2(ty, tx))
    assert indices == sorted(indices)
    assert indices[-1] - indices[0] == pytest.approx(9.95 / (2 * math.pi * R) * N, abs=2)
    assert np.all(np.diff(targets) > 0.0)
    assert pp.full_searches == 1  # the reset's; every step after it searched locally


def test_speed_dependent_lookahead_scales_with_the_car() -> None:
    small = driver()
    big = driver(wheelbase=3.0)
    assert small.lookahead_distance(0.0) == pytest.approx(3 * 0.33)
    assert big.lookahead_distance(0.0) == pytest.approx(9.0)
    assert small.lookahead_distance(10.0) > small.lookahead_distance(2.0)
    assert big.lookahead_distance(80.0) > big.lookahead_distance(10.0)
    assert driver(lookahead=2.0).lookahead_distance(15.0) == 2.0


def test_teleport_falls_back_to_a_full_search() -> None:
    pp = driver()
    pp.reset(on_circle(0.0).pose)
    for k in range(10):
        pp.act(on_circle(0.1 * k))
    assert pp.full_searches == 1
    # to the far side of the circle, far beyond the local window
    state = on_circle(math.pi * R)
    steer, _ = pp.act(state)
    assert pp.full_searches == 2
    line = pp.line
    brute = int(np.argmin(np.hypot(line[:, 0] - state.x, line[:, 1] - state.y)))
    assert pp.nearest_index == brute
    assert steer == pytest.approx(math.atan(F1TENTH_L / R), rel=0.01)
    # and a car driving on from there is tracked locally again
    pp.act(on_circle(math.pi * R + 0.1))
    assert pp.full_searches == 2
    # reset always searches the whole line
    pp.reset(on_circle(5.0).pose)
    assert pp.full_searches == 3


def test_driving_backwards_a_little_is_tracked() -> None:
    pp = driver()
    pp.reset(on_circle(3.0).pose)
    start = pp.nearest_index
    for k in range(1, 6):
        pp.act(on_circle(3.0 - 0.02 * k))
    assert pp.nearest_index < start
    assert pp.full_searches == 1


@pytest.mark.parametrize(('friction', 'max_speed', 'scale'),
                         [(1.0, 20.0, 1.0), (0.5, 20.0, 1.0), (1.0, 5.0, 1.0), (1.0, 20.0, 0.8)])
def test_speed_on_a_circle_is_the_cornering_limit(friction: float, max_speed: float,
                                                  scale: float) -> None:
    pp = driver(friction=friction, max_speed=max_speed, speed_scale=scale)
    _, speed = pp.act(on_circle(1.0))
    expected = min(math.sqrt(friction * GRAVITY * R), max_speed) * scale
    assert speed == pytest.approx(expected, rel=0.01)


def stadium(straight: float = 30.0, radius: float = 5.0, spacing: float = 0.05) -> np.ndarray:
    """Two straights joined by half circles, counter-clockwise, starting on the bottom one."""
    n_s = round(straight / spacing)
    n_c = round(math.pi * radius / spacing)
    bottom = np.stack([np.linspace(0.0, straight, n_s, endpoint=False),
                       np.full(n_s, -radius)], axis=1)
    a = np.linspace(-math.pi / 2, math.pi / 2, n_c, endpoint=False)
    right = np.stack([straight + radius * np.cos(a), radius * np.sin(a)], axis=1)
    top = bottom * [-1.0, -1.0] + [straight, 0.0]
    left = right * [-1.0, -1.0] + [straight, 0.0]
    return np.vstack([bottom, right, top, left])


def test_speed_is_limited_by_curvature_and_braking_distance() -> None:
    line = stadium()
    pp = driver(line, friction=1.0, max_speed=15.0)
    corner = math.sqrt(GRAVITY * 5.0)

    def speed_at(x: float, y: float, yaw: float) -> float:
        pp.reset((x, y, yaw))
        return pp.act(CarState(x, y, yaw, vx=5.0))[1]

    assert speed_at(5.0, -5.0, 0.0) == pytest.approx(15.0)  # start of the straight
    assert speed_at(35.0, 0.0, math.pi / 2) == pytest.approx(corner, rel=0.02)  # mid-corner
    # 3 m before the corner the car must already brake (at half grip) to reach it slowly enough
    before = int(np.argmin(np.hypot(line[:, 0] - 27.0, line[:, 1] + 5.0)))
    assert pp.speed_profile[before] == pytest.approx(math.sqrt(corner**2 + GRAVITY * 3.0),
                                                     rel=0.03)
    braking = speed_at(27.0, -5.0, 0.0)
    assert corner < braking <= pp.speed_profile[before]
    assert np.all(pp.speed_profile <= 15.0)
    assert pp.speed_profile.min() == pytest.approx(corner, rel=0.02)


def test_curvature_ignores_the_jitter_of_rounded_coordinates() -> None:
    # 3 cm spacing rounded to the millimetre, as many CSV files store lines
    pp = driver(np.round(circle(), 3))
    limit = math.sqrt(GRAVITY * R)
    assert limit * 0.9 < pp.speed_profile.min() <= pp.speed_profile.max() < limit * 1.05


def test_given_speeds_are_followed_and_scaled() -> None:
    speeds = np.linspace(2.0, 12.0, N)
    pp = driver(speeds=speeds, speed_scale=0.5, max_speed=5.0)
    pp.reset(on_circle(0.0).pose)
    assert pp.act(on_circle(0.0))[1] == pytest.approx(1.0, rel=0.01)
    pp.reset(on_circle(20.0).pose)
    index = round(20.0 / (2 * math.pi * R) * N)
    assert pp.act(on_circle(20.0))[1] == pytest.approx(0.5 * speeds[index], rel=0.01)
    pp.reset(on_circle(60.0).pose)
    assert pp.act(on_circle(60.0))[1] == pytest.approx(5.0)  # 0.5 * 11.6 above max_speed


def test_a_closing_point_repeated_at_the_end_is_ignored() -> None:
    line = circle()
    closed = np.vstack([line, line[:1]])
    a, b = driver(line), driver(closed)
    state = on_circle(0.2)
    assert a.act(state) == pytest.approx(b.act(state))
    assert b.length == pytest.approx(a.length)


@pytest.mark.parametrize('kw', [{'wheelbase': 0.0}, {'max_steering': -1.0},
                                {'max_speed': math.nan}, {'friction': 0.0},
                                {'lookahead': 0.0}, {'speed_scale': -1.0},
                                {'speeds': np.ones(3)}])
def test_bad_arguments_are_refused(kw: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=next(iter(kw))):
        driver(**kw)  # type: ignore[arg-type]


@pytest.fixture(scope='module')
def ring(repo_root: Path) -> Track:
    return load_track('arsim_ring', repo_root / 'maps')


@pytest.fixture
def f1tenth(repo_root: Path) -> Vehicle:
    return Vehicle(load_vehicle_config_file(repo_root / 'config' / 'cars' / 'f1tenth.yaml'))


def lateral_error(track: Track, x: float, y: float) -> tuple[float, int]:
    """Distance of (x, y) from the closed centerline, and the nearest point's index."""
    c = track.centerline
    seg = np.roll(c, -1, axis=0) - c
    t = np.clip(((x - c[:, 0]) * seg[:, 0] + (y - c[:, 1]) * seg[:, 1])
                / np.einsum('ij,ij->i', seg, seg), 0.0, 1.0)
    d = np.hypot(c[:, 0] + t * seg[:, 0] - x, c[:, 1] + t * seg[:, 1] - y)
    i = int(np.argmin(d))
    return float(d[i]), i


def test_pure_pursuit_drives_laps_of_arsim_ring_within_the_track(ring: Track,
                                                                 f1tenth: Vehicle) -> None:
    line = ring.raceline if ring.raceline is not None else ring.centerline
    p = f1tenth.config.params
    pp = PurePursuit(line, wheelbase=p.body.wheelbase, max_steering=p.steering.max_angle,
                     max_speed=p.longitudinal.max_speed, speeds=ring.raceline_speed,
                     friction=p.tyre.friction)
    f1tenth.reset(*ring.start_pose)
    pp.reset(ring.start_pose)
    driven, worst = 0.0, 0.0
    for _ in range(6000):  # 60 s
        x, y, yaw = f1tenth.pose
        vx, vy, yaw_rate = f1tenth.body_velocity
        steer, speed = pp.act(CarState(x, y, yaw, vx, vy, yaw_rate))
        f1tenth.set_ackermann(speed, steer)
        f1tenth.advance(0.01)
        nx, ny, _ = f1tenth.pose
        driven += math.hypot(nx - x, ny - y)
        error, i = lateral_error(ring, nx, ny)
        half_width = min(ring.width_left[i], ring.width_right[i])
        assert error < half_width, f'off the track at ({nx:.2f}, {ny:.2f})'
        worst = max(worst, error / half_width)
    assert driven > ring.length
    assert driven > 4.0 * ring.length  # about 6 m/s on average, not a crawl
    assert worst < 0.6
    assert pp.full_searches == 1


# --- FollowTheGap ---------------------------------------------------------------------------
Wall = tuple[tuple[float, float], tuple[float, float]]


def scan(walls: Sequence[Wall], beams: int = BEAMS) -> np.ndarray:
    """Ranges from the origin along +x, REP-117: +inf where a beam hits no wall."""
    angles = A0 + INC * np.arange(beams)
    d = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    best = np.full(beams, np.inf)
    for (ax, ay), (bx, by) in walls:
        e = np.array([bx - ax, by - ay])
        denom = d[:, 0] * e[1] - d[:, 1] * e[0]
        with np.errstate(divide='ignore', invalid='ignore'):
            t = (ax * e[1] - ay * e[0]) / denom  # along the beam
            u = (ax * d[:, 1] - ay * d[:, 0]) / denom  # along the wall
        hit = (np.abs(denom) > 1e-12) & (t > 0.0) & (u >= 0.0) & (u <= 1.0)
        best = np.where(hit & (t < best), t, best)
    return best


def mirrored(walls: Sequence[Wall]) -> list[Wall]:
    return [((ax, -ay), (bx, -by)) for (ax, ay), (bx, by) in walls]


CORRIDOR: list[Wall] = [((-5.0, 1.0), (6.0, 1.0)), ((-5.0, -1.0), (6.0, -1.0)),
                        ((6.0, -1.0), (6.0, 1.0))]
# dead end 2.5 m ahead; a side corridor leaves to the left between x = 0.8 and 2.5
JUNCTION: list[Wall] = [((-5.0, 1.0), (0.8, 1.0)), ((0.8, 1.0), (0.8, 8.0)),
                        ((2.5, -1.0), (2.5, 8.0)), ((-5.0, -1.0), (2.5, -1.0))]
# the same, but the side corridor's walls end at y = 1.6, so beams escape into the open
OPEN_JUNCTION: list[Wall] = [((-5.0, 1.0), (0.8, 1.0)), ((0.8, 1.0), (0.8, 1.6)),
                             ((2.5, -1.0), (2.5, 1.6)), ((-5.0, -1.0), (2.5, -1.0))]


def gap_driver(**kw: float) -> FollowTheGap:
    args = {'angle_min': A0, 'angle_increment': INC, 'max_steering': MAX_STEER,
            'max_speed': 8.0, **kw}
    return FollowTheGap(**args)


def test_symmetric_corridor_goes_straight_at_speed() -> None:
    steer, speed = gap_driver().act(scan(CORRIDOR))
    assert abs(steer) < 0.01
    assert speed > 4.0


def rotated(walls: Sequence[Wall], angle: float) -> list[Wall]:
    c, s = math.cos(angle), math.sin(angle)
    return [((c * ax - s * ay, s * ax + c * ay), (c * bx - s * by, s * bx + c * by))
            for (ax, ay), (bx, by) in walls]


def test_slower_in_a_narrow_gap_and_when_steering() -> None:
    ftg = gap_driver(headway=1e-3)  # no limit from the range ahead
    wide = ftg.act(scan(CORRIDOR))
    assert wide == pytest.approx((0.0, 8.0), abs=0.01)
    narrow_corridor = [((-5.0, 0.5), (6.0, 0.5)), ((-5.0, -0.5), (6.0, -0.5)),
                       ((6.0, -0.5), (6.0, 0.5))]
    narrow = ftg.act(scan(narrow_corridor))
    assert narrow[0] == pytest.approx(0.0, abs=0.01)
    assert narrow[1] < 7.5
    turned = ftg.act(scan(rotated(CORRIDOR, -0.2)))  # the car is turned 0.2 rad to the left
    assert turned[0] == pytest.approx(-0.2, abs=0.03)
    assert turned[1] < 7.5


@pytest.mark.parametrize('walls', [JUNCTION, OPEN_JUNCTION])
def test_an_opening_to_the_left_steers_left_and_to_the_right_right(walls: list[Wall]) -> None:
    ranges = scan(walls)
    assert np.isinf(ranges).any() == (walls is OPEN_JUNCTION)
    left, speed_left = gap_driver().act(ranges)
    right, speed_right = gap_driver().act(scan(mirrored(walls)))
    assert left > 0.05
    assert right == pytest.approx(-left, abs=2 * INC)
    assert speed_left == pytest.approx(speed_right, rel=0.05)
    # slower than in the open corridor: the way on is narrower and needs steering
    assert speed_left < gap_driver().act(scan(CORRIDOR))[1]


def test_isolated_nan_beams_change_nothing() -> None:
    clean = gap_driver().act(scan(JUNCTION))
    ranges = scan(JUNCTION)
    ranges[5::37] = np.nan
    assert gap_driver().act(ranges) == pytest.approx(clean, rel=0.01, abs=2 * INC)
    ranges32 = ranges.astype(np.float32)
    assert gap_driver().act(ranges32) == pytest.approx(clean, rel=0.01, abs=2 * INC)


def test_unknown_beams_are_never_a_gap_nor_an_obstacle() -> None:
    ranges = scan(OPEN_JUNCTION)
    opening = np.isinf(ranges) & (np.abs(A0 + INC * np.arange(BEAMS)) < math.pi / 2)
    assert opening.sum() > 20
    ranges[opening] = np.nan
    steer, speed = gap_driver().act(ranges)
    # not into the blind opening, but not fleeing from it at full lock either: the way on is
    # the free gap right of it, from -41.8 degrees (1.5 m of free range) to the opening
    assert steer == pytest.approx(0.5 * (math.atan2(-1.0, math.sqrt(1.5**2 - 1.0))
                                         + (A0 + INC * np.flatnonzero(opening)[0])), abs=0.01)
    assert speed > 0.0
    assert gap_driver().act(np.full(BEAMS, np.nan)) == (0.0, 0.0)


def test_minus_inf_is_an_obstacle_at_the_sensor() -> None:
    ranges = scan(CORRIDOR)
    angles = A0 + INC * np.arange(BEAMS)
    ranges[(angles > 0.3) & (angles < 0.5)] = -np.inf
    steer, _ = gap_driver().act(ranges)
    assert steer < -0.1
    ranges = scan(CORRIDOR)
    ranges[np.abs(angles) < 0.05] = -np.inf  # touching something straight ahead: stop
    assert gap_driver().act(ranges)[1] == 0.0


def test_beams_behind_the_car_are_ignored() -> None:
    # a dead end 1 m ahead: behind the car, open (inf) or close walls make no difference
    walls: list[Wall] = [((-5.0, 1.0), (1.0, 1.0)), ((-5.0, -1.0), (1.0, -1.0)),
                         ((1.0, -1.0), (1.0, 1.0))]
    behind = np.abs(A0 + INC * np.arange(BEAMS)) > math.pi / 2 + INC
    ranges = scan(walls)
    ranges[behind] = np.inf
    open_behind = gap_driver().act(ranges)
    ranges[behind] = 0.4
    assert gap_driver().act(ranges) == open_behind
    assert abs(open_behind[0]) < 0.5 * MAX_STEER


def test_a_narrow_deep_slit_does_not_pull_the_car_off_its_way() -> None:
    ranges = scan(CORRIDOR)
    angles = A0 + INC * np.arange(BEAMS)
    ranges[np.abs(angles - 1.2) < 4 * INC] = np.inf  # a crack in the left wall
    steer, _ = gap_driver().act(ranges)
    assert abs(steer) < 0.01


def box(cx: float, cy: float, half: float = 0.05) -> list[Wall]:
    c = [(cx - half, cy - half), (cx + half, cy - half), (cx + half, cy + half),
         (cx - half, cy + half)]
    return [(c[i], c[(i + 1) % 4]) for i in range(4)]


def test_the_bubble_keeps_the_aim_clear_of_the_nearest_obstacle() -> None:
    # a round room 5 m across the car, a post 1 m ahead slightly to the left
    ring = [(5.0 * math.cos(a), 5.0 * math.sin(a)) for a in np.linspace(0, 2 * math.pi, 97)]
    room = [(ring[i], ring[i + 1]) for i in range(96)]
    ranges = scan([*room, *box(1.0, 0.17)])
    angles = A0 + INC * np.arange(BEAMS)
    nearest = int(np.argmin(ranges))
    post, distance = angles[nearest], float(ranges[nearest])
    assert post == pytest.approx(0.12, abs=0.06) and distance == pytest.approx(1.0, abs=0.1)
    # unclipped steering shows the gap: right of the post, less the bubble's half-angle
    steer, _ = gap_driver(max_steering=2.0, bubble_radius=0.3).act(ranges)
    gap_left_edge = post - math.asin(0.3 / distance)
    assert steer == pytest.approx(0.5 * (-math.pi / 2 + gap_left_edge), abs=2 * INC)
    no_bubble, _ = gap_driver(max_steering=2.0, bubble_radius=1e-6).act(ranges)
    assert no_bubble > steer + 0.1


def test_follow_the_gap_drives_arsim_ring(ring: Track, f1tenth: Vehicle) -> None:
    from arsim_core.backend.raycasters import make_raycaster
    from arsim_core.engine import TrackWorld
    from arsim_core.track import LABEL_BARRIER

    world = TrackWorld.from_track(ring)
    caster = make_raycaster(world.vertices, world.triangles[world.labels == LABEL_BARRIER])
    angles = A0 + INC * np.arange(BEAMS)
    p = f1tenth.config.params
    ftg = gap_driver(max_steering=p.steering.max_angle, max_speed=8.0)
    f1tenth.reset(*ring.start_pose)
    driven = 0.0
    for _ in range(3000):  # 30 s
        x, y, yaw = f1tenth.pose
        mount = np.array([[x + 0.27 * math.cos(yaw), y + 0.27 * math.sin(yaw), 0.11]])
        d = np.stack([np.cos(yaw + angles), np.sin(yaw + angles), np.zeros(BEAMS)], axis=1)
        ranges, _, _ = caster.cast(mount, d, 30.0)
        steer, speed = ftg.act(ranges)
        f1tenth.set_ackermann(speed, steer)
        f1tenth.advance(0.01)
        nx, ny, _ = f1tenth.pose
        driven += math.hypot(nx - x, ny - y)
        error, i = lateral_error(ring, nx, ny)
        assert error < 0.5 * min(ring.width_left[i], ring.width_right[i])
    assert driven > ring.length
