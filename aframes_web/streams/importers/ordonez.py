"""The Ordóñez ADL binary-sensor files (UCI dataset 271) as a home's observation events.

``<Name>_Sensors.txt`` holds one row per sensor activation interval, in naive local time::

    Start time  End time  Location  Type  Place          (header, then a ruler of dashes)
    2011-11-28 02:27:59  2011-11-28 10:18:11  Bed  Pressure  Bedroom

Columns are padded with runs of tabs (sometimes with a stray space beside them) and lines end
in CRLF. Each interval becomes **two** events, the sensor's native ON and OFF transitions: the
dataset is derived from binary sensors firing, and a home's event stream (ProactMem) should see
each change when it happens, not a summary stamped at the start. The ON event deliberately does
*not* carry the interval's end: a causal replay (principle 4) deciding at the ON event must not
learn when the sensor will go off. The OFF event carries ``interval_start`` (the past), so the two
can be paired exactly.

Ground truth comes from ``<Name>_ADLs.txt`` beside the sensors file (rows ``Start  End
Activity``). The labels file is small (hundreds of rows) and is loaded whole; the sensors file is
streamed. The activity (or activities, when hand labels overlap) in progress at each event's
instant goes into ``payload["private"]["activity"]`` and nowhere else; ``None`` means the
labeller marked nothing then. Without a labels file events carry no ``private`` block at all.

Source keys name the home, the event's own local time as written, the sensor and the
transition (``ordonez:OrdonezA:2011-11-28T02:27:59:Bed:Bedroom:pressure:on``); OFF keys add
the interval start. Identical rows are the same events (the importer skips the repeat); rows
that differ in anything an event shows stay apart. Keys do not depend on line numbers, so an
extended file imports only its new rows. A row ending before it starts, or without five columns,
is a bad line (``file:line``); rows out of time order are imported and counted in ``notes``.

``ActivityTimeline`` and the note helpers here are shared with the CASAS reader (``casas.py``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from aframes_web.streams.importers.base import Format, ReadLimits, SourceItem, bounded_lines
from aframes_web.streams.importers.labels import (
    ActivityTimeline,
    Span,
    activity_value,
    decode_line,
    lines_note,
    plural,
)
from aframes_web.streams.importers.localtime import DstTally, dst_notes, iso_utc, to_utc
from aframes_web.streams.records import SOURCE_KEY_MAX

SENSORS_SUFFIX = "_Sensors"
LABELS_SUFFIX = "_ADLs"
# Columns are separated by runs of tabs; B_ADLs.txt has "\t \t" in a few rows.
_SEPARATOR = re.compile(r"[ \t]*\t[ \t]*")
_RULER = re.compile(r"[-\t ]+")
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def _fields(text: str) -> list[str] | None:
    """The columns of a data row, or None for a blank, header or ruler line."""
    stripped = text.strip()
    if not stripped or stripped.startswith("Start time") or _RULER.fullmatch(stripped):
        return None
    return [field for field in _SEPARATOR.split(stripped) if field]


def _local(text: str) -> datetime:
    try:
        return datetime.strptime(text, _TIME_FORMAT)  # noqa: DTZ007 - naive local by design
    except ValueError:
        raise ValueError(f"{text!r} is not a time as YYYY-MM-DD HH:MM:SS") from None


class OrdonezReader:
    def __init__(self, path: Path, zone: ZoneInfo | None) -> None:
        if zone is None:
            raise ValueError("Ordóñez files hold naive local times: pass --tz (Europe/Madrid).")
        if not path.is_file():
            raise ValueError("pass the <Name>_Sensors.txt file.")
        stem = path.stem
        if stem.endswith(LABELS_SUFFIX):
            raise ValueError(
                f"{path.name} is the activity label file; pass the matching "
                f"{stem[: -len(LABELS_SUFFIX)]}{SENSORS_SUFFIX}.txt (labels are read from "
                "beside it)."
            )
        self.path = path
        self.zone = zone
        self.home = stem[: -len(SENSORS_SUFFIX)] if stem.endswith(SENSORS_SUFFIX) else stem
        self.labels_path = path.with_name(f"{self.home}{LABELS_SUFFIX}{path.suffix}")
        self.bytes_read = 0
        self.notes: list[str] = []

    def _load_labels(self) -> ActivityTimeline | None:
        if not self.path.stem.endswith(SENSORS_SUFFIX) or not self.labels_path.is_file():
            self.notes.append(
                f"no activity labels: {self.labels_path.name} not found beside {self.path.name}; "
                "events were imported without ground truth"
            )
            return None
        spans: list[Span] = []
        unreadable: list[int] = []
        backwards: list[int] = []
        tally = DstTally()
        limits = ReadLimits.for_file(self.labels_path, gzipped=False)
        with self.labels_path.open("rb") as handle:
            lines = bounded_lines(handle, self.labels_path.name, limits)
            for number, raw in enumerate(lines, start=1):
                fields = _fields(decode_line(raw))
                if fields is None:
                    continue
                try:
                    if len(fields) != 3:
                        raise ValueError
                    start, end = _local(fields[0]), _local(fields[1])
                except ValueError:
                    unreadable.append(number)
                    continue
                if end < start:
                    backwards.append(number)
                    continue
                spans.append(
                    Span(to_utc(start, self.zone, tally), to_utc(end, self.zone, tally), fields[2])
                )
        name = self.labels_path.name
        if unreadable:
            self.notes.append(
                lines_note(
                    f"{name}: {plural(len(unreadable), 'label row', 'label rows')} unreadable",
                    unreadable,
                )
            )
        if backwards:
            self.notes.append(
                lines_note(
                    f"{name}: {plural(len(backwards), 'label row', 'label rows')} ending before "
                    "the start, left out",
                    backwards,
                )
            )
        self.notes.extend(dst_notes(f"label times in {name}", tally))
        return ActivityTimeline(spans)

    def _key(self, *parts: str) -> str:
        key = ":".join(("ordonez", self.home, *parts))
        if len(key) > SOURCE_KEY_MAX:
            # Only absurdly long sensor names get here; a digest keeps the key unique.
            digest = hashlib.sha256(key.encode()).hexdigest()[:32]
            key = f"{key[: SOURCE_KEY_MAX - len(digest) - 1]}~{digest}"
        return key

    def __iter__(self) -> Iterator[SourceItem]:
        labels = self._load_labels()
        tally = DstTally()
        earlier_rows: list[int] = []
        previous_start: datetime | None = None
        name = self.path.name
        limits = ReadLimits.for_file(self.path, gzipped=False)
        with self.path.open("rb") as handle:
            for number, raw in enumerate(bounded_lines(handle, name, limits), start=1):
                self.bytes_read += len(raw)
                location = f"{name}:{number}"
                fields = _fields(decode_line(raw))
                if fields is None:
                    continue
                if len(fields) != 5:
                    yield SourceItem(
                        location,
                        error=f"expected 5 tab-separated columns (Start time, End time, Location, "
                        f"Type, Place), found {len(fields)}",
                    )
                    continue
                start_text, end_text, sensor, kind, place = fields
                try:
                    start, end = _local(start_text), _local(end_text)
                except ValueError as exc:
                    yield SourceItem(location, error=str(exc))
                    continue
                if end < start:
                    yield SourceItem(
                        location, error=f"the interval ends ({end_text}) before it starts"
                    )
                    continue
                if previous_start is not None and start < previous_start:
                    earlier_rows.append(number)
                previous_start = start
                start_utc = to_utc(start, self.zone, tally)
                end_utc = to_utc(end, self.zone, tally)
                sensor_type = kind.lower()
                where = (sensor, place, sensor_type)
                attributes = {"sensor": sensor, "place": place}
                start_key = start.isoformat()
                yield SourceItem(
                    location,
                    item=self._event(
                        start_utc,
                        self._key(start_key, *where, "on"),
                        sensor_type,
                        "ON",
                        attributes,
                        labels,
                    ),
                )
                yield SourceItem(
                    location,
                    item=self._event(
                        end_utc,
                        self._key(end.isoformat(), *where, "off", start_key),
                        sensor_type,
                        "OFF",
                        {**attributes, "interval_start": iso_utc(start_utc)},
                        labels,
                    ),
                )
        if earlier_rows:
            self.notes.append(
                lines_note(
                    f"{name}: {plural(len(earlier_rows), 'row starts', 'rows start')} before "
                    "the row above (imported as written)",
                    earlier_rows,
                )
            )
        self.notes.extend(dst_notes(f"sensor times in {name}", tally))

    @staticmethod
    def _event(
        moment: datetime,
        key: str,
        sensor_type: str,
        value: str,
        attributes: dict[str, str],
        labels: ActivityTimeline | None,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {"type": sensor_type, "value": value, "attributes": attributes}
        if labels is not None:
            payload["private"] = {"activity": activity_value(labels.at(moment))}
        return {
            "occurred_at": iso_utc(moment),
            "kind": "observation",
            "source_key": key,
            "payload": payload,
        }


FORMAT = Format(
    name="ordonez",
    factory=OrdonezReader,
    scope="home",
    needs_tz=True,
    multi_entity=False,
    description="Ordóñez ADL binary sensors (UCI 271): PATH is <Name>_Sensors.txt, labels are "
    "read from <Name>_ADLs.txt beside it; two events (ON, OFF) per interval",
)
