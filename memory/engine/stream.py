"""ProactMem over one entity's stream, in memory: the causal loop the service runs with a database.

:class:`MemoryStream` processes events in order, each in the causal order of
ARCHITECTURE.md, principle 4:

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

A ProactiveStream decision point (``benchmark/streams``; kind ``decision_point``) is decided on
with :meth:`MemoryStream.decide_point`: steps 1–5 only. A point is never committed to memory
(its events are), and it runs no maintenance (the next event does); its recent events are the
stream's earlier points, as a point's stream is its points. :func:`decide_on` is steps 2–4 on a
:class:`MemoryView`, so several policies (the benchmark's methods) can decide on one memory.

A day closes when the stream shows a later local day (or :meth:`close_through` is called, as the
service's beat does at local midnight). An event for a day already closed cannot be decided on:
memory has moved past it, and deciding would read that day's outcome (a causal leak);
:meth:`process` refuses it with :class:`LateEvent`, as the service refuses it. (The service
takes such an event in by plain ingestion and rebuilds memory; a replayed benchmark stream is
in time order and never has one.)
"""

from __future__ import annotations

from bisect import insort
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache, partial
from typing import Any
from zoneinfo import ZoneInfo

from compiler.document import compile_day, expand_runs
from compiler.sources.events import capture_from_records
from memory.engine.catalogue import control_context
from memory.engine.control import (
    Controlled,
    ControlState,
    Proposed,
    Scope,
    Signature,
    control_first,
    signature,
)
from memory.engine.day import (
    ClosedDay,
    DayCache,
    Tracked,
    advance_regularities,
    close_day,
)
from memory.engine.decide import (
    EXPECTATIONS,
    REGULARITIES,
    TRAJECTORIES,
    DecisionContext,
    reads,
    reads_today,
    reads_trajectories,
)
from memory.engine.expect import Expectations
from memory.engine.recent import RECENT_MAX_PRIOR, recent_events
from memory.engine.records import POINT_KIND, DayRecord, EngineEvent, Proposal
from memory.engine.regularities import RegularityState
from memory.engine.retrieve import Retrieved, clock_seconds, reach, retrieve

TRAJECTORY_DAYS = 3  # our choice: a decision's context shows the last three closed days
# The open desktop day's frames are compiled again after this much stream time (the service's
# worker compiles a day at most once per AFRAMES_COMPILE_INTERVAL_MS; a replay has no worker).
OPEN_FRAMES_EVERY = timedelta(minutes=5)
# Frames of a desktop day, compiled from its events (the service reads its stored documents).
FrameSource = Callable[[Sequence[EngineEvent], date, ZoneInfo], Sequence[Mapping[str, Any]]]


def _order(event: EngineEvent) -> tuple[datetime, int]:
    return event.at, event.id


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


