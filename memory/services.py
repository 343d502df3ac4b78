"""Writes of ProactMem: decide on an event, close days, rebuild (ProactMem;
ARCHITECTURE.md, "How data flows" 3-4).

Thin around the pure engine: load rows, call ``memory.engine``, store what it returns. One
writer per entity at a time (a PostgreSQL advisory lock; SQLite's single writer serialises).

The causal order of :func:`memory_decide`, inside one transaction: read memory (queries that
cannot see the new event), stage the event (insert it, uncommitted), decide, control, store
the decision, commit (the event and its decision become visible together), and after commit
run the due maintenance (day closes) before answering, as ARCHITECTURE.md, principle 4, fixes it.

Memory is a function of the stored events: an event that arrives for a day already closed
(late capture, an older day imported after newer ones) makes the next maintenance rebuild the
entity's memory from its events, so a rebuild always equals what incremental processing keeps.
Such an event cannot be *decided* on: memory has moved past its day.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Max
from django.utils import timezone

from aframes_web.streams.models import Entity, Event, row_id
from aframes_web.streams.records import EventRecord
from aframes_web.streams.services import BatchRejected, validate_events
from compiler.sources.events import row_key
from memory import selectors
from memory.engine import words
from memory.engine.control import Allowed, Controlled, ControlState, Identity, control, identity
from memory.engine.day import ClosedDay, DayCache, Tracked, advance_regularities, close_day
from memory.engine.recent import RECENT_MAX_PRIOR, RECENT_WINDOW, recent_events
from memory.engine.records import DayRecord, EngineEvent
from memory.engine.regularities import Assessment
from memory.engine.retrieve import Retrieved, in_reach, retrieve
from memory.engine.serial import (
    STATE_FIELDS,
    identity_to_json,
    proposal_to_json,
    signature_from_json,
    signature_to_json,
    state_to_fields,
)
from memory.engine.stream import TRAJECTORY_DAYS
from memory.models import (
    Assessment as AssessmentRow,
)
from memory.models import (
    Citation,
    Decision,
    Fact,
    Regularity,
    Segment,
    Trajectory,
    Transition,
)

# Postgres advisory lock namespace for "one memory writer per entity" ('PM').
MEMORY_LOCK_CLASS = 0x504D


class DecideRejected(ValueError):
    """The event to decide on is invalid; nothing was stored. ``errors`` name each problem;
    in a batch, ``done`` holds the decisions made before it."""

    def __init__(self, errors: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(f"{len(errors)} problem(s) with the event; nothing was stored")
        self.errors = list(errors)
        self.done: list[Any] = []


def _lock(entity_id: int) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [MEMORY_LOCK_CLASS, entity_id])


def policy_named(name: str, entity: Entity | None = None) -> Any:
    """The decision policy called ``name``; ValueError naming the choices otherwise.

    ``llm`` is offered only when a model is configured (``aframes_web/llm.py``); it asks
    through the recorded, cached client and abstains on any failure.
    """
    from aframes_web import llm
    from memory.engine.decide import POLICIES, llm_policy

    if name == "llm":
        if not llm.configured():
            raise ValueError("the llm policy needs a model: set LLM_BASE_URL and LLM_MODEL")
        return llm_policy(_llm_complete(entity))
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; use one of {', '.join(sorted(POLICIES))}, llm")
    return POLICIES[name]


def _llm_complete(entity: Entity | None) -> Callable[[str], str]:
    """The recorded, cached client, its records kept with (and deleted with) the entity."""
    from aframes_web import llm

    def complete(prompt: str) -> str:
        return llm.complete(prompt, entity=entity)

    return complete


# -- decide ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecideResult:
    decision: Decision
    created: bool  # False: the event was stored already; its stored decision is returned


def _identity_key(ident: Identity) -> str:
    text = json.dumps(identity_to_json(ident), separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _allowed(entity: Entity, ident: Identity) -> ControlState:
    """The control state for one identity: its last allowed intervention, if any."""
    last = (
        Decision.objects.filter(
            entity=entity, identity_key=_identity_key(ident), action=Decision.Action.INTERVENE
        )
        .order_by("-id")  # processing order, as the in-memory stream keeps it
        .values("day", "signature")
        .first()
    )
    if last is None:
        return ControlState()
    return ControlState({ident: Allowed(last["day"], signature_from_json(last["signature"]))})


@dataclass
class _OpenDay:
    """One worker process's copy of an open day's events, read incrementally."""

    events: list[EngineEvent]
    last_id: int
    cache: DayCache


# Per process, the open days decisions read: a decision re-reads its open day at every event, so
# only the rows stored since the last one are fetched (a count check catches a row committed
# with a lower id after we read past it, and then everything is read again), and each event's
# grounding view, leaf index and each unchanged segment's verdict are reused (DayCache).
#
# Keyed by the entity's identity, not its id alone: SQLite gives a new row the id of a deleted
# one (and a rolled-back one), and a cache keyed by id alone would serve that entity's events.
_EntityKey = tuple[int, datetime]


def _cache_key(entity: Entity) -> _EntityKey:
    return entity.pk, entity.created_at


_OPEN: dict[tuple[_EntityKey, date], _OpenDay] = {}
_OPEN_MAX = 64
# Per process, the open desktop day's frames by current document: bodies are large.
_FRAMES: dict[
    tuple[_EntityKey, date], tuple[int, list[tuple[Mapping[str, Any], frozenset[int]]]]
] = {}


def _open_day(entity: Entity, day: date) -> _OpenDay:
    key = (_cache_key(entity), day)
    start, end = selectors.day_bounds(ZoneInfo(entity.timezone), day)
    rows = Event.objects.filter(entity=entity, occurred_at__gte=start, occurred_at__lt=end)
    held = _OPEN.get(key)
    if held is not None:
        newer = [selectors.engine_event(r) for r in rows.filter(pk__gt=held.last_id)]
        if newer:
            held.events.extend(newer)
            held.last_id = max(e.id for e in newer)
        stored = rows.aggregate(n=Count("id"), newest=Max("id"))
        if (stored["n"], stored["newest"] or 0) == (len(held.events), held.last_id):
            return held
    events = [selectors.engine_event(r) for r in rows]
    held = _OpenDay(events, max((e.id for e in events), default=0), DayCache())
    if len(_OPEN) >= _OPEN_MAX:
        _OPEN.clear()
    _OPEN[key] = held
    return held


# Per process, each entity's newest events by (time, id): RECENT_KEPT of them, kept by reading
# only the rows stored since (events are never deleted, so "newest" only gains). A decision at
# or after the newest of them finds its recent events here; an earlier one asks the database.
_RECENT: dict[_EntityKey, tuple[list[EngineEvent], int]] = {}
RECENT_KEPT = 2 * (RECENT_MAX_PRIOR + 1)


def _newest(entity: Entity) -> list[EngineEvent]:
    """The entity's RECENT_KEPT newest events by (time, id), oldest first (the cache above)."""
    held = _RECENT.get(_cache_key(entity))
    if held is None:
        rows = Event.objects.filter(entity=entity).order_by("-occurred_at", "-id")[:RECENT_KEPT]
        events = sorted((selectors.engine_event(r) for r in rows), key=lambda e: (e.at, e.id))
        last_id = max((e.id for e in events), default=0)
    else:
        events, last_id = held
        rows = Event.objects.filter(entity=entity, pk__gt=last_id)
        if len(events) >= RECENT_KEPT:
            # A row older than the oldest kept is not among the newest, and bounding the time
            # lets PostgreSQL walk the (entity, time) index instead of every later id of every
            # entity.
            rows = rows.filter(occurred_at__gte=events[0].at)
        newer = [selectors.engine_event(r) for r in rows]
        if newer:
            events = sorted([*events, *newer], key=lambda e: (e.at, e.id))[-RECENT_KEPT:]
            last_id = max(last_id, *(e.id for e in newer))
    if len(_RECENT) >= _OPEN_MAX:
        _RECENT.clear()
    _RECENT[_cache_key(entity)] = (events, last_id)
    return events


