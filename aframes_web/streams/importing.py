"""Streaming import of a file into one entity: batched, idempotent, with a summary."""

from __future__ import annotations

import contextlib
import gc
import itertools
import multiprocessing
import queue
import signal
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings

from aframes_web.streams.importers import Reader, SourceItem, formats
from aframes_web.streams.models import Entity
from aframes_web.streams.records import ItemError, validate_batch
from aframes_web.streams.selectors import entity_get
from aframes_web.streams.services import (
    EntityError,
    IngestResult,
    StagedRows,
    check_timezone,
    entity_create,
    events_stage,
    events_store,
    events_store_staged,
    latest_moment,
    validate_events,
)
from aframes_web.teams.models import Team

IMPORT_BATCH = 5000
PENDING_BATCHES = 4  # at most this many batches' worth of items wait, over all entities
# Staged batches a pipelined import's reader process may have ready ahead of storage: enough to
# cover a flush of every waiting entity at once, bounded so memory stays flat (~2 MB each).
PIPELINE_AHEAD = 8
MAX_UNREADABLE_HELD = 1000  # unreadable-line reports the reader process holds before sending


class ImportAborted(Exception):
    """--strict met a bad line; batches before it are stored, the rest is not read."""


class ImportFailed(RuntimeError):
    """The reader process of a pipelined import failed; batches stored before it stay stored."""


@dataclass
class ImportSummary:
    read: int = 0
    imported: int = 0
    duplicates: int = 0
    dropped_text_fields: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    per_entity: Counter[str] = field(default_factory=Counter)  # entity key -> new events
    notes: list[str] = field(default_factory=list)  # what the reader wants said (DST, ...)
    problems: list[str] = field(default_factory=list)  # "file:line: message", first ones
    # A turn of a long import (import_items' pause and skip): whether it stopped early, having
    # stored everything it read, and how long reading again past an earlier turn's items took.
    paused: bool = False
    skip_s: float = 0.0

    MAX_PROBLEMS = 50

    def reject(self, location: str, reason: str, message: str) -> None:
        self.rejected[reason] += 1
        if len(self.problems) < self.MAX_PROBLEMS:
            self.problems.append(f"{location}: {message}")

    def as_dict(self) -> dict[str, object]:
        return {
            "read": self.read,
            "imported": self.imported,
            "duplicates": self.duplicates,
            "dropped_text_fields": self.dropped_text_fields,
            "rejected": dict(sorted(self.rejected.items())),
            **(
                {"entities": dict(sorted(self.per_entity.items()))}
                if len(self.per_entity) > 1
                else {}
            ),
            **({"notes": list(self.notes)} if self.notes else {}),
        }

    def carried(self) -> dict[str, Any]:
        """What a later turn of the same import adds its own counts to (JSON)."""
        return {
            "imported": self.imported,
            "duplicates": self.duplicates,
            "dropped_text_fields": self.dropped_text_fields,
            "rejected": dict(self.rejected),
            "per_entity": dict(self.per_entity),
            "problems": list(self.problems),
        }

    @classmethod
    def restored(cls, carried: dict[str, Any] | None) -> ImportSummary:
        carried = carried or {}
        return cls(
            imported=carried.get("imported", 0),
            duplicates=carried.get("duplicates", 0),
            dropped_text_fields=carried.get("dropped_text_fields", 0),
            rejected=Counter(carried.get("rejected", {})),
            per_entity=Counter(carried.get("per_entity", {})),
            problems=list(carried.get("problems", [])),
        )

    def then(self, later: ImportSummary) -> ImportSummary:
        """This summary followed by a later turn's: counts added, ``read`` and notes the later
        turn's (it read the file from its start, see import_items' ``skip``)."""
        return ImportSummary(
            read=later.read,
            imported=self.imported + later.imported,
            duplicates=self.duplicates + later.duplicates,
            dropped_text_fields=self.dropped_text_fields + later.dropped_text_fields,
            rejected=self.rejected + later.rejected,
            per_entity=self.per_entity + later.per_entity,
            notes=list(later.notes),
            problems=(self.problems + later.problems)[: self.MAX_PROBLEMS],
            paused=later.paused,
            skip_s=later.skip_s,
        )


Rejection = tuple[str, str, str]  # (location, reason, message)
_UNREADABLE = object()  # the key _batches gives an item the reader could not read
_END = object()  # the key of _batches' last yield, which carries the final count
_PAUSED = object()  # the key of the last yield of _batches told to pause


