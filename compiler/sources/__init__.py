"""Readers that turn a capture on disk into a :class:`compiler.capture.Capture`.

One module per format, each with ``read(path, start=None, end=None) -> Capture``:
``screenpipe`` (a screenpipe-style capture SQLite, opened read-only), ``activitywatch`` (an
ActivityWatch export, emulated as snapshot rows), ``jsonl`` (our own event records) and
``events`` (the converter from our event records that the others share with Django).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from compiler.capture import Capture

FORMATS = ("screenpipe", "activitywatch", "jsonl")
Window = float | None  # a window's edge in epoch seconds; None leaves that side open


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


def open_source(
    spec: str,
    start: float | None = None,
    end: float | None = None,
    *,
    input_context: bool = True,
) -> Capture:
    """Read ``FORMAT:PATH`` (screenpipe, activitywatch or jsonl) for the window [start, end).

    ``input_context=False`` lets a reader leave out each input event's own app, window title
    and URL, which compiling never uses; the screenpipe reader then reads less (the other
    formats are read whole anyway and keep them).
    """
    return open_reader(spec, input_context=input_context)(start, end)


def open_reader(spec: str, *, input_context: bool = True) -> Callable[[Window, Window], Capture]:
    """A reader of ``FORMAT:PATH`` for any number of windows: ``reader(start, end)`` gives what
    :func:`open_source` gives. An ActivityWatch export is parsed here, once for all windows;
    a screenpipe database and a JSONL file are read per window (by index, and as a stream)."""
    name, sep, path = spec.partition(":")
    if not sep or not path:
        raise SourceError(
            f"source {spec!r} has no format; write FORMAT:PATH with FORMAT one of "
            f"{', '.join(FORMATS)}, e.g. screenpipe:~/capture.sqlite."
        )
    if name not in FORMATS:
        raise SourceError(
            f"unknown source format {name!r} in {spec!r}; use one of {', '.join(FORMATS)}."
        )
    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        raise SourceError(f"{path}: no such file; check the path after {name + ':'!r}.")
    # Imported here: the reader modules import SourceError from this package.
    if name == "screenpipe":
        from compiler.sources import screenpipe

        return lambda start, end: screenpipe.read(path, start, end, input_context=input_context)
    if name == "activitywatch":
        from compiler.sources import activitywatch

        return activitywatch.open_export(path).read
    from compiler.sources import jsonl

    return lambda start, end: jsonl.read(path, start, end)
