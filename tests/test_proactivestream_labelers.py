"""The reference labelers: the episode rule, each scope's opportunities on hand-made streams
(first window, covered window, reopening) and causality on the real files."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from benchmark.labelers.base import EpisodeBook, Opportunity, label_stream
from benchmark.labelers.code import CodeLabeler, CodeLabelerV2
from benchmark.labelers.desktop import DesktopLabeler
from benchmark.labelers.home import HomeLabeler, HomeLabelerV2, is_care
from benchmark.labelers.registry import reference_labeler, reference_labels, rule_text
from benchmark.labelers.sports import SportsLabeler
from benchmark.streams.build import build_stream
from benchmark.streams.records import DecisionPoint, Stream, StreamEvent
from tests import proactive_streams as data
from tests.conftest import need_service

ZONE = ZoneInfo("Europe/Madrid")
T0 = datetime(2026, 1, 5, tzinfo=ZONE)  # a Monday


def _point(n: int, scope: str = "home") -> DecisionPoint:
    return DecisionPoint(f"p{n}", scope, T0 + timedelta(minutes=n), {})


def _opp(episode: str, service: str = "check_in_routine", **kw: object) -> Opportunity:
    return Opportunity("t", service, episode, "because", **kw)  # type: ignore[arg-type]


def test_episode_rule_first_window_covered_windows_and_reopening() -> None:
    book = EpisodeBook("home")
    steps = [
        [_opp("a")],  # new: intervene
        [_opp("a")],  # covered: abstain
        [_opp("a", strength=2)],  # support strengthened: intervene
        [_opp("a", strength=2)],  # covered again
        [],  # the opportunity stopped holding ...
        [_opp("a", strength=2)],  # ... and holds again: it reopened
        [_opp("a", service="check_device")],  # its service changed
    ]
    got = [book.label(_point(i), found, "t").action for i, found in enumerate(steps)]
    assert got == [
        "intervene",
        "abstain",
        "intervene",
        "abstain",
        "abstain",
        "intervene",
        "intervene",
    ]


def test_two_new_opportunities_take_the_first_free_windows_in_catalogue_order() -> None:
    book = EpisodeBook("home")
    both = [_opp("door", "check_device"), _opp("meal", "check_in_routine")]
    first = book.label(_point(1), both, "t")
    second = book.label(_point(2), both, "t")
    assert (first.service, second.service) == ("check_in_routine", "check_device")
    assert book.label(_point(3), both, "t").action == "abstain"


def test_a_pause_in_actionability_is_no_reopening() -> None:
    book = EpisodeBook("home")
    assert book.label(_point(1), [_opp("a", actionable=False)], "t").action == "abstain"
    assert book.label(_point(2), [_opp("a")], "t").action == "intervene"  # first actionable
    assert book.label(_point(3), [_opp("a", actionable=False)], "t").action == "abstain"
    assert book.label(_point(4), [_opp("a")], "t").action == "abstain"  # still covered


def test_a_service_outside_the_catalogue_is_a_labeler_bug() -> None:
    with pytest.raises(ValueError, match="'suggest_walk' is not a home service"):
        EpisodeBook("home").label(_point(1), [_opp("a", "suggest_walk")], "t")


# -- home -------------------------------------------------------------------------------------


def _sensor(
    n: int, at: datetime, sensor: str, place: str, value: str, kind: str, activity: str | None
) -> StreamEvent:
    return StreamEvent(
        n, at, "observation",
        {"type": kind, "value": value, "attributes": {"sensor": sensor, "place": place},
         "private": {"activity": activity}},
    )  # fmt: skip


def _home_days(days: int, skip_last: bool) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for d in range(days):
        day = T0 + timedelta(days=d)
        events.append(
            _sensor(
                len(events) + 1,
                day + timedelta(hours=7),
                "Bed",
                "Bedroom",
                "OFF",
                "pressure",
                "Sleeping",
            )
        )
        if not (skip_last and d == days - 1):
            at = day + timedelta(hours=8)
            events.append(
                _sensor(len(events) + 1, at, "Cooktop", "Kitchen", "ON", "pir", "Breakfast")
            )
            events.append(
                _sensor(
                    len(events) + 1,
                    at + timedelta(minutes=3),
                    "Fridge",
                    "Kitchen",
                    "ON",
                    "magnetic",
                    "Breakfast",
                )
            )
            events.append(
                _sensor(
                    len(events) + 1,
                    at + timedelta(minutes=5),
                    "Fridge",
                    "Kitchen",
                    "OFF",
                    "magnetic",
                    "Breakfast",
                )
            )
        events.append(
            _sensor(
                len(events) + 1,
                day + timedelta(hours=12),
                "Seat",
                "Living",
                "ON",
                "pressure",
                "Spare_Time/TV",
            )
        )
        events.append(
            _sensor(
                len(events) + 1,
                day + timedelta(hours=23, minutes=30),
                "Seat",
                "Living",
                "OFF",
                "pressure",
                "Spare_Time/TV",
            )
        )
    return events


def _labels(stream: Stream, labeler: object) -> dict[str, object]:
    return label_stream(stream, labeler)  # type: ignore[arg-type]


def test_home_a_usual_activity_not_begun_is_labelled_at_its_first_window_only() -> None:
    stream = build_stream("h", "home", _home_days(7, skip_last=True), ZONE)
    labels = label_stream(stream, HomeLabeler(ZONE))
    positive = {k: v for k, v in labels.items() if v.positive}
    # Breakfast began at 08:00 on six days: deadline 08:30; the first segment to close
    # after it is 08:20-09:10. The later segments of the morning are covered by it.
    assert list(positive) == ["home:2026-01-11/10"]
    label = positive["home:2026-01-11/10"]
    assert (label.service, label.type, label.episode) == (
        "check_in_routine", "routine_missed", "2026-01-11/Breakfast",
    )  # fmt: skip
    assert "Breakfast usually begins by 08:00 (on 6 of 6 days" in label.reason
    assert labels["home:2026-01-11/11"].action == "abstain"
    assert "already covered: 2026-01-11/Breakfast" in labels["home:2026-01-11/11"].reason
    normal = build_stream("h", "home", _home_days(7, skip_last=False), ZONE)
    assert not any(v.positive for v in label_stream(normal, HomeLabeler(ZONE)).values())


def test_home_a_fridge_left_open_far_longer_than_usual_is_a_device_opportunity() -> None:
    events = _home_days(7, skip_last=False)
    last = T0 + timedelta(days=6, hours=8)
    events = [e for e in events if e.at != last + timedelta(minutes=5)]  # never closed
    stream = build_stream("h", "home", events, ZONE)
    labels = label_stream(stream, HomeLabeler(ZONE))
    positive = [v for v in labels.values() if v.positive]
    # Open at 08:03, usually shut within 2 min (floor 10): the 07:30-08:20 segment is the first.
    assert [(v.point, v.service) for v in positive] == [("home:2026-01-11/09", "check_device")]
    assert positive[0].episode == "Fridge@2026-01-11T08:03:00+01:00"
    assert "usually goes off within 2 min" in positive[0].reason


def test_home_version_2_checks_only_what_a_caregiver_checks_on() -> None:
    assert is_care("Breakfast") and is_care("Cook_Dinner") and is_care("Take_Medication")
    assert not is_care("Wash_Dinner_Dishes") and not is_care("Dress") and not is_care("Toilet")
    assert not is_care("Enter_Home") and not is_care("Watch_TV")


def test_home_version_2_flags_a_missed_meal_only_when_its_places_were_not_used_either() -> None:
    # Breakfast (the day's first activity out of bed) not begun on the last day, and nothing
    # but the bed seen until noon: not up, then breakfast missed, each an hour past usual.
    stream = build_stream("h", "home", _home_days(7, skip_last=True), ZONE)
    positive = {k: v for k, v in label_stream(stream, HomeLabelerV2(ZONE)).items() if v.positive}
    assert [(k, v.episode, v.source) for k, v in positive.items()] == [
        ("home:2026-01-11/10", "2026-01-11/Being up", "labeler:home/2"),  # 08:20-09:10
        ("home:2026-01-11/11", "2026-01-11/Breakfast", "labeler:home/2"),  # the next window
    ]
    # Breakfast not begun, but the kitchen in use at 08:00 (a labelling gap, say): version 1
    # flags it, version 2 does not.
    events = _home_days(7, skip_last=True)
    events.append(_sensor(999, T0 + timedelta(days=6, hours=8), "Cooktop", "Kitchen", "ON", "pir",
                          "Snack"))  # fmt: skip
    gap = build_stream("h", "home", events, ZONE)
    assert any(v.positive for v in label_stream(gap, HomeLabeler(ZONE)).values())
    assert not any(v.positive for v in label_stream(gap, HomeLabelerV2(ZONE)).values())


def test_home_version_2_never_calls_an_arrival_or_a_private_activity_a_missed_routine() -> None:
    events: list[StreamEvent] = []
    for d in range(7):
        day = T0 + timedelta(days=d)
        # Up every day: a snack in the kitchen at eight.
        events.append(_sensor(len(events) + 1, day + timedelta(hours=8), "Cupboard", "Kitchen",
                              "ON", "pir", "Snack"))  # fmt: skip
        if d < 6:  # home every day at 12:00 and dressed at 09:00, but not on the last day
            events.append(_sensor(len(events) + 1, day + timedelta(hours=12), "Door", "Entry",
                                  "OPEN", "magnetic", "Enter_Home"))  # fmt: skip
            events.append(_sensor(len(events) + 1, day + timedelta(hours=12, minutes=1), "Door",
                                  "Entry", "CLOSE", "magnetic", "Enter_Home"))  # fmt: skip
            events.append(_sensor(len(events) + 1, day + timedelta(hours=9), "Wardrobe",
                                  "Bedroom", "ON", "pir", "Dress"))  # fmt: skip
        events.append(_sensor(len(events) + 1, day + timedelta(hours=16), "Seat", "Living", "ON",
                              "pressure", "Watch_TV"))  # fmt: skip
    stream = build_stream("h", "home", events, ZONE)
    v1 = {v.episode for v in label_stream(stream, HomeLabeler(ZONE)).values() if v.positive}
    assert v1 == {"2026-01-11/Enter_Home", "2026-01-11/Dress"}
    assert not any(v.positive for v in label_stream(stream, HomeLabelerV2(ZONE)).values())


def test_home_version_2_reads_a_lamp_as_an_appliance_left_on() -> None:
    events = _home_days(7, skip_last=False)
    for d in range(6):  # the kitchen lamp: on for ten minutes each evening
        on = T0 + timedelta(days=d, hours=20)
        events.append(_sensor(500 + 2 * d, on, "KitchenLight", "Kitchen", "ON", "lamp", None))
        off = on + timedelta(minutes=10)
        events.append(_sensor(501 + 2 * d, off, "KitchenLight", "Kitchen", "OFF", "lamp", None))
    events.append(_sensor(600, T0 + timedelta(days=6, hours=20), "KitchenLight", "Kitchen", "ON",
                          "lamp", None))  # fmt: skip
    stream = build_stream("h", "home", events, ZONE)
    found = [v for v in label_stream(stream, HomeLabelerV2(ZONE)).values() if v.positive]
    assert [(v.service, v.episode[:12]) for v in found] == [("check_device", "KitchenLight")]
    assert not any(v.positive for v in label_stream(stream, HomeLabeler(ZONE)).values())


def test_each_run_names_the_labeler_version_and_version_1_stays_available() -> None:
    assert reference_labeler("home", ZONE).version == 2
    assert reference_labeler("home", ZONE, version=1).version == 1
    assert reference_labeler("sports", ZONE).version == 1  # the study found it right
    assert reference_labeler("code", ZONE, version=1).version == 1
    with pytest.raises(ValueError, match="home has labeler versions 1, 2"):
        reference_labeler("home", ZONE, version=0)
    stream = build_stream("h", "home", _home_days(7, skip_last=True), ZONE)
    old = reference_labels(stream, version=1)
    assert {v.source for v in old.values()} == {"labeler:home/1"}
    assert {v.source for v in reference_labels(stream).values()} == {"labeler:home/2"}


# -- sports -----------------------------------------------------------------------------------


def _hour(n: int, end: datetime, kind: str, minutes: list[int]) -> StreamEvent:
    attributes = {"resolution": "minute", "minutes": minutes}
    payload = {"type": kind, "value": sum(minutes), "attributes": attributes}
    return StreamEvent(n, end, "observation", payload)


def test_sports_sedentary_at_a_usually_active_slot_is_labelled_suggest_walk() -> None:
    zone = ZoneInfo("America/New_York")
    events: list[StreamEvent] = []
    for d in range(7):
        noon = datetime.combine(date(2026, 1, 5) + timedelta(days=d), time(12), tzinfo=zone)
        for h in range(12, 0, -1):
            end = noon - timedelta(hours=h - 1)
            walking = h == 1 and d < 6  # the hour before noon, every day but the last
            steps = [110] * 20 + [2] * 40 if walking else [2] * 60
            levels = [3] * 20 + [1] * 40 if walking else [1] * 60
            events.append(_hour(len(events) + 1, end, "steps_by_minute", steps))
            events.append(_hour(len(events) + 1, end, "intensity_by_minute", levels))
    stream = build_stream("p", "sports", events, zone)
    labels = label_stream(stream, SportsLabeler(zone))
    positive = {k: v for k, v in labels.items() if v.positive}
    assert list(positive) == ["sports:2026-01-11/1"]
    assert positive["sports:2026-01-11/1"].service == "suggest_walk"
    assert "that hour was active on 6 of 6 earlier days" in positive["sports:2026-01-11/1"].reason


# -- code -------------------------------------------------------------------------------------


def _gh(n: int, at: datetime, kind: str, **attributes: object) -> StreamEvent:
    return StreamEvent(
        n, at, "observation", {"type": kind, "value": None, "attributes": attributes}
    )


def test_code_a_pull_request_waiting_past_the_usual_review_time_and_its_escalation() -> None:
    utc = ZoneInfo("UTC")
    t = datetime(2026, 1, 5, 9, tzinfo=utc)
    events = []
    for n in (1, 2, 3):  # three reviews, each an hour after the opening
        events.append(
            _gh(
                len(events) + 1,
                t,
                "PullRequestEvent",
                action="opened",
                number=n,
                author="ann",
                actor="ann",
            )
        )
        events.append(
            _gh(
                len(events) + 1,
                t + timedelta(hours=1),
                "PullRequestReviewEvent",
                action="submitted",
                number=n,
                actor="bob",
            )
        )
        t += timedelta(hours=2)
    events.append(
        _gh(
            len(events) + 1,
            t,
            "PullRequestEvent",
            action="opened",
            number=4,
            author="ann",
            actor="ann",
        )
    )
    for minutes in (30, 120, 150, 200, 260):
        events.append(
            _gh(len(events) + 1, t + timedelta(minutes=minutes), "WatchEvent", actor="eve")
        )
    events.append(
        _gh(
            len(events) + 1,
            t + timedelta(minutes=300),
            "PullRequestReviewEvent",
            action="submitted",
            number=4,
            actor="bob",
        )
    )
    events.append(_gh(len(events) + 1, t + timedelta(minutes=310), "WatchEvent", actor="eve"))
    stream = build_stream("r", "code", events, utc)
    labels = label_stream(stream, CodeLabeler())
    by_minute = {
        m: labels[f"code:{events[6 + i + 1].id}"] for i, m in enumerate((30, 120, 150, 200, 260))
    }
    assert by_minute[30].action == "abstain"  # not waiting long yet
    assert (by_minute[120].action, by_minute[120].service) == ("intervene", "review_nudge")
    assert by_minute[150].action == "abstain"  # covered
    assert by_minute[200].action == "intervene"  # past three times the usual wait: escalated
    assert by_minute[260].action == "abstain"
    assert labels[f"code:{events[-1].id}"].action == "abstain"  # reviewed: no opportunity


def _waiting_repository(title: str, author: str) -> list[StreamEvent]:
    """Three items answered within the hour by bob, then one opened by ``author`` that waits."""
    utc = ZoneInfo("UTC")
    t = datetime(2026, 1, 5, 9, tzinfo=utc)
    events: list[StreamEvent] = []
    for n in (1, 2, 3):
        events.append(_gh(len(events) + 1, t, "IssuesEvent", action="opened", number=n,
                          actor="ann", title="a bug"))  # fmt: skip
        events.append(_gh(len(events) + 1, t + timedelta(hours=1), "IssueCommentEvent",
                          action="created", number=n, actor="bob"))  # fmt: skip
        t += timedelta(hours=2)
    events.append(_gh(len(events) + 1, t, "IssuesEvent", action="opened", number=4,
                      actor=author, title=title))  # fmt: skip
    for hours in (3, 12, 23, 25, 30):
        events.append(_gh(len(events) + 1, t + timedelta(hours=hours), "WatchEvent", actor="eve"))
    return events


def test_code_version_2_waits_a_day_and_skips_what_waits_for_nobody() -> None:
    utc = ZoneInfo("UTC")
    stream = build_stream("r", "code", _waiting_repository("it crashes", "carl"), utc)
    v1 = [k for k, v in label_stream(stream, CodeLabeler()).items() if v.positive]
    v2 = {k: v for k, v in label_stream(stream, CodeLabelerV2()).items() if v.positive}
    events = stream.events
    # Version 1: late past the third quartile of answers (an hour), at three hours.
    assert v1 == [f"code:{events[7].id}"]
    # Version 2: late from a day, at 25 hours.
    assert list(v2) == [f"code:{events[10].id}"]
    assert "usually answers within 1.0 h; late from a day" in v2[f"code:{events[10].id}"].reason
    # A maintainer's own tracking issue (bob answers others), work in progress, a cherry-pick.
    for title, author in (("tracking: 1.9", "bob"), ("[WIP] new parser", "carl"),
                          ("Automated cherry pick of #12", "carl")):  # fmt: skip
        quiet = build_stream("r", "code", _waiting_repository(title, author), utc)
        assert not any(v.positive for v in label_stream(quiet, CodeLabelerV2()).values()), title


# -- desktop ----------------------------------------------------------------------------------


def _frame(n: int, day: date, start: str, end: str, zone: ZoneInfo) -> DecisionPoint:
    at = datetime.combine(day, time.fromisoformat(end), tzinfo=zone) + timedelta(seconds=30)
    public = {"type": "frame_end", "app": "Code", "site": None, "minutes": 10.0, "start": start,
              "end": end, "next_app": "Code", "switches_30": 2, "day": day.isoformat()}  # fmt: skip
    return DecisionPoint(f"f{n}", "desktop", at, public)


def test_desktop_a_long_stretch_without_a_break_and_its_reopening_after_one() -> None:
    zone = ZoneInfo("Europe/Berlin")
    day = date(2026, 3, 2)
    spans = [("09:00", "09:30"), ("09:30", "10:00"), ("10:00", "10:35"), ("10:35", "11:00"),
             ("11:20", "12:00"), ("12:00", "12:30"), ("12:30", "12:55")]  # fmt: skip
    points = tuple(_frame(i, day, s, e, zone) for i, (s, e) in enumerate(spans))
    stream = Stream("d", "desktop", zone, (), points, synthetic=True)
    labels = label_stream(stream, DesktopLabeler(zone))
    assert [labels[p.key].action for p in points] == [
        "abstain", "abstain", "intervene", "abstain",  # 95 min by 10:35, covered after
        "abstain", "abstain", "intervene",  # a 20-minute break, then 95 minutes again
    ]  # fmt: skip
    assert labels["f2"].service == "take_break" and labels["f2"].episode == "2026-03-02/work@09:00"
    assert labels["f6"].episode == "2026-03-02/work@11:20"


# -- real data --------------------------------------------------------------------------------


def _truncated(stream: Stream, keep: int) -> Stream:
    """The stream as it stood at its ``keep``-th point: later points and events removed."""
    cut = stream.points[keep - 1].at
    return replace(
        stream,
        events=tuple(e for e in stream.events if e.at <= cut),
        points=stream.points[:keep],
    )


@pytest.mark.parametrize("which", ["home", "sports", "code"])
def test_a_labeler_never_reads_a_later_event(which: str) -> None:
    if not data.DATA.is_dir():
        need_service("shared data (../shared/data)", False)
    if which == "home":
        stream = data.ordonez("B")
    elif which == "sports":
        stream = data.fitbit("1503960366")
    else:
        stream = max(data.github(data.K8S), key=lambda s: len(s.points))
    full = reference_labels(stream)
    assert any(label.positive for label in full.values())
    for keep in (len(stream.points) // 3, 2 * len(stream.points) // 3):
        if stream.scope == "code":  # a code point comes before its own event: keep the event
            cut = stream.points[keep - 1]
            short = replace(
                stream,
                events=tuple(e for e in stream.events if (e.at, e.id) <= (cut.at, cut.event_id)),
                points=stream.points[:keep],
            )
        else:
            short = _truncated(stream, keep)
        prefix = reference_labels(short)
        assert prefix == {k: full[k] for k in prefix}


def test_each_scope_has_a_written_rule_with_at_least_three_opportunity_types() -> None:
    for scope in ("home", "sports", "code", "desktop"):
        text = rule_text(scope)
        assert text.count("→") >= 3, scope
