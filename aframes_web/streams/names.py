"""Sensor names: the importer's best guess of what each sensor is, and the table pages read.

A home's events name a sensor by its id (``M001``, ``D002``, ``Kitchen/Light``) with its room
and type. On pages a person needs a name: the guess turns a readable id into words
(``FrontDoor`` → "front door") and gives a code its room and kind ("kitchen motion sensor
M001"); the kind comes from the event type and, for a lamp, from the name (an ``ON``/``OFF``
``…Light`` is a lamp, an appliance). An owner corrects what the guess got wrong on the
entity's names page, and every later page uses the correction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from django.utils import timezone

from aframes_web.streams.models import Entity, Event, SensorName
from aframes_web.streams.records import EventRecord

CODE = re.compile(r"^[A-Za-z]{0,3}[-_]?\d+$")  # an id such as M001, D-2, T12


def _words(name: str) -> str:
    """``FrontDoor`` → ``front door``, ``kitchen_light`` → ``kitchen light``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", re.sub(r"[_/\-]+", " ", name))
    return " ".join(spaced.split()).lower()


def _kind(sensor: str, kind: str) -> str:
    if re.search(r"light|lamp", sensor, re.IGNORECASE) and kind not in ("light", "lux"):
        return "lamp"
    return kind


def guess(sensor: str, room: str, kind: str) -> tuple[str, str, str]:
    """(name, room, kind) of a sensor from what its events say."""
    kind = _kind(sensor, kind)
    if CODE.match(sensor):
        words = " ".join(part for part in (room, kind, "sensor", sensor) if part)
        return words, room, kind
    name = _words(sensor)
    return name, room, kind


def guesses(records: Iterable[EventRecord]) -> dict[str, tuple[str, str, str]]:
    """The first guess for each sensor named by ``records`` (observations with a sensor)."""
    return _guesses((r.kind, r.payload) for r in records)


def _guesses(events: Iterable[tuple[str, Any]]) -> dict[str, tuple[str, str, str]]:
    """The first guess for each sensor named by ``events``, (kind, payload) pairs."""
    found: dict[str, tuple[str, str, str]] = {}
    for event_kind, payload in events:
        attributes = payload.get("attributes") if isinstance(payload, dict) else None
        if event_kind != "observation" or not isinstance(attributes, dict):
            continue
        sensor = attributes.get("sensor")
        if not isinstance(sensor, str) or not sensor or sensor in found:
            continue
        room = attributes.get("room") or attributes.get("place") or ""
        kind = payload.get("type")
        found[sensor[:200]] = guess(
            sensor, str(room)[:100], str(kind)[:32] if isinstance(kind, str) else ""
        )
    return found


def remember(entity: Entity, found: Mapping[str, tuple[str, str, str]]) -> None:
    """Store the guesses of sensors not named yet; a name already there stays."""
    if not found:
        return
    SensorName.objects.bulk_create(
        [
            SensorName(entity=entity, sensor=sensor, name=name[:200], room=room, kind=kind)
            for sensor, (name, room, kind) in found.items()
        ],
        ignore_conflicts=True,
    )


def names_of(entity: Any) -> dict[str, SensorName]:
    """The entity's sensor names by sensor id (one query; pages read it once)."""
    return {n.sensor: n for n in SensorName.objects.filter(entity_id=entity.pk)}


def display(named: SensorName) -> str:
    """A sensor as a sentence says it: its name, then its room unless the name says it
    ("front door (entry)", "kitchen motion sensor M001")."""
    if named.room and named.room.lower() not in named.name.lower():
        return f"{named.name} ({named.room})"
    return named.name


def said(named: Mapping[str, SensorName]) -> dict[str, str]:
    """Sensor id -> how sentences say it, for the pure cores' words (``benchmark.streams.
    words.describe``, ``memory.engine.words``, ``memory.engine.usual``)."""
    return {sensor: display(n) for sensor, n in named.items()}


def said_of(entity: Any) -> dict[str, str]:
    """:func:`said` of the entity's table; only a home names sensors, so other scopes cost no
    query."""
    return said(names_of(entity)) if getattr(entity, "scope", None) == "home" else {}


class NameRefused(ValueError):
    """A correction that cannot be kept; the message says why."""


def correct(entity: Entity, *, sensor: str, name: str, room: str, kind: str, user: Any) -> None:
    """An owner's correction of one sensor's name, room and kind."""
    found = SensorName.objects.filter(entity=entity, sensor=sensor).first()
    if found is None:
        raise NameRefused(f"{entity.key} has no sensor {sensor!r} in its names table.")
    name, room, kind = name.strip(), room.strip(), kind.strip()
    if not name:
        raise NameRefused(f"{sensor}: a name is needed (the id stays as its citation).")
    for field, value, most in (("name", name, 200), ("room", room, 100), ("kind", kind, 32)):
        if len(value) > most or "\x00" in value:
            raise NameRefused(f"{sensor}: the {field} must be text of at most {most} characters.")
    found.name, found.room, found.kind = name, room, kind
    found.corrected_by, found.corrected_at = user, timezone.now()
    found.save()


def read_from_events(entity: Entity) -> int:
    """Add the guesses of every sensor the stored events name and the table does not (events
    stored before the table existed); how many were added."""
    before = SensorName.objects.filter(entity=entity).count()
    rows = Event.objects.filter(entity=entity, kind="observation").values_list("payload", flat=True)
    remember(entity, _guesses(("observation", p) for p in rows.iterator(chunk_size=5000)))
    return SensorName.objects.filter(entity=entity).count() - before
