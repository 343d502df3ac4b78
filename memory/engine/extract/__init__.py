"""Deterministic daily-trajectory extractors, one per scope (ProactMem §3, issue 6).

:func:`extract_day` cuts one entity's events of one local day into typed segments; each scope
module (``sports``, ``home``, ``code``, ``desktop``) states its rules and thresholds in its own
docstring. What every scope shares:

* **Only payload leaves.** A fact is a plain scalar leaf of a cited event (its path relative to
  the payload, possibly a suffix of the leaf's path), never an aggregate: counts, minutes and
  durations are no leaf of any event, so they are never facts. Replay sees a fact at
  ``(segment.kind, *fact.path)``: the kind says what happened ("a step bout"), the leaf stays
  groundable. A fact's value is never None, and its ``at`` is the time of the first cited event
  that holds it, so it lies inside the segment.
* **Every segment validates.** ``validate_segment(seg, {e.id: grounding_view(scope, e) ...},
  day, zone)`` accepts every segment emitted here; the tests check it on hand-made streams and
  on real data.
* **Input.** ``events`` may come in any order and may hold events of other local days (they are
  ignored). A naive event time is a caller's bug and raises ValueError.
* **Output order.** Segments are sorted by (start, kind, first citation, end); citations are in
  (time, id) order; fact ids are ``f1``, ``f2``, ... in the order the scope module lists them.
* **``private``.** No extractor reads a payload's ``private`` block (ground truth for the
  benchmark); the tests prove the output is unchanged when it is removed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.records import EngineEvent, Fact, Path, Segment

from . import code, desktop, home, sports

EventExtractor = Callable[[Sequence[EngineEvent], ZoneInfo], list[Segment]]

_FROM_EVENTS: Mapping[str, EventExtractor] = MappingProxyType(
    {"sports": sports.segments, "home": home.segments, "code": code.segments}
)
SCOPES = ("code", "desktop", "home", "sports")

#: scope -> segment kind -> the fact paths that kind can emit (for the miner, the service
#: catalogue and the README).
VOCABULARY: Mapping[str, Mapping[str, tuple[Path, ...]]] = MappingProxyType(
    {
        "code": code.VOCABULARY,
        "desktop": desktop.VOCABULARY,
        "home": home.VOCABULARY,
        "sports": sports.VOCABULARY,
    }
)


def _check_scope(scope: str) -> None:
    if scope not in SCOPES:
        raise ValueError(
            f"Unknown scope {scope!r}: trajectories are extracted for {', '.join(SCOPES)} only; "
            "pass the entity's scope."
        )


def extract_day(
    scope: str,
    events: Sequence[EngineEvent],
    day: date,
    zone: ZoneInfo,
    frames: Sequence[Mapping[str, Any]] = (),
) -> tuple[Segment, ...]:
    """The segments of one entity's local ``day`` in ``zone`` (module docstring).

    ``frames`` are the ``frames`` of the day's compiled document; only ``desktop`` reads them.
    """
    _check_scope(scope)
    for event in events:
        if event.at.tzinfo is None or event.at.utcoffset() is None:
            raise ValueError(
                f"Event {event.id} has a naive time {event.at.isoformat()}; stored events are "
                "aware, so build EngineEvents with their time zone."
            )
    todays = sorted(
        (e for e in events if e.at.astimezone(zone).date() == day), key=lambda e: (e.at, e.id)
    )
    if scope == "desktop":
        cut = desktop.segments(todays, day, zone, frames)
    else:
        cut = _FROM_EVENTS[scope](todays, zone)
    numbered = (_numbered(segment) for segment in cut)
    return tuple(
        sorted(numbered, key=lambda s: (s.start, s.kind, s.citations[:1], s.end, s.citations))
    )


def grounding_view(scope: str, event: EngineEvent) -> EngineEvent:
    """The event as the validator sees it: itself, except desktop snapshots (``desktop``)."""
    _check_scope(scope)
    if scope == "desktop":
        return desktop.grounding_view(event)
    return event


def _numbered(segment: Segment) -> Segment:
    """Fact ids ``f1``, ``f2``, ... in listed order (scope modules leave them blank)."""
    facts = tuple(
        Fact(f"f{number}", fact.type, fact.path, fact.value, fact.at)
        for number, fact in enumerate(segment.facts, start=1)
    )
    return Segment(
        segment.start, segment.end, facts, segment.citations, segment.kind, segment.source
    )
