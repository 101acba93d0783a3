"""Incident clips in the pip runner (``arsim-dataset generate``'s frame writer, the real
engine, stewards, renderer and ROS message packing): a rear-end constructed on the straight of
arsim_ring (ego 2 m behind the other car in its lane, 5 m/s against 1 m/s) writes one clip,
which MCAP's own reader with its ROS 2 decoder opens; it spans ``before_s`` before the
incident to ``after_s`` after it and holds every car's state, the involved cars' scans and
the verdict (docs/race-control.md, "Clips"). No incident, no clip; the caps hold."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from arsim_core.config.scenario import Scenario, load_scenario
from arsim_core.engine import Engine, TrackWorld
from arsim_core.engine.referee import RULING
from arsim_core.errors import ConfigError
from arsim_core.track import load_track
from arsim_launch.dataset_run import KeptReplyRenderer, _Writer

BEFORE_S, AFTER_S = 0.5, 0.75
PERIOD_S = 1 / 40  # config/sim.yaml's frame rate
OPP = 'opp1'


def ahead_of(pose: tuple[float, float, float], metres: float) -> tuple[float, float, float]:
    x, y, yaw = pose
    return x + metres * math.cos(yaw), y + metres * math.sin(yaw), yaw


def scenario_with(repo_root: Path, **race: Any) -> Scenario:
    """config/sim.yaml with two F1TENTH cars, ego and opp1, and ``race`` settings."""
    cars = [{'name': name, 'profile': 'f1tenth'} for name in ('ego', OPP)]
    return load_scenario(repo_root / 'config' / 'sim.yaml', repo_root,
                         {'cars': cars, 'race': race})


def run(repo_root: Path, out: Path, speeds: dict[str, float], seconds: float,
        brake_after_ruling: bool = True, **clips: Any) -> dict[str, Any]:
    """Two cars on the straight driven at ``speeds`` for ``seconds`` through the dataset
    runner's writer (a bag in ``out``, clips in ``out/clips``); the rulings' times, the clips
    written and the recorder."""
    scenario = scenario_with(repo_root, clips={
        'directory': str(out / 'clips'), 'before_s': BEFORE_S, 'after_s': AFTER_S, **clips})
    track = load_track('arsim_ring', repo_root / 'maps')
    renderer = KeptReplyRenderer()
    engine = Engine(scenario, renderer)
    rulings: list[tuple[float, Any]] = []
    try:
        engine.load_track(TrackWorld.from_track(track, scenario.track.scene))
        writer = _Writer(scenario, engine, renderer, track, out / 'bag')
        start = engine.start_poses['ego']
        frame = engine.reset({'ego': start, OPP: ahead_of(start, 2.0)})
        writer.write(frame)
        while frame.time_ns < seconds * 1e9:
            for car, speed in speeds.items():
                engine.drive(car, 0.0 if rulings and brake_after_ruling and car == 'ego'
                             else speed, 0.0)
            frame = engine.advance()
            rulings += [(frame.time_ns / 1e9, e) for e in frame.judgement.events
                        if e.kind == RULING]
            writer.write(frame)
        writer.close(frame)
    finally:
        engine.close()
    return {'rulings': rulings, 'recorder': writer.clips, 'bag': out / 'bag',
            'files': sorted((out / 'clips' / 'bag').glob('*.mcap'))}


def read_clip(path: Path) -> dict[str, Any]:
    """Every message of ``path`` decoded by mcap_ros2, by topic, with its log time [s]; and
    the metadata records."""
    topics: dict[str, list[tuple[float, Any]]] = {}
    with path.open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            assert channel.message_encoding == 'cdr' and schema.encoding == 'ros2msg'
            topics.setdefault(channel.topic, []).append((message.log_time / 1e9, decoded))
        stream.seek(0)
        metadata = [(m.name, m.metadata) for m in make_reader(stream).iter_metadata()]
    return {'topics': topics, 'metadata': metadata}


@pytest.fixture(scope='module')
def rear_end(repo_root: Path, tmp_path_factory) -> dict[str, Any]:
    return run(repo_root, tmp_path_factory.mktemp('rear_end'),
               {'ego': 5.0, OPP: 1.0}, seconds=2.0)


def test_a_rear_end_writes_one_clip_named_for_its_time_cars_and_rule(rear_end) -> None:
    rulings = rear_end['rulings']
    assert len(rulings) == 1, rulings
    time_s, ruling = rulings[0]
    assert (ruling.car, ruling.other, ruling.rule, ruling.verdict) == \
        ('ego', OPP, 'rear_end', 'time_penalty')
    assert [f.name for f in rear_end['files']] == [f't{time_s:08.3f}_ego-{OPP}_rear_end.mcap']


def test_the_clip_spans_the_seconds_around_the_incident(rear_end) -> None:
    time_s = rear_end['rulings'][0][0]
    assert time_s > BEFORE_S + 0.1  # so the clip can hold all of before_s
    clip = read_clip(rear_end['files'][0])
    for topic in ('/arsim/ego/state', f'/arsim/{OPP}/state'):
        times = [t for t, _ in clip['topics'][topic]]
        assert times[0] == pytest.approx(time_s - BEFORE_S, abs=PERIOD_S + 1e-9), topic
        assert times[-1] == pytest.approx(time_s + AFTER_S, abs=1e-9), topic
        assert len(times) == round((BEFORE_S + AFTER_S) / PERIOD_S) + 1, topic


def test_the_clip_holds_every_cars_state_the_involved_scans_and_the_verdict(rear_end) -> None:
    time_s, ruling = rear_end['rulings'][0]
    clip = read_clip(rear_end['files'][0])
    topics = clip['topics']
    states = {topic: [m for _, m in topics[f'/arsim/{car}/state']] for car, topic in
              (('ego', 'ego'), (OPP, OPP))}
    assert all(states.values())
    ego = [m for _, m in topics['/arsim/ego/state']]
    assert {m.car_id for m in ego} == {'ego'} and max(m.twist.linear.x for m in ego) > 3.0
    assert topics['/ego_racecar/odom'] and topics['/tf']  # odometry and TF as recorded
    assert topics['/scan'] and topics[f'/{OPP}/scan']  # both cars are involved
    scan = topics['/scan'][0][1]
    assert scan.header.frame_id == 'ego_racecar/laser' and len(scan.ranges) > 100
    recorded = {t: m for t, m in read_clip(next(rear_end['bag'].glob('*.mcap')))['topics']['/scan']}
    for t, m in topics['/scan']:  # the scans as they were then, not a later frame's
        assert list(m.ranges) == list(recorded[t].ranges), t
    events = [(t, m) for t, m in topics['/arsim/events'] if m.kind == 7]  # SimEvent.RULING
    assert [(m.car_id, m.other, m.detail) for _, m in events] == \
        [('ego', OPP, ruling.detail)]
    assert events[0][0] == pytest.approx(time_s)
    incident = dict(clip['metadata'])['arsim.incident']
    assert incident['rule'] == 'rear_end' and incident['verdict'] == 'time_penalty'
    assert incident['cars'] == f'ego,{OPP}' and incident['complete'] == 'true'
    assert float(incident['time_s']) == pytest.approx(time_s)
    assert dict(clip['metadata'])['arsim.ruling']['penalty_s'] == '5'


def test_no_incident_no_clip(repo_root: Path, tmp_path: Path) -> None:
    result = run(repo_root, tmp_path, {'ego': 1.0, OPP: 3.0}, seconds=1.0)
    assert not result['rulings'] and not result['files']
    assert not (tmp_path / 'clips').exists()


def test_the_caps_on_clips_and_on_their_size_hold(repo_root: Path, tmp_path: Path) -> None:
    """ego keeps driving into the other car: a ruling at each new contact, one clip, the
    rest refused; the clip's data within max_clip_mib, its scans thinned, no state lost."""
    cap_mib = 0.5  # the states take about a third of it, the scans would take twice it
    result = run(repo_root, tmp_path, {'ego': 5.0, OPP: 1.0}, seconds=3.0,
                 brake_after_ruling=False, max_clips=1, max_clip_mib=cap_mib)
    contacts = {t for t, e in result['rulings']}
    assert len(contacts) >= 2, result['rulings']
    assert len(result['files']) == 1 and result['recorder'].refused == len(contacts) - 1
    summary = result['recorder'].written[0]
    assert summary.path == result['files'][0] and summary.size_bytes <= cap_mib * 2**20
    with summary.path.open('rb') as stream:
        data = sum(len(m.data) for _, _, m in make_reader(stream).iter_messages())
    assert data <= cap_mib * 2**20
    clip = read_clip(summary.path)
    frames = round((BEFORE_S + AFTER_S) / PERIOD_S) + 1
    assert len(clip['topics']['/arsim/ego/state']) == frames
    assert 0 < len(clip['topics']['/scan']) < frames


def test_a_bad_clip_setting_names_its_key(repo_root: Path) -> None:
    with pytest.raises(ConfigError, match=r'sim\.yaml: race\.clips\.before_s: expected a '):
        scenario_with(repo_root, clips={'directory': 'clips', 'before_s': -1})
    with pytest.raises(ConfigError, match=r'race\.clips\.length: unknown key, expected one'):
        scenario_with(repo_root, clips={'length': 3})
