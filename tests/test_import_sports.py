"""import_events fitbit / heartsteps: real Fitabase and HeartSteps files into sports entities."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter
from datetime import datetime
from io import StringIO
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.core.management import CommandError, call_command

from aframes_web.streams.importers import fitbit as fitbit_format
from aframes_web.streams.importers import formats
from aframes_web.streams.importers import heartsteps as heartsteps_format
from aframes_web.streams.importers.fitbit import RowError, parse_local
from aframes_web.streams.models import Entity, Event
from benchmark.synthetic.heartsteps import (
    GFSTEPS_COLUMNS,
    JBSTEPS_COLUMNS,
    SUGGESTIONS_COLUMNS,
    write_heartsteps,
)
from tests.conftest import need_service

pytestmark = pytest.mark.django_db

DATA = Path(__file__).parents[2] / "shared" / "data"
FITABASE = DATA / "fitbit-fitabase" / "period-2016-04-12"
HEARTSTEPS_USERS = DATA / "heartsteps-v1" / "users.csv"
HOURLY_HEADER = "Id,ActivityHour,StepTotal"


@pytest.fixture
def sports_formats() -> None:
    """The sports formats are registered with import_events."""
    assert formats()["fitbit"] is fitbit_format.FORMAT
    assert formats()["heartsteps"] is heartsteps_format.FORMAT


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_events", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _fitbit(path: Path, *extra: str) -> dict:
    args = ("fitbit", str(path), "--team", "acme", "--entity", "fitbit")
    out, _ = _run(*args, "--tz", "America/New_York", "--json", *extra)
    return json.loads(out)


def _heartsteps(path: Path, *extra: str) -> dict:
    args = ("heartsteps", str(path), "--team", "acme", "--entity", "hs", "--json", *extra)
    return json.loads(_run(*args)[0])


MINUTES_FOLDER = DATA / "fitbit-fitabase" / "minutes-2016-04-12"


def test_real_wide_minute_files_give_one_event_per_person_hour_with_its_minutes(
    team, sports_formats
) -> None:
    if not MINUTES_FOLDER.is_dir():
        need_service("shared data fitbit-fitabase minutes", False)
    with (MINUTES_FOLDER / "minuteStepsWide_merged.csv").open(newline="") as handle:
        steps_rows = list(csv.reader(handle))
    header, body = steps_rows[0], steps_rows[1:]
    assert header[:3] == ["Id", "ActivityHour", "Steps00"] and header[-1] == "Steps59"

    summary = _fitbit(MINUTES_FOLDER)

    assert summary["read"] == 2 * len(body) == 2 * 21_645
    assert summary["rejected"] == {} and summary["imported"] == summary["read"]
    assert len(summary["entities"]) == 33
    stored = Counter(Event.objects.values_list("payload__type", flat=True))
    assert stored == {"steps_by_minute": 21_645, "intensity_by_minute": 21_645}
    first_row = body[0]
    event = Event.objects.get(source_key="fitbit:1503960366:minute_steps:2016-04-13T00:00")
    # 4/13/2016 12:00:00 AM EDT is 04:00Z; the hour's minutes are complete at its end.
    assert event.occurred_at == datetime.fromisoformat("2016-04-13T05:00:00Z")
    assert event.payload["attributes"]["minutes"] == [int(c) for c in first_row[2:]]
    assert event.payload["value"] == sum(int(c) for c in first_row[2:])
    assert event.payload["attributes"]["hour"] == "2016-04-13T00:00"
    levels = Event.objects.get(source_key="fitbit:1503960366:minute_intensity:2016-04-13T00:00")
    assert set(levels.payload["attributes"]["minutes"]) <= {0, 1, 2, 3}
    assert len(levels.payload["attributes"]["minutes"]) == 60
    # Each hour's minutes add up to the hourly file's total (the SOURCE.md check, through us).
    hourly = {}
    with (FITABASE / "hourlySteps_merged.csv").open(newline="") as handle:
        for row in list(csv.reader(handle))[1:]:
            hourly[(row[0], parse_local(row[1]))] = int(row[2])
    matched = 0
    for row in body[:500]:
        key = (row[0], parse_local(row[1]))
        if key in hourly:
            matched += 1
            assert sum(int(c) for c in row[2:]) == hourly[key]
    assert matched > 400


def test_wide_minute_rows_with_a_bad_cell_are_reported_and_the_rest_imported(
    team, sports_formats, tmp_path
) -> None:
    header = "Id,ActivityHour," + ",".join(f"Intensity{m:02d}" for m in range(60))
    good = "7,4/13/2016 1:00:00 PM," + ",".join(["1"] * 60)
    bad_level = "7,4/13/2016 2:00:00 PM," + ",".join(["4"] + ["0"] * 59)
    short = "7,4/13/2016 3:00:00 PM,1,2"
    path = tmp_path / "minuteIntensitiesWide_merged.csv"
    path.write_text("\r\n".join([header, good, bad_level, short]) + "\r\n")

    errors = [
        (i.location, i.error)
        for i in fitbit_format.FitabaseReader(path, ZoneInfo("America/New_York"))
        if i.error
    ]
    assert errors == [
        ("minuteIntensitiesWide_merged.csv:3", "Intensity00 is 4, not an intensity level 0-3"),
        ("minuteIntensitiesWide_merged.csv:4", "has 4 fields; the header has 62"),
    ]
    summary = _fitbit(path)

    assert summary["imported"] == 1 and summary["rejected"] == {"unreadable": 2}
    event = Event.objects.get()
    assert event.payload == {
        "type": "intensity_by_minute",
        "value": 60,
        "unit": "level-min",
        "attributes": {"resolution": "minute", "minutes": [1] * 60, "hour": "2016-04-13T13:00"},
    }


def _hourly(path: Path, rows: list[str]) -> Path:
    path.write_text("\r\n".join([HOURLY_HEADER, *rows]) + "\r\n")
    return path


def _times(**filters: object) -> list[str]:
    events = Event.objects.filter(**filters).order_by("occurred_at")
    return [e.occurred_at.isoformat().replace("+00:00", "Z") for e in events]


# -- Fitabase -------------------------------------------------------------------------------

FITABASE_TYPES = {
    "dailyActivity_merged.csv": "daily_activity",
    "sleepDay_merged.csv": "sleep",
    "weightLogInfo_merged.csv": "weight",
    "hourlySteps_merged.csv": "steps",
    "hourlyIntensities_merged.csv": "intensity",
    "hourlyCalories_merged.csv": "calories",
}


def test_real_fitabase_folder_gives_one_entity_per_id_and_an_event_per_row(
    team, sports_formats
) -> None:
    if not FITABASE.is_dir():
        need_service("shared data fitbit-fitabase", False)
    rows: Counter[str] = Counter()
    distinct: Counter[str] = Counter()
    ids: set[str] = set()
    for name, kind in FITABASE_TYPES.items():
        with (FITABASE / name).open(newline="") as handle:
            body = list(csv.reader(handle))[1:]
        rows[kind] = len(body)
        distinct[kind] = len({tuple(row) for row in body})
        ids.update(row[0] for row in body)

    summary = _fitbit(FITABASE)

    assert len(ids) == 33
    assert summary["read"] == sum(rows.values()) == 67_717
    # sleepDay_merged.csv repeats three rows byte for byte; they are one sleep record each.
    assert summary["duplicates"] == sum(rows.values()) - sum(distinct.values()) == 3
    assert summary["imported"] == sum(distinct.values())
    assert summary["rejected"] == {} and "notes" not in summary
    entities = Entity.objects.filter(team=team, key__startswith="fitbit:")
    assert sorted(e.key for e in entities) == sorted(f"fitbit:{i}" for i in ids)
    assert {(e.scope, e.timezone) for e in entities} == {("sports", "America/New_York")}
    assert summary["entities"] == {e.key: Event.objects.filter(entity=e).count() for e in entities}
    stored = Counter(Event.objects.values_list("payload__type", flat=True))
    assert stored == distinct
    assert rows == {
        "steps": 22_099,
        "intensity": 22_099,
        "calories": 22_099,
        "daily_activity": 940,
        "sleep": 413,
        "weight": 67,
    }

    first = Event.objects.get(source_key="fitbit:1503960366:hourly_steps:2016-04-12T00:00")
    assert first.entity.key == "fitbit:1503960366"
    # 4/12/2016 12:00:00 AM EDT is 04:00Z; the hour's total is complete at its end.
    assert first.occurred_at == datetime.fromisoformat("2016-04-12T05:00:00Z")
    assert first.payload == {
        "type": "steps",
        "value": 373,
        "unit": "count",
        "attributes": {"resolution": "hour", "hour": "2016-04-12T00:00"},
    }
    day = Event.objects.get(source_key="fitbit:1503960366:daily_activity:2016-04-12")
    assert day.occurred_at == datetime.fromisoformat("2016-04-13T03:59:59Z")
    assert day.payload["value"] == 13162
    assert day.payload["attributes"]["very_active_distance_km"] == 1.88
    assert day.payload["attributes"]["calories_kcal"] == 1985
    weight = Event.objects.get(source_key="fitbit:1503960366:weight:log1462233599000")
    assert weight.payload["value"] == 52.6 and weight.payload["attributes"]["bmi"] == 22.65

    again = _fitbit(FITABASE)
    assert again["imported"] == 0 and again["duplicates"] == again["read"] == 67_717


def test_extended_file_imports_only_the_new_rows(team, sports_formats, tmp_path) -> None:
    rows = [f"1503960366,4/12/2016 {h}:00:00 AM,{h * 10}" for h in range(1, 6)]
    path = _hourly(tmp_path / "hourlySteps_merged.csv", rows[:3])
    assert _fitbit(path)["imported"] == 3
    _hourly(path, rows)
    assert _fitbit(path) == {
        "read": 5,
        "imported": 2,
        "duplicates": 3,
        "dropped_text_fields": 0,
        "rejected": {},
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4/12/2016 12:00:00 AM", "2016-04-12T00:00:00"),
        ("4/12/2016 12:30:15 AM", "2016-04-12T00:30:15"),
        ("4/12/2016 1:00:00 AM", "2016-04-12T01:00:00"),
        ("4/12/2016 11:59:59 AM", "2016-04-12T11:59:59"),
        ("4/12/2016 12:00:00 PM", "2016-04-12T12:00:00"),
        ("4/12/2016 12:45:00 PM", "2016-04-12T12:45:00"),
        ("4/12/2016 1:00:00 PM", "2016-04-12T13:00:00"),
        ("5/2/2016 11:59:59 PM", "2016-05-02T23:59:59"),
        ("4/12/2016", "2016-04-12T00:00:00"),
        ("4/12/2016 13:05:00", "2016-04-12T13:05:00"),
    ],
)
def test_twelve_hour_clock_times_are_read_as_written(text: str, expected: str) -> None:
    assert parse_local(text).isoformat() == expected


@pytest.mark.parametrize(
    "text",
    ["4/12/2016 13:00:00 PM", "4/12/2016 0:30:00 AM", "2016-04-12 01:00:00", "4/31/2016", ""],
)
def test_impossible_times_are_row_errors(text: str) -> None:
    with pytest.raises(RowError):
        parse_local(text)


def test_noon_and_midnight_land_twelve_hours_apart(team, sports_formats, tmp_path) -> None:
    path = _hourly(
        tmp_path / "hourlySteps_merged.csv",
        ["7,4/12/2016 12:00:00 AM,1", "7,4/12/2016 12:00:00 PM,2", "7,4/12/2016 11:00:00 PM,3"],
    )
    assert _fitbit(path)["imported"] == 3
    # Hours end 01:00, 13:00 and 24:00 EDT (UTC-4).
    assert _times() == ["2016-04-12T05:00:00Z", "2016-04-12T17:00:00Z", "2016-04-13T04:00:00Z"]


def test_fall_back_hour_written_twice_is_both_hours_and_noted(
    team, sports_formats, tmp_path
) -> None:
    # 6 Nov 2016, America/New_York: 1:00-2:00 AM happens twice (EDT, then EST).
    path = _hourly(
        tmp_path / "hourlySteps_merged.csv",
        [
            "7,11/6/2016 12:00:00 AM,10",
            "7,11/6/2016 1:00:00 AM,20",
            "7,11/6/2016 1:00:00 AM,30",
            "7,11/6/2016 2:00:00 AM,40",
            "8,11/6/2016 1:00:00 AM,50",
        ],
    )
    summary = _fitbit(path)
    assert summary["imported"] == 5 and summary["duplicates"] == 0
    assert _times(entity__key="fitbit:7") == [
        "2016-11-06T05:00:00Z",  # 12-1 AM EDT
        "2016-11-06T06:00:00Z",  # 1-2 AM EDT
        "2016-11-06T07:00:00Z",  # 1-2 AM EST, the repeated hour
        "2016-11-06T08:00:00Z",  # 2-3 AM EST
    ]
    # Person 8 wrote the hour once: its first occurrence, as localtime rules.
    assert _times(entity__key="fitbit:8") == ["2016-11-06T06:00:00Z"]
    repeated = Event.objects.get(source_key="fitbit:7:hourly_steps:2016-11-06T01:00#2")
    assert repeated.payload["value"] == 30
    (note,) = summary["notes"]
    assert "3 local time(s) fell in a repeated fall-back hour of America/New_York" in note
    assert "except 1 hourly row(s)" in note
    assert _fitbit(path)["duplicates"] == 5


def test_spring_forward_hour_is_noted(team, sports_formats, tmp_path) -> None:
    path = _hourly(tmp_path / "hourlySteps_merged.csv", ["7,3/13/2016 2:00:00 AM,5"])
    summary = _fitbit(path)
    assert summary["imported"] == 1
    assert summary["notes"] == [
        "1 local time(s) fall in the hour America/New_York skips at spring-forward: read with "
        "the offset in force before the jump"
    ]


def test_bad_rows_are_reported_with_file_and_line(team, sports_formats, tmp_path) -> None:
    path = _hourly(
        tmp_path / "hourlySteps_merged.csv",
        [
            "7,4/12/2016 1:00:00 AM,5",
            "not an id,4/12/2016 2:00:00 AM,5",
            "7,4/31/2016 1:00:00 AM,5",
            "7,4/12/2016 3:00:00 AM,lots",
            "7,4/12/2016 4:00:00 AM",
            "7,4/12/2016 5:00:00 AM,",
        ],
    )
    out, err = _run(
        "fitbit", str(path), "--team", "acme", "--entity", "fitbit", "--tz", "America/New_York"
    )
    assert "read 6, imported 1, duplicates 0, rejected 5 (unreadable: 5)" in out
    assert "hourlySteps_merged.csv:3: Id 'not an id' is not a participant id" in err
    assert "hourlySteps_merged.csv:4: '4/31/2016 1:00:00 AM' is not a valid date" in err
    assert "hourlySteps_merged.csv:5: StepTotal is 'lots', not a number" in err
    assert "hourlySteps_merged.csv:6: has 2 fields; the header has 3" in err
    assert "hourlySteps_merged.csv:7: StepTotal is empty" in err


def test_folder_notes_unknown_csv_files_and_reads_the_known_ones(
    team, sports_formats, tmp_path
) -> None:
    _hourly(tmp_path / "hourlySteps_merged.csv", ["7,4/12/2016 1:00:00 AM,5"])
    (tmp_path / "minuteSleep_merged.csv").write_text("Id,date,value,logId\r\n7,x,1,2\r\n")
    (tmp_path / "README.txt").write_text("not data")
    summary = _fitbit(tmp_path)
    assert summary["imported"] == 1
    assert summary["notes"] == ["skipped minuteSleep_merged.csv: not a Fitabase file kind read"]


def test_unusable_files_and_missing_tz_are_clear_errors(team, sports_formats, tmp_path) -> None:
    other = tmp_path / "minuteSleep_merged.csv"
    other.write_text("Id,date,value,logId\r\n")
    with pytest.raises(CommandError, match="not a Fitabase file this importer reads"):
        _fitbit(other)
    with pytest.raises(CommandError, match="fitbit files have no time zone"):
        _run("fitbit", str(other), "--team", "acme", "--entity", "fitbit")
    wrong = tmp_path / "hourlySteps_merged.csv"
    wrong.write_text("Id,Hour,Steps\r\n7,4/12/2016 1:00:00 AM,5\r\n")
    summary = _fitbit(wrong)
    assert summary["imported"] == 0 and summary["rejected"] == {"unreadable": 1}


# -- HeartSteps V1 --------------------------------------------------------------------------


@pytest.fixture
def heartsteps_folder(tmp_path: Path) -> Path:
    if not HEARTSTEPS_USERS.is_file():
        need_service("shared data heartsteps-v1", False)
    folder = tmp_path / "heartsteps"
    write_heartsteps(folder, users=(1, 2, 3), days=2, seed=0)
    shutil.copy(HEARTSTEPS_USERS, folder / "users.csv")
    return folder


def _table(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_synthetic_tables_have_the_release_columns_and_are_deterministic(tmp_path) -> None:
    counts = write_heartsteps(tmp_path / "a", seed=3)
    write_heartsteps(tmp_path / "b", seed=3)
    for name, columns, width in (
        ("suggestions", SUGGESTIONS_COLUMNS, 86),
        ("jbsteps", JBSTEPS_COLUMNS, 10),
        ("gfsteps", GFSTEPS_COLUMNS, 7),
    ):
        first = (tmp_path / "a" / f"{name}.csv").read_bytes()
        assert first == (tmp_path / "b" / f"{name}.csv").read_bytes()
        header = first.decode().splitlines()[0].split(",")
        assert tuple(header) == columns and len(set(header)) == width
        assert len(first.decode().splitlines()) == counts[name] + 1
    assert {"sugg.decision.utime", "jbsteps30pre", "jbsteps30", "send", "avail"} <= set(
        SUGGESTIONS_COLUMNS
    )


def test_heartsteps_synthetic_tables_and_real_users_import(
    team, sports_formats, heartsteps_folder
) -> None:
    users = _table(heartsteps_folder / "users.csv")
    suggestions = _table(heartsteps_folder / "suggestions.csv")
    jawbone = _table(heartsteps_folder / "jbsteps.csv")
    google_fit = _table(heartsteps_folder / "gfsteps.csv")

    summary = _heartsteps(heartsteps_folder, "--tz", "America/Detroit")

    total = len(users) + len(suggestions) + len(jawbone) + len(google_fit)
    assert len(users) == 37
    assert summary["read"] == summary["imported"] == total
    assert summary["rejected"] == {} and "notes" not in summary
    assert len(summary["entities"]) == 37
    assert Entity.objects.filter(key__startswith="hs:", scope="sports").count() == 37
    stored = Counter(Event.objects.values_list("payload__type", flat=True))
    assert stored == {
        "participant": 37,
        "decision_point": len(suggestions),
        "steps": len(jawbone) + len(google_fit),
    }
    sources = Counter(
        Event.objects.filter(payload__type="steps").values_list(
            "payload__attributes__source", flat=True
        )
    )
    assert sources == {"jawbone": len(jawbone), "google_fit": len(google_fit)}

    for row in suggestions:
        event = Event.objects.get(
            source_key=f"heartsteps:{row['user.index']}:decision:{row['decision.index']}"
        )
        assert event.entity.key == f"hs:{row['user.index']}"
        assert event.payload["value"] == (1 if row["send"] == "True" else 0)
        decided = datetime.fromisoformat(row["sugg.decision.utime"] + "Z")
        assert event.occurred_at == decided
        assert event.payload["attributes"]["jawbone_steps_30min_before"] == int(row["jbsteps30pre"])
        private = event.payload["private"]
        assert private["jbsteps30"] == int(row["jbsteps30"])
        assert private.get("response") == (row["response"] or None)
        assert "jbsteps30" not in event.payload["attributes"]

    minute = Event.objects.get(source_key="heartsteps:1:jawbone:" + "2015-08-03T11:31:00Z")
    assert minute.occurred_at == datetime.fromisoformat("2015-08-03T11:32:00Z")
    assert minute.payload["attributes"] == {"resolution": "minute", "source": "jawbone"}

    participant = Event.objects.get(source_key="heartsteps:1:participant")
    assert participant.occurred_at == datetime.fromisoformat("2015-07-22T14:34:03Z")
    assert participant.payload["attributes"]["local_time"] == "2015-07-22T10:34"
    allowed = {
        "age",
        "gender",
        "own_phone",
        "uses_fitness_app",
        "uses_fitness_tracker",
        "phone_comfort",
        "conscientiousness",
        "self_efficacy",
        "ipaq_activity_level",
        "met_minutes_per_week",
        "timezone",
        "local_time",
    }
    stored_text = json.dumps(
        list(Event.objects.filter(payload__type="participant").values_list("payload", flat=True))
    )
    for person in users:
        for column in ("occupation", "fitapp.names", "fittracker.names", "other.mobile"):
            if person[column]:
                assert json.dumps(person[column])[1:-1] not in stored_text
    for payload in Event.objects.filter(payload__type="participant").values_list(
        "payload", flat=True
    ):
        assert set(payload["attributes"]) <= allowed

    assert _heartsteps(heartsteps_folder)["duplicates"] == total


def test_heartsteps_rows_without_utc_fall_back_to_tz_and_bad_rows_are_located(
    team, sports_formats, tmp_path
) -> None:
    path = tmp_path / "jbsteps.csv"
    rows = [
        ",".join(JBSTEPS_COLUMNS),
        "4,2015-08-03 12:00:00,2015-08-03 08:00:00,12,,,,,,",
        "4,,2015-08-03 08:01:00,13,,,,,,",
        "4,2015-08-03 12:02:00,,many,,,,,,",
        "4,,,14,,,,,,",
    ]
    path.write_text("\n".join(rows) + "\n")
    out, err = _run("heartsteps", str(path), "--team", "acme", "--entity", "no-zone")
    assert "read 4, imported 1, duplicates 0, rejected 3" in out
    assert "jbsteps.csv:3: steps.utime is empty; pass --tz to read steps.utime.local" in err
    assert "jbsteps.csv:4: steps is 'many', not a number" in err
    assert "jbsteps.csv:5: steps.utime is empty" in err
    summary = _heartsteps(path, "--tz", "America/Detroit")
    assert summary["imported"] == 2 and summary["rejected"] == {"unreadable": 2}
    assert summary["notes"] == [
        "1 row(s) had no UTC time and were read from their local time in America/Detroit"
    ]
    # 08:01 EDT is 12:01Z; the minute's count is complete at 12:02Z.
    assert _times(entity__key="hs:4") == ["2015-08-03T12:01:00Z", "2015-08-03T12:02:00Z"]


def test_private_outcomes_never_leave_through_the_api(
    team, owner_api, sports_formats, heartsteps_folder
) -> None:
    _heartsteps(heartsteps_folder)
    stored = Event.objects.filter(entity__key="hs:1", payload__type="decision_point")
    assert stored and all("private" in e.payload for e in stored)

    seen = []
    url = "/api/v1/entities/hs:1/events?limit=500"
    while url:
        answer = owner_api.get(url)
        assert answer.status_code == 200
        seen.extend(answer.json()["results"])
        url = answer.json()["next"]
    decisions = [e for e in seen if e["payload"]["type"] == "decision_point"]
    assert len(decisions) == stored.count()
    assert all("private" not in e["payload"] for e in seen)

    streamed = owner_api.get(
        "/api/v1/entities/hs:1/events", headers={"Accept": "application/x-ndjson"}
    )
    body = b"".join(streamed.streaming_content).decode()
    assert '"decision_point"' in body and '"private"' not in body
    assert '"jbsteps30"' not in body and '"response"' not in body


def test_upload_names_with_a_prefix_still_name_the_file_kind(
    team, sports_formats, tmp_path
) -> None:
    path = _hourly(tmp_path / "0f3a9c-hourlySteps_merged.csv", ["7,4/12/2016 1:00:00 AM,5"])
    assert _fitbit(path)["imported"] == 1
    steps = tmp_path / "0f3a9c-gfsteps.csv"
    steps.write_text(",".join(GFSTEPS_COLUMNS) + "\n4,2015-08-03 12:00:00,12,,,,\n")
    assert _heartsteps(steps)["imported"] == 1
    assert Event.objects.get(entity__key="hs:4").payload["attributes"]["source"] == "google_fit"


def test_heartsteps_folder_notes_tables_it_does_not_read(team, sports_formats, tmp_path) -> None:
    (tmp_path / "gfsteps.csv").write_text(
        ",".join(GFSTEPS_COLUMNS) + "\n4,2015-08-03 12:00:00,12,,,,\n"
    )
    (tmp_path / "dailyema.csv").write_text("user.index,study.date\n4,2015-08-03\n")
    summary = _heartsteps(tmp_path)
    assert summary["imported"] == 1
    assert summary["notes"] == ["skipped dailyema.csv: not a HeartSteps V1 table read"]
    with pytest.raises(CommandError, match="not a HeartSteps V1 file this importer reads"):
        _heartsteps(tmp_path / "dailyema.csv")
