"""Streaming import of a file into one entity: batched, idempotent, with a summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from aframes_web.streams.importers import SourceItem
from aframes_web.streams.models import Entity
from aframes_web.streams.services import events_store, validate_events

IMPORT_BATCH = 5000


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
        if len(slot[1]) >= batch_size:
            flush(*slot)
    for target, batch_items in pending.values():
        if batch_items:
            flush(target, batch_items)
    return summary
