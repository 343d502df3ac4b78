"""The per-scope service catalogue (memory/engine/catalogue.py; ProactMem B.3): how each
payload is read, when each service can act, and the episode keys and control contexts it
gives intervention control. Small hand-made events, one reading per test."""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from memory.engine import catalogue
from memory.engine.catalogue import (
    CATALOGUE,
    HOME_PRESENT_QUIET_MIN,
    SITTING_HOUR_STEPS,
    SITTING_MIN,
    Service,
    activity_family,
    attributes,
    ci_moment,
    code_kind,
    code_object,
    control_context,
    desktop_app,
    desktop_point,
    desktop_site,
    episode,
    focus_moment,
    focused_snapshot,
    home_family,
    home_motion_moment,
    home_point,
    home_present,
    home_room,
    intents,
    is_decision_point,
    is_motion,
    is_open,
    is_point,
    is_steps,
    open_issue,
    open_pull_request,
    payload_type,
    point_rooms,
    service,
    services,
    sitting,
    sports_reachable,
    truthy,
    walk_moment,
    walk_or_slot,
)
from memory.engine.control import Proposed
from memory.engine.records import POINT_KIND, EngineEvent, Predicate, Proposal

TZ = ZoneInfo("Europe/Berlin")
DAY = date(2026, 3, 2)
NOW = datetime.combine(DAY, time(10), tzinfo=TZ)
UNKNOWN = "unknown scope 'garden'; use one of sports, home, code, desktop"


def obs(type_: Any, n: int = 1, **attrs: Any) -> EngineEvent:
    payload = {"type": type_, "value": attrs.pop("value", None), "attributes": attrs}
    return EngineEvent(n, NOW, "observation", payload)


def point(type_: str, n: int = 9, **fields: Any) -> EngineEvent:
    return EngineEvent(n, NOW, POINT_KIND, {"type": type_, **fields})


def snap(app: Any = "Code", url: Any = None, focused: Any = True, n: int = 1) -> EngineEvent:
    payload = {"app": app, "window": "w", "url": url, "focused": focused}
    return EngineEvent(n, NOW, "snapshot", payload)


def behaving(*path: str) -> Proposal:
    trigger = Predicate(("decision_point", "available"), True)
    return Proposal(trigger, Predicate(tuple(path), "x"), (time(9), time(10)))


def proposed(intent: str, message: str = "") -> Proposed:
    return Proposed("intervene", intent, "e", message=message)


# -- services -----------------------------------------------------------------------------------


def test_the_catalogue_lists_each_scopes_intents_in_the_order_policies_try_them() -> None:
    assert {scope: [s.intent for s in found] for scope, found in CATALOGUE.items()} == {
        "sports": ["suggest_walk", "step_goal_nudge", "stand_break"],
        "home": ["check_in_routine", "check_device", "wellbeing_check"],
        "code": ["review_nudge", "ci_follow_up", "triage_nudge"],
        "desktop": ["resume_focus", "take_break", "refocus"],
    }
    assert services("code") is CATALOGUE["code"]
    assert intents("home") == frozenset({"check_in_routine", "check_device", "wellbeing_check"})


def test_an_unknown_scope_is_refused_with_the_scopes_to_use() -> None:
    for call in (
        lambda: services("garden"),  # type: ignore[arg-type]
        lambda: intents("garden"),  # type: ignore[arg-type]
        lambda: episode("garden", obs("x"), NOW),  # type: ignore[arg-type]
        lambda: control_context("garden", obs("x"), (), proposed("x")),  # type: ignore[arg-type]
    ):
        with pytest.raises(ValueError) as raised:
            call()
        assert str(raised.value) == UNKNOWN
        assert raised.value.__cause__ is None


def test_service_finds_one_intent_of_the_scope_or_none() -> None:
    found = service("code", "ci_follow_up")
    assert found is not None and found.intent == "ci_follow_up"
    assert found is CATALOGUE["code"][1]
    assert service("code", "suggest_walk") is None
    assert service("sports", "step_goal_nudge") is CATALOGUE["sports"][1]