def _batches(
    items: Iterable[SourceItem],
    key: Callable[[SourceItem], Any],
    batch_size: int,
    *,
    start: int = 0,
    pause: Callable[[], bool] | None = None,
) -> Iterator[tuple[int, Any, list[SourceItem]]]:
    """Items grouped per key into batches: yields (items read so far, key, batch).

    A batch is yielded when full; files spread over thousands of keys (a GH Archive hour) must
    not hold a batch for each, so past ``PENDING_BATCHES`` batches' worth of waiting items,
    everything waiting is yielded. An unreadable item comes alone as soon as it is read, under
    the key ``_UNREADABLE``; the last yield is ``(read, _END, [])``.

    ``start`` items were read before these (the count goes on from it). ``pause`` is asked
    after each full batch has been handled: when it says so, everything waiting is yielded and
    the last yield is ``(read, _PAUSED, [])``, so every one of the ``read`` items has been
    handed over and the next turn can begin after them.
    """
    pending: dict[Any, list[SourceItem]] = {}
    max_waiting = batch_size * PENDING_BATCHES
    waiting = 0
    read = start
    for source in items:
        read += 1
        if source.error is not None:
            yield read, _UNREADABLE, [source]
            continue
        group = key(source)
        batch = pending.get(group)
        if batch is None:
            batch = pending[group] = []
        batch.append(source)
        waiting += 1
        if len(batch) >= batch_size:
            waiting -= len(batch)
            del pending[group]
            yield read, group, batch
        elif waiting >= max_waiting:
            held, pending, waiting = pending, {}, 0
            for group, batch in held.items():
                yield read, group, batch
        else:
            continue
        if pause is not None and pause():
            for group, batch in pending.items():
                yield read, group, batch
            yield read, _PAUSED, []
            return
    for group, batch in pending.items():
        yield read, group, batch
    yield read, _END, []


def _rejections(batch_items: list[SourceItem], errors: list[ItemError]) -> list[Rejection]:
    out = []
    for error in errors:
        where = f"{error.field}: " if error.field else ""
        reason = error.field.split("[")[0] or "item"
        out.append((batch_items[error.index].location, reason, f"{where}{error.message}"))
    return out


def _reject(summary: ImportSummary, rejections: list[Rejection], strict: bool) -> None:
    for location, reason, message in rejections:
        summary.reject(location, reason, message)
    if rejections and strict:
        location, _, message = rejections[0]
        raise ImportAborted(f"{location}: {message}")


def _count(
    summary: ImportSummary,
    target: Entity,
    result: IngestResult,
    progress: Callable[[ImportSummary], None] | None,
) -> None:
    summary.imported += result.accepted
    summary.duplicates += result.duplicates
    summary.dropped_text_fields += result.dropped_text_fields
    summary.per_entity[target.key] += result.accepted
    if progress is not None:
        progress(summary)


def import_items(
    *,
    items: Iterable[SourceItem],
    entity: Entity | None = None,
    route: Callable[[SourceItem], Entity] | None = None,
    strict: bool = False,
    batch_size: int = IMPORT_BATCH,
    progress: Callable[[ImportSummary], None] | None = None,
    skip: int = 0,
    pause: Callable[[ImportSummary], bool] | None = None,
) -> ImportSummary:
    """Validate and store items batch by batch; bad items are reported, never stored.

    Items go to ``entity``, or to whatever ``route`` returns for them (multi-entity formats).

    A long import can run in turns: ``pause`` is asked after each stored batch, and when it
    says so the import stops with everything read so far stored (``summary.paused``,
    ``summary.read``). The next turn passes that count as ``skip``: those items are read again,
    since readers are streams that may carry state from line to line (CASAS pairs its
    annotations, GitHub a pull request's files), but not validated or stored; ``skip_s`` is how
    long that took. Counts are this turn's; ``read`` counts from the file's start.
    """
    if (entity is None) == (route is None):
        raise ValueError("pass exactly one of entity and route")
    summary = ImportSummary()
    target_of = route if route is not None else (lambda _source: entity)
    remaining = iter(items)
    if skip:
        began = time.perf_counter()
        skip = sum(1 for _ in itertools.islice(remaining, skip))
        summary.skip_s = time.perf_counter() - began
    asked = None if pause is None else (lambda: pause(summary))
    for read, target, batch_items in _batches(
        remaining, target_of, batch_size, start=skip, pause=asked
    ):
        summary.read = read
        if target is _END:
            break
        if target is _PAUSED:
            summary.paused = True
            break
        if target is _UNREADABLE:
            source = batch_items[0]
            _reject(summary, [(source.location, "unreadable", str(source.error))], strict)
            continue
        batch = validate_events(entity=target, items=[p.item for p in batch_items])
        _reject(summary, _rejections(batch_items, batch.errors), strict)
        batch.errors = []
        _count(summary, target, events_store(entity=target, batch=batch), progress)
    return summary


