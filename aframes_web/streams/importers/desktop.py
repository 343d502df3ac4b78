"""Desktop capture files: screenpipe-style SQLite and ActivityWatch exports.

Both are parsed by the compiler's own readers (one parser per format in the whole project) and
turned into our event records: snapshots, input events, element trees and absences, each with
a source key derived from the file's own ids, so a re-import or an extended file adds only
what is new. A screenpipe database is read one UTC day at a time, so memory stays bounded.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from aframes_web.streams.importers import Format, SourceItem
from compiler.capture import Capture
from compiler.sources import SourceError, activitywatch, screenpipe

DAY_S = 86_400.0


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def capture_records(capture: Capture, prefix: str, name: str) -> Iterator[SourceItem]:
    """Our event records for everything in a capture, keyed by the capture's own ids."""
    trees = capture.elements_for([s.id for s in capture.snapshots])
    for s in capture.snapshots:
        key = f"{prefix}:s{s.id}"
        yield SourceItem(
            f"{name}:snapshot {s.id}",
            item={
                "occurred_at": _iso(s.t),
                "kind": "snapshot",
                "source_key": key,
                "monitor": s.monitor,
                "payload": {"app": s.app, "window": s.window, "url": s.url},
            },
        )
        tree = trees.get(s.id)
        if tree:
            yield SourceItem(
                f"{name}:elements of {s.id}",
                item={
                    "occurred_at": _iso(s.t),
                    "kind": "elements",
                    "source_key": f"{prefix}:e{s.id}",
                    "monitor": s.monitor,
                    "payload": {
                        "snapshot": key,
                        "elements": [
                            {
                                "role": e.role or "unknown",
                                "name": e.name,
                                "bounds": list(e.bounds) if e.bounds else None,
                            }
                            for e in tree
                        ],
                    },
                },
            )
    for e in capture.inputs:
        payload: dict[str, Any] = {
            "type": e.type,
            "x": _number(e.x),
            "y": _number(e.y),
            "app": e.app,
            "window": e.window,
            "url": e.url,
            "element_name": e.element_name,
            "element_role": e.element_role,
        }
        if e.text is not None:
            payload["text"] = e.text  # dropped at ingestion unless the team opted in
        yield SourceItem(
            f"{name}:input {e.id}",
            item={
                "occurred_at": _iso(e.t),
                "kind": "input",
                "source_key": f"{prefix}:i{e.id}",
                "monitor": e.monitor,
                "payload": payload,
            },
        )
    for a in capture.absences:
        yield SourceItem(
            f"{name}:absence {a.id}",
            item={
                "occurred_at": _iso(a.start),
                "kind": "absence",
                "source_key": f"{prefix}:a{a.id}",
                "monitor": a.monitor or "",
                "payload": {"end": _iso(a.end), "reason": a.reason, "monitor": a.monitor},
            },
        )


class ScreenpipeReader:
    """A capture database, day by day (UTC), with the compiler's screenpipe reader."""

    def __init__(self, path: Path, tz: ZoneInfo | None = None) -> None:
        self.path = path
        self.bytes_read = 0
        self.notes: list[str] = []
        self._size = path.stat().st_size

    def _span(self) -> tuple[float, float] | None:
        connection = screenpipe.connect(self.path)
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # is it SQLite?
            lows, highs = [], []
            for table in ("frames", "ui_events"):
                try:
                    low, high = connection.execute(
                        f'SELECT min("timestamp"), max("timestamp") FROM {table}'
                    ).fetchone()
                except sqlite3.OperationalError:  # a missing table; the reader discloses it
                    continue
                for value, into in ((low, lows), (high, highs)):
                    if isinstance(value, str):
                        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
                        if moment.tzinfo is None:
                            moment = moment.replace(tzinfo=UTC)
                        into.append(moment.timestamp())
            return (min(lows), max(highs)) if lows and highs else None
        finally:
            connection.close()

    def __iter__(self) -> Iterator[SourceItem]:
        try:
            span = self._span()
        except (sqlite3.Error, ValueError) as err:  # an unreadable database is one clear line
            yield SourceItem(self.path.name, error=f"not a readable capture database ({err})")
            return
        if span is None:
            self.notes.append("the database holds no frames or input events")
            return
        day = math.floor(span[0] / DAY_S) * DAY_S
        total = max(span[1] - day, 1.0)
        seen: set[str] = set()
        while day <= span[1]:
            try:
                capture = screenpipe.read(self.path, day, day + DAY_S)
            except SourceError as err:
                yield SourceItem(self.path.name, error=str(err))
                return
            for sentence in capture.disclosures:
                if sentence not in seen:
                    seen.add(sentence)
                    self.notes.append(sentence)
            yield from capture_records(capture, "sp", self.path.name)
            day += DAY_S
            self.bytes_read = int(self._size * min((day - span[0]) / total, 1.0))


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