def test_delivery_modes_comment_on_code_objects_and_notify_otherwise() -> None:
    modes = {s.intent: s.mode for found in CATALOGUE.values() for s in found}
    assert modes.pop("review_nudge") == "comment" and modes.pop("triage_nudge") == "comment"
    assert set(modes.values()) == {"notification"}
    assert Service("x", frozenset(), bool, "m").mode == "notification"


def test_a_service_applies_by_the_first_part_of_the_behavior_path() -> None:
    walk = Service("walk", frozenset({"step_bout"}), bool, "m")
    assert walk.applies(behaving("step_bout", "type"))
    assert walk.applies(behaving("step_bout"))
    assert not walk.applies(behaving("type", "step_bout"))
    assert not walk.applies(behaving("sedentary", "type"))
    assert walk.applies(behaving()) is False  # a pathless behavior serves no segment kind


def test_each_scope_serves_its_own_segment_kinds() -> None:
    applying = {
        scope: {kind: [s.intent for s in found if s.applies(behaving(kind, "t"))] for kind in kinds}
        for scope, found, kinds in (
            ("sports", CATALOGUE["sports"], ("step_bout", "active_hour", "sedentary")),
            ("home", CATALOGUE["home"], ("room_presence", "device_use", "day_start")),
            ("code", CATALOGUE["code"], ("review", "pull_request", "ci_run", "issue", "release")),
            ("desktop", CATALOGUE["desktop"], ("frame", "first_activity", "last_activity")),
        )
    }
    assert applying == {
        "sports": {
            "step_bout": ["suggest_walk", "stand_break"],
            "active_hour": ["suggest_walk", "stand_break"],
            "sedentary": [],
        },
        "home": {
            "room_presence": ["check_in_routine"],
            "device_use": ["check_in_routine"],
            "day_start": [],
        },
        "code": {
            "review": ["review_nudge"],
            "pull_request": ["review_nudge"],
            "ci_run": ["ci_follow_up"],
            "issue": ["triage_nudge"],
            "release": [],
        },
        "desktop": {
            "frame": ["resume_focus"],
            "first_activity": ["resume_focus"],
            "last_activity": ["resume_focus"],
        },
    }


@pytest.mark.parametrize("error", [AttributeError, TypeError, ValueError])
def test_a_reading_that_fails_on_a_malformed_payload_is_no_moment_to_act(
    error: type[Exception],
) -> None:
    def fails(event: EngineEvent) -> bool:
        raise error("malformed")

    assert Service("x", frozenset(), fails, "m").actionable(obs("x")) is False


def test_actionable_is_what_the_reading_says() -> None:
    assert Service("x", frozenset(), lambda e: True, "m").actionable(obs("x")) is True
    assert Service("x", frozenset(), lambda e: False, "m").actionable(obs("x")) is False


# -- payload readings ---------------------------------------------------------------------------


def test_attributes_and_type_are_read_only_when_well_formed() -> None:
    event = obs("motion", room="Kitchen")
    assert dict(attributes(event)) == {"room": "Kitchen"}
    assert payload_type(event) == "motion"
    bad = EngineEvent(1, NOW, "observation", {"type": 3, "attributes": ["room"]})
    assert dict(attributes(bad)) == {} and payload_type(bad) == ""
    assert dict(attributes(snap())) == {} and payload_type(snap()) == ""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        (1, True),
        (1.0, True),
        (0, False),
        (2, False),
        ("true", True),
        ("t", True),
        ("1", True),
        ("yes", True),
        (" Yes ", True),
        ("TRUE", True),
        ("no", False),
        ("", False),
        (None, False),
        ([1], False),
    ],
)
def test_truthy_reads_flags_stored_as_booleans_numbers_or_words(value: Any, expected: bool) -> None:
    assert truthy(value) is expected


def test_decision_points_and_steps_are_observations_of_their_type() -> None:
    assert is_decision_point(obs("decision_point"))
    assert not is_decision_point(obs("steps"))
    as_snapshot = EngineEvent(1, NOW, "snapshot", {"type": "decision_point"})
    assert not is_decision_point(as_snapshot)
    assert is_steps(obs("steps"))
    assert not is_steps(obs("decision_point"))
    assert not is_steps(EngineEvent(1, NOW, "snapshot", {"type": "steps"}))


