"""The replay executor's checks that need no browser (Activity Frames §7.1): role mapping, URL
templates, slot values, plan shape, finding Chromium, and the command's refusals, all of which
happen before a browser starts. The replay itself is tests/test_replay_browser.py."""

from __future__ import annotations

import ast
import copy
import json
import re
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from aframes_web.activity.replay_checks import (
    ARIA_ROLES,
    AX_TO_ARIA,
    PlanError,
    SlotError,
    aria_role,
    check_plan,
    check_slots,
    is_browser,
    parse_slot,
    parse_slots,
    select_plan,
    url_matches,
)
from aframes_web.activity.replay_run import BrowserUnavailable, find_chromium


def _guard(element=None, role=None, app="Google Chrome", url="shop.example/expenses/new"):
    return {
        "expect_element": element,
        "expect_role": role,
        "expect_app": app,
        "expect_url_template": url,
    }


PLAN = {
    "routine": "r-0123456789ab",
    "granularity": "action",
    "steps": [
        {
            "op": "click",
            "target": "New expense",
            "role": "AXLink",
            "guard": _guard("New expense", "AXLink", url="shop.example/expenses"),
        },
        {
            "op": "type",
            "target": "Amount",
            "role": "AXTextField",
            "slot": "amount",
            "guard": _guard("Amount", "AXTextField"),
        },
        {
            "op": "type",
            "target": "Merchant",
            "role": "textbox",
            "slot": "merchant",
            "guard": _guard("Merchant", "textbox"),
        },
        {"op": "click", "target": "Submit expense", "role": "AXButton", "guard": _guard()},
    ],
    "slots": [{"name": "amount", "field": "Amount"}, {"name": "merchant", "field": "Merchant"}],
    "guard_coverage": 1.0,
}


@pytest.mark.parametrize(
    ("role", "aria"),
    [
        ("AXButton", "button"),
        ("AXTextField", "textbox"),
        ("AXTextArea", "textbox"),
        ("AXLink", "link"),
        ("AXCheckBox", "checkbox"),
        ("AXMenuItem", "menuitem"),
        ("AXTab", "tab"),
        ("AXPopUpButton", "combobox"),
        ("button", "button"),
        ("Button", "button"),
        ("menuitemcheckbox", "menuitemcheckbox"),
        (None, None),
    ],
)
def test_plan_roles_map_to_the_aria_roles_chromium_exposes(role, aria) -> None:
    assert aria_role(role) == aria


def test_every_ax_role_maps_to_a_role_playwright_can_search_by() -> None:
    assert set(AX_TO_ARIA.values()) <= ARIA_ROLES


def test_a_role_with_no_aria_equivalent_is_refused() -> None:
    with pytest.raises(PlanError, match=r"role 'AXStaticText' has no ARIA equivalent"):
        aria_role("AXStaticText")


@pytest.mark.parametrize(
    ("template", "url", "matches"),
    [
        ("127.0.0.1/expenses", "http://127.0.0.1:8000/expenses", True),
        ("127.0.0.1/expenses/*", "http://127.0.0.1:8000/expenses/12", True),
        ("127.0.0.1/expenses/*", "http://127.0.0.1:8000/expenses/new", False),
        ("github.com/acme/api/*", "https://github.com/acme/api/pull/12", True),
        ("github.com/acme/api/*", "https://github.com/acme/api", False),
        ("x.example/a/b", "https://x.example/a/b?q=1#top", True),
        ("x.example/a/b", "https://x.example/a/b/c", False),
        ("x.example/a/b", "https://y.example/a/b", False),
        ("x.example/a", "about:blank", False),
    ],
)
def test_urls_match_a_template_as_the_compiler_templates_them(template, url, matches) -> None:
    assert url_matches(template, url) is matches


@pytest.mark.parametrize(
    ("app", "browser"),
    [
        ("Google Chrome", True),
        ("Chromium", True),
        ("firefox", True),
        ("msedge.exe", True),
        ("Safari", True),
        ("Slack", False),
        ("Code", False),
        ("Archive Utility", False),
    ],
)
def test_only_browsers_pass_the_app_guard(app, browser) -> None:
    assert is_browser(app) is browser


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("amount=12.50", ("amount", "12.50")),
        ("note=a=b", ("note", "a=b")),
        ("merchant=", ("merchant", "")),
        ("field_2=Café Zur", ("field_2", "Café Zur")),
    ],
)
def test_slots_are_name_equals_value(text, pair) -> None:
    assert parse_slot(text) == pair


