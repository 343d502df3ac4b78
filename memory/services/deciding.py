"""Writes of ProactMem that decide: an event's intervene-or-abstain decision on memory as it
stood before it (ProactMem; ARCHITECTURE.md, "How data flows" 4).

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
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.utils import timezone

from aframes_web.activity.services import compiles_wanted
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.names import said_of
from aframes_web.streams.records import EventRecord
from aframes_web.streams.services import (
    BatchRejected,
    entity_days_refresh,
    events_counted,
    validate_events,
)
from memory import llm, selectors
from memory.engine.catalogue import control_context
from memory.engine.control import (
    Allowed,
    Controlled,
    ControlState,
    Identity,
    Proposed,
    Signature,
    control_first,
    identity,
    signature,
)
from memory.engine.day import Tracked
from memory.engine.decide import (
    EXPECTATIONS,
    POLICIES,
    REGULARITIES,
    TODAY,
    DecisionContext,
    RulesPolicy,
    llm_policy,
    reads,
    reads_trajectories,
    threshold_for,
)
from memory.engine.expect import Expectations
from memory.engine.recent import recent_events
from memory.engine.records import POINT_KIND, DayRecord, EngineEvent
from memory.engine.refs import regularity_id
from memory.engine.retrieve import Retrieved, in_reach, retrieve
from memory.engine.serial import (
    identity_to_json,
    signature_from_json,
    signature_to_json,
)
from memory.engine.stream import TRAJECTORY_DAYS
from memory.models import (
    Decision,
)
from memory.services.caches import expectations_at, newest_events, open_day, prior_events
from memory.services.closing import (
    close_events,
    entity_lock,
    llm_complete,
    memory_close_due,
)


class DecideRejected(ValueError):
    """The event to decide on is invalid; nothing was stored. ``errors`` name each problem;
    in a batch, ``done`` holds the decisions made before it."""

    def __init__(self, errors: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(f"{len(errors)} problem(s) with the event; nothing was stored")
        self.errors = list(errors)
        self.done: list[Any] = []


def policy_named(name: str, entity: Entity | None = None) -> Any:
    """The decision policy called ``name``; ValueError naming the choices otherwise.

    ``llm`` is offered only when a model is configured (``memory/llm.py``); it asks
    through the recorded, cached client and abstains on any failure. ``rules`` acts from the
    threshold the entity's team set (``Team.false_alarm_cost``; unset: the engine's default).
    """

    if name == "llm":
        if not llm.configured():
            raise ValueError("the llm policy needs a model: set LLM_BASE_URL and LLM_MODEL")
        return llm_policy(llm_complete(entity))
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; use one of {', '.join(sorted(POLICIES))}, llm")
    cost = entity.team.false_alarm_cost if entity is not None else None
    if name == "rules" and cost is not None:
        return RulesPolicy(threshold=threshold_for(cost))
    return POLICIES[name]


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


def _today(entity: Entity, day: date, at: datetime) -> DayRecord:
    """Today's observations before now: its committed events up to ``at`` (all of them were
    committed before the current event, which is not stored yet), extracted and validated."""
    held = open_day(entity, day)
    events = sorted((e for e in held.events if e.at <= at), key=lambda e: (e.at, e.id))
    if not events:
        return DayRecord(day)
    return close_events(entity, day, events, cache=held.cache).record


def _retrieved_json(items: Sequence[Retrieved]) -> list[dict[str, Any]]:
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
    expectations: Expectations | None


def _read_memory(
    entity: Entity,
    chosen: Any,
    live: Sequence[Tracked],
    now: datetime,
    at: datetime,
    points: Sequence[EngineEvent] = (),
) -> _Memory:
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
    if reads_trajectories(chosen, retrieved):
        trajectories = tuple(selectors.day_records(entity, before=day, last=TRAJECTORY_DAYS))
    expectations = expectations_at(entity, at, points) if EXPECTATIONS in needs else None
    return _Memory(today, retrieved, trajectories, expectations)


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
        expectations=memory.expectations,
        names=said_of(entity),
    )
    proposed = chosen.decide(ctx)

    step("control")

    def signature_of(candidate: Proposed) -> Signature:
        context, history = control_context(entity.scope, current, recent[:-1], candidate)
        return signature(entity.scope, context, history)

    def state_of(candidate: Proposed) -> ControlState:
        # Control acts only on a proposed intervention: an abstention needs no state read.
        if candidate.action != "intervene":
            return ControlState()
        return _allowed(entity, identity(candidate))

    controlled: Controlled
    controlled, _, sig = control_first(proposed, day, signature_of, state_of)
    proposed = controlled.proposed  # the candidate decided on (one of its alternatives, maybe)

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
        instead_of=_instead_of(controlled.instead_of),
        latency_ms=round((time.perf_counter() - began) * 1000, 3),
        **target,
    )


def _instead_of(first: Controlled | None) -> dict[str, Any] | None:
    """What a decision was said in place of (``Decision.instead_of``): the first proposal
    control suppressed as a repeat, its identity (and the key its allowed decisions are found
    by), and the allowed identity it repeated."""
    if first is None:
        return None
    return {
        "intent": first.proposed.intent,
        "message": first.proposed.message,
        "identity": identity_to_json(first.identity),
        "identity_key": _identity_key(first.identity),
        "suppressed_by": (
            identity_to_json(first.suppressed_by) if first.suppressed_by is not None else None
        ),
    }


def _decide(
    entity: Entity, record: EventRecord, chosen: Any, step: Callable[[str], None]
) -> DecideResult:
    zone = ZoneInfo(entity.timezone)
    began = time.perf_counter()
    with transaction.atomic(durable=True):
        entity_lock(entity.pk)
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
        newest = newest_events(entity)
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
        prior = prior_events(entity, at, newest)
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
        # 6. Commit: the event and its decision become visible together, with the entity's
        # tally of events (counted last, so its row is held only for the commit).
        events_counted(entity.pk, 1)
        step("commit")
    return DecideResult(decision, created=True)


def memory_decide_point(
    *,
    entity: Entity,
    point: Any,
    prior: Sequence[EngineEvent],
    earlier: Sequence[EngineEvent] = (),
    policy: str = "rules",
    trace: Callable[[str], None] | None = None,
) -> DecideResult:
    """Decide at a stored ProactiveStream decision point from memory as it stands at its time,
    exactly as the in-memory replay does (``MemoryStream.decide_point``): its recent events
    are the entity's earlier points of the last 72 hours, today's observations are the events
    up to the point, nothing is committed but the decision. A point decided before returns its
    decision with ``created=False``. A code point is its own event: it is decided on when the
    event is ingested (:func:`memory_decide`), never afterwards. ``prior``: the entity's earlier
    points as engine events, oldest first (the caller, which owns the points, reads them);
    ``earlier``: every earlier point of the entity, oldest first, from which what is usual at each
    time of day is learned (a policy that reads expectations needs them all, as the replay has).
    """

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
        entity_lock(entity.pk)
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
        recent = recent_events(current, prior)
        memory = _read_memory(entity, chosen, live, now, point.at, earlier)
        decision = _decide_and_store(
            entity, chosen, current, recent, now, memory, began, step, point=point
        )
        step("commit")
    return DecideResult(decision, created=True)


def _maintain(entity_id: int, day: date) -> None:
    """What a committed event sets off: its day's summary and the days it completed, inline
    (decisions do not depend on worker timing), then a desktop day's compile (its memory day
    closes after the compile, from the compile task)."""
    entity_days_refresh(entity_id=entity_id, days=[day.isoformat()])
    memory_close_due(entity_id=entity_id)
    compiles_wanted([(entity_id, day)])


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