@pytest.mark.parametrize(
    ("flags", "moment"),
    [
        ({"available": True}, True),
        ({"available": "yes", "in_transit": "no", "snoozed": 0}, True),
        ({"available": False}, False),
        ({}, False),
        ({"available": True, "in_transit": True}, False),
        ({"available": True, "snoozed": True}, False),
    ],
)
def test_walk_moment_follows_heartsteps_availability(flags: dict[str, Any], moment: bool) -> None:
    assert walk_moment(obs("decision_point", **flags)) is moment


def test_walk_moment_is_a_decision_point_only() -> None:
    assert walk_moment(obs("steps", available=True)) is False


def test_motion_is_an_observation_of_a_motion_type_in_any_case() -> None:
    assert is_motion(obs("Motion")) and is_motion(obs("PIR"))
    assert not is_motion(obs("door"))
    assert not is_motion(EngineEvent(1, NOW, "snapshot", {"type": "motion"}))


def test_home_room_is_the_first_room_key_with_text() -> None:
    assert home_room(obs("motion", room=" Kitchen ", place="Flat")) == "Kitchen"
    assert home_room(obs("motion", room="  ", place="Bathroom", sensor="M1")) == "Bathroom"
    assert home_room(obs("motion", room=3, sensor="M1")) == "M1"
    assert home_room(obs("motion", value="ON")) is None


@pytest.mark.parametrize(
    ("attrs", "family"),
    [
        ({"room": "Kitchen"}, "meal"),
        ({"room": "DiningRoom"}, "meal"),
        ({"sensor": "Fridge"}, "meal"),
        ({"sensor": "Cooktop"}, "meal"),
        ({"sensor": "Microwave"}, "meal"),
        ({"sensor": "Toaster"}, "meal"),
        ({"room": "Bathroom"}, "hygiene"),
        ({"sensor": "Toilet"}, "hygiene"),
        ({"sensor": "Shower"}, "hygiene"),
        ({"sensor": "Basin"}, "hygiene"),
        ({"room": "Bedroom"}, "sleep"),
        ({"room": "LivingRoom"}, "leisure"),
        ({"room": "Lounge"}, "leisure"),
        ({"sensor": "Seat"}, "leisure"),
        ({"room": "Office"}, "work"),
        ({"room": "Study"}, "work"),
        ({"room": "Entrance"}, "outing"),
        ({"sensor": "MainDoor"}, "outing"),
        ({"room": "Hallway"}, "outing"),
        ({"room": "Garage", "place": "Kitchen"}, "meal"),  # a room with no family word
        ({"room": 7, "sensor": "Bed"}, "sleep"),  # a room that is no text
        ({"room": "Bedroom", "sensor": "Fridge"}, "sleep"),  # the first key that has a family
        ({"sensor": "M010"}, "presence"),
    ],
)
def test_activity_family_is_read_from_where_the_sensor_fired(
    attrs: dict[str, Any], family: str
) -> None:
    assert activity_family(obs("motion", **attrs)) == family


def test_a_contact_sensor_without_a_family_word_is_an_outing_in_any_case() -> None:
    assert activity_family(obs("Door", sensor="D001")) == "outing"
    assert activity_family(obs("magnetic", sensor="D001")) == "outing"
    assert activity_family(obs("Door", room="Kitchen")) == "meal"
    assert activity_family(obs("temperature", sensor="T1")) == "presence"


# -- code objects -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "attrs", "found"),
    [
        ("PullRequestEvent", {"number": 7}, ("pull_request", 7)),
        ("PullRequestReviewEvent", {"number": 5}, ("pull_request", 5)),
        ("IssuesEvent", {"number": 4}, ("issue", 4)),
        ("IssueCommentEvent", {"number": 4}, ("issue", 4)),
        ("IssueCommentEvent", {"number": 4, "pull_request": True}, ("pull_request", 4)),
        ("IssueCommentEvent", {"number": 4, "pull_request": "yes"}, ("issue", 4)),
        ("PullRequestEvent", {"number": True}, ("pull_request", None)),
        ("PullRequestEvent", {"number": "7"}, ("pull_request", None)),
        ("workflow_run", {"run_id": 99, "number": 3}, ("ci_run", 99)),
        ("workflow_run", {"run_id": True}, ("ci_run", None)),
        ("workflow_run", {"run_id": "99"}, ("ci_run", None)),
        ("ReleaseEvent", {"number": 2}, ("ReleaseEvent", 2)),
        ("PushEvent", {}, ("PushEvent", None)),
        ("ci_run", {"run_id": 99, "number": 3}, ("ci_run", 3)),  # a type no source writes
        (None, {"number": 1}, ("event", 1)),
    ],
)
def test_code_object_names_the_repository_object(
    type_: Any, attrs: dict[str, Any], found: tuple[str, int | None]
) -> None:
    assert code_object(obs(type_, **attrs)) == found
    assert code_kind(obs(type_, **attrs)) == found[0]


