"""Home-scope importers: Ordóñez ADL files (real, ../shared/data) and CASAS logs (SYNTHETIC)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from io import StringIO
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.management import CommandError, call_command

from aframes_web.streams import importers
from aframes_web.streams.importers import casas, ordonez
from aframes_web.streams.models import Entity, Event
from benchmark.synthetic import casas as synthetic_casas
from tests.conftest import need_service

pytestmark = pytest.mark.django_db

ORDONEZ = Path(__file__).resolve().parents[2] / "shared" / "data" / "ordonez-adl"
MADRID = "Europe/Madrid"  # the dataset was recorded in homes near Madrid (README, SOURCE.md)
ADL_NAMES = (
    "Leaving",
    "Toileting",
    "Showering",
    "Sleeping",
    "Breakfast",
    "Lunch",
    "Dinner",
    "Snack",
    "Spare_Time/TV",
    "Grooming",
)
HEADER = "Start time          \tEnd time            \tLocation\tType\t\tPlace"
RULER = "--------------------\t--------------------\t--------\t--------\t-----"
LABELS_HEADER = "Start time          \tEnd time            \tActivity\t"
LABELS_RULER = "--------------------\t--------------------\t--------"


def test_home_formats_are_registered() -> None:
    assert importers.formats()["ordonez"] is ordonez.FORMAT
    assert importers.formats()["casas"] is casas.FORMAT


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_events", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _import(fmt: str, path: Path, entity: str, tz: str, *extra: str) -> dict[str, Any]:
    out, _ = _run(
        fmt, str(path), "--team", "acme", "--entity", entity, "--tz", tz, "--json", *extra
    )
    return json.loads(out)


def _real(name: str) -> Path:
    if not ORDONEZ.is_dir():
        need_service("shared data ordonez-adl", False)
    return ORDONEZ / name


def _rows(path: Path, rows: list[str], *, crlf: bool = True, header: bool = True) -> Path:
    lines = [HEADER, RULER, *rows] if header else rows
    end = "\r\n" if crlf else "\n"
    path.write_bytes("".join(line + end for line in lines).encode())
    return path


def _row(start: str, end: str, sensor: str, kind: str, place: str) -> str:
    return f"{start}\t\t{end}\t\t{sensor}\t\t{kind}\t{place}"


def _events(entity: str) -> list[Event]:
    return list(Event.objects.filter(entity__key=entity).order_by("occurred_at", "source_key"))


def _iso(event: Event) -> str:
    return event.occurred_at.isoformat().replace("+00:00", "Z")


# --- Ordóñez ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("home", "intervals", "first", "last"),
    [
        ("OrdonezA", 409, "2011-11-28T01:27:59Z", "2011-12-12T06:22:21Z"),
        ("OrdonezB", 2334, "2012-11-11T20:14:21Z", "2012-12-03T00:03:12Z"),
    ],
)
def test_ordonez_real_homes_give_an_on_and_an_off_event_per_interval_in_utc(
    team, home: str, intervals: int, first: str, last: str
) -> None:
    summary = _import("ordonez", _real(f"{home}_Sensors.txt"), "home", MADRID)
    assert summary["read"] == summary["imported"] == 2 * intervals
    assert summary["duplicates"] == 0 and summary["rejected"] == {}
    events = _events("home")
    assert Entity.objects.get(key="home").scope == "home"
    assert Entity.objects.get(key="home").timezone == MADRID
    assert (_iso(events[0]), _iso(events[-1])) == (first, last)  # CET, +01:00, in Nov/Dec
    values = [e.payload["value"] for e in events]
    assert values.count("ON") == values.count("OFF") == intervals
    on = next(e for e in events if e.payload["value"] == "ON")
    assert set(on.payload) == {"type", "value", "attributes", "private"}
    assert "interval_end" not in on.payload["attributes"]  # an ON event does not see its end


def test_ordonez_labels_land_only_in_private_and_the_api_never_shows_them(team, owner_api) -> None:
    summary = _import("ordonez", _real("OrdonezA_Sensors.txt"), "home-a", MADRID)
    assert summary["notes"] == [
        "OrdonezA_ADLs.txt: 3 label rows ending before the start, left out: lines 72, 81, 83"
    ]
    events = _events("home-a")
    first = events[0]
    assert first.payload["private"] == {"activity": "Sleeping"}
    assert first.payload["attributes"] == {"sensor": "Bed", "place": "Bedroom"}
    assert first.payload["type"] == "pressure"
    activities = [e.payload["private"]["activity"] for e in events]
    assert sum(isinstance(a, list) for a in activities) == 2  # overlapping hand labels
    assert activities.count(None) == 68  # moments the labeller marked nothing
    for event in events:
        shown = json.dumps({k: v for k, v in event.payload.items() if k != "private"})
        assert not any(name in shown for name in ADL_NAMES)
        assert not any(name in event.source_key for name in ADL_NAMES)
    answer = owner_api.get(
        "/api/v1/entities/home-a/events", headers={"Accept": "application/x-ndjson"}
    )
    body = b"".join(answer.streaming_content).decode()
    assert len(body.splitlines()) == 818
    assert "private" not in body and not any(name in body for name in ADL_NAMES)
    page = owner_api.get("/api/v1/entities/home-a/events", data={"limit": 50}).json()
    assert all("private" not in e["payload"] for e in page["results"])


def test_ordonez_rerun_adds_nothing_and_an_extended_file_adds_only_its_new_rows(
    team, tmp_path
) -> None:
    sensors = tmp_path / "OrdonezA_Sensors.txt"
    shutil.copyfile(_real("OrdonezA_Sensors.txt"), sensors)
    shutil.copyfile(_real("OrdonezA_ADLs.txt"), tmp_path / "OrdonezA_ADLs.txt")
    assert _import("ordonez", sensors, "home-a", MADRID)["imported"] == 818
    again = _import("ordonez", sensors, "home-a", MADRID)
    assert (again["imported"], again["duplicates"]) == (0, 818)
    original = sensors.read_bytes()
    assert original.endswith(b"Bedroom") and b"\r\n" in original  # CRLF, no final line end
    new_row = _row("2011-12-12 07:30:00", "2011-12-12 07:30:09", "Toilet", "Flush", "Bathroom")
    sensors.write_bytes(original + b"\r\n" + new_row.encode() + b"\r\n")
    extended = _import("ordonez", sensors, "home-a", MADRID)
    assert (extended["imported"], extended["duplicates"]) == (2, 818)
    newest = _events("home-a")[-1]
    assert newest.source_key == (
        "ordonez:OrdonezA:2011-12-12T07:30:09:Toilet:Bathroom:flush:off:2011-12-12T07:30:00"
    )
    assert newest.payload["attributes"]["interval_start"] == "2011-12-12T06:30:00.000000Z"
    assert newest.payload["private"] == {"activity": None}


def test_ordonez_crlf_lf_headers_rulers_and_stray_spaces_read_alike(tmp_path) -> None:
    rows = [
        _row("2011-11-28 10:21:24", "2011-11-28 10:21:31", "Cabinet", "Magnetic", "Bathroom"),
        "",
        HEADER,  # a second header and ruler, as when two exports are concatenated
        RULER,
        "2011-11-28 10:21:44 \t2011-11-28 10:23:31\t \tBasin\t\tPIR\t\t\tBathroom\t\t",
    ]
    (tmp_path / "crlf").mkdir()
    (tmp_path / "lf").mkdir()
    crlf = _rows(tmp_path / "crlf" / "H_Sensors.txt", rows, crlf=True)
    lf = _rows(tmp_path / "lf" / "H_Sensors.txt", rows, crlf=False)
    zone = ZoneInfo(MADRID)
    read_crlf = list(ordonez.OrdonezReader(crlf, zone))
    read_lf = list(ordonez.OrdonezReader(lf, zone))
    assert [s.item for s in read_crlf] == [s.item for s in read_lf]
    assert [s.location for s in read_crlf] == ["H_Sensors.txt:3"] * 2 + ["H_Sensors.txt:7"] * 2
    basin = read_crlf[2].item
    assert basin["payload"]["attributes"] == {"sensor": "Basin", "place": "Bathroom"}
    assert basin["payload"]["type"] == "pir" and "private" not in basin["payload"]


def test_ordonez_dst_gap_and_fold_are_counted_and_read_by_the_localtime_rule(
    team, tmp_path
) -> None:
    sensors = _rows(
        tmp_path / "Dst_Sensors.txt",
        [
            # 2024-03-31 02:00 -> 03:00 in Madrid: 02:30 never happened (gap)
            _row("2024-03-31 02:30:00", "2024-03-31 02:45:00", "Bed", "Pressure", "Bedroom"),
            # 2024-10-27 03:00 -> 02:00: 02:30 happened twice (fold)
            _row("2024-10-27 02:30:00", "2024-10-27 02:40:00", "Seat", "Pressure", "Living"),
        ],
    )
    (tmp_path / "Dst_ADLs.txt").write_text(
        f"{LABELS_HEADER}\r\n{LABELS_RULER}\r\n"
        "2024-03-31 01:00:00\t\t2024-03-31 09:00:00\t\tSleeping\r\n"
    )
    summary = _import("ordonez", sensors, "dst-home", MADRID)
    assert summary["imported"] == 4
    assert summary["notes"] == [
        "2 sensor times in Dst_Sensors.txt fell in a daylight-saving gap (the skipped hour); "
        "read with the offset in force before the jump",
        "2 sensor times in Dst_Sensors.txt fell in the repeated daylight-saving hour; read as "
        "its first occurrence",
    ]
    by_sensor = {
        (e.payload["attributes"]["sensor"], e.payload["value"]): e for e in _events("dst-home")
    }
    # Gap: the offset before the jump (+01:00). Fold: the first occurrence (+02:00).
    assert _iso(by_sensor["Bed", "ON"]) == "2024-03-31T01:30:00Z"
    assert _iso(by_sensor["Bed", "OFF"]) == "2024-03-31T01:45:00Z"
    assert _iso(by_sensor["Seat", "ON"]) == "2024-10-27T00:30:00Z"
    assert _iso(by_sensor["Seat", "OFF"]) == "2024-10-27T00:40:00Z"
    assert by_sensor["Bed", "ON"].payload["private"] == {"activity": "Sleeping"}
    assert by_sensor["Seat", "ON"].payload["private"] == {"activity": None}


def test_ordonez_identical_rows_are_one_event_but_same_time_other_place_is_not(
    team, tmp_path
) -> None:
    door_living = _row("2012-11-12 00:22:57", "2012-11-12 00:22:59", "Door", "PIR", "Living")
    door_kitchen = _row("2012-11-12 00:22:57", "2012-11-12 00:22:59", "Door", "PIR", "Kitchen")
    longer = _row("2012-11-12 00:22:57", "2012-11-12 00:23:30", "Door", "PIR", "Living")
    sensors = _rows(tmp_path / "H_Sensors.txt", [door_living, door_living, door_kitchen, longer])
    summary = _import("ordonez", sensors, "h", MADRID)
    # 8 events read: the repeated row's two are duplicates; the longer interval shares its ON
    # event (same sensor, same instant, same payload) but has its own OFF.
    assert (summary["read"], summary["imported"], summary["duplicates"]) == (8, 5, 3)
    assert "no activity labels: H_ADLs.txt not found" in summary["notes"][0]
    assert all("private" not in e.payload for e in _events("h"))


def test_ordonez_bad_rows_are_reported_with_file_and_line_and_strict_stops(team, tmp_path) -> None:
    sensors = _rows(
        tmp_path / "H_Sensors.txt",
        [
            _row("2011-11-28 10:21:24", "2011-11-28 10:21:31", "Cabinet", "Magnetic", "Bathroom"),
            _row("2011-11-28 10:25:00", "2011-11-28 10:20:00", "Basin", "PIR", "Bathroom"),
            "2011-11-28 10:30:00\t\t2011-11-28 10:31:00\t\tFridge\t\tMagnetic",
            _row("2011-11-31 10:40:00", "2011-11-31 10:41:00", "Fridge", "Magnetic", "Kitchen"),
        ],
    )
    out, err = _run("ordonez", str(sensors), "--team", "acme", "--entity", "h", "--tz", MADRID)
    assert "read 5, imported 2, duplicates 0, rejected 3 (unreadable: 3)" in out
    assert "H_Sensors.txt:4: the interval ends (2011-11-28 10:20:00) before it starts" in err
    assert "H_Sensors.txt:5: expected 5 tab-separated columns" in err
    assert "H_Sensors.txt:6: '2011-11-31 10:40:00' is not a time" in err
    with pytest.raises(CommandError, match=r"--strict.*H_Sensors.txt:4: the interval ends"):
        _run(
            "ordonez", str(sensors), "--team", "acme", "--entity", "h2", "--tz", MADRID, "--strict"
        )


def test_ordonez_refuses_the_labels_file_and_needs_a_time_zone(team) -> None:
    with pytest.raises(CommandError, match="is the activity label file; pass the matching"):
        _import("ordonez", _real("OrdonezA_ADLs.txt"), "home-a", MADRID)
    with pytest.raises(CommandError, match="ordonez files have no time zone"):
        _run("ordonez", str(_real("OrdonezA_Sensors.txt")), "--team", "acme", "--entity", "x")


# --- CASAS (SYNTHETIC) --------------------------------------------------------------------------

LA = synthetic_casas.ZONE


def _casas_file(tmp_path: Path, form: str, **options: Any) -> Path:
    return synthetic_casas.write(tmp_path / f"{form}.txt", form, **options)


def _by_sensor(entity: str) -> dict[tuple[str, str], Event]:
    return {(e.payload["attributes"]["sensor"], _iso(e)): e for e in _events(entity)}


@pytest.mark.parametrize("form", synthetic_casas.FORMS)
def test_casas_layouts_import_every_line_with_private_activity_in_file_order(
    team, tmp_path, form: str
) -> None:
    path = _casas_file(tmp_path, form)
    summary = _import("casas", path, f"casas-{form}", LA)
    good = synthetic_casas.GOOD[form]
    assert (summary["read"], summary["imported"], summary["rejected"]) == (len(good), len(good), {})
    items = [s.item for s in casas.CasasReader(path, ZoneInfo(LA))]
    assert [i["payload"]["private"]["activity"] for i in items] == list(
        synthetic_casas.ACTIVITY[form]
    )
    stored = {e.source_key: e.payload for e in _events(f"casas-{form}")}
    assert {i["source_key"]: i["payload"] for i in items} == stored


def test_casas_classic_maps_sensor_kinds_values_and_times(team, tmp_path) -> None:
    _import("casas", _casas_file(tmp_path, "classic"), "c", LA)
    events = _by_sensor("c")
    expect = {
        ("D001", "2009-11-01T06:55:00.012345Z"): ("door", "CLOSE"),  # 23:55 PDT, the day before
        ("M021", "2009-11-01T06:58:03.502110Z"): ("motion", "OFF"),  # five-digit fraction
        ("T001", "2009-11-01T07:30:12Z"): ("temperature", 21.5),  # spaces, whole seconds
        ("T002", "2009-11-01T15:04:00.750000Z"): ("temperature", 22),
        ("L003", "2009-11-01T15:01:31.500000Z"): ("lamp", "ON"),  # a lamp switch; PST now
        ("I03", "2009-11-01T15:02:00.250000Z"): ("item", "ABSENT"),
        ("AD1-A", "2009-11-01T15:06:10Z"): ("sensor", 2.82),
        ("D001", "2009-11-01T15:45:00Z"): ("door", "OPEN"),  # space and tab before the time
    }
    for key, (kind, value) in expect.items():
        payload = events[key].payload
        assert (payload["type"], payload["value"]) == (kind, value), key
        assert payload["attributes"] == {"sensor": key[0]}


def test_casas_room_and_hh_layouts_keep_rooms_and_sensor_types(team, tmp_path) -> None:
    _import("casas", _casas_file(tmp_path, "rooms"), "r", LA)
    _import("casas", _casas_file(tmp_path, "hh"), "hh", LA)
    light = _by_sensor("r")["LS012", "2011-06-15T14:31:00Z"].payload
    assert light == {
        "type": "light",
        "value": 34,
        "attributes": {"sensor": "LS012", "room": "Kitchen"},
        "private": {"activity": "Cook_Breakfast"},
    }
    battery = _by_sensor("hh")["BATP103", "2012-07-18T19:54:45.472391Z"].payload
    assert battery["type"] == "battery" and battery["value"] == 82
    assert battery["attributes"] == {
        "sensor": "BATP103",
        "room": "Ignore",
        "detail": "Ignore",
        "sensor_type": "Control4-BatteryPercent",
    }
    button = _by_sensor("hh")["B009", "2012-07-18T19:54:47Z"].payload
    assert (button["type"], button["value"]) == ("button", "TAP_COUNT_01")


# The two-name layout of the real AL-Smarthome files (REFERENCE.md, "CASAS layouts"): place,
# device, message, activity. One place holds several sensors.
TWO_NAMES = """\
2011-06-15 15:28:50 OutsideDoor Entry ON Leave_Home
2011-06-15 15:29:00 OutsideDoor FrontDoor OPEN Leave_Home
2011-06-15 15:29:04 OutsideDoor Entry OFF Leave_Home
2011-06-15 15:40:00 Kitchen Kitchen ON Cook_Dinner
2011-06-15 15:40:05 Kitchen KitchenLight ON Cook_Dinner
2011-06-15 15:41:00 Kitchen Kitchen OFF Cook_Dinner
2011-06-15 15:42:00 Kitchen Kitchen ON Cook_Dinner
2011-06-15 15:45:00 Kitchen Kitchen OFF Cook_Dinner
2011-06-15 15:50:00 OutsideDoor Entry ON Enter_Home
2011-06-15 15:52:00 OutsideDoor Entry OFF Enter_Home
2011-06-15 15:54:00 OutsideDoor FrontDoor CLOSE Enter_Home
2011-06-15 16:30:00 Kitchen Kitchen ON Cook_Dinner
2011-06-15 16:31:00 Kitchen Kitchen OFF Cook_Dinner
2011-06-15 17:00:00 Kitchen KitchenLight OFF Wash_Dishes
2011-06-15 17:00:30 Bedroom BedroomTemp 21.5 Other
2011-06-15 17:40:00 Kitchen Kitchen ON Other
"""


def _two_names(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "al.txt"
    path.write_text(TWO_NAMES)
    return [s.item for s in casas.CasasReader(path, ZoneInfo(LA)) if s.item is not None]


def test_casas_two_name_lines_are_one_sensor_per_place_and_device_with_its_kind(
    tmp_path,
) -> None:
    items = _two_names(tmp_path)
    assert len(items) == TWO_NAMES.count("\n")
    seen = {
        i["payload"]["attributes"]["sensor"]: (i["payload"]["type"], i["payload"]["attributes"])
        for i in items
    }
    assert seen == {
        "OutsideDoor/Entry": (
            "motion",
            {"sensor": "OutsideDoor/Entry", "room": "OutsideDoor", "device": "Entry"},
        ),
        "OutsideDoor/FrontDoor": (
            "door",
            {"sensor": "OutsideDoor/FrontDoor", "room": "OutsideDoor", "device": "FrontDoor"},
        ),
        "Kitchen": ("motion", {"sensor": "Kitchen", "room": "Kitchen", "device": "Kitchen"}),
        "Kitchen/KitchenLight": (
            "lamp",
            {"sensor": "Kitchen/KitchenLight", "room": "Kitchen", "device": "KitchenLight"},
        ),
        "Bedroom/BedroomTemp": (
            "temperature",
            {"sensor": "Bedroom/BedroomTemp", "room": "Bedroom", "device": "BedroomTemp"},
        ),
    }
    assert {i["payload"]["private"]["activity"] for i in items} >= {"Leave_Home", "Cook_Dinner"}


def test_a_door_left_open_and_a_lamp_left_on_among_motion_of_their_place_are_in_the_point(
    tmp_path,
) -> None:
    """The entry's motion OFF does not close the front door, the kitchen's motion does not
    stand in for its lamp: at the close of 15:50-16:40 both are still on, since when they
    were."""
    from benchmark.streams import home
    from benchmark.streams.records import StreamEvent

    zone = ZoneInfo(LA)
    events = [
        StreamEvent(n, datetime.fromisoformat(i["occurred_at"]), i["kind"], i["payload"])
        for n, i in enumerate(_two_names(tmp_path), 1)
    ]
    by_end = {p.public["end"]: p.public for p in home.points(events, zone)}
    at_1540 = by_end["15:50"]["on_at_close"]
    assert [(d["device"], d["room"], d["kind"], d["since"][11:19]) for d in at_1540] == [
        ("Kitchen/KitchenLight", "Kitchen", "lamp", "15:40:05"),
        ("OutsideDoor/FrontDoor", "OutsideDoor", "door", "15:29:00"),
    ]
    # Closed at 15:54, 25 minutes after it opened; the lamp stays on until 17:00 (80 minutes).
    assert [d["device"] for d in by_end["16:40"]["on_at_close"]] == ["Kitchen/KitchenLight"]
    assert by_end["17:30"]["on_at_close"] == []
    devices = {d["device"]: d for d in by_end["16:40"]["devices"]}
    assert devices["OutsideDoor/FrontDoor"] == {
        "device": "OutsideDoor/FrontDoor",
        "room": "OutsideDoor",
        "kind": "door",
        "on": 0,
        "off": 1,
    }


@pytest.mark.parametrize("form", synthetic_casas.FORMS)
def test_casas_bad_lines_are_reported_with_file_and_line(team, tmp_path, form: str) -> None:
    path = _casas_file(tmp_path, form, bad_lines=True)
    out, err = _run("casas", str(path), "--team", "acme", "--entity", "c", "--tz", LA)
    bad = synthetic_casas.bad_line_numbers(form)
    good = len(synthetic_casas.GOOD[form])
    assert f"imported {good}, duplicates 0, rejected {len(bad)} (unreadable: {len(bad)})" in out
    for number, reason in bad.items():
        assert f"skipped {form}.txt:{number}: " in err
        line = next(line for line in err.splitlines() if f"{form}.txt:{number}:" in line)
        assert reason in line


def test_casas_strict_stops_at_the_first_bad_line(team, tmp_path) -> None:
    path = _casas_file(tmp_path, "classic", bad_lines=True)
    first = min(synthetic_casas.bad_line_numbers("classic"))
    with pytest.raises(CommandError, match=rf"--strict\): classic.txt:{first}: .*not a valid date"):
        _run("casas", str(path), "--team", "acme", "--entity", "c", "--tz", LA, "--strict")


def test_casas_out_of_order_lines_import_and_resorted_or_respaced_files_add_nothing(
    team, tmp_path
) -> None:
    path = _casas_file(tmp_path, "classic")
    summary = _import("casas", path, "c", LA)
    assert summary["imported"] == 19
    assert (
        "classic.txt: 1 line is earlier than the line above (imported as written): line 11"
        in (summary["notes"])
    )
    lines = path.read_text().splitlines()
    resorted = tmp_path / "resorted.txt"
    resorted.write_text("\n".join(sorted(lines, key=lambda s: s.split()[:2])) + "\n")
    again = _import("casas", resorted, "c", LA)
    assert (again["imported"], again["duplicates"]) == (0, 19)
    assert not any("earlier than" in note for note in again["notes"])
    respaced = tmp_path / "respaced.txt"
    respaced.write_bytes(
        b"".join(line.replace("\t", " ").encode() + b"\r\n" for line in reversed(lines))
    )
    assert _import("casas", respaced, "c", LA)["imported"] == 0
    # Re-labelling a file does not duplicate its events either.
    relabelled = tmp_path / "relabelled.txt"
    relabelled.write_text("\n".join(line.replace("Sleeping", "Sleep") for line in lines) + "\n")
    assert _import("casas", relabelled, "c", LA)["imported"] == 0


def test_casas_annotations_reach_only_private_and_the_api_hides_them(
    team, tmp_path, owner_api
) -> None:
    _import("casas", _casas_file(tmp_path, "classic"), "c", LA)
    events = _events("c")
    assert {json.dumps(e.payload["private"]) for e in events} >= {
        '{"activity": "Sleeping"}',
        '{"activity": ["Meal_Preparation", "R2_Sleep"]}',
        '{"activity": null}',
    }
    answer = owner_api.get("/api/v1/entities/c/events", headers={"Accept": "application/x-ndjson"})
    body = b"".join(answer.streaming_content).decode()
    assert len(body.splitlines()) == 19
    for hidden in ("private", "Sleeping", "Meal_Preparation", "R2_Sleep", "begin", '"1"'):
        assert hidden not in body


def test_casas_repeated_hour_is_counted_and_read_as_its_first_occurrence(team, tmp_path) -> None:
    summary = _import("casas", _casas_file(tmp_path, "classic"), "c", LA)
    assert (
        "2 times in classic.txt fell in the repeated daylight-saving hour; read as its first "
        "occurrence"
    ) in summary["notes"]
    # 01:40 on 2009-11-01 in Los Angeles: first occurrence is PDT (-07:00).
    assert ("M021", "2009-11-01T08:40:00.000100Z") in _by_sensor("c")


def test_casas_unlabelled_files_carry_no_private_block_and_unpaired_marks_are_noted(
    team, tmp_path
) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text(
        "2009-06-01 17:51:20.055202\tM046\tON\n2009-06-01 17:51:22.036689\tM046\tOFF\n"
    )
    assert _import("casas", plain, "plain", LA)["imported"] == 2
    assert all("private" not in e.payload for e in _events("plain"))
    unpaired = tmp_path / "unpaired.txt"
    unpaired.write_text(
        "2009-06-01 08:00:00 M001 ON Work end\n"
        "2009-06-01 08:10:00 M001 OFF Relax begin\n"
        "2009-06-01 08:20:00 M002 ON\n"
    )
    summary = _import("casas", unpaired, "unpaired", LA)
    assert summary["notes"] == [
        "unpaired.txt: 1 activity end has no begin: line 1",
        "unpaired.txt: 1 activity with a begin and no end, taken to last until the file's final "
        "event: line 2",
    ]
    activities = [e.payload["private"]["activity"] for e in _events("unpaired")]
    assert activities == [None, "Relax", "Relax"]


def test_casas_generator_is_deterministic_and_marks_its_output_synthetic(tmp_path, capsys) -> None:
    assert "SYNTHETIC" in (synthetic_casas.__doc__ or "")
    first = synthetic_casas.write(tmp_path / "a.txt", "classic", bad_lines=True, crlf=True)
    assert (
        synthetic_casas.main(
            ["--form", "classic", "--out", str(tmp_path / "b.txt"), "--bad-lines", "--crlf"]
        )
        == 0
    )
    assert first.read_bytes() == (tmp_path / "b.txt").read_bytes()
    assert b"\r\n" in first.read_bytes()
    assert "wrote SYNTHETIC CASAS classic log" in capsys.readouterr().out
    with pytest.raises(ValueError, match="unknown form"):
        synthetic_casas.lines("csv")
