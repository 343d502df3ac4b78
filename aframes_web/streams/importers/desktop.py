"""Desktop capture files: screenpipe-style SQLite and ActivityWatch exports.

Both are parsed by the compiler's own readers (one parser per format in the whole project) and
turned into our event records: snapshots, input events, element trees and absences, each with
a source key derived from the file's own ids, so a re-import or an extended file adds only
what is new. A screenpipe database is read one UTC day at a time, so memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

from aframes_web.streams.importers.base import Format, SourceItem
from compiler.capture import Capture
from compiler.sources import SourceError, activitywatch, day_windows, screenpipe
from compiler.sources.events import records_from_capture

END_PAD_S = 1.0  # windows end past the newest row so it is read


def capture_records(capture: Capture, prefix: str, name: str) -> Iterator[SourceItem]:
    """Import items for everything in a capture (see ``records_from_capture``)."""
    for location, record in records_from_capture(capture, prefix):
        yield SourceItem(f"{name}:{location}", item=record)


class ScreenpipeReader:
    """A capture database, day by day (UTC), with the compiler's screenpipe reader."""

    def __init__(self, path: Path, tz: ZoneInfo | None = None) -> None:
        self.path = path
        self.bytes_read = 0
        self.notes: list[str] = []
        self._size = path.stat().st_size

    def __iter__(self) -> Iterator[SourceItem]:
        try:
            database = screenpipe.CaptureDatabase(self.path)
        except SourceError as err:  # an unreadable database is one clear line
            yield SourceItem(self.path.name, error=str(err))
            return
        # One connection for the whole walk: each day's read reuses it and its schema.
        with database:
            yield from self._walk(database)

    def _walk(self, database: screenpipe.CaptureDatabase) -> Iterator[SourceItem]:
        try:
            span = database.time_span()
        except SourceError as err:
            yield SourceItem(self.path.name, error=str(err))
            return
        if span is None:
            self.notes.append("the database holds no frames or input events")
            return
        low, high = span[0], span[1] + END_PAD_S
        seen: set[str] = set()
        for start, end in day_windows(low, high):
            try:
                capture = database.read(start, end)
            except SourceError as err:
                yield SourceItem(self.path.name, error=str(err))
                return
            for sentence in capture.disclosures:
                if sentence not in seen:
                    seen.add(sentence)
                    self.notes.append(sentence)
            yield from capture_records(capture, "sp", self.path.name)
            self.bytes_read = int(self._size * (end - low) / (high - low))


class ActivityWatchReader:
    """An ActivityWatch export, emulated as snapshot rows by the compiler's reader.

    The export is one JSON document, so it is read whole (exports are small: a year of
    window events is tens of megabytes).
    """

    def __init__(self, path: Path, tz: ZoneInfo | None = None) -> None:
        self.path = path
        self.bytes_read = 0
        self.notes: list[str] = []

    def __iter__(self) -> Iterator[SourceItem]:
        try:
            capture = activitywatch.read(self.path)
        except SourceError as err:
            yield SourceItem(self.path.name, error=str(err))
            return
        self.notes.extend(capture.disclosures)
        yield from capture_records(capture, "aw", self.path.name)
        self.bytes_read = self.path.stat().st_size


SCREENPIPE = Format(
    name="screenpipe",
    factory=ScreenpipeReader,
    scope="desktop",
    description="screenpipe-style capture SQLite (frames, ui_events, elements), read-only",
)
ACTIVITYWATCH = Format(
    name="activitywatch",
    factory=ActivityWatchReader,
    scope="desktop",
    description="ActivityWatch export JSON (window, web and afk buckets)",
)
