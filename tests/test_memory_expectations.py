"""Memory that adds and vetoes, never hides (memory/engine/expect.py, usual.py): what is usual,
learned one event and one point at a time, and the rules policy's judgement on hand-made days."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from memory.engine import catalogue, usual
from memory.engine.decide import (
    DEFAULT_FALSE_ALARM_COST,
    DEFAULT_THRESHOLD,
    DecisionContext,
    EventOnlyPolicy,
    RulesPolicy,
    threshold_for,
)
from memory.engine.expect import (
    Expectations,
    active_hour,
    code_change,
    is_outer_door,
    minutes_words,
    quantile,
    share_below,
    within_words,
)
from memory.engine.records import (
    POINT_KIND,
    DayRecord,
    EngineEvent,
    Observation,
    Predicate,
    Proposal,
)
from memory.engine.retrieve import Retrieved
from memory.engine.stream import MemoryStream

ZONE = ZoneInfo("Europe/Madrid")
START = datetime(2024, 3, 4, tzinfo=ZONE)  # a Monday


def _event(n: int, at: datetime, kind: str, value: Any, sensor: str, room: str) -> EngineEvent:
    payload = {"type": kind, "value": value, "attributes": {"sensor": sensor, "room": room}}
    return EngineEvent(n, at, "observation", payload)


def _point(n: int, at: datetime, **public: Any) -> EngineEvent:
    return EngineEvent(n, at, POINT_KIND, {"type": "home_segment", **public})


def _ctx(current: EngineEvent, exp: Expectations | None, scope: str = "home") -> DecisionContext:
    now = current.at.astimezone(ZONE)
    return DecisionContext(
        scope=scope,  # type: ignore[arg-type]
        current=current,
        recent=(current,),
        now=now,
        trajectories=(),
        today=DayRecord(now.date()),
        regularities=(),
        expectations=exp,
    )


def _door_history(days: int = 6, minutes: float = 3, sensor: str = "FrontDoor") -> Expectations:
    """A front door opened every morning and closed ``minutes`` later."""
    exp = Expectations()
    for d in range(days):
        opened = START + timedelta(days=d, hours=9)
        exp.observe_event(_event(2 * d, opened, "door", "OPEN", sensor, "Entrance"))
        closed = opened + timedelta(minutes=minutes)
        exp.observe_event(_event(2 * d + 1, closed, "door", "CLOSE", sensor, "Entrance"))
    return exp


def test_quantile_interpolates_like_numpy() -> None:
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert quantile([10.0], 0.95) == 10.0
    assert quantile([0.0, 10.0], 0.95) == pytest.approx(9.5)
    with pytest.raises(ValueError):
        quantile([], 0.5)


def test_a_device_learns_its_on_times_from_open_and_close_events() -> None:
    exp = _door_history(days=4)
    assert exp.device_minutes["FrontDoor"] == [3.0] * 4
    assert exp.device_usual_minutes("FrontDoor") is None  # four closes say nothing yet
    exp = _door_history(days=5)
    assert exp.device_usual_minutes("FrontDoor") == 3.0
    assert exp.device_longest("FrontDoor") == 3.0


def test_a_door_open_far_longer_than_it_ever_stays_is_said_in_words_with_what_is_usual() -> None:
    exp = _door_history(sensor="OutsideDoor/FrontDoor")
    now = START + timedelta(days=7, hours=18, minutes=40)
    since = (now - timedelta(hours=3, minutes=11)).isoformat()
    item = {"device": "OutsideDoor/FrontDoor", "room": "OutsideDoor", "kind": "door"}
    point = _point(99, now, segment=22, events=4, on_at_close=[{**item, "since": since}])
    proposed = RulesPolicy().decide(_ctx(point, exp))
    assert proposed.action == "intervene" and proposed.intent == "check_device"
    assert proposed.message == (
        f"The front door (outside door) has been open since {since[11:16]}, 3 hours 11 minutes; "
        "it is usually closed within 3 minutes (longest before: 3 minutes)."
    )


@pytest.mark.parametrize("history_days", [6, 0])  # memory's own verdict, the baseline's rule
def test_a_door_left_open_is_reminded_of_once_wherever_the_resident_goes(history_days: int) -> None:
    stream = MemoryStream("home", ZONE, RulesPolicy())
    n = 0
    for d in range(history_days):
        opened = START + timedelta(days=d, hours=9)
        for at, value in ((opened, "OPEN"), (opened + timedelta(minutes=3), "CLOSE")):
            n += 1
            stream.ingest(_event(n, at, "door", value, "OutsideDoor/FrontDoor", "OutsideDoor"))
    day = START + timedelta(days=7)
    opened = day + timedelta(hours=15, minutes=29)
    n += 1
    stream.ingest(_event(n, opened, "door", "OPEN", "OutsideDoor/FrontDoor", "OutsideDoor"))
    door = {"device": "OutsideDoor/FrontDoor", "room": "OutsideDoor", "kind": "door",
            "since": opened.isoformat()}  # fmt: skip
    outcomes = []
    for k, room in enumerate(["Kitchen", "Living", "Kitchen", "Bathroom", "Living", "Kitchen"]):
        now = day + timedelta(hours=16, minutes=30 * k)
        n += 1
        stream.ingest(_event(n, now - timedelta(minutes=1), "motion", "ON", f"{room}/M", room))
        point = _point(1000 + k, now, segment=19 + k, events=3, rooms={room: 3}, quiet_min=1,
                       on_at_close=[door])  # fmt: skip
        outcomes.append(stream.decide_point(point))
    acted = [o for o in outcomes if o.action == "intervene"]
    # One reminder for the door's one stretch open: the resident moving from the kitchen to
    # the living room and the bathroom is no new situation for the door.
    assert [(o.at.strftime("%H:%M"), o.controlled.proposed.intent) for o in acted] == [
        ("16:00", "check_device")
    ]
    assert all(o.controlled.reason == "repeat" for o in outcomes[1:])


def test_a_device_on_for_no_longer_than_usual_is_vetoed_where_the_baseline_would_nag() -> None:
    exp = _door_history(minutes=50)  # this door stands open for most of an hour, every day
    now = START + timedelta(days=7, hours=12)
    since = (now - timedelta(minutes=60)).isoformat()
    item = {"device": "FrontDoor", "room": "Entrance", "kind": "door", "since": since}
    point = _point(99, now, segment=14, events=3, on_at_close=[item])
    assert EventOnlyPolicy().decide(_ctx(point, exp)).intent == "check_device"
    vetoed = RulesPolicy().decide(_ctx(point, exp))
    assert vetoed.action == "abstain" and "within its usual" in vetoed.message


def test_without_history_the_baseline_rule_stands_in_memory_s_place() -> None:
    now = START + timedelta(hours=12)
    since = (now - timedelta(minutes=45)).isoformat()
    item = {"device": "Oven", "room": "Kitchen", "kind": "electric", "since": since}
    point = _point(1, now, segment=14, events=3, on_at_close=[item])
    proposed = RulesPolicy().decide(_ctx(point, Expectations()))
    # Said in words, without claiming a usual that no history gives yet.
    assert proposed.intent == "check_device" and proposed.message == (
        "The oven (kitchen) has been on since 11:15, 45 minutes; there is no history of it yet "
        "to say how long it is usually on."
    )
    assert "longer than usual" not in proposed.message


def _lamp_history(minutes: Sequence[float]) -> Expectations:
    """A living-room lamp switched on every evening at 19:30, off ``minutes`` later."""
    exp = Expectations()
    for d, lasted in enumerate(minutes):
        on = START + timedelta(days=d, hours=19, minutes=30)
        exp.observe_event(_event(2 * d, on, "lamp", "ON", "LivingLight", "Living"))
        off = on + timedelta(minutes=lasted)
        exp.observe_event(_event(2 * d + 1, off, "lamp", "OFF", "LivingLight", "Living"))
    return exp


def _lamp_on_for(exp: Expectations, days: int, minutes: int) -> Any:
    now = START + timedelta(days=days, hours=19, minutes=30 + minutes)
    since = (now - timedelta(minutes=minutes)).isoformat()
    item = {"device": "LivingLight", "room": "Living", "kind": "lamp", "since": since}
    point = _point(99, now, segment=24, events=3, on_at_close=[item])
    return RulesPolicy().decide(_ctx(point, exp))


def test_a_few_on_times_veto_a_device_on_for_less_than_it_typically_is() -> None:
    exp = _lamp_history([190.0, 200.0, 210.0])  # three evenings, over three hours each
    assert exp.device_usual_minutes("LivingLight") is None  # too few to tell a usual
    assert exp.device_typical_minutes("LivingLight") == (200.0, 3)
    # The baseline's rule nags after half an hour; memory knows this lamp stays on.
    now = START + timedelta(days=3, hours=20, minutes=42)
    item = {"device": "LivingLight", "room": "Living", "kind": "lamp",
            "since": (now - timedelta(minutes=72)).isoformat()}  # fmt: skip
    point = _point(99, now, segment=24, events=3, on_at_close=[item])
    assert EventOnlyPolicy().decide(_ctx(point, exp)).intent == "check_device"
    vetoed = _lamp_on_for(exp, 3, 72)
    assert vetoed.action == "abstain"
    assert (
        "the living light (living room) on for 1 hour 12 minutes, within twice its typical "
        "3 hours 20 minutes over 3 times before" in vetoed.message
    )
    # One earlier evening is evidence too, said as such.
    once = _lamp_on_for(_lamp_history([190.0]), 1, 72)
    assert once.action == "abstain"
    assert "within twice the one time before (3 hours 10 minutes)" in once.message


def test_past_twice_its_typical_on_time_the_baseline_rule_speaks_and_says_what_is_known() -> None:
    # On over twice as long as on its few evenings: the baseline's rule stands in, and the
    # message says how long the lamp was on before, without claiming a usual.
    history = _lamp_history([30.0, 40.0])
    assert _lamp_on_for(history, 2, 69).action == "abstain"  # under twice 35 minutes
    proposed = _lamp_on_for(history, 2, 75)
    assert proposed.action == "intervene" and proposed.intent == "check_device"
    assert proposed.message == (
        "The living light (living room) has been on since 19:30, 1 hour 15 minutes; over "
        "twice as long as it typically was before (35 minutes over 2 times), too few times "
        "yet to say how long it is usually on."
    )
    # A single long evening does not veto a longer stretch: the median is not the longest.
    assert _lamp_on_for(_lamp_history([20.0, 25.0, 240.0]), 3, 60).action == "intervene"


def test_a_seat_or_bed_in_use_is_never_a_device_left_on_and_explains_stillness() -> None:
    now = START + timedelta(hours=15)
    since = (now - timedelta(hours=4)).isoformat()
    seat = {"device": "Seat", "room": "Living", "kind": "pressure", "since": since}
    point = _point(1, now, segment=18, events=0, quiet_min=200, on_at_close=[seat])
    assert EventOnlyPolicy().decide(_ctx(point, Expectations())).action == "intervene"
    judged = RulesPolicy().decide(_ctx(point, Expectations()))
    assert judged.action == "abstain"
    assert "someone resting" in judged.message


def test_a_veto_of_one_device_never_hides_the_baseline_alarm_of_another() -> None:
    exp = _door_history(minutes=50)  # the front door: usually open for most of an hour
    now = START + timedelta(days=7, hours=12)
    door = {"device": "FrontDoor", "room": "Entrance", "kind": "door"}
    oven = {"device": "Oven", "room": "Kitchen", "kind": "electric"}  # never seen closing
    items = [
        {**door, "since": (now - timedelta(minutes=60)).isoformat()},
        {**oven, "since": (now - timedelta(minutes=45)).isoformat()},
    ]
    point = _point(99, now, segment=14, events=3, on_at_close=items)
    proposed = RulesPolicy().decide(_ctx(point, exp))
    assert proposed.intent == "check_device"
    assert proposed.message.startswith("The oven (kitchen) has been on since ")


def test_stillness_after_the_outer_door_means_out_not_a_fall() -> None:
    exp = Expectations()
    left = START + timedelta(hours=10)
    exp.observe_event(_event(1, left, "magnetic", "OPEN", "Maindoor", "Entrance"))
    assert is_outer_door({"type": "magnetic", "attributes": {"sensor": "Maindoor"}})
    assert not is_outer_door({"type": "door", "attributes": {"sensor": "D002", "room": "Bath"}})
    point = _point(2, left + timedelta(hours=4), segment=16, events=0, quiet_min=240)
    judged = RulesPolicy().decide(_ctx(point, exp))
    assert judged.action == "abstain" and "likely out" in judged.message
    # A thermometer's reading and the hall's motion sensor going quiet after the resident
    # walked past it are no one moving; anything that moves means someone is in again.
    later = left + timedelta(minutes=1)
    exp.observe_event(_event(3, later, "motion", "OFF", "M1", "Hall"))
    exp.observe_event(_event(4, later, "temperature", 21.5, "T1", "Hall"))
    assert exp.out_since == left
    exp.observe_event(_event(5, left + timedelta(hours=1), "motion", "ON", "M1", "Hall"))
    assert exp.out_since is None


def test_a_resident_who_has_gone_out_is_not_asked_after_a_routine() -> None:
    # Up, washed, out of the door without breakfast: the kitchen's routine is not checked on
    # while nothing has moved since the door, whether the point's rule or a regularity asks.
    exp = Expectations()
    for d in range(7):
        day = START + timedelta(days=d)
        exp.observe_event(
            _event(10 * d, day + timedelta(hours=7), "motion", "ON", "Kit", "Kitchen")
        )
        exp.observe_point(
            _point(10 * d + 1, day + timedelta(hours=7, minutes=40), segment=9, events=5,
                   rooms={"Kitchen": 5}),
            day.date(),
        )  # fmt: skip
    today = START + timedelta(days=7)
    exp.observe_event(_event(100, today + timedelta(hours=6, minutes=50), "motion", "ON", "B",
                             "Bathroom"))  # fmt: skip
    for n, (minute, value) in enumerate(((32, "OPEN"), (33, "CLOSE"))):
        exp.observe_event(_event(101 + n, today + timedelta(hours=8, minutes=minute), "door",
                                 value, "OutsideDoor/FrontDoor", "OutsideDoor"))  # fmt: skip
    exp.observe_event(_event(103, today + timedelta(hours=8, minutes=34), "motion", "OFF",
                             "OutsideDoor/Entry", "OutsideDoor"))  # fmt: skip
    point = _point(200, today + timedelta(hours=9, minutes=10), segment=10, events=6,
                   rooms={"OutsideDoor": 6}, quiet_min=36)  # fmt: skip
    judged = usual.judge("home", point.payload, point.at.astimezone(ZONE), exp, {})
    out = (
        "the outer door was used at 08:33 and nothing has moved since: the resident is likely "
        "out, with no routine to check in on"
    )
    assert not judged["check_in_routine"].act and judged["check_in_routine"].sentence == out
    # The kitchen's regularity, deviated, is vetoed alike: memory explains the moment.
    proposal = Proposal(
        Predicate(("device_use", "room"), "Bathroom"),
        Predicate(("device_use", "room"), "Kitchen"),
        (time(7), time(8)),
    )
    due = Retrieved(key="k", proposal=proposal, state="active", confidence=0.9,
                    occurrence="deviated", distance=timedelta(minutes=70),
                    deadline=today + timedelta(hours=8), fact_ids=(), n_f=13, n_v=1)  # fmt: skip
    decided = RulesPolicy().decide(replace(_ctx(point, exp), regularities=(due,)))
    assert decided.action == "abstain" and out in decided.message
    # Back in (the hall's motion), the same regularity is a concern again.
    exp.observe_event(_event(104, today + timedelta(hours=9, minutes=5), "motion", "ON",
                             "Hall/M", "Hall"))  # fmt: skip
    decided = RulesPolicy().decide(replace(_ctx(point, exp), regularities=(due,)))
    assert decided.action == "intervene" and decided.intent == "check_in_routine"


def _quiet_days(exp: Expectations, quiet: float, days: int = 6, segment: int = 16) -> None:
    for d in range(days):
        at = START + timedelta(days=d, hours=14, minutes=10)
        exp.observe_point(_point(d, at, segment=segment, quiet_min=quiet), at.date())


def test_a_home_usually_still_at_this_hour_vetoes_the_stillness_alarm() -> None:
    exp = Expectations()
    _quiet_days(exp, quiet=240)  # every afternoon the home is still for hours: the resident naps
    at = START + timedelta(days=7, hours=14, minutes=10)
    point = _point(9, at, segment=16, events=0, quiet_min=200)
    assert EventOnlyPolicy().decide(_ctx(point, exp)).intent == "wellbeing_check"
    judged = RulesPolicy().decide(_ctx(point, exp))
    assert judged.action == "abstain" and "usually this still" in judged.message


def test_stillness_longer_than_any_at_this_hour_is_added_below_the_fixed_threshold() -> None:
    exp = Expectations()
    _quiet_days(exp, quiet=20)  # the home is always busy at this hour
    at = START + timedelta(days=7, hours=14, minutes=10)
    point = _point(9, at, segment=16, events=0, quiet_min=90)
    assert EventOnlyPolicy().decide(_ctx(point, exp)).action == "abstain"  # under 180 min
    judged = RulesPolicy().decide(_ctx(point, exp))
    assert judged.intent == "wellbeing_check"
    assert judged.message.startswith("The home has been still for 1 hour 30 minutes, longer than")


def test_a_room_used_every_morning_not_used_by_its_usual_time_fires_once_per_episode() -> None:
    stream = MemoryStream("home", ZONE, RulesPolicy())
    kitchen = 12  # the segment of 10:00-10:50: breakfast, every day
    for d in range(6):
        for segment in (10, 11, kitchen):
            at = START + timedelta(days=d, minutes=50 * (segment + 1))
            rooms = {"kitchen": 3} if segment == kitchen else {"bedroom": 2}
            stream.decide_point(
                _point(100 * d + segment, at, segment=segment, rooms=rooms, events=2)
            )
    outcomes = []
    # Day 7: up and about, never in the kitchen; from room to room, which is no new situation
    # for the kitchen.
    about = ("living", "bathroom", "living", "hall", "bathroom", "living")
    for segment, room in zip((12, 13, 14, 15, 16, 17), about, strict=True):
        at = START + timedelta(days=6, minutes=50 * (segment + 1))
        outcome = stream.decide_point(
            _point(1000 + segment, at, segment=segment, rooms={room: 1}, events=1)
        )
        outcomes.append(outcome)
    fired = [o for o in outcomes if o.action == "intervene"]
    assert len(fired) == 1, [o.controlled.proposed.message for o in outcomes]
    assert fired[0].controlled.proposed.intent == "check_in_routine"
    assert "The kitchen is usually in use by 11:40 (on 6 of the last 6 days)" in (
        fired[0].controlled.proposed.message
    )


def test_nobody_up_by_the_usual_time_is_checked_on_and_the_silence_is_not_a_fall() -> None:
    """Up and in the kitchen by 08:20 every day; today nothing outside the bedroom: one check
    past the usual time (the bedroom's own stirring, or none, alike), and no stillness alarm
    for the sleeping home. Someone about in the hall is up; a resident who went out is out."""

    def stream_with_mornings() -> MemoryStream:
        stream = MemoryStream("home", ZONE, RulesPolicy())
        for d in range(6):
            for segment in (8, 9, 10):
                at = START + timedelta(days=d, minutes=50 * (segment + 1))
                rooms = {"Kitchen": 3} if segment == 9 else {"Bedroom": 2}
                stream.decide_point(_point(100 * d + segment, at, segment=segment, rooms=rooms,
                                           events=2, quiet_min=5))  # fmt: skip
        return stream

    stream = stream_with_mornings()
    outcomes = {}
    for segment in range(9, 16):  # day 7: the bedroom stirs at 09:10, otherwise silence
        at = START + timedelta(days=6, minutes=50 * (segment + 1))
        rooms = {"Bedroom": 1} if segment == 11 else {}
        quiet = 5 if segment == 11 else 50 * (segment - 8)
        outcomes[segment] = stream.decide_point(
            _point(
                1000 + segment, at, segment=segment, rooms=rooms, events=len(rooms), quiet_min=quiet
            )  # fmt: skip
        )
    fired = {s: o for s, o in outcomes.items() if o.action == "intervene"}
    assert list(fired) == [11], [o.controlled.proposed.message for o in outcomes.values()]
    assert fired[11].controlled.proposed.intent == "check_in_routine"
    assert fired[11].controlled.proposed.message == (
        "Nobody seems up yet: nothing has moved today outside where the resident sleeps, though "
        "the home is usually about by 09:10 (on 6 of the last 6 days). Is everything all right?"
    )
    assert all(o.controlled.proposed.intent != "wellbeing_check" for o in outcomes.values())
    # Up and about in the hall: not a getting-up check but breakfast's (the kitchen unused).
    # Gone out by the front door last night: neither.
    for first, kind in (({"Hall": 2}, "motion"), ({}, "door")):
        stream = stream_with_mornings()
        if kind == "door":
            evening = START + timedelta(days=5, hours=21)
            stream.ingest(_event(9000, evening, "door", "OPEN", "FrontDoor", "Entrance"))
        at = START + timedelta(days=6, minutes=50 * 12)
        outcome = stream.decide_point(
            _point(2000, at, segment=11, rooms=first, events=len(first), quiet_min=60)
        )
        said = outcome.controlled.proposed.message
        assert "Nobody seems up" not in said, kind
        if kind == "motion":
            assert said.startswith("The kitchen is usually in use by 09:10")
        else:
            assert outcome.action == "abstain" and "likely out" in said


def test_a_new_home_s_routine_rule_asks_after_the_kitchen_not_the_bathroom() -> None:
    """Two days of history: the event-only routine rule stands in for memory, but only for a
    routine a caregiver checks on, which is known without history; and once a day."""
    stream = MemoryStream("home", ZONE, RulesPolicy())
    for d in range(2):
        for segment, rooms in ((10, {"Bathroom": 2, "Kitchen": 3}), (12, {"Bathroom": 4})):
            at = START + timedelta(days=d, minutes=50 * (segment + 1))
            stream.decide_point(_point(100 * d + segment, at, segment=segment, rooms=rooms,
                                       events=3, day=at.date().isoformat()))  # fmt: skip
    asked = []
    for k, room in enumerate(("Living", "Bathroom")):  # the kitchen not used at 10:00 today
        at = START + timedelta(days=2, minutes=50 * 11 + k)
        point = _point(
            200 + k, at, segment=10, rooms={room: 2}, events=2, day=at.date().isoformat()
        )
        asked.append(stream.decide_point(point))
    assert [o.action for o in asked] == ["intervene", "abstain"]
    assert asked[0].controlled.proposed.message == (
        "Your usual routine has not happened yet today; is everything all right? (the kitchen "
        "was active at this time on the last two days)"
    )
    at = START + timedelta(days=2, minutes=50 * 13)
    bathroom = _point(300, at, segment=12, rooms={"Living": 2}, events=2,
                      day=at.date().isoformat())  # fmt: skip
    skipped = stream.decide_point(bathroom)
    assert skipped.action == "abstain"
    assert "no routine a caregiver checks on" in skipped.controlled.proposed.message


def test_a_new_home_s_routine_rule_does_not_ask_after_a_kitchen_used_earlier_today() -> None:
    """The kitchen used at 13:00 on the last two days and not in this segment today, but used
    for breakfast this morning: the routine is under way, however short memory's history."""
    stream = MemoryStream("home", ZONE, RulesPolicy())
    for d in range(2):
        at = START + timedelta(days=d, minutes=50 * 16)
        stream.decide_point(_point(100 * d, at, segment=15, rooms={"Kitchen": 3}, events=3,
                                   day=at.date().isoformat()))  # fmt: skip
    today = START + timedelta(days=2)
    breakfast = today + timedelta(minutes=50 * 11)
    stream.decide_point(_point(200, breakfast, segment=10, rooms={"Kitchen": 4}, events=4,
                               day=today.date().isoformat()))  # fmt: skip
    at = today + timedelta(minutes=50 * 16)
    point = _point(201, at, segment=15, rooms={"Living": 2}, events=2, day=today.date().isoformat())
    outcome = stream.decide_point(point)
    assert outcome.action == "abstain"
    assert "the kitchen has been in use today: the routine is under way" in (
        outcome.controlled.proposed.message
    )


def test_only_a_routine_a_caregiver_checks_on_is_overdue() -> None:
    """The bathroom used every morning and not yet today is the resident's own business; a
    meal's kitchen or a medicine cabinet is what a caregiver asks after."""
    assert catalogue.is_care_place("Kitchen") and catalogue.is_care_place("MedicineCabinet")
    assert not catalogue.is_care_place("Bathroom") and not catalogue.is_care_place("Living")
    stream = MemoryStream("home", ZONE, RulesPolicy())
    for d in range(6):
        for segment in (10, 11, 12):
            at = START + timedelta(days=d, minutes=50 * (segment + 1))
            rooms = {"Bathroom": 3} if segment == 12 else {"Bedroom": 2}
            stream.decide_point(
                _point(100 * d + segment, at, segment=segment, rooms=rooms, events=2)
            )
    for segment in (12, 13, 14, 15, 16, 17):  # day 7: up and about, never in the bathroom
        at = START + timedelta(days=6, minutes=50 * (segment + 1))
        outcome = stream.decide_point(
            _point(1000 + segment, at, segment=segment, rooms={"Living": 1}, events=1)
        )
        assert outcome.action == "abstain", outcome.controlled.proposed.message
    # A regularity of the bathroom, due, is not nudged either; one of the kitchen is.
    now = START + timedelta(hours=10, minutes=50)
    point = _point(2, now, segment=12, events=2, rooms={"Living": 2})
    for place, action in (("Bathroom", "abstain"), ("Kitchen", "intervene")):
        proposal = Proposal(
            Predicate(("day_start", "place"), "Bedroom"),
            Predicate(("device_use", "place"), place),
            (time(8), time(10)),
        )
        due = Retrieved(key="k", proposal=proposal, state="active", confidence=0.9,
                        occurrence="deviated", distance=timedelta(0),
                        deadline=START + timedelta(hours=10), fact_ids=(), n_f=8)  # fmt: skip
        decided = RulesPolicy().decide(replace(_ctx(point, Expectations()), regularities=(due,)))
        assert decided.action == action, decided.message
        if action == "abstain":
            assert "not a routine a caregiver checks on" in decided.message


def test_a_regularity_s_routine_under_way_in_its_room_today_is_vetoed_not_nudged() -> None:
    """ "Usually a cupboard used in the kitchen by 10:00 after getting up; none yet": no
    concern when the kitchen has been in use this morning (the resident is about there), a
    nudge when it has not."""
    behavior = Predicate(("device_use", "room"), "Kitchen")
    proposal = Proposal(Predicate(("day_start", "room"), "Bedroom"), behavior, (time(8), time(10)))
    due = Retrieved(
        key="k",
        proposal=proposal,
        state="active",
        confidence=0.9,  # (8 + 1) / (8 + 2)
        occurrence="deviated",
        distance=timedelta(0),
        deadline=START + timedelta(hours=10),
        fact_ids=("fact:2024-03-04/0/f1",),
        n_f=8,
    )
    exp = Expectations()
    morning = _point(1, START + timedelta(hours=8, minutes=20), segment=9, events=4,
                     rooms={"Kitchen": 3, "Bedroom": 1})  # fmt: skip
    exp.observe_point(morning, START.date())
    now = START + timedelta(hours=10, minutes=50)
    point = _point(2, now, segment=12, events=2, rooms={"Living": 2})

    def decided(expectations: Expectations) -> Any:
        context = replace(_ctx(point, expectations), regularities=(due,))
        return RulesPolicy().decide(context)

    vetoed = decided(exp)
    assert vetoed.action == "abstain"
    assert "the kitchen has been in use today: the routine is under way" in vetoed.message
    nudged = decided(Expectations())  # nothing in the kitchen today
    assert nudged.action == "intervene" and nudged.intent == "check_in_routine"
    assert "something switched on or opened in the kitchen by 10:00" in nudged.message
    # Use in the small hours continues the night: it is no sign of the morning's routine.
    night = Expectations()
    night.observe_point(
        _point(3, START + timedelta(hours=3), segment=3, events=1, rooms={"Kitchen": 1}),
        START.date(),
    )
    assert decided(night).action == "intervene"


def test_after_a_late_trigger_a_routine_is_not_overdue_until_its_usual_lag_has_passed() -> None:
    """ "Usually the kitchen by 10:00 after getting up": on a day the resident got up at 09:50,
    breakfast is not missed at 10:00, only once longer has passed than it took on the last days
    (the trajectories); before, memory says so, and blind to today it cannot."""
    trigger = Predicate(("day_start", "room"), "Bedroom")
    behavior = Predicate(("device_use", "room"), "Kitchen")
    proposal = Proposal(trigger, behavior, (time(8), time(10)))

    def record(day: int, up: time, kitchen: time | None) -> DayRecord:
        date_ = (START + timedelta(days=day)).date()
        found = [Observation(datetime.combine(date_, up, ZONE), trigger.path, "Bedroom", f"t{day}")]
        if kitchen is not None:
            at = datetime.combine(date_, kitchen, ZONE)
            found.append(Observation(at, behavior.path, "Kitchen", f"k{day}"))
        return DayRecord(date_, tuple(found))

    # The last three days: breakfast 20, 35 and 25 minutes after getting up.
    trajectories = (
        record(0, time(8), time(8, 20)),
        record(1, time(8, 10), time(8, 45)),
        record(2, time(8, 5), time(8, 30)),
    )
    today = record(3, time(9, 50), None)

    def decided(minute: int, trajectories: tuple[DayRecord, ...] = trajectories) -> Any:
        now = datetime.combine(today.day, time(10, minute), ZONE)
        due = Retrieved(key="k", proposal=proposal, state="active", confidence=0.9,
                        occurrence="deviated", distance=timedelta(minutes=minute),
                        deadline=datetime.combine(today.day, time(10), ZONE),
                        fact_ids=("t3",), n_f=8)  # fmt: skip
        point = _point(9, now, segment=11, events=2, rooms={"Living": 2})
        context = replace(
            _ctx(point, Expectations()), regularities=(due,), trajectories=trajectories,
            today=today,
        )  # fmt: skip
        return RulesPolicy().decide(context)

    waiting = decided(20)  # 30 minutes after getting up: breakfast took up to 35
    assert waiting.action == "abstain"
    assert (
        "getting up (first activity in the bedroom) only at 09:50 today; on the last days "
        "something switched on or opened in the kitchen came up to 35 minutes after it: not "
        "overdue yet" in waiting.message
    )
    assert decided(25).intent == "check_in_routine"  # 35 minutes: as long as it ever took
    # Without the last days' trajectories there is no lag to wait for.
    assert decided(20, trajectories=()).intent == "check_in_routine"


def test_a_routine_is_not_checked_at_night_nor_in_a_silent_home() -> None:
    exp = Expectations()
    night = _point(1, START + timedelta(hours=2), segment=2, events=2, rooms={"hall": 1})
    assert usual.judge("home", night.payload, night.at, exp, {"check_in_routine": "x"})[
        "check_in_routine"
    ] == usual.Judged(False, "02:00 is night: routines wait for day")
    silent = _point(2, START + timedelta(hours=11), segment=13, events=0)
    verdict = usual.judge("home", silent.payload, silent.at, exp, {"check_in_routine": "x"})
    assert verdict["check_in_routine"].act is False


def _slot(n: int, day: int, slot: int, **public: Any) -> EngineEvent:
    at = START + timedelta(days=day, hours=9 + 3 * slot)
    base = {"type": "sports_slot", "slot": slot, "slot_time": f"{at:%H:%M}", "worn_last_60": True}
    return EngineEvent(n, at, POINT_KIND, {**base, **public})


def test_an_hour_that_is_usually_active_and_is_not_earns_a_walk_and_a_never_active_one_not() -> (
    None
):
    exp = Expectations()
    for d in range(6):
        point = _slot(d, d, 3, steps_last_60=2400, steps_today=9000, sedentary_min_last_60=10)
        exp.observe_point(point, point.at.date())
        point = _slot(10 + d, d, 1, steps_last_60=40, steps_today=3000, sedentary_min_last_60=55)
        exp.observe_point(point, point.at.date())
    evening = _slot(50, 7, 3, steps_last_60=80, steps_today=8800, sedentary_min_last_60=30)
    walk = RulesPolicy().decide(_ctx(evening, exp, "sports"))
    assert walk.intent == "suggest_walk"
    assert walk.message.startswith("80 steps in the hour before 18:00; this hour is usually an")
    noon = _slot(51, 7, 1, steps_last_60=60, steps_today=3100, sedentary_min_last_60=58)
    vetoed = RulesPolicy().decide(_ctx(noon, exp, "sports"))
    assert vetoed.action == "abstain" and "sitting at 12:00 is usual" in vetoed.message


def test_an_hour_the_tracker_recorded_nothing_in_is_a_still_hour_of_history() -> None:
    """Evenings the tracker lay still (off the wrist, charging) are evenings this person did
    not move in: sitting at that hour now is usual, and the hour is not a usually active one."""
    exp = Expectations()
    for d in range(6):
        worn = d < 2  # worn on two evenings only, active on those
        figures = (
            {"steps_last_60": 2400, "sedentary_min_last_60": 10}
            if worn
            else {"steps_last_60": 0, "sedentary_min_last_60": 60}
        )
        point = _slot(d, d, 3, steps_today=6000, worn_last_60=worn, **figures)
        exp.observe_point(point, point.at.date())
    assert exp.slot_share(exp.sitting, 3, START.date() + timedelta(days=7), 50) == (4 / 6, 6)
    evening = _slot(50, 7, 3, steps_last_60=30, steps_today=6100, sedentary_min_last_60=57)
    judged = RulesPolicy().decide(_ctx(evening, exp, "sports"))
    assert judged.action == "abstain"
    assert "sitting at 18:00 is usual (67 % of 6 days)" in judged.message
    assert "this hour is active on only 33 % of 6 days" in judged.message
    # The current hour unworn: nobody can be reached through the tracker, whatever is usual.
    off = _slot(51, 8, 3, steps_last_60=0, steps_today=6100, sedentary_min_last_60=60,
                worn_last_60=False)  # fmt: skip
    assert usual.judge("sports", off.payload, off.at, exp, {}) == {}


def test_unusual_sitting_before_two_slots_of_a_day_is_two_moments_to_stand_up() -> None:
    """The sitting nudge is about the hour before its slot: sitting again before a later slot
    is another hour, nudged again; the same slot's hour is never nudged twice."""
    stream = MemoryStream("sports", ZONE, RulesPolicy())
    for d in range(6):  # a person up and about before noon and mid-afternoon, not walking
        for slot in (1, 2):
            moved = _slot(10 * d + slot, d, slot, steps_last_60=600, steps_today=5000 * slot,
                          sedentary_min_last_60=20)  # fmt: skip
            stream.decide_point(moved)
    outcomes = []
    for slot in (1, 2):  # day 7: at the desk before both
        sat = _slot(100 + slot, 7, slot, steps_last_60=120, steps_today=9000,
                    sedentary_min_last_60=56)  # fmt: skip
        outcomes.append(stream.decide_point(sat))
    acted = [o for o in outcomes if o.action == "intervene"]
    assert [o.controlled.proposed.intent for o in acted] == ["stand_break", "stand_break"]
    assert acted[1].controlled.proposed.message.startswith(
        "You have been sitting for 56 of the last 60 minutes, more than usual at 15:00"
    )
    again = stream.decide_point(_slot(200, 7, 2, steps_last_60=110, steps_today=9000,
                                      sedentary_min_last_60=57))  # fmt: skip
    assert again.suppressed


def test_a_few_days_explain_a_habitual_desk_hour_and_the_baseline_speaks_for_the_rest() -> None:
    """Two days known, at the desk before noon on both: too few to call sitting unusual, enough
    to explain it, so the baseline's stand-up nudge is not said; sitting at an hour that was
    active on those days is left to the baseline's rule."""
    exp = Expectations()
    for d in range(2):
        desk = _slot(10 * d, d, 1, steps_last_60=90, steps_today=2000, sedentary_min_last_60=57)
        exp.observe_point(desk, desk.at.date())
        about = _slot(10 * d + 1, d, 2, steps_last_60=900, steps_today=6000,
                      sedentary_min_last_60=15)  # fmt: skip
        exp.observe_point(about, about.at.date())
    rules = {"stand_break": "55 sedentary minutes in the last hour"}
    desk = _slot(100, 2, 1, steps_last_60=80, steps_today=2100, sedentary_min_last_60=55)
    judged = usual.judge("sports", desk.payload, desk.at, exp, rules)
    assert judged["stand_break"] == usual.Judged(
        False, "sitting at 12:00 is usual so far (100 % of 2 days known)"
    )
    assert EventOnlyPolicy().decide(_ctx(desk, exp, "sports")).intent == "stand_break"
    assert RulesPolicy().decide(_ctx(desk, exp, "sports")).action == "abstain"
    slumped = _slot(101, 2, 2, steps_last_60=80, steps_today=2200, sedentary_min_last_60=55)
    judged = usual.judge("sports", slumped.payload, slumped.at, exp, rules)
    assert judged["stand_break"].act and judged["stand_break"].baseline


def test_a_few_days_say_an_hour_is_not_usually_active_and_the_baseline_speaks_for_the_rest() -> (
    None
):
    """Three days known: the hour before noon walked in on one of them only, so memory says it
    is not usually active and the baseline's walk rule (walked in yesterday) is not said; the
    hour before mid-afternoon, walked in on each, is left to the baseline's rule."""
    exp = Expectations()
    for d in range(3):
        noon = _slot(10 * d, d, 1, steps_last_60=1500 if d == 2 else 100, steps_today=3000)
        exp.observe_point(noon, noon.at.date())
        later = _slot(10 * d + 1, d, 2, steps_last_60=1500, steps_today=6000)
        exp.observe_point(later, later.at.date())
    rules = {"suggest_walk": "0 steps in the last hour, 1500 yesterday"}
    quiet = _slot(100, 3, 1, steps_last_60=0, steps_today=3000)
    judged = usual.judge("sports", quiet.payload, quiet.at, exp, rules)
    assert judged["suggest_walk"] == usual.Judged(
        False, "this hour is active so far on only 33 % of 3 days known"
    )
    assert RulesPolicy().decide(_ctx(quiet, exp, "sports")).intent != "suggest_walk"
    usually = _slot(101, 3, 2, steps_last_60=0, steps_today=3000)
    judged = usual.judge("sports", usually.payload, usually.at, exp, rules)
    assert judged["suggest_walk"].act and judged["suggest_walk"].baseline


def test_an_hour_usually_walked_spent_sitting_gets_the_walk_and_the_stand_up_in_reserve() -> None:
    """Sitting through an hour this person usually walks in: the walk they usually take is
    said (it stands them up as well); the stand-up break, also unusual, is its alternative."""
    stream = MemoryStream("sports", ZONE, RulesPolicy())
    for d in range(6):  # walks before noon every day
        stream.decide_point(_slot(10 * d, d, 1, steps_last_60=1400, steps_today=5000,
                                  sedentary_min_last_60=20))  # fmt: skip
    sat = stream.decide_point(_slot(100, 7, 1, steps_last_60=120, steps_today=4800,
                                    sedentary_min_last_60=56))  # fmt: skip
    said = sat.controlled.proposed
    assert sat.action == "intervene" and said.intent == "suggest_walk"
    assert said.message.startswith("120 steps in the hour before 12:00; this hour is usually")
    assert [p.intent for p in said.alternatives] == ["stand_break"]


def test_a_moment_that_repeats_one_nudge_still_says_another_memory_finds_unusual() -> None:
    """Behind the usual pace at noon and still at mid-afternoon (said once a day), and now
    also sitting unusually long: the sitting is said in the pace reminder's place. The
    baseline's rule standing in (no history of the sitting) never takes such a place."""
    stream = MemoryStream("sports", ZONE, RulesPolicy())
    for d in range(6):  # about before noon and before mid-afternoon, 5,000 steps a slot
        for slot in (1, 2):
            moved = _slot(10 * d + slot, d, slot, steps_last_60=600, steps_today=5000 * slot,
                          sedentary_min_last_60=20)  # fmt: skip
            stream.decide_point(moved)
    noon = _slot(101, 7, 1, steps_last_60=1200, steps_today=800, sedentary_min_last_60=10)
    first = stream.decide_point(noon)
    assert first.action == "intervene" and first.controlled.proposed.intent == "step_goal_nudge"
    later = _slot(102, 7, 2, steps_last_60=90, steps_today=900, sedentary_min_last_60=57)
    second = stream.decide_point(later)
    assert second.action == "intervene" and second.controlled.proposed.intent == "stand_break"
    assert second.controlled.proposed.message.startswith("You have been sitting for 57 of")
    # Hourly data alone: no sitting minutes in the history, so sitting is only the baseline's
    # rule, which never takes the pace reminder's place.
    hourly = MemoryStream("sports", ZONE, RulesPolicy())
    for d in range(6):
        for slot in (1, 2):
            hourly.decide_point(_slot(10 * d + slot, d, slot, steps_last_60=600,
                                      steps_today=5000 * slot))  # fmt: skip
    assert hourly.decide_point(noon).controlled.proposed.intent == "step_goal_nudge"
    again = hourly.decide_point(later)
    assert again.action == "abstain" and again.controlled.proposed.intent == "step_goal_nudge"


def test_an_hour_is_active_by_the_tracker_s_active_minutes_else_by_a_walk_s_steps() -> None:
    assert active_hour({"steps_last_60": 1200}) is True  # hourly rows: steps alone
    assert active_hour({"steps_last_60": 800}) is False
    assert active_hour({"steps_last_60": 300, "active_min_last_60": 25}) is True  # cycling
    assert active_hour({"steps_last_60": 300, "active_min_last_60": 4}) is False
    # A thousand slow steps about the house, none of them brisk, are no walk.
    assert active_hour({"steps_last_60": 1300, "active_min_last_60": 3}) is False
    assert active_hour({"sedentary_min_last_60": 60}) is None  # reports neither
    exp = Expectations()
    for d in range(6):  # rides to work every morning: few steps, many active minutes
        point = _slot(d, d, 0, steps_last_60=350, active_min_last_60=30, steps_today=900)
        exp.observe_point(point, point.at.date())
    home = _slot(50, 7, 0, steps_last_60=60, active_min_last_60=0, steps_today=200)
    walk = usual.judge("sports", home.payload, home.at.astimezone(ZONE), exp, {})
    assert walk["suggest_walk"].act
    assert walk["suggest_walk"].sentence.startswith(
        "60 steps in the hour before 09:00; this hour is usually an active one for you (100 %"
    )


def _paced(slot: int, totals: tuple[int, ...], steps_last_60: int) -> Expectations:
    """What is usual after one day per total of steps by ``slot``, from the first day on."""
    exp = Expectations()
    for d, steps in enumerate(totals):
        point = _slot(d, d, slot, steps_last_60=steps_last_60, steps_today=steps)
        exp.observe_point(point, point.at.date())
    return exp


def _judged(point: EngineEvent, exp: Expectations, rules: dict[str, str]) -> dict[str, Any]:
    return dict(usual.judge("sports", point.payload, point.at.astimezone(ZONE), exp, rules))


def test_behind_the_usual_pace_is_judged_against_the_person_s_own_median() -> None:
    exp = _paced(2, (6000, 7000, 8000, 9000, 10000, 11000), steps_last_60=900)
    behind = _slot(9, 7, 2, steps_last_60=900, steps_today=3000)
    judged = _judged(behind, exp, {})
    assert judged["step_goal_nudge"] == usual.Judged(
        True,
        "3000 steps so far today; by 15:00 you usually have 8500. A walk would help you catch up.",
        score=1.0,  # every earlier day had more steps by now
    )


def test_a_person_who_walks_little_by_then_is_not_told_they_are_behind() -> None:
    """Under a walk's worth of steps by this time on the usual day, there is no pace to keep:
    memory says so, and the baseline's "behind yesterday" does not stand in for it."""
    exp = _paced(1, (300, 900, 500, 700, 400, 2600), steps_last_60=100)
    noon = _slot(9, 7, 1, steps_last_60=100, steps_today=200)
    judged = _judged(noon, exp, {})
    assert judged["step_goal_nudge"] == usual.Judged(
        False, "by 12:00 you usually have only 600 steps: no pace to keep"
    )
    rules = {"step_goal_nudge": "200 steps so far, 2600 by now yesterday"}
    assert _judged(noon, exp, rules)["step_goal_nudge"] == judged["step_goal_nudge"]
    # Before five days are known, memory cannot say, and the baseline's rule stands in.
    early = _judged(noon, _paced(1, (300, 900), steps_last_60=100), rules)
    assert early["step_goal_nudge"].act and early["step_goal_nudge"].baseline


def _gh(n: int, at: datetime, kind: str, **attributes: Any) -> EngineEvent:
    return EngineEvent(
        n, at, "observation", {"type": kind, "value": None, "attributes": attributes}
    )


def test_code_reads_opened_answered_and_closed_items_in_both_vocabularies() -> None:
    assert code_change({"type": "pr_opened", "attributes": {"number": 4, "author": "a"}}) == (
        "opened",
        "pull_request",
        4,
        "a",
        None,
    )
    archive = {"action": "opened", "number": 9, "actor": "b", "title": "Fix"}
    assert code_change({"type": "IssuesEvent", "attributes": archive}) == (
        "opened",
        "issue",
        9,
        "b",
        "Fix",
    )
    comment = {"number": 9, "actor": "c", "pull_request": True, "action": "created"}
    assert code_change({"type": "IssueCommentEvent", "attributes": comment})[:2] == (
        "response",
        "pull_request",
    )
    assert code_change({"type": "WatchEvent", "attributes": {"action": "started"}}) is None


def _repository(answers_after: list[float]) -> Expectations:
    exp = Expectations()
    t = datetime(2024, 1, 1, tzinfo=UTC)
    for n, hours in enumerate(answers_after, 1):
        exp.observe_event(_gh(n, t, "pr_opened", number=n, author="dev"))
        exp.observe_event(
            _gh(100 + n, t + timedelta(hours=hours), "pr_review", number=n, author="m")
        )
        exp.observe_event(_gh(200 + n, t, "pr_opened", number=50 + n, author="renovate[bot]"))
        t += timedelta(days=1)
    return exp


def _reminders(exp: Expectations, opened: datetime, hours: Sequence[float], **on: Any) -> list:
    """The decisions of a code stream reading ``exp`` at events ``hours`` after ``opened``,
    each on an open item given by ``on`` (another pull request by default)."""
    stream = MemoryStream("code", ZONE, RulesPolicy())
    stream.expectations = exp
    where = on or {"kind": "pr_review_comment", "number": 5}
    decisions = []
    for n, h in enumerate(hours, 1):
        at = opened + timedelta(hours=h)
        attributes = {k: v for k, v in where.items() if k != "kind"}
        event = _gh(400 + n, at, where["kind"], author="m", state="open", **attributes)
        decisions.append(stream.process(event))
    return decisions


def test_a_draft_waits_for_nobody_until_it_is_marked_ready_for_review() -> None:
    exp = _repository([2, 3, 4])
    opened = datetime(2024, 2, 1, 9, tzinfo=UTC)
    draft = {"action": "opened", "number": 77, "author": "ann", "draft": True}
    exp.observe_event(_gh(300, opened, "PullRequestEvent", **draft))
    assert ("pull_request", 77) not in exp.waiting
    decisions = _reminders(exp, opened, (30,), kind="WatchEvent", action="started")
    assert [d.action for d in decisions] == ["abstain"]
    ready = {"action": "ready_for_review", "number": 77, "author": "ann", "draft": False}
    exp.observe_event(_gh(301, opened + timedelta(hours=40), "PullRequestEvent", **ready))
    assert exp.waiting[("pull_request", 77)] == (opened + timedelta(hours=40), "ann")
    # Late a day after it asked for a review, not a day after it was opened as a draft.
    hours = (50, 65)
    decisions = _reminders(exp, opened, hours, kind="WatchEvent", action="started")
    assert [d.action for d in decisions] == ["abstain", "intervene"]
    assert decisions[1].controlled.proposed.target == "pull_request:77"


def test_a_pull_request_late_is_reminded_of_once_then_once_more_at_three_times_as_long() -> None:
    exp = _repository([2, 3, 4])  # median 3 hours; the bots' pull requests are nobody's wait
    assert exp.response_usual_minutes("pull_request") == 180
    assert all(number < 50 for _, number in exp.waiting)
    opened = datetime(2024, 2, 1, 9, tzinfo=UTC)
    exp.observe_event(_gh(300, opened, "pr_opened", number=77, author="newcomer"))
    exp.observe_event(_gh(301, opened, "pr_opened", number=78, author="x", title="[WIP] draft"))
    exp.observe_event(
        _gh(302, opened, "pr_opened", number=79, author="y", title="Cherry-pick #70 into 1.2")
    )
    assert ("pull_request", 78) not in exp.waiting and ("pull_request", 79) not in exp.waiting
    # Events on another pull request meanwhile: twice the usual is 6 hours, but nothing is
    # late before a day; then one reminder when it is, one more at three days, none between.
    hours = (2, 7, 23, 25, 30, 48, 73, 80, 200)
    decisions = _reminders(exp, opened, hours)
    acted = {h: d for h, d in zip(hours, decisions, strict=True) if d.action == "intervene"}
    assert sorted(acted) == [25, 73]
    assert {d.controlled.proposed.target for d in acted.values()} == {"pull_request:77"}
    assert acted[25].controlled.proposed.message == (
        "Pull request #77 by newcomer has waited 1 day 1 hour for a review or comment from "
        "anyone else; this repository usually answers within 3 hours (median of 3)."
    )
    assert acted[73].controlled.proposed.message.startswith(
        "Pull request #77 by newcomer has waited 3 days 1 hour for a review or comment from "
        "anyone else (a second reminder);"
    )


def test_any_event_of_the_repository_is_a_moment_to_remind_of_a_waiting_item() -> None:
    exp = _repository([2, 3, 4])
    opened = datetime(2024, 2, 1, 9, tzinfo=UTC)
    exp.observe_event(_gh(300, opened, "pr_opened", number=77, author="newcomer"))
    # Someone starring the repository names no pull request, but a reminder is posted on the
    # pull request it is about: it comes at that event, once.
    decisions = _reminders(exp, opened, (30, 40), kind="WatchEvent", action="started")
    assert [d.action for d in decisions] == ["intervene", "abstain"]
    assert decisions[0].controlled.proposed.target == "pull_request:77"
    assert exp.moment_before(opened + timedelta(hours=40)) == opened + timedelta(hours=30)


def test_an_item_already_late_when_the_usual_becomes_known_is_reminded_of_at_the_next_event() -> (
    None
):
    exp = _repository([2, 3])  # two answers: this repository has no usual yet
    opened = datetime(2024, 2, 1, 9, tzinfo=UTC)
    exp.observe_event(_gh(300, opened, "pr_opened", number=77, author="newcomer"))
    exp.observe_event(_gh(301, opened + timedelta(hours=20), "pr_opened", number=60, author="d"))
    stream = MemoryStream("code", ZONE, RulesPolicy())
    stream.expectations = exp
    star = {"action": "started"}
    events = [
        _gh(401, opened + timedelta(hours=30), "WatchEvent", **star),
        # The third answer: known from the next event on, when #77 has long been late.
        _gh(402, opened + timedelta(hours=40), "pr_review", number=60, author="m"),
        _gh(403, opened + timedelta(hours=41), "WatchEvent", **star),
        _gh(404, opened + timedelta(hours=42), "WatchEvent", **star),
    ]
    decisions = [stream.process(event) for event in events]
    assert [d.action for d in decisions] == ["abstain", "abstain", "intervene", "abstain"]
    assert exp.known_since["pull_request"] == opened + timedelta(hours=40)
    assert decisions[2].controlled.proposed.message == (
        "Pull request #77 by newcomer has waited 1 day 17 hours for a review or comment from "
        "anyone else; this repository usually answers within 3 hours (median of 3)."
    )


def test_an_issue_is_reminded_of_once_and_a_maintainer_s_own_issue_never() -> None:
    exp = _repository([2, 3, 4])
    t = datetime(2024, 1, 10, tzinfo=UTC)
    for n in range(3):  # issues answered within hours
        exp.observe_event(_gh(600 + n, t, "issue_opened", number=20 + n, author="user"))
        exp.observe_event(
            _gh(610 + n, t + timedelta(hours=2), "issue_comment", number=20 + n, author="m")
        )
        t += timedelta(days=1)
    exp.observe_event(_gh(620, t, "pr_merged", number=3, merged_by="lead"))
    assert exp.maintainers == {"m", "lead"}
    opened = datetime(2024, 2, 1, 9, tzinfo=UTC)
    exp.observe_event(_gh(700, opened, "issue_opened", number=90, author="lead"))
    exp.observe_event(_gh(701, opened, "issue_opened", number=91, author="reporter"))
    hours = (25, 30, 80, 200)
    decisions = _reminders(exp, opened, hours, kind="issue_comment", number=40)
    acted = [(h, d) for h, d in zip(hours, decisions, strict=True) if d.action == "intervene"]
    assert [(h, d.controlled.proposed.target) for h, d in acted] == [(25, "issue:91")]


@pytest.mark.parametrize(
    ("minutes", "words"),
    [
        (0.4, "under a minute"),
        (1, "1 minute"),
        (59.6, "1 hour"),
        (61, "1 hour 1 minute"),
        (190, "3 hours 10 minutes"),
        (24 * 60 - 1, "23 hours 59 minutes"),
        (24 * 60 + 59, "1 day"),  # past a day the minutes are dropped
        (26 * 60 + 20, "1 day 2 hours"),
        (3 * 24 * 60, "3 days"),
        (7 * 24 * 60 - 1, "6 days 23 hours"),
        (7 * 24 * 60, "7 days"),
        (1682 * 60 + 59, "70 days"),  # from a week on, whole days
    ],
)
def test_durations_are_said_in_the_units_a_person_uses(minutes: float, words: str) -> None:
    assert minutes_words(minutes) == words


def test_a_usual_under_a_minute_is_said_in_under_a_minute() -> None:
    assert within_words(45) == "within 45 minutes"
    assert within_words(0.4) == "in under a minute"
    exp = _repository([0.005, 0.008, 0.01])  # bots answer within seconds
    opened = datetime(2024, 2, 1, 9, tzinfo=UTC)
    exp.observe_event(_gh(300, opened, "pr_opened", number=77, author="newcomer"))
    stream = MemoryStream("code", ZONE, RulesPolicy())
    stream.expectations = exp
    at = opened + timedelta(hours=25)
    decision = stream.process(_gh(401, at, "pr_review_comment", number=5, author="m", state="open"))
    assert decision.controlled.proposed.message.endswith(
        "this repository usually answers in under a minute (median of 3)."
    )


def test_a_pull_request_waiting_ten_weeks_is_said_in_days() -> None:
    exp = _repository([2, 3, 4])
    opened = datetime(2024, 2, 1, 9, tzinfo=UTC)
    exp.observe_event(_gh(300, opened, "pr_opened", number=77, author="newcomer"))
    stream = MemoryStream("code", ZONE, RulesPolicy())
    stream.expectations = exp
    at = opened + timedelta(days=70, hours=2)
    decision = stream.process(_gh(401, at, "pr_review_comment", number=5, author="m", state="open"))
    assert decision.action == "intervene"
    assert decision.controlled.proposed.message == (
        "Pull request #77 by newcomer has waited 70 days for a review or comment from anyone "
        "else; this repository usually answers within 3 hours (median of 3)."
    )


def test_expectations_are_copied_with_a_fork_and_learned_only_after_the_decision() -> None:
    stream = MemoryStream("home", ZONE, RulesPolicy())
    opened = START + timedelta(hours=9)
    stream.process(_event(1, opened, "door", "OPEN", "FrontDoor", "Entrance"))
    fork = stream.fork()
    stream.process(_event(2, opened + timedelta(minutes=4), "door", "CLOSE", "FrontDoor", "E"))
    assert stream.expectations.device_minutes == {"FrontDoor": [4.0]}
    assert fork.expectations.device_minutes == {}


def _frame(n: int, day: int, start: str, end: str, app: str = "Code", **public: Any) -> EngineEvent:
    at = datetime.combine(START.date() + timedelta(days=day), datetime.min.time(), ZONE)
    hours, minutes = (int(x) for x in end.split(":"))
    at += timedelta(hours=hours, minutes=minutes)
    minutes_active = public.pop("minutes", 10.0)
    payload = {
        "type": "frame_end",
        "app": app,
        "start": start,
        "end": end,
        "minutes": minutes_active,
    }
    return EngineEvent(n, at, POINT_KIND, {**payload, **public})


def test_a_long_stretch_of_work_gets_one_break_nudge_not_one_per_frame() -> None:
    stream = MemoryStream("desktop", ZONE, RulesPolicy())
    outcomes = []
    for n, (start, end) in enumerate(
        [
            ("09:00", "09:30"),
            ("09:31", "10:00"),
            ("10:01", "10:40"),
            ("10:41", "11:00"),
            ("11:01", "11:20"),
            ("11:21", "11:40"),  # two hours forty: an hour past the first nudge
            ("11:41", "12:10"),
        ]
    ):
        app = "Code" if n % 2 == 0 else "Firefox"
        outcomes.append(stream.decide_point(_frame(n, 0, start, end, app, switches_30=2)))
    acted = [o for o in outcomes if o.action == "intervene"]
    assert [o.controlled.proposed.intent for o in acted] == ["take_break", "take_break"]
    assert acted[0].controlled.proposed.message == (
        "You have been working since 09:00 without a break of 5 minutes (1 hour 40 minutes); "
        "take a few minutes away from the screen."
    )
    assert outcomes[3].suppressed  # the same stretch, another app: said already
    # Unheeded for an hour: one more reminder, then none for the rest of the stretch.
    assert outcomes[5] is acted[1] and outcomes[5].controlled.proposed.message == (
        "You have been working since 09:00 without a break of 5 minutes (2 hours 40 minutes); "
        "take a few minutes away from the screen."
    )
    assert outcomes[6].suppressed


def test_a_new_person_s_stretch_of_switching_gets_one_refocus_nudge_an_hour() -> None:
    # No history yet: the baseline's rule stands, but a stretch of switching is one moment,
    # however many apps come to the front during it (each would be a new app to control).
    stream = MemoryStream("desktop", ZONE, RulesPolicy())
    outcomes = []
    for n, (start, end) in enumerate(
        [("09:00", "09:05"), ("09:06", "09:10"), ("09:11", "09:20"), ("09:21", "09:40"),
         ("09:41", "09:55"), ("10:01", "10:04"), ("10:05", "10:08")]
    ):  # fmt: skip
        app = ("Code", "Firefox", "Slack", "Terminal")[n % 4]
        outcomes.append(stream.decide_point(_frame(n, 0, start, end, app, switches_30=14)))
    acted = [o for o in outcomes if o.action == "intervene"]
    assert [o.at.astimezone(ZONE).strftime("%H:%M") for o in acted] == ["09:05", "10:04"]
    assert {o.controlled.proposed.intent for o in acted} == {"refocus"}
    assert acted[0].controlled.proposed.message == (
        "You have switched between many apps in the last half hour; close what you do not need "
        "and pick one task. (14 apps and windows started in the last 30 minutes)"
    )
    assert all(o.suppressed for o in outcomes[1:5])  # Firefox, Slack, ...: the same stretch
    assert outcomes[6].suppressed


def test_switching_is_judged_against_the_person_s_own_usual() -> None:
    exp = Expectations()
    for day in range(6):  # this person always juggles many windows
        for n in range(10):
            point = _frame(100 * day + n, day, "10:00", f"10:{n + 10}", switches_30=20 + n % 5)
            exp.observe_point(point, point.at.date())
    busy = _frame(999, 7, "10:00", "10:30", switches_30=21)
    judged = usual.judge("desktop", busy.payload, busy.at, exp, {"refocus": "21 frames started"})
    assert judged["refocus"] == usual.Judged(False, "21 switches is usual for you")
    frantic = _frame(998, 7, "10:00", "10:30", switches_30=40)
    said = usual.judge("desktop", frantic.payload, frantic.at, exp, {})["refocus"]
    assert said.act and said.sentence.startswith("40 apps and windows started in the last 30")


def test_one_day_of_moments_says_what_switching_is_usual_for_this_person() -> None:
    # Switching is read at every frame's end: one day at the computer gives enough moments for
    # a 95th percentile, and memory judges from the second day on instead of the baseline's
    # fixed floor (12), which it then neither repeats below the person's usual nor misses above.
    exp = Expectations()
    for n in range(19):
        point = _frame(n, 0, "10:00", f"10:{n + 10}", switches_30=11 + n % 3)
        exp.observe_point(point, point.at.date())
    assert exp.switches_usual(_frame(99, 1, "10:00", "10:30").at.date()) is None  # 19 moments
    point = _frame(19, 0, "10:00", "10:29", switches_30=13)
    exp.observe_point(point, point.at.date())
    today = _frame(99, 1, "10:00", "10:30").at.date()
    assert exp.switches_usual(today) == (13.0, 1)
    rules = {"refocus": "12 frames started"}
    usual_13 = _frame(100, 1, "10:00", "10:30", switches_30=13)
    judged = usual.judge("desktop", usual_13.payload, usual_13.at, exp, rules)["refocus"]
    assert judged == usual.Judged(False, "13 switches is usual for you")
    more = _frame(101, 1, "10:00", "10:30", switches_30=14)
    said = usual.judge("desktop", more.payload, more.at, exp, rules)["refocus"]
    assert said.act and not said.baseline
    assert "more than on 95 % of your moments over the last day (13)" in said.sentence


def test_the_usual_main_app_not_opened_by_its_usual_time_is_a_moment_to_resume() -> None:
    exp = Expectations()
    for day in range(6):
        for n, (start, end, app) in enumerate(
            [("08:50", "09:20", "Mail"), ("09:20", "11:50", "Code")]
        ):
            point = _frame(10 * day + n, day, start, end, app, minutes=150 if app == "Code" else 30)
            exp.observe_point(point, point.at.date())
    mail = _frame(90, 7, "09:00", "10:05", "Mail", minutes=60)
    said = usual.judge("desktop", mail.payload, mail.at, exp, {})["resume_focus"]
    assert said == usual.Judged(
        True,
        "You usually open Code by 09:20 (it was your main app on 5 of the last 5 weekdays); not "
        "yet today. Pick it up?",
        target="start/Code",
        score=1.0,  # opened by then on every earlier weekday
    )
    early = _frame(91, 7, "08:50", "09:30", "Mail", minutes=40)
    assert usual.judge("desktop", early.payload, early.at, exp, {})["resume_focus"].act is False


def test_a_weekend_at_the_computer_is_judged_against_weekends_only() -> None:
    """Code every weekday: a Saturday morning in Mail is no late start for Code. Once five
    weekends days are known, a weekend's own habit is expected on weekends."""
    exp = Expectations()
    for day in range(17):  # two weeks and a half from a Monday: four weekend days
        weekend = (START + timedelta(days=day)).weekday() >= 5
        app, start, end = ("Photos", "10:00", "12:00") if weekend else ("Code", "09:20", "11:50")
        point = _frame(day, day, start, end, app, minutes=120)
        exp.observe_point(point, point.at.date())
    saturday = _frame(900, 19, "09:00", "11:05", "Mail", minutes=60)
    assert saturday.at.weekday() == 5
    assert "resume_focus" not in usual.judge("desktop", saturday.payload, saturday.at, exp, {})
    monday = _frame(901, 21, "09:00", "10:05", "Mail", minutes=60)
    said = usual.judge("desktop", monday.payload, monday.at, exp, {})["resume_focus"]
    assert said.act and "(it was your main app on 13 of the last 13 weekdays)" in said.sentence
    for day in (19, 20):  # that weekend with Photos too: six weekend days in all
        point = _frame(800 + day, day, "10:00", "12:00", "Photos", minutes=120)
        exp.observe_point(point, point.at.date())
    sunday = _frame(902, 27, "09:00", "11:15", "Mail", minutes=60)
    said = usual.judge("desktop", sunday.payload, sunday.at, exp, {})["resume_focus"]
    assert said.act and said.sentence.startswith(
        "You usually open Photos by 10:00 (it was your main app on 6 of the last 6 weekend days)"
    )


class _Unread(list):  # type: ignore[type-arg]
    """A history that fails when read: what was worked out for the day must be reused."""

    def __iter__(self) -> Any:
        raise AssertionError("the earlier days were read again")


def test_what_is_read_of_earlier_days_is_worked_out_once_a_day_and_a_late_point_counts() -> None:
    exp = Expectations()
    for day in range(6):
        for n in range(10):
            point = _frame(100 * day + n, day, "10:00", f"10:{n + 10}", "Code",
                           switches_30=20 + n % 5)  # fmt: skip
            exp.observe_point(point, point.at.date())
    today = (START + timedelta(days=7)).date()
    first = exp.switches_usual(today)
    main = exp.main_app(today)
    assert first is not None and main is not None and main[0] == "Code"
    # Every later point of the same day reads the day's answers, whatever history holds.
    held, apps = exp.switches, exp.app_minutes
    exp.switches, exp.app_minutes = _Unread(held), _Unread(apps)  # type: ignore[assignment]
    assert exp.switches_usual(today) == first
    assert exp.switches_below(today, 23) == pytest.approx(0.6)
    assert exp.main_app(today) == main
    exp.switches, exp.app_minutes = held, apps
    # A point of an earlier day that arrives late is part of the earlier days at once.
    late = _frame(999, 6, "11:00", "11:30", "Mail", switches_30=90)
    exp.observe_point(late, late.at.date())
    usual_now = exp.switches_usual(today)
    assert usual_now == (first[0], 7)  # one more earlier day
    assert exp.switches_below(today, 23) == pytest.approx(36 / 61)
    # A point of today does not change what is read of the days before it.
    now = _frame(1000, 7, "12:00", "12:30", "Mail", switches_30=99)
    exp.observe_point(now, now.at.date())
    assert exp.switches_usual(today) == usual_now


def test_a_room_s_first_uses_are_read_once_a_day_and_follow_a_late_point() -> None:
    exp = Expectations()
    for day in range(6):
        at = START + timedelta(days=day, hours=8, minutes=30)
        exp.observe_point(_point(day, at, segment=10, rooms={"Kitchen": 3}, events=3), at.date())
    today = (START + timedelta(days=7)).date()
    firsts, days = exp.room_first_uses(today)
    assert (firsts, days) == ({"Kitchen": [10] * 5}, 5)  # a Monday: the five weekdays
    held = exp.rooms
    exp.rooms = _Unread(held)  # type: ignore[assignment]
    assert exp.room_first_uses(today) == (firsts, days)
    exp.rooms = held
    at = START + timedelta(days=2, hours=7)
    exp.observe_point(_point(50, at, segment=8, rooms={"Kitchen": 1}, events=1), at.date())
    assert exp.room_first_uses(today) == ({"Kitchen": [8, 10, 10, 10, 10]}, 5)


def test_a_resident_who_sleeps_in_at_weekends_is_not_checked_on_at_the_weekday_time() -> None:
    """Up by 07:30 on weekdays, not before 11:00 on the three weekend days seen so far: too
    few weekends to say when one begins, and they plainly differ, so a Sunday morning is not
    asked about; a weekday still is."""
    exp = Expectations()
    for day in range(13):  # Monday to the second Saturday
        weekend = (START + timedelta(days=day)).weekday() >= 5
        segment = 13 if weekend else 8
        at = START + timedelta(days=day, minutes=50 * (segment + 1))
        exp.observe_point(_point(day, at, segment=segment, rooms={"Kitchen": 3}, events=3),
                          at.date())  # fmt: skip
    sunday = START + timedelta(days=13)
    assert exp.up_firsts(sunday.date()) == ([], 13)
    still = _point(100, sunday + timedelta(minutes=50 * 11), segment=10, events=0, quiet_min=300)
    sunday_said = usual.judge("home", still.payload, still.at, exp, {})["check_in_routine"]
    assert not sunday_said.act and "Nobody seems up" not in sunday_said.sentence
    monday = START + timedelta(days=14)
    assert exp.up_firsts(monday.date()) == ([8] * 10, 10)
    quiet = _point(101, monday + timedelta(minutes=50 * 11), segment=10, events=0, quiet_min=300)
    said = usual.judge("home", quiet.payload, quiet.at, exp, {})["check_in_routine"]
    assert said.act and said.sentence.startswith("Nobody seems up yet")


# -- one score per candidate, and the team's threshold -------------------------------------------


def test_the_threshold_is_where_acting_pays_for_the_team_s_cost_of_a_false_alarm() -> None:
    assert threshold_for(1.0) == 0.5  # a false alarm and a miss cost alike: even odds
    assert threshold_for(3.0) == 0.75
    assert threshold_for(DEFAULT_FALSE_ALARM_COST) == DEFAULT_THRESHOLD
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="positive number of misses"):
            threshold_for(bad)


