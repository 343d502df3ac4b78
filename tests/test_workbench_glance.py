"""The workbench's point at a glance (aframes_web.annotation.glance) on hand-made days: the same
wall-clock window on earlier days, across a change of clocks; doors as bars, events as ticks;
what is on at the close with its local start; readable rows; ranges that stop at the point."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from aframes_web.annotation import glance
from aframes_web.streams.models import Event
from aframes_web.streams.services import entity_create, events_ingest

PARIS = ZoneInfo("Europe/Paris")


def _event(
    day: date, hour: int, minute: int, kind: str, value: str, sensor: str, room: str
) -> dict[str, Any]:
    moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=PARIS)
    return {
        "occurred_at": moment.isoformat(),
        "kind": "observation",
        "source_key": f"{day}:{hour}:{minute}:{sensor}:{value}",
        "payload": {
            "type": kind,
            "value": value,
            "attributes": {"sensor": sensor, "room": room},
            "private": {"activity": "ground-truth"},
        },
    }


def _morning(day: date) -> list[dict[str, Any]]:
    """The front door open 07:00–07:20 local, the kitchen moving at 07:10."""
    return [
        _event(day, 7, 0, "door", "OPEN", "FrontDoor", "hall"),
        _event(day, 7, 10, "motion", "ON", "M-kitchen", "kitchen"),
        _event(day, 7, 20, "door", "CLOSE", "FrontDoor", "hall"),
    ]


def _task(entity: Any, close: datetime, public: dict[str, Any]) -> Any:
    """A task as glance reads it: its point (time, public fields) and its stream's entity."""
    point = SimpleNamespace(at=close, public=public, event_id=None)
    return SimpleNamespace(point=point, stream=SimpleNamespace(entity=entity, entity_id=entity.pk))


@pytest.fixture
def home(team: Any) -> Any:
    # 30 and 31 March 2024: France moves its clocks forward in the night to Sunday 31.
    entity = entity_create(team=team, key="dst-home", scope="home", timezone_name="Europe/Paris")
    days = [date(2024, 3, 29), date(2024, 3, 30), date(2024, 3, 31), date(2024, 4, 1)]
    items = [item for day in days for item in _morning(day)]
    # After the point (1 April 07:30): must never be drawn or listed.
    items.append(_event(date(2024, 4, 1), 7, 45, "door", "OPEN", "BackDoor", "garden"))
    events_ingest(entity=entity, items=items)
    return entity


def test_the_same_wall_clock_window_on_each_earlier_day_across_a_clock_change(home) -> None:
    close = datetime(2024, 4, 1, 7, 30, tzinfo=PARIS)
    drawn = glance.baseline(_task(home, close, {"type": "home_segment"}), days=14)
    assert drawn["days"] == 14 and len(drawn["panels"]) == 15
    assert [lane["name"] for lane in drawn["lanes"]] == ["hall", "kitchen"]
    by_day = {panel["day"]: panel for panel in drawn["panels"]}
    # The window is 05:30–07:30 local every day: the door's 07:00–07:20 is the same bar on each
    # day, before and after the change (3/4 to 11/12 of the width), the kitchen a tick at 07:10.
    for day in (date(2024, 3, 29), date(2024, 3, 30), date(2024, 3, 31), date(2024, 4, 1)):
        panel = by_day[day]
        assert panel["events"] == 3, day
        (bar,) = panel["bars"]
        assert (bar["x"], bar["w"]) == (195.0, pytest.approx(43.3, abs=0.1)), day
        assert sorted(t["x"] for t in panel["ticks"]) == [
            195.0,
            pytest.approx(216.7, abs=0.1),
            pytest.approx(238.3, abs=0.1),
        ]
    assert by_day[date(2024, 4, 1)]["today"] and by_day[date(2024, 3, 20)]["events"] == 0
    assert drawn["panels"][0]["today"]  # the point's day first
    # Nothing after the point: the back door (07:45) is on no panel.
    assert "garden" not in str(drawn)


def test_twenty_eight_days_on_request_and_the_point_window_when_longer(home) -> None:
    close = datetime(2024, 4, 1, 7, 30, tzinfo=PARIS)
    public = {"type": "home_segment", "start": "04:00", "end": "07:30"}
    drawn = glance.baseline(_task(home, close, public), days=28)
    assert len(drawn["panels"]) == 29
    assert drawn["from"] == datetime(2024, 4, 1, 4, 0, tzinfo=PARIS)