# --- pipelined import ---------------------------------------------------------------------------
# Reading (decompressing, decoding, mapping) and validating are Python work; storing is mostly
# PostgreSQL's. A pipelined import does the first in a forked reader process that sends staged
# batches (COPY text) to this one, which stores them: the two overlap on two cores.


@dataclass
class _Staged:
    """What the reader process sends: one batch's outcome, or its last word."""

    read: int  # items read so far
    bytes_read: int
    rejections: list[Rejection]
    key: str | None = None  # the batch's sub-entity (None: the one entity), when a batch
    location: str = ""  # of the batch's first item
    rows: StagedRows | None = None  # its valid records, when any
    batch: bool = False
    done: bool = False  # the reader finished; notes follow
    notes: list[str] = field(default_factory=list)
    failure: str | None = None  # the reader failed: what went wrong, where


def _staged(
    reader: Reader, *, scope: str, store_text: bool, strict: bool, batch_size: int
) -> Iterator[_Staged]:
    """The reader process's work: items read, grouped, validated and staged; no database."""
    held: list[Rejection] = []
    tracked = _Tracked(reader)
    read = 0
    try:
        for read, key, batch_items in _batches(tracked, lambda source: source.entity, batch_size):
            if key is _END:
                yield _Staged(read, reader.bytes_read, held, done=True, notes=reader_notes(reader))
                return
            location = batch_items[0].location
            if key is _UNREADABLE:
                held.append((location, "unreadable", str(batch_items[0].error)))
                if strict or len(held) >= MAX_UNREADABLE_HELD:
                    yield _Staged(read, reader.bytes_read, held)
                    held = []
                continue
            batch = validate_batch(
                [p.item for p in batch_items],
                scope=scope,
                store_text=store_text,
                latest=latest_moment(),
            )
            rejections = held + _rejections(batch_items, batch.errors)
            held, batch.errors = [], []
            rows = events_stage(batch) if batch.records else None
            yield _Staged(read, reader.bytes_read, rejections, key, location, rows, batch=True)
    except Exception as exc:  # sent to the storing process, which says so and stops
        traceback.print_exc()  # the whole story for a bug report, on the command's stderr
        yield _Staged(read, 0, held, failure=tracked.failure(exc))


class _Tracked:
    """A reader's items, remembering where the last one was read: what a failure names."""

    def __init__(self, reader: Iterable[SourceItem]) -> None:
        self.reader, self.last = reader, ""

    def __iter__(self) -> Iterator[SourceItem]:
        for source in self.reader:
            self.last = source.location
            yield source

    def failure(self, error: BaseException) -> str:
        where = f"after {self.last}" if self.last else "before the first item"
        return f"{where} ({type(error).__name__}: {error})"


def _reading_failed(failure: str, imported: int) -> ImportFailed:
    """What both ways of importing say when reading fails, and what they keep."""
    return ImportFailed(
        f"Reading failed {failure}; the {imported:,} events stored before it are kept, and a "
        "rerun skips them."
    )


def reader_notes(reader: Reader) -> list[str]:
    return list(getattr(reader, "notes", []))


def _reader_main(
    conn: Connection, reader: Reader, scope: str, store_text: bool, strict: bool, batch_size: int
) -> None:
    """The forked reader process: send staged batches until the file ends (or strict stops)."""
    # Ctrl-C reaches the whole process group; the storing process handles it and ends this one.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The batches waiting here are tens of thousands of small dicts, and the default thresholds
    # collect (and scan them) every few hundred allocations: a fifth of the reading time,
    # measured. Reading makes no reference cycles to speak of; collect rarely.
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        for message in _staged(
            reader, scope=scope, store_text=store_text, strict=strict, batch_size=batch_size
        ):
            conn.send(message)
            if message.failure or (strict and message.rejections):
                break
    except (BrokenPipeError, EOFError):
        pass  # the storing process stopped first (strict, or its own error)
    finally:
        conn.close()


