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


# §7.1's destructive verbs, written out here so that a verb dropped from the module is noticed.
VERBS = [
    "send",
    "post",
    "publish",
    "delete",
    "remove",
    "pay",
    "buy",
    "purchase",
    "order",
    "submit",
    "confirm",
    "transfer",
    "discard",
    "erase",
    "destroy",
    "drop",
    "unsubscribe",
    "checkout",
    "merge",
    "deploy",
    "approve",
    "reply",
    "forward",
    "share",
    "upload",
    "wipe",
    "reset",
]


@pytest.mark.parametrize("verb", VERBS)
def test_every_destructive_verb_needs_the_allow_flag(verb):
    assert is_destructive({"target": f"{verb.capitalize()} now"})
    assert is_destructive({"target": f"…{verb.upper()}"})
    assert not is_destructive({"target": f"Pre{verb}"})
    assert not is_destructive({"target": f"{verb}s list"})  # a whole word only


def test_the_destructive_verbs_are_exactly_the_papers_list():
    assert set(DESTRUCTIVE_VERBS) == set(VERBS)


def test_a_target_split_over_lines_is_read_as_one_line():
    assert is_destructive({"target": "\n  Send\n now"})


def test_slots_are_named_for_their_fields_in_lowercase_words():
    routine = _routine(
        Step("type", "Customer name", "AXTextField", "Firefox", None),
        Step("type", "  E-mail address!! ", "AXTextField", "Firefox", None),
        Step("type", "customer NAME", "AXTextField", "Firefox", None),
        Step("type", "Customer name", "AXTextField", "Firefox", None),
    )
    p = plan(routine)
    assert [s["slot"] for s in p["steps"]] == [
        "customer_name",
        "e_mail_address",
        "customer_name_2",
        "customer_name_3",
    ]
    assert script(routine).splitlines()[1] == "type E-mail address!! {e_mail_address}"


def test_a_guard_keeps_the_page_of_a_click_and_the_element_of_a_typing_step():
    routine = _routine(
        Step("type", "Search\tterms", "AXSearchField", "Firefox", "shop.example/search"),
        Step("click", "Go", None, "Firefox", "shop.example/search"),
    )
    first, second = (s["guard"] for s in plan(routine)["steps"])
    assert first == {
        "expect_app": "Firefox",
        "expect_element": "Search terms",
        "expect_role": "AXSearchField",
        "expect_url_template": "shop.example/search",
    }
    assert second["expect_element"] is None and second["expect_url_template"] == (
        "shop.example/search"
    )
    assert plan(routine)["guard_coverage"] == 1.0
    assert plan(routine)["steps"][0]["target"] == "Search terms"
    assert plan(routine)["slots"] == [{"name": "search_terms", "field": "Search terms"}]


def test_guard_coverage_is_rounded_to_four_places():
    routine = _routine(
        Step("click", "A", "AXButton", "X", None),
        Step("click", "B", None, "X", None),
        Step("click", "C", None, "X", None),
    )
    assert plan(routine)["guard_coverage"] == 0.3333


def test_a_later_step_with_a_bad_op_or_empty_target_is_named_by_its_position():
    ok = Step("click", "A", None, "X", None)
    with pytest.raises(ValueError, match="routine r-4 step 2: op 'hover' is not click"):
        plan(Routine("r-4", "action", (ok, Step("hover", "B", None, "X", None)), ONCE))
    with pytest.raises(ValueError, match="routine r-5 step 2 has an empty target"):
        script(Routine("r-5", "action", (ok, Step("type", "\n", None, "X", None)), ONCE))


def test_a_navigate_step_expects_the_template_it_arrives_at_and_no_element():
    # Built by hand: even a step whose page was not recorded, or that carries a role,
    # is guarded by its own target, never by an element.
    nav = _routine(
        Step("navigate", "shop.example/orders", "AXLink", "Firefox", None),
        Step("click", "Orders", "AXLink", "Firefox", None),
        granularity="url",
    )
    assert plan(nav)["steps"][0]["guard"] == {
        "expect_app": "Firefox",
        "expect_element": None,
        "expect_role": None,
        "expect_url_template": "shop.example/orders",
    }


def test_what_is_not_a_plan_step_is_refused_in_these_words():
    with pytest.raises(ValueError, match=r"^a plan step is a mapping with a string 'target'$"):
        is_destructive({"target": None})
