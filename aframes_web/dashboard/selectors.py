"""Reads only the dashboard needs, built on the team-scoped selectors of streams and activity."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from aframes_web.activity.models import CompileRequest, DayDocument
from aframes_web.activity.selectors import documents_current, evidence_events
from aframes_web.streams.models import Entity
from aframes_web.streams.selectors import days_for_entity, entity_overview
from aframes_web.teams.models import Team
from compiler.document import expand_runs


def _count(queryset: QuerySet[Any]) -> Subquery:
    return Subquery(
        queryset.order_by().values("entity").annotate(n=Count("pk")).values("n"),
        output_field=IntegerField(),
    )


def entity_overview_with_documents(*, team: Team) -> QuerySet[Entity]:
    """entity_overview plus current documents and pending compiles per entity.

    Subqueries, not joins: a second join would multiply entity_overview's event sum.
    """
    documents = DayDocument.objects.filter(entity=OuterRef("pk"), current=True)
    pending = CompileRequest.objects.filter(entity=OuterRef("pk"), compiled__lt=F("requested"))
    return entity_overview(team=team).annotate(
        document_total=Coalesce(_count(documents), 0),
        pending_compiles=Coalesce(_count(pending), 0),
    )


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
    """The newest day with a document, else the newest captured day."""
    newest = documents_current(entity=entity).values_list("day", flat=True).last()
    if newest is None:
        newest = days_for_entity(entity=entity).values_list("day", flat=True).last()
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
