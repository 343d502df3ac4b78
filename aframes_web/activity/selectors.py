"""Team-scoped reads of compiled activity, shared by the API, the dashboard and (later) MCP.

Every function takes an entity that the caller already resolved through
``aframes_web.streams.selectors.entity_get(team=..., key=...)``, or a team.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.db.models import F, Q, QuerySet

from aframes_web.activity.models import CompileRequest, DayDocument, Frame
from aframes_web.streams.models import Entity, Event, rows_named
from aframes_web.teams.models import Team
from compiler.document import expand_runs


def documents_current(*, entity: Entity) -> QuerySet[DayDocument]:
    """The current document of every compiled day, oldest day first."""
    return DayDocument.objects.filter(entity=entity, current=True).order_by("day")


def document_current(*, entity: Entity, day: date) -> DayDocument | None:
    return DayDocument.objects.filter(entity=entity, day=day, current=True).first()


def document_versions(*, entity: Entity, day: date) -> QuerySet[DayDocument]:
    """Every stored version of a day, newest first."""
    return DayDocument.objects.filter(entity=entity, day=day).order_by("-version")


def document_version(*, entity: Entity, day: date, version: int) -> DayDocument | None:
    return DayDocument.objects.filter(entity=entity, day=day, version=version).first()


def frames_for_entity(
    *,
    entity: Entity,
    start: datetime | None = None,
    end: datetime | None = None,
    app: str | None = None,
    site: str | None = None,
    day: date | None = None,
    after: tuple[datetime, int] | None = None,
) -> QuerySet[Frame]:
    """Frames of the current documents in time order (ties by id), after a keyset cursor."""
    frames = Frame.objects.filter(entity=entity)
    if day is not None:
        frames = frames.filter(day=day)
    if start is not None:
        frames = frames.filter(end__gt=start)
    if end is not None:
        frames = frames.filter(start__lt=end)
    if app:
        frames = frames.filter(app__iexact=app)
    if site:
        frames = frames.filter(site__iexact=site)
    if after is not None:
        moment, last_id = after
        frames = frames.filter(Q(start__gt=moment) | Q(start=moment, id__gt=last_id))
    return frames.order_by("start", "id")


def frame_get(*, entity: Entity, frame_id: str) -> Frame | None:
    """A frame of a current document by its stable id (``f-<first event id>``)."""
    return Frame.objects.filter(entity=entity, frame_id=frame_id).select_related("document").first()


def frame_ids_stored(*, entity: Entity, frame_ids: Iterable[str]) -> set[str]:
    """Which of these frame ids the current documents hold (a frame under a document's
    min_minutes floor is compiled but not stored)."""
    wanted = sorted(set(frame_ids))
    return set(
        Frame.objects.filter(entity=entity, frame_id__in=wanted).values_list("frame_id", flat=True)
    )


def compile_request(*, entity: Entity, day: date) -> CompileRequest | None:
    """The compile queue's row of a day: whether a compile is pending, and its last error."""
    return CompileRequest.objects.filter(entity=entity, day=day).first()


# Evidence ids per query: SQLite refuses more than 32,766 parameters in one statement.
EVIDENCE_CHUNK = 10_000


def chunked_in(
    events: QuerySet[Event], lookup: str, values: list[Any]
) -> Iterator[QuerySet[Event]]:
    """``events`` filtered by ``lookup`` in ``values``, one query per EVIDENCE_CHUNK values."""
    for first in range(0, len(values), EVIDENCE_CHUNK):
        yield events.filter(**{lookup: values[first : first + EVIDENCE_CHUNK]})


def chunked_rows(events: QuerySet[Event], ids: list[int]) -> Iterator[QuerySet[Event]]:
    """``events`` whose row id (``streams.models.row_id``) is among ``ids``, in chunks."""
    for first in range(0, len(ids), EVIDENCE_CHUNK):
        yield events.filter(rows_named(ids[first : first + EVIDENCE_CHUNK]))


def evidence_events(*, entity: Entity, ids: list[int]) -> list[Event]:
    """The raw events behind a frame or a fact, only this entity's, in time order (any number
    of ids). The ids are those documents cite (``Event.row_id``)."""
    found = [e for part in chunked_rows(Event.objects.filter(entity=entity), ids) for e in part]
    return sorted(found, key=lambda e: (e.occurred_at, e.id))


@dataclass(frozen=True)
class QueueState:
    pending: int
    queued: int
    last_error: str
    last_error_at: datetime | None
    last_error_entity: str
    last_error_day: date | None


def compile_queue_state(*, team: Team) -> QueueState:
    """How far compiles lag behind ingestion for a team, and the latest failure."""
    requests = CompileRequest.objects.filter(entity__team=team)
    pending = requests.filter(compiled__lt=F("requested"))
    failure = (
        requests.exclude(last_error="").select_related("entity").order_by("-last_error_at").first()
    )
    return QueueState(
        pending=pending.count(),
        queued=requests.filter(queued=True).count(),
        last_error=failure.last_error if failure else "",
        last_error_at=failure.last_error_at if failure else None,
        last_error_entity=failure.entity.key if failure else "",
        last_error_day=failure.day if failure else None,
    )


EVIDENCE_IDS_MAX = 5000


_ID_RUN = re.compile(r"([0-9]{1,18})(?:-([0-9]{1,18}))?")  # 18 digits stay inside a bigint


def id_runs(parts: list[str]) -> list[int]:
    """Event ids from ``12``/``12-15`` parts, counted before expanding and capped; ValueError
    says what is wrong with the first bad part. REST's ``ids`` and MCP's get_evidence read
    them so."""
    total = 0
    for part in parts:
        match = _ID_RUN.fullmatch(part)
        if match is None:
            raise ValueError(f"{part!r} is not an event id or a run like 12-15.")
        low, high = int(match[1]), int(match[2] or match[1])
        if high < low:
            raise ValueError(f"the run {part!r} runs backwards; write {high}-{low}.")
        total += high - low + 1
        if total > EVIDENCE_IDS_MAX:
            raise ValueError(f"names more than {EVIDENCE_IDS_MAX:,} ids; ask in smaller pieces.")
    return sorted(set(expand_runs(",".join(parts)))) if parts else []
