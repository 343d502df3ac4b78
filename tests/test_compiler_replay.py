"""The replay rungs of a routine (Activity Frames §7.1): guarded plan, minimal script, guard
coverage, the destructive-verb check, and deterministic JSON."""

from __future__ import annotations

import json

import pytest

from compiler.replay import DESTRUCTIVE_VERBS, is_destructive, plan, script
from compiler.routines import Occurrence, Routine, Step, routine_id

ONCE = (Occurrence("2026-03-02", 1.0, 9.0, ("f-1",), (1, 2, 3)),) * 3


def _routine(*steps: Step, granularity: str = "action") -> Routine:
    return Routine(routine_id(granularity, steps), granularity, steps, ONCE)


MAIL = _routine(
    Step("click", "Compose", "AXButton", "Firefox", "mail.example/u/*/*"),
    Step("type", "To", "AXTextField", "Firefox", "mail.example/u/*/*"),
    Step("type", "To", "AXTextField", "Firefox", None),
    Step("click", "Send\nnow", None, "Firefox", None),
)


def test_the_plan_has_a_guard_per_step_and_a_slot_per_typed_value():
    p = plan(MAIL)
    assert p["routine"] == MAIL.id
    assert p["granularity"] == "action"
    assert p["steps"][0] == {
        "op": "click",
        "target": "Compose",
        "role": "AXButton",
        "guard": {
            "expect_app": "Firefox",
            "expect_element": "Compose",
            "expect_role": "AXButton",
            "expect_url_template": "mail.example/u/*/*",
        },
    }
    assert [s.get("slot") for s in p["steps"]] == [None, "to", "to_2", None]
    assert p["slots"] == [{"name": "to", "field": "To"}, {"name": "to_2", "field": "To"}]
    # A name without a role is no element guard; a page seen on every occurrence is a URL guard.
    assert p["steps"][3]["guard"] == {
        "expect_app": "Firefox",
        "expect_element": None,
        "expect_role": None,
        "expect_url_template": None,
    }
    assert p["steps"][3]["target"] == "Send now"
    assert p["guard_coverage"] == 0.75


def test_slot_names_never_collide_with_a_field_named_like_a_numbered_slot():
    form = _routine(
        Step("type", "Amount", "AXTextField", "Firefox", None),
        Step("type", "Amount", "AXTextField", "Firefox", None),
        Step("type", "Amount 2", "AXTextField", "Firefox", None),
        Step("type", "amount_2", "AXTextField", "Firefox", None),
    )
    names = [s["slot"] for s in plan(form)["steps"]]
    assert names == ["amount", "amount_2", "amount_2_2", "amount_2_3"]
    assert len(set(names)) == len(names)


def test_navigate_steps_are_guarded_by_the_template_they_arrive_at():
    nav = _routine(
        Step("navigate", "shop.example/orders", None, "Firefox", "shop.example/orders"),
        Step("navigate", "shop.example/orders/*", None, "Firefox", "shop.example/orders/*"),
        granularity="url",
    )
    p = plan(nav)
    assert [s["guard"]["expect_url_template"] for s in p["steps"]] == [
        "shop.example/orders",
        "shop.example/orders/*",
    ]
    assert p["guard_coverage"] == 1.0
    assert p["slots"] == []
    assert script(nav) == "navigate shop.example/orders\nnavigate shop.example/orders/*\n"


def test_a_native_routine_without_roles_has_no_guard_coverage():
    native = _routine(
        Step("click", "Build", None, "Xcode", None),
        Step("type", "?!", None, "Xcode", None),
    )
    p = plan(native)
    assert p["guard_coverage"] == 0.0
    assert p["slots"] == [{"name": "value", "field": "?!"}]


def test_the_script_is_one_line_per_step():
    assert script(MAIL) == "click Compose\ntype To {to}\ntype To {to_2}\nclick Send now\n"


def test_plans_are_byte_identical_for_the_same_routine():
    twin = Routine(MAIL.id, MAIL.granularity, tuple(MAIL.steps), MAIL.occurrences)
    first = json.dumps(plan(MAIL), sort_keys=True)
    assert first == json.dumps(plan(twin), sort_keys=True)
    assert script(MAIL) == script(twin)


@pytest.mark.parametrize(
    ("target", "destructive"),
    [
        ("Send", True),
        ("send now", True),
        ("  Delete draft", True),
        ("PAY", True),
        ("Submit order", True),
        ("Confirm transfer", True),
        ("Sender settings", False),
        ("Posted by", False),
        ("Paypal", False),
        ("Compose", False),
        ("Resend later", False),
    ],
)
def test_destructive_steps_begin_with_a_destructive_verb(target, destructive):
    assert is_destructive({"op": "click", "target": target}) is destructive
    assert {"send", "post", "publish", "delete", "pay", "submit", "transfer"} <= set(
        DESTRUCTIVE_VERBS
    )


def test_is_destructive_reads_the_steps_of_a_plan():
    assert [is_destructive(s) for s in plan(MAIL)["steps"]] == [False, False, False, True]


@pytest.mark.parametrize("step", [None, "Send", {"op": "click"}, {"target": 3}])
def test_is_destructive_refuses_what_is_not_a_plan_step(step):
    with pytest.raises(ValueError, match="a plan step is a mapping with a string 'target'"):
        is_destructive(step)


@pytest.mark.parametrize(
    ("routine", "message"),
    [
        ("r-abc", "expected a compiler.routines.Routine, not str"),
        (Routine("r-1", "action", (), ONCE), "routine r-1 has no steps"),
        (
            Routine("r-2", "action", (Step("drag", "X", None, "A", None),), ONCE),
            "routine r-2 step 1: op 'drag' is not click, type or navigate",
        ),
        (
            Routine("r-3", "action", (Step("click", "  ", None, "A", None),), ONCE),
            "routine r-3 step 1 has an empty target",
        ),
    ],
)
def test_bad_routines_are_refused(routine, message):
    with pytest.raises(ValueError, match=message):
        plan(routine)
    with pytest.raises(ValueError, match=message):
        script(routine)
