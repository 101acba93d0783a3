"""The league's rating table: a Weng-Lin Bayesian rating of every entry (``openskill``,
Plackett-Luce or Bradley-Terry), updated with each event's classification in a fixed order
(tracks as the spec lists them, then events), so the same results always give the same table.

Each entry's rating is a mean ``mu`` and an uncertainty ``sigma`` (both start at 25 and 25/3);
the table is ranked by the conservative estimate ``mu - 3 sigma`` (openskill's ordinal), which
rewards an entry only as its results make the rating certain.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

RATING_MODELS = ('plackett_luce', 'bradley_terry')


class Rating(NamedTuple):
    name: str
    mu: float
    sigma: float
    ordinal: float  # mu - 3 sigma: the table's order
    events: int


def _model(name: str) -> Any:
    from openskill.models import BradleyTerryFull, PlackettLuce

    return {'plackett_luce': PlackettLuce, 'bradley_terry': BradleyTerryFull}[name]()


def rate(entries: Sequence[str], events: Iterable[Sequence[str]],
         model: str = RATING_MODELS[0]) -> list[Rating]:
    """Ratings of ``entries`` after ``events``, each the entries it classified, winner first
    (an entry missing from an event's list did not race in it); best first."""
    rater = _model(model)
    ratings = {name: rater.rating(name=name) for name in entries}
    counts = dict.fromkeys(entries, 0)
    for order in events:
        if len(order) < 2:
            continue
        teams = [[ratings[name]] for name in order]
        updated = rater.rate(teams, ranks=list(range(1, len(order) + 1)))
        for name, (rating,) in zip(order, updated, strict=True):
            ratings[name] = rating
            counts[name] += 1
    table = [Rating(name, float(r.mu), float(r.sigma), float(r.ordinal()), counts[name])
             for name, r in ratings.items()]
    return sorted(table, key=lambda r: (-r.ordinal, r.name))
