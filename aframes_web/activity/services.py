"""Compiling days: read one (entity, local day) of events, run the pure compiler, store versions.

A day's document is compiled from exactly the events whose time falls in that local day (entity
time zone). Frames are cut at local midnight: a frame that runs across midnight appears as two
frames, one per day. That is the rule that makes the pipeline append-only and certifiable: a
day's document depends on nothing but its own events, so capture of a later day never rewrites
an earlier document, late events recompile their own day only, and a rebuild from scratch gives
the same bytes as the incrementally maintained documents. The cost is at most one dwell credit
(90 s, compiler.params.DWELL_CAP_S) per monitor at each midnight that activity runs across.
"""

from __future__ import annotations

import time as clock
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, Max, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from aframes_web.activity.models import CompileRequest, DayDocument, Frame
from aframes_web.activity.selectors import chunked_in, chunked_rows
from aframes_web.hooks import Hook
from aframes_web.streams.models import Entity, Event, row_id
from compiler.capture import Capture
from compiler.document import (
    Compiled,
    canonical_sha256,
    compile_window,
    day_window,
    expand_runs,
)
from compiler.emit import context_block, to_json
from compiler.params import COMPILER_VERSION, Params
from compiler.sources import SourceError
from compiler.sources.events import KINDS, RecordConverter, RecordInvalid, capture_from_records
from compiler.tokens import cl100k

# Postgres advisory lock namespace for "one compile per entity at a time" ('AF').
COMPILE_LOCK_CLASS = 0x4146
# A queued compile whose message has not started within this long is queued again on the next
# request, in case the message was lost with a broker (a redelivered duplicate is harmless).
REQUEUE_AFTER = timedelta(minutes=10)
# Queues compiles of (entity id, local day) pairs: the pipeline provides it.
compiles_wanted: Hook[[list[tuple[int, date]]], None] = Hook("compiles wanted")
READER = "aframes-events"
# Absence records start before the frame they cover; a day back is the longest we look.
ABSENCE_LOOKBACK = timedelta(days=1)

CompileFn = Callable[..., Compiled]


@dataclass(frozen=True, slots=True)
class DayCompile:
    """One compile of a day, before anything is stored."""

    compiled: Compiled | None  # None when the day has no desktop events
    watermark: int  # highest event id read, 0 for none
    event_count: int
    compile_ms: float
    # (start, end) of the absences the compile read (epoch s)
    absence_spans: tuple[tuple[float, float], ...] = ()
    # What it read as window_watermark counts it: (desktop events of the day, the highest of
    # their ids, the highest id of the absences before the day that may reach in).
    read: tuple[int, int, int] = (0, 0, 0)

    @property
    def sha256(self) -> str:
        return canonical_sha256(self.compiled.document) if self.compiled else ""


def day_bounds(entity: Entity, day: date) -> tuple[datetime, datetime]:
    """The UTC datetimes of a local day of the entity (23 or 25 hours across DST changes)."""
    start, end = day_window(day, ZoneInfo(entity.timezone))
    return datetime.fromtimestamp(start, UTC), datetime.fromtimestamp(end, UTC)


def _records(rows: Iterable[tuple[Any, ...]]) -> Iterator[dict[str, Any]]:
    """Stored events as the compiler's records. A row's id is the one its source key fixes
    (an ActivityWatch row keeps its reader's id, so the document cites what the command-line
    compile of the export cites), otherwise the event's own."""
    for event_id, occurred_at, kind, monitor, payload, source_key in rows:
        yield {
            "id": row_id(event_id, source_key),
            "occurred_at": occurred_at,
            "kind": kind,
            "monitor": monitor,
            "payload": payload,
            "source_key": source_key,
        }


_FIELDS = ("id", "occurred_at", "kind", "monitor", "payload", "source_key")


def _capture(rows: list[tuple[Any, ...]]) -> Capture:
    return capture_from_records(_records(rows), reader=READER)


