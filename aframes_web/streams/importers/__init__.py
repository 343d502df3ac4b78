"""File formats ``manage.py import_events`` reads. One parser per format in the whole project.

A reader turns a file into :class:`SourceItem` s: an event item (a dict in our record shape) or
a line it could not read, each with its location for error reports. Readers stream: memory use
does not grow with the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class SourceItem:
    location: str  # "file:line" (or another position the format has)
    item: Any = None
    error: str | None = None


class Reader(Protocol):
    #: bytes consumed so far, for progress against the file size
    bytes_read: int

    def __iter__(self) -> Iterator[SourceItem]: ...


ReaderFactory = Callable[[Path], Reader]


def formats() -> dict[str, ReaderFactory]:
    from aframes_web.streams.importers.jsonl import JsonlReader

    return {"jsonl": JsonlReader}
