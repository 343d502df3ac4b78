"""The records a ProactiveStream stream is made of: raw events and decision points.

This module is the interface between the stream builders, the reference labelers and the
methods (ProactMem §4–§5, appendix A): labelers and methods both read these records and share
no other code. Everything is immutable and plain (stdlib types only).

* A :class:`StreamEvent` is one stored event of an entity, ``private`` (ground truth) included.
  Methods only ever get :meth:`StreamEvent.public`.
* A :class:`DecisionPoint` is a moment at which a method must decide intervene or abstain: the
  public fields available at that moment (what methods see), the private ground truth
  summarised for it (what labelers may read), and the ids of the events it summarises.
* A :class:`Stream` is one entity's isolated chronological stream: its events and its points,
  in the causal order :func:`Stream.steps` gives.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

SCOPES = ("home", "sports", "code", "desktop")
PRIVATE = "private"  # the payload key of ground truth (ARCHITECTURE: labels and outcomes)
EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One stored event, as a stream holds it: ``payload`` still carries ``private``."""

    id: int
    at: datetime  # aware
    kind: str
    payload: Mapping[str, Any]
    source_key: str = ""
    monitor: str = ""

    @property
    def private(self) -> Mapping[str, Any]:
        found = self.payload.get(PRIVATE)
        return found if isinstance(found, Mapping) else EMPTY

    @property
    def activities(self) -> list[str]:
        """The activity annotations in ``private`` (one or several), ground truth only."""
        found = self.private.get("activity")
        if isinstance(found, str):
            return [found]
        if isinstance(found, list):
            return [a for a in found if isinstance(a, str)]
        return []

    def public(self) -> StreamEvent:
        """The event with its ``private`` block removed: all a method may read."""
        if PRIVATE not in self.payload:
            return self
        payload = dict(self.payload)  # one copy in C, then the one key out: the same order
        del payload[PRIVATE]
        return StreamEvent(self.id, self.at, self.kind, payload, self.source_key, self.monitor)


@dataclass(frozen=True, slots=True)
class DecisionPoint:
    """A moment at which a method decides; available at ``at`` (aware).

    ``key`` is stable across rebuilds and re-imports (``home:2011-11-28/12``,
    ``code:gh:6345012345``). ``event_id`` is set where the point *is* a native event (code):
    the decision comes before that event is committed. Otherwise the point comes after every
    event at or before ``at``.
    """

    key: str
    scope: str
    at: datetime
    public: Mapping[str, Any]
    private: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    cites: tuple[int, ...] = ()
    event_id: int | None = None
    id: int = 0  # the stored row's id once stored (0: not stored; the harness numbers it)

    def without_private(self) -> DecisionPoint:
        return replace(self, private=EMPTY)


Step = StreamEvent | DecisionPoint


def _order(step: Step, event_times: Mapping[int, datetime]) -> tuple[Any, ...]:
    if isinstance(step, StreamEvent):
        return (step.at, 1, step.id, 1, "")
    if step.event_id is not None:
        # Right before its own event, after every event before that one in (time, id) order.
        return (event_times.get(step.event_id, step.at), 1, step.event_id, 0, step.key)
    return (step.at, 2, 0, 0, step.key)


@dataclass(frozen=True)
class Stream:
    """One entity's stream: its events in (time, id) order and its decision points.

    ``synthetic`` says the data was generated, not recorded (desktop today), so a report can
    say which figures come from real data.
    """

    entity: str
    scope: str
    zone: ZoneInfo
    events: tuple[StreamEvent, ...]
    points: tuple[DecisionPoint, ...]
    synthetic: bool = False
    # Desktop: the compiled frames of each day the points were built from (what memory reads
    # of a desktop day, as the service reads its stored documents).
    frames: Mapping[date, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)

    def steps(self) -> Iterator[Step]:
        """Events and points in causal order: a point at ``t`` comes after every event at or
        before ``t`` (a native-event point right before its own event), so whoever reads the
        steps in order has seen exactly what was available when the point was."""
        times = {e.id: e.at for e in self.events}
        merged: list[Step] = [*self.events, *self.points]
        merged.sort(key=lambda s: _order(s, times))
        return iter(merged)

    def without_private(self) -> Stream:
        """The stream with every ``private`` field removed (what methods are handed)."""
        return replace(
            self,
            events=tuple(e.public() for e in self.events),
            points=tuple(p.without_private() for p in self.points),
        )
