"""Rows of a screenpipe-style capture database as our event records, one UTC day at a time.

The same reader and converter as ``manage.py import_events screenpipe`` (source keys
``sp:s<id>``, ``sp:e<id>``, ``sp:i<id>``), so importing a file and syncing it store each row once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from compiler.sources import screenpipe
from compiler.sources.events import records_from_capture

PREFIX = "sp"  # the importer's prefix: one source key per row whichever way it arrives
DAY_S = 86_400.0
# The window's end lies past the newest row so that row is read; rows written later in the
# same second are caught by the resume overlap.
END_PAD_S = 1.0


class ScreenpipeSource:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.notes: list[str] = []

    @property
    def name(self) -> str:
        return f"screenpipe:{self.path.resolve()}"

    def span(self) -> tuple[float, float] | None:
        """The earliest and latest row times in the database, or None when it is empty."""
        return screenpipe.time_span(self.path)

    def windows(self, start: float | None) -> Iterator[tuple[float, float]]:
        """[start, end) windows of at most one UTC day from ``start`` to past the newest row."""
        span = self.span()
        if span is None:
            return
        low = span[0] if start is None else max(start, span[0])
        high = span[1] + END_PAD_S
        while low < high:
            end = min((math.floor(low / DAY_S) + 1) * DAY_S, high)
            yield low, end
            low = end

    def records(self, start: float, end: float) -> list[tuple[float, dict[str, Any]]]:
        """The window's records with their times, in time order (a tree after its snapshot)."""
        capture = screenpipe.read(self.path, start, end)
        for sentence in capture.disclosures:
            if sentence not in self.notes:
                self.notes.append(sentence)
        timed = [
            (datetime.fromisoformat(record["occurred_at"]).timestamp(), record)
            for _location, record in records_from_capture(capture, PREFIX)
        ]
        timed.sort(key=lambda item: item[0])  # stable: a tree stays after its snapshot
        return timed