@pytest.mark.parametrize("text", ["amount", "=12", "two words=x", "1st=x", ""])
def test_malformed_slots_are_refused_with_the_expected_form(text) -> None:
    with pytest.raises(SlotError, match="is not name=value"):
        parse_slot(text)


def test_a_slot_given_twice_is_refused() -> None:
    with pytest.raises(SlotError, match="slot 'amount' is given twice"):
        parse_slots(["amount=1", "amount=2"])


def test_check_plan_grounds_each_step_and_marks_destructive_ones() -> None:
    steps = check_plan(PLAN)
    assert [(s.op, s.target, s.aria, s.slot) for s in steps] == [
        ("click", "New expense", "link", None),
        ("type", "Amount", "textbox", "amount"),
        ("type", "Merchant", "textbox", "merchant"),
        ("click", "Submit expense", "button", None),
    ]
    assert [s.destructive for s in steps] == [False, False, False, True]
    assert steps[0].expect_url_template == "shop.example/expenses"
    assert steps[3].expect_element is None and steps[3].expect_aria is None


def _broken(change) -> dict:
    plan = copy.deepcopy(PLAN)
    change(plan)
    return plan


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ([], "a plan is a JSON object, got list"),
        ({"steps": []}, "plan.steps must be a non-empty array"),
        (_broken(lambda p: p.update(slots={})), "plan.slots must be an array"),
        (_broken(lambda p: p["slots"].append("x")), r"plan.slots\[2\] must be an object"),
        (_broken(lambda p: p["steps"].append(3)), r"plan.steps\[4\] must be an object"),
        (_broken(lambda p: p["steps"][0].update(op="drag")), r"plan.steps\[0\].op is 'drag'"),
        (_broken(lambda p: p["steps"][0].update(target=" ")), r"\.target must be a non-empty"),
        (_broken(lambda p: p["steps"][0].update(role=3)), r"\.role must be a non-empty string"),
        (_broken(lambda p: p["steps"][0].update(guard=[])), r"\.guard must be an object"),
        (
            _broken(lambda p: p["steps"][0]["guard"].update(expect_title="x")),
            r"guard has expect_title; a guard holds expect_element",
        ),
        (
            _broken(lambda p: p["steps"][0]["guard"].update(expect_app=1)),
            r"guard.expect_app must be a non-empty string or null",
        ),
        (
            _broken(lambda p: p["steps"][1].update(slot="amout")),
            r"types into 'Amount' but its slot 'amout' is not one of plan.slots",
        ),
        (
            _broken(lambda p: p["steps"][0].update(slot="amount")),
            r"is a click step; only type steps have a slot",
        ),
        (
            _broken(lambda p: p["steps"][3].update(role="AXStaticText")),
            r"plan.steps\[3\]: role 'AXStaticText' has no ARIA equivalent",
        ),
    ],
)
def test_malformed_plans_are_refused_naming_the_field(plan, message) -> None:
    with pytest.raises(PlanError, match=message):
        check_plan(plan)


def _routines(*ids: str) -> dict:
    """A routines document as ``python -m compiler routines -f json`` writes it."""
    items = [{"id": i, "count": 3, "plan": {**PLAN, "routine": i}} for i in ids]
    return {"granularity": "action", "routines": items}


def test_a_plan_file_is_a_plan_or_one_routine_of_a_routines_document() -> None:
    assert select_plan(PLAN) == PLAN
    assert select_plan(PLAN, "r-0123456789ab") == PLAN
    assert select_plan(_routines("r-a"))["routine"] == "r-a"
    assert select_plan(_routines("r-a", "r-b"), "r-b")["routine"] == "r-b"


@pytest.mark.parametrize(
    ("document", "routine", "message"),
    [
        ([PLAN], None, "expected a plan .* or a routines document"),
        ({"plans": []}, None, "expected a plan .* or a routines document"),
        (_routines("r-a", "r-b"), None, r"holds 2 routines \(r-a, r-b\); pick one with --routine"),
        (_routines("r-a"), "r-z", r"no routine 'r-z' in the routines document \(it holds r-a\)"),
        ({"routines": [{"id": "r-a", "plan": []}]}, None, "routine 'r-a' .* has no plan object"),
        (PLAN, "r-z", "this plan is routine 'r-0123456789ab', not 'r-z'"),
    ],
)
def test_a_plan_that_cannot_be_chosen_is_refused(document, routine, message) -> None:
    with pytest.raises(PlanError, match=message):
        select_plan(document, routine)