@pytest.mark.parametrize(
    ("type_", "attrs", "open_"),
    [
        ("pr_opened", {"number": 3}, True),
        ("IssuesEvent", {"number": 4, "action": "opened", "state": "open"}, True),
        ("pr_opened", {}, False),  # no number
        ("PushEvent", {"number": 3}, False),  # no pull request or issue
        ("workflow_run", {"run_id": 3, "number": 3}, False),
        ("pr_merged", {"number": 3}, False),
        ("pr_closed", {"number": 3}, False),
        ("issue_closed", {"number": 3}, False),
        ("PullRequestEvent", {"number": 3, "action": "closed"}, False),
        ("PullRequestEvent", {"number": 3, "action": "merged"}, False),
        ("IssuesEvent", {"number": 3, "action": "deleted"}, False),
        ("IssuesEvent", {"number": 3, "action": "transferred"}, False),
        ("IssuesEvent", {"number": 3, "state": "Closed"}, False),
        ("PullRequestEvent", {"number": 3, "state": "MERGED"}, False),
        ("PullRequestEvent", {"number": 3, "state": 0}, True),
        ("PullRequestEvent", {"number": 3, "merged": True}, False),
        ("PullRequestEvent", {"number": 3, "merged": "true"}, True),
    ],
)
def test_is_open_until_closed_merged_or_reported_so(
    type_: str, attrs: dict[str, Any], open_: bool
) -> None:
    assert is_open(obs(type_, **attrs)) is open_


def test_an_open_object_must_be_an_observation() -> None:
    stored = obs("pr_opened", number=3)
    assert is_open(EngineEvent(1, NOW, "snapshot", stored.payload)) is False


def test_open_pull_requests_and_issues_are_told_apart() -> None:
    pr, issue = obs("pr_opened", number=3), obs("issue_opened", number=4)
    assert open_pull_request(pr) and not open_pull_request(issue)
    assert open_issue(issue) and not open_issue(pr)
    assert not open_pull_request(obs("pr_closed", number=3))
    assert not open_issue(obs("issue_closed", number=4))


@pytest.mark.parametrize(
    ("type_", "attrs", "moment"),
    [
        ("workflow_run", {"conclusion": "failure"}, True),
        ("CheckRunEvent", {"conclusion": "TIMED_OUT"}, True),
        ("workflow_job", {"conclusion": "startup_failure"}, True),
        ("StatusEvent", {"conclusion": "action_required"}, True),
        ("workflow_run", {"conclusion": "success"}, False),
        ("workflow_run", {"conclusion": None}, False),
        ("PushEvent", {"conclusion": "failure"}, False),  # no CI run
        ("pr_opened", {"number": 3}, True),  # its CI is what follows up
        ("pr_closed", {"number": 3}, False),
        ("issue_opened", {"number": 3}, False),
    ],
)
def test_ci_moment_is_a_failed_run_or_an_open_pull_request(
    type_: str, attrs: dict[str, Any], moment: bool
) -> None:
    assert ci_moment(obs(type_, **attrs)) is moment


# -- desktop ------------------------------------------------------------------------------------


