"""Home decision points: a day in 29 segments, each available when it closes (ProactMem A.1).

ProactiveStream's Home streams cut every local day into 28 segments of 50 minutes and a
40-minute tail (28 × 50 + 40 = 1,440 minutes) and offer each segment at its close, as a closed
interval: a method deciding at 10:50 sees the sensor events of 10:00–10:50 and everything
before, never the next segment. Segments follow the local wall clock (a 23- or 25-hour DST day
keeps 29 segments; one of them is an hour shorter or longer).

Reads the payloads the Ordóñez and CASAS importers write: ``type`` (the sensor kind), ``value``
(``ON``/``OFF``, ``OPEN``/``CLOSE``, a number) and ``attributes`` with ``sensor`` and, where
the layout has one, ``room`` or ``place``. The *room* of an event is the first of ``room``,
``place`` and ``sensor`` it carries (classic CASAS files name no rooms).

Public fields of a point (what methods see):

* ``segment`` (0–28), ``start`` and ``end`` (local ``HH:MM``, ``24:00`` for the day's end),
  ``day`` (ISO date), ``weekday`` (0 = Monday);
* ``events``: the segment's event count; ``rooms``: activations per room (an activation is an
  event whose value is ``ON``, ``OPEN`` or ``PRESENT``); ``room_sequence``: the rooms in the
  order they were activated, repeats in a row collapsed, at most :data:`SEQUENCE_MAX`;
* ``devices``: per door or appliance sensor (any sensor that is neither motion nor ambient)
  with events in the segment, how often it went on (open) and off (closed);
* ``on_at_close``: the doors and appliances whose last event by the segment's close turned
  them on or open, with when (``since``, local ISO time): a state seen, not a guess;
* ``numeric``: per sensor with numeric readings in the segment, ``n``, ``min``, ``max``,
  ``mean`` (temperatures, light levels);
* ``quiet_min``: whole minutes from the latest event of the stream to the close (None before
  the first event).

Private fields (labelers only): ``activities`` (the hand-labelled activities of the segment's
events), ``activity_first`` (each one's first event, local ``HH:MM``) and ``activity_at_close``
(the activity of the latest event at or before the close, which the labels say was going on).

Points are built for every local day with at least one event (a day without any is a capture
gap: unknown, not a quiet day) and only up to the stream's latest event (later segments have
not closed yet as far as the stream knows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from benchmark.streams.records import DecisionPoint, StreamEvent

SEGMENT = timedelta(minutes=50)  # ProactMem A.1: 28 segments of 50 minutes ...
SEGMENTS = 29  # ... and a 40-minute tail: 29 decision points a day
SEQUENCE_MAX = 20  # our bound: a room sequence longer than this is cut (its counts stay)
MOTION_TYPES = frozenset({"motion", "pir"})
AMBIENT_TYPES = frozenset({"temperature", "light", "battery", "humidity"})
ACTIVE_VALUES = frozenset({"ON", "OPEN", "PRESENT"})
ROOM_KEYS = ("room", "place", "sensor")


def _attributes(event: StreamEvent) -> Mapping[str, Any]:
    found = event.payload.get("attributes")
    return found if isinstance(found, Mapping) else {}


def room_of(event: StreamEvent) -> str | None:
    attributes = _attributes(event)
    for key in ROOM_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _kind(event: StreamEvent) -> str:
    value = event.payload.get("type")
    return value.strip().lower() if isinstance(value, str) else ""


def _value(event: StreamEvent) -> Any:
    return event.payload.get("value")


def is_active(event: StreamEvent) -> bool:
    value = _value(event)
    return isinstance(value, str) and value.strip().upper() in ACTIVE_VALUES


def is_device(event: StreamEvent) -> bool:
    kind = _kind(event)
    return bool(kind) and kind not in MOTION_TYPES and kind not in AMBIENT_TYPES


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


def _clock(moment: datetime, zone: ZoneInfo) -> str:
    return moment.astimezone(zone).strftime("%H:%M")


def segment_bounds(day: date, index: int, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The aware [start, end) of segment ``index`` of the local ``day`` (wall clock)."""
    midnight = datetime.combine(day, time())
    start = midnight + SEGMENT * index
    end = midnight + SEGMENT * (index + 1) if index < SEGMENTS - 1 else midnight + timedelta(1)
    return start.replace(tzinfo=zone), end.replace(tzinfo=zone)


