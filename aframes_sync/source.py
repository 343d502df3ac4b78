"""Rows of a screenpipe-style database or an ActivityWatch server as event records, by UTC day.

The same readers and converter as ``manage.py import_events screenpipe`` / ``activitywatch``
(source keys ``sp:...`` / ``aw:...``), so importing a file and syncing it store each row once.
"""

from __future__ import annotations

import dataclasses
import json
import math
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from compiler.sources import DAY_S, SourceError, activitywatch, day_windows, screenpipe
from compiler.sources.events import records_from_capture

PREFIX = "sp"  # the importer's prefix: one source key per row whichever way it arrives
AW_PREFIX = "aw"  # manage.py import_events activitywatch's prefix, for the same reason
# How far past a window AFK events are fetched, so a span overlapping the next window's
# events merges as a read of the whole export merges it (AFK events rarely overlap at all).
LOOKAHEAD_S = 86_400.0
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
        yield from day_windows(low, span[1] + END_PAD_S)

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


class ActivityWatchServerSource:
    """A running ActivityWatch server's buckets, read over its REST API one UTC day at a time.

    The rows are those ``manage.py import_events activitywatch`` makes of a full export of the
    same server (source keys ``aw:s<id>``, ``aw:a<id>``): the reader's ids come from each event's
    own start (:mod:`compiler.sources.activitywatch`), so a day fetched alone gets the ids a
    read of the whole export gives.
    """

    def __init__(self, url: str, *, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.api = f"{self.url}/api/0"
        self.timeout = timeout
        self.notes: list[str] = []

    @property
    def name(self) -> str:
        return f"activitywatch-server:{self.url}"

    def _get(self, path: str, **query: str) -> Any:
        address = f"{self.api}{path}" + (f"?{urlencode(query)}" if query else "")
        try:
            with urllib.request.urlopen(address, timeout=self.timeout) as response:
                return json.load(response)
        except urllib.error.HTTPError as err:
            raise SourceError(
                f"ActivityWatch server {self.url}: GET {path} answered {err.code} {err.reason}."
            ) from None
        except (urllib.error.URLError, OSError) as err:
            raise SourceError(
                f"ActivityWatch server {self.url} is unreachable ({err}); is aw-server running?"
            ) from None
        except ValueError as err:
            raise SourceError(
                f"ActivityWatch server {self.url}: GET {path}: not JSON ({err})."
            ) from None

    def _buckets(self) -> dict[str, Any]:
        buckets = self._get("/buckets/")
        if not isinstance(buckets, dict):
            raise SourceError(f"ActivityWatch server {self.url}: /buckets/ is not an object.")
        return buckets

    def _events(self, bucket_id: str, **query: str) -> list[dict[str, Any]]:
        events = self._get(f"/buckets/{quote(bucket_id, safe='')}/events", limit="-1", **query)
        if not isinstance(events, list):
            raise SourceError(
                f"ActivityWatch server {self.url}: events of {bucket_id!r}: not a list."
            )
        return events

    def _count(self, bucket_id: str, **query: str) -> int:
        count = self._get(f"/buckets/{quote(bucket_id, safe='')}/events/count", **query)
        if not isinstance(count, int):
            raise SourceError(
                f"ActivityWatch server {self.url}: count of {bucket_id!r}: not a number."
            )
        return count

    def span(self) -> tuple[float, float] | None:
        """The earliest event time (to the UTC day) and the latest event end, or None."""
        ends = [
            _moment(bucket["last_updated"]).timestamp()
            for bucket in self._buckets().values()
            if isinstance(bucket, dict) and isinstance(bucket.get("last_updated"), str)
        ]
        if not ends:
            return None
        return self._first_day(max(ends)), max(ends)

    def _first_day(self, latest: float) -> float:
        """The start of the first UTC day holding an event, by bisecting event counts."""
        buckets = list(self._buckets())
        low, high = 0, math.floor(latest / DAY_S) + 1  # some day in [low, high) holds one
        while high - low > 1:
            middle = (low + high) // 2
            before = sum(self._count(b, end=_iso(middle * DAY_S)) for b in buckets)
            low, high = (low, middle) if before else (middle, high)
        return low * DAY_S

    def windows(self, start: float | None) -> Iterator[tuple[float, float]]:
        """[start, end) windows of at most one UTC day from ``start`` to past the newest end."""
        span = self.span()
        if span is None:
            return
        low = span[0] if start is None else start
        yield from day_windows(low, span[1] + END_PAD_S)

    def export(self, start: float, end: float) -> dict[str, Any]:
        """Every bucket with the events the window needs.

        The events overlapping the window are fetched, and with them every later event up to
        a day past the window's end, so an AFK span that overlaps the next one is merged as a
        read of the whole export merges it. Row ids come from the events themselves, so this
        part of each bucket gives the ids the whole export gives.
        """
        buckets: dict[str, Any] = {}
        for bucket_id, meta in sorted(self._buckets().items()):
            bucket = {**meta, "id": bucket_id, "events": []} if isinstance(meta, dict) else meta
            buckets[bucket_id] = bucket
            found = self._events(bucket_id, start=_iso(start), end=_iso(end))
            if not found:
                continue
            first = min(_moment(e.get("timestamp")) for e in found)
            block = [
                e
                for e in self._events(
                    bucket_id, start=first.isoformat(), end=_iso(end + LOOKAHEAD_S)
                )
                if _moment(e.get("timestamp")) >= first
            ]
            bucket["events"] = [
                {key: e[key] for key in ("timestamp", "duration", "data") if key in e}
                for e in block
            ]
        return {"buckets": buckets}

    def records(self, start: float, end: float) -> list[tuple[float, dict[str, Any]]]:
        """The window's snapshot rows, and the AFK absences that start in it, in time order.

        An interval that began before the window gives only its rows inside it; an absence
        is sent whole by the window it starts in, as the importer stores it.
        """
        whole = activitywatch.read_export(self.export(start, end), name=self.name)
        capture = dataclasses.replace(
            whole,
            snapshots=[s for s in whole.snapshots if start <= s.t < end],
            absences=[a for a in whole.absences if start <= a.start < end],
        )
        for sentence in capture.disclosures:
            if sentence not in self.notes:
                self.notes.append(sentence)
        timed = [
            (datetime.fromisoformat(record["occurred_at"]).timestamp(), record)
            for _location, record in records_from_capture(capture, AW_PREFIX)
        ]
        timed.sort(key=lambda item: item[0])
        return timed


def _moment(text: Any) -> datetime:
    """An ActivityWatch timestamp as an aware datetime (naive ones are UTC, as the reader says)."""
    try:
        if not isinstance(text, str):
            raise TypeError(text)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        raise SourceError(f"ActivityWatch timestamp {text!r} is not ISO 8601.") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="microseconds")
