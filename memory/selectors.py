"""Reads of stored memory that services, the API, MCP and the dashboard share; team-scoped.

The engine's inputs are built here from rows: stored events as ``EngineEvent`` (ground truth
stripped), closed days as ``DayRecord``, regularity rows as ``Tracked``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Count, Max, Prefetch, Q, QuerySet

from aframes_web.streams.models import Entity, Event
from aframes_web.streams.records import PRIVATE_FIELD, TEXT_FIELDS
from memory.engine.day import Tracked
from memory.engine.records import DayRecord, EngineEvent, Observation
from memory.engine.serial import STATE_FIELDS, proposal_from_json, state_from_fields
from memory.models import (
    STATE_RANK,
    Assessment,
    Decision,
    Fact,
    Regularity,
    RegularityTally,
    Segment,
    Trajectory,
)

_HIDDEN = (PRIVATE_FIELD,)
_HIDDEN_INPUT = (PRIVATE_FIELD, *TEXT_FIELDS)


def engine_event(row: Event) -> EngineEvent:
    """A stored event as the engine sees it: the ground truth a source carries never enters,
    nor does typed text or clipboard content (principle 8: memory has no use for it, and what
    memory holds reaches prompts, pages and the API)."""
    payload = row.payload
    hidden = _HIDDEN_INPUT if row.kind == "input" else _HIDDEN
    if isinstance(payload, dict) and any(k in payload for k in hidden):
        payload = {k: v for k, v in payload.items() if k not in hidden}
    return EngineEvent(row.pk, row.occurred_at, row.kind, payload, row.monitor)


def day_bounds(zone: ZoneInfo, day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, datetime.min.time(), tzinfo=zone)
    end = datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=zone)
    return start, end


def day_events(entity: Entity, day: date, *, through: datetime | None = None) -> list[EngineEvent]:
    """The entity's events of a local day (up to ``through``, inclusive), in (time, id) order."""
    start, end = day_bounds(ZoneInfo(entity.timezone), day)
    rows = Event.objects.filter(entity=entity, occurred_at__gte=start, occurred_at__lt=end)
    if through is not None:
        rows = rows.filter(occurred_at__lte=through)
    return [engine_event(r) for r in rows.order_by("occurred_at", "id")]


def prior_events(entity: Entity, at: datetime, since: datetime, limit: int) -> list[EngineEvent]:
    """Up to ``limit`` newest events in [since, at], oldest first (recent-event candidates)."""
    rows = Event.objects.filter(
        entity=entity, occurred_at__gte=since, occurred_at__lte=at
    ).order_by("-occurred_at", "-id")[:limit]
    return [engine_event(r) for r in reversed(list(rows))]


# Per process, closed days as records, by trajectory: a trajectory's segments and facts are
# written once, with it, and a rebuild makes new trajectories, so a day read once need not be
# read again, and a close that reads the replay window's days reads only the one closed since.
# Keyed by the row's id and close time (SQLite may give a deleted row's id to a new one) and
# the zone the times are shown in.
_RecordKey = tuple[int, datetime, str]
_RECORDS: dict[_RecordKey, DayRecord] = {}
_RECORDS_MAX = 8192  # 64 entities' replay windows (closing.REPLAY_DAYS), home or desktop


def day_records(
    entity: Entity,
    days: Iterable[date] | None = None,
    *,
    before: date | None = None,
    last: int | None = None,
) -> list[DayRecord]:
    """Closed days as replay reads them (the engine's ``day_record``, rebuilt from rows), oldest
    first; a day read before in this process is not read again (above). ``days`` names them;
    ``before`` and ``last`` take the last ``last`` closed before ``before`` in one indexed read
    of at most that many rows, however long the entity's history."""
    zone = ZoneInfo(entity.timezone)
    trajectories = Trajectory.objects.filter(entity=entity)
    if days is not None:
        trajectories = trajectories.filter(day__in=list(days))
    if before is not None:
        trajectories = trajectories.filter(day__lt=before).order_by("-day")
    rows = trajectories.values_list("pk", "closed_at", "day")
    if last is not None:
        rows = rows[:last]
    keys = {(pk, closed_at, zone.key): day for pk, closed_at, day in rows}
    missing = {key[0]: day for key, day in keys.items() if key not in _RECORDS}
    if len(_RECORDS) + len(missing) > _RECORDS_MAX:
        _RECORDS.clear()
        missing = {key[0]: day for key, day in keys.items()}
    read = _read_records(zone, missing)
    for key in keys:
        if key[0] in read:
            _RECORDS[key] = read[key[0]]
    return [_RECORDS[key] for key in sorted(keys, key=keys.__getitem__)]