def _prior(entity: Entity, at: datetime, newest: list[EngineEvent]) -> list[EngineEvent]:
    """Candidates for the recent events before ``at``: at most RECENT_MAX_PRIOR + 1 of the
    entity's newest events in [at - RECENT_WINDOW, at], oldest first."""
    since = at - RECENT_WINDOW
    if newest and at < newest[-1].at:
        # Out of time order: the kept events may not reach back far enough before `at`.
        return selectors.prior_events(entity, at, since, RECENT_MAX_PRIOR + 1)
    return [e for e in newest if since <= e.at <= at][-(RECENT_MAX_PRIOR + 1) :]


def _today(entity: Entity, day: date, at: datetime) -> DayRecord:
    """Today's observations before now: its committed events up to ``at`` (all of them were
    committed before the current event, which is not stored yet), extracted and validated."""
    held = _open_day(entity, day)
    events = sorted((e for e in held.events if e.at <= at), key=lambda e: (e.at, e.id))
    if not events:
        return DayRecord(day)
    return _close(entity, day, events, cache=held.cache).record


def _frames(
    entity: Entity, day: date, events: Sequence[EngineEvent]
) -> Sequence[Mapping[str, Any]]:
    """The day's compiled frames that rest only on ``events``: for an open day, a frame that
    also holds later rows is left out (its bounds and app would come from the future)."""
    if entity.scope != "desktop":
        return ()
    from aframes_web.activity.models import DayDocument
    from compiler.document import expand_runs

    current = (
        DayDocument.objects.filter(entity=entity, day=day, current=True)
        .values_list("pk", flat=True)
        .first()
    )
    if current is None:
        return ()
    held = _FRAMES.get((_cache_key(entity), day))
    if held is None or held[0] != current:
        body = DayDocument.objects.filter(pk=current).values_list("body", flat=True).first()
        frames = body.get("frames", []) if isinstance(body, dict) else []
        cited = [expand_runs(str((f.get("evidence") or {}).get("rows") or "")) for f in frames]
        frames, rows = _frames_by_event(entity, frames, cited)
        if len(_FRAMES) >= _OPEN_MAX:
            _FRAMES.clear()
        held = _FRAMES[(_cache_key(entity), day)] = (current, list(zip(frames, rows, strict=True)))
    known = {e.id for e in events}
    return [frame for frame, rows in held[1] if rows <= known]


