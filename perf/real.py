"""The real public data in ``../shared/data``, read with the importers' own readers (no
database): what the benchmarks and tests replay. Each folder's ``SOURCE.md`` says its origin
and licence; nothing here is bundled with the project.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from aframes_web.streams.importers.fitbit import FitabaseReader
from aframes_web.streams.importers.github import GithubReader
from aframes_web.streams.importers.ordonez import OrdonezReader
from benchmark.streams.build import build_stream
from benchmark.streams.records import Stream, StreamEvent
from perf.harness import ROOT

Item = dict[str, Any]
DATA = ROOT.parent / "shared" / "data"
ORDONEZ = DATA / "ordonez-adl"
FITBIT = DATA / "fitbit-fitabase"
K8S = DATA / "github-events-k8s-2017" / "events.ndjson.gz"
ANTS = DATA / "github-rest-ants"
# The zones the data were recorded in (SOURCE.md): homes near Madrid, Fitabase's US survey;
# GitHub stamps in UTC and a repository has no zone of its own.
MADRID = ZoneInfo("Europe/Madrid")
NEW_YORK = ZoneInfo("America/New_York")
UTC = ZoneInfo("UTC")


def ordonez_items(home: str) -> list[Item]:
    """Home ``A`` or ``B`` of Ordóñez et al. as the ordonez importer reads it."""

    path = ORDONEZ / f"Ordonez{home}_Sensors.txt"
    return [i.item for i in OrdonezReader(path, MADRID) if i.item is not None]


def _per_entity(read: Iterable[Any]) -> dict[str, list[Item]]:
    per: dict[str, list[Item]] = defaultdict(list)
    for item in read:
        if item.item is not None and item.entity is not None:
            per[item.entity].append(item.item)
    return dict(per)


def fitbit_items(path: Path = FITBIT) -> dict[str, list[Item]]:
    """Fitabase's people, each with the hourly and wide minute rows the fitbit importer reads."""

    return _per_entity(FitabaseReader(path, NEW_YORK))


def github_items(path: Path) -> dict[str, list[Item]]:
    """GitHub events or REST objects, one entity per repository."""

    return _per_entity(GithubReader(path, UTC))


def events_of(items: Iterable[Item], start: int = 1) -> list[StreamEvent]:
    """Importer items as stream events, numbered in (time, source key) order."""
    ordered = sorted(items, key=lambda it: (it["occurred_at"], it["source_key"]))
    return [
        StreamEvent(
            n,
            datetime.fromisoformat(it["occurred_at"].replace("Z", "+00:00")),
            it["kind"],
            it["payload"],
            it["source_key"],
            it.get("monitor", ""),
        )
        for n, it in enumerate(ordered, start=start)
    ]


def real_streams(scope: str) -> list[Stream]:
    """Every real stream of ``scope`` in ``../shared/data``, keyed as ``make
    bench-proactivestream`` imports them (``ordonez-a``, ``fitbit:<Id>``, ``k8s:<repo>``,
    ``ants:<repo>``): label files made on those entities name the same streams."""
    if scope == "home":
        return [
            build_stream(f"ordonez-{h.lower()}", "home", events_of(ordonez_items(h)), MADRID)
            for h in ("A", "B")
        ]
    if scope == "sports":
        people = fitbit_items()
        return [
            build_stream(f"fitbit:{p}", "sports", events_of(people[p]), NEW_YORK)
            for p in sorted(people)
        ]
    if scope == "code":
        return [
            build_stream(f"{key}:{repo}", "code", events_of(items), UTC)
            for key, path in (("k8s", K8S), ("ants", ANTS))
            for repo, items in sorted(github_items(path).items())
        ]
    raise ValueError(f"no real {scope} data in {DATA}")
