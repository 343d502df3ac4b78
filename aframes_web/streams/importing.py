"""Streaming import of a file into one entity: batched, idempotent, with a summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from aframes_web.streams.importers import SourceItem, formats
from aframes_web.streams.models import Entity
from aframes_web.streams.selectors import entity_get
from aframes_web.streams.services import (
    EntityError,
    check_timezone,
    entity_create,
    events_store,
    validate_events,
)
from aframes_web.teams.models import Team

IMPORT_BATCH = 5000
PENDING_BATCHES = 4  # at most this many batches' worth of items wait, over all entities


class ImportAborted(Exception):
    """--strict met a bad line; batches before it are stored, the rest is not read."""


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


def import_items(
    *,
    items: Iterable[SourceItem],
    entity: Entity | None = None,
    route: Callable[[SourceItem], Entity] | None = None,
    strict: bool = False,
    batch_size: int = IMPORT_BATCH,
    progress: Callable[[ImportSummary], None] | None = None,
) -> ImportSummary:
    """Validate and store items batch by batch; bad items are reported, never stored.

    Items go to ``entity``, or to whatever ``route`` returns for them (multi-entity formats).
    """
    if (entity is None) == (route is None):
        raise ValueError("pass exactly one of entity and route")
    summary = ImportSummary()
    pending: dict[int, tuple[Entity, list[SourceItem]]] = {}
    # Files spread over thousands of entities (a GH Archive hour) must not hold a batch for
    # each: past this many waiting items, everything waiting is stored.
    max_waiting = batch_size * PENDING_BATCHES
    waiting = 0

    def flush(target: Entity, batch_items: list[SourceItem]) -> None:
        batch = validate_events(entity=target, items=[p.item for p in batch_items])
        bad = {error.index for error in batch.errors}
        for error in batch.errors:
            where = f"{error.field}: " if error.field else ""
            summary.reject(
                batch_items[error.index].location,
                error.field.split("[")[0] or "item",
                f"{where}{error.message}",
            )
        if bad and strict:
            raise ImportAborted(summary.problems[-1])
        batch.errors = []
        result = events_store(entity=target, batch=batch)
        summary.imported += result.accepted
        summary.duplicates += result.duplicates
        summary.dropped_text_fields += result.dropped_text_fields
        summary.per_entity[target.key] += result.accepted
        batch_items.clear()
        if progress is not None:
            progress(summary)

    for source in items:
        summary.read += 1
        if source.error is not None:
            summary.reject(source.location, "unreadable", source.error)
            if strict:
                raise ImportAborted(summary.problems[-1])
            continue
        target = entity if entity is not None else route(source)  # type: ignore[misc]
        slot = pending.setdefault(target.pk, (target, []))
        slot[1].append(source)
        waiting += 1
        if len(slot[1]) >= batch_size:
            waiting -= len(slot[1])
            flush(*slot)
        elif waiting >= max_waiting:
            for held, batch_items in pending.values():
                if batch_items:
                    flush(held, batch_items)
            waiting = 0
    for target, batch_items in pending.values():
        if batch_items:
            flush(target, batch_items)
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
    return ImportPlan(reader, size, entity, route, spec.multi_entity)


def run_import(
    plan: ImportPlan,
    *,
    strict: bool = False,
    batch_size: int = IMPORT_BATCH,
    progress: Callable[[ImportSummary], None] | None = None,
) -> ImportSummary:
    summary = import_items(
        entity=plan.entity,
        route=plan.route,
        items=plan.reader,
        strict=strict,
        batch_size=batch_size,
        progress=progress,
    )
    summary.notes.extend(getattr(plan.reader, "notes", []))
    return summary


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
