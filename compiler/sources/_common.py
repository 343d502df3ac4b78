"""Small helpers the readers share: ISO timestamps to epoch seconds, windows, plain wording."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from compiler.sources import SourceError

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