def test_a_moment_carries_the_share_of_history_it_goes_beyond_as_its_score() -> None:
    # Six openings of three minutes, one of 20: an open of 50 minutes goes beyond all seven.
    exp = _door_history(minutes=3)
    exp.observe_event(
        _event(90, START + timedelta(days=6, hours=9), "door", "OPEN", "FrontDoor", "E")
    )
    exp.observe_event(
        _event(
            91, START + timedelta(days=6, hours=9, minutes=20), "door", "CLOSE", "FrontDoor", "E"
        )
    )
    assert exp.device_shorter_share("FrontDoor", 10) == 6 / 7
    now = START + timedelta(days=8, hours=12)
    item = {"device": "FrontDoor", "room": "Entrance", "kind": "door"}
    since = (now - timedelta(minutes=50)).isoformat()
    point = _point(99, now, segment=14, events=3, on_at_close=[{**item, "since": since}])
    proposed = RulesPolicy().decide(_ctx(point, exp))
    assert proposed.intent == "check_device" and proposed.score == 1.0
    # A pull request answered later than two of three earlier ones were: 2/3 of history.
    assert share_below([120.0, 180.0, 600.0], 400.0) == pytest.approx(2 / 3)


def test_a_candidate_below_the_team_s_threshold_is_not_proposed_and_says_why() -> None:
    now = START + timedelta(hours=12)
    item = {"device": "Oven", "room": "Kitchen", "kind": "electric",
            "since": (now - timedelta(minutes=45)).isoformat()}  # fmt: skip
    point = _point(1, now, segment=14, events=3, on_at_close=[item])
    # No history of the oven: the baseline's rule alone, at even odds.
    acted = RulesPolicy().decide(_ctx(point, Expectations()))
    assert acted.action == "intervene" and acted.score == usual.BASELINE_SCORE
    wary = RulesPolicy(threshold=threshold_for(3.0)).decide(_ctx(point, Expectations()))
    assert wary.action == "abstain"
    assert "check_device: Oven on since" in wary.message
    assert "score 0.50 is below the threshold 0.75" in wary.message
    # What memory backs fully still passes the wariest threshold.
    exp = _door_history(sensor="FrontDoor")
    door = {"device": "FrontDoor", "room": "Entrance", "kind": "door",
            "since": (now - timedelta(hours=2)).isoformat()}  # fmt: skip
    late = _point(2, now + timedelta(days=7), segment=14, events=3, on_at_close=[door])
    assert RulesPolicy(threshold=1.0).decide(_ctx(late, exp)).action == "intervene"


