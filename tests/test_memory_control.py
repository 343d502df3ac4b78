"""Intervention control: scope signatures, suppression of repeats and each way to re-enter."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.engine.control import (
    CONFIRMED_AT,
    PHASE_RANK,
    SUSTAINED_AT,
    ControlState,
    Proposed,
    Signature,
    control,
    control_first,
    identity,
    phase_of,
    signature,
)

DAY = date(2026, 3, 2)
SPORTS: dict[str, Any] = {
    "type": "decision_point",
    "value": 1,
    "attributes": {
        "available": True,
        "connected": True,
        "snoozed": False,
        "in_transit": False,
        "recognized_activity": "STILL",
        "location": "home",
    },
}
CODE: dict[str, Any] = {
    "repo": "octo/app",
    "object_kind": "pull_request",
    "number": 7,
    "mode": "comment",
    "recipient": "alice",
    "content": "CI has been red for 2 h",
    "firing_condition": "ci_failed",
}


def propose(
    action: str = "intervene", intent: str = "nudge_walk", regs: tuple[str, ...] = ("r1", "r2")
) -> Proposed:
    return Proposed(action, intent, f"{DAY}:slot-3", regs, "Time for a walk?", ("e1",))  # type: ignore[arg-type]


def sig(**changes: Any) -> Signature:
    attributes = {**SPORTS["attributes"], **changes}
    return signature("sports", {**SPORTS, "attributes": attributes})


def run(*steps: tuple[Proposed, Signature, date]) -> list[tuple[str, bool, str]]:
    state = ControlState()
    out: list[tuple[str, bool, str]] = []
    for proposed, s, day in steps:
        result, state = control(proposed, s, day, state)
        out.append((result.action, result.suppressed, result.reason))
    return out


# Scope signatures


def test_sports_signature_reads_the_six_context_fields_from_payload_attributes() -> None:
    fields = dict(sig().fields)
    assert set(fields) == {
        "available",
        "connected",
        "snoozed",
        "in_transit",
        "recognized_activity",
        "location",
    }
    assert fields["recognized_activity"] == ("str", "still")
    assert fields["snoozed"] == ("bool", False)


def test_sports_signature_reads_a_flat_context_and_missing_fields_as_none() -> None:
    flat = signature("sports", dict(SPORTS["attributes"]))
    assert flat == sig()
    assert dict(signature("sports", {}).fields)["location"] == ("none", None)


def test_sports_signature_compares_canonically() -> None:
    assert sig(location=" Home ") == sig(location="home")
    assert sig(location="work") != sig(location="home")


def test_sports_signature_changes_with_each_field() -> None:
    for field, other in [
        ("available", False),
        ("connected", False),
        ("snoozed", True),
        ("in_transit", True),
        ("recognized_activity", "WALKING"),
        ("location", "work"),
    ]:
        assert sig(**{field: other}) != sig(), field


def test_home_signature_is_activity_family_plus_room_set() -> None:
    a = signature("home", {"activity_family": "cooking", "rooms": ["Kitchen", "Dining"]})
    b = signature("home", {"activity_family": "Cooking", "rooms": ["dining", "kitchen"]})
    assert a == b
    assert signature("home", {"activity_family": "cooking", "rooms": ["Kitchen"]}) != a
    assert signature("home", {"activity_family": "sleeping", "rooms": ["Kitchen", "Dining"]}) != a


def test_home_signature_reads_one_room_from_a_sensor_event() -> None:
    event = {"type": "motion", "value": 1, "attributes": {"room": "Kitchen"}}
    s = signature("home", {**event, "activity_family": "cooking"})
    assert dict(s.fields)["rooms"] == (("str", "kitchen"),)


@pytest.mark.parametrize(
    ("prior_matching", "phase"),
    [(0, "onset"), (1, "confirmed"), (2, "sustained"), (5, "sustained")],
)
def test_home_phase_at_1_2_and_3_or_more_consecutive_matching_observations(
    prior_matching: int, phase: str
) -> None:
    cooking = {"activity_family": "cooking", "room": "Kitchen"}
    history = [{"activity_family": "sleeping", "room": "Bedroom"}] + [cooking] * prior_matching
    assert signature("home", cooking, history).phase == phase


def test_home_phase_counts_only_the_unbroken_run() -> None:
    cooking = {"activity_family": "cooking", "room": "Kitchen"}
    other = {"activity_family": "cooking", "room": "Dining"}
    assert signature("home", cooking, [cooking, cooking, other]).phase == "onset"


def test_phase_order_onset_confirmed_sustained() -> None:
    assert (CONFIRMED_AT, SUSTAINED_AT) == (2, 3)
    assert [phase_of(n) for n in (1, 2, 3, 4)] == ["onset", "confirmed", "sustained", "sustained"]
    assert PHASE_RANK["onset"] < PHASE_RANK["confirmed"] < PHASE_RANK["sustained"]


def test_code_signature_is_the_object_plus_mode_recipient_content_and_firing_condition() -> None:
    base = signature("code", CODE)
    for field, other in [
        ("repo", "octo/lib"),
        ("object_kind", "issue"),
        ("number", 8),
        ("mode", "notification"),
        ("recipient", "bob"),
        ("content", "CI is red again"),
        ("firing_condition", "review_requested"),
    ]:
        assert signature("code", {**CODE, field: other}) != base, field
    assert signature("code", {**CODE, "number": 7.0}) == base


def test_desktop_signature_is_app_and_site_not_the_frame() -> None:
    a = signature("desktop", {"app": "Firefox", "site": "github.com", "frame_id": 1})
    assert a == signature("desktop", {"app": "firefox", "site": "github.com", "frame_id": 2})
    assert a != signature("desktop", {"app": "Firefox", "site": "news.ycombinator.com"})


def test_signature_rejects_an_unknown_scope_by_name() -> None:
    with pytest.raises(ValueError, match="unknown scope 'garden'"):
        signature("garden", {})  # type: ignore[arg-type]


def test_a_malformed_value_repeated_still_compares_equal() -> None:
    assert sig(location=float("nan")) == sig(location=float("nan"))
    assert sig(location=["a"]) != sig(location="a")


# Control


def test_identity_is_episode_intent_and_sorted_regularity_ids_without_duplicates() -> None:
    p = propose(regs=("r2", "r1", "r2"))
    assert identity(p) == (f"{DAY}:slot-3", "nudge_walk", ("r1", "r2"))


def test_the_first_intervention_is_allowed_and_recorded() -> None:
    result, state = control(propose(), sig(), DAY, ControlState())
    assert (result.action, result.suppressed, result.reason) == ("intervene", False, "first")
    assert state.allowed[result.identity].day == DAY


def test_an_exact_repeat_is_suppressed_with_the_identity_that_suppressed_it() -> None:
    first, state = control(propose(), sig(), DAY, ControlState())
    again, after = control(propose(regs=("r2", "r1")), sig(), DAY, state)
    assert (again.action, again.suppressed, again.reason) == ("abstain", True, "repeat")
    assert again.suppressed_by == first.identity
    assert after == state


def test_a_new_local_day_reenters() -> None:
    p = propose()
    assert run((p, sig(), DAY), (p, sig(), DAY + timedelta(days=1)))[1] == (
        "intervene",
        False,
        "new_day",
    )


def test_an_earlier_day_also_reenters() -> None:
    p = propose()
    assert run((p, sig(), DAY), (p, sig(), DAY - timedelta(days=1)))[1][2] == "new_day"


def test_a_changed_signature_reenters_and_its_repeat_is_suppressed() -> None:
    p = propose()
    out = run((p, sig(), DAY), (p, sig(snoozed=True), DAY), (p, sig(snoozed=True), DAY))
    assert [r for _, _, r in out] == ["first", "signature_changed", "repeat"]


def test_returning_to_an_earlier_signature_reenters() -> None:
    p = propose()
    out = run((p, sig(), DAY), (p, sig(location="work"), DAY), (p, sig(), DAY))
    assert [r for _, _, r in out] == ["first", "signature_changed", "signature_changed"]


def test_a_stronger_home_phase_reenters_and_a_weaker_one_is_a_repeat() -> None:
    p = propose(intent="offer_recipe")
    cooking = {"activity_family": "cooking", "room": "Kitchen"}
    onset = signature("home", cooking)
    confirmed = signature("home", cooking, [cooking])
    sustained = signature("home", cooking, [cooking, cooking])
    out = run(
        (p, onset, DAY),
        (p, onset, DAY),
        (p, confirmed, DAY),
        (p, sustained, DAY),
        (p, signature("home", cooking, [cooking] * 5), DAY),
        (p, onset, DAY),
    )
    assert [r for _, _, r in out] == [
        "first",
        "repeat",
        "stronger_phase",
        "stronger_phase",
        "repeat",
        "repeat",
    ]


def test_a_changed_service_intent_is_another_identity_and_reenters() -> None:
    out = run((propose(), sig(), DAY), (propose(intent="remind_hydrate"), sig(), DAY))
    assert out[1] == ("intervene", False, "first")


def test_changed_regularity_evidence_is_another_identity_and_reenters() -> None:
    out = run(
        (propose(regs=("r1",)), sig(), DAY),
        (propose(regs=("r1", "r3")), sig(), DAY),
        (propose(regs=("r3", "r1")), sig(), DAY),
    )
    assert [r for _, _, r in out] == ["first", "first", "repeat"]


def test_cited_event_ids_are_not_regularity_evidence() -> None:
    p = propose()
    later = Proposed(p.action, p.intent, p.episode, p.regularity_ids, p.message, ("e2", "f9"))
    assert run((p, sig(), DAY), (later, sig(), DAY))[1][2] == "repeat"


def test_an_abstention_passes_through_and_leaves_the_state_alone() -> None:
    _, state = control(propose(), sig(), DAY, ControlState())
    result, after = control(propose("abstain"), sig(snoozed=True), DAY, state)
    assert (result.action, result.suppressed, result.reason) == ("abstain", False, "abstained")
    assert result.suppressed_by is None
    assert after is state


def test_an_abstention_never_becomes_an_intervention_even_on_a_new_identity() -> None:
    result, _ = control(propose("abstain", intent="never_seen"), sig(), DAY, ControlState())
    assert result.action == "abstain"


def test_a_suppressed_intervention_does_not_update_the_state() -> None:
    p = propose()
    _, state = control(p, sig(), DAY, ControlState())
    _, same_state = control(p, sig(), DAY, state)
    assert same_state is state


def test_the_state_is_immutable_and_control_returns_a_new_one() -> None:
    empty = ControlState()
    _, state = control(propose(), sig(), DAY, empty)
    assert not empty.allowed
    assert state is not empty
    with pytest.raises(TypeError):
        state.allowed[identity(propose())] = state.allowed[identity(propose())]  # type: ignore[index]


steps = st.tuples(
    st.sampled_from(["intervene", "abstain"]),
    st.sampled_from(["nudge_walk", "remind_hydrate"]),
    st.sampled_from([(), ("r1",), ("r2", "r1")]),
    st.sampled_from(["home", "work", None]),
    st.booleans(),
    st.integers(min_value=0, max_value=2),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(steps, max_size=30))
def test_control_never_adds_an_intervention_and_never_changes_an_abstention(
    sequence: list[tuple[str, str, tuple[str, ...], str | None, bool, int]],
) -> None:
    state = ControlState()
    replayed = ControlState()
    for action, intent, regs, location, snoozed, offset in sequence:
        p = propose(action, intent, regs)
        s = sig(location=location, snoozed=snoozed)
        day = DAY + timedelta(days=offset)
        result, state = control(p, s, day, state)
        if action == "abstain":
            assert (result.action, result.suppressed) == ("abstain", False)
        if result.action == "intervene":
            assert action == "intervene"
        # Deterministic: the same inputs give the same outcome and state.
        again, replayed = control(p, s, day, replayed)
        assert again == result
        assert replayed == state


# What each outcome carries, and the values signatures hold


def test_every_outcome_names_its_identity_and_the_proposal_it_decided() -> None:
    proposed = propose()
    ident = identity(proposed)
    abstained, _ = control(propose(action="abstain"), sig(), DAY, ControlState())
    first, state = control(proposed, sig(), DAY, ControlState())
    repeat, _ = control(proposed, sig(), DAY, state)
    for outcome, wanted in ((abstained, propose(action="abstain")), (first, proposed)):
        assert outcome.proposed == wanted and outcome.suppressed_by is None
    assert (abstained.identity, first.identity, repeat.identity) == (ident, ident, ident)
    assert (repeat.proposed, repeat.suppressed_by) == (proposed, ident)


def test_each_signature_names_its_scope() -> None:
    assert [signature(scope, {}).scope for scope in ("sports", "home", "code", "desktop")] == [
        "sports",
        "home",
        "code",
        "desktop",
    ]


def test_a_home_context_without_rooms_has_no_rooms_and_a_single_room_counts_as_one() -> None:
    assert dict(signature("home", {"activity_family": "cooking"}).fields)["rooms"] == ()
    one = signature("home", {"activity_family": "cooking", "rooms": "Kitchen"})
    assert dict(one.fields)["rooms"] == (("str", "kitchen"),)
    counted = signature("home", {"activity_family": "cooking", "rooms": 3})
    assert dict(counted.fields)["rooms"] == (("num", 3),)


def test_a_room_set_of_values_that_do_not_compare_still_makes_a_signature() -> None:
    # An aware and a naive time never compare (canonical keeps the naive one naive): members
    # are ordered by their repr, so any mix of values sorts.
    rooms = ["2026-03-02T08:00:00+00:00", "2026-03-02T08:00:00"]
    home = signature("home", {"activity_family": "cooking", "rooms": rooms})
    assert [kind for kind, _ in dict(home.fields)["rooms"]] == ["time", "time"]
    assert home == signature("home", {"activity_family": "cooking", "rooms": rooms[::-1]})


def test_a_value_canonical_cannot_compare_is_kept_raw_by_its_repr() -> None:
    raw = dict(sig(location=["a", "b"]).fields)["location"]
    assert raw == ("raw", "['a', 'b']")
    assert dict(sig(location=None).fields)["location"] == ("none", None)


def test_a_missing_home_phase_ranks_below_onset() -> None:
    no_phase = Signature("home", (("activity_family", ("str", "cooking")),))
    onset = Signature("home", no_phase.fields, "onset")
    _, state = control(propose(), no_phase, DAY, ControlState())
    stronger, _ = control(propose(), onset, DAY, state)
    assert stronger.reason == "stronger_phase"
    _, state = control(propose(), onset, DAY, ControlState())
    weaker, _ = control(propose(), no_phase, DAY, state)
    assert weaker.reason == "repeat"


def test_a_repeat_gives_way_to_the_first_alternative_control_allows() -> None:
    walk = propose(intent="nudge_walk")
    stand = propose(intent="stand_break")
    pace = propose(intent="step_goal")
    _, state = control(walk, sig(), DAY, ControlState())
    _, state = control(stand, sig(), DAY, state)
    asked: list[str] = []

    def signature_of(p: Proposed) -> Signature:
        asked.append(p.intent)
        return sig()

    offered = replace(walk, alternatives=(stand, pace))
    controlled, new_state, found = control_first(offered, DAY, signature_of, lambda _: state)
    # The walk and the stand-up break were said today: the pace is, in their place.
    assert (controlled.action, controlled.proposed.intent, controlled.reason) == (
        "intervene",
        "step_goal",
        "first",
    )
    assert found == sig() and asked == ["nudge_walk", "stand_break", "step_goal"]
    assert identity(pace) in new_state.allowed
    # It names what it was said in place of: the walk, suppressed as a repeat of the walk.
    first = controlled.instead_of
    assert first is not None and first.suppressed and first.proposed.intent == "nudge_walk"
    assert first.suppressed_by == identity(walk) and first.instead_of is None


def test_when_every_alternative_is_a_repeat_the_first_is_suppressed_and_unallowed_are_untried() -> (
    None
):
    walk, stand = propose(intent="nudge_walk"), propose(intent="stand_break")
    _, state = control(walk, sig(), DAY, ControlState())
    _, state = control(stand, sig(), DAY, state)
    controlled, same, _ = control_first(
        replace(walk, alternatives=(stand,)), DAY, lambda _: sig(), lambda _: state
    )
    assert controlled.suppressed and controlled.proposed.intent == "nudge_walk"
    assert same is state and controlled.instead_of is None
    # A first proposal control allows is the decision: no alternative is looked at.
    asked: list[str] = []
    fresh = replace(propose(intent="new"), alternatives=(walk,))
    allowed, _, _ = control_first(
        fresh, DAY, lambda p: asked.append(p.intent) or sig(), lambda _: state
    )
    assert allowed.proposed.intent == "new" and asked == ["new"]
    assert allowed.instead_of is None
