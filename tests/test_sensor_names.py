"""Sensor names: the importer's guess, an owner's correction, and the workbench reading them."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from aframes_web.annotation import glance
from aframes_web.streams import names
from aframes_web.streams.models import Event, SensorName
from aframes_web.streams.services import (
    entity_create,
    events_ingest,
    events_stage,
    events_store_staged,
    validate_events,
)

PARIS = ZoneInfo("Europe/Paris")


def observation(sensor: str, room: str, kind: str, value: str, minute: int = 0) -> dict[str, Any]:
    return {
        "occurred_at": datetime(2024, 5, 6, 7, minute, tzinfo=PARIS).isoformat(),
        "kind": "observation",
        "source_key": f"{sensor}-{minute}-{value}",
        "payload": {"type": kind, "value": value, "attributes": {"sensor": sensor, "room": room}},
    }


@pytest.mark.parametrize(
    ("sensor", "room", "kind", "expected"),
    [
        ("FrontDoor", "hall", "door", ("front door", "hall", "door")),
        ("M001", "kitchen", "motion", ("kitchen motion sensor M001", "kitchen", "motion")),
        ("Kitchen/Light", "kitchen", "switch", ("kitchen light", "kitchen", "lamp")),
        ("bedroom_lamp", "", "electric", ("bedroom lamp", "", "lamp")),
        (
            "T12",
            "living",
            "temperature",
            ("living temperature sensor T12", "living", "temperature"),
        ),
    ],
)
def test_the_guess_reads_the_events_own_names(sensor, room, kind, expected) -> None:
    assert names.guess(sensor, room, kind) == expected


@pytest.fixture
def home(team: Any) -> Any:
    entity = entity_create(team=team, key="named", scope="home", timezone_name="Europe/Paris")
    events_ingest(
        entity=entity,
        items=[
            observation("D002", "entry", "door", "OPEN"),
            observation("M001", "kitchen", "motion", "ON", 1),
        ],
    )
    return entity


def test_ingestion_names_new_sensors_and_never_renames_one(home, owner) -> None:
    found = names.names_of(home)
    assert found["D002"].name == "entry door sensor D002" and found["M001"].room == "kitchen"
    names.correct(home, sensor="D002", name="front door", room="entry", kind="door", user=owner)
    # Later events that name the sensor otherwise, stored through either path, keep the name.
    events_ingest(entity=home, items=[observation("D002", "porch", "door", "CLOSE", 5)])
    batch = validate_events(entity=home, items=[observation("D002", "garage", "door", "OPEN", 9)])
    events_store_staged(entity=home, rows=events_stage(batch))
    kept = SensorName.objects.get(entity=home, sensor="D002")
    assert (kept.name, kept.room, kept.corrected_by) == ("front door", "entry", owner)


def test_the_staged_path_names_new_sensors_too(home) -> None:
    batch = validate_events(
        entity=home, items=[observation("Hall/Light", "hall", "switch", "ON", 3)]
    )
    events_store_staged(entity=home, rows=events_stage(batch))
    assert names.names_of(home)["Hall/Light"].kind == "lamp"


def test_owners_correct_names_on_the_page_and_others_read_them(home, owner, member) -> None:
    page = f"/t/acme/e/{home.key}/names/"
    mine, viewer = Client(), Client()
    mine.force_login(owner)
    viewer.force_login(member)
    assert b"entry door sensor D002" in mine.get(page).content
    saved = mine.post(
        page, {"sensor": "D002", "name": "front door", "room": "entry", "kind": "door"}
    )
    assert saved.status_code == 302 and "Saved" in mine.get(saved["Location"]).content.decode()
    read = viewer.get(page).content.decode()
    assert "front door" in read and "olivia" in read and 'name="name"' not in read
    assert viewer.post(page, {"sensor": "D002", "name": "x"}).status_code == 403
    refused = mine.post(page, {"sensor": "D002", "name": "  "}, follow=True).content.decode()
    assert "a name is needed" in refused
    unknown = mine.post(page, {"sensor": "NOPE", "name": "x"}, follow=True).content.decode()
    assert "has no sensor" in unknown
    assert SensorName.objects.get(entity=home, sensor="D002").name == "front door"


def test_sensors_stored_before_the_table_are_read_from_the_events(home, owner) -> None:
    SensorName.objects.filter(entity=home).delete()
    mine = Client()
    mine.force_login(owner)
    answer = mine.post(f"/t/acme/e/{home.key}/names/", {"read_events": "1"}, follow=True)
    assert "2 sensor(s) added" in answer.content.decode()
    assert set(names.names_of(home)) == {"D002", "M001"}


def test_the_workbench_shows_a_sensor_by_its_name_and_room(home, owner) -> None:
    names.correct(home, sensor="D002", name="front door", room="hall", kind="door", user=owner)
    event = Event.objects.get(entity=home, source_key="D002-0-OPEN")
    row = glance.readable(event, names.names_of(home))
    assert (row.lane, row.source) == ("hall", "front door (D002)")
    close = datetime(2024, 5, 6, 7, 30, tzinfo=PARIS)
    public = {
        "type": "home_segment",
        "on_at_close": [
            {
                "device": "D002",
                "room": "entry",
                "kind": "door",
                "since": "2024-05-06T05:00:00+00:00",
            }
        ],
    }
    task = SimpleNamespace(
        point=SimpleNamespace(at=close, public=public, event_id=None),
        stream=SimpleNamespace(entity=home, entity_id=home.pk),
    )
    (door,) = glance.at_close(task, names.names_of(home))["on"]
    assert door["device"] == "the front door (hall)" and door["for"] == "30 min"
