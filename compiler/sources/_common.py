"""Small helpers the readers share: ISO timestamps to epoch seconds, windows, plain wording."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from datetime import UTC, datetime

PathLike = str | os.PathLike[str]


def parse_iso(text: str) -> tuple[float, bool]:
    """Epoch seconds of an ISO 8601 timestamp and whether it was naive (then read as UTC).

    ``datetime.timestamp`` of an aware datetime divides whole microseconds exactly, so the
    float is the nearest one to the written instant.
    """
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC).timestamp(), True
    return moment.timestamp(), False


def in_window(t: float, start: float | None, end: float | None) -> bool:
    return (start is None or t >= start) and (end is None or t < end)


def require_file(path: PathLike) -> str:
    name = os.fspath(path)
    if not os.path.isfile(name):
        raise SourceError(f"{name}: no such file.")
    return name


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``1 row``, ``2 rows``: counts in disclosures read as plain sentences."""
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count:,} {word}"


Window = float | None  # a window's edge in epoch seconds; None leaves that side open


def span_of(start: Window, end: Window) -> tuple[float, float] | None:
    """The window [start, end) as a span a reader may keep to (both edges), or None where a
    side is open (the reader keeps everything)."""
    return (start, end) if start is not None and end is not None else None


DAY_S = 86_400.0


def day_windows(low: float, high: float) -> Iterator[tuple[float, float]]:
    """[start, end) windows from ``low`` to ``high`` that never cross a UTC midnight.

    Readers of large captures walk them this way so memory stays bounded by one day.
    """
    while low < high:
        end = min((math.floor(low / DAY_S) + 1) * DAY_S, high)
        yield low, end
        low = end


def utc_iso(t: float) -> str:
    """Epoch seconds as ISO 8601 UTC with microseconds and ``Z``, as our event records write it."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


class SourceError(Exception):
    """A capture could not be read: the message says which file, where, and what was wrong."""
