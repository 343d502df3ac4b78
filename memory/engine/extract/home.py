"""Home trajectories: where someone was, and which doors and appliances they used (ProactMem §3).

Reads the payloads the CASAS and Ordóñez importers write: ``type`` (the sensor kind), ``value``
(``ON``, ``OFF``, ``OPEN``, ``CLOSE``, a number) and ``attributes`` with ``sensor`` and, where
the layout has one, ``room`` (CASAS room and hh layouts) or ``place`` (Ordóñez). Facts stay at
the level people think in: the *room* (the ``room`` or ``place`` leaf) and the *device* by its
role (a sensor named for what it is, ``Fridge``, ``Maindoor``, ``Toilet``). A sensor named by
an opaque id (``M003``, ``D001``) is never a fact: it stays a citation, and such an event
names its room, or failing that its kind (``door``, ``motion``). ``private`` (the activity
labels) is never read. Segment kinds:

* ``room_presence``: a maximal stretch of motion activations (CASAS ``motion``, Ordóñez
  ``pir``) in one room, in time order among the day's motion activations: an activation in
  another room, or a silence longer than :data:`PRESENCE_MAX_GAP`, ends it. Interval from its
  first activation to its last; it cites every one of them. Fact: the room (or, without one,
  the sensor's role; an opaque id gives ``type``).
* ``device_use``: one per activation (``ON``, ``OPEN``, ``PRESENT``) of a door, appliance,
  seat, bed or any other sensor that is neither motion nor ambient (temperature, light,
  battery, humidity report whether or not anyone is there). Interval ``[at, at]``. Facts: the
  device's role (the sensor's name unless opaque) and its room; with neither, its kind.

* ``day_start``: the day's first activation at or after :data:`DAY_STARTS` local (the home
  getting up), interval ``[at, at]``. Fact: where it happened, as for a presence. Its time
  varies from day to day, which is what lets a morning routine be told from a fixed habit:
  on a day the home gets up late, the routine is not expected yet.

Switching off and closing are the end of a use, not a use: they make no segment (memory would
otherwise hold each use twice).

The extraction is incremental (:class:`HomeDay`): a day still being captured gains events and
extends its stretches and uses instead of being extracted again (a decision reads its open day
at every event); :func:`segments` feeds a whole day at once, and both give the same segments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import time, timedelta
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.records import EngineEvent, Fact, Path, Segment

# Our choice: motion sensors re-fire every few seconds to minutes while someone moves about; a
# room silent for half an hour is unobserved, and unobserved time is not presence.
PRESENCE_MAX_GAP = timedelta(minutes=30)
MOTION_TYPES = frozenset({"motion", "pir"})
CONTACT_TYPES = frozenset({"door", "magnetic"})
AMBIENT_TYPES = frozenset({"temperature", "light", "battery", "humidity"})
ACTIVE_VALUES = frozenset({"ON", "OPEN", "PRESENT"})
ROOM_KEYS = ("room", "place", "sensor")  # first present names where an event is (catalogue)
ROOM_LEAVES = ("room", "place")  # the leaves that name a room (facts)
# Our choice: activity before five in the morning continues the night (a night owl's
# television, a trip to the bathroom); the day starts with the first activation after it.
DAY_STARTS = time(5)
# A sensor named by an id, not a role: one to three letters and digits (CASAS M003, D001, T102).
OPAQUE_ID = re.compile(r"^[A-Za-z]{0,3}[-_]?\d+[A-Za-z]?$")

VOCABULARY: Mapping[str, tuple[Path, ...]] = MappingProxyType(
    {
        "room_presence": (("room",), ("place",), ("sensor",), ("type",)),
        "device_use": (("sensor",), ("room",), ("place",), ("type",)),
        "day_start": (("room",), ("place",), ("sensor",), ("type",)),
    }
)


def _attributes(event: EngineEvent) -> Mapping[str, Any]:
    attributes = event.payload.get("attributes")
    # A plain dict, the common case, before the abstract type's check.
    if type(attributes) is dict:
        return attributes
    return attributes if isinstance(attributes, Mapping) else {}


def _text(mapping: Mapping[str, Any], key: str) -> str | None:
    value = mapping.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _where(event: EngineEvent) -> tuple[str, str] | None:
    """(the attribute naming where the event is, its value), or None without any."""
    attributes = _attributes(event)
    for key in ROOM_KEYS:
        value = _text(attributes, key)
        if value is not None:
            return key, value
    return None


def _role(event: EngineEvent) -> str | None:
    sensor = _text(_attributes(event), "sensor")
    return sensor if sensor is not None and not OPAQUE_ID.match(sensor.strip()) else None


def _active(event: EngineEvent) -> bool:
    value = event.payload.get("value")
    return isinstance(value, str) and value.strip().upper() in ACTIVE_VALUES


@dataclass
class HomeDay:
    """One day's home segments, extended event by event (module docstring)."""

    zone: ZoneInfo
    done: list[Segment] = field(default_factory=list)  # closed stretches and device uses
    stretch: list[EngineEvent] = field(default_factory=list)
    stretch_where: tuple[str, str] | None = None
    started: Segment | None = None
    fed: int = 0

    def feed(self, events: Sequence[EngineEvent]) -> None:
        """Take the day's next events, in (time, id) order after every event fed before."""
        for event in events:
            self.fed += 1
            kind = _text(event.payload, "type")
            if kind is None or not _active(event):
                continue
            where = _where(event)
            if where is None:
                continue
            kind = kind.lower()
            if kind in AMBIENT_TYPES:
                continue
            if self.started is None and event.at.astimezone(self.zone).time() >= DAY_STARTS:
                self.started = Segment(
                    event.at, event.at, _place(event), (event.id,), kind="day_start"
                )
            if kind in MOTION_TYPES:
                if self.stretch and (
                    where != self.stretch_where or event.at - self.stretch[-1].at > PRESENCE_MAX_GAP
                ):
                    self.done.append(self._presence())
                    self.stretch = []
                self.stretch.append(event)
                self.stretch_where = where
            else:
                self.done.append(_use(event))

    def segments(self) -> list[Segment]:
        out = [*self.done, self._presence()] if self.stretch else list(self.done)
        if self.started is not None:
            out.append(self.started)
        return out

    def _presence(self) -> Segment:
        first = self.stretch[0]
        citations = tuple(event.id for event in self.stretch)
        return Segment(first.at, self.stretch[-1].at, _place(first), citations, "room_presence")