def test_a_failed_check_not_run_again_past_twice_its_usual_follow_up_is_nudged_once() -> None:
    exp = Expectations()
    t = datetime(2024, 3, 4, 9, tzinfo=UTC)
    run = 0

    def check(at: datetime, conclusion: str, branch: str = "main") -> EngineEvent:
        nonlocal run
        run += 1
        return _gh(500 + run, at, "workflow_run", name="ci", branch=branch, run_id=run,
                   conclusion=conclusion)  # fmt: skip

    for day in range(3):  # each failure is run again 30, 60 and 90 minutes later
        failed = t + timedelta(days=day)
        exp.observe_event(check(failed, "failure"))
        exp.observe_event(check(failed + timedelta(minutes=30 * (day + 1)), "success"))
    assert exp.follow_up_minutes == [30.0, 60.0, 90.0]
    assert exp.follow_up_usual_minutes() == 60.0
    # A push to the branch follows a failure up too.
    exp.observe_event(check(t + timedelta(days=3), "failure", "fix"))
    push = EngineEvent(600, t + timedelta(days=3, minutes=20), "observation",
                       {"type": "PushEvent", "attributes": {"ref": "refs/heads/fix"}})  # fmt: skip
    exp.observe_event(push)
    assert ("ci", "fix") not in exp.failed and exp.follow_up_minutes[-1] == 20.0
    # Now a failure on main that nobody follows up; a comment on an open pull request later.
    failed = t + timedelta(days=5)
    exp.observe_event(check(failed, "failure"))
    stream = MemoryStream("code", ZONE, RulesPolicy())
    stream.expectations = exp
    at = failed + timedelta(minutes=80)  # the median follow-up is now 45 minutes: 80 < 2 x 45
    early = stream.process(_gh(700, at, "IssueCommentEvent", number=9, pull_request=True,
                               author="m", actor="m"))  # fmt: skip
    assert early.controlled.proposed.intent != "ci_follow_up"
    late = stream.process(_gh(701, failed + timedelta(minutes=150), "IssueCommentEvent", number=9,
                              pull_request=True, author="m", actor="m"))  # fmt: skip
    assert late.action == "intervene" and late.controlled.proposed.intent == "ci_follow_up"
    assert late.controlled.proposed.message == (
        "The check ci failed on main 2 hours 30 minutes ago and has neither run again nor had a "
        "push since; a failure here is usually followed up within 45 minutes (median of 4)."
    )
    assert late.controlled.proposed.score == 1.0
    # Reminded of once: not again at a later event, on the next day or the one after.
    for n, days in enumerate((1, 2)):
        again = stream.process(_gh(702 + n, failed + timedelta(days=days), "IssueCommentEvent",
                                   number=9, pull_request=True, author="m", actor="m"))  # fmt: skip
        assert again.action == "abstain", again.controlled.proposed.message


