"""Per-process read caches of ProactMem's writers: an entity's open day, its newest events,
its compiled frames and what is usual for it, each read incrementally (ProactMem;
ARCHITECTURE.md, "How data flows" 3-4). Events are append-only, so a cache only ever gains
rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Count, Max, Q

from aframes_web.activity.models import DayDocument
from aframes_web.activity.selectors import chunked_rows
from aframes_web.streams.models import Entity, Event, row_id
from aframes_web.streams.selectors import events_through
from compiler.document import expand_runs, runs
from compiler.sources.events import row_key
from memory import selectors
from memory.engine.day import DayCache
from memory.engine.expect import Expectations
from memory.engine.recent import RECENT_MAX_PRIOR, RECENT_WINDOW
from memory.engine.records import EngineEvent


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


def cache_key(entity: Entity) -> _EntityKey:
    return entity.pk, entity.created_at


_OPEN: dict[tuple[_EntityKey, date], _OpenDay] = {}


_OPEN_MAX = 64


# Per process, the open desktop day's frames by current document: bodies are large.
_FRAMES: dict[
    tuple[_EntityKey, date], tuple[int, list[tuple[Mapping[str, Any], frozenset[int]]]]
] = {}


def open_day(entity: Entity, day: date) -> _OpenDay:
    key = (cache_key(entity), day)
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


def newest_events(entity: Entity) -> list[EngineEvent]:
    """The entity's RECENT_KEPT newest events by (time, id), oldest first (the cache above)."""
    held = _RECENT.get(cache_key(entity))
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
    _RECENT[cache_key(entity)] = (events, last_id)
    return events


def prior_events(entity: Entity, at: datetime, newest: list[EngineEvent]) -> list[EngineEvent]:
    """Candidates for the recent events before ``at``: at most RECENT_MAX_PRIOR + 1 of the
    entity's newest events in [at - RECENT_WINDOW, at], oldest first."""
    since = at - RECENT_WINDOW
    if newest and at < newest[-1].at:
        # Out of time order: the kept events may not reach back far enough before `at`.
        return selectors.prior_events(entity, at, since, RECENT_MAX_PRIOR + 1)
    return [e for e in newest if since <= e.at <= at][-(RECENT_MAX_PRIOR + 1) :]


def day_frames(
    entity: Entity, day: date, events: Sequence[EngineEvent]
) -> Sequence[Mapping[str, Any]]:
    """The day's compiled frames that rest only on ``events``: for an open day, a frame that
    also holds later rows is left out (its bounds and app would come from the future)."""
    if entity.scope != "desktop":
        return ()

    current = (
        DayDocument.objects.filter(entity=entity, day=day, current=True)
        .values_list("pk", flat=True)
        .first()
    )
    if current is None:
        return ()
    held = _FRAMES.get((cache_key(entity), day))
    if held is None or held[0] != current:
        body = DayDocument.objects.filter(pk=current).values_list("body", flat=True).first()
        frames = body.get("frames", []) if isinstance(body, dict) else []
        cited = [expand_runs(str((f.get("evidence") or {}).get("rows") or "")) for f in frames]
        frames, rows = _frames_by_event(entity, frames, cited)
        if len(_FRAMES) >= _OPEN_MAX:
            _FRAMES.clear()
        held = _FRAMES[(cache_key(entity), day)] = (current, list(zip(frames, rows, strict=True)))
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


@dataclass
class _Usual:
    """One worker process's copy of an entity's expectations and how far they have read."""

    expectations: Expectations
    event_mark: tuple[datetime, int]  # the last (time, id) of the events observed
    events_seen: int
    point_mark: tuple[datetime, int]  # the last (time, id) of the decision points observed


_EARLIEST = (datetime.min.replace(tzinfo=UTC), 0)
# Per process, each entity's expectations (memory/engine/expect.py), extended by the events and
# points stored since the last decision; rebuilt from the start when a row arrived before what was
# read (a late event) or a decision asks about an earlier moment than the last one.
_USUAL: dict[_EntityKey, _Usual] = {}


def expectations_at(
    entity: Entity, at: datetime, points: Sequence[EngineEvent] = ()
) -> Expectations:
    """What is usual for ``entity`` as it stood at ``at``: learned from its events at or before
    ``at`` in (time, id) order and from ``points``, the decision points decided before (oldest
    first), exactly as the in-memory replay learns it (``MemoryStream``)."""
    zone = ZoneInfo(entity.timezone)
    events = Event.objects.filter(entity=entity, occurred_at__lte=at)
    held = _USUAL.get(cache_key(entity))
    if held is not None:
        # As many events up to the mark as were observed means none came late; counted
        # from the entity's tally, not from its whole history (``events_through``).
        before = events_through(entity.pk, *held.event_mark)
        last_point = points[-1] if points else None
        moved_back = at < held.event_mark[0] or (
            last_point is not None and (last_point.at, last_point.id) < held.point_mark
        )
        if before != held.events_seen or moved_back:
            held = None
    if held is None:
        held = _Usual(Expectations(), _EARLIEST, 0, _EARLIEST)
    mark_at, mark_id = held.event_mark
    newer = events.filter(Q(occurred_at__gt=mark_at) | Q(occurred_at=mark_at, pk__gt=mark_id))
    for row in newer.order_by("occurred_at", "pk").iterator(chunk_size=2000):
        held.expectations.observe_event(selectors.engine_event(row))
        held.event_mark = (row.occurred_at, row.pk)
        held.events_seen += 1
    for point in points:
        if (point.at, point.id) > held.point_mark:
            held.expectations.observe_point(point, point.at.astimezone(zone).date())
            held.point_mark = (point.at, point.id)
    if len(_USUAL) >= _OPEN_MAX:
        _USUAL.clear()
    _USUAL[cache_key(entity)] = held
    return held.expectations
