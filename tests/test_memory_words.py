"""Memory in words: each extractor kind's phrase, a regularity's sentence, and the message of
every catalogue service that a regularity can lead to, with its evidence and no encodings."""

from __future__ import annotations

import re
from datetime import datetime, time
from typing import cast
from zoneinfo import ZoneInfo

import pytest

from memory.engine import words
from memory.engine.catalogue import CATALOGUE, Service, service
from memory.engine.control import Scope
from memory.engine.records import Predicate, Proposal

TZ = ZoneInfo("Europe/Madrid")
NOW = datetime(2026, 3, 3, 8, 55, tzinfo=TZ)
WEEKDAYS = frozenset(range(5))


def pred(path: str, value: object) -> Predicate:
    return Predicate(tuple(path.split("/")), value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        ("room_presence/room", "Kitchen", "activity in the Kitchen"),
        ("room_presence/place", "Bathroom", "activity in the Bathroom"),
        ("room_presence/sensor", "Sofa", "activity at the Sofa"),
        ("room_presence/type", "motion", "movement"),
        ("device_use/sensor", "Fridge", "the Fridge in use"),
        ("device_use/room", "hall", "a door or appliance used in the hall"),
        ("device_use/type", "door", "a door opened"),
        ("day_start/place", "Bedroom", "getting up (first activity in the Bedroom)"),
        ("step_bout/type", "steps", "a walk"),
        ("active_hour/type", "steps", "an active hour"),
        ("sedentary/type", "sedentary", "a sedentary stretch"),
        ("pull_request/action", "review_requested", "a pull request with a review requested"),
        ("pull_request/type", "pr_merged", "a pull request merged"),
        ("pull_request/merged", True, "a pull request merged"),
        ("issue/type", "issue_comment", "a comment on an issue"),
        ("issue/type", "issue_opened", "an issue opened"),
        ("issue/action", "labeled", "an issue labelled"),
        ("review/type", "PullRequestReviewEvent", "a review submitted"),
        ("ci_run/conclusion", "failure", "a CI run that failed"),
        ("ci_run/type", "workflow_job", "a CI job"),
        ("issue/type", "some_new_type", "an issue (some new type)"),
        ("frame/app", "Code", "working in Code"),
        ("first_activity/app", "Mail", "starting the day in Mail"),
        ("decision_point/type", "slot", "a decision point"),
        ("decision_point/location", "work", "a decision point at work"),
        ("decision_point/in_transit", True, "a decision point while in transit"),
        ("decision_point/snoozed", False, "a decision point while not snoozed"),
        ("decision_point/recognized_activity", "walking", "a decision point while walking"),
        ("weather/sky", "clear", "weather sky clear"),
    ],
)
def test_each_kind_of_fact_has_a_phrase(path: str, value: object, said: str) -> None:
    assert words.phrase(pred(path, value)) == said


def test_a_regularity_is_one_sentence_with_its_window_and_days() -> None:
    morning = Proposal(
        pred("day_start/place", "Bedroom"),
        pred("room_presence/place", "Kitchen"),
        (time(7), time(9)),
        WEEKDAYS,
    )
    assert words.regularity(morning) == (
        "After getting up (first activity in the Bedroom), activity in the Kitchen between "
        "07:00 and 09:00, on weekdays."
    )
    late = Proposal(
        pred("frame/app", "Code"), pred("frame/app", "Mail"), (time(22), time.max), None
    )
    assert words.regularity(late).endswith("between 22:00 and midnight, every day.")


@pytest.mark.parametrize(
    ("weekdays", "said"),
    [
        (None, "every day"),
        (frozenset(range(5)), "on weekdays"),
        (frozenset({5, 6}), "at weekends"),
        (frozenset({2, 0}), "on Mon, Wed"),
    ],
)
def test_days_in_words(weekdays: frozenset[int] | None, said: str) -> None:
    assert words.days(weekdays) == said