@dataclass(slots=True)
class _Converted:
    """A day's events already converted in this process, to add only newer ones next time."""

    converter: RecordConverter
    watermark: int  # highest event id added
    count: int  # events added


# Days kept converted per worker process (a few MB each): the days being captured right now.
CONVERTED_DAYS = 8
_converted: OrderedDict[tuple[int, str, float, float], _Converted] = OrderedDict()


def _convert(rows: list[tuple[Any, ...]], into: _Converted) -> None:
    for stored, row in zip(rows, _records(rows), strict=True):
        into.count += 1
        try:
            into.converter.add(row, into.count)
        except RecordInvalid as problem:
            raise SourceError(f"event {stored[0]}: {problem}") from None
        into.watermark = max(into.watermark, stored[0])


def _day_capture(
    events: QuerySet[Event], key: tuple[int, str, float, float] | None
) -> tuple[Capture, int, int]:
    """(capture, watermark, count) of a day's events, converting only what is new.

    With ``key`` None everything is read from scratch and this process's cache is left alone.

    The events already converted are reused only when they are exactly the day's events up to
    the watermark: the number of events now stored must equal those converted plus the newer
    ones just read. Ids are not committed in order, so an event with a lower id can appear
    after a compile read past it; the count catches that and everything is read again.
    """
    known = _converted.pop(key, None) if key is not None else None
    if known is not None:
        newer = list(events.filter(id__gt=known.watermark).order_by("id").values_list(*_FIELDS))
        if events.count() == known.count + len(newer):  # counted after reading: see above
            _convert(newer, known)
        else:
            known = None
    if known is None:
        known = _Converted(RecordConverter(), 0, 0)
        _convert(list(events.order_by("id").values_list(*_FIELDS)), known)
    if key is not None:
        _converted[key] = known
        while len(_converted) > CONVERTED_DAYS:
            _converted.popitem(last=False)
    return known.converter.finish(reader=READER), known.watermark, known.count


def _absences_into(
    capture: Capture, entity: Entity, start: datetime, end: datetime
) -> tuple[int, int]:
    """Add absences that began before the window but reach into it; returns the highest id
    of those, and of all the absences looked at (what a later absence would change).

    An absence is stored on the day it starts (AFK from 23:30 to 00:20); the next day's
    document still shows its part after midnight as away time.
    """
    rows = list(
        Event.objects.filter(
            entity=entity,
            kind="absence",
            occurred_at__gte=start - ABSENCE_LOOKBACK,
            occurred_at__lt=start,
        )
        .order_by("id")
        .values_list(*_FIELDS)
    )
    if not rows:
        return 0, 0
    reaching = capture_from_records(
        _records(rows), start.timestamp(), end.timestamp(), reader=READER
    ).absences
    if reaching:
        capture.absences = sorted([*capture.absences, *reaching], key=lambda a: (a.start, a.id))
    return max((a.id for a in reaching), default=0), max(row[0] for row in rows)


def day_compile_read(
    *,
    entity: Entity,
    day: date,
    compile_fn: CompileFn | None = None,
    generated_at: str | None = None,
    params: Params | None = None,
    reuse: bool = False,
) -> DayCompile:
    """Compile one local day from the stored events; writes nothing.

    ``compile_fn`` defaults to the compiler (certify's tests pass doubles). ``params`` default
    to the stored documents' (``Params()``); the API passes others for ``min_minutes`` or text.
    ``reuse`` lets the compile service add only the events that are new since this process
    last compiled the day; everything else (certify's rebuild above all) reads from scratch.
    """
    start, end = day_bounds(entity, day)
    events = Event.objects.filter(
        entity=entity, occurred_at__gte=start, occurred_at__lt=end, kind__in=KINDS
    )
    began = clock.perf_counter()
    # created_at too: a database can hand a deleted entity's id to a new one.
    key = (entity.pk, entity.created_at.isoformat(), start.timestamp(), end.timestamp())
    capture, watermark, count = _day_capture(events, key if reuse else None)
    if not count:
        return DayCompile(None, 0, 0, 0.0)
    before = len(capture.absences)
    reaching_top, lookback_top = _absences_into(capture, entity, start, end)
    read = (count, watermark, lookback_top)
    watermark = max(watermark, reaching_top)
    count += len(capture.absences) - before
    compiled = (compile_fn or compile_window)(
        capture,
        start.timestamp(),
        end.timestamp(),
        entity.timezone,
        params or Params(),
        day=day,
        generated_at=generated_at,
    )
    elapsed = (clock.perf_counter() - began) * 1000.0
    spans = tuple((a.start, a.end) for a in capture.absences)
    return DayCompile(compiled, watermark, count, elapsed, spans, read)


