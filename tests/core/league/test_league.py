"""``arsim-race league``: three entries over two tracks, each event a race in a process of
its own, give a rating table (page and data) that ranks the faster driver above the slower;
a bad spec stops the league at its file, line and key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from arsim_core.errors import ConfigError
from arsim_core.league.ratings import rate
from arsim_core.league.spec import load_league
from arsim_launch.race_cli import main

HERE = Path(__file__).resolve().parent
SPEC = """\
name: Test league
laps: 1
events_per_track: 1
tracks: [arsim_ring, arsim_ring_1_5]
entries:
  - {name: slow, driver: novice}
  - {name: fast, driver: racer}
  - {name: mine, driver: 'league_policies:gap'}
"""


@pytest.mark.timeout(240)
def test_three_entries_over_two_tracks_give_a_rating_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.syspath_prepend(str(HERE))  # the Gym policy's module, as a user's would be
    spec = tmp_path / 'league.yaml'
    spec.write_text(SPEC)
    out = tmp_path / 'results'
    assert main(['league', str(spec), '-o', str(out), '--workers', '2']) == 0
    data = json.loads((out / 'league.json').read_text())
    table = data['standings']
    assert [row['rank'] for row in table] == [1, 2, 3]
    assert {row['name'] for row in table} == {'slow', 'fast', 'mine'}
    rating = {row['name']: row for row in table}
    assert rating['fast']['rating'] > rating['slow']['rating']
    assert rating['fast']['mu'] > rating['slow']['mu']
    assert all(row['events'] == 2 and row['sigma'] < 25 / 3 for row in table)
    assert [event['track'] for event in data['events']] == ['arsim_ring', 'arsim_ring_1_5']
    assert all(len(event['classification']) == 3 for event in data['events'])
    for event in data['events']:  # each event's classification, the engine's, as a file
        written = yaml.safe_load(Path(event['classification_file']).read_text())
        assert Path(event['classification_file']).parent.parent == out / 'events'
        assert written['finished'] is True
        assert [row['car'] for row in written['classification']] == \
            [car['name'] for car in event['classification']]
        assert all(Path(clip).parent.parent.name == Path(event['classification_file'])
                   .parent.name for clip in event['clips'])
    page = (out / 'index.html').read_text()
    assert page.count('<h2>') == 3  # the standings and one per track
    assert '<td class="l">fast</td>' in page and 'Plackett' not in page
    assert 'plackett_luce' in page
    printed = capsys.readouterr().out
    assert 'fast' in printed and str(out / 'index.html') in printed


def test_the_ratings_follow_the_results() -> None:
    """Always ahead: rated above, and more certainly so with each event."""
    ratings = rate(['a', 'b', 'c'], [['a', 'b', 'c']] * 4)
    assert [r.name for r in ratings] == ['a', 'b', 'c']
    assert ratings[0].mu > ratings[1].mu > ratings[2].mu
    once = rate(['a', 'b', 'c'], [['a', 'b', 'c']])
    assert ratings[0].sigma < once[0].sigma
    assert rate(['a', 'b'], [], 'bradley_terry')[0].mu == pytest.approx(25.0)


def test_a_ros_stack_entry_is_a_car_without_a_driver(tmp_path: Path, repo_root: Path) -> None:
    spec = tmp_path / 'league.yaml'
    spec.write_text(SPEC.replace("driver: 'league_policies:gap'",
                                 "launch: 'my_stack --scan {scan_topic} --drive {drive_topic}'"))
    league = load_league(spec, repo_root)
    assert league.over_ros
    assert league.stacks == (('mine', 'my_stack --scan {scan_topic} --drive {drive_topic}'),)
    assert [e.driver for e in league.entries] == ['novice', 'racer', '']


@pytest.mark.parametrize(('change', 'message'), [
    (('laps: 1', 'laps: 0'), r"league.yaml:2: laps: expected an integer >= 1, got 0"),
    (('name: Test league', 'name: Test league\nrounds: 3'),
     r"league.yaml:2: rounds: unknown key, expected one of: description, entries, "),
    (('driver: novice', 'driver: speedy'),
     r"league.yaml:6: entries\[0\].driver: unknown driver 'speedy'"),
    (("driver: 'league_policies:gap'", "launch: 'ros2 launch my_stack x.py s:={scan}'"),
     r"league.yaml:8: entries\[2\].launch: unknown field\(s\) \['scan'\] in "),
    (("driver: 'league_policies:gap'", "launch: 'ros2 launch \"my_stack'"),
     r"league.yaml:8: entries\[2\].launch: expected a command line, got "),
    (("driver: 'league_policies:gap'", "driver: club, launch: 'my_stack'"),
     r"league.yaml:8: entries\[2\].driver: an entry is a ROS stack \(launch\) or a driver, "),
    (('{name: fast, driver: racer}', '{name: slow, driver: racer}'),
     r"league.yaml:7: entries\[1\].name: duplicate entry name 'slow'"),
    (('arsim_ring_1_5', 'no_such_track'),
     r"league.yaml:4: tracks\[1\]: cannot load track 'no_such_track'"),
])
def test_a_bad_spec_fails_at_its_line(tmp_path: Path, repo_root: Path, change: tuple[str, str],
                                      message: str) -> None:
    spec = tmp_path / 'league.yaml'
    spec.write_text(SPEC.replace(*change))
    with pytest.raises(ConfigError, match=message):
        load_league(spec, repo_root)
