"""A league with a ROS stack among its entries: each event is a simulation on the ROS graph
(in a domain of its own), the stack started by its ``launch`` command beside it and the zoo's
cars driven from the simulation; three entries over two tracks give a rating table, and a
stack that dies mid-race is retired (DNF) while the event goes on
(docs/race-control.md, "Leagues")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from arsim_launch.race_cli import main

STACK = Path(__file__).resolve().parent / 'stacks' / 'gap_stack.py'
LAUNCH = f'{sys.executable} {STACK} --scan {{scan_topic}} --drive {{drive_topic}}'


def league(tmp_path: Path, launch: str, tracks: list[str]) -> Path:
    spec = tmp_path / 'league.yaml'
    spec.write_text(yaml.safe_dump({
        'name': 'ROS league', 'laps': 1, 'tracks': tracks,
        'entries': [{'name': 'stack', 'launch': launch},
                    {'name': 'club', 'driver': 'club'},
                    {'name': 'novice', 'driver': 'novice'}]}))
    return spec


@pytest.mark.timeout(400)
def test_a_league_with_a_ros_stack_gives_a_rating_table(tmp_path: Path) -> None:
    spec = league(tmp_path, LAUNCH, ['arsim_ring', 'arsim_ring_1_5'])
    out = tmp_path / 'results'
    assert main(['league', str(spec), '-o', str(out), '--workers', '2']) == 0
    data = json.loads((out / 'league.json').read_text())
    assert {row['name'] for row in data['standings']} == {'stack', 'club', 'novice'}
    assert all(row['events'] == 2 for row in data['standings'])
    assert [event['track'] for event in data['events']] == ['arsim_ring', 'arsim_ring_1_5']
    for event in data['events']:
        assert event['finished'] is True, event
        cars = {car['name']: car for car in event['classification']}
        assert set(cars) == {'stack', 'club', 'novice'}
        assert cars['stack']['driver'] == 'ROS stack (stack)'
        assert cars['club']['status'] == 'finished', event
        written = yaml.safe_load(Path(event['classification_file']).read_text())
        assert written['finished'] is True
    # the stack ignores the start lights: each event's rulings, read from the classification
    # the bridge wrote, hold its jump start, and the page lists them
    for event in data['events']:
        assert any(incident['car'] == 'stack' and incident['rule'] == 'jump_start'
                   for incident in event['incidents']), event['incidents']
    assert 'jump_start' in (out / 'index.html').read_text()
    # from the front of the grid (event 0) the stack drives its lap to the flag
    first = {car['name']: car for car in data['events'][0]['classification']}
    assert first['stack']['status'] == 'finished' and first['stack']['laps'] == 1, first


@pytest.mark.timeout(300)
def test_a_stack_that_dies_mid_race_is_retired_and_the_event_goes_on(tmp_path: Path) -> None:
    spec = league(tmp_path, f'{LAUNCH} --stop-after 300', ['arsim_ring'])
    out = tmp_path / 'results'
    assert main(['league', str(spec), '-o', str(out), '--workers', '1']) == 0
    (event,) = json.loads((out / 'league.json').read_text())['events']
    assert event['finished'] is True, event
    cars = {car['name']: car for car in event['classification']}
    assert cars['stack']['status'] == 'dnf', cars
    assert cars['club']['status'] == 'finished' and cars['novice']['status'] == 'finished', cars
