"""The QA grader at its edges (Activity Frames §6.2): 30 % on minutes, 45 min on clock times,
±2 on app counts, app names by substring; the strict sweep at 10 % and 15 min."""

from __future__ import annotations

import pytest

from benchmark.qa.grading import (
    PAPER,
    STRICT,
    clock_minutes,
    first_number,
    grade,
    names,
    yes_no,
)
from benchmark.qa.questions import Question


def q(kind: str, expected: object, other: str | None = None) -> Question:
    return Question(f"d/{kind}", "2026-03-02", kind, "x", "?", expected, other)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reply", "paper", "strict"),
    [
        ("100", True, True),
        ("130 minutes", True, False),  # exactly 30 % over
        ("70", True, False),  # exactly 30 % under
        ("130.01", False, False),
        ("69.9", False, False),
        ("110", True, True),  # exactly 10 % over
        ("110.5", True, False),
        ("90,0 min", True, True),  # a decimal comma
        ("about an hour", False, False),
    ],
)
def test_minutes_are_within_30_percent_and_10_percent_strict(
    reply: str, paper: bool, strict: bool
) -> None:
    assert grade(q("dominant_minutes", 100.0), reply, PAPER) is paper
    assert grade(q("dominant_minutes", 100.0), reply, STRICT) is strict


def test_an_awkward_float_at_exactly_30_percent_still_passes() -> None:
    assert grade(q("dominant_minutes", 203.58), str(203.58 * 1.3), PAPER)
    assert grade(q("dominant_minutes", 203.58), str(203.58 * 0.7), PAPER)


@pytest.mark.parametrize(
    ("reply", "paper", "strict"),
    [
        ("08:30", True, True),
        ("09:15", True, False),  # exactly 45 min late
        ("07:45", True, False),  # exactly 45 min early
        ("09:16", False, False),
        ("08:45", True, True),  # exactly 15 min
        ("08:46", True, False),
        ("8.30 am", True, True),
        ("8:30 p.m.", False, False),
        ("12:10 am", False, False),  # 00:10
        ("The first activity was at 8h40.", True, True),
        ("25:00", False, False),
        ("early morning", False, False),
    ],
)
def test_clock_times_are_within_45_minutes_and_15_strict(
    reply: str, paper: bool, strict: bool
) -> None:
    assert grade(q("first_activity", "08:30"), reply, PAPER) is paper
    assert grade(q("first_activity", "08:30"), reply, STRICT) is strict


@pytest.mark.parametrize(
    ("reply", "right"),
    [("8", True), ("10 apps", True), ("6", True), ("11", False), ("5", False), ("many", False)],
)
def test_app_counts_are_within_two_in_both_sweeps(reply: str, right: bool) -> None:
    assert grade(q("app_count", 8), reply, PAPER) is right
    assert grade(q("app_count", 8), reply, STRICT) is right


@pytest.mark.parametrize(
    ("reply", "right"),
    [
        ("Google Chrome", True),
        ("google chrome.", True),
        ("The user mostly used Google Chrome", True),
        ("Chrome", True),  # the reply inside the name
        ("ch", False),  # too short to name anything
        ("Firefox", False),
        ("", False),
    ],
)
def test_app_names_match_by_case_insensitive_substring(reply: str, right: bool) -> None:
    assert grade(q("dominant_app", "Google Chrome"), reply) is right
    assert names(reply, "Google Chrome") is right


@pytest.mark.parametrize(
    ("reply", "right"),
    [
        ("Code", True),
        ("Slack", False),
        ("Code had more time than Slack", True),
        ("Slack had less time than Code", False),  # naming the wrong one first
        ("neither", False),
    ],
)
def test_pairwise_needs_the_right_app_first_or_alone(reply: str, right: bool) -> None:
    assert grade(q("pairwise", "Code", other="Slack"), reply) is right


@pytest.mark.parametrize(
    ("kind", "expected", "reply", "right"),
    [
        ("visited_domain", True, "Yes.", True),
        ("visited_domain", True, "yes, at 10:00", True),
        ("visited_domain", True, "No", False),
        ("absent_domain", False, "No, never.", True),
        ("absent_domain", False, "Yes", False),
        ("absent_app", False, "no", True),
        ("absent_app", False, "I cannot tell", False),
        ("absent_app", False, "Not that I can see", True),
        ("visited_domain", True, "The user visited the website github.com.", True),
        ("absent_domain", False, "The user visited the website twitch.tv", False),
        ("absent_domain", False, "The user did not visit twitch.tv", True),
        ("absent_app", False, "The user used the application Minecraft.", False),
        ("absent_app", False, "The user didn't use Minecraft", True),
        ("absent_app", False, "Minecraft appears nowhere", False),
        # Declining is no answer: "no" on an absent probe must be said, not implied.
        ("absent_app", False, "I don't know.", False),
        ("absent_domain", False, "It cannot be determined from the record.", False),
        ("absent_domain", False, "No information about twitch.tv is given.", False),
        ("absent_app", False, "Not sure.", False),
        ("visited_domain", True, "I do not know whether the user visited it", False),
        # Restating the question is not a yes.
        ("visited_domain", True, "Did the user visit github.com?", False),
    ],
)
def test_yes_no_is_the_first_word_else_a_negation_or_a_stated_visit(
    kind: str, expected: bool, reply: str, right: bool
) -> None:
    assert grade(q(kind, expected), reply) is right


def test_the_readers_of_replies() -> None:
    assert first_number("about 12.5 minutes") == 12.5
    assert first_number("none") is None
    assert first_number("1,234 minutes") == 1234.0  # a thousands comma
    assert first_number("1,234,567") == 1234567.0
    assert first_number("1,234.5 s") == 1234.5
    assert first_number("about 1,5 hours") == 1.5  # a decimal comma
    assert first_number("12,30") == 12.3
    assert first_number("1,2345") == 1.2345  # not a group of three
    assert clock_minutes("12:00 pm") == 720
    assert clock_minutes("at 7:05") == 425
    assert clock_minutes("no time") is None
    assert yes_no("...") is None


def test_an_unknown_question_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="no grading rule"):
        grade(q("weather", "sunny"), "sunny")
