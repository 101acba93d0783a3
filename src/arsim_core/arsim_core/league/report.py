"""A league's results on disk: ``league.json`` (everything, for programs) and ``index.html``
(the standings with each entry's rating and its uncertainty, every event's classification by
track, and the stewards' rulings), a page with no scripts or outside resources."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arsim_core.league.ratings import Rating

if TYPE_CHECKING:
    from arsim_core.league.spec import LeagueSpec

RESULTS_JSON = 'league.json'
RESULTS_HTML = 'index.html'
_STYLE = ('body{font-family:sans-serif;margin:2em;max-width:70em}'
          'table{border-collapse:collapse;margin:0.5em 0 1.5em}'
          'th,td{border:1px solid #ccc;padding:0.2em 0.6em;text-align:right}'
          'th{background:#eee}td.l,th.l{text-align:left}')


def standings(spec: LeagueSpec, events: Sequence[dict[str, Any]],
              ratings: Sequence[Rating]) -> list[dict[str, Any]]:
    """One row per entry in rating order: its rating and what it achieved."""
    drivers = {entry.name: entry.driver for entry in spec.entries}
    rows = []
    for rank, rating in enumerate(ratings, start=1):
        places = [next(car['position'] for car in event['classification']
                       if car['name'] == rating.name) for event in events]
        rows.append({'rank': rank, 'name': rating.name, 'driver': drivers[rating.name],
                     'mu': rating.mu, 'sigma': rating.sigma, 'rating': rating.ordinal,
                     'events': rating.events, 'wins': places.count(1),
                     'podiums': sum(p <= 3 for p in places),
                     'mean_position': sum(places) / len(places) if places else None})
    return rows


def write_results(out: Path, spec: LeagueSpec, events: Sequence[dict[str, Any]],
                  failed: Sequence[dict[str, Any]], ratings: Sequence[Rating]) -> list[Path]:
    """Write both files into ``out`` (made if missing); their paths."""
    out.mkdir(parents=True, exist_ok=True)
    table = standings(spec, events, ratings)
    document = {'league': spec.name, 'spec': str(spec.source), 'rating_model': spec.rating_model,
                'laps': spec.laps, 'tracks': list(spec.tracks), 'standings': table,
                'events': list(events), 'failed': list(failed)}
    data = out / RESULTS_JSON
    data.write_text(json.dumps(document, indent=1))
    page = out / RESULTS_HTML
    page.write_text(_page(spec, table, events, failed))
    return [data, page]


def _page(spec: LeagueSpec, table: Sequence[dict[str, Any]],
          events: Sequence[dict[str, Any]], failed: Sequence[dict[str, Any]]) -> str:
    e = html.escape
    parts = [f'<!doctype html><html><head><meta charset="utf-8"><title>{e(spec.name)}</title>'
             f'<style>{_STYLE}</style></head><body><h1>{e(spec.name)}</h1>',
             f'<p>{len(events)} events over {len(spec.tracks)} tracks, {spec.laps} laps each; '
             f'ratings: {e(spec.rating_model)} (openskill), ranked by mu - 3 sigma.</p>',
             '<h2>Standings</h2>',
             _table(['#', 'Entry', 'Driver', 'Rating', 'mu', 'sigma', 'Events', 'Wins',
                     'Podiums', 'Mean pos.'],
                    [[r['rank'], r['name'], r['driver'], f'{r["rating"]:.2f}',
                      f'{r["mu"]:.2f}', f'{r["sigma"]:.2f}', r['events'], r['wins'],
                      r['podiums'], '-' if r['mean_position'] is None
                      else f'{r["mean_position"]:.2f}'] for r in table], left={1, 2})]
    for track in dict.fromkeys(event['track'] for event in events):
        parts.append(f'<h2>{e(track)}</h2>')
        for event in (ev for ev in events if ev['track'] == track):
            parts.append(f'<h3>Event {event["index"]} (seed {event["seed"]}, '
                         f'{event["sim_s"]:.1f} s raced)</h3>')
            parts.append(_table(
                ['Pos', 'Entry', 'Driver', 'Laps', 'Time [s]', 'Penalties [s]', 'Best lap [s]',
                 'Status'],
                [[c['position'], c['name'], c['driver'], c['laps'], _seconds(c['time_s']),
                  f'{c["penalty_s"]:g}', _seconds(c['best_lap']),
                  c['status'] + (f' ({c["why"]})' if c['why'] else '')]
                 for c in event['classification']], left={1, 2, 7}))
            if event['incidents']:
                parts.append(_table(
                    ['Time [s]', 'Car', 'Other', 'Rule', 'Verdict', 'Penalty [s]'],
                    [[f'{i["time_s"]:.2f}', i['car'], i['other'], i['rule'], i['verdict'],
                      f'{i["penalty_s"]:g}'] for i in event['incidents']], left={1, 2, 3, 4}))
            else:
                parts.append('<p>No incidents.</p>')
            if event.get('classification_file'):
                parts.append(f'<p>Classification: {e(event["classification_file"])}; '
                             f'{len(event.get("clips", []))} incident clips.</p>')
    if failed:
        parts.append('<h2>Failed events</h2><ul>')
        parts += [f'<li>Event {f["index"]} on {e(f["track"])}: {e(str(f["error"]))}</li>'
                  for f in failed]
        parts.append('</ul>')
    parts.append('</body></html>\n')
    return '\n'.join(parts)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], left: set[int]) -> str:
    def cell(tag: str, k: int, value: Any) -> str:
        align = ' class="l"' if k in left else ''
        return f'<{tag}{align}>{html.escape(str(value))}</{tag}>'

    head = ''.join(cell('th', k, h) for k, h in enumerate(header))
    body = ''.join('<tr>' + ''.join(cell('td', k, v) for k, v in enumerate(row)) + '</tr>'
                   for row in rows)
    return f'<table><tr>{head}</tr>{body}</table>'


def _seconds(value: float | None) -> str:
    return '-' if value is None else f'{value:.3f}'
