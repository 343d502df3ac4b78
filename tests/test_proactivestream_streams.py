"""ProactiveStream's stream builders on the real files in ../shared/data (benchmark/streams)."""

from __future__ import annotations

import csv
from collections import Counter
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from benchmark.streams import home, sports
from benchmark.streams.build import build_points
from benchmark.streams.records import DecisionPoint, Stream, StreamEvent
from benchmark.streams.words import describe
from tests import proactive_streams as data
from tests.conftest import need_service


@pytest.fixture(autouse=True)
def _shared_data() -> None:
    if not data.DATA.is_dir():
        need_service("shared data (../shared/data)", False)


def _check_causal(stream: Stream) -> None:
    """Every point's cited events happened at or before it; steps come in time order."""
    at = {e.id: e.at for e in stream.events}
    for p in stream.points:
        assert all(at[i] <= p.at for i in p.cites), p.key
    times = [s.at for s in stream.steps()]
    assert times == sorted(times)


@pytest.mark.parametrize("name", ["A", "B"])
def test_home_days_are_29_segments_each_offered_at_its_close(name: str) -> None:
    stream = data.ordonez(name)
    per_day = Counter(p.public["day"] for p in stream.points)
    last_event = stream.events[-1].at
    days = sorted(per_day)
    # Every full day has 29 points; the last day stops at the stream's last event.
    assert all(per_day[d] == home.SEGMENTS for d in days[:-1])
    assert 0 < per_day[days[-1]] <= home.SEGMENTS
    assert max(p.at for p in stream.points) <= last_event
    first = [p for p in stream.points if p.public["day"] == days[1]]
    assert [p.public["segment"] for p in first] == list(range(29))
    assert (first[0].public["start"], first[0].public["end"]) == ("00:00", "00:50")
    assert (first[-1].public["start"], first[-1].public["end"]) == ("23:20", "24:00")
    for p in first:
        start, end = home.segment_bounds(
            date.fromisoformat(days[1]), p.public["segment"], data.MADRID
        )
        assert p.at == end
        cited = [e for e in stream.events if e.id in set(p.cites)]
        assert all(start <= e.at < end for e in cited)
        assert p.public["events"] == len(cited)
    _check_causal(stream)


def test_home_points_carry_rooms_devices_and_private_activities() -> None:
    stream = data.ordonez("A")
    point = next(p for p in stream.points if p.key == "home:2011-11-28/12")  # 10:00-10:50
    assert point.public["rooms"] == {"Bathroom": 5, "Kitchen": 7}
    assert point.public["room_sequence"] == ["Bathroom", "Kitchen", "Bathroom"]
    fridge = next(d for d in point.public["devices"] if d["device"] == "Fridge")
    assert fridge == {"device": "Fridge", "room": "Kitchen", "kind": "magnetic", "on": 2, "off": 2}
    # The hand labels are private: the labeler reads them, a method never sees them.
    assert "Breakfast" in point.private["activities"]
    assert point.private["activity_first"]["Breakfast"] == "10:34"
    assert "activities" not in point.public
    later = next(p for p in stream.points if p.key == "home:2011-11-28/13")  # 10:50-11:40
    seat = later.public["on_at_close"]
    assert [d["device"] for d in seat] == ["Seat"] and seat[0]["since"].startswith(
        "2011-11-28T10:51"
    )
    sentence = describe(point.public)
    assert sentence.startswith("Mon 28 Nov 2011, 10:00–10:50: 24 events; activity in Bathroom 5×")
    assert "[" not in sentence and "{" not in sentence


def test_home_segments_follow_the_wall_clock_on_a_dst_day() -> None:
    zone = ZoneInfo("Europe/Madrid")
    # 2011-10-30 falls back: a 25-hour day, still 29 points, one of them an hour longer.
    events = [
        StreamEvent(
            i + 1,
            datetime(2011, 10, 30, 0, 5, tzinfo=zone) + timedelta(hours=i),
            "observation",
            {"type": "pir", "value": "ON", "attributes": {"sensor": "Basin", "place": "Bathroom"}},
        )
        for i in range(26)
    ]
    points = build_points("home", events, zone)
    day = [p for p in points if p.public["day"] == "2011-10-30"]
    assert len(day) == 29
    utc = ZoneInfo("UTC")
    bounds = [home.segment_bounds(date(2011, 10, 30), p.public["segment"], zone) for p in day]
    lengths = Counter(end.astimezone(utc) - start.astimezone(utc) for start, end in bounds)
    assert lengths == {
        timedelta(minutes=50): 27,
        timedelta(minutes=40): 1,
        timedelta(minutes=110): 1,
    }


