"""The QA questions (Activity Frames §6.2): the fixed day rule, eight questions in five
categories, the same questions from the same figures every time."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from aframes_web.qa.oracle import DayFigures
from benchmark.qa.questions import (
    ABSENT_APPS,
    ABSENT_DOMAINS,
    CATEGORIES,
    MIN_ROWS,
    QUESTIONS_PER_DAY,
    NoDays,
    day_questions,
    qualifies,
    select_days,
)

ZONE = ZoneInfo("Europe/Berlin")


def figures(day: date = date(2026, 3, 2), **changes: object) -> DayFigures:
    base = DayFigures(
        day=day,
        timezone="Europe/Berlin",
        rows=500,
        active_s=9000.0,
        app_seconds=(("Code", 5400.0), ("Firefox", 2400.0), ("Slack", 1200.0)),
        apps=("Code", "Firefox", "Slack"),
        domains=("github.com", "mail.google.com"),
        first_activity=datetime.combine(day, datetime.min.time(), ZONE) + timedelta(hours=8.5),
        last_activity=datetime.combine(day, datetime.min.time(), ZONE) + timedelta(hours=17),
        apps_ever=frozenset({"Code", "Firefox", "Slack"}),
        domains_ever=frozenset({"github.com", "mail.google.com"}),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_day_gets_eight_questions_in_the_five_categories_with_the_oracles_answers() -> None:
    asked = day_questions(figures())
    assert len(asked) == QUESTIONS_PER_DAY
    assert [q.kind for q in asked] == [
        "dominant_app",
        "dominant_minutes",
        "app_count",
        "pairwise",
        "visited_domain",
        "absent_domain",
        "first_activity",
        "absent_app",
    ]
    assert Counter(q.category for q in asked) == {
        "rank": 2,
        "time": 2,
        "count": 1,
        "fact": 1,
        "hallucination": 2,
    }
    assert set(CATEGORIES) == {q.category for q in asked}
    by = {q.kind: q for q in asked}
    assert by["dominant_app"].expected == "Code"
    assert by["dominant_minutes"].expected == 90.0
    assert "Code" in by["dominant_minutes"].text
    assert by["app_count"].expected == 3
    # The 2nd and 3rd ranked apps, named in alphabetical order.
    assert by["pairwise"].expected == "Firefox" and by["pairwise"].other == "Slack"
    assert "Firefox or Slack" in by["pairwise"].text
    assert by["visited_domain"].expected is True
    assert any(d in by["visited_domain"].text for d in ("github.com", "mail.google.com"))
    assert by["absent_domain"].expected is False
    assert by["first_activity"].expected == "08:30"
    assert by["absent_app"].expected is False
    assert all(q.id == f"2026-03-02/{q.kind}" for q in asked)


def test_the_same_figures_give_the_same_questions() -> None:
    assert day_questions(figures()) == day_questions(figures())
    assert [q.as_dict() for q in day_questions(figures())] == [
        q.as_dict() for q in day_questions(figures())
    ]


def test_absent_apps_and_domains_rotate_by_date_and_are_never_ones_the_entity_used() -> None:
    monday, tuesday = figures(date(2026, 3, 2)), figures(date(2026, 3, 3))
    app = {d.day: day_questions(d)[7].text for d in (monday, tuesday)}
    assert app[monday.day] != app[tuesday.day]
    start = monday.day.toordinal() % len(ABSENT_APPS)
    seen = ABSENT_APPS[start]
    # The entity has used the first candidate (inside a longer name): the next one is asked.
    used = figures(apps_ever=frozenset({"Code", f"{seen} 2025"}))
    assert seen not in day_questions(used)[7].text
    assert ABSENT_APPS[(start + 1) % len(ABSENT_APPS)] in day_questions(used)[7].text
    start = monday.day.toordinal() % len(ABSENT_DOMAINS)
    visited = figures(domains_ever=frozenset({ABSENT_DOMAINS[start]}))
    assert ABSENT_DOMAINS[start] not in day_questions(visited)[5].text


def test_pairwise_falls_back_to_the_top_two_when_the_next_two_tie() -> None:
    tied = figures(app_seconds=(("Code", 5000.0), ("Firefox", 1000.0), ("Slack", 1000.0)))
    pair = day_questions(tied)[3]
    assert (pair.expected, pair.other) == ("Code", "Firefox")
    two = figures(app_seconds=(("Code", 5000.0), ("Firefox", 1000.0)), apps=("Code", "Firefox"))
    assert (day_questions(two)[3].expected, day_questions(two)[3].other) == ("Code", "Firefox")
    level = figures(app_seconds=(("Code", 100.0), ("Firefox", 100.0)), apps=("Code", "Firefox"))
    with pytest.raises(ValueError, match="does not qualify"):
        day_questions(level)


@pytest.mark.parametrize(
    "changes",
    [
        {"rows": MIN_ROWS - 1},
        {"app_seconds": (("Code", 100.0), ("Slack", 0.0))},
        {"app_seconds": (("Code", 600.0), ("Slack", 600.0), ("Firefox", 60.0))},  # no dominant
        {"domains": ()},
        {"apps_ever": frozenset(ABSENT_APPS)},
        {"domains_ever": frozenset(ABSENT_DOMAINS)},
    ],
)
def test_a_day_that_cannot_carry_every_question_does_not_qualify(changes: dict) -> None:
    day = figures(**changes)
    assert not qualifies(day)
    with pytest.raises(ValueError, match="does not qualify"):
        day_questions(day)


def test_days_are_all_taken_up_to_n_else_evenly_spaced_first_and_last_included() -> None:
    days = [figures(date(2026, 3, 1) + timedelta(days=i)) for i in range(10)]
    shuffled = days[5:] + days[:5]
    assert select_days(shuffled, 12) == days
    picked = select_days(shuffled, 4)
    assert [d.day.day for d in picked] == [1, 4, 7, 10]  # round(i * 9 / 3)
    assert select_days(days, 1) == [days[-1]]
    assert select_days(days, 4) == picked


def test_days_that_do_not_qualify_are_skipped_and_none_left_is_an_error() -> None:
    days = [figures(date(2026, 3, 2)), figures(date(2026, 3, 3), rows=3)]
    assert select_days(days, 5) == [days[0]]
    with pytest.raises(NoDays, match="no day has at least"):
        select_days([days[1]], 5)
    with pytest.raises(ValueError, match="at least 1"):
        select_days(days, 0)


def test_a_capture_without_browser_history_is_asked_everything_but_the_domain_questions() -> None:
    from benchmark.qa.questions import NO_BROWSER, skipped_questions

    windows_only = figures(domains=(), domains_ever=frozenset())
    assert qualifies(windows_only)
    asked = day_questions(windows_only)
    assert [q.kind for q in asked] == [
        "dominant_app", "dominant_minutes", "app_count", "pairwise", "first_activity",
        "absent_app",
    ]  # fmt: skip
    assert skipped_questions(windows_only) == [
        ("visited_domain", NO_BROWSER),
        ("absent_domain", NO_BROWSER),
    ]
    # A capture with browser history still needs a visited domain on the day.
    assert not qualifies(figures(domains=()))
    assert skipped_questions(figures()) == []
