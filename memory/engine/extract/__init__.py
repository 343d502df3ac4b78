"""Deterministic daily-trajectory extractors, one per scope (ProactMem §3).

:func:`extract_day` cuts one entity's events of one local day into typed segments; each scope
module (``sports``, ``home``, ``code``, ``desktop``) states its rules and thresholds in its own
docstring. What every scope shares:

* **Only payload leaves.** A fact is a plain scalar leaf of a cited event (its path relative to
  the payload, possibly a suffix of the leaf's path), never an aggregate: counts, minutes and
  durations are no leaf of any event, so they are never facts. Replay sees a fact at
  ``(segment.kind, *fact.path)``: the kind says what happened ("a step bout"), the leaf stays
  groundable. A fact's value is never None, and its ``at`` is when it held (the first cited
  event holding it; a walk's first minute), inside the segment.
* **Every segment validates.** ``validate_segment(seg, {e.id: grounding_view(scope, e) ...},
  day, zone)`` accepts every segment emitted here; the tests check it on hand-made streams and
  on real data.
* **Input.** ``events`` may come in any order and may hold events of other local days (they are
  ignored). A naive event time is a caller's bug and raises ValueError.
* **Output order.** Segments are sorted by (start, kind, first citation, end); citations are in
  (time, id) order; fact ids are ``f1``, ``f2``, ... in the order the scope module lists them.
* **``private``.** No extractor reads a payload's ``private`` block (ground truth for the
  benchmark); the tests prove the output is unchanged when it is removed.
* **Incremental.** :class:`OpenDay` extends a day's extraction as events arrive; a property
  test holds it equal to extracting the day from scratch at every cut.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.records import POINT_KIND, EngineEvent, Fact, Path, Segment

from . import code, desktop, home, sports

SCOPES = ("code", "desktop", "home", "sports")

#: scope -> segment kind -> the fact paths that kind can emit (for the miner, the service
#: catalogue and docs/explanation/proactmem.md).
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


def _check_aware(events: Sequence[EngineEvent]) -> None:
    for event in events:
        if event.at.tzinfo is None or event.at.utcoffset() is None:
            raise ValueError(
                f"Event {event.id} has a naive time {event.at.isoformat()}; stored events are "
                "aware, so build EngineEvents with their time zone."
            )


@dataclass
class OpenDay:
    """A day's extraction that grows with the day: events are fed in (time, id) order, each
    once, and :meth:`segments` gives what :func:`extract_day` gives for all of them.

    A decision reads its day while it is still being captured, at every event; extending the
    day's extraction costs only the new events (ProactMem's memory read stays within budget
    whatever the day holds). An event out of that order is refused (:meth:`extends`), and the
    caller starts a new one.
    """

    scope: str
    day: date
    zone: ZoneInfo
    state: Any = None
    last: tuple[datetime, int] | None = None
    # The scope modules hand back the same segment object while it is unchanged (a closed
    # stretch, a decision point): each is numbered once, by identity, not at every read. The
    # raw segment is held beside its numbered one, so an id is never mistaken after reuse.
    _numbered: dict[int, tuple[Segment, Segment]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        _check_scope(self.scope)
        makers: Mapping[str, Callable[[ZoneInfo], Any]] = {
            "code": code.CodeDay,
            "desktop": desktop.DesktopDay,
            "home": home.HomeDay,
            "sports": sports.SportsDay,
        }
        self.state = makers[self.scope](self.zone)

    @property
    def fed(self) -> int:
        return int(self.state.fed)

    def extends(self, events: Sequence[EngineEvent]) -> bool:
        """Whether ``events`` (in time order) all come after every event fed so far."""
        return not events or self.last is None or (events[0].at, events[0].id) > self.last

    def feed(self, events: Sequence[EngineEvent]) -> None:
        """Take the next events of the day (of this local day, in (time, id) order)."""
        if not self.extends(events):
            raise ValueError("events must come after every event fed before; start a new day")
        _check_aware(events)
        self.state.feed(events)
        if events:
            self.last = (events[-1].at, events[-1].id)

    def segments(self, frames: Sequence[Mapping[str, Any]] = ()) -> tuple[Segment, ...]:
        """The day's segments so far, numbered and ordered as :func:`extract_day` gives them."""
        if self.scope == "desktop":
            cut = self.state.segments(self.day, frames)
        else:
            cut = self.state.segments()
        held = self._numbered
        kept: dict[int, tuple[Segment, Segment]] = {}
        numbered = []
        for segment in cut:
            pair = held.get(id(segment))
            if pair is None or pair[0] is not segment:
                pair = (segment, _numbered(segment))
            kept[id(segment)] = pair
            numbered.append(pair[1])
        self._numbered = kept  # only this cut's: what a segment replaced is let go
        return tuple(sorted(numbered, key=_segment_order))


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
    _check_aware(events)  # before the day's events are picked by their local date
    todays = day_events(events, day, zone)
    opened = OpenDay(scope, day, zone)
    opened.feed(todays)
    return opened.segments(frames)


def day_events(events: Sequence[EngineEvent], day: date, zone: ZoneInfo) -> list[EngineEvent]:
    """The events of the local ``day``, in (time, id) order: what a day's extraction reads."""
    return sorted(
        (e for e in events if e.kind != POINT_KIND and e.at.astimezone(zone).date() == day),
        key=lambda e: (e.at, e.id),
    )


def grounding_view(scope: str, event: EngineEvent) -> EngineEvent:
    """The event as the validator sees it: itself, except desktop snapshots (``desktop``)."""
    _check_scope(scope)
    if scope == "desktop":
        return desktop.grounding_view(event)
    return event


def _segment_order(s: Segment) -> tuple[Any, ...]:
    return (s.start, s.kind, s.citations[:1], s.end, s.citations)


def _numbered(segment: Segment) -> Segment:
    """Fact ids ``f1``, ``f2``, ... in listed order (scope modules leave them blank)."""
    facts = tuple(
        Fact(f"f{number}", fact.type, fact.path, fact.value, fact.at)
        for number, fact in enumerate(segment.facts, start=1)
    )
    return Segment(
        segment.start, segment.end, facts, segment.citations, segment.kind, segment.source
    )
