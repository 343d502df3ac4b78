"""Workflow patterns (Activity Frames §7): seven deterministic detectors over compiled days, each
needing three occurrences, typed text only on opt-in, with evidence back to frames and rows."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from compiler.document import compile_day, expand_runs
from compiler.params import Params
from compiler.patterns import KINDS, detect
from tests.compiler_days import DAY, TZ, Day

D = 86400.0  # a day later, in the builder's seconds after 08:00 local on DAY


def _days(day: Day, n: int, **params: object):
    return [
        compile_day(day.capture, DAY + timedelta(days=k), TZ, Params(**params))  # type: ignore[arg-type]
        for k in range(n)
    ]


def _kind(found, kind):
    return [p for p in found if p["kind"] == kind]


def _mail_session(day: Day, s: float, *names: str) -> list[int]:
    """A Firefox mail frame at s with one named click per name, 2 s apart."""
    ids = [day.snap(s, "Firefox", "Mail", "https://mail.example/u/0/inbox")]
    for i, name in enumerate(names):
        ids.append(day.inp(s + 1 + 2 * i, "click", element_name=name, element_role="AXButton"))
    day.snap(s + 40, "Firefox", "Mail", "https://mail.example/u/0/inbox")
    return ids


def test_repeated_clicks_on_a_named_element():
    day = Day()
    sessions = [_mail_session(day, k * 600, "Archive") for k in range(3)]
    _mail_session(day, 3000, "Spam", "Spam")  # twice: below the count
    (item,) = _kind(detect(_days(day, 1)), "repeated_click")
    assert item["label"] == 'click "Archive" (AXButton) in Firefox'
    assert item["count"] == 3
    assert item["evidence"]["frames"] == [f"f-{ids[0]}" for ids in sessions]
    assert expand_runs(item["evidence"]["rows"]) == [ids[1] for ids in sessions]


def test_action_sequences_of_two_and_three_steps_without_overlaps():
    day = Day()
    for k in range(3):
        _mail_session(day, k * 600, "Inbox", "Archive", "Next")
    found = _kind(detect(_days(day, 1)), "action_sequence")
    # "Inbox → Archive" and "Archive → Next" recur as often as the 3-step one: left out.
    assert [(p["label"], p["count"]) for p in found] == [("Inbox → Archive → Next", 3)]
    _mail_session(day, 3000, "Inbox", "Archive")
    found = _kind(detect(_days(day, 1)), "action_sequence")
    assert [(p["label"], p["count"]) for p in found] == [
        ("Inbox → Archive", 4),
        ("Inbox → Archive → Next", 3),
    ]
    # Overlapping starts count once: A B A B A holds "A → B → A" twice, not three times.
    day = Day()
    _mail_session(day, 0, "Inbox", "Star", "Inbox", "Star", "Inbox", "Star", "Inbox")
    labels = {p["label"]: p["count"] for p in _kind(detect(_days(day, 1)), "action_sequence")}
    assert "Inbox → Star → Inbox" not in labels
    assert labels == {"Inbox → Star": 3, "Star → Inbox": 3}


def test_a_sequence_label_says_which_steps_are_typing():
    day = Day()
    for k in range(3):
        day.snap(k * 600, "Firefox", "Orders", "https://shop.example/orders")
        day.inp(k * 600 + 1, "click", element_name="Customer", element_role="AXTextField")
        day.inp(k * 600 + 2, "key", element_name="Customer", element_role="AXTextField")
        day.inp(k * 600 + 3, "click", element_name="Save", element_role="AXButton")
        day.snap(k * 600 + 30, "Firefox", "Orders", "https://shop.example/orders")
    found = _kind(detect(_days(day, 1)), "action_sequence")
    assert [p["label"] for p in found] == ["Customer → Customer (typing) → Save"]


def test_a_daily_habit_is_the_same_element_on_several_days():
    day = Day()
    for k in range(3):
        _mail_session(day, k * D, "Archive")
    _mail_session(day, 3 * D, "Compose")
    (item,) = _kind(detect(_days(day, 4)), "daily_habit")
    assert item["label"] == 'click "Archive" (AXButton) in Firefox on 3 of 4 days'
    assert item["count"] == 3
    assert len(item["evidence"]["frames"]) == 3


def test_url_patterns_are_templates_visited_three_times():
    day = Day()
    for k in range(3):
        day.snap(k * 600, "Firefox", "PR", f"https://github.com/acme/api/pull/{k}")
        if k < 2:  # twice: below the count
            day.snap(k * 600 + 30, "Firefox", "Docs", "https://docs.example/guide")
    found = _kind(detect(_days(day, 1)), "url_pattern")
    assert [(p["label"], p["count"]) for p in found] == [("github.com/acme/api/*", 3)]


def test_app_switches_follow_one_app_with_another_on_one_monitor():
    day = Day()
    first = []
    for k in range(3):
        first.append(day.snap(k * 600, "Code", "app.py"))
        day.snap(k * 600 + 30, "Code", "app.py")
        day.snap(k * 600 + 60, "Firefox", "Docs", "https://docs.example/")
        day.snap(k * 600 + 90, "Firefox", "Docs", "https://docs.example/")
    found = detect(_days(day, 1))
    (item,) = _kind(found, "app_switch")
    assert item["label"] == "Code → Firefox"
    assert item["count"] == 3
    assert item["evidence"]["frames"][:2] == [f"f-{first[0]}", f"f-{first[0] + 2}"]
    assert expand_runs(item["evidence"]["rows"])[:2] == [first[0] + 1, first[0] + 2]
    # Firefox -> Code happens only across the 10-minute session breaks: not a switch.
    assert all(p["label"] != "Firefox → Code" for p in found)


def _typing_day() -> Day:
    day = Day()
    for k in range(3):
        day.snap(k * 600, "Firefox", "Orders", "https://shop.example/orders")
        day.inp(
            k * 600 + 1, "text", element_name="Customer", element_role="AXTextField", text="Ada"
        )
        day.snap(k * 600 + 30, "Firefox", "Orders", "https://shop.example/orders")
    return day


def test_repeated_text_only_on_opt_in():
    day = _typing_day()
    assert _kind(detect(_days(day, 1, include_text=True)), "repeated_text") == []
    (item,) = _kind(detect(_days(day, 1, include_text=True), include_text=True), "repeated_text")
    assert item["label"] == 'typed "Ada" into Customer in Firefox'
    assert item["count"] == 3
    # A compile without text has none to read.
    assert _kind(detect(_days(day, 1), include_text=True), "repeated_text") == []


def _slack_at_nine(day: Day, k: int, seconds: float = 300) -> None:
    day.run(k * D + 3600, k * D + 3600 + seconds, 30, "Slack", window="#eng")


def test_temporal_rhythm_is_an_app_in_the_same_slot_on_regular_days():
    day = Day()
    for k in (0, 1, 3):
        _slack_at_nine(day, k)
    day.run(2 * D + 7200, 2 * D + 7500, 30, "Code", window="app.py")  # day 3 is observed
    found = detect(_days(day, 4))
    rhythm = _kind(found, "temporal_rhythm")
    assert [(p["label"], p["count"]) for p in rhythm] == [
        ("Slack active 09:00–09:30 on 3 of 4 days", 3)
    ]
    assert len(rhythm[0]["evidence"]["frames"]) == 3


def test_a_rhythm_needs_regularity_of_at_least_six_tenths():
    day = Day()
    for k in (0, 1, 2):
        _slack_at_nine(day, k)
    for k in (3, 4):
        day.run(k * D + 7200, k * D + 7500, 30, "Code", window="app.py")
    # Slack on 3 of 5 days = 0.6: kept; on 3 of 6 days = 0.5: not.
    assert len(_kind(detect(_days(day, 5)), "temporal_rhythm")) == 1
    day.run(5 * D + 7200, 5 * D + 7500, 30, "Code", window="app.py")
    assert _kind(detect(_days(day, 6)), "temporal_rhythm") == []


def test_a_glance_is_not_activity_in_a_slot():
    day = Day()
    for k in range(3):
        _slack_at_nine(day, k, seconds=30)  # one row: 30 s credited at most
        day.run(k * D + 7200, k * D + 7500, 30, "Code", window="app.py")
    found = _kind(detect(_days(day, 3)), "temporal_rhythm")
    assert [p["label"] for p in found] == ["Code active 10:00–10:30 on 3 of 3 days"]


def test_patterns_are_ordered_by_kind_count_then_label():
    day = Day()
    for k in range(4):
        _mail_session(day, k * D + k * 600, "Archive", "Label")
    for k in range(3):
        _mail_session(day, k * D + 5000, "Compose")
    found = detect(_days(day, 4))
    kinds = [p["kind"] for p in found]
    assert kinds == sorted(kinds, key=KINDS.index)
    clicks = _kind(found, "repeated_click")
    assert [(p["count"], p["label"]) for p in clicks] == [
        (4, 'click "Archive" (AXButton) in Firefox'),
        (4, 'click "Label" (AXButton) in Firefox'),
        (3, 'click "Compose" (AXButton) in Firefox'),
    ]
    assert detect(_days(day, 4)) == found
    assert detect([]) == []
    assert _kind(detect(_days(day, 4), min_count=5), "repeated_click") == []


@pytest.mark.parametrize(
    ("days", "kwargs", "message"),
    [
        ([], {"min_count": 1}, "min_count must be an integer of at least 2, not 1"),
        ([], {"min_count": True}, "min_count must be an integer of at least 2"),
        ([], {"include_text": "yes"}, "include_text must be True or False, not 'yes'"),
        ([{"frames": []}], {}, r"days\[0\] is a dict, not a compiled day"),
    ],
)
def test_bad_inputs_are_refused(days, kwargs, message):
    with pytest.raises(ValueError, match=message):
        detect(days, **kwargs)


def _labels(found, kind):
    return [(p["label"], p["count"]) for p in _kind(found, kind)]


def test_a_self_repeat_joins_its_step_and_its_presses_are_evidence():
    day = Day()
    sessions = [
        _mail_session(day, k * 600, "Inbox", "Archive", "Archive", "Next") for k in range(3)
    ]
    (item,) = _kind(detect(_days(day, 1)), "action_sequence")
    assert (item["label"], item["count"]) == ("Inbox → Archive → Next", 3)
    assert expand_runs(item["evidence"]["rows"]) == [i for ids in sessions for i in ids[1:]]


def test_actions_exactly_ninety_seconds_apart_are_one_session():
    day = Day()
    for k in range(3):
        day.run(k * 600, k * 600 + 210, 30, "Firefox", window="Mail", url="https://mail.example/")
        for i, name in enumerate(("Inbox", "Archive", "Next")):
            day.inp(k * 600 + 1 + 90 * i, "click", element_name=name, element_role="AXButton")
    found = detect(_days(day, 1))
    assert _labels(found, "action_sequence") == [("Inbox → Archive → Next", 3)]


def test_an_overlapping_window_is_skipped_and_the_session_read_on():
    day = Day()
    for k in range(3):
        _mail_session(day, k * 600, "Inbox", "Star", "Inbox", "Star", "Inbox", "Compose", "Send")
    labels = dict(_labels(detect(_days(day, 1)), "action_sequence"))
    assert labels["Inbox → Compose → Send"] == 3


def test_only_the_two_step_sequences_inside_a_three_step_one_are_left_out():
    day = Day()
    for k in range(3):
        _mail_session(day, k * 600, "Inbox", "Archive", "Next")
        _mail_session(day, k * 600 + 300, "Draft", "Send")
    assert _labels(detect(_days(day, 1)), "action_sequence") == [
        ("Draft → Send", 3),
        ("Inbox → Archive → Next", 3),
    ]


def test_a_click_label_names_the_element_on_one_line_and_its_role_only_when_known():
    day = Day()
    for k in range(3):
        day.snap(k * 600, "Firefox", "Mail", "https://mail.example/u/0/inbox")
        day.inp(k * 600 + 1, "click", element_name="Save\n  draft")
        day.snap(k * 600 + 40, "Firefox", "Mail", "https://mail.example/u/0/inbox")
    assert _labels(detect(_days(day, 1)), "repeated_click") == [
        ('click "Save draft" in Firefox', 3)
    ]


def test_two_occurrences_are_a_pattern_when_min_count_is_two():
    day = Day()
    for k in range(2):
        _mail_session(day, k * D, "Archive")
    found = detect(_days(day, 2), min_count=2)
    assert _labels(found, "daily_habit") == [
        ('click "Archive" (AXButton) in Firefox on 2 of 2 days', 2)
    ]


def test_repeated_text_is_reported_with_the_other_patterns():
    day = _typing_day()
    found = detect(_days(day, 1, include_text=True), include_text=True)
    kinds = {p["kind"] for p in found}
    assert {"repeated_text", "url_pattern"} <= kinds


def test_a_switch_is_between_apps_and_not_from_an_unknown_app_or_within_one():
    day = Day()
    code, firefox = [], []
    for k in range(3):
        day.snap(k * 600, "", None)  # an unnamed app: no switch from it
        day.snap(k * 600 + 30, "", None)
        code.append(day.run(k * 600 + 60, k * 600 + 150, 30, "Code", window="app.py"))
        firefox.append(day.snap(k * 600 + 150, "Firefox", "PR", "https://github.com/acme/"))
        day.snap(k * 600 + 180, "Firefox", "PR", "https://github.com/acme/")
        # Another site in the same app is a new frame but no switch.
        day.snap(k * 600 + 210, "Firefox", "Docs", "https://docs.example/")
        day.snap(k * 600 + 240, "Firefox", "Docs", "https://docs.example/")
    compiled = _days(day, 1)
    assert len(compiled[0].frames) == 12
    (item,) = _kind(detect(compiled), "app_switch")
    assert (item["label"], item["count"]) == ("Code → Firefox", 3)
    assert item["evidence"]["frames"] == [
        f for rows, first in zip(code, firefox, strict=True) for f in (f"f-{rows[0]}", f"f-{first}")
    ]
    assert expand_runs(item["evidence"]["rows"]) == [
        r for rows, first in zip(code, firefox, strict=True) for r in (rows[-1], first)
    ]


def test_a_rhythm_counts_only_credited_seconds_of_known_apps_and_reads_every_slot():
    day = Day()
    slack = []
    for k in range(3):
        base = k * D
        day.snap(base, "", None)  # an unknown app at 08:00: never a rhythm
        day.snap(base + 30, "", None)
        day.snap(base + 60, "Code", "app.py")  # a lone row before a silence: no credit
        # Mail at 08:30 earns 30 + 29.5 = 59.5 s: just short of a minute.
        day.snap(base + 1800, "Mail", "Inbox")
        day.snap(base + 1830, "Mail", "Inbox")
        day.snap(base + 1859.5, "Code", "app.py")
        # Slack at 09:00 earns 0 + 0.5 + 30 + 29.5 = 60 s exactly: a minute is active.
        day.snap(base + 3600, "Slack", "#eng")  # same instant as the next row: no credit
        slack.append(
            [
                day.snap(base + 3600, "Slack", "#eng"),
                day.snap(base + 3600.5, "Slack", "#eng"),
                day.snap(base + 3630.5, "Slack", "#eng"),
            ]
        )
        day.snap(base + 3660, "Code", "app.py")
    found = detect(_days(day, 3))
    (item,) = _kind(found, "temporal_rhythm")
    assert (item["label"], item["count"]) == ("Slack active 09:00–09:30 on 3 of 3 days", 3)
    assert expand_runs(item["evidence"]["rows"]) == [r for rows in slack for r in rows]
    assert item["evidence"]["frames"] == [f"f-{rows[0] - 1}" for rows in slack]


def test_a_rhythm_in_the_last_slot_of_the_day_ends_at_midnight():
    day = Day()
    for k in range(3):
        day.run(k * D + 56700, k * D + 57000, 30, "Slack", window="#eng")  # 23:45 local
    assert _labels(detect(_days(day, 3)), "temporal_rhythm") == [
        ("Slack active 23:30–00:00 on 3 of 3 days", 3)
    ]


def test_a_day_with_no_credited_time_is_not_observed():
    day = Day()
    for k in (0, 1, 2):
        _slack_at_nine(day, k)
    for k in (3, 4):
        day.run(k * D + 7200, k * D + 7500, 30, "Code", window="app.py")
    day.snap(5 * D + 7200, "Code", "app.py")  # a lone row: no credit, so day 6 is not observed
    assert _labels(detect(_days(day, 6)), "temporal_rhythm") == [
        ("Slack active 09:00–09:30 on 3 of 5 days", 3)
    ]


@pytest.mark.parametrize("min_count", [2.5, "3", None])
def test_a_min_count_that_is_not_an_integer_is_refused(min_count):
    with pytest.raises(ValueError, match="min_count must be an integer of at least 2"):
        detect([], min_count=min_count)


def test_a_day_that_is_not_compiled_is_refused_with_what_to_pass():
    message = "days[0] is a dict, not a compiled day (compiler.document.Compiled)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        detect([{"frames": []}])