def _frames_by_event(
    entity: Entity, frames: list[dict[str, Any]], cited: list[list[int]]
) -> tuple[list[dict[str, Any]], list[frozenset[int]]]:
    """The frames with their evidence rows as the events memory reads (``EngineEvent.id`` is
    the stored event's id), and each frame's set of them.

    A document cites rows by ``Event.row_id``: an ActivityWatch row by its reader's id, which
    names the event through its source key. Memory's facts cite stored events, so those rows
    are translated once per document; a frame citing no such row is handed over unchanged.
    """
    from aframes_web.activity.selectors import chunked_rows
    from compiler.document import runs

    keyed = sorted({row for rows in cited for row in rows if row_key(row) is not None})
    if not keyed:
        return frames, [frozenset(rows) for rows in cited]
    events = Event.objects.filter(entity=entity)
    pk_of = {
        row_id(pk, key): pk
        for part in chunked_rows(events, keyed)
        for pk, key in part.values_list("pk", "source_key")
    }
    translated: list[dict[str, Any]] = []
    sets: list[frozenset[int]] = []
    for frame, rows in zip(frames, cited, strict=True):
        # A row whose event is not stored keeps its id: no event has it, so the frame is
        # held back as one whose rows are not all known, as it would be without translation.
        ids = [pk_of.get(row, row) for row in rows]
        if ids != rows:
            frame = {**frame, "evidence": {**frame["evidence"], "rows": runs(sorted(ids))}}
        translated.append(frame)
        sets.append(frozenset(ids))
    return translated, sets


def _close(
    entity: Entity,
    day: date,
    events: Sequence[EngineEvent],
    *,
    final: bool = False,
    cache: DayCache | None = None,
) -> ClosedDay:
    zone = ZoneInfo(entity.timezone)
    extractor = _extractor(entity) if final else None
    frames = _frames(entity, day, events)
    return close_day(
        entity.scope, events, day, zone, frames=frames, extractor=extractor, cache=cache
    )


def _extractor(entity: Entity) -> Any:
    """The LLM extractor on top of the deterministic one when asked for and a model is set;
    only at day close (never for the open day a decision reads, which would call the model at
    every event)."""
    from aframes_web import llm

    if not (settings.AFRAMES_MEMORY_LLM_EXTRACTOR and llm.configured()):
        return None
    from memory.engine.extract import extract_day
    from memory.engine.llm_extract import llm_extractor

    return llm_extractor(_llm_complete(entity), extract_day)


def _retrieved_json(items: Sequence[Retrieved]) -> list[dict[str, Any]]:
    from memory.engine.refs import regularity_id

    return [
        {
            "id": regularity_id(r.proposal),
            "occurrence": r.occurrence,
            "state": r.state,
            "confidence": r.confidence,
            "deadline": r.deadline.isoformat(),
            "distance_s": r.distance.total_seconds(),
            "facts": list(r.fact_ids),
        }
        for r in items
    ]


def _facts_seen(
    today: DayRecord, evidence: Sequence[str], retrieved: Sequence[Retrieved]
) -> list[dict[str, Any]]:
    cited = {*evidence, *(f for r in retrieved for f in r.fact_ids)}
    return [
        {"ref": o.fact_id, "path": list(o.path), "value": o.value, "at": o.at.isoformat()}
        for o in today.observations
        if o.fact_id in cited
    ]


