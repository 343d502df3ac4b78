"""Team-scoped reads of ProactiveStream: streams as the benchmark reads them, runs, outcomes."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import QuerySet

from aframes_web.activity.models import DayDocument
from aframes_web.proactivestream.models import BenchmarkRun, DecisionPoint, RunArtefact, RunOutcome
from aframes_web.streams.models import Entity, Event
from aframes_web.teams.models import Team
from benchmark.streams.records import DecisionPoint as PointRecord
from benchmark.streams.records import Stream, StreamEvent
from memory.engine.recent import RECENT_MAX_PRIOR, RECENT_WINDOW
from memory.engine.records import POINT_KIND, EngineEvent


def stream_events(entity: Entity) -> list[StreamEvent]:
    """Every stored event of the entity in (time, id) order, ``private`` included (builders and
    labelers read it; the replay strips it before any method sees an event)."""
    rows = Event.objects.filter(entity=entity).order_by("occurred_at", "id")
    return [
        StreamEvent(r.pk, r.occurred_at, r.kind, r.payload, r.source_key, r.monitor)
        for r in rows.iterator(chunk_size=5000)
    ]


def desktop_frames(entity: Entity) -> dict[date, list[dict[str, Any]]]:
    """The frames of each current day document (desktop decision points are frame ends)."""

    found: dict[date, list[dict[str, Any]]] = {}
    for day, body in DayDocument.objects.filter(entity=entity, current=True).values_list(
        "day", "body"
    ):
        frames = body.get("frames") if isinstance(body, dict) else None
        found[day] = list(frames or [])
    return found


def stored_points(entity: Entity) -> list[PointRecord]:
    rows = DecisionPoint.objects.filter(entity=entity).order_by("at", "key")
    return [
        PointRecord(
            key=r.key,
            scope=entity.scope,
            at=r.at,
            public=r.public,
            private=r.private or {},
            cites=tuple(r.cites or ()),
            event_id=r.event_id,
            id=r.pk,
        )
        for r in rows.iterator(chunk_size=2000)
    ]


def stream_of(entity: Entity, *, synthetic: bool = False) -> Stream:
    """The entity's stream as stored: its events and its built decision points."""
    frames = desktop_frames(entity) if entity.scope == "desktop" else {}
    return Stream(
        entity.key,
        entity.scope,
        ZoneInfo(entity.timezone),
        tuple(stream_events(entity)),
        tuple(stored_points(entity)),
        synthetic,
        {day: tuple(found) for day, found in frames.items()},
    )


def runs_for_team(*, team: Team) -> QuerySet[BenchmarkRun]:
    return BenchmarkRun.objects.filter(team=team).order_by("-created_at", "-id")


def run_get(*, team: Team, pk: int) -> BenchmarkRun | None:
    return BenchmarkRun.objects.filter(team=team, pk=pk).first()


def run_file_names(run: BenchmarkRun) -> list[str]:
    """The names of a run's stored files (results, tables, plots)."""
    return list(RunArtefact.objects.filter(run=run).values_list("name", flat=True))


def outcomes_for_run(
    *,
    run: BenchmarkRun,
    method: str | None = None,
    outcome: str | None = None,
    scope: str | None = None,
    entity: str | None = None,
) -> QuerySet[RunOutcome]:
    found = RunOutcome.objects.filter(run=run)
    if method:
        found = found.filter(method=method)
    if outcome:
        found = found.filter(outcome=outcome)
    if scope:
        found = found.filter(scope=scope)
    if entity:
        found = found.filter(entity_key=entity)
    return found.order_by("at", "id")


def points_before(entity: Entity, at: datetime, point_id: int) -> list[EngineEvent]:
    """Every decision point of the entity before (``at``, ``point_id``), oldest first, as engine
    events: the history from which what is usual at each time of day is learned."""
    rows = (
        DecisionPoint.objects.filter(entity=entity, at__lte=at)
        .exclude(at=at, pk__gte=point_id)
        .order_by("at", "id")
        .values_list("pk", "at", "public")
    )
    return [EngineEvent(pk, moment, POINT_KIND, public) for pk, moment, public in rows]


def prior_points(entity: Entity, at: datetime, point_id: int) -> list[EngineEvent]:
    """The entity's decision points before (``at``, ``point_id``) within the recent window, at
    most RECENT_MAX_PRIOR of the newest, oldest first, as engine events (a point's recent
    events are the stream's earlier points)."""

    rows = (
        DecisionPoint.objects.filter(entity=entity, at__gte=at - RECENT_WINDOW, at__lte=at)
        .exclude(at=at, pk__gte=point_id)
        .order_by("-at", "-id")
        .values_list("pk", "at", "public")[:RECENT_MAX_PRIOR]
    )
    return [EngineEvent(pk, moment, POINT_KIND, public) for pk, moment, public in reversed(rows)]
