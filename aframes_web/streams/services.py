"""Writes to the event store: entities, idempotent all-or-nothing ingestion, day summaries."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import partial
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Max, Min
from django.utils import timezone

from aframes_web.hooks import Hook
from aframes_web.streams import names
from aframes_web.streams.models import Entity, EntityDay, Event, EventTally
from aframes_web.streams.records import (
    SCOPES,
    EventRecord,
    ItemError,
    ValidatedBatch,
    validate_batch,
)
from aframes_web.streams.selectors import day_tallies
from aframes_web.teams.models import Team

DayPair = tuple[int, date]

# What stored events set off (compiles, day summaries, memory): the pipeline provides it.
days_stored: Hook[[set[DayPair]], None] = Hook("days stored")

ENTITY_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,99}$")


class EntityError(ValueError):
    """An entity cannot be created as asked; the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class EntityExists(EntityError):
    """The team already has an entity with that key."""


class BatchRejected(Exception):
    """A batch failed validation; nothing of it was stored."""

    def __init__(self, errors: Sequence[ItemError]) -> None:
        super().__init__(f"{len(errors)} invalid event(s); nothing was stored")
        self.errors = list(errors)


# How many differing repeats an answer lists; the count is always whole.
DIFFERING_REPEATS_LISTED = 100