def test_every_kind_of_check_run_is_followed_up_and_other_events_touch_no_wait() -> None:
    t = datetime(2024, 3, 4, 9, tzinfo=UTC)
    ci_types = ["ci_run", *(k for k, v in catalogue.CODE_KINDS.items() if v == "ci_run")]
    assert {"workflow_run", "CheckRunEvent", "StatusEvent"} <= set(ci_types)
    for n, kind in enumerate(ci_types):
        exp = Expectations()
        exp.observe_event(_gh(2 * n, t, kind, name="ci", branch="main", conclusion="failure"))
        assert ("ci", "main") in exp.failed, kind
        again = t + timedelta(minutes=25)
        exp.observe_event(_gh(2 * n + 1, again, kind, name="ci", branch="main", conclusion="ok"))
        assert exp.follow_up_minutes == [25.0] and not exp.failed, kind
    # A sensor's or a wearable's event naming a number and a conclusion is no pull request,
    # issue or check: it opens, answers and fails nothing.
    exp = Expectations()
    for n, kind in enumerate(("motion", "steps", "door", "window", None, 7)):
        exp.observe_event(_gh(50 + n, t, kind, number=3, author="a", name="ci",
                              conclusion="failure", action="opened"))  # fmt: skip
    assert not exp.waiting and not exp.failed and not exp.authors