def test_what_is_on_at_the_close_in_local_time(home) -> None:
    close = datetime(2024, 4, 1, 7, 30, tzinfo=PARIS)
    since = datetime(2024, 4, 1, 5, 15, tzinfo=UTC)  # 07:15 in Paris (summer time)
    public = {
        "type": "home_segment",
        "on_at_close": [
            {"device": "FrontDoor", "room": "hall", "kind": "door", "since": since.isoformat()}
        ],
        "quiet_min": 95,
    }
    found = glance.at_close(_task(home, close, public))
    (door,) = found["on"]
    assert door["device"] == "the front door (hall)"
    assert door["since"].strftime("%H:%M") == "07:15" and door["for"] == "15 min"
    assert found["quiet"] == "1 h 35 min" and found["close"].strftime("%H:%M") == "07:30"
    busy = glance.at_close(_task(home, close, {**public, "quiet_min": 0}))
    assert busy["quiet"] == "" and busy["active_at_close"]


def test_rows_read_as_a_person_reads_them_without_the_private_part(home) -> None:
    event = Event.objects.filter(entity=home).order_by("occurred_at").first()
    row = glance.readable(event)
    assert (row.lane, row.source, row.message) == ("hall", "FrontDoor", "door OPEN")
    assert "private" not in row.raw


def test_a_range_never_runs_past_the_point(home) -> None:
    close = datetime(2024, 4, 1, 7, 30, tzinfo=PARIS)
    task = _task(home, close, {"type": "home_segment"})
    far = datetime(2099, 1, 1, tzinfo=UTC)
    found = list(glance.history_range(task, close - timedelta(hours=1), far))
    assert [e.payload["attributes"]["sensor"] for e in found] == [
        "FrontDoor",
        "M-kitchen",
        "FrontDoor",
    ]


def test_a_door_opened_shortly_before_the_window_is_drawn_open_from_its_start(team) -> None:
    entity = entity_create(team=team, key="early", scope="home", timezone_name="Europe/Paris")
    day = date(2024, 5, 6)
    events_ingest(
        entity=entity,
        items=[
            _event(day, 5, 0, "door", "OPEN", "FrontDoor", "hall"),  # 30 min before 05:30
            _event(day, 6, 30, "door", "CLOSE", "FrontDoor", "hall"),
        ],
    )
    close = datetime(2024, 5, 6, 7, 30, tzinfo=PARIS)
    (panel,) = [p for p in glance.baseline(_task(entity, close, {}), 14)["panels"] if p["today"]]
    assert [(b["x"], b["w"]) for b in panel["bars"]] == [(0.0, 130.0)]
    assert panel["events"] == 1  # the opening is before the window: a bar, not a tick


def test_a_day_summary_as_far_as_it_is_known_at_the_point(home) -> None:
    close = datetime(2024, 4, 1, 7, 15, tzinfo=PARIS)
    task = _task(home, close, {"type": "home_segment"})
    earlier = glance.day_summary(task, date(2024, 3, 31))
    assert dict(earlier["first_last"]) == {
        "hall": ("07:00", "07:20"),
        "kitchen": ("07:10", "07:10"),
    }
    assert earlier["longest_on"] == "the front door (hall), 20 min"
    assert earlier["longest_quiet"] == "10 min from 07:00"
    # On the point's own day the door has not closed yet at 07:15: still on, up to the close.
    today = glance.day_summary(task, date(2024, 4, 1))
    assert today["events"] == 2
    assert today["longest_on"] == "the front door (hall) (still on), 15 min"


def _task(entity: Any, at: datetime, public: dict[str, Any]) -> Any:
    return SimpleNamespace(
        point=SimpleNamespace(at=at, public=public, event_id=None),
        stream=SimpleNamespace(entity=entity, entity_id=entity.pk),
    )