def pipeline_available() -> bool:
    """Whether a pipelined import can run here: it forks (not on Windows), and only a process
    with no other thread may fork safely (a thread holding a lock at the fork, such as a
    connection pool's, would hold it forever in the child)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _import_pipelined(
    plan: ImportPlan,
    *,
    strict: bool,
    batch_size: int,
    progress: Callable[[ImportSummary], None] | None,
) -> ImportSummary:
    context = multiprocessing.get_context("fork")
    receive_end, send_end = context.Pipe(duplex=False)
    child = context.Process(
        target=_reader_main,
        args=(
            send_end,
            plan.reader,
            plan.scope,
            settings.AFRAMES_STORE_INPUT_TEXT,
            strict,
            batch_size,
        ),
        name="aframes-import-reader",
        daemon=True,
    )
    child.start()
    send_end.close()  # ours: so that the reader's exit shows as the end of the pipe
    inbox: queue.Queue[_Staged | None] = queue.Queue(PIPELINE_AHEAD)

    def receive() -> None:
        # A thread, so that batches arrive while this process waits on PostgreSQL.
        try:
            while True:
                message = receive_end.recv()
                inbox.put(message)
                if message.done or message.failure:
                    return
        except Exception:  # EOFError above all: the reader process is gone
            inbox.put(None)

    receiver = threading.Thread(target=receive, name="aframes-import-receiver", daemon=True)
    receiver.start()
    summary = ImportSummary()
    try:
        while True:
            message = inbox.get()
            if message is None:
                child.join()
                raise ImportFailed(
                    f"The reader process stopped unexpectedly (exit code {child.exitcode}) "
                    f"after {summary.read:,} items; the {summary.imported:,} events stored "
                    "before it are kept, and a rerun skips them."
                )
            if message.failure:
                _reject(summary, message.rejections, strict)
                raise _reading_failed(message.failure, summary.imported)
            summary.read = message.read
            plan.reader.bytes_read = message.bytes_read  # for progress, read in this process
            _reject(summary, message.rejections, strict)
            if message.batch:
                target = plan.entity
                if target is None:
                    assert plan.route is not None
                    target = plan.route(SourceItem(message.location, entity=message.key))
                if message.rows is not None:
                    result = events_store_staged(entity=target, rows=message.rows)
                    _count(summary, target, result, progress)
                elif progress is not None:
                    progress(summary)
            if message.done:
                summary.notes.extend(message.notes)
                break
        child.join()
    finally:
        if child.is_alive():
            child.kill()
            child.join()
        while receiver.is_alive():  # unblock a receiver waiting for room in the inbox
            with contextlib.suppress(queue.Empty):
                inbox.get(timeout=0.1)
        receive_end.close()
    return summary


class ImportRefused(ValueError):
    """The import cannot start as asked (unknown team, wrong scope, missing --tz ...)."""


@dataclass
class ImportPlan:
    """A file about to be imported: its reader and where each item goes."""

    reader: Any
    size: int
    entity: Entity | None
    route: Callable[[SourceItem], Entity] | None
    multi_entity: bool
    scope: str  # of every entity the import writes to


def _entity_for(
    *, team: Team, key: str, scope: str, tz: str | None, name: str | None, created: list[Entity]
) -> Entity:
    entity = entity_get(team=team, key=key)
    if entity is not None:
        if entity.scope != scope:
            raise ImportRefused(f"Entity {key!r} is a {entity.scope} entity, not {scope}.")
        if tz and tz != entity.timezone:
            raise ImportRefused(f"Entity {key!r} uses time zone {entity.timezone}, not {tz}.")
        return entity
    try:
        entity = entity_create(
            team=team, key=key, scope=scope, name=name, timezone_name=tz or "UTC"
        )
    except EntityError as err:
        raise ImportRefused(str(err)) from None
    created.append(entity)
    return entity


def import_plan(
    *,
    team: Team,
    format_name: str,
    path: Path,
    entity_key: str,
    scope: str | None = None,
    tz: str | None = None,
    name: str | None = None,
    created: list[Entity] | None = None,
) -> ImportPlan:
    """Check an import request and prepare its reader; entities are created as items arrive."""
    known = formats()
    spec = known.get(format_name)
    if spec is None:
        raise ImportRefused(f"Unknown format {format_name!r}; choose one of {', '.join(known)}.")
    if not path.exists():
        raise ImportRefused(f"{path} does not exist.")
    if tz:
        try:
            check_timezone(tz)
        except EntityError as err:
            raise ImportRefused(err.message) from None
    if spec.scope and scope and scope != spec.scope:
        raise ImportRefused(f"{spec.name} files hold {spec.scope} data, not {scope}.")
    made = created if created is not None else []
    entity = None
    route = None
    if spec.multi_entity:
        if spec.needs_tz and not tz:
            raise ImportRefused(f"{spec.name} files have no time zone: pass a time zone.")
        kind = spec.scope or scope
        if kind is None:
            raise ImportRefused("Pass a scope for the new entities.")
        entities: dict[str, Entity] = {}

        def route(item: SourceItem) -> Entity:
            key = f"{entity_key}:{item.entity}"
            if key not in entities:
                entities[key] = _entity_for(
                    team=team, key=key, scope=kind, tz=tz, name=None, created=made
                )
            return entities[key]
    else:
        existing = entity_get(team=team, key=entity_key)
        kind = spec.scope or scope or (existing.scope if existing else None)
        if existing is None and kind is None:
            raise ImportRefused(
                f"Team {team.slug!r} has no entity {entity_key!r}; pass a scope (and a time "
                "zone) to create it."
            )
        zone_name = tz or (existing.timezone if existing is not None and spec.needs_tz else None)
        if spec.needs_tz and not zone_name:
            raise ImportRefused(f"{spec.name} files have no time zone: pass a time zone.")
        assert kind is not None
        entity = _entity_for(team=team, key=entity_key, scope=kind, tz=tz, name=name, created=made)
        tz = zone_name
    try:
        reader = spec.factory(path, ZoneInfo(tz) if tz else None)
    except (OSError, ValueError) as err:
        raise ImportRefused(f"{path}: {err}") from None
    size = (
        path.stat().st_size
        if path.is_file()
        else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    )
    return ImportPlan(reader, size, entity, route, spec.multi_entity, kind)


def run_import(
    plan: ImportPlan,
    *,
    strict: bool = False,
    batch_size: int = IMPORT_BATCH,
    progress: Callable[[ImportSummary], None] | None = None,
    pipeline: bool = False,
    skip: int = 0,
    pause: Callable[[ImportSummary], bool] | None = None,
) -> ImportSummary:
    """Import a planned file; ``pipeline``: read in a second process while this one stores.

    The pipeline needs fork (not Windows) and a process allowed to have children (the command,
    not a Celery worker's daemon process); elsewhere the import runs in this process, as it
    does in turns (``skip`` and ``pause``, see :func:`import_items`).
    """
    if pipeline and pipeline_available() and not skip and pause is None:
        return _import_pipelined(plan, strict=strict, batch_size=batch_size, progress=progress)
    tracked = _Tracked(plan.reader)
    stored = ImportSummary()  # as of the last stored batch

    def reading() -> Iterator[SourceItem]:
        try:
            yield from tracked
        except Exception as exc:  # the reader's, not the storing's: said as the pipeline says it
            raise _ReadingFailed(tracked.failure(exc)) from exc

    def counted(summary: ImportSummary) -> None:
        stored.imported = summary.imported
        if progress is not None:
            progress(summary)

    try:
        summary = import_items(
            entity=plan.entity,
            route=plan.route,
            items=reading(),
            strict=strict,
            batch_size=batch_size,
            progress=counted,
            skip=skip,
            pause=pause,
        )
    except _ReadingFailed as failed:
        raise _reading_failed(str(failed), stored.imported) from failed.__cause__
    summary.notes.extend(reader_notes(plan.reader))
    return summary


class _ReadingFailed(Exception):
    """The reader raised (its message: where, what): carried out of the storing loop."""


def describe(summary: ImportSummary, name: str, where: str, multi_entity: bool) -> str:
    """The human summary of an import, shared by the command and the upload page."""
    rejected = ", ".join(f"{k}: {v}" for k, v in sorted(summary.rejected.items()))
    lines = [
        f"{name} -> {where}{':*' if multi_entity else ''}: read {summary.read:,}, "
        f"imported {summary.imported:,}, duplicates {summary.duplicates:,}, "
        f"rejected {sum(summary.rejected.values()):,}"
        + (f" ({rejected})" if rejected else "")
        + (
            f", text fields dropped {summary.dropped_text_fields:,}"
            if summary.dropped_text_fields
            else ""
        )
    ]
    if multi_entity:
        lines += [f"  {key}: {count:,} new" for key, count in sorted(summary.per_entity.items())]
    lines += [f"  note: {note}" for note in summary.notes]
    return "\n".join(lines)