def memory_decide(
    *,
    entity: Entity,
    item: Mapping[str, Any],
    policy: str = "rules",
    trace: Callable[[str], None] | None = None,
) -> DecideResult:
    """Decide on one event from memory as it stood before it, then commit the event with its
    decision (module docstring). An event whose source key is stored already is not decided
    again: its stored decision comes back with ``created=False``.
    """
    chosen = policy_named(policy, entity)
    step = trace or (lambda _name: None)
    batch = validate_events(entity=entity, items=[item])
    if batch.errors:
        raise DecideRejected([e.as_dict() for e in batch.errors])
    record: EventRecord = batch.records[0]
    try:
        result = _decide(entity, record, chosen, step)
    except IntegrityError:
        # Plain ingestion stored the same source key between our check and our insert (it
        # takes no memory lock); asked again, the event is found stored.
        result = _decide(entity, record, chosen, step)
    if result.created:
        # 7. Due maintenance, before answering: the next decision reads the days this event
        # completed, whichever worker serves it.
        step("maintain")
        _maintain(entity.pk, result.decision.day)
    return result


def _rejected(field: str, message: str) -> DecideRejected:
    return DecideRejected([{"index": 0, "field": field, "message": message}])


def _moved_past(
    entity: Entity, day: date, zone: ZoneInfo, closed_through: date | None, newest: list[Any]
) -> str | None:
    """Why memory has moved past ``day`` (it is closed, or a later day up to local today has
    events), or None. ``newest`` are the entity's newest events (oldest first)."""
    if closed_through is not None and closed_through >= day:
        return f"{day.isoformat()} is closed in memory"
    _, end = selectors.day_bounds(zone, day)
    _, today_end = selectors.day_bounds(zone, timezone.now().astimezone(zone).date())
    if end >= today_end or not newest or newest[-1].at < end:
        return None  # nothing stored after the day (newest holds the latest events)
    if any(end <= e.at < today_end for e in newest) or (
        newest[0].at >= end  # the kept events may all be later still: ask
        and Event.objects.filter(
            entity=entity, occurred_at__gte=end, occurred_at__lt=today_end
        ).exists()
    ):
        return f"the entity already has events after {day.isoformat()}"
    return None


@dataclass(frozen=True)
class _Memory:
    """Memory as a decision reads it (step 1), before anything is staged."""

    today: DayRecord
    retrieved: tuple[Retrieved, ...]
    trajectories: tuple[DayRecord, ...]


def _read_memory(
    entity: Entity, chosen: Any, live: Sequence[Tracked], now: datetime, at: datetime
) -> _Memory:
    from memory.engine.decide import REGULARITIES, TODAY, TRAJECTORIES, reads

    day = now.date()
    needs = reads(chosen)
    reachable = [t for t in live if in_reach(t.proposal, now)] if REGULARITIES in needs else []
    # Today's observations so far cost an extraction: made when a retrievable regularity
    # needs its occurrence, or the policy reads them (the llm policy's prompt shows them).
    wants_today = bool(reachable) or TODAY in needs
    today = _today(entity, day, at) if wants_today else DayRecord(day)
    retrieved = tuple(retrieve([(t.proposal, t.state) for t in reachable], now, today))
    # Closed days: only a policy that reads them pays for loading them.
    trajectories: tuple[DayRecord, ...] = ()
    if TRAJECTORIES in needs:
        closed = sorted(d for d in selectors.closed_days(entity) if d < day)
        trajectories = tuple(selectors.day_records(entity, closed[-TRAJECTORY_DAYS:]))
    return _Memory(today, retrieved, trajectories)