def test_items_late_at_the_same_moment_are_reminded_of_in_turn_each_on_its_own() -> None:
    exp = _repository([2, 3, 4])
    opened = datetime(2024, 2, 1, 9, tzinfo=UTC)
    exp.observe_event(_gh(300, opened, "issue_opened", number=90, author="cy"))
    exp.observe_event(_gh(301, opened, "pr_opened", number=77, author="ann"))
    exp.observe_event(_gh(302, opened + timedelta(minutes=5), "pr_opened", number=78, author="bo"))
    exp.observe_event(_gh(303, opened + timedelta(minutes=9), "pr_opened", number=79, author="di"))
    # The issue has its usual too (three issues answered within hours).
    t = datetime(2024, 1, 10, tzinfo=UTC)
    for n in range(3):
        exp.observe_event(_gh(600 + n, t, "issue_opened", number=20 + n, author="user"))
        exp.observe_event(
            _gh(610 + n, t + timedelta(hours=2), "issue_comment", number=20 + n, author="m")
        )
    # A day and a half on, all four are late at once: one reminder per event, pull requests
    # first (finished work blocked on a reviewer), the longest-waiting first; #79 is reviewed
    # while it waits its turn, so the issue comes next and nothing more after it.
    stream = MemoryStream("code", ZONE, RulesPolicy())
    stream.expectations = exp
    star = {"action": "started"}
    events = [
        _gh(401, opened + timedelta(hours=36), "WatchEvent", **star),
        _gh(402, opened + timedelta(hours=36, minutes=1), "pr_review", number=79, author="m"),
        _gh(403, opened + timedelta(hours=36, minutes=2), "WatchEvent", **star),
        _gh(404, opened + timedelta(hours=36, minutes=3), "WatchEvent", **star),
        _gh(405, opened + timedelta(hours=36, minutes=4), "WatchEvent", **star),
    ]
    decisions = [stream.process(event) for event in events]
    targets = [d.controlled.proposed.target if d.action == "intervene" else None for d in decisions]
    assert targets == ["pull_request:77", "pull_request:78", "issue:90", None, None]
    assert decisions[1].controlled.proposed.message == (
        "Pull request #78 by bo has waited 1 day 11 hours for a review or comment from anyone "
        "else; this repository usually answers within 3 hours (median of 3)."
    )
    assert exp.reminder_queue == ()


def test_a_turn_is_the_same_asked_at_the_event_and_at_its_commit() -> None:
    """Each event serves one turn, decided on or not: memory moves on the same either way."""
    opened = datetime(2024, 2, 1, 9, tzinfo=UTC)

    def repository() -> Expectations:
        exp = _repository([2, 3, 4])
        for n in (77, 78):
            exp.observe_event(_gh(n, opened + timedelta(minutes=n), "pr_opened", number=n))
        return exp

    decided, ingested = repository(), repository()
    at = opened + timedelta(hours=30)
    assert decided.reminder_turn(at) == ("pull_request", 77, False)
    for exp in (decided, ingested):
        exp.observe_event(_gh(500, at, "WatchEvent", action="started"))
    assert decided.reminder_queue == ingested.reminder_queue == (("pull_request", 78, False),)
    # A second event at the same instant is a moment for the next in turn, nothing new.
    assert decided.reminder_turn(at) == ("pull_request", 78, False)
