"""CASAS smart-home sensor logs (WSU) as a home's observation events, one event per line.

Lines are naive local time, fields separated by tabs or spaces (a tab may sit between date and
time; trailing fields may be empty). Three layouts are told apart line by line:

- **classic** (adlnormal, twor, aruba, milan, tulum, cairo, ...):
  ``date time sensor value [annotation]``, e.g. ``2010-11-04 00:03:50.209589 M003 ON Sleeping
  begin``. An annotation ``Name begin`` / ``Name end`` (also ``N-begin`` / ``N-start`` /
  ``N-end`` for numbered tasks) opens or closes an activity; any other annotation is a label of
  that line's event only (e.g. adlmr's ``2 2``).
- **two names** ``date time name1 name2 value label``, a per-event label; a line is read this
  way when the field after the first name is not a sensor value and the one after it is. Two
  spellings exist. Where the first name is a classic id (``LS012 Kitchen 34``) the second is its
  room. Where both are words, as in the real AL-Smarthome files (``Kitchen KitchenLight ON``,
  ``OutsideDoor Entry ON``, ``OutsideDoor FrontDoor OPEN``; REFERENCE.md, "CASAS layouts"), the
  first is the place and the second the device: the sensor is the *pair*, since one place holds
  several sensors (the entry's motion and the front door are two), and its kind comes from the
  device name and its messages (OPEN/CLOSE a door, ``*Light``/``*Lamp`` with ON/OFF a lamp,
  numbers a reading, other ON/OFF motion).
- **hh** (UCI "Human Activity Recognition from Continuous Ambient Sensor Data", whose README
  documents it): ``date time sensor room detail message sensortype [activity]``, told by a
  ``Vendor-Kind`` sensor type (``Control4-Motion``) in the seventh field. The type names the
  sensor kind, since later homes' ids (``BATP103``) no longer do.

Sensor kind comes from the id prefix otherwise (M/MA motion, D door, T temperature, L/LS light,
I item, BATP/BATV battery, anything else "sensor"); numeric messages become numbers, others stay
as written (ON, OFF, OPEN, CLOSE, ...). A light that reports ON/OFF is a lamp switch (classic
``L`` ids; REFERENCE.md): a device someone can leave on, kind ``lamp``; only numeric light
readings are the ambient ``light``.

Activities go **only** into ``payload["private"]["activity"]``: the begin/end annotations are
collected in a first pass (memory grows with the number of annotations, not of events) and paired
in time order, so a line's activities do not depend on where it sits in the file; the second pass
streams the events. Files without any annotation give events without a ``private`` block.

Source keys are ``casas:<date>T<time>:<sensor>:<value>:<digest of the event's fields>``: not the
line number (a re-sorted file imports nothing new) and not the annotation (re-labelling a file
does not duplicate its events).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from aframes_web.streams.importers.base import Format, ReadLimits, SourceItem, numbered_lines
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

_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_TIME = re.compile(r"(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)")
_SENSOR_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9]*-[A-Za-z][A-Za-z0-9_]*")
_NUMBERED = re.compile(r"(.+)-(begin|start|end)", re.IGNORECASE)
# Messages a CASAS sensor sends (UCI README, section 4) besides numbers.
_WORDS = {"ON", "OFF", "OPEN", "CLOSE", "CLOSED", "PRESENT", "ABSENT", "OK", "TAP", "DEPRESS"}
_WORDS |= {"RELEASE", "START", "STOP"}
_BY_PREFIX = {
    "M": "motion",
    "MA": "motion",
    "D": "door",
    "T": "temperature",
    "L": "light",
    "LS": "light",
    "I": "item",
    "BATP": "battery",
    "BATV": "battery",
}
_BY_TYPE = {
    "motion": "motion",
    "motionarea": "motion",
    "door": "door",
    "temperature": "temperature",
    "light": "light",
    "lightsensor": "light",
    "lightlevel": "light",
    "batterypercent": "battery",
    "batteryvoltage": "battery",
    "item": "item",
}
OPENS = ("begin", "start")
_SWITCH = frozenset({"ON", "OFF"})
_CONTACT = frozenset({"OPEN", "CLOSE", "CLOSED"})
_PRESENCE = frozenset({"PRESENT", "ABSENT"})
_LIT = re.compile(r"light|lamp", re.IGNORECASE)
_TEMPERATURE = re.compile(r"temp", re.IGNORECASE)
# A classic CASAS sensor id: a letter prefix and a number (M003, LS012, BATP103, AD1-A).
_CLASSIC_ID = re.compile(r"[A-Za-z]{1,4}[0-9]+[A-Za-z0-9-]*")


def _is_value(token: str) -> bool:
    upper = token.upper()
    return upper in _WORDS or upper.startswith("TAP_COUNT") or bool(_NUMBER.fullmatch(token))


def _value(token: str) -> str | int | float:
    if _NUMBER.fullmatch(token):
        return float(token) if any(c in token for c in ".eE") else int(token)
    return token


def _switched(kind: str, value: str) -> str:
    """A light that reports ON/OFF is a lamp, not an ambient reading."""
    return "lamp" if kind == "light" and value.upper() in _SWITCH else kind


def _sensor_kind(sensor: str, sensor_type: str | None, value: str) -> str:
    if sensor_type:
        kind = sensor_type.split("-", 1)[1].lower()
        return _switched(_BY_TYPE.get(kind, kind), value)
    prefix = re.match(r"[A-Za-z]*", sensor)
    return _switched(_BY_PREFIX.get(prefix.group(0).upper() if prefix else "", "sensor"), value)


def _device_kind(device: str, value: str) -> str:
    """The kind of a two-name layout's device, from its name and its message (these names carry
    no M/D/L prefix)."""
    upper = value.upper()
    if upper in _CONTACT:
        return "door"
    if upper in _PRESENCE:
        return "item"
    lit = _LIT.search(device) is not None
    if _NUMBER.fullmatch(value):
        return "light" if lit else "temperature" if _TEMPERATURE.search(device) else "sensor"
    if upper in _SWITCH:
        return "lamp" if lit else "motion"
    return "sensor"


@dataclass(slots=True)
class _Line:
    local: datetime
    date: str
    time: str
    sensor: str
    value: str
    room: str | None = None
    device: str | None = None  # a two-name layout's device name (the sensor is place/device)
    detail: str | None = None
    sensor_type: str | None = None
    mark: tuple[str, bool] | None = None  # (activity, opens) of a begin/end annotation
    label: str | None = None  # a label of this event only
    fields: list[str] = field(default_factory=list)  # the event's own fields, for the key


def _local(date: str, time: str) -> datetime:
    day = _DATE.fullmatch(date)
    if day is None:
        raise ValueError(f"{date!r} is not a date (YYYY-MM-DD)")
    clock = _TIME.fullmatch(time)
    if clock is None:
        raise ValueError(f"{time!r} is not a time (HH:MM:SS[.ffffff])")
    fraction = (clock.group(4) or "")[:6].ljust(6, "0")
    try:
        return datetime(  # noqa: DTZ001 - naive local time, read through to_utc
            int(day.group(1)),
            int(day.group(2)),
            int(day.group(3)),
            int(clock.group(1)),
            int(clock.group(2)),
            int(clock.group(3)),
            int(fraction),
        )
    except ValueError as exc:
        raise ValueError(f"{date} {time} is not a valid date and time ({exc})") from None


def _annotation(line: _Line, tail: list[str]) -> None:
    if not tail:
        return
    if len(tail) >= 2 and tail[-1].lower() in (*OPENS, "end"):
        line.mark = (" ".join(tail[:-1]), tail[-1].lower() in OPENS)
        return
    numbered = _NUMBERED.fullmatch(tail[0]) if len(tail) == 1 else None
    if numbered:
        line.mark = (numbered.group(1), numbered.group(2).lower() in OPENS)
        return
    line.label = " ".join(tail)


def _parse_line(text: str) -> _Line | None:
    """One CASAS line (None when blank); raises ValueError saying what is wrong."""
    tokens = text.split()
    if not tokens:
        return None
    if len(tokens) < 2:
        raise ValueError("the line has only one field; expected date time sensor value ...")
    date, time, *rest = tokens
    local = _local(date, time)
    if not rest:
        raise ValueError("the line has no sensor or value after the time")
    if len(rest) == 1:
        raise ValueError(f"sensor {rest[0]} has no value")
    if len(rest) >= 5 and _SENSOR_TYPE.fullmatch(rest[4]):
        sensor, room, detail, value, sensor_type, *tail = rest
        line = _Line(
            local, date, time, sensor, value, room=room, detail=detail, sensor_type=sensor_type
        )
    elif len(rest) >= 3 and not _is_value(rest[1]) and _is_value(rest[2]):
        first, second, value, *tail = rest
        if _CLASSIC_ID.fullmatch(first):
            line = _Line(local, date, time, first, value, room=second)
        else:  # place and device: the sensor is the pair
            sensor = first if first == second else f"{first}/{second}"
            line = _Line(local, date, time, sensor, value, room=first, device=second)
    else:
        sensor, value, *tail = rest
        line = _Line(local, date, time, sensor, value)
    own = len(rest) - len(tail)
    line.fields = [date, time, *rest[:own]]
    _annotation(line, tail)
    return line


class CasasReader:
    def __init__(self, path: Path, zone: ZoneInfo | None) -> None:
        if zone is None:
            raise ValueError("CASAS files hold naive local times: pass --tz.")
        if not path.is_file():
            raise ValueError("pass one CASAS data file.")
        self.path = path
        self.zone = zone
        self.bytes_read = 0
        self.notes: list[str] = []

    def _lines(self) -> Iterator[tuple[int, int, _Line | str | None]]:
        """(line number, bytes with its newline, the parsed line or an error) per line that is not
        empty."""
        limits = ReadLimits.for_file(self.path, gzipped=False)
        with self.path.open("rb") as handle:
            for number, raw in numbered_lines(handle, self.path.name, limits):
                try:
                    yield number, len(raw) + 1, _parse_line(decode_line(raw))
                except ValueError as exc:
                    yield number, len(raw) + 1, str(exc)

    def _timeline(self) -> tuple[ActivityTimeline, bool]:
        """Pair the begin/end annotations (first pass); also says whether any label exists."""
        marks: list[tuple[datetime, int, str, bool]] = []
        labelled = False
        last: datetime | None = None
        for number, _, line in self._lines():
            if not isinstance(line, _Line):
                continue
            moment = to_utc(line.local, self.zone)
            last = moment if last is None else max(last, moment)
            labelled = labelled or line.label is not None
            if line.mark is not None:
                marks.append((moment, number, *line.mark))
        marks.sort()
        open_at: dict[str, tuple[datetime, int]] = {}
        depth: dict[str, int] = {}
        spans: list[Span] = []
        unmatched: list[int] = []
        for moment, number, activity, opens in marks:
            if opens:
                if not depth.get(activity):
                    open_at[activity] = (moment, number)
                depth[activity] = depth.get(activity, 0) + 1
            elif not depth.get(activity):
                unmatched.append(number)
            else:
                depth[activity] -= 1
                if not depth[activity]:
                    spans.append(Span(open_at.pop(activity)[0], moment, activity))
        name = self.path.name
        if unmatched:
            unmatched.sort()
            self.notes.append(
                lines_note(
                    f"{name}: {plural(len(unmatched), 'activity end has', 'activity ends have')} "
                    "no begin",
                    unmatched,
                )
            )
        if open_at and last is not None:
            self.notes.append(
                lines_note(
                    f"{name}: {plural(len(open_at), 'activity', 'activities')} with a begin and "
                    "no end, taken to last until the file's final event",
                    sorted(number for _, number in open_at.values()),
                )
            )
            spans.extend(Span(start, last, activity) for activity, (start, _) in open_at.items())
        return ActivityTimeline(spans), bool(marks) or labelled

    def _key(self, line: _Line) -> str:
        digest = hashlib.sha256("\x1f".join(line.fields).encode()).hexdigest()[:16]
        readable = f"casas:{line.date}T{line.time}:{line.sensor}:{line.value}"
        return f"{readable[: SOURCE_KEY_MAX - len(digest) - 1]}:{digest}"

    def __iter__(self) -> Iterator[SourceItem]:
        timeline, labelled = self._timeline()
        tally = DstTally()
        earlier: list[int] = []
        previous: datetime | None = None
        name = self.path.name
        for number, size, line in self._lines():
            self.bytes_read += size  # the second pass: what the import has consumed
            if line is None:
                continue
            location = f"{name}:{number}"
            if isinstance(line, str):
                yield SourceItem(location, error=line)
                continue
            if previous is not None and line.local < previous:
                earlier.append(number)
            previous = line.local
            moment = to_utc(line.local, self.zone, tally)
            attributes = {"sensor": line.sensor}
            for key in ("room", "device", "detail", "sensor_type"):
                if getattr(line, key) is not None:
                    attributes[key] = getattr(line, key)
            kind = (
                _device_kind(line.device, line.value)
                if line.device is not None
                else _sensor_kind(line.sensor, line.sensor_type, line.value)
            )
            payload: dict[str, Any] = {
                "type": kind,
                "value": _value(line.value),
                "attributes": attributes,
            }
            if labelled:
                activities = timeline.at(moment)
                if line.label is not None and line.label not in activities:
                    activities.append(line.label)
                payload["private"] = {"activity": activity_value(activities)}
            yield SourceItem(
                location,
                item={
                    "occurred_at": iso_utc(moment),
                    "kind": "observation",
                    "source_key": self._key(line),
                    "payload": payload,
                },
            )
        if earlier:
            self.notes.append(
                lines_note(
                    f"{name}: {plural(len(earlier), 'line is', 'lines are')} earlier than the "
                    "line above (imported as written)",
                    earlier,
                )
            )
        self.notes.extend(dst_notes(f"times in {name}", tally))


FORMAT = Format(
    name="casas",
    factory=CasasReader,
    scope="home",
    needs_tz=True,
    multi_entity=False,
    description="CASAS smart-home sensor log (classic 'date time sensor value [annotation]', "
    "two-name 'date time place device value label' and hh layouts); annotations become "
    "private ground truth",
)
