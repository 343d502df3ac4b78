"""ProactMem over one entity's stream, in memory: the causal loop the service runs with a database.

:class:`MemoryStream` processes events in order, each in the causal order issue 6 fixes:

1. **read memory** as it stood before the event (recent events, closed days, regularities,
   today's observations so far, the control state);
2. **stage** the event (the caller validated it; here it is only placed on its local day);
3. **decide** with the policy;
4. **control** the proposal (intervention control);
5. **store** the decision;
6. **commit** the event to memory;
7. **run due maintenance**: close every open local day before the event's day (trajectory,
   validation, replay, lifecycle).

The Django services run the same steps through the same pure functions (``day.py``,
``decide.py``, ``control.py``), so a benchmark on this class measures what the service decides.
The order is observable: :attr:`MemoryStream.log` records each step, and tests hold it.

A day closes when the stream shows a later local day (or :meth:`close_through` is called, as the
service's beat does at local midnight). An event for a day already closed cannot be decided on:
memory has moved past it, and deciding would read that day's outcome (a causal leak);
:meth:`process` refuses it with :class:`LateEvent`, as the service refuses it. (The service
takes such an event in by plain ingestion and rebuilds memory; a replayed benchmark stream is
in time order and never has one.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.control import Controlled, ControlState, Scope, Signature, control, signature
from memory.engine.day import (
    ClosedDay,
    DayCache,
    Tracked,
    advance_regularities,
    close_day,
)
from memory.engine.recent import RECENT_MAX_PRIOR, recent_events
from memory.engine.records import DayRecord, EngineEvent
from memory.engine.retrieve import Retrieved, in_reach, retrieve

TRAJECTORY_DAYS = 3  # our choice: a decision's context shows the last three closed days
# The open desktop day's frames are compiled again after this much stream time (the service's
# worker compiles a day at most once per AFRAMES_COMPILE_INTERVAL_MS; a replay has no worker).
OPEN_FRAMES_EVERY = timedelta(minutes=5)
# Frames of a desktop day, compiled from its events (the service reads its stored documents).
FrameSource = Callable[[Sequence[EngineEvent], date, ZoneInfo], Sequence[Mapping[str, Any]]]


class LateEvent(ValueError):
    """An event for a local day memory has already closed (module docstring)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A stored decision: the final action after control, and what it rests on."""

    event_id: int
    at: datetime
    day: date  # the event's local day
    policy: str
    controlled: Controlled
    signature: Signature
    retrieved: tuple[Retrieved, ...]

    @property
    def action(self) -> str:
        return self.controlled.action

    @property
    def suppressed(self) -> bool:
        return self.controlled.suppressed


@dataclass
class MemoryStream:
    """One entity's memory and decisions, advanced one event at a time (module docstring)."""

    scope: Scope
    zone: ZoneInfo
    policy: Any  # decide.Policy: typed loosely so this module does not import the policies
    frame_source: FrameSource | None = None
    log: list[tuple[str, int]] = field(default_factory=list)
    decisions: list[Outcome] = field(default_factory=list)
    closed: dict[date, ClosedDay] = field(default_factory=dict)
    tracked: dict[str, Tracked] = field(default_factory=dict)
    control_state: ControlState = field(default_factory=ControlState)
    _recent: deque[EngineEvent] = field(default_factory=lambda: deque(maxlen=RECENT_MAX_PRIOR))
    _open: dict[date, list[EngineEvent]] = field(default_factory=dict)
    _today_cache: tuple[date, int, DayRecord] | None = None
    _cache_day: date | None = None
    _frames_cache: tuple[date, datetime, tuple[Mapping[str, Any], ...]] | None = None
    _day_cache: DayCache = field(default_factory=DayCache)

    # -- the causal loop ----------------------------------------------------------------------

    def process(self, event: EngineEvent) -> Outcome:
        """Decide on ``event`` from memory as it stood before it, then commit it (steps 1–7)."""
        from memory.engine.catalogue import control_context
        from memory.engine.decide import DecisionContext

        if event.at.tzinfo is None or event.at.utcoffset() is None:
            raise ValueError(f"event {event.id}: its time must be aware")
        now = event.at.astimezone(self.zone)
        day = now.date()
        if day in self.closed or any(d > day for d in self.closed):
            raise LateEvent(f"event {event.id}: {day.isoformat()} is closed in memory")

        self.log.append(("read", event.id))
        recent = recent_events(event, self._recent)
        reachable = [
            (t.proposal, t.state)
            for t in self.tracked.values()
            if t.state.state in ("active", "weakening") and in_reach(t.proposal, now)
        ]
        # Today's observations cost an extraction: made when a retrievable regularity needs
        # its occurrence, or for the llm policy, whose prompt shows them (as the service does).
        wants_today = bool(reachable) or self.policy.name == "llm"
        today = self.today_record(day, now) if wants_today else DayRecord(day)
        retrieved = tuple(retrieve(reachable, now, today)) if reachable else ()

        self.log.append(("stage", event.id))
        ctx = DecisionContext(
            scope=self.scope,
            current=event,
            recent=recent,
            now=now,
            # Every closed day is before this one (a later or equal one raised LateEvent).
            trajectories=tuple(
                self.closed[d].record for d in sorted(self.closed)[-TRAJECTORY_DAYS:]
            ),
            today=today,
            regularities=retrieved,
        )

        self.log.append(("decide", event.id))
        proposed = self.policy.decide(ctx)

        self.log.append(("control", event.id))
        context, prior = control_context(self.scope, event, recent[:-1], proposed)
        sig = signature(self.scope, context, prior)
        controlled, self.control_state = control(proposed, sig, day, self.control_state)

        self.log.append(("store", event.id))
        outcome = Outcome(event.id, event.at, day, self.policy.name, controlled, sig, retrieved)
        self.decisions.append(outcome)

        self.log.append(("commit", event.id))
        self._commit(event, day)

        self.log.append(("maintain", event.id))
        self.close_through(day)
        return outcome

    def ingest(self, event: EngineEvent) -> None:
        """Take ``event`` into memory without a decision: commit, then due maintenance.

        What plain ingestion does in the service; replaying a stream this way builds the same
        memory as :meth:`process` does (decisions never change memory).
        """
        day = event.at.astimezone(self.zone).date()
        if day in self.closed or any(d > day for d in self.closed):
            raise LateEvent(f"event {event.id}: {day.isoformat()} is closed in memory")
        self._commit(event, day)
        self.close_through(day)

    def _commit(self, event: EngineEvent, day: date) -> None:
        self._recent.append(event)
        self._open.setdefault(day, []).append(event)

    # -- memory reads -------------------------------------------------------------------------

    def today_record(self, day: date, now: datetime) -> DayRecord:
        """Today's observations so far: the day's committed events, extracted and validated.

        Only the regularities' occurrence reads it; it is recomputed when the day gained
        events since the last call (events only ever join the day, so the count says so).
        """
        events = [e for e in self._open.get(day, ()) if e.at <= now]
        cached = self._today_cache
        if cached is not None and cached[0] == day and cached[1] == len(events):
            return cached[2]
        if self._cache_day != day:
            self._cache_day, self._day_cache = day, DayCache()
        record = (
            self._close(day, events, cache=self._day_cache).record if events else DayRecord(day)
        )
        self._today_cache = (day, len(events), record)
        return record

    # -- maintenance --------------------------------------------------------------------------

    def close_through(self, before: date) -> list[date]:
        """Close every open local day before ``before``, oldest first; return the days closed."""
        done: list[date] = []
        for day in sorted(d for d in self._open if d < before):
            events = self._open.pop(day)
            closed = self._close(day, events)
            history = [c.record for d, c in sorted(self.closed.items()) if d < day]
            step = advance_regularities(self.tracked, history, closed.record)
            self.closed[day] = closed
            self.tracked = dict(step.tracked)
            done.append(day)
        return done

    def _close(
        self, day: date, events: Sequence[EngineEvent], cache: DayCache | None = None
    ) -> ClosedDay:
        frames: Sequence[Mapping[str, Any]] = ()
        if self.scope == "desktop" and self.frame_source is not None:
            frames = (
                self._open_frames(day, events)
                if cache is not None
                else self.frame_source(events, day, self.zone)
            )
        return close_day(self.scope, events, day, self.zone, frames=frames, cache=cache)

    def fork(self) -> MemoryStream:
        """An independent copy to go on from: the records are immutable, the containers copied.

        What a restart from saved state reads back; the resume property is tested on it.
        """
        copy = MemoryStream(self.scope, self.zone, self.policy, self.frame_source)
        copy.log = list(self.log)
        copy.decisions = list(self.decisions)
        copy.closed = dict(self.closed)
        copy.tracked = dict(self.tracked)
        copy.control_state = self.control_state
        copy._recent = deque(self._recent, maxlen=RECENT_MAX_PRIOR)
        copy._open = {day: list(events) for day, events in self._open.items()}
        copy._today_cache = self._today_cache
        copy._cache_day = self._cache_day
        copy._day_cache = DayCache(
            dict(self._day_cache.views),
            dict(self._day_cache.indexes),
            dict(self._day_cache.verdicts),
        )
        copy._frames_cache = self._frames_cache
        return copy

    def _open_frames(self, day: date, events: Sequence[EngineEvent]) -> Sequence[Mapping[str, Any]]:
        """The open day's frames as a decision reads them: compiled again only when the last
        compile is :data:`OPEN_FRAMES_EVERY` of stream time old (the service reads the day's
        stored document, which its worker compiles at most once per interval), and only the
        frames resting wholly on the events given (none of a later row's bounds or app)."""
        from compiler.document import expand_runs

        newest = events[-1].at if events else None
        cached = self._frames_cache
        stale = (
            cached is None
            or cached[0] != day
            or (newest is not None and newest - cached[1] >= OPEN_FRAMES_EVERY)
        )
        if stale and self.frame_source is not None and newest is not None:
            self._frames_cache = cached = (
                day,
                newest,
                tuple(self.frame_source(events, day, self.zone)),
            )
        if cached is None or cached[0] != day:
            return ()
        known = {e.id for e in events}
        return [
            f
            for f in cached[2]
            if set(expand_runs(str((f.get("evidence") or {}).get("rows") or ""))) <= known
        ]

    def run(self, events: Iterable[EngineEvent]) -> list[Outcome]:
        """Process ``events`` in the order given; return their decisions."""
        return [self.process(e) for e in events]


def compiled_frames(
    events: Sequence[EngineEvent], day: date, zone: ZoneInfo
) -> Sequence[Mapping[str, Any]]:
    """A desktop day's frames compiled from its events: the compiler, as the service runs it."""
    from compiler.document import compile_day
    from compiler.sources.events import capture_from_records

    records = (
        {
            "id": e.id,
            "occurred_at": e.at.isoformat(),
            "kind": e.kind,
            "monitor": e.monitor,
            "payload": dict(e.payload),
        }
        for e in sorted(events, key=lambda e: (e.at, e.id))
    )
    capture = capture_from_records(records)
    frames: Sequence[Mapping[str, Any]] = compile_day(capture, day, zone.key).document["frames"]
    return frames