def _read_records(zone: ZoneInfo, day_of: dict[int, date]) -> dict[int, DayRecord]:
    """The records of the trajectories ``day_of`` names (by id), from their accepted facts."""
    if not day_of:
        return {}
    by_trajectory: dict[int, list[Observation]] = {pk: [] for pk in day_of}
    facts = Fact.objects.filter(
        segment__trajectory__in=list(day_of), segment__accepted=True
    ).values_list(
        "ref", "path", "value", "at", "segment__kind", "segment__start", "segment__trajectory_id"
    )
    for ref, path, value, at, kind, start, trajectory_id in facts.iterator(chunk_size=2000):
        by_trajectory[trajectory_id].append(
            Observation(
                at=(at or start).astimezone(zone),
                path=(kind, *path),
                value=value,
                fact_id=ref,
            )
        )
    return {
        pk: DayRecord(day_of[pk], tuple(sorted(obs, key=lambda o: (o.at, o.fact_id))))
        for pk, obs in by_trajectory.items()
    }


def tracked(entity: Entity, states: Sequence[str] | None = None) -> dict[str, Tracked]:
    """The entity's regularities as the engine's ``Tracked`` (by regularity id); by default
    every one a day close assesses (all but the retired: what a close reads stays bounded)."""
    rows = Regularity.objects.filter(entity=entity)
    if states is not None:
        rows = rows.filter(state__in=list(states))
    else:
        rows = rows.exclude(state=Regularity.State.RETIRED)
    found: dict[str, Tracked] = {}
    for r in rows.values("rid", "proposal", *STATE_FIELDS):
        found[r["rid"]] = Tracked(r["rid"], proposal_from_json(r["proposal"]), state_from_fields(r))
    return found


def retired_ids(entity: Entity) -> frozenset[str]:
    """The ids of the entity's retired regularities (regularities.RETIRE_AFTER_DAYS)."""
    rows = Regularity.objects.filter(entity=entity, state=Regularity.State.RETIRED)
    return frozenset(rows.values_list("rid", flat=True))


# Per process: an entity's live regularities, parsed, for the memory version they were read at.
# They change only when a day closes or memory is rebuilt, which the version (the number of
# closed days and the last close time) tracks; decisions in between reuse them.
_LIVE: dict[int, tuple[tuple[Any, ...], list[Tracked]]] = {}
_LIVE_ENTITIES = 64


def live_regularities(entity: Entity) -> tuple[date | None, list[Tracked]]:
    """The newest closed day, and the active and weakening regularities in id order: what
    retrieval may show."""
    version = tuple(
        Trajectory.objects.filter(entity=entity)
        .aggregate(n=Count("id"), last=Max("closed_at"), newest=Max("id"), day=Max("day"))
        .values()
    )
    closed_through: date | None = version[3]
    cached = _LIVE.get(entity.pk)
    if cached is not None and cached[0] == version:
        return closed_through, cached[1]
    found = sorted(tracked(entity, ("active", "weakening")).values(), key=lambda t: t.id)
    if len(_LIVE) >= _LIVE_ENTITIES:
        _LIVE.clear()
    _LIVE[entity.pk] = (version, found)
    return closed_through, found


def closed_days(entity: Entity) -> set[date]:
    return set(Trajectory.objects.filter(entity=entity).values_list("day", flat=True))


# -- team-scoped reads for the API and the dashboard ----------------------------------------


def trajectories_for(entity: Entity) -> QuerySet[Trajectory]:
    return Trajectory.objects.filter(entity=entity).order_by("day")


def trajectory_detail(entity: Entity, day: date) -> Trajectory | None:
    """A closed day with its segments, facts and citations loaded."""
    return (
        Trajectory.objects.filter(entity=entity, day=day)
        .prefetch_related(
            Prefetch(
                "segments",
                queryset=Segment.objects.order_by("index").prefetch_related("facts", "citations"),
            )
        )
        .first()
    )


