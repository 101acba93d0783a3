"""The proof a recording is complete: which sim time a bag holds everything up to, from the
nodes' reports of what they published and the recorder's count of what it received."""

from __future__ import annotations

from arsim_core.recording.ledger import (
    BRIDGE,
    Completeness,
    Report,
    counted_publishers,
    dynamics_publisher,
    sensors_publisher,
)

SCAN, TF, CLOCK = '/scan', '/tf', '/clock'
EGO, OPP = sensors_publisher('ego'), sensors_publisher('opp')


def report(publisher: str, stamp_ns: int, **counts: int) -> Report:
    topics = {name.replace('_', '/'): count for name, count in counts.items()}
    return Report(publisher, stamp_ns, topics, dict.fromkeys(topics, 'pkg/msg/Type'))


def everything(_topic: str) -> bool:
    return True


def started(*reports: Report, held: dict[str, int] | None = None) -> Completeness:
    completeness = Completeness(frozenset({BRIDGE, EGO}))
    for each in reports:
        completeness.add(each)
    completeness.start(held or {})
    return completeness


def test_the_publishers_counted_are_the_bridge_and_each_cars_sensors_and_own_dynamics(
        make_scenario) -> None:
    scenario = make_scenario(cars=('ego', {'name': 'opp', 'dynamics': 'external'}))
    assert counted_publishers(scenario) == {BRIDGE, EGO, OPP, dynamics_publisher('ego')}


def test_nothing_is_held_before_every_expected_publisher_has_reported() -> None:
    completeness = started(report(BRIDGE, 0, _clock=0))
    assert completeness.silent() == [EGO]
    assert completeness.update({}, everything) is None


def test_a_frame_is_held_once_the_bag_has_every_message_of_every_node_up_to_it() -> None:
    completeness = started(report(BRIDGE, 0, _clock=0), report(EGO, 0, _scan=0, _tf=0))
    assert completeness.update({}, everything) == 0
    completeness.add(report(BRIDGE, 25, _clock=1))
    completeness.add(report(EGO, 25, _scan=1, _tf=1))
    assert completeness.update({CLOCK: 1, SCAN: 1}, everything) == 0  # /tf still on its way
    assert completeness.missing({CLOCK: 1, SCAN: 1}, everything) == {TF: (0, 1)}
    assert completeness.update({CLOCK: 1, SCAN: 1, TF: 1}, everything) == 25


def test_the_slowest_node_decides_and_a_topic_of_several_nodes_needs_all_their_messages(
        ) -> None:
    completeness = Completeness(frozenset({BRIDGE, EGO, OPP}))
    for each in (report(BRIDGE, 0), report(EGO, 0, _tf=0), report(OPP, 0, _tf=0)):
        completeness.add(each)
    completeness.start({})
    completeness.add(report(EGO, 50, _tf=2))
    completeness.add(report(OPP, 25, _tf=1))
    completeness.add(report(BRIDGE, 50))
    assert completeness.update({TF: 2}, everything) is None
    assert completeness.update({TF: 3}, everything) == 25


def test_what_was_published_before_the_start_is_not_asked_for_and_held_never_goes_back(
        ) -> None:
    completeness = started(report(BRIDGE, 0, _clock=4), report(EGO, 0, _scan=2),
                           held={CLOCK: 1})  # three /clock pings went before it subscribed
    assert completeness.update({CLOCK: 1}, everything) == 0
    completeness.add(report(BRIDGE, 25, _clock=5))
    completeness.add(report(EGO, 25, _scan=3))
    assert completeness.update({CLOCK: 2, SCAN: 1}, everything) == 25
    completeness.add(report(EGO, 0, _scan=4))  # a node whose time went back
    assert completeness.update({CLOCK: 2, SCAN: 2}, everything) == 25


def test_topics_the_bag_does_not_record_are_not_waited_for() -> None:
    completeness = started(report(BRIDGE, 0), report(EGO, 0, _scan=0, _tf=0))
    completeness.add(report(EGO, 25, _scan=1, _tf=1))
    completeness.add(report(BRIDGE, 25))
    assert completeness.update({SCAN: 1}, lambda topic: topic == SCAN) == 25