@dataclass
class IngestResult:
    accepted: int = 0
    duplicates: int = 0
    dropped_text_fields: int = 0
    days: set[DayPair] = field(default_factory=set)
    differing_repeats: list[tuple[int, int, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "dropped_text_fields": self.dropped_text_fields,
        }
        if self.differing_repeats:
            # A repeated key keeps its first item; a repeat with other content is named, so a
            # sender that reused a key by mistake learns it (nothing is stored from it).
            answer["differing_repeats"] = [
                {"index": index, "source_key": key, "kept_index": kept}
                for index, kept, key in self.differing_repeats[:DIFFERING_REPEATS_LISTED]
            ]
            answer["differing_repeats_count"] = len(self.differing_repeats)
        return answer


def check_timezone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise EntityError(
            "timezone", f"{name!r} is not an IANA time zone (e.g. Europe/Paris, UTC)."
        ) from None


def entity_create(
    *, team: Team, key: str, scope: str, name: str | None = None, timezone_name: str = "UTC"
) -> Entity:
    if not ENTITY_KEY_RE.fullmatch(key):
        raise EntityError(
            "key",
            f"{key!r} is not a valid key: 1-100 characters, letters, digits and . _ : @ -, "
            "starting with a letter or digit.",
        )
    if scope not in SCOPES:
        raise EntityError("scope", f"{scope!r} is not one of {', '.join(SCOPES)}.")
    check_timezone(timezone_name)
    with transaction.atomic():
        if Entity.objects.filter(team=team, key=key).exists():
            raise EntityExists("key", f"team {team.slug!r} already has an entity {key!r}.")
        return Entity.objects.create(
            team=team, key=key, scope=scope, name=name or key, timezone=timezone_name
        )


def local_day(moment: datetime, zone: ZoneInfo) -> date:
    return moment.astimezone(zone).date()


def _local_days(seconds: Iterable[int], zone: ZoneInfo) -> set[date]:
    """The local days of moments given in whole seconds since the epoch."""
    return {datetime.fromtimestamp(t, zone).date() for t in set(seconds)}


# Rows per statement: SQLite allows 32,766 parameters (3.32+); PostgreSQL stages rows by COPY.
_CHUNK_ROWS = {"postgresql": 5000, "sqlite": 500}
_INSERT_COLUMNS = "entity_id, occurred_at, kind, source_key, monitor, payload, received_at"


def _insert_chunk(entity_id: int, rows: Sequence[EventRecord], received_at: datetime) -> list[int]:
    """Insert rows, skipping stored source keys; the inserted rows' times, in epoch seconds."""
    if connection.vendor == "postgresql":
        return _copy_insert(entity_id, copy_rows(rows), received_at)
    table = connection.ops.quote_name(Event._meta.db_table)
    adapt = connection.ops.adapt_datetimefield_value
    received = adapt(received_at)
    params: list[Any] = []
    for record in rows:
        params += [
            entity_id,
            adapt(record.occurred_at),
            record.kind,
            record.source_key,
            record.monitor,
            record.payload_json,
            received,
        ]
    sql = (
        f"INSERT INTO {table} ({_INSERT_COLUMNS}) VALUES "
        + ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(rows))
        + " ON CONFLICT (entity_id, source_key) DO NOTHING RETURNING source_key"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        inserted = {row[0] for row in cursor.fetchall()}
    seconds = []
    for record in rows:
        if record.source_key in inserted:
            seconds.append(math.floor(record.occurred_at.timestamp()))
            # A key repeated inside one batch is inserted once; later copies are duplicates.
            inserted.discard(record.source_key)
    return seconds


_STAGE = "aframes_event_stage"


def _copy_field(text: str) -> str:
    # COPY text format: backslash, tab and line ends are the only characters it gives meaning.
    if "\\" in text or "\t" in text or "\n" in text or "\r" in text:
        text = (
            text.replace("\\", "\\\\")
            .replace("\t", "\\t")
            .replace("\n", "\\n")
            .replace("\r", "\\r")
        )
    return text


def copy_rows(records: Sequence[EventRecord]) -> bytes:
    """Records as the COPY text of the PostgreSQL staging table; pure (no connection).

    Made here rather than by psycopg's per-row adaptation (about as fast) so that an import
    can make it in its reader process, leaving this one only the bytes to send.
    """
    field, backslash, doubled = _copy_field, "\\", "\\\\"
    return "".join(
        [
            f"{seq}\t{record.occurred_at.isoformat()}\t{field(record.kind)}\t"
            f"{field(record.source_key)}\t{field(record.monitor)}\t"
            # Compact JSON escapes every control character, so only its backslashes need it.
            f"{record.payload_json.replace(backslash, doubled)}\n"
            for seq, record in enumerate(records)
        ]
    ).encode()


def _copy_insert(entity_id: int, data: bytes, received_at: datetime) -> list[int]:
    """PostgreSQL: COPY into a temporary table, then one conflict-skipping INSERT ... SELECT.

    COPY moves rows without per-row parameter handling, which is most of a large INSERT's
    cost; the staging table lives in this session and is emptied before each chunk. ``seq``
    keeps the batch order, so of two rows with one source key the first is the one stored.
    Returns the times of the rows inserted, in whole seconds since the epoch (a key repeated in
    the data is inserted once): integers load in C, where Django's timestamptz loader is Python.
    """
    table = connection.ops.quote_name(Event._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {_STAGE} (seq integer, occurred_at timestamptz, "
            "kind text, source_key text, monitor text, payload jsonb) ON COMMIT DELETE ROWS"
        )
        cursor.execute(f"TRUNCATE {_STAGE}")
        with cursor.cursor.copy(
            f"COPY {_STAGE} (seq, occurred_at, kind, source_key, monitor, payload) FROM STDIN"
        ) as copy:
            copy.write(data)
        cursor.execute(
            f"INSERT INTO {table} ({_INSERT_COLUMNS}) "
            f"SELECT %s, occurred_at, kind, source_key, monitor, payload, %s FROM {_STAGE} "
            # Keys in one order for every transaction (bytewise, as Python sorts the chunks):
            # two batches sharing keys then wait for each other instead of deadlocking.
            'ORDER BY source_key COLLATE "C", seq ON CONFLICT (entity_id, source_key) DO NOTHING '
            "RETURNING floor(extract(epoch FROM occurred_at))::bigint",
            [entity_id, received_at],
        )
        return [row[0] for row in cursor.fetchall()]


def events_counted(entity_id: int, added: int) -> None:
    """Add ``added`` inserted events to the entity's tally (:class:`EventTally`).

    Every insert of events calls this in its own transaction, last, so the tally and the
    rows commit together and the tally's row is held only for the commit. Upserted: an
    entity gets its row with its first events."""
    if not added:
        return
    table = connection.ops.quote_name(EventTally._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (entity_id, stored) VALUES (%s, %s) ON CONFLICT (entity_id) "
            f"DO UPDATE SET stored = {table}.stored + excluded.stored",
            [entity_id, added],
        )


def _source_key(record: EventRecord) -> str:
    return record.source_key


def _store(entity: Entity, records: Sequence[EventRecord]) -> IngestResult:
    result = IngestResult()
    zone = check_timezone(entity.timezone)
    received_at = timezone.now()
    size = _CHUNK_ROWS.get(connection.vendor, 500)
    # Chunks in source-key order (a stable sort: of a key's copies the first stays first),
    # the order _copy_insert inserts in, so concurrent overlapping batches cannot deadlock.
    records = sorted(records, key=_source_key)
    names.remember(entity, names.guesses(records))
    for start in range(0, len(records), size):
        seconds = _insert_chunk(entity.pk, records[start : start + size], received_at)
        result.accepted += len(seconds)
        result.days.update((entity.pk, day) for day in _local_days(seconds, zone))
    result.duplicates = len(records) - result.accepted
    events_counted(entity.pk, result.accepted)
    return result


def validate_events(
    *, entity: Entity, items: Iterable[Any], start_index: int = 0, store_text: bool | None = None
) -> ValidatedBatch:
    keep = settings.AFRAMES_STORE_INPUT_TEXT if store_text is None else store_text
    return validate_batch(
        items, scope=entity.scope, store_text=keep, start_index=start_index, latest=latest_moment()
    )


def latest_moment() -> datetime:
    """The last moment an incoming event may hold: now plus ``AFRAMES_FUTURE_TOLERANCE_H``
    (clocks drift, and a device may stamp in a zone ahead; a day of it is not a mistake)."""
    return timezone.now() + timedelta(hours=settings.AFRAMES_FUTURE_TOLERANCE_H)


def events_store(
    *,
    entity: Entity,
    batch: ValidatedBatch,
    on_days: Callable[[set[DayPair]], None] | None = None,
) -> IngestResult:
    """Store an already validated batch atomically and queue its days after commit."""
    if batch.errors:
        raise BatchRejected(batch.errors)
    with transaction.atomic():
        result = _store(entity, batch.records)
        result.dropped_text_fields = batch.dropped_text_fields
        result.differing_repeats = batch.differing_repeats
        if result.days:
            transaction.on_commit(partial(on_days or days_stored, set(result.days)))
    return result


@dataclass(frozen=True)
class StagedRows:
    """A validated batch in the form storage writes, made without a connection.

    Plain data, cheap to send from an import's reader process to the one that stores: the
    COPY text on PostgreSQL (``copy``), the records themselves elsewhere (``records``).
    """

    count: int
    dropped_text_fields: int
    copy: bytes | None = None
    records: list[EventRecord] | None = None
    sensors: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # names.guesses


def events_stage(batch: ValidatedBatch) -> StagedRows:
    """Turn a validated batch into StagedRows for :func:`events_store_staged`; no queries."""
    if batch.errors:
        raise BatchRejected(batch.errors)
    if connection.vendor == "postgresql":
        return StagedRows(
            len(batch.records),
            batch.dropped_text_fields,
            copy=copy_rows(batch.records),
            sensors=names.guesses(batch.records),
        )
    return StagedRows(len(batch.records), batch.dropped_text_fields, records=batch.records)


def events_store_staged(
    *,
    entity: Entity,
    rows: StagedRows,
    on_days: Callable[[set[DayPair]], None] | None = None,
) -> IngestResult:
    """Store staged rows atomically and queue their days after commit, as events_store does."""
    with transaction.atomic():
        if rows.copy is None:
            result = _store(entity, rows.records or [])
        else:
            zone = check_timezone(entity.timezone)
            names.remember(entity, rows.sensors)
            seconds = _copy_insert(entity.pk, rows.copy, timezone.now())
            result = IngestResult(accepted=len(seconds), duplicates=rows.count - len(seconds))
            result.days = {(entity.pk, day) for day in _local_days(seconds, zone)}
            events_counted(entity.pk, result.accepted)
        result.dropped_text_fields = rows.dropped_text_fields
        if result.days:
            transaction.on_commit(partial(on_days or days_stored, set(result.days)))
    return result


def events_ingest(
    *, entity: Entity, items: Iterable[Any], store_text: bool | None = None
) -> IngestResult:
    """Validate the whole batch, then store all of it or nothing.

    Idempotent: events whose (entity, source_key) is stored already count as duplicates.
    """
    batch = validate_events(entity=entity, items=items, store_text=store_text)
    return events_store(entity=entity, batch=batch)


def entity_days_rebuild(*, entity_id: int) -> int:
    """Recount every local day of an entity from its events, and drop summaries of days that
    hold none; returns days written. What a worker's refreshes would have left, done now (a
    command run by hand after an import that no worker has seen yet)."""
    entity = Entity.objects.filter(pk=entity_id).first()
    if entity is None:
        return 0
    check_timezone(entity.timezone)
    days = {d.isoformat() for d in day_tallies(entity=entity)}
    days |= {
        d.isoformat() for d in EntityDay.objects.filter(entity=entity).values_list("day", flat=True)
    }
    return entity_days_refresh(entity_id=entity_id, days=days)


def entity_days_refresh(*, entity_id: int, days: Iterable[str]) -> int:
    """Recount the given local days of an entity from its events; returns days written.

    Idempotent: the summary is recomputed from the events, never incremented.
    """
    entity = Entity.objects.filter(pk=entity_id).first()
    if entity is None:
        return 0
    zone = check_timezone(entity.timezone)
    written = 0
    for iso in sorted(set(days)):
        day = date.fromisoformat(iso)
        start = datetime.combine(day, datetime.min.time(), tzinfo=zone)
        end = datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=zone)
        summary = Event.objects.filter(
            entity=entity, occurred_at__gte=start, occurred_at__lt=end
        ).aggregate(
            count=Count("id"), first=Min("occurred_at"), last=Max("occurred_at"), top=Max("id")
        )
        if not summary["count"]:
            EntityDay.objects.filter(entity=entity, day=day).delete()
            continue
        EntityDay.objects.update_or_create(
            entity=entity,
            day=day,
            defaults={
                "event_count": summary["count"],
                "first_at": summary["first"],
                "last_at": summary["last"],
                "watermark": summary["top"],
                "refreshed_at": timezone.now(),
            },
        )
        written += 1
    return written
