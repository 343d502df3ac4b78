"""Writes that maintain ProactMem: close complete days into trajectories, replay and advance
regularities, rebuild from the events (ProactMem; ARCHITECTURE.md, "How data flows" 3).

One writer per entity at a time (a PostgreSQL advisory lock; SQLite's single writer
serialises). Memory is a function of the stored events: an event that arrives for a day already
closed (late capture, an older day imported after newer ones) makes the next maintenance rebuild
the entity's memory from its events, so a rebuild always equals what incremental processing
keeps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max
from django.utils import timezone

from aframes_web.activity.models import CompileRequest
from aframes_web.streams.models import Entity, EntityDay, Event
from aframes_web.streams.names import said_of
from aframes_web.streams.selectors import day_tallies, events_through
from memory import llm, selectors
from memory.engine import words
from memory.engine.day import (
    REPLAY_DAYS,
    ClosedDay,
    DayCache,
    Tracked,
    advance_regularities,
    close_day,
)
from memory.engine.extract import extract_day
from memory.engine.llm_extract import llm_extractor
from memory.engine.records import EngineEvent
from memory.engine.refs import fact_ref
from memory.engine.regularities import Assessment
from memory.engine.serial import (
    STATE_FIELDS,
    proposal_from_json,
    proposal_to_json,
    state_to_fields,
)
from memory.models import (
    Assessment as AssessmentRow,
)
from memory.models import (
    Citation,
    Fact,
    Regularity,
    RegularityTally,
    Segment,
    Trajectory,
    Transition,
)
from memory.services.caches import day_frames

# Postgres advisory lock namespace for "one memory writer per entity" ('PM').
MEMORY_LOCK_CLASS = 0x504D


def entity_lock(entity_id: int) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [MEMORY_LOCK_CLASS, entity_id])


def llm_complete(entity: Entity | None) -> Callable[[str], str]:
    """The recorded, cached client, its records kept with (and deleted with) the entity."""

    def complete(prompt: str) -> str:
        return llm.complete(prompt, entity=entity)

    return complete


def close_events(
    entity: Entity,
    day: date,
    events: Sequence[EngineEvent],
    *,
    final: bool = False,
    cache: DayCache | None = None,
) -> ClosedDay:
    zone = ZoneInfo(entity.timezone)
    extractor = _extractor(entity) if final else None
    frames = day_frames(entity, day, events)
    return close_day(
        entity.scope, events, day, zone, frames=frames, extractor=extractor, cache=cache
    )


def _extractor(entity: Entity) -> Any:
    """The LLM extractor on top of the deterministic one when asked for and a model is set;
    only at day close (never for the open day a decision reads, which would call the model at
    every event)."""

    if not (settings.AFRAMES_MEMORY_LLM_EXTRACTOR and llm.configured()):
        return None

    return llm_extractor(llm_complete(entity), extract_day)


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


def compile_pending(entity: Entity, day: date) -> bool:
    if entity.scope != "desktop":
        return False

    return CompileRequest.objects.filter(
        entity=entity, day=day, requested__gt=F("compiled")
    ).exists()


def days_due(entity: Entity, *, by_clock: bool = False) -> list[date]:
    """The entity's local days with events, before the cutoff, not closed yet; oldest first."""

    cutoff = _due_cutoff(entity, by_clock=by_clock)
    if cutoff is None:
        return []
    closed = selectors.closed_days(entity)
    days = EntityDay.objects.filter(entity=entity, day__lt=cutoff).values_list("day", flat=True)
    return sorted(d for d in days if d not in closed)


def late_days(entity: Entity) -> dict[date, int]:
    """Days whose events changed after memory took them in, with how many events came late
    (:func:`late_in`). Either makes memory stale from that day on."""

    closed = dict(Trajectory.objects.filter(entity=entity).values_list("day", "event_count"))
    if not closed:
        return {}
    # Counted from the events, not from the day summaries: a summary whose refresh was lost
    # would hide the late events it never counted.
    _, until = selectors.day_bounds(ZoneInfo(entity.timezone), max(closed))
    # Events are never deleted, so as many events up to the newest closed day as the closed
    # days took in means none came late: read from the entity's tally less the events after
    # it (``events_through``), where grouping or counting every event by its local day would
    # cost each close more as history grows.
    if events_through(entity.pk, until) == sum(closed.values()):
        return {}
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
        if compile_pending(entity, day):
            break  # days close in order: later days wait for this one's frames
        if memory_close_day(entity_id=entity_id, day=day) is not None:
            done.append(day)
    return done