def _place(event: EngineEvent) -> tuple[Fact, ...]:
    """The room of an event as a fact; without one its device's role; failing both its kind."""
    attributes = _attributes(event)
    for key in ROOM_LEAVES:
        value = _text(attributes, key)
        if value is not None:
            return (Fact("", "observed", (key,), value, event.at),)
    role = _role(event)
    if role is not None:
        return (Fact("", "observed", ("sensor",), role, event.at),)
    return (Fact("", "observed", ("type",), event.payload["type"], event.at),)


def _use(event: EngineEvent) -> Segment:
    facts: list[Fact] = []
    role = _role(event)
    if role is not None:
        facts.append(Fact("", "observed", ("sensor",), role, event.at))
    attributes = _attributes(event)
    for key in ROOM_LEAVES:
        value = _text(attributes, key)
        if value is not None:
            facts.append(Fact("", "observed", (key,), value, event.at))
            break
    if not facts:
        facts.append(Fact("", "observed", ("type",), event.payload["type"], event.at))
    return Segment(event.at, event.at, tuple(facts), (event.id,), kind="device_use")


def segments(events: Sequence[EngineEvent], zone: ZoneInfo) -> list[Segment]:
    """The home segments of one day's events, sorted by (time, id) (module docstring)."""
    day = HomeDay(zone)
    day.feed(events)
    return day.segments()
