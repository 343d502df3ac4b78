"""Home trajectories: room presence, door events and each room's most active sensor (issue 6).

Reads the payloads the CASAS and Ordóñez importers write: ``type`` (the sensor kind), ``value``
(``ON``, ``OFF``, ``OPEN``, ``CLOSE``, a number) and ``attributes`` with ``sensor`` and, where the
layout has one, ``room`` (CASAS room and hh layouts) or ``place`` (Ordóñez). The *room* of an
event is the first of ``room``, ``place`` and ``sensor`` it carries: classic CASAS files name no
rooms, so there each sensor stands for its own spot. ``private`` (the activity labels) is never
read. Segment kinds:

* ``room_presence``: a maximal stretch of motion-ON events (CASAS ``motion``, Ordóñez ``pir``)
  in one room, in time order among all motion-ON events of the day: an ON in another room, or
  a silence longer than :data:`PRESENCE_MAX_GAP`, ends it. Interval from its first ON to its
  last; it cites every ON of the stretch. Facts ``type`` and the room leaf (``room``,
  ``place`` or ``sensor``).
* ``door``: one per contact-sensor event (CASAS ``door``, which also covers cabinet doors;
  Ordóñez ``magnetic``, on the main door, fridge and cupboards), interval ``[at, at]``. Facts
  ``type``, ``value``, ``sensor`` and the room leaf when the event has ``room`` or ``place``.
* ``sensor_activity``: per room and local hour with activity, the sensor with the most events
  (ties: the sensor name first in order); events without a ``sensor`` are not counted. Ambient
  readings (:data:`AMBIENT_TYPES`) are no activity: they report whether or not anyone is
  there. It cites that sensor's events of the
  hour; facts ``sensor``, ``type`` and the room leaf when present. The count itself is an
  aggregate, no leaf, so it is no fact. A local hour is told apart by its UTC offset too, so
  the repeated hour of a fall-back day gives two hours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.records import EngineEvent, Fact, Path, Segment

# Our choice: motion sensors re-fire every few seconds to minutes while someone moves about; a
# room silent for half an hour is unobserved, and unobserved time is not presence.
PRESENCE_MAX_GAP = timedelta(minutes=30)
MOTION_TYPES = frozenset({"motion", "pir"})
CONTACT_TYPES = frozenset({"door", "magnetic"})
AMBIENT_TYPES = frozenset({"temperature", "light", "battery"})
ROOM_KEYS = ("room", "place", "sensor")  # first present names the room (module docstring)

VOCABULARY: Mapping[str, tuple[Path, ...]] = MappingProxyType(
    {
        "room_presence": (("type",), ("room",), ("place",), ("sensor",)),
        "door": (("type",), ("value",), ("sensor",), ("room",), ("place",)),
        "sensor_activity": (("sensor",), ("type",), ("room",), ("place",)),
    }
)


def _attributes(event: EngineEvent) -> Mapping[str, Any]:
    attributes = event.payload.get("attributes")
    return attributes if isinstance(attributes, Mapping) else {}


def _text(mapping: Mapping[str, Any], key: str) -> str | None:
    value = mapping.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _room(event: EngineEvent) -> tuple[str, str] | None:
    """(the attribute naming the room, its value), or None for an event with no sensor."""
    attributes = _attributes(event)
    for key in ROOM_KEYS:
        value = _text(attributes, key)
        if value is not None:
            return key, value
    return None


def segments(events: Sequence[EngineEvent], zone: ZoneInfo) -> list[Segment]:
    """The home segments of one day's events, sorted by (time, id) (module docstring)."""
    out: list[Segment] = []
    stretch: list[EngineEvent] = []
    stretch_room: tuple[str, str] | None = None
    # (room, local hour, its UTC offset) -> sensor -> its events of that hour
    hours: dict[tuple[tuple[str, str], datetime, timedelta | None], dict[str, list[EngineEvent]]]
    hours = {}
    for event in events:
        kind = _text(event.payload, "type")
        room = _room(event)
        if kind is None or room is None:
            continue
        value = event.payload.get("value")
        if kind in MOTION_TYPES and isinstance(value, str) and value.strip().upper() == "ON":
            if stretch and (room != stretch_room or event.at - stretch[-1].at > PRESENCE_MAX_GAP):
                out.append(_presence(stretch, stretch_room))
                stretch = []
            stretch.append(event)
            stretch_room = room
        if kind in CONTACT_TYPES:
            out.append(_door(event, kind, value, room))
        sensor = _text(_attributes(event), "sensor")
        if kind not in AMBIENT_TYPES and sensor is not None:
            local = event.at.astimezone(zone)
            hour = (room, local.replace(minute=0, second=0, microsecond=0), local.utcoffset())
            hours.setdefault(hour, {}).setdefault(sensor, []).append(event)
    if stretch:
        out.append(_presence(stretch, stretch_room))
    for (room, _, _), by_sensor in hours.items():
        sensor, cited = min(by_sensor.items(), key=lambda item: (-len(item[1]), item[0]))
        out.append(_activity(sensor, cited, room))
    return out


def _presence(stretch: Sequence[EngineEvent], room: tuple[str, str] | None) -> Segment:
    assert room is not None  # set with the stretch's first event
    first = stretch[0]
    facts = (
        Fact("", "observed", ("type",), first.payload["type"], first.at),
        Fact("", "observed", (room[0],), room[1], first.at),
    )
    citations = tuple(event.id for event in stretch)
    return Segment(first.at, stretch[-1].at, facts, citations, kind="room_presence")


def _door(event: EngineEvent, kind: str, value: object, room: tuple[str, str]) -> Segment:
    facts = [Fact("", "observed", ("type",), kind, event.at)]
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        facts.append(Fact("", "observed", ("value",), value, event.at))
    sensor = _text(_attributes(event), "sensor")
    if sensor is not None:
        facts.append(Fact("", "observed", ("sensor",), sensor, event.at))
    if room[0] != "sensor":
        facts.append(Fact("", "observed", (room[0],), room[1], event.at))
    return Segment(event.at, event.at, tuple(facts), (event.id,), kind="door")


def _activity(sensor: str, cited: Sequence[EngineEvent], room: tuple[str, str]) -> Segment:
    first = cited[0]
    facts = [
        Fact("", "observed", ("sensor",), sensor, first.at),
        Fact("", "observed", ("type",), first.payload["type"], first.at),
    ]
    if room[0] != "sensor":
        facts.append(Fact("", "observed", (room[0],), room[1], first.at))
    citations = tuple(event.id for event in cited)
    return Segment(first.at, cited[-1].at, tuple(facts), citations, kind="sensor_activity")