def _decide_and_store(
    entity: Entity,
    chosen: Any,
    current: EngineEvent,
    recent: tuple[EngineEvent, ...],
    now: datetime,
    memory: _Memory,
    began: float,
    step: Callable[[str], None],
    **target: Any,
) -> Decision:
    """Steps 3–5: decide, control, store the decision (on ``event=`` or ``point=``)."""
    from memory.engine.catalogue import control_context
    from memory.engine.control import signature
    from memory.engine.decide import DecisionContext

    day = now.date()
    step("decide")
    ctx = DecisionContext(
        scope=entity.scope,
        current=current,
        recent=recent,
        now=now,
        trajectories=memory.trajectories,
        today=memory.today,
        regularities=memory.retrieved,
    )
    proposed = chosen.decide(ctx)

    step("control")
    context, history = control_context(entity.scope, current, recent[:-1], proposed)
    sig = signature(entity.scope, context, history)
    controlled: Controlled
    # Control acts only on a proposed intervention: an abstention needs no state read.
    state = (
        _allowed(entity, identity(proposed)) if proposed.action == "intervene" else ControlState()
    )
    controlled, _ = control(proposed, sig, day, state)

    step("store")
    return Decision.objects.create(
        entity=entity,
        occurred_at=current.at,
        day=day,
        policy=chosen.name,
        action=controlled.action,
        proposed_action=proposed.action,
        intent=proposed.intent,
        message=proposed.message,
        evidence=list(proposed.evidence_ids),
        regularity_ids=sorted(set(proposed.regularity_ids)),
        retrieved=_retrieved_json(memory.retrieved),
        facts_seen=_facts_seen(memory.today, proposed.evidence_ids, memory.retrieved),
        episode=proposed.episode,
        identity_key=_identity_key(controlled.identity),
        identity=identity_to_json(controlled.identity),
        signature=signature_to_json(sig),
        control_reason=controlled.reason,
        suppressed=controlled.suppressed,
        suppressed_by=(
            identity_to_json(controlled.suppressed_by) if controlled.suppressed_by else None
        ),
        latency_ms=round((time.perf_counter() - began) * 1000, 3),
        **target,
    )


def _decide(
    entity: Entity, record: EventRecord, chosen: Any, step: Callable[[str], None]
) -> DecideResult:
    zone = ZoneInfo(entity.timezone)
    began = time.perf_counter()
    with transaction.atomic(durable=True):
        _lock(entity.pk)
        stored = Event.objects.filter(entity=entity, source_key=record.source_key).first()
        if stored is not None:
            existing = Decision.objects.filter(event=stored).first()
            if existing is None:
                raise _rejected(
                    "source_key",
                    f"event {record.source_key!r} was stored without a decision (ingested, "
                    "not decided); it cannot be decided afterwards, since memory has moved "
                    "past it.",
                )
            return DecideResult(existing, created=False)

        at = record.occurred_at
        now = at.astimezone(zone)
        day = now.date()
        newest = _newest(entity)
        closed_through, live = selectors.live_regularities(entity)
        past = _moved_past(entity, day, zone, closed_through, newest)
        if past is not None:
            raise _rejected(
                "occurred_at",
                f"{past}, so a decision on this event could not be made on memory as it stood "
                "before it; ingest it without decide=true instead (memory takes it in).",
            )

        # 1. Read memory as it stood before the event.
        step("read")
        prior = _prior(entity, at, newest)
        memory = _read_memory(entity, chosen, live, now, at)

        # 2. Stage the event: inserted, invisible to everyone else until commit.
        step("stage")
        row = Event.objects.create(
            entity=entity,
            occurred_at=at,
            kind=record.kind,
            source_key=record.source_key,
            monitor=record.monitor,
            payload=record.payload,
            received_at=timezone.now(),
        )
        current = selectors.engine_event(row)
        recent = recent_events(current, prior)

        # 3.-5. Decide, control, store the decision.
        decision = _decide_and_store(
            entity, chosen, current, recent, now, memory, began, step, event=row
        )
        # 6. Commit: the event and its decision become visible together.
        step("commit")
    return DecideResult(decision, created=True)


def memory_decide_point(
    *,
    entity: Entity,
    point: Any,
    policy: str = "rules",
    trace: Callable[[str], None] | None = None,
) -> DecideResult:
    """Decide at a stored ProactiveStream decision point from memory as it stands at its time,
    exactly as the in-memory replay does (``MemoryStream.decide_point``): its recent events
    are the entity's earlier points of the last 72 hours, today's observations are the events
    up to the point, nothing is committed but the decision. A point decided before returns its
    decision with ``created=False``. A code point is its own event: it is decided on when the
    event is ingested (:func:`memory_decide`), never afterwards.
    """
    from memory.engine.records import POINT_KIND

    chosen = policy_named(policy, entity)
    step = trace or (lambda _name: None)
    if point.entity_id != entity.pk:
        raise _rejected("point", f"decision point {point.key} is not one of {entity.key}'s")
    if point.event_id is not None:
        raise _rejected(
            "point",
            f"{point.key} is the native event {point.event_id}: decide on it as it is ingested "
            "(decide=true), memory has taken it in since.",
        )
    zone = ZoneInfo(entity.timezone)
    began = time.perf_counter()
    with transaction.atomic(durable=True):
        _lock(entity.pk)
        existing = Decision.objects.filter(point=point).first()
        if existing is not None:
            return DecideResult(existing, created=False)
        now = point.at.astimezone(zone)
        day = now.date()
        closed_through, live = selectors.live_regularities(entity)
        if closed_through is not None and closed_through >= day:
            raise _rejected(
                "point",
                f"{day.isoformat()} is closed in memory, so a decision at {point.key} could not "
                "be made on memory as it stood then.",
            )
        step("read")
        current = EngineEvent(point.pk, point.at, POINT_KIND, point.public)
        recent = recent_events(current, selectors.prior_points(entity, point.at, point.pk))
        memory = _read_memory(entity, chosen, live, now, point.at)
        decision = _decide_and_store(
            entity, chosen, current, recent, now, memory, began, step, point=point
        )
        step("commit")
    return DecideResult(decision, created=True)


