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
        ("room_presence/room", "Kitchen", "activity in the kitchen"),
        ("room_presence/place", "Bathroom", "activity in the bathroom"),
        ("room_presence/sensor", "Sofa", "activity at the Sofa"),
        ("room_presence/type", "motion", "movement"),
        ("device_use/sensor", "Fridge", "the Fridge in use"),
        ("device_use/room", "hall", "something switched on or opened in the hall"),
        ("device_use/type", "door", "a door opened"),
        ("day_start/place", "Bedroom", "getting up (first activity in the bedroom)"),
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
        # Home: a device's kind is looked up case-insensitively, anything unknown is movement.
        ("room_presence/type", "Door", "a door opened"),
        ("room_presence/type", "thermostat", "movement"),
        ("device_use/place", "Living", "something switched on or opened in the living room"),
        ("device_use/type", "ELECTRIC", "an appliance switched on"),
        ("device_use/type", "Thermo", "the Thermo sensor on"),
        ("day_start/room", "LivingRoom", "getting up (first activity in the living room)"),
        ("day_start/sensor", "M001", "getting up (first activity in the M001)"),
        ("day_start/steps", 12, "the first steps of the day"),
        # Decision points: booleans say while / while not, other fields are said with a value.
        ("decision_point/available", True, "a decision point while available"),
        ("decision_point/phone_connected", False, "a decision point while not phone connected"),
        ("decision_point/temp_c", 12, "a decision point with temp c 12"),
        ("decision_point/at_home", "maybe", "a decision point with at home maybe"),
        # Code: every field the extractors cite.
        ("pull_request/action", "opened", "a pull request opened"),
        ("issue/action", "pinned_now", "an issue pinned now"),
        ("issue/action", 3, "an issue with action 3"),
        ("issue/event", "closed", "an issue closed"),
        ("issue/event", "was_moved", "an issue was moved"),
        ("issue/event", 7, "an issue with event 7"),
        ("ci_run/conclusion", "success", "a CI run that passed"),
        ("ci_run/conclusion", "cancelled", "a CI run that was cancelled"),
        ("ci_run/conclusion", "timed_out", "a CI run that timed out"),
        ("ci_run/conclusion", "neutral_ish", "a CI run that neutral ish"),
        ("ci_run/conclusion", 0, "a CI run with conclusion 0"),
        ("pull_request/merged", False, "a pull request closed unmerged"),
        ("pull_request/merged", "true", "a pull request closed unmerged"),
        ("issue/state", "OPEN", "an issue open"),
        ("issue/state", 5, "an issue with state 5"),
        ("ci_run/name", "tests", "a CI run of tests"),
        ("release/type", "ReleaseEvent", "a release published"),
        ("release/type", 2, "a release with type 2"),
        ("release/tag_name", "v1", "a release with tag name v1"),
        ("pull_request/draft", True, "a pull request with draft yes"),
        ("pull_request/draft", False, "a pull request with draft no"),
        # Desktop frames and day edges.
        ("frame/site", "github.com", "github.com open"),
        ("frame/page/kind", "pull request", "a pull request page"),
        ("frame/page/title", "Fix the importer", "the page Fix the importer"),
        ("frame/page", "Inbox", "the page Inbox"),
        ("frame/monitor_name", "left", "frame monitor name left"),
        ("last_activity/app", "Slack", "ending the day in Slack"),
        ("first_activity/site", "mail.example", "first activity site mail.example"),
        # Anything else is said from its parts.
        ("weather/wind_speed", 3.5, "weather wind speed 3.5"),
        ("weather/raining", True, "weather raining yes"),
        ("weather/raining", False, "weather raining no"),
        ("decision_point", True, "decision point yes"),  # no field: said from its parts
        ("room_presence", "Kitchen", "room presence Kitchen"),
        ("issue/action", "created", "an issue commented on"),
        ("issue/event", "submitted", "an issue reviewed"),
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
        "After getting up (first activity in the bedroom), activity in the kitchen between "
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
        "activity in the kitchen",
        "getting up (first activity in the bedroom)",
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
        (["none", None], "none"),
        (["time", "08:00"], "08:00"),
        (["raw", "x"], "x"),
        (("str", "hall"), "hall"),
        (["bool", False], "no"),
        (["str", "a", "b"], "str, a, b"),  # three items: a list, not a key
        (["kitchen", "hall"], "kitchen, hall"),  # two items but no tag: a list
        ([], "none"),
        ({"set": "x"}, "{'set': 'x'}"),  # not a stored set
        ({"set": [], "extra": 1}, "{'set': [], 'extra': 1}"),
        (True, "yes"),
        (0, "0"),
    ],
)
def test_stored_values_are_said_plainly(stored: object, said: str) -> None:
    assert words.said(stored) == said


def test_plain_unwraps_each_canonical_tag_and_leaves_the_rest() -> None:
    assert words.plain(["num", 2]) == 2
    assert words.plain(["none", None]) is None
    assert words.plain({"set": [["str", "a"], ["num", 1]]}) == ["a", 1]
    assert words.plain(["other", 1]) == ["other", 1]
    assert words.values([["str", "a"], True, ["num", 1]]) == "a, yes, 1"


def test_a_deviation_without_an_intro_or_weekdays_starts_with_usually() -> None:
    proposal = Proposal(
        pred("frame/app", "Mail"), pred("frame/app", "Code"), (time(9), time(10)), None
    )
    said = words.deviation(proposal, "pending", NOW, 2, 1)
    assert said == (
        "Usually working in Code by 10:00 after working in Mail (2 of the last 3 times); "
        "not yet at 08:55."
    )
    weekly = Proposal(proposal.trigger, proposal.behavior, (time(9), time(10)), frozenset({0}))
    assert words.deviation(weekly, "deviated", NOW, 1, 0, intro="Hi.") == (
        "Hi. Usually working in Code by 10:00 on Mon after working in Mail "
        "(1 of the last 1 time); none yet today at 08:55."
    )
    assert words.deviation(proposal, "deviated", NOW, 2, 2).endswith(
        "(2 of the last 4 times); none yet today at 08:55."
    )
    assert words.plural(2, "day") == "2 days"
    assert words.plural(2, "match", "matches") == "2 matches"
    assert words.clock(time(7, 5)) == "07:05"