def window_compile_read(
    *, entity: Entity, start: datetime, end: datetime, params: Params | None = None
) -> DayCompile:
    """Compile any window (e.g. the last N hours, across days) on the fly; writes nothing.

    Unlike day documents, frames here are cut at the window's edges, not at midnight.
    """
    began = clock.perf_counter()
    rows = list(
        Event.objects.filter(
            entity=entity, occurred_at__gte=start, occurred_at__lt=end, kind__in=KINDS
        )
        .order_by("id")
        .values_list(*_FIELDS)
    )
    capture = _capture(rows)
    _absences_into(capture, entity, start, end)
    compiled = compile_window(
        capture, start.timestamp(), end.timestamp(), entity.timezone, params or Params()
    )
    elapsed = (clock.perf_counter() - began) * 1000.0
    return DayCompile(compiled, rows[-1][0] if rows else 0, len(rows), elapsed)


def window_watermark(*, entity: Entity, start: datetime, end: datetime) -> tuple[int, int, int]:
    """What :func:`window_compile_read` of the window would read, summed up: (events in the
    window, the highest of their ids, the highest id of the absences before it that may reach
    in). Events are append-only, so equal watermarks mean an equal compile: a cached rendering
    of the window stays exact until an event it would read arrives."""
    inside = Event.objects.filter(
        entity=entity, occurred_at__gte=start, occurred_at__lt=end, kind__in=KINDS
    ).aggregate(n=Count("id"), top=Max("id"))
    before = Event.objects.filter(
        entity=entity,
        kind="absence",
        occurred_at__gte=start - ABSENCE_LOOKBACK,
        occurred_at__lt=start,
    ).aggregate(top=Max("id"))
    return inside["n"], inside["top"] or 0, before["top"] or 0


def document_tokens(document: DayDocument) -> int:
    """cl100k tokens of a stored document as JSON; counted once, then kept on the row.

    Versions are immutable, so the count never goes stale.
    """
    if document.document_tokens is None:
        document.document_tokens = cl100k()(to_json(document.body))
        DayDocument.objects.filter(pk=document.pk).update(document_tokens=document.document_tokens)
    return document.document_tokens


def warm_up() -> None:
    """Load what every compile needs once per process (the token tables)."""
    cl100k()


def _lock_entity(entity_id: int) -> None:
    """Serialise compiles of one entity. On SQLite the single writer already serialises them."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [COMPILE_LOCK_CLASS, entity_id])


def frame_rows(document: DayDocument, frames: list[dict[str, Any]]) -> list[Frame]:
    """The Frame rows that materialise a document's frames (unsaved)."""
    return [
        Frame(
            document=document,
            entity_id=document.entity_id,
            day=document.day,
            frame_id=item["id"],
            position=position,
            app=item["app"],
            site=item["site"] or "",
            monitor=item["monitor"],
            start=datetime.fromisoformat(item["start"]),
            end=datetime.fromisoformat(item["end"]),
            active_s=round(item["duration_min"] * 60.0, 1),
            wall_s=round(item["wall_min"] * 60.0, 1),
            # None where the recorder captures no input events (the document's null).
            keys=(item["input"] or {}).get("keys"),
            clicks=(item["input"] or {}).get("clicks"),
            copies=(item["input"] or {}).get("copies"),
            transit=item["transit"],
            interruptions=len(item["interruptions"]),
            evidence_rows=item["evidence"]["rows"],
            evidence_inputs=item["evidence"].get("inputs", ""),
        )
        for position, item in enumerate(frames)
    ]