def test_a_wearable_point_states_the_hour_s_steps_and_sitting(team: Any) -> None:
    entity = entity_create(team=team, key="wrist", scope="sports", timezone_name="Europe/Paris")
    public = {
        "type": "sports_slot",
        "steps_last_60": 1234,
        "sedentary_min_last_60": 45,
        "active_min_last_60": 3,
        "steps_today": 8021,
        "worn_last_60": True,
        "last_sleep_min": 412,
    }
    close = datetime(2024, 5, 6, 14, 0, tzinfo=ZoneInfo("Europe/Paris"))
    rows = dict(glance.at_close(_task(entity, close, public))["state"])
    assert rows["Steps in the hour before"] == "1,234 steps"
    assert rows["Sitting in the hour before"] == "45 min"
    assert rows["Steps today so far"] == "8,021 steps" and rows["Last sleep"] == "6 h 52 min"
    unworn = dict(glance.at_close(_task(entity, close, {**public, "worn_last_60": False}))["state"])
    assert "not worn" in unworn["Tracker"]


def test_a_desktop_point_states_work_without_a_break_from_frames_known_at_the_close(
    team: Any,
) -> None:
    from aframes_web.proactivestream.models import DecisionPoint

    zone = ZoneInfo("Europe/Paris")
    entity = entity_create(team=team, key="desk", scope="desktop", timezone_name="Europe/Paris")
    day = datetime(2024, 5, 6, tzinfo=zone)
    # 09:00–09:40, 09:42–10:10 (a 2-minute gap is no break), a 10-minute break, 10:20–10:50;
    # a frame after the point (11:00) must not count.
    for n, (start, end) in enumerate(
        [("09:00", "09:40"), ("09:42", "10:10"), ("10:20", "10:50"), ("10:52", "11:00")]
    ):
        hours, minutes = map(int, end.split(":"))
        DecisionPoint.objects.create(
            entity=entity,
            key=f"desktop:{n}",
            at=day + timedelta(hours=hours, minutes=minutes),
            public={"type": "frame_end", "start": start, "end": end},
            builder="desktop",
        )
    public = {"type": "frame_end", "active_min_today": 96, "switches_30": 4}
    rows = dict(
        glance.at_close(_task(entity, day + timedelta(hours=10, minutes=50), public))["state"]
    )
    assert rows["Working without a break"].startswith("since 10:20, 30 min")
    assert rows["Active today so far"] == "1 h 36 min"
    later = day + timedelta(hours=11, minutes=20)  # 20 minutes after the last frame
    rows = dict(glance.at_close(_task(entity, later, public))["state"])
    assert rows["Last break"] == "since 11:00" and "Working without a break" not in rows


def test_a_repository_point_states_what_waits_for_an_answer(team: Any) -> None:
    entity = entity_create(team=team, key="repo", scope="code", timezone_name="UTC")
    close = datetime(2024, 5, 6, 12, 0, tzinfo=UTC)

    def opened(kind: str, number: int, who: str, at: datetime, title: str) -> dict[str, Any]:
        return {
            "occurred_at": at.isoformat(),
            "kind": "observation",
            "source_key": f"{kind}-{number}",
            "payload": {
                "type": kind,
                "attributes": {"action": "opened", "number": number, "author": who,
                               "actor": who, "title": title},
            },
        }  # fmt: skip

    review = {
        "occurred_at": (close + timedelta(hours=1)).isoformat(),  # after the point
        "kind": "observation",
        "source_key": "review-5",
        "payload": {
            "type": "PullRequestReviewEvent",
            "attributes": {"action": "submitted", "number": 5, "actor": "carol"},
        },
    }
    events_ingest(
        entity=entity,
        items=[
            opened("PullRequestEvent", 9, "dan", close - timedelta(days=120), "Old"),
            opened("PullRequestEvent", 5, "alice", close - timedelta(days=3), "Fix the parser"),
            opened("IssuesEvent", 7, "bob", close - timedelta(hours=1), "Crash on start"),
            review,
        ],
    )
    rows = glance.at_close(_task(entity, close, {"type": "IssuesEvent"}))["state"]
    assert rows == [
        [
            "Pull request #5 “Fix the parser”",
            "waiting 3.0 days for a first answer (opened by alice)",
        ],
        ["Issue #7 “Crash on start”", "waiting 1.0 h for a first answer (opened by bob)"],
        ["Read from", "the events of the last 60 days (older ones are not listed)"],
    ]
    answered = glance.at_close(_task(entity, close + timedelta(hours=2), {"type": "x"}))["state"]
    assert [r[0] for r in answered] == ["Issue #7 “Crash on start”", "Read from"]