def test_missing_slot_values_are_named_with_their_fields() -> None:
    steps = check_plan(PLAN)
    with pytest.raises(SlotError) as problem:
        check_slots(PLAN, steps, {"amount": "1"})
    assert (
        str(problem.value) == 'no value for slot merchant (field "Merchant"); --slot merchant=...'
    )


def test_unknown_slot_names_are_refused() -> None:
    steps = check_plan(PLAN)
    with pytest.raises(
        SlotError, match="unknown slot amout; this plan's slots are amount, merchant"
    ):
        check_slots(PLAN, steps, {"amout": "1", "merchant": "x"})


def test_slot_values_are_kept_for_the_type_steps() -> None:
    values = check_slots(PLAN, check_plan(PLAN), {"merchant": "Kiosk", "amount": "2"})
    assert values == {"amount": "2", "merchant": "Kiosk"}


def test_find_chromium_takes_the_first_existing_place(tmp_path) -> None:
    present = tmp_path / "chromium"
    present.write_text("")
    assert find_chromium(paths=(str(tmp_path / "none"), str(present)), names=()) == str(present)


def test_no_chromium_says_where_it_looked_and_which_package_provides_it(tmp_path) -> None:
    with pytest.raises(BrowserUnavailable) as problem:
        find_chromium(paths=(str(tmp_path / "chromium"),), names=("no-such-chromium-here",))
    text = str(problem.value)
    assert str(tmp_path / "chromium") in text and "no-such-chromium-here on $PATH" in text
    assert "Debian's chromium package" in text


def test_an_explicit_chromium_that_is_not_there_is_named(tmp_path) -> None:
    with pytest.raises(BrowserUnavailable, match="no Chromium executable at .*given with"):
        find_chromium(str(tmp_path / "chrome"))


def _command(tmp_path, plan, *args: str) -> CommandError:
    path = tmp_path / "plan.json"
    if plan is not None:
        path.write_text(plan if isinstance(plan, str) else json.dumps(plan))
    with pytest.raises(CommandError) as problem:
        call_command("replay_plan", str(path), *args)
    assert problem.value.returncode == 2
    return problem.value


GOOD = ("--url", "http://127.0.0.1:1/expenses", "--slot", "amount=1", "--slot", "merchant=x")


@pytest.mark.parametrize(
    ("plan", "args", "message"),
    [
        (None, GOOD, "cannot read the plan .*plan.json: No such file"),
        ("{not json", GOOD, "the plan .*plan.json is not JSON"),
        ({"steps": "x"}, GOOD, "plan.json: plan.steps must be a non-empty array"),
        ({"routines": []}, GOOD, "plan.json: the routines document holds 0 routines"),
        (PLAN, (*GOOD, "--routine", "r-other"), "this plan is routine 'r-0123456789ab', not"),
        (PLAN, (*GOOD, "--slot", "merchant"), "slot 'merchant' is not name=value"),
        (PLAN, GOOD[:4], r"no value for slot merchant \(field \"Merchant\"\)"),
        (PLAN, (*GOOD, "--chromium", "/nonexistent/chromium"), "no Chromium executable at"),
        (PLAN, ("--url", "javascript:alert(1)", *GOOD[2:]), "must be an http"),
        (PLAN, (*GOOD, "--timeout", "0"), "--timeout must be a positive number"),
    ],
)
def test_the_command_refuses_bad_input_before_any_browser_starts(
    tmp_path, plan, args, message
) -> None:
    assert re.search(message, str(_command(tmp_path, plan, *args)))


@pytest.mark.parametrize(
    ("module", "allowed"),
    [
        ("replay_checks", {"compiler"}),
        ("replay_run", {"compiler", "playwright", "aframes_web.activity.replay_checks"}),
    ],
)
def test_the_executor_imports_only_the_stdlib_the_compiler_and_playwright(module, allowed):
    """No model, no HTTP client, no database: a replay is the plan, the slots and a browser."""
    source = Path(__file__).resolve().parent.parent / f"aframes_web/activity/{module}.py"
    imported = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            imported.add(node.module if top == "aframes_web" else top)
    assert imported - sys.stdlib_module_names == allowed