def _maintain(entity_id: int, day: date) -> None:
    """What a committed event sets off: its day's summary and the days it completed, inline
    (decisions do not depend on worker timing), then a desktop day's compile (its memory day
    closes after the compile, from the compile task)."""
    from aframes_web.streams.dispatch import dispatch_compiles
    from aframes_web.streams.services import entity_days_refresh

    entity_days_refresh(entity_id=entity_id, days=[day.isoformat()])
    memory_close_due(entity_id=entity_id)
    dispatch_compiles([(entity_id, day)])


def decide_batch(*, entity: Entity, items: Sequence[Any], policy: str = "rules") -> list[Any]:
    """Decide on each event in order (ingestion with ``decide=true``); all must be valid.

    The whole batch is validated first, as plain ingestion does; each event is then decided
    and committed in its own transaction, so event n+1 is decided on memory that holds n. An
    event that cannot be decided stops the batch: the :class:`DecideRejected` raised carries
    the decisions already made in ``done`` and the item's index.
    """
    policy_named(policy)
    batch = validate_events(entity=entity, items=items)
    if batch.errors:
        raise BatchRejected(batch.errors)
    done: list[DecideResult] = []
    for index, item in enumerate(items):
        try:
            done.append(memory_decide(entity=entity, item=item, policy=policy))
        except DecideRejected as rejected:
            rejected.errors = [{**e, "index": index} for e in rejected.errors]
            rejected.done = done
            raise
    return done


# -- day close ------------------------------------------------------------------------------


def _due_cutoff(entity: Entity, *, by_clock: bool) -> date | None:
    """Days before this local day are complete (None: no day is).

    By stream time, a day is complete once the entity has events of a later local day, up to
    its local today: a stream replayed from history closes its days as it goes, never ahead of
    itself, and a stray event dated in the future completes nothing. By the clock (the beat's
    sweep), an entity that received nothing for ``AFRAMES_MEMORY_CLOSE_GRACE_MIN`` minutes also
    has every day before its local today complete: a quiet weekend still closes Friday. An
    entity being fed (live capture or a replay) is left to stream time, so the clock never
    closes a day under a running replay.
    """
    from aframes_web.streams.models import EntityDay

    zone = ZoneInfo(entity.timezone)
    today = timezone.now().astimezone(zone).date()
    summary = EntityDay.objects.filter(entity=entity, day__lte=today).aggregate(
        day=Max("day"), refreshed=Max("refreshed_at")
    )
    cutoff: date | None = summary["day"]
    if by_clock and summary["refreshed"] is not None:
        grace = timedelta(minutes=settings.AFRAMES_MEMORY_CLOSE_GRACE_MIN)
        if summary["refreshed"] <= timezone.now() - grace:
            cutoff = today
    return cutoff


def _compile_pending(entity: Entity, day: date) -> bool:
    if entity.scope != "desktop":
        return False
    from django.db.models import F

    from aframes_web.activity.models import CompileRequest

    return CompileRequest.objects.filter(
        entity=entity, day=day, requested__gt=F("compiled")
    ).exists()


def days_due(entity: Entity, *, by_clock: bool = False) -> list[date]:
    """The entity's local days with events, before the cutoff, not closed yet; oldest first."""
    from aframes_web.streams.models import EntityDay

    cutoff = _due_cutoff(entity, by_clock=by_clock)
    if cutoff is None:
        return []
    closed = selectors.closed_days(entity)
    days = EntityDay.objects.filter(entity=entity, day__lt=cutoff).values_list("day", flat=True)
    return sorted(d for d in days if d not in closed)