def day_compile(
    *, entity_id: int, day: date, compile_fn: CompileFn | None = None
) -> DayDocument | None:
    """Compile a day and store a new current version if its sha256 changed; idempotent.

    Returns the current document (new or unchanged), or None when the entity is gone or the
    day has no desktop events. One compile per entity runs at a time (advisory lock).
    """
    with transaction.atomic(durable=True):
        _lock_entity(entity_id)
        entity = Entity.objects.filter(pk=entity_id).first()
        if entity is None:
            return None
        result = day_compile_read(entity=entity, day=day, compile_fn=compile_fn, reuse=True)
        current = (
            DayDocument.objects.select_for_update()
            .filter(entity=entity, day=day, current=True)
            .first()
        )
        if result.compiled is None:
            return current
        sha = result.sha256
        if current is not None and current.sha256 == sha:
            _coverage_record(entity, day, result.read)
            return current
        document = result.compiled.document
        context = context_block(result.compiled)
        count = cl100k()
        version = 1
        if current is not None:
            version = current.version + 1
            DayDocument.objects.filter(pk=current.pk).update(current=False)
        stored = DayDocument.objects.create(
            entity=entity,
            day=day,
            version=version,
            current=True,
            sha256=sha,
            compiler_version=COMPILER_VERSION,
            params=document["source"]["parameters"],
            body=document,
            context=context,
            context_tokens=count(context),
            watermark=result.watermark,
            event_count=result.event_count,
            frame_count=len(document["frames"]),
            active_minutes=document["coverage"]["active_minutes"],
            compile_ms=round(result.compile_ms, 2),
        )
        _frames_replace(current, stored, document["frames"])
        later = _days_reached(entity, day, result.absence_spans)
        if later:
            transaction.on_commit(lambda: compiles_wanted([(entity.pk, d) for d in later]))
        # Last: the claim row stays locked only for the commit (ingestion updates it too).
        _coverage_record(entity, day, result.read)
        return stored


def _coverage_record(entity: Entity, day: date, read: tuple[int, int, int]) -> None:
    """Note on the day's claim row what this compile read, in its transaction: committed with
    the document it stores, or not at all (reconciliation compares it with the events)."""
    count, top, lookback = read
    CompileRequest.objects.update_or_create(
        entity=entity,
        day=day,
        defaults={"read_count": count, "read_top": top, "lookback_top": lookback},
    )


def _days_reached(entity: Entity, day: date, spans: tuple[tuple[float, float], ...]) -> list[date]:
    """The later local days that read an absence this day read, and have events to compile.

    A day reads the absences that began in the ``ABSENCE_LOOKBACK`` before it and reach into
    it (``_absences_into``), so an absence reaches at most the days starting within that span
    of its own start, however late it claims to end: one event never queues more than a
    day's compile or two, and a day without events has no document to redo.
    """
    zone = ZoneInfo(entity.timezone)
    _, day_end = day_bounds(entity, day)
    reach = ABSENCE_LOOKBACK.total_seconds()
    days: set[date] = set()
    for start, end in spans:
        current = day + timedelta(days=1)
        current_start = day_end.timestamp()
        while current_start < end and current_start - start <= reach:
            days.add(current)
            current += timedelta(days=1)
            current_start = datetime.combine(current, time(), tzinfo=zone).timestamp()
    with_events = []
    for later in sorted(days):
        start, end = day_bounds(entity, later)
        if Event.objects.filter(
            entity=entity, occurred_at__gte=start, occurred_at__lt=end
        ).exists():
            with_events.append(later)
    return with_events


