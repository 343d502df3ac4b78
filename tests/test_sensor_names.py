"""Sensor names: the importer's guess, an owner's correction, and the workbench reading them."""

from __future__ import annotations

from datetime import date, datetime, time
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


def test_point_sentences_say_sensors_by_their_names(home, owner) -> None:
    from benchmark.streams.words import describe

    names.correct(home, sensor="D002", name="front door", room="entry", kind="door", user=owner)
    public = {
        "type": "home_segment",
        "day": "2024-05-06",
        "start": "07:00",
        "end": "07:30",
        "events": 2,
        "rooms": {"entry": 1},
        "devices": [{"device": "D002", "on": 1}],
        "on_at_close": [{"device": "D002", "room": "entry", "since": "2024-05-06T07:00:00+02:00"}],
    }
    spoken = names.said_of(home)
    assert spoken["D002"] == "front door (entry)"
    said = describe(public, spoken)
    assert (
        "front door (entry) on 1×" in said and "still on at the close: front door (entry)" in said
    )
    assert "D002" not in said
    assert "D002 on 1×" in describe(public)  # without a table, the id as the events give it
    assert names.said_of(SimpleNamespace(pk=home.pk, scope="code")) == {}


def test_memory_sentences_say_sensors_by_their_names() -> None:
    from memory.engine import usual
    from memory.engine.expect import Expectations
    from memory.engine.records import Predicate, Proposal
    from memory.engine.words import deviation, regularity

    spoken = {"D002": "front door (entry)", "L1": "kitchen lamp"}
    proposal = Proposal(
        trigger=Predicate(("device_use", "sensor"), "D002"),
        behavior=Predicate(("device_use", "sensor"), "L1"),
        window=(time(7), time(8)),
        weekdays=None,
    )
    assert regularity(proposal, spoken) == (
        "After the front door (entry) in use, the kitchen lamp in use between 07:00 and "
        "08:00, every day."
    )
    assert "the L1 in use" in regularity(proposal)
    now = datetime(2024, 5, 6, 8, 30, tzinfo=PARIS)
    assert "Usually the kitchen lamp in use by 08:00" in deviation(
        proposal, "deviated", now, 3, 0, names=spoken
    )
    # A device with no history is the baseline's to name, by its name too.
    point = {
        "type": "home_segment",
        "on_at_close": [
            {
                "device": "D002",
                "kind": "door",
                "room": "entry",
                "since": "2024-05-06T07:00:00+02:00",
            }
        ],
    }
    judged = usual.judge("home", point, now, Expectations(), {}, spoken)
    assert judged["check_device"].sentence == "The front door (entry) on since 07:00"


def test_a_corrected_name_reaches_the_regularities_sentences(home, owner) -> None:
    from memory.engine.records import Predicate, Proposal
    from memory.engine.serial import proposal_to_json
    from memory.models import Regularity
    from memory.services.closing import summaries_refresh

    proposal = Proposal(
        trigger=Predicate(("device_use", "sensor"), "D002"),
        behavior=Predicate(("room_presence", "room"), "kitchen"),
        window=(time(7), time(8)),
        weekdays=None,
    )
    row = Regularity.objects.create(
        entity=home,
        rid="reg:test",
        proposal=proposal_to_json(proposal),
        summary="stale",
        state="habit",
        confidence=1.0,
        replay_confidence=1.0,
        lift=1.0,
        n_f=3,
        n_v=0,
        observable=3,
        behavior_days=3,
        violation_run=0,
        proposed_on=date(2024, 5, 6),
    )
    mine = Client()
    mine.force_login(owner)
    mine.post(
        f"/t/acme/e/{home.key}/names/",
        {"sensor": "D002", "name": "front door", "room": "entry", "kind": "door"},
    )
    row.refresh_from_db()
    assert row.summary.startswith("After the front door (entry) in use, activity in the kitchen")
    assert summaries_refresh(home) == 0  # said once; nothing left to change


def test_the_annotator_s_point_says_sensors_by_their_names(
    team: Any, home: Any, owner: Any, people: dict[str, Any]
) -> None:
    from aframes_web.annotation import present, services
    from aframes_web.annotation.services import ProjectSpec
    from aframes_web.proactivestream.services import points_build

    # A later event closes the segment of the door's opening (07:00), so it has a point.
    events_ingest(entity=home, items=[observation("M001", "kitchen", "motion", "OFF", 45)])
    points_build(entity=home)
    spec = ProjectSpec(name="named", scope="home", entities=[home.key], labels_per_point=1)
    project = services.project_create(team=team, spec=spec, build=False)
    task = next(
        t
        for t in project.tasks.select_related("point", "stream__entity").order_by("seq")
        if (t.point.public or {}).get("devices")
    )
    assert "D002 " in present.task_record(task, people["ana"])["point"]["words"]
    names.correct(home, sensor="D002", name="front door", room="entry", kind="door", user=owner)
    words = present.task_record(task, people["ana"])["point"]["words"]
    assert "front door (entry)" in words and "D002" not in words
