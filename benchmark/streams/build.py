"""Decision points of one entity, by scope: the one entry to the stream builders.

Deterministic: the same events (and frames) always give the same points with the same keys, in
the same order. See each scope's module for what its points carry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any
from zoneinfo import ZoneInfo

from benchmark.streams import code, desktop, home, sports
from benchmark.streams.records import SCOPES, DecisionPoint, Stream, StreamEvent


def build_points(
    scope: str,
    events: Sequence[StreamEvent],
    zone: ZoneInfo,
    frames_by_day: Mapping[date, Sequence[Mapping[str, Any]]] | None = None,
) -> tuple[DecisionPoint, ...]:
    """The decision points of one entity's ``events`` (desktop: of its compiled frames)."""
    if scope == "home":
        found = home.points(events, zone)
    elif scope == "sports":
        found = sports.points(events, zone)
    elif scope == "code":
        found = code.points(events, zone)
    elif scope == "desktop":
        found = desktop.points(frames_by_day or {}, zone)
    else:
        raise ValueError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    return tuple(sorted(found, key=lambda p: (p.at, p.key)))


def build_stream(
    entity: str,
    scope: str,
    events: Sequence[StreamEvent],
    zone: ZoneInfo,
    frames_by_day: Mapping[date, Sequence[Mapping[str, Any]]] | None = None,
    *,
    synthetic: bool = False,
) -> Stream:
    """An entity's stream: its events in (time, id) order and the points built from them."""
    ordered = tuple(sorted(events, key=lambda e: (e.at, e.id)))
    points = build_points(scope, ordered, zone, frames_by_day)
    frames = {day: tuple(found) for day, found in (frames_by_day or {}).items()}
    return Stream(entity, scope, zone, ordered, points, synthetic, frames)