def _frames_replace(
    previous: DayDocument | None, stored: DayDocument, frames: list[dict[str, Any]]
) -> None:
    """Materialise the new version's frames, moving over the rows of frames that did not change.

    As a day is captured only its last frames change between compiles, so most rows are
    re-pointed with one UPDATE instead of being deleted and written again.
    """
    unchanged: set[str] = set()
    if previous is not None:
        before = {
            item["id"]: (position, item) for position, item in enumerate(previous.body["frames"])
        }
        unchanged = {
            item["id"]
            for position, item in enumerate(frames)
            if before.get(item["id"]) == (position, item)
        }
        Frame.objects.filter(document=previous, frame_id__in=unchanged).update(document=stored)
        Frame.objects.filter(document=previous).delete()
    rows = frame_rows(stored, frames)
    Frame.objects.bulk_create([row for row in rows if row.frame_id not in unchanged])


# --- The compile queue ------------------------------------------------------------------------


def _delay_s(last: datetime | None, now: datetime) -> float:
    """Seconds until the day may compile again (AFRAMES_COMPILE_INTERVAL_MS after the last
    compile started)."""
    interval = settings.AFRAMES_COMPILE_INTERVAL_MS / 1000.0
    if last is None or interval <= 0:
        return 0.0
    return max(0.0, min(interval, interval - (now - last).total_seconds()))


def compile_requests_add(
    *, pairs: Iterable[tuple[int, date]], stale_after: timedelta | None = None
) -> list[tuple[int, date, float]]:
    """Record that these (entity, day) pairs gained events; returns what to enqueue.

    Each item is (entity id, day, countdown in seconds). A pair is enqueued only when no compile
    of it is queued yet (or the queued one looks lost), so many batches for one day coalesce;
    a day compiled less than AFRAMES_COMPILE_INTERVAL_MS ago waits out the rest of the
    interval, so a burst costs a few compiles, while a lone batch compiles at once.
    Non-desktop entities have nothing to compile. A queued compile counts as lost after
    ``stale_after`` (default REQUEUE_AFTER); reconciliation passes a shorter one for the days
    it found uncovered with no compile running.
    """
    wanted = sorted(set(pairs))
    if not wanted:
        return []
    desktop = set(
        Entity.objects.filter(
            pk__in={entity_id for entity_id, _ in wanted}, scope=Entity.Scope.DESKTOP
        ).values_list("pk", flat=True)
    )
    now = timezone.now()
    lost_before = now - (REQUEUE_AFTER if stale_after is None else stale_after)
    enqueue: list[tuple[int, date, float]] = []
    for entity_id, day in wanted:
        if entity_id not in desktop:
            continue
        mine = CompileRequest.objects.filter(entity_id=entity_id, day=day)
        claimed = mine.filter(Q(queued=False) | Q(queued_at__lt=lost_before)).update(
            queued=True, queued_at=now, requested=F("requested") + 1
        )
        if claimed:
            # Spaced from when the last compile started: one that is running now counts.
            last = mine.values_list("started_at", flat=True).first()
            enqueue.append((entity_id, day, _delay_s(last, now)))
            continue
        if mine.update(requested=F("requested") + 1):
            continue  # a queued compile will read these events
        try:
            with transaction.atomic():
                CompileRequest.objects.create(
                    entity_id=entity_id, day=day, requested=1, queued=True, queued_at=now
                )
            enqueue.append((entity_id, day, 0.0))
        except IntegrityError:
            # Another ingestion created the row a moment ago; its compile is queued.
            mine.update(requested=F("requested") + 1)
    return enqueue