def test_a_focused_snapshot_is_of_an_app_that_is_no_lock_screen() -> None:
    assert focused_snapshot(snap("Code")) is True
    assert focused_snapshot(snap("Code", focused=None)) is True  # not reported unfocused
    assert focused_snapshot(snap("Code", focused=False)) is False
    assert focused_snapshot(snap("loginwindow")) is False
    assert focused_snapshot(snap(" LockApp.exe ")) is False  # normalised before the test
    assert focused_snapshot(snap("   ")) is False
    assert focused_snapshot(snap(None)) is False
    assert focused_snapshot(obs("Code", app="Code")) is False
    as_observation = EngineEvent(1, NOW, "observation", snap("Code").payload)
    assert focused_snapshot(as_observation) is False


def test_desktop_app_and_site_as_the_compiler_names_them() -> None:
    assert desktop_app(snap(" Code ")) == "Code"
    assert desktop_app(snap(None)) == ""
    assert desktop_site(snap(url="https://www.github.com/a/b")) == "github.com"
    assert desktop_site(snap(url=None)) is None
    assert desktop_site(snap(url=3)) is None


# -- decision points ----------------------------------------------------------------------------


def test_is_point_of_a_type_or_of_any() -> None:
    assert is_point(point("home_segment"))
    assert is_point(point("home_segment"), "home_segment")
    assert not is_point(point("home_segment"), "sports_slot")
    assert not is_point(obs("home_segment"))
    assert not is_point(obs("home_segment"), "home_segment")


def test_point_rooms_keeps_numeric_counts_only() -> None:
    rooms = {"Kitchen": 3, "Bath": 2.0, "Hall": True, "Bed": "4", 5: 1}
    assert point_rooms(point("home_segment", rooms=rooms)) == {"Kitchen": 3, "Bath": 2, "5": 1}
    assert point_rooms(point("home_segment", rooms=["Kitchen"])) == {}
    assert point_rooms(point("home_segment")) == {}


@pytest.mark.parametrize(
    ("fields", "present"),
    [
        ({"events": 1}, True),
        ({"events": 0, "quiet_min": HOME_PRESENT_QUIET_MIN + 1}, False),
        ({"events": 0, "quiet_min": HOME_PRESENT_QUIET_MIN}, True),
        ({"quiet_min": 10.5}, True),
        ({"events": 0}, False),
        ({"events": True, "quiet_min": 90}, True),  # a flag count still says events were seen
        ({"events": "3"}, False),
        ({"quiet_min": True}, False),
        ({"quiet_min": "10"}, False),
        ({}, False),
    ],
)
def test_home_present_when_it_had_events_or_was_quiet_briefly(
    fields: dict[str, Any], present: bool
) -> None:
    assert home_present(point("home_segment", **fields)) is present


def test_home_presence_and_home_points_are_home_segments_only() -> None:
    assert HOME_PRESENT_QUIET_MIN == 50
    assert home_present(point("sports_slot", events=3)) is False
    assert home_point(point("home_segment")) and not home_point(point("frame_end"))
    assert home_motion_moment(obs("motion")) is True
    assert home_motion_moment(point("home_segment", events=2)) is True
    assert home_motion_moment(point("home_segment", events=0)) is False
    assert home_motion_moment(obs("door")) is False


@pytest.mark.parametrize(
    ("fields", "reachable"),
    [
        ({"available": True}, True),
        ({"available": True, "worn_last_60": False}, True),
        ({"available": False, "worn_last_60": True}, False),
        ({"available": True, "in_transit": True}, False),
        ({"available": True, "snoozed": "yes"}, False),
        ({"available": None, "worn_last_60": True}, True),  # no availability rule at this point
        ({"available": None, "worn_last_60": False}, False),
        ({"worn_last_60": True}, True),
        ({"worn_last_60": 1}, False),
        ({}, False),
    ],
)
def test_sports_reachable_by_availability_else_a_worn_tracker(
    fields: dict[str, Any], reachable: bool
) -> None:
    assert sports_reachable(point("sports_slot", **fields)) is reachable


def test_sports_reachable_only_at_a_sports_slot() -> None:
    assert sports_reachable(point("home_segment", available=True)) is False
    assert sports_reachable(obs("sports_slot", available=True)) is False


