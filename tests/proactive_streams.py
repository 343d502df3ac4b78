"""Streams for the ProactiveStream tests, read from the real files in ../shared/data with the
importers' own readers (no database): events numbered in (time, source key) order."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

from benchmark.streams.build import build_stream
from benchmark.streams.records import Stream, StreamEvent
from perf import real

# The real files and their readers live with the benchmarks; the tests read them the same way.
DATA, ORDONEZ, FITBIT, K8S, ANTS = real.DATA, real.ORDONEZ, real.FITBIT, real.K8S, real.ANTS
MADRID, NEW_YORK, UTC = real.MADRID, real.NEW_YORK, real.UTC
ordonez_items, fitbit_items, github_items = real.ordonez_items, real.fitbit_items, real.github_items
events_of = real.events_of


def ordonez(home: str) -> Stream:
    return build_stream(f"ordonez-{home.lower()}", "home", events_of(ordonez_items(home)), MADRID)


def fitbit(person: str, path: Path = FITBIT) -> Stream:
    return build_stream(person, "sports", events_of(fitbit_items(path)[person]), NEW_YORK)


def github(path: Path) -> list[Stream]:
    return [
        build_stream(repo, "code", events_of(items), UTC)
        for repo, items in sorted(github_items(path).items())
    ]


def desktop(days: int = 6, seed: int = 7) -> Stream:
    """SYNTHETIC desktop days (benchmark/synthetic/desktop.py), compiled as the service does."""
    from benchmark.synthetic.desktop import generate_days
    from compiler.document import compile_day
    from compiler.sources.events import capture_from_records

    zone = ZoneInfo("Europe/Berlin")
    records = list(generate_days(date(2026, 3, 2), days, seed=seed))
    events = events_of({**r, "source_key": r.get("source_key", "")} for r in records)
    by_day: dict[date, list[StreamEvent]] = defaultdict(list)
    for e in events:
        by_day[e.at.astimezone(zone).date()].append(e)
    frames = {}
    for day, rows in by_day.items():
        capture = capture_from_records(
            {"id": e.id, "occurred_at": e.at.isoformat(), "kind": e.kind,
             "monitor": e.monitor, "payload": dict(e.payload)}
            for e in rows
        )  # fmt: skip
        frames[day] = compile_day(capture, day, zone.key).document["frames"]
    return build_stream("desk", "desktop", events, zone, frames, synthetic=True)