# Orderings of an entity's regularities, by name. ``rank``: the regularities whose trigger
# predicts first (state, then the margin: how much the trigger predicts; retrieve.py).
REGULARITY_ORDERS: dict[str, tuple[str, ...]] = {
    "rank": ("state_rank", "-margin", "-confidence", "rid"),
    "confidence": ("-confidence", "-margin", "rid"),
    "lift": ("-lift", "-margin", "rid"),
    "support": ("-n_f", "-margin", "rid"),
    "recent": ("-last_day", "state_rank", "-margin", "rid"),
}


def regularities_for(
    entity: Entity,
    state: str | None = None,
    *,
    query: str = "",
    order: str = "rank",
    live: bool = False,
) -> QuerySet[Regularity]:
    """An entity's regularities, of one ``state`` (one of ``STATE_RANK``) if given (``live``:
    every state but retired), containing ``query`` in their sentence or id
    (case-insensitive), in one of ``REGULARITY_ORDERS``.

    Retired regularities accumulate with history (a year of a desktop keeps thousands) and
    are kept for the record only. In rank order each of these lists is read from the index
    ``regularity_rank`` a page at a time, whatever the history.
    """
    rows = Regularity.objects.filter(entity=entity)
    if state:
        rows = rows.filter(state_rank=STATE_RANK.index(state))
    elif live:
        rows = rows.filter(state_rank__lt=STATE_RANK.index(Regularity.State.RETIRED))
    if query:
        rows = rows.filter(Q(summary__icontains=query) | Q(rid__icontains=query))
    return rows.order_by(*REGULARITY_ORDERS[order])


def regularity_detail(entity: Entity, rid: str) -> Regularity | None:
    return (
        Regularity.objects.filter(entity=entity, rid=rid)
        .prefetch_related(
            Prefetch("assessments", queryset=Assessment.objects.order_by("day")), "transitions"
        )
        .first()
    )


def decisions_for(
    entity: Entity,
    *,
    action: str | None = None,
    since: date | None = None,
    until: date | None = None,
) -> QuerySet[Decision]:
    """An entity's decisions, oldest first; optionally of one action and on days
    ``since``..``until`` (inclusive, the entity's local days)."""
    rows = Decision.objects.filter(entity=entity)
    if action:
        rows = rows.filter(action=action)
    if since:
        rows = rows.filter(day__gte=since)
    if until:
        rows = rows.filter(day__lte=until)
    return rows.order_by("occurred_at", "id")


def decision_detail(entity: Entity, pk: int) -> Decision | None:
    return Decision.objects.filter(entity=entity, pk=pk).select_related("event").first()


def facts_by_ref(entity: Entity, refs: Iterable[str]) -> dict[str, Fact]:
    wanted = [r for r in set(refs) if r.startswith("fact:")]
    rows = Fact.objects.filter(entity=entity, ref__in=wanted).select_related("segment__trajectory")
    return {f.ref: f for f in rows}


def memory_summary(entity: Entity) -> dict[str, Any]:
    """Counts for an entity's memory: closed days, facts, regularities by state, decisions."""
    by_state = dict(
        RegularityTally.objects.filter(entity=entity, count__gt=0).values_list("state", "count")
    )
    return {
        "closed_days": Trajectory.objects.filter(entity=entity).count(),
        "regularities": by_state,
        "decisions": Decision.objects.filter(entity=entity).count(),
        "interventions": Decision.objects.filter(entity=entity, action="intervene").count(),
    }


def regularities_by_rid(entity: Entity, rids: Iterable[str]) -> dict[str, Regularity]:
    """The entity's regularities among ``rids`` (``reg:HEX``), by id; unknown ids are absent."""
    wanted = [r for r in set(rids) if r.startswith("reg:")]
    return {r.rid: r for r in Regularity.objects.filter(entity=entity, rid__in=wanted)}


def allowed_decision_for(
    entity: Entity, decision: Decision, identity_key: str | None = None
) -> Decision | None:
    """The newest allowed intervention with ``decision``'s identity (or the one ``identity_key``
    names), at or before it.

    For a suppressed decision this is the intervention control found it repeating; with the
    key of its ``instead_of``, the one the first proposal repeated.
    """
    return (
        Decision.objects.filter(
            entity=entity,
            identity_key=identity_key or decision.identity_key,
            action=Decision.Action.INTERVENE,
            occurred_at__lte=decision.occurred_at,
        )
        .exclude(pk=decision.pk)
        .order_by("-occurred_at", "-id")
        .first()
    )
