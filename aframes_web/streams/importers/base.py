"""The shared parts of every importer: the item a reader yields, read limits, line readers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol
from zoneinfo import ZoneInfo

from django.conf import settings

# However small a gzip file, this much may come out of it before the ratio counts.
UNPACKED_FLOOR = 64 << 20


class FileTooStrange(ValueError):
    """A line too long to hold, or a compressed file that unpacks far beyond any real export:
    the import stops there, saying so, and what was stored before stays stored."""


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """How long one line may be, and how much a compressed file may unpack to (bytes)."""

    line: int
    unpacked: int | None  # None: a plain file, read as it is

    @classmethod
    def for_file(cls, path: Path, *, gzipped: bool) -> ReadLimits:
        line = settings.AFRAMES_IMPORT_MAX_LINE_MB << 20
        if not gzipped:
            return cls(line, None)
        ratio = settings.AFRAMES_IMPORT_MAX_UNPACK_RATIO
        return cls(line, max(UNPACKED_FLOOR, ratio * path.stat().st_size))

    def too_long(self, name: str, number: int) -> FileTooStrange:
        return FileTooStrange(
            f"{name}: line {number} is longer than {self.line >> 20} MiB "
            "(AFRAMES_IMPORT_MAX_LINE_MB); nothing from it on was read"
        )

    def too_much(self, name: str) -> FileTooStrange:
        return FileTooStrange(
            f"{name}: unpacks to more than {self.unpacked or 0:,} bytes, "
            f"{settings.AFRAMES_IMPORT_MAX_UNPACK_RATIO}x its compressed size "
            "(AFRAMES_IMPORT_MAX_UNPACK_RATIO); nothing after that was read"
        )


def bounded_lines(handle: IO[bytes], name: str, limits: ReadLimits) -> Iterator[bytes]:
    """Every line of ``handle`` as iterating it gives them (for readers that need each line,
    such as CSV's quoted line breaks), never holding more than one line's limit; a longer line,
    or unpacking past the limit, raises :class:`FileTooStrange`."""
    number = unpacked = 0
    while line := handle.readline(limits.line + 1):
        number += 1
        if len(line) > limits.line:
            raise limits.too_long(name, number)
        unpacked += len(line)
        if limits.unpacked is not None and unpacked > limits.unpacked:
            raise limits.too_much(name)
        yield line


BLOCK = 1 << 20  # bytes read at a time by numbered_lines


def numbered_lines(
    handle: IO[bytes], name: str, limits: ReadLimits, *, block: int = BLOCK
) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` for each line of ``handle`` that is not empty, as iterating the
    file numbers them (the line without its ``\n``), read a block at a time: a run of empty
    lines costs next to nothing, so a file of newlines that unpacks to gigabytes is read at
    block speed until a limit stops it. Limits as :func:`bounded_lines`."""
    number = unpacked = 0
    rest = b""
    while chunk := handle.read(block):
        unpacked += len(chunk)
        if limits.unpacked is not None and unpacked > limits.unpacked:
            raise limits.too_much(name)
        parts = (rest + chunk if rest else chunk).split(b"\n")
        rest = parts.pop()
        for offset, part in enumerate(parts, number + 1):
            if part:
                if len(part) > limits.line:
                    raise limits.too_long(name, offset)
                yield offset, part
        number += len(parts)
        if len(rest) > limits.line:
            raise limits.too_long(name, number + 1)
    if rest:
        yield number + 1, rest


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