def points(events: Sequence[StreamEvent], zone: ZoneInfo) -> list[DecisionPoint]:
    """The home decision points of one entity's events (module docstring)."""
    ordered = sorted(events, key=lambda e: (e.at, e.id))
    if not ordered:
        return []
    last = ordered[-1].at
    days = sorted({e.at.astimezone(zone).date() for e in ordered})
    out: list[DecisionPoint] = []
    cursor = 0  # first event not yet in a closed segment
    devices_on: dict[str, tuple[str | None, str, datetime]] = {}  # sensor -> (room, kind, since)
    latest: StreamEvent | None = None
    activity_at_close: list[str] = []
    for day in days:
        for index in range(SEGMENTS):
            start, end = segment_bounds(day, index, zone)
            if end > last:
                break
            inside: list[StreamEvent] = []
            while cursor < len(ordered) and ordered[cursor].at < end:
                event = ordered[cursor]
                cursor += 1
                if event.at >= start:
                    inside.append(event)
                if is_device(event):
                    sensor = str(_attributes(event).get("sensor") or room_of(event) or "")
                    if is_active(event):
                        devices_on[sensor] = (room_of(event), _kind(event), event.at)
                    elif _value(event) is not None:
                        devices_on.pop(sensor, None)
                latest = event
                labels = event.activities
                if labels or "activity" in event.private:
                    activity_at_close = labels
            out.append(
                _point(day, index, start, end, inside, devices_on, latest, activity_at_close, zone)
            )
    return out


def _point(
    day: date,
    index: int,
    start: datetime,
    end: datetime,
    inside: Sequence[StreamEvent],
    devices_on: Mapping[str, tuple[str | None, str, datetime]],
    latest: StreamEvent | None,
    activity_at_close: Sequence[str],
    zone: ZoneInfo,
) -> DecisionPoint:
    rooms: dict[str, int] = {}
    sequence: list[str] = []
    devices: dict[str, dict[str, Any]] = {}
    numeric: dict[str, list[float]] = {}
    activities: dict[str, str] = {}
    for event in inside:
        room = room_of(event)
        if is_active(event) and room is not None:
            rooms[room] = rooms.get(room, 0) + 1
            if not sequence or sequence[-1] != room:
                sequence.append(room)
        if is_device(event) and isinstance(_value(event), str):
            sensor = str(_attributes(event).get("sensor") or room or "")
            found = devices.setdefault(
                sensor, {"device": sensor, "room": room, "kind": _kind(event), "on": 0, "off": 0}
            )
            found["on" if is_active(event) else "off"] += 1
        number = _number(_value(event))
        if number is not None:
            sensor = str(_attributes(event).get("sensor") or room or _kind(event))
            numeric.setdefault(sensor, []).append(number)
        for label in event.activities:
            activities.setdefault(label, _clock(event.at, zone))
    quiet = None if latest is None else int((end - latest.at).total_seconds() // 60)
    public: dict[str, Any] = {
        "type": "home_segment",
        "segment": index,
        "start": _clock(start, zone),
        "end": "24:00" if index == SEGMENTS - 1 else _clock(end, zone),
        "day": day.isoformat(),
        "weekday": day.weekday(),
        "events": len(inside),
        "rooms": dict(sorted(rooms.items())),
        "room_sequence": sequence[:SEQUENCE_MAX],
        "devices": [devices[k] for k in sorted(devices)],
        "on_at_close": [
            {
                "device": sensor,
                "room": room,
                "kind": kind,
                "since": since.astimezone(zone).isoformat(),
            }
            for sensor, (room, kind, since) in sorted(devices_on.items())
        ],
        "numeric": {
            sensor: {
                "n": len(values),
                "min": round(min(values), 2),
                "max": round(max(values), 2),
                "mean": round(sum(values) / len(values), 2),
            }
            for sensor, values in sorted(numeric.items())
        },
        "quiet_min": quiet,
    }
    private = {
        "activities": sorted(activities),
        "activity_first": dict(sorted(activities.items())),
        "activity_at_close": list(activity_at_close),
    }
    return DecisionPoint(
        key=f"home:{day.isoformat()}/{index:02d}",
        scope="home",
        at=end,
        public=public,
        private=private,
        cites=tuple(e.id for e in inside),
    )
