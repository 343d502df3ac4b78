"""The plain records the ProactMem engine reads and writes (ProactMem §2–§3).

Everything is immutable and holds only stdlib types, so the engine stays pure: the Django side
builds these from stored rows and stores what the engine returns. Times are aware datetimes;
a *local* time is one in the entity's time zone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any, Literal

# A scalar leaf of an event payload or of a fact: what grounding compares.
Scalar = str | int | float | bool | None
# A field path into a payload, outermost key first: ("pull_request", "state").
Path = tuple[str, ...]

FACT_TYPES = ("observed", "context_before", "outcome")  # ProactMem: the typed facts of a segment
# The kind of a ProactiveStream decision point handed to the engine as the current "event": a
# moment to decide at (a home's segment close, a sports slot, a desktop frame boundary) whose
# payload is the point's public fields. It is never committed to memory (benchmark/streams).
POINT_KIND = "decision_point"
FactType = Literal["observed", "context_before", "outcome"]


@dataclass(frozen=True, slots=True)
class EngineEvent:
    """One stored event of an entity, as the engine sees it."""

    id: int
    at: datetime  # aware
    kind: str
    payload: Mapping[str, Any]
    monitor: str = ""  # desktop capture: the screen the row came from


@dataclass(frozen=True, slots=True)
class Fact:
    """A typed scalar leaf at a field path, claimed by a trajectory segment."""

    id: str  # unique within its segment
    type: FactType
    path: Path
    value: Scalar
    at: datetime | None = None  # when it held, if the extractor knows (inside the segment)


@dataclass(frozen=True, slots=True)
class Segment:
    """A stretch of one local day with the facts seen in it and the events that show them.

    ``kind`` names the extractor rule that cut the segment (``step_bout``, ``room_presence``,
    ``frame``, ...). Replay sees a fact at the path ``(kind, *fact.path)``, so a predicate can
    say "a step bout happened" while the fact itself is still a plain payload leaf that
    validation grounds in a cited event.
    """

    start: datetime  # aware; start <= end
    end: datetime
    facts: tuple[Fact, ...]
    citations: tuple[int, ...]  # event ids
    kind: str = "segment"
    # What the segment was cut from, when not the events alone (desktop: the compiled frame id,
    # whose measured minutes the audit page shows; an aggregate is no leaf of any event).
    source: str = ""


@dataclass(frozen=True, slots=True)
class Predicate:
    """Matches a fact: the same field path and the same canonical value."""

    path: Path
    value: Scalar


@dataclass(frozen=True, slots=True)
class Proposal:
    """A candidate regularity: after ``trigger`` on a day, ``behavior`` follows in ``window``.

    ``window`` is a local time-of-day range [start, end); ``weekdays`` (0 = Monday) restricts
    the days it applies to, None for every day.
    """

    trigger: Predicate
    behavior: Predicate
    window: tuple[time, time]
    weekdays: frozenset[int] | None = None


@dataclass(frozen=True, slots=True)
class Observation:
    """A validated fact of a day, placed in local time: what replay reads."""

    at: datetime  # local, aware
    path: Path
    value: Scalar
    fact_id: str


@dataclass(frozen=True, slots=True)
class DayRecord:
    """One completed local day of an entity: its validated observations, in time order.

    A day with no observations at all is unobservable (replay censors it).
    """

    day: date
    observations: tuple[Observation, ...] = field(default_factory=tuple)

    @property
    def weekday(self) -> int:
        return self.day.weekday()