@dataclass(frozen=True)
class MemoryView:
    """Memory as it stands for one decision: what every policy may read at ``current``."""

    scope: Scope
    current: EngineEvent
    now: datetime  # local, aware
    recent: tuple[EngineEvent, ...]  # oldest first, the current one last
    tracked: Mapping[str, Tracked]
    closed: Mapping[date, ClosedDay]
    today_of: Callable[[], DayRecord]
    expectations: Expectations | None = None  # what is usual (expect.py); None: not kept
    # What every policy deciding on this view reads alike (retrieval, memory's judgement of the
    # point), worked out once: the benchmark's methods decide on one view.
    shared: dict[object, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def day(self) -> date:
        return self.now.date()

    def trajectories(self) -> tuple[DayRecord, ...]:
        """The last ``TRAJECTORY_DAYS`` closed days, oldest first (all before this one)."""
        return tuple(self.closed[d].record for d in sorted(self.closed)[-TRAJECTORY_DAYS:])

    def reachable(self, *, gate: bool = True) -> list[tuple[Proposal, RegularityState]]:
        """Regularities retrieval may pick now: active or weakening ones (every replayable one
        without the replay gate) whose window, widened, contains now."""
        clock = clock_seconds(self.now)
        return [
            (t.proposal, t.state)
            for low, high, t in _reaches(self.tracked)
            if low <= clock < high
            and (t.state.state in ("active", "weakening") if gate else t.state.rejected is None)
        ]


# The last regularities' reach (retrieve.reach) in seconds of the wall clock, worked out once
# per set of regularities (memory replaces it at each close), not once per decision: a stream's
# decisions all read the same set until its next close. The set is held, so a reused id never
# matches.
_REACHES: list[tuple[Mapping[str, Tracked], list[tuple[float, float, Tracked]]]] = []


def _reaches(tracked: Mapping[str, Tracked]) -> list[tuple[float, float, Tracked]]:
    held = _REACHES[0] if _REACHES else None  # read once: another thread may replace it
    if held is not None and held[0] is tracked and len(held[1]) == len(tracked):
        return held[1]
    table = [(*reach(t.proposal), t) for t in tracked.values()]
    _REACHES[:] = [(tracked, table)]
    return table


@lru_cache(maxsize=1024)
def local_day_span(day: date, zone: ZoneInfo) -> tuple[datetime, datetime, date] | None:
    """The instants of the local ``day`` in ``zone`` as [start, end) in UTC, with the day; None
    where the day's UTC offset changes (a DST day), whose instants are each converted.

    Where the offset is the same at the day's first and last instant, every instant between
    them is of that day: local time is UTC shifted by that offset (no zone changes its offset
    twice within a day and back).
    """
    start = datetime.combine(day, time(), zone).astimezone(UTC)
    end = datetime.combine(day + timedelta(days=1), time(), zone).astimezone(UTC)
    first, last = start.astimezone(zone), (end - timedelta(microseconds=1)).astimezone(zone)
    if first.date() != day or last.date() != day or first.utcoffset() != last.utcoffset():
        return None
    return start, end, day


def decide_on(
    view: MemoryView,
    policy: Any,
    state: ControlState,
    *,
    gate: bool = True,
    blind: bool = False,
) -> tuple[Outcome, ControlState]:
    """Steps 2–4 of the causal loop on ``view``: decide with ``policy``, then control.

    ``gate`` and ``blind`` are ProactMem's ablation switches (``retrieve.retrieve``): without
    the replay gate every replayable regularity is retrievable; blind, no trajectory of today
    is read (occurrences by the clock alone, and no today's facts for the policy).
    """

    needs = reads(policy)
    reachable = _reachable(view, gate) if REGULARITIES in needs else []
    # A policy that reads the closed days only for what retrieval finds is handed them after it.
    early = TRAJECTORIES in needs and not hasattr(policy, "reads_trajectories")
    trajectories = view.trajectories() if early else ()
    # Today's observations cost an extraction: made when a retrievable regularity needs its
    # occurrence, or a policy reads them at this moment (as the service does).
    wants_today = not blind and (bool(reachable) or reads_today(policy, trajectories, view.now))
    today = view.today_of() if wants_today else DayRecord(view.day)
    retrieved: tuple[Retrieved, ...] = ()
    if reachable:
        key = ("retrieved", gate, blind)
        if key not in view.shared:
            view.shared[key] = tuple(retrieve(reachable, view.now, today, gate=gate, blind=blind))
        retrieved = view.shared[key]
    if not early and reads_trajectories(policy, retrieved):
        trajectories = view.trajectories()
    ctx = DecisionContext(
        scope=view.scope,
        current=view.current,
        recent=view.recent,
        now=view.now,
        trajectories=trajectories,
        today=today,
        regularities=retrieved,
        expectations=view.expectations if EXPECTATIONS in needs else None,
        shared=view.shared,
    )
    proposed = policy.decide(ctx)
    controlled, new_state, sig = control_first(
        proposed, view.day, partial(_signature_of, view), lambda _: state
    )
    outcome = Outcome(
        view.current.id, view.current.at, view.day, policy.name, controlled, sig, retrieved
    )
    return outcome, new_state


# Scopes whose control context is the current moment's alone (catalogue.control_context: the
# sports payload; a home's rooms and activity with its recent history), not the proposal's,
# unless the proposal is about a target of its own (a home's device left on, a routine).
_CONTEXT_OF_THE_MOMENT = frozenset({"sports", "home"})
_SIGNATURE = ("signature",)


def _signature_of(view: MemoryView, proposed: Proposed) -> Signature:
    # Worked out once per view for every policy deciding on it: what control compares is the
    # moment's alone where the scope says so, and otherwise the moment's with what is proposed
    # (catalogue.control_context reads the proposal's intent, target and message, no more).
    key: tuple[str, ...] = (
        _SIGNATURE
        if view.scope in _CONTEXT_OF_THE_MOMENT and not proposed.target
        else (*_SIGNATURE, proposed.intent, proposed.target, proposed.message)
    )
    sig: Signature | None = view.shared.get(key)
    if sig is None:
        sig = view.shared[key] = _signature(view, proposed)
    return sig


def _signature(view: MemoryView, proposed: Any) -> Signature:
    context, prior = control_context(view.scope, view.current, view.recent[:-1], proposed)
    return signature(view.scope, context, prior)


def _reachable(view: MemoryView, gate: bool) -> list[tuple[Proposal, RegularityState]]:
    key = ("reachable", gate)
    if key not in view.shared:
        view.shared[key] = view.reachable(gate=gate)
    found: list[tuple[Proposal, RegularityState]] = view.shared[key]
    return found


@lru_cache(maxsize=2048)
def _rows_of(runs: str) -> frozenset[int]:
    """The capture rows a frame rests on, from its evidence's runs (``12-15,19``): an open
    day's frames are compiled again and again through the day, most of them unchanged, and
    each list of runs is read once (the bound holds a few days of frames of a few entities)."""
    return frozenset(expand_runs(runs))


@dataclass
class MemoryStream:
    """One entity's memory and decisions, advanced one event at a time (module docstring)."""

    scope: Scope
    zone: ZoneInfo
    policy: Any  # decide.Policy: typed loosely so this module does not import the policies
    frame_source: FrameSource | None = None
    validate: bool = True  # False: ProactMem's no-validation ablation (day.close_day)
    log: list[tuple[str, int]] = field(default_factory=list)
    decisions: list[Outcome] = field(default_factory=list)
    closed: dict[date, ClosedDay] = field(default_factory=dict)
    tracked: dict[str, Tracked] = field(default_factory=dict)
    control_state: ControlState = field(default_factory=ControlState)
    expectations: Expectations = field(default_factory=Expectations)
    _recent: deque[EngineEvent] = field(default_factory=lambda: deque(maxlen=RECENT_MAX_PRIOR))
    _recent_points: deque[EngineEvent] = field(
        default_factory=lambda: deque(maxlen=RECENT_MAX_PRIOR)
    )
    _open: dict[date, list[EngineEvent]] = field(default_factory=dict)  # (time, id) order
    _today_cache: tuple[date, int, int, DayRecord] | None = None
    _day_span: tuple[datetime, datetime, date] | None = None  # the last event's local day
    # The open desktop day's last compiled frames, each with the event ids it rests on.
    _frames_cache: (
        tuple[date, datetime, tuple[tuple[Mapping[str, Any], frozenset[int]], ...]] | None
    ) = None
    _known: tuple[date, int, EngineEvent, set[int]] | None = None
    # Each open day's extraction so far (DayCache), kept until the day closes: a decision point
    # of the next day may come before that day's close, and the close then extends the open
    # day's extraction instead of extracting the whole day again.
    _day_caches: dict[date, DayCache] = field(default_factory=dict)
    # Records built with a segment the validator rejected (at a close or for an open day): while
    # this is 0, memory without validation would hold exactly what this memory holds.
    rejections: int = 0

    # -- the causal loop ----------------------------------------------------------------------

    def process(self, event: EngineEvent) -> Outcome:
        """Decide on ``event`` from memory as it stood before it, then commit it (steps 1–7)."""
        day = self._check_event(event)
        self.log.append(("read", event.id))
        view = self.view(event)
        self.log.append(("stage", event.id))
        self.log.append(("decide", event.id))
        outcome, self.control_state = decide_on(view, self.policy, self.control_state)
        self.log.append(("control", event.id))
        self.log.append(("store", event.id))
        self.decisions.append(outcome)

        self.log.append(("commit", event.id))
        self._commit(event, day)

        self.log.append(("maintain", event.id))
        self.close_through(day)
        return outcome

    def decide_point(self, point: EngineEvent) -> Outcome:
        """Decide at a decision point from memory as it stands (steps 1–5); nothing is
        committed and no day closes (module docstring)."""
        if point.kind != POINT_KIND:
            raise ValueError(f"{point.id}: a decision point has kind {POINT_KIND!r}")
        self._check(point)
        self.log.append(("read", point.id))
        view = self.view(point)
        self.log.append(("decide", point.id))
        outcome, self.control_state = decide_on(view, self.policy, self.control_state)
        self.log.append(("store", point.id))
        self.decisions.append(outcome)
        self.note_point(point)
        return outcome

    def view(self, current: EngineEvent) -> MemoryView:
        """Memory as it stands for a decision at ``current`` (an event not yet committed, or a
        decision point), for any number of policies to decide on."""
        if current.at.tzinfo is None or current.at.utcoffset() is None:
            raise ValueError(f"event {current.id}: its time must be aware")
        now = current.at.astimezone(self.zone)
        prior = self._recent_points if current.kind == POINT_KIND else self._recent
        return MemoryView(
            scope=self.scope,
            current=current,
            now=now,
            recent=recent_events(current, prior),
            tracked=self.tracked,
            closed=self.closed,
            today_of=lambda: self.today_record(now.date(), now),
            expectations=self.expectations,
        )

    def note_point(self, point: EngineEvent) -> None:
        """Remember a decided point as a recent event of later points, and what it shows as
        part of what is usual at its time of day."""
        self._recent_points.append(point)
        self.expectations.observe_point(point, point.at.astimezone(self.zone).date())

    def _check_event(self, event: EngineEvent) -> date:
        """:meth:`_check` for an event to commit: never a decision point (the day's extraction
        reads the committed events as they are kept)."""
        if event.kind == POINT_KIND:
            raise ValueError(f"{event.id}: a decision point is decided on, never committed")
        return self._check(event)

    def _check(self, event: EngineEvent) -> date:
        at = event.at
        if at.tzinfo is None or at.utcoffset() is None:
            raise ValueError(f"event {event.id}: its time must be aware")
        # Events come in time order, nearly all of one local day after another: the day's
        # instants are known once (local_day_span), not converted to local time one by one.
        span = self._day_span
        if span is not None and span[0] <= at < span[1]:
            day = span[2]
        else:
            day = at.astimezone(self.zone).date()
            self._day_span = local_day_span(day, self.zone)
        # Days close oldest first and never before a closed one, so the latest closed day is
        # the last one in; a stream is checked at every event, whatever its history.
        if self.closed and day <= next(reversed(self.closed)):
            raise LateEvent(f"event {event.id}: {day.isoformat()} is closed in memory")
        return day

    def ingest(self, event: EngineEvent) -> None:
        """Take ``event`` into memory without a decision: commit, then due maintenance.

        What plain ingestion does in the service; replaying a stream this way builds the same
        memory as :meth:`process` does (decisions never change memory).
        """
        day = self._check_event(event)
        self._commit(event, day)
        if len(self._open) > 1:  # the event's own day is open now: only another can be due
            self.close_through(day)

    def _commit(self, event: EngineEvent, day: date) -> None:
        self._recent.append(event)
        self.expectations.observe_event(event)
        # Kept in (time, id) order, so the day's events up to a moment are a prefix of the list
        # whatever order they arrived in (an event may come late within its open day).
        todays = self._open.get(day)
        if todays is None:
            todays = self._open[day] = []
        last = todays[-1] if todays else None
        if last is None or last.at < event.at or (last.at == event.at and last.id <= event.id):
            todays.append(event)  # the usual case: a stream in time order
        else:
            insort(todays, event, key=_order)

    # -- memory reads -------------------------------------------------------------------------

    def today_record(self, day: date, now: datetime) -> DayRecord:
        """Today's observations so far: the day's committed events, extracted and validated.

        Only the regularities' occurrence reads it; it is recomputed when the day gained
        events since the last call. The day's events are kept in time order, so those at or
        before ``now`` are a prefix: the counts of the day and of that prefix say which events
        they are (events only ever join the day).
        """
        committed = self._open.get(day, [])
        # Usually every event of the day is at or before now (an event is decided on before
        # it is committed); a decision point may come before some of them.
        if committed and committed[-1].at <= now:
            events = committed
        else:
            events = [e for e in committed if e.at <= now]
        cached = self._today_cache
        if (
            cached is not None
            and cached[0] == day
            and cached[1] == len(committed)
            and cached[2] == len(events)
        ):
            return cached[3]
        if events:
            cache = self._day_caches.get(day)
            if cache is None:
                cache = self._day_caches[day] = DayCache()
            record = self._close(day, events, cache=cache).record
        else:
            record = DayRecord(day)
        self._today_cache = (day, len(committed), len(events), record)
        return record

    # -- maintenance --------------------------------------------------------------------------

    def close_through(self, before: date) -> list[date]:
        """Close every open local day before ``before``, oldest first; return the days closed."""
        if len(self._open) == 1 and before in self._open:
            return []  # run at every event: usually only the event's own day is open
        done: list[date] = []
        due = [d for d in self._open if d < before]
        due.sort()
        for day in due:
            events = self._open.pop(day)
            # The open day's extraction so far is extended to the whole day, not redone: the
            # same segments (extract.OpenDay), each validated once.
            closed = self._close(day, events, cache=self._day_caches.pop(day, None), final=True)
            history = [c.record for d, c in sorted(self.closed.items()) if d < day]
            step = advance_regularities(self.tracked, history, closed.record)
            self.closed[day] = closed
            self.tracked = dict(step.tracked)
            done.append(day)
        return done

    def _close(
        self,
        day: date,
        events: Sequence[EngineEvent],
        cache: DayCache | None = None,
        *,
        final: bool = False,
    ) -> ClosedDay:
        """The day's record from ``events``: ``final`` at its close (a desktop day's frames
        compiled whole), else as it stands while open (the frames a decision may read)."""
        frames: Sequence[Mapping[str, Any]] = ()
        if self.scope == "desktop" and self.frame_source is not None:
            frames = (
                self.frame_source(events, day, self.zone)
                if final
                else self._open_frames(day, events)
            )
        # The open day's events are kept in (time, id) order and are all of that local day.
        closed = close_day(
            self.scope,
            events,
            day,
            self.zone,
            frames=frames,
            cache=cache,
            validate=self.validate,
            ordered=True,
        )
        if self.validate and any(not c.verdict.accepted for c in closed.segments):
            self.rejections += 1
        return closed

    def fork(self) -> MemoryStream:
        """An independent copy to go on from: the records are immutable, the containers copied.

        What a restart from saved state reads back; the resume property is tested on it.
        """
        copy = MemoryStream(self.scope, self.zone, self.policy, self.frame_source, self.validate)
        copy.log = list(self.log)
        copy.decisions = list(self.decisions)
        copy.closed = dict(self.closed)
        copy.tracked = dict(self.tracked)
        copy.control_state = self.control_state
        copy.rejections = self.rejections
        copy.expectations = deepcopy(self.expectations)
        copy._recent = deque(self._recent, maxlen=RECENT_MAX_PRIOR)
        copy._recent_points = deque(self._recent_points, maxlen=RECENT_MAX_PRIOR)
        copy._open = {day: list(events) for day, events in self._open.items()}
        copy._today_cache = self._today_cache
        copy._day_caches = {
            day: DayCache(
                views=dict(cache.views),
                indexes=dict(cache.indexes),
                opened=deepcopy(cache.opened),
                verdicts=dict(cache.verdicts),
                viewed=cache.viewed,
                checked=dict(cache.checked),
                observed=dict(cache.observed),
                grown=dict(cache.grown),
            )
            for day, cache in self._day_caches.items()
        }
        copy._frames_cache = self._frames_cache
        copy._known = None
        return copy

    def _open_frames(self, day: date, events: Sequence[EngineEvent]) -> Sequence[Mapping[str, Any]]:
        """The open day's frames as a decision reads them: compiled again only when the last
        compile is :data:`OPEN_FRAMES_EVERY` of stream time old (the service reads the day's
        stored document, which its worker compiles at most once per interval), and only the
        frames resting wholly on the events given (none of a later row's bounds or app)."""

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
                tuple(
                    (f, _rows_of(str((f.get("evidence") or {}).get("rows") or "")))
                    for f in self.frame_source(events, day, self.zone)
                ),
            )
        if cached is None or cached[0] != day:
            return ()
        known = self._known_ids(day, events)
        return [f for f, rows in cached[2] if rows <= known]

    def _known_ids(self, day: date, events: Sequence[EngineEvent]) -> set[int]:
        """The ids of ``events`` (a prefix of the open day's events in time order), kept from
        the last call and extended when the same prefix only grew."""
        held = self._known
        if (
            held is not None
            and held[0] == day
            and 0 < held[1] <= len(events)
            and events[held[1] - 1] is held[2]
        ):
            ids = held[3]
            ids.update(e.id for e in events[held[1] :])
        else:
            ids = {e.id for e in events}
        self._known = (day, len(events), events[-1], ids) if events else None
        return ids

    def run(self, events: Iterable[EngineEvent]) -> list[Outcome]:
        """Process ``events`` in the order given; return their decisions."""
        return [self.process(e) for e in events]


def stored_frames(frames_by_day: Mapping[date, Sequence[Mapping[str, Any]]]) -> FrameSource:
    """A frame source over documents already compiled (the service's stored day documents):
    the day's frames, of which a decision on an open day keeps those resting wholly on the
    events it has seen (``MemoryStream._open_frames``), as the service does."""

    def source(
        events: Sequence[EngineEvent], day: date, zone: ZoneInfo
    ) -> Sequence[Mapping[str, Any]]:
        return frames_by_day.get(day, ())

    return source


def compiled_frames(
    events: Sequence[EngineEvent], day: date, zone: ZoneInfo
) -> Sequence[Mapping[str, Any]]:
    """A desktop day's frames compiled from its events: the compiler, as the service runs it."""

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