def late_days(entity: Entity) -> dict[date, int]:
    """Days whose events changed after memory took them in, with how many events came late
    (:func:`late_in`). Either makes memory stale from that day on."""
    from aframes_web.streams.selectors import day_tallies

    closed = dict(Trajectory.objects.filter(entity=entity).values_list("day", "event_count"))
    if not closed:
        return {}
    # Counted from the events, not from the day summaries: a summary whose refresh was lost
    # would hide the late events it never counted.
    _, until = selectors.day_bounds(ZoneInfo(entity.timezone), max(closed))
    tallies = day_tallies(entity=entity, until=until)
    return late_in(closed, {day: tally.count for day, tally in tallies.items()})


def late_in(closed: Mapping[date, int], stored: Mapping[date, int]) -> dict[date, int]:
    """Of the days with events (``stored``: each day's count now), those memory took in short:
    a closed day (``closed``: the count it was closed with) holding fewer events than are
    stored for it now, and an unclosed day older than the newest closed one (imported after
    later days closed, so all its events are late); with how many events came late. Events
    are never deleted, so a closed day never holds more than is stored."""
    newest = max(closed, default=None)
    late: dict[date, int] = {}
    for day, count in stored.items():
        if newest is None or day > newest:
            continue
        if day not in closed:
            late[day] = count
        elif count > closed[day]:
            late[day] = count - closed[day]
    return late


def memory_close_due(*, entity_id: int, by_clock: bool = False) -> list[date]:
    """Close every due day in order (a desktop day waits for its compile); when events came
    late for days already closed, rebuild from the events first. Idempotent."""
    entity = Entity.objects.filter(pk=entity_id).first()
    if entity is None:
        return []
    if late_days(entity):
        return memory_rebuild(entity=entity, by_clock=by_clock)
    done = []
    for day in days_due(entity, by_clock=by_clock):
        if _compile_pending(entity, day):
            break  # days close in order: later days wait for this one's frames
        if memory_close_day(entity_id=entity_id, day=day) is not None:
            done.append(day)
    return done


def memory_close_day(*, entity_id: int, day: date) -> Trajectory | None:
    """Close one local day: its trajectory, then the regularities' replay and lifecycle.

    Returns the new trajectory, or None when the entity is gone or the day was closed already.
    """
    with transaction.atomic(durable=True):
        _lock(entity_id)
        entity = Entity.objects.filter(pk=entity_id).first()
        if entity is None or Trajectory.objects.filter(entity=entity, day=day).exists():
            return None
        return _close_day_locked(entity, day)


def _close_day_locked(entity: Entity, day: date, late: int = 0) -> Trajectory:
    events = selectors.day_events(entity, day)
    closed = _close(entity, day, events, final=True)
    trajectory = _store_trajectory(entity, closed, len(events), late)
    history = selectors.day_records(entity, (d for d in selectors.closed_days(entity) if d < day))
    step = advance_regularities(selectors.tracked(entity), history, closed.record)
    _store_regularities(entity, day, step.tracked, step.new_ids, step.assessments)
    return trajectory


def _store_trajectory(
    entity: Entity, closed: ClosedDay, event_count: int, late: int = 0
) -> Trajectory:
    known = set(
        Event.objects.filter(
            entity=entity,
            pk__in={i for c in closed.segments for i in c.segment.citations},
        ).values_list("pk", flat=True)
    )
    trajectory = Trajectory.objects.create(
        entity=entity,
        day=closed.day,
        event_count=event_count,
        segment_count=len(closed.segments),
        rejected_count=len(closed.rejected),
        fact_count=sum(len(c.segment.facts) for c in closed.segments if c.verdict.accepted),
        late_events=late,
        extractor="deterministic+llm" if _extractor(entity) is not None else "deterministic",
    )
    segments = Segment.objects.bulk_create(
        [
            Segment(
                trajectory=trajectory,
                index=c.index,
                kind=c.segment.kind,
                source=c.segment.source,
                start=c.segment.start,
                end=c.segment.end,
                accepted=c.verdict.accepted,
                reason=c.verdict.reason or "",
                cited_ids=sorted(set(c.segment.citations)),
            )
            for c in closed.segments
        ]
    )
    if connection.vendor != "postgresql":  # bulk_create sets pks on PostgreSQL and SQLite 3.35+
        segments = list(Segment.objects.filter(trajectory=trajectory).order_by("index"))
    citations: list[Citation] = []
    facts: list[Fact] = []
    from memory.engine.refs import fact_ref

    for row, c in zip(segments, closed.segments, strict=True):
        citations += [
            Citation(segment=row, event_id=i)
            for i in sorted(set(c.segment.citations))
            if i in known
        ]
        # A rejected segment may repeat a fact id (that is one reason to reject it); its
        # facts are kept once per id, so no two rows share a reference.
        unique = {f.id: f for f in reversed(c.segment.facts)}
        for f in (f for f in c.segment.facts if unique.get(f.id) is f):
            g = c.verdict.grounding.get(f.id)
            facts.append(
                Fact(
                    segment=row,
                    entity=entity,
                    ref=fact_ref(closed.day, c.key, f.id),
                    fact_id=f.id,
                    type=f.type,
                    path=list(f.path),
                    value=f.value,
                    at=f.at,
                    grounded_event_id=g.event_id if g else None,
                    grounded_path=list(g.path) if g else None,
                )
            )
    Citation.objects.bulk_create(citations, batch_size=2000)
    Fact.objects.bulk_create(facts, batch_size=2000)
    return trajectory