@pytest.mark.parametrize(
    ("fields", "sat"),
    [
        ({"sedentary_min_last_60": SITTING_MIN}, True),
        ({"sedentary_min_last_60": SITTING_MIN - 1}, False),
        ({"sedentary_min_last_60": 55.5, "steps_last_60": 900}, True),
        ({"sedentary_min_last_60": 10, "steps_last_60": 0}, False),  # minutes come first
        ({"sedentary_min_last_60": True, "steps_last_60": 10}, True),  # a flag is no minutes
        ({"steps_last_60": SITTING_HOUR_STEPS - 1}, True),
        ({"steps_last_60": SITTING_HOUR_STEPS}, False),
        ({"steps_last_60": 0.0}, True),
        ({"steps_last_60": False}, False),
        ({"steps_last_60": "10"}, False),
        ({}, False),
    ],
)
def test_sitting_after_an_hour_mostly_sedentary(fields: dict[str, Any], sat: bool) -> None:
    assert sitting(point("sports_slot", available=True, **fields)) is sat


def test_sitting_needs_a_reachable_slot() -> None:
    assert (SITTING_MIN, SITTING_HOUR_STEPS) == (50, 225)
    assert sitting(point("sports_slot", available=False, sedentary_min_last_60=60)) is False


def test_walk_or_slot_at_any_reachable_slot_after_sitting_too() -> None:
    assert walk_or_slot(obs("decision_point", available=True)) is True
    assert walk_or_slot(point("sports_slot", available=True, steps_last_60=900)) is True
    # After an hour of sitting a walk is still a nudge to give (where that hour is usually an
    # active one: the policy's judgement, not the catalogue's).
    assert walk_or_slot(point("sports_slot", available=True, steps_last_60=10)) is True
    assert walk_or_slot(point("sports_slot", available=False, steps_last_60=900)) is False


def test_desktop_points_and_focus_moments() -> None:
    assert desktop_point(point("frame_end")) and not desktop_point(point("home_segment"))
    assert focus_moment(point("frame_end")) is True
    assert focus_moment(snap("Code")) is True
    assert focus_moment(snap("Code", focused=False)) is False


def test_each_service_acts_at_its_own_moments() -> None:
    moments = {
        "sports": point("sports_slot", available=True, sedentary_min_last_60=55),
        "home": point("home_segment", events=0, quiet_min=90),
        "code": obs("issue_opened", number=4),
        "desktop": point("frame_end"),
    }
    acting = {
        scope: [s.intent for s in found if s.actionable(moments[scope])]
        for scope, found in CATALOGUE.items()
    }
    assert acting == {
        "sports": ["suggest_walk", "step_goal_nudge", "stand_break"],
        "home": ["check_device", "wellbeing_check"],
        "code": ["triage_nudge"],
        "desktop": ["resume_focus", "take_break", "refocus"],
    }


# -- episodes -----------------------------------------------------------------------------------


def test_episode_keys_of_each_scope() -> None:
    late = datetime(2026, 3, 2, 23, 30, tzinfo=TZ)  # the local day, not the UTC one
    assert episode("sports", obs("decision_point"), late) == "2026-03-02"
    assert episode("home", obs("motion", room="Bathroom"), late) == "2026-03-02/hygiene"
    home = point("home_segment", rooms={"Bedroom": 2})
    assert episode("home", home, late) == "2026-03-02/sleep"
    assert episode("code", obs("pr_opened", number=7), late) == "pull_request:7"
    assert episode("code", obs("workflow_run", run_id=11), late) == "ci_run:11"
    assert episode("code", obs("PushEvent"), late) == "PushEvent@2026-03-02"
    assert episode("code", obs("pr_opened", number=0), late) == "pull_request:0"
    assert episode("desktop", snap("Mail"), late) == "2026-03-02/Mail"


def test_home_family_of_a_segment_is_its_most_active_room() -> None:
    assert home_family(point("home_segment", rooms={"Bedroom": 1, "Kitchen": 3})) == "meal"
    assert home_family(point("home_segment", rooms={"Kitchen": 2, "Bathroom": 2})) == "hygiene"
    assert home_family(point("home_segment", rooms={"Bathroom": 2, "Kitchen": 2})) == "hygiene"
    assert home_family(point("home_segment", rooms={"Garage": 2})) == "presence"
    assert home_family(point("home_segment", rooms={})) == "presence"
    assert home_family(point("home_segment")) == "presence"
    assert home_family(obs("motion", room="Kitchen")) == "meal"
    assert home_family(obs("door", sensor="D001")) == "outing"