def compile_unqueue(*, entity_id: int, day: date) -> None:
    """The compile could not be queued (broker down): leave the day pending, not queued."""
    CompileRequest.objects.filter(entity_id=entity_id, day=day).update(queued=False)


# A day whose compile failed is tried again by the sweep only after this long.
FAILED_RETRY_AFTER = timedelta(minutes=30)


def compiles_stuck() -> list[tuple[int, date]]:
    """Days with requests no compile has covered and no compile on its way.

    That is: not queued (the broker refused the message, or the task gave up after its
    retries), or queued so long ago that the message must be lost. Days that failed recently
    wait FAILED_RETRY_AFTER, so a day that cannot compile is not retried in a loop.
    """
    now = timezone.now()
    stuck = (
        CompileRequest.objects.filter(compiled__lt=F("requested"))
        .filter(Q(queued=False) | Q(queued_at__lt=now - REQUEUE_AFTER))
        .exclude(last_error_at__gte=now - FAILED_RETRY_AFTER)
        .order_by("entity_id", "day")
    )
    return list(stuck.values_list("entity_id", "day"))


def compile_claim(*, entity_id: int, day: date) -> int:
    """Clear ``queued`` before reading events; returns the request count this compile covers.

    Committed on its own, so a batch that lands after this point queues another compile
    instead of waiting for this one's transaction.
    """
    with transaction.atomic():
        request = (
            CompileRequest.objects.select_for_update().filter(entity_id=entity_id, day=day).first()
        )
        if request is None:
            request = CompileRequest.objects.create(entity_id=entity_id, day=day)
        CompileRequest.objects.filter(pk=request.pk).update(queued=False, started_at=timezone.now())
        return request.requested


def compile_finish(*, entity_id: int, day: date, covered: int) -> None:
    CompileRequest.objects.filter(entity_id=entity_id, day=day, compiled__lt=covered).update(
        compiled=covered
    )
    CompileRequest.objects.filter(entity_id=entity_id, day=day).update(
        compiles=F("compiles") + 1, compiled_at=timezone.now(), last_error="", last_error_at=None
    )


def compile_failed(*, entity_id: int, day: date, error: BaseException) -> None:
    CompileRequest.objects.filter(entity_id=entity_id, day=day).update(
        last_error=f"{type(error).__name__}: {error}"[:2000], last_error_at=timezone.now()
    )


def day_compile_queued(*, entity_id: int, day: date) -> DayDocument | None:
    """What the task runs: claim, compile, mark done (or record the error and re-raise)."""
    covered = compile_claim(entity_id=entity_id, day=day)
    try:
        stored = day_compile(entity_id=entity_id, day=day)
    except Exception as error:
        compile_failed(entity_id=entity_id, day=day, error=error)
        raise
    compile_finish(entity_id=entity_id, day=day, covered=covered)
    return stored


def compiles_pending_run(*, entity: Entity) -> list[date]:
    """Compile now, in this process, every day of the entity whose request no compile has
    covered yet (what the worker would do), oldest first; returns the days compiled."""
    days = sorted(
        CompileRequest.objects.filter(entity=entity, requested__gt=F("compiled")).values_list(
            "day", flat=True
        )
    )
    for day in days:
        day_compile_queued(entity_id=entity.pk, day=day)
    return days


def entity_event_days(*, entity: Entity) -> list[date]:
    """The local days (entity time zone) that hold desktop events, oldest first."""
    days = (
        Event.objects.filter(entity=entity, kind__in=KINDS)
        .annotate(local=TruncDate("occurred_at", tzinfo=ZoneInfo(entity.timezone)))
        .values_list("local", flat=True)
        .distinct()
        .order_by("local")
    )
    return list(days)


# --- Verify a frame from exactly its evidence -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verification:
    """A frame recompiled from its own evidence rows, against the stored frame."""

    match: bool
    stored: dict[str, Any]
    recompiled: dict[str, Any] | None
    differences: list[tuple[str, Any, Any]]  # (field, stored value, recompiled value)
    row_ids: list[int]  # the events the recompile read, evidence first
    closing_id: int | None  # the next row of the monitor that ends the last dwell, if any


