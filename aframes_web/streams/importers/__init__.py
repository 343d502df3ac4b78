"""File formats ``manage.py import_events`` reads. One parser per format in the whole project.

A reader turns a file into :class:`SourceItem` s: an event item (a dict in our record shape) or
a line it could not read, each with its location for error reports. Readers stream: memory use
does not grow with the file. Formats whose files hold several entities (one per Fitbit Id, one
per repository, ...) name the sub-entity of each item; the importer routes items to
``<--entity>:<sub>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from zoneinfo import ZoneInfo


# Not frozen: a frozen dataclass sets each field through object.__setattr__ (~0.8 us an item),
# and an import makes an item for every line of files with millions of them.
@dataclass(slots=True)
class SourceItem:
    location: str  # "file:line" (or another position the format has)
    item: Any = None
    error: str | None = None
    entity: str | None = None  # sub-entity of a multi-entity format, e.g. a Fitbit Id


class Reader(Protocol):
    #: bytes consumed so far, for progress against the file size
    bytes_read: int

    def __iter__(self) -> Iterator[SourceItem]: ...


ReaderFactory = Callable[[Path, ZoneInfo | None], Reader]


@dataclass(frozen=True)
class Format:
    """What the importer needs to know about a file format."""

    name: str
    factory: ReaderFactory
    scope: str | None  # the entity scope it produces; None: any (our own JSONL)
    needs_tz: bool = False  # the format writes local times without an offset
    multi_entity: bool = False  # items name their sub-entity
    description: str = ""


def formats() -> dict[str, Format]:
    from aframes_web.streams.importers import (
        casas,
        desktop,
        fitbit,
        github,
        heartsteps,
        jsonl,
        ordonez,
    )

    registry = [
        jsonl.FORMAT,
        desktop.SCREENPIPE,
        desktop.ACTIVITYWATCH,
        casas.FORMAT,
        ordonez.FORMAT,
        heartsteps.FORMAT,
        fitbit.FORMAT,
        github.FORMAT,
    ]
    return {spec.name: spec for spec in registry}