def test_family_words_match_anywhere_in_any_case() -> None:
    family_of = catalogue._family_of
    assert family_of("UPSTAIRS BATHROOM") == "hygiene"
    assert family_of("master_bed") == "sleep"
    assert family_of("Garage") is None
    assert family_of("") is None


# -- control context ----------------------------------------------------------------------------


def test_sports_context_is_the_payload_without_history() -> None:
    current = obs("decision_point", available=True)
    context, history = control_context("sports", current, [obs("steps", n=2)], proposed("x"))
    assert context is current.payload and history == ()


def test_home_context_of_a_sensor_event_and_its_prior_observations() -> None:
    prior = [
        obs("motion", n=1, room="Kitchen"),
        EngineEvent(2, NOW, "snapshot", {"app": "Code"}),
        obs("temperature", n=3, sensor="T1"),
        obs("door", n=4, sensor="D001"),
    ]
    current = obs("motion", n=5, room="Bedroom")
    context, history = control_context("home", current, [*prior, current], proposed("x"))
    assert dict(context) == {"activity_family": "sleep", "rooms": ["Bedroom"]}
    assert [dict(h) for h in history] == [
        {"activity_family": "meal", "rooms": ["Kitchen"]},
        {"activity_family": "presence", "rooms": ["T1"]},
        {"activity_family": "outing", "rooms": ["D001"]},
    ]


def test_home_context_of_a_segment_lists_its_rooms_in_name_order() -> None:
    current = point("home_segment", rooms={"Kitchen": 3, "Bathroom": 1})
    context, history = control_context("home", current, [], proposed("x"))
    assert dict(context) == {"activity_family": "meal", "rooms": ["Bathroom", "Kitchen"]}
    assert history == ()
    no_room = obs("motion", n=2, value="ON")
    assert dict(control_context("home", no_room, [], proposed("x"))[0]) == {
        "activity_family": "presence",
        "rooms": [],
    }


def test_code_context_names_the_object_the_delivery_and_what_fired_it() -> None:
    current = obs("IssuesEvent", action="opened", number=4, actor="bo", repo="a/b")
    context, history = control_context(
        "code", current, [obs("PushEvent", n=2)], proposed("triage_nudge", "triage it")
    )
    assert dict(context) == {
        "repo": "a/b",
        "object_kind": "issue",
        "number": 4,
        "mode": "comment",
        "recipient": "bo",
        "content": "triage it",
        "firing_condition": "IssuesEvent:opened",
    }
    assert history == ()


def test_code_context_without_an_action_author_or_catalogued_intent() -> None:
    current = obs("workflow_run", run_id=8, author=5, actor=None)
    context, _ = control_context("code", current, [], proposed("suggest_walk"))
    assert dict(context) == {
        "repo": None,
        "object_kind": "ci_run",
        "number": 8,
        "mode": None,
        "recipient": None,
        "content": "",
        "firing_condition": "workflow_run",
    }
    by_ci = control_context("code", current, [], proposed("ci_follow_up"))[0]
    assert by_ci["mode"] == "notification"
    authored = obs("pr_opened", number=1, author="ana", actor="bo", action=3)
    found = control_context("code", authored, [], proposed("review_nudge"))[0]
    assert (found["recipient"], found["firing_condition"]) == ("ana", "pr_opened")


def test_desktop_context_of_a_snapshot_and_of_a_frame_boundary() -> None:
    found = control_context(
        "desktop", snap(" Code ", "https://docs.python.org/3/"), [], proposed("x")
    )
    assert found == ({"app": "Code", "site": "docs.python.org"}, ())
    boundary = point("frame_end", app=" Mail ", site="example.org", url="https://other.net/")
    assert control_context("desktop", boundary, [], proposed("x")) == (
        {"app": "Mail", "site": "example.org"},
        (),
    )
    unsited = point("frame_end", app="Mail", site=3)
    assert control_context("desktop", unsited, [], proposed("x"))[0] == {
        "app": "Mail",
        "site": None,
    }