def _rows_where(events: QuerySet[Event], lookup: str, values: list[Any]) -> list[tuple[Any, ...]]:
    """Event rows whose ``lookup`` is among ``values`` (in chunks: SQLite's parameter limit)."""
    return [
        row for part in chunked_in(events, lookup, values) for row in part.values_list(*_FIELDS)
    ]


def _rows_named(events: QuerySet[Event], ids: list[int]) -> list[tuple[Any, ...]]:
    """Event rows whose row id (``streams.models.row_id``) is among ``ids``."""
    return [row for part in chunked_rows(events, ids) for row in part.values_list(*_FIELDS)]


def frame_verify(*, entity: Entity, frame: Frame) -> Verification:
    """Recompile a frame from exactly the rows its evidence names and compare.

    The input is the frame's own snapshot rows, its interruptions' rows, its attributed input
    events, the element trees of those snapshots, any absence overlapping it, and one more
    row: the next snapshot of the same monitor, because a row's dwell credit is measured to the
    next row (activity frames §4.2), so the frame's last credit needs it. Nothing else.
    """
    stored = next(f for f in frame.document.body["frames"] if f["id"] == frame.frame_id)
    evidence = expand_runs(stored["evidence"]["rows"])
    for interruption in stored["interruptions"]:
        evidence += expand_runs(interruption["evidence"])
    inputs = expand_runs(stored["evidence"].get("inputs", ""))
    day_start, day_end = day_bounds(entity, frame.day)
    mine = Event.objects.filter(entity=entity)
    snapshots = _rows_named(mine.filter(kind="snapshot"), evidence)
    last = max((row[1], row[0]) for row in snapshots)
    closing = (
        mine.filter(kind="snapshot", monitor=frame.monitor, occurred_at__lt=day_end)
        .filter(Q(occurred_at__gt=last[0]) | Q(occurred_at=last[0], id__gt=last[1]))
        .order_by("occurred_at", "id")
        .values_list(*_FIELDS)
        .first()
    )
    until = closing[1] if closing else day_end
    keys = [row[5] for row in snapshots]
    extra = _rows_named(mine, inputs)
    extra += _rows_where(mine.filter(kind="elements"), "payload__snapshot__in", keys)
    first = min(row[1] for row in snapshots)
    for row in mine.filter(
        kind="absence", occurred_at__gte=day_start - ABSENCE_LOOKBACK, occurred_at__lte=until
    ).values_list(*_FIELDS):
        if datetime.fromisoformat(row[4].get("end", "")) >= first:
            extra.append(row)
    rows = snapshots + ([closing] if closing else []) + extra
    compiled = compile_window(
        _capture(sorted(rows, key=lambda r: row_id(r[0], r[5]))),
        day_start.timestamp(),
        day_end.timestamp(),
        entity.timezone,
        Params(**stored_params(frame.document)),
        day=frame.day,
    )
    again = next((f for f in compiled.document["frames"] if f["id"] == frame.frame_id), None)
    differences = (
        [
            (name, stored.get(name), again.get(name))
            for name in stored
            if stored.get(name) != again.get(name)
        ]
        if again is not None
        else [("id", frame.frame_id, None)]
    )
    return Verification(
        match=not differences,
        stored=stored,
        recompiled=again,
        differences=differences,
        row_ids=[row_id(row[0], row[5]) for row in rows],
        closing_id=row_id(closing[0], closing[5]) if closing else None,
    )


def stored_params(document: DayDocument) -> dict[str, Any]:
    """The Params a document was compiled with, as keyword arguments."""
    return {
        name: tuple(tuple(pair) for pair in value) if isinstance(value, list) else value
        for name, value in document.params.items()
    }