def memory_close_day(*, entity_id: int, day: date) -> Trajectory | None:
    """Close one local day: its trajectory, then the regularities' replay and lifecycle.

    Returns the new trajectory, or None when the entity is gone or the day was closed already.
    """
    with transaction.atomic(durable=True):
        entity_lock(entity_id)
        entity = Entity.objects.filter(pk=entity_id).first()
        if entity is None or Trajectory.objects.filter(entity=entity, day=day).exists():
            return None
        return _close_day_locked(entity, day)


def _close_day_locked(entity: Entity, day: date, late: int = 0) -> Trajectory:
    events = selectors.day_events(entity, day)
    closed = close_events(entity, day, events, final=True)
    trajectory = _store_trajectory(entity, closed, len(events), late)
    # Only the replay window is read: what a close reads does not grow with history.
    history = selectors.day_records(
        entity,
        (d for d in selectors.closed_days(entity) if d < day and (day - d).days < REPLAY_DAYS),
    )
    # Retired regularities are named, not loaded: what a close reads stays bounded.
    step = advance_regularities(
        selectors.tracked(entity), history, closed.record, retired=selectors.retired_ids(entity)
    )
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


def _save_states(rows: Sequence[Regularity]) -> None:
    """Write the lifecycle columns of ``rows``: one plain UPDATE per row, sent together
    (``executemany``; psycopg pipelines them). Django's ``bulk_update`` builds one CASE per
    column over every row, whose cost grows with rows times columns: a day close updates
    every regularity it assessed, thousands on a long desktop history."""
    if not rows:
        return
    fields = [Regularity._meta.get_field(name) for name in (*STATE_FIELDS, "updated_at")]
    quote = connection.ops.quote_name
    sql = (
        f"UPDATE {quote(Regularity._meta.db_table)} SET "
        + ", ".join(f"{quote(f.column)} = %s" for f in fields)
        + f" WHERE {quote(Regularity._meta.pk.column)} = %s"
    )
    params = [
        [f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields] + [row.pk]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _tally_states(entity: Entity, moved: Mapping[str, int]) -> None:
    """Add ``moved`` (state -> regularities gained, negative for lost) to the entity's
    ``RegularityTally``. Read and written under the entity's memory lock, which every writer
    of regularities holds, so no other close moves the same counts in between."""
    changed = {state: n for state, n in moved.items() if n}
    if not changed:
        return
    held = dict(
        RegularityTally.objects.filter(entity=entity, state__in=list(changed)).values_list(
            "state", "count"
        )
    )
    RegularityTally.objects.bulk_create(
        [
            RegularityTally(entity=entity, state=state, count=held.get(state, 0) + n)
            for state, n in sorted(changed.items())
        ],
        update_conflicts=True,
        unique_fields=["entity", "state"],
        update_fields=["count"],
    )


def _store_regularities(
    entity: Entity,
    day: date,
    tracked: Mapping[str, Tracked],
    new_ids: Sequence[str],
    assessments: Mapping[str, Sequence[Assessment]],
) -> None:
    """Write what a day close did to the regularities in a fixed number of statements."""
    touched = sorted(assessments)
    spoken = said_of(entity)
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
                summary=words.regularity(tracked[rid].proposal, spoken)[:500],
                proposed_on=day,
                **state_to_fields(tracked[rid].state),
            )
            for rid in touched
            if rid not in rows
        ]
    )
    if created and created[0].pk is None:  # a backend that does not return ids
        created = list(Regularity.objects.filter(entity=entity, rid__in=[r.rid for r in created]))
    now = timezone.now()
    moved = Counter(r.state for r in created)
    for rid, row in rows.items():
        moved[row.state] -= 1
        for name, value in state_to_fields(tracked[rid].state).items():
            setattr(row, name, value)
        moved[row.state] += 1
        row.updated_at = now
    _save_states(list(rows.values()))
    _tally_states(entity, moved)
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


def summaries_refresh(entity: Entity) -> int:
    """Say the entity's regularities again with its sensor names as they are now (after an
    owner corrects one); returns how many sentences changed."""
    spoken = said_of(entity)
    changed = []
    for row in Regularity.objects.filter(entity=entity).only("pk", "proposal", "summary"):
        said = words.regularity(proposal_from_json(row.proposal), spoken)[:500]
        if said != row.summary:
            row.summary = said
            changed.append(row)
    Regularity.objects.bulk_update(changed, ["summary"], batch_size=500)
    return len(changed)


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
        entity_lock(entity.pk)
        late = dict(Trajectory.objects.filter(entity=entity).values_list("day", "late_events"))
        for day, count in late_days(entity).items():
            late[day] = late.get(day, 0) + count
        Trajectory.objects.filter(entity=entity).delete()
        Regularity.objects.filter(entity=entity).delete()
        RegularityTally.objects.filter(entity=entity).delete()
        for day in days_due(entity, by_clock=by_clock):
            if compile_pending(entity, day):
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
