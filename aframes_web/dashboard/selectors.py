"""Reads only the dashboard needs, built on the team-scoped selectors of streams and activity."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from aframes_web.activity.models import CompileRequest, DayDocument
from aframes_web.activity.selectors import chunked_in, documents_current, evidence_events
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.selectors import days_for_entity, entity_overview
from aframes_web.teams.models import Team
from compiler.document import expand_runs
from memory.models import Decision, Segment, Trajectory


def _count(queryset: QuerySet[Any]) -> Subquery:
    return Subquery(
        queryset.order_by().values("entity").annotate(n=Count("pk")).values("n"),
        output_field=IntegerField(),
    )


def entity_overview_with_documents(
    *, team: Team, query: str = "", scope: str = ""
) -> QuerySet[Entity]:
    """entity_overview plus, per entity, current documents and pending compiles (desktop days
    are compiled) and closed memory days and decisions (every scope has memory), in scope then
    key order; ``query`` keeps entities whose key or name contains it, ``scope`` one scope.

    Subqueries, not joins: a second join would multiply entity_overview's event sum.
    """
    documents = DayDocument.objects.filter(entity=OuterRef("pk"), current=True)
    pending = CompileRequest.objects.filter(entity=OuterRef("pk"), compiled__lt=F("requested"))
    closed = Trajectory.objects.filter(entity=OuterRef("pk"))
    decisions = Decision.objects.filter(entity=OuterRef("pk"))
    rows = entity_overview(team=team)
    if query:
        rows = rows.filter(Q(key__icontains=query) | Q(name__icontains=query))
    if scope:
        rows = rows.filter(scope=scope)
    return rows.annotate(
        document_total=Coalesce(_count(documents), 0),
        pending_compiles=Coalesce(_count(pending), 0),
        closed_days=Coalesce(_count(closed), 0),
        decision_total=Coalesce(_count(decisions), 0),
    ).order_by("scope", "key")


def entity_scope_counts(*, team: Team) -> dict[str, int]:
    """How many entities the team has of each scope."""
    return dict(
        Entity.objects.filter(team=team)
        .order_by()
        .values_list("scope")
        .annotate(n=Count("pk"))
        .values_list("scope", "n")
    )


@dataclass(frozen=True)
class MemoryDayFigures:
    """What a day of a non-desktop entity holds: events, its memory close, its decisions."""

    events: int = 0
    closed: bool = False
    facts: int = 0
    decisions: int = 0
    interventions: int = 0


def memory_month_figures(
    *, entity: Entity, first: date, last: date
) -> dict[date, MemoryDayFigures]:
    """For the days first..last with events, a closed trajectory or a decision: their figures."""
    captured = dict(
        days_for_entity(entity=entity)
        .filter(day__range=(first, last))
        .values_list("day", "event_count")
    )
    facts = dict(
        Trajectory.objects.filter(entity=entity, day__range=(first, last)).values_list(
            "day", "fact_count"
        )
    )
    decided = {
        day: (total, intervened)
        for day, total, intervened in Decision.objects.filter(
            entity=entity, day__range=(first, last)
        )
        .order_by()
        .values_list("day")
        .annotate(n=Count("pk"), i=Count("pk", filter=Q(action=Decision.Action.INTERVENE)))
        .values_list("day", "n", "i")
    }
    return {
        day: MemoryDayFigures(
            events=captured.get(day, 0),
            closed=day in facts,
            facts=facts.get(day, 0),
            decisions=decided.get(day, (0, 0))[0],
            interventions=decided.get(day, (0, 0))[1],
        )
        for day in sorted(captured.keys() | facts.keys() | decided.keys())
    }


def captured_months(*, entity: Entity) -> list[date]:
    """The first day of every month with captured events, oldest first."""
    days = days_for_entity(entity=entity).values_list("day", flat=True)
    return sorted({day.replace(day=1) for day in days})


def captured_neighbours(*, entity: Entity, day: date) -> tuple[date | None, date | None]:
    """The days with events just before and after ``day``."""
    days = days_for_entity(entity=entity).values_list("day", flat=True)
    before = days.filter(day__lt=day).order_by("-day").first()
    after = days.filter(day__gt=day).order_by("day").first()
    return before, after


def month_figures(
    *, entity: Entity, first: date, last: date
) -> tuple[dict[date, tuple[float, int]], dict[date, int]]:
    """For the days first..last: (active minutes, frames) of current documents, and events."""
    documents = {
        day: (minutes, frames)
        for day, minutes, frames in documents_current(entity=entity)
        .filter(day__range=(first, last))
        .values_list("day", "active_minutes", "frame_count")
    }
    captured = dict(
        days_for_entity(entity=entity)
        .filter(day__range=(first, last))
        .values_list("day", "event_count")
    )
    return documents, captured


def document_months(*, entity: Entity) -> list[date]:
    """The first day of every month that holds a current document, oldest first."""
    days = documents_current(entity=entity).values_list("day", flat=True)
    return sorted({day.replace(day=1) for day in days})


def latest_day(*, entity: Entity) -> date | None:
    """The newest day with a document, else the newest captured day; never after the
    entity's today (a day stored from a wrong clock does not pick the month shown)."""
    today = timezone.now().astimezone(ZoneInfo(entity.timezone)).date()
    newest = (
        documents_current(entity=entity).filter(day__lte=today).values_list("day", flat=True).last()
    )
    if newest is None:
        days = days_for_entity(entity=entity).filter(day__lte=today)
        newest = days.values_list("day", flat=True).last()
    return newest


def day_neighbours(*, entity: Entity, day: date) -> tuple[date | None, date | None]:
    """The documented days just before and after ``day``."""
    days = documents_current(entity=entity).values_list("day", flat=True)
    before = days.filter(day__lt=day).order_by("-day").first()
    after = days.filter(day__gt=day).order_by("day").first()
    return before, after


def interruption_times(
    *, entity: Entity, frames: Iterable[Mapping[str, Any]]
) -> dict[int, datetime]:
    """When each interruption's first evidence row was captured, keyed by that row's id.

    The document names an interruption's rows but not its time; one query for the whole day.
    """
    firsts = {
        ids[0]
        for item in frames
        for interruption in item["interruptions"]
        if (ids := expand_runs(interruption["evidence"]))
    }
    if not firsts:
        return {}
    return {e.row_id: e.occurred_at for e in evidence_events(entity=entity, ids=sorted(firsts))}


def stored_event_ids(*, entity: Entity, ids: list[int]) -> set[int]:
    """Which of ``ids`` are stored events of ``entity`` (ids only, any number of them)."""
    return {
        pk
        for part in chunked_in(Event.objects.filter(entity=entity), "pk__in", ids)
        for pk in part.values_list("pk", flat=True)
    }


def segment_detail(*, entity: Entity, day: date, index: int) -> Segment | None:
    """One segment of a closed day of ``entity``, with its facts and citations."""
    return (
        Segment.objects.filter(trajectory__entity=entity, trajectory__day=day, index=index)
        .select_related("trajectory")
        .prefetch_related("facts", "citations")
        .first()
    )


def closed_in_memory(*, entity: Entity, day: date) -> bool:
    """Whether memory has closed ``day`` into a trajectory."""
    return Trajectory.objects.filter(entity=entity, day=day).exists()