def _store_regularities(
    entity: Entity,
    day: date,
    tracked: Mapping[str, Tracked],
    new_ids: Sequence[str],
    assessments: Mapping[str, Sequence[Assessment]],
) -> None:
    """Write what a day close did to the regularities in a fixed number of statements."""
    touched = sorted(assessments)
    rows = {r.rid: r for r in Regularity.objects.filter(entity=entity, rid__in=touched)}
    seqs = dict(
        Transition.objects.filter(regularity__in=list(rows.values()))
        .values("regularity__rid")
        .annotate(n=Count("id"))
        .values_list("regularity__rid", "n")
    )
    created = Regularity.objects.bulk_create(
        [
            Regularity(
                entity=entity,
                rid=rid,
                proposal=proposal_to_json(tracked[rid].proposal),
                summary=words.regularity(tracked[rid].proposal)[:500],
                proposed_on=day,
                **state_to_fields(tracked[rid].state),
            )
            for rid in touched
            if rid not in rows
        ]
    )
    if created and created[0].pk is None:  # a backend that does not return ids
        created = list(Regularity.objects.filter(entity=entity, rid__in=[r.rid for r in created]))
    changed = []
    for rid, row in rows.items():
        for name, value in state_to_fields(tracked[rid].state).items():
            setattr(row, name, value)
        row.updated_at = timezone.now()
        changed.append(row)
    if changed:
        Regularity.objects.bulk_update(changed, [*STATE_FIELDS, "updated_at"], batch_size=500)
    by_rid = {**rows, **{r.rid: r for r in created}}
    AssessmentRow.objects.bulk_create(
        [
            AssessmentRow(
                regularity=by_rid[rid],
                day=a.day,
                outcome=a.outcome,
                fact_refs=list(a.fact_ids),
                behavior_in_window=a.behavior_in_window,
            )
            for rid in touched
            for a in assessments[rid]
        ],
        batch_size=2000,
    )
    # A state loaded from a row has no transitions: whatever it holds now is new.
    Transition.objects.bulk_create(
        [
            Transition(
                regularity=by_rid[rid],
                seq=(0 if rid in new_ids else seqs.get(rid, 0)) + i,
                day=tr.day,
                from_state=tr.from_state,
                to_state=tr.to_state,
                reason=tr.reason,
                fact_refs=list(tr.fact_ids),
            )
            for rid in touched
            for i, tr in enumerate(tracked[rid].state.transitions)
        ],
        batch_size=2000,
    )


def memory_rebuild(*, entity: Entity, by_clock: bool = True) -> list[date]:
    """Drop the entity's derived memory (not its decisions) and close every due day again, in
    one transaction under the entity's lock: a decision never sees memory half rebuilt.

    Each day keeps its count of late events (those that came after it first closed, which made
    a rebuild necessary). Decisions stay: they record what was decided at the time, and a
    rebuild of memory cannot re-decide the past without re-running the stream. A desktop day
    whose compile is pending stops the rebuild there; later days close once it is compiled.
    """
    closed_days: list[date] = []
    with transaction.atomic(durable=True):
        _lock(entity.pk)
        late = dict(Trajectory.objects.filter(entity=entity).values_list("day", "late_events"))
        for day, count in late_days(entity).items():
            late[day] = late.get(day, 0) + count
        Trajectory.objects.filter(entity=entity).delete()
        Regularity.objects.filter(entity=entity).delete()
        for day in days_due(entity, by_clock=by_clock):
            if _compile_pending(entity, day):
                break
            _close_day_locked(entity, day, late.get(day, 0))
            closed_days.append(day)
    return closed_days


def entities_due() -> list[int]:
    """Entities with a day the clock says is complete and that is not closed (the beat)."""
    ids = []
    for entity in Entity.objects.order_by("pk"):
        if days_due(entity, by_clock=True):
            ids.append(entity.pk)
    return ids
