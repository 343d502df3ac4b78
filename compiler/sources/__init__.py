"""Readers that turn a capture on disk into a :class:`compiler.capture.Capture`.

One module per format, each with ``read(path, start=None, end=None) -> Capture``:
``screenpipe`` (a screenpipe-style capture SQLite, opened read-only), ``activitywatch`` (an
ActivityWatch export, emulated as snapshot rows), ``jsonl`` (our own event records) and
``events`` (the converter from our event records that the others share with Django).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from compiler.capture import Capture
from compiler.sources._common import (
    DAY_S,
    SourceError,
    Window,
    day_windows,
    span_of,
    utc_iso,
)

__all__ = [
    "DAY_S",
    "FORMATS",
    "SourceError",
    "Window",
    "day_windows",
    "open_reader",
    "open_source",
    "utc_iso",
]

FORMATS = ("screenpipe", "activitywatch", "jsonl")


def open_source(
    spec: str,
    start: float | None = None,
    end: float | None = None,
    *,
    input_context: bool = True,
    index: bool = False,
) -> Capture:
    """Read ``FORMAT:PATH`` (screenpipe, activitywatch or jsonl) for the window [start, end).

    ``input_context=False`` lets a reader leave out each input event's own app, window title
    and URL, which compiling never uses; the screenpipe reader then reads less (the other
    formats are read whole anyway and keep them). ``index``: an ActivityWatch export's window
    is read through the export's index, made at the first such read (the command line's
    reads: ``compiler.sources.aw_index``).
    """
    return open_reader(spec, input_context=input_context, span=span_of(start, end), index=index)(
        start, end
    )


def open_reader(
    spec: str,
    *,
    input_context: bool = True,
    span: tuple[float, float] | None = None,
    index: bool = False,
) -> Callable[[Window, Window], Capture]:
    """A reader of ``FORMAT:PATH`` for any number of windows: ``reader(start, end)`` gives what
    :func:`open_source` gives. An ActivityWatch export is parsed here, once for all windows,
    or for the windows within ``span`` only (a day or a range of days of an export that holds
    every day since the watcher was installed: what lies outside is checked, not kept); a
    screenpipe database and a JSONL file are read per window (by index, and as a stream)."""
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
    # Only the named format's reader is imported: a one-shot CLI call pays for one reader.
    if name == "screenpipe":
        from compiler.sources import screenpipe

        return lambda start, end: screenpipe.read(path, start, end, input_context=input_context)
    if name == "activitywatch":
        from compiler.sources import activitywatch

        return activitywatch.open_export(path, span=span, index=index).read
    from compiler.sources import jsonl

    return lambda start, end: jsonl.read(path, start, end)