def test_fitbit_slots_carry_the_hour_and_half_hour_before_from_the_real_files() -> None:
    person = "1503960366"
    stream = data.fitbit(person)
    per_day = Counter(p.public["day"] for p in stream.points)
    assert set(per_day.values()) <= {5} | set(range(1, 6))
    assert all(n == 5 for d, n in per_day.items() if d != max(per_day))
    hourly = {}
    with (data.FITBIT / "period-2016-04-12" / "hourlySteps_merged.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            if row["Id"] == person:
                hourly[row["ActivityHour"]] = int(row["StepTotal"])
    point = next(p for p in stream.points if p.key == "sports:2016-04-13/2")  # 15:00
    assert point.public["slot_time"] == "15:00" and point.public["resolution"] == "minute"
    # The hour before 15:00 is the 2 PM row, stamped when it ended.
    assert point.public["steps_last_60"] == hourly["4/13/2016 2:00:00 PM"]
    with (data.FITBIT / "minutes-2016-04-12" / "minuteStepsWide_merged.csv").open(newline="") as f:
        row = next(
            r
            for r in csv.DictReader(f)
            if r["Id"] == person and r["ActivityHour"] == "4/13/2016 2:00:00 PM"
        )
    assert point.public["steps_last_30"] == sum(int(row[f"Steps{m:02d}"]) for m in range(30, 60))
    today = sum(
        v
        for k, v in hourly.items()
        if k.startswith("4/13/2016 ")
        and (k.endswith("AM") or k.split(" ")[1].split(":")[0] in ("12", "1", "2"))
    )
    assert point.public["steps_today"] == today
    assert point.public["worn_last_60"] is True
    assert point.private == {}  # Fitbit data carries no ground truth
    _check_causal(stream)


def test_hourly_data_alone_gives_hour_resolution_and_no_half_hour() -> None:
    stream = data.fitbit("1503960366", data.FITBIT / "period-2016-04-12")
    point = next(p for p in stream.points if p.key == "sports:2016-04-13/2")
    assert point.public["resolution"] == "hour"
    assert point.public["steps_last_30"] is None and point.public["active_min_last_60"] is None
    assert point.public["steps_last_60"] is not None
    assert "no step data" not in describe(point.public)


def test_heartsteps_decision_points_are_the_studys_own_with_outcomes_private() -> None:
    zone = ZoneInfo("America/Chicago")
    at = datetime(2015, 8, 3, 12, 30, tzinfo=zone)
    decision = StreamEvent(
        9, at, "observation",
        {"type": "decision_point", "value": 1,
         "attributes": {"slot": 2, "available": True, "in_transit": False, "suggestion": "active"},
         "private": {"response": "good", "jbsteps30": 840}},
    )  # fmt: skip
    minute = {"resolution": "minute", "source": "jawbone"}
    minutes = [
        StreamEvent(
            i,
            at - timedelta(minutes=i),
            "observation",
            {"type": "steps", "value": 50, "attributes": minute},
        )
        for i in range(1, 9)
    ]
    [point] = sports.points([decision, *minutes], zone)
    assert point.key == "sports:9" and point.at == at
    assert point.public["slot"] == 1 and point.public["available"] is True
    assert point.public["steps_last_30"] == 400 and point.public["resolution"] == "minute"
    assert "sent" not in point.public and "suggestion" not in point.public
    assert point.private["sent"] is True and point.private["jbsteps30"] == 840


def test_code_points_are_every_native_event_before_it_is_committed() -> None:
    streams = data.github(data.K8S)
    assert len(streams) == 40
    assert sum(len(s.points) for s in streams) == sum(len(s.events) for s in streams) == 4596
    for stream in streams[:5]:
        steps = list(stream.steps())
        for i, step in enumerate(steps):
            if isinstance(step, DecisionPoint):
                own = steps[i + 1]
                assert isinstance(own, StreamEvent) and own.id == step.event_id
                assert step.public == own.payload
        _check_causal(stream)
    push = next(p for s in streams for p in s.points if p.public["type"] == "PushEvent")
    assert push.event_id is not None  # a push is a moment a method may decide on


def test_desktop_points_are_frame_ends_offered_once_the_frame_is_final() -> None:
    stream = data.desktop(days=2)
    assert stream.synthetic and stream.points
    for p in stream.points[:200]:
        end = datetime.combine(date.fromisoformat(p.public["day"]), datetime.min.time())
        assert p.public["type"] == "frame_end" and p.public["app"]
        assert (
            p.at.astimezone(stream.zone).strftime("%H:%M") >= p.public["end"]
            or p.at.date() > end.date()
        )
        assert p.cites
    _check_causal(stream)
    assert "for" in describe(stream.points[0].public)