# One realistic regularity per catalogue service a regularity can lead to, with the phrase of
# its behavior and trigger as a person reads them.
SERVICE_CASES = {
    ("sports", "suggest_walk"): (
        pred("day_start/type", "steps"),
        pred("step_bout/type", "steps"),
        "a walk",
        "the first steps of the day",
    ),
    ("sports", "stand_break"): (
        pred("sedentary/type", "sedentary"),
        pred("active_hour/type", "steps"),
        "an active hour",
        "a sedentary stretch",
    ),
    ("home", "check_in_routine"): (
        pred("day_start/place", "Bedroom"),
        pred("room_presence/place", "Kitchen"),
        "activity in the Kitchen",
        "getting up (first activity in the Bedroom)",
    ),
    ("code", "review_nudge"): (
        pred("pull_request/action", "opened"),
        pred("review/type", "PullRequestReviewEvent"),
        "a review submitted",
        "a pull request opened",
    ),
    ("code", "ci_follow_up"): (
        pred("pull_request/action", "synchronize"),
        pred("ci_run/conclusion", "success"),
        "a CI run that passed",
        "a pull request updated with new commits",
    ),
    ("code", "triage_nudge"): (
        pred("issue/action", "opened"),
        pred("issue/action", "labeled"),
        "an issue labelled",
        "an issue opened",
    ),
    ("desktop", "resume_focus"): (
        pred("first_activity/app", "Mail"),
        pred("frame/app", "Code"),
        "working in Code",
        "starting the day in Mail",
    ),
}


def test_every_service_a_regularity_can_lead_to_has_a_case() -> None:
    leading = {(scope, s.intent) for scope, found in CATALOGUE.items() for s in found}
    leading = {(scope, i) for scope, i in leading if _service(scope, i).behavior_kinds}
    assert leading == set(SERVICE_CASES)


def _service(scope: str, intent: str) -> Service:
    found = service(cast(Scope, scope), intent)
    assert found is not None
    return found


@pytest.mark.parametrize(("scope", "intent"), sorted(SERVICE_CASES))
def test_each_service_says_the_routine_and_today_in_words(scope: str, intent: str) -> None:
    trigger, behavior, behavior_said, trigger_said = SERVICE_CASES[(scope, intent)]
    service = _service(scope, intent)
    proposal = Proposal(trigger, behavior, (time(7), time(9)), WEEKDAYS)
    assert service.applies(proposal)
    message = words.deviation(proposal, "deviated", NOW, 9, 2, intro=service.message)
    assert message == (
        f"{service.message} Usually {behavior_said} by 09:00 on weekdays after {trigger_said} "
        "(9 of the last 11 times); none yet today at 08:55."
    )
    # No internal encoding reaches a person: no paths, canonical keys, ids or brackets.
    assert not re.search(r"[\[\]{}=/]|\"str\"|reg:|fact:", message)
    pending = words.deviation(proposal, "pending", NOW, 9, 2, intro=service.message)
    assert pending.endswith("(9 of the last 11 times); not yet at 08:55.")


def test_support_counts_are_left_out_when_there_are_none() -> None:
    proposal = Proposal(
        pred("frame/app", "Mail"), pred("frame/app", "Code"), (time(9), time(10)), None
    )
    assert words.deviation(proposal, "deviated", NOW, 0, 0) == (
        "Usually working in Code by 10:00 after working in Mail; none yet today at 08:55."
    )
    assert words.support(1, 0) == "1 of the last 1 time"


@pytest.mark.parametrize(
    ("stored", "said"),
    [
        (["str", "meal"], "meal"),
        ({"set": [["str", "hall"], ["str", "kitchen"]]}, "hall, kitchen"),
        ({"set": []}, "none"),
        (["bool", True], "yes"),
        (["num", 2.5], "2.5"),
        (None, "none"),
        ("Kitchen", "Kitchen"),
    ],
)
def test_stored_values_are_said_plainly(stored: object, said: str) -> None:
    assert words.said(stored) == said
