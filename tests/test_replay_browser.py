"""End to end in headless Chromium (Activity Frames §7.1): a routine done three times on a small
local web app is recorded as capture events, compiled, mined and planned, then replayed with new
slot values, with no model anywhere; the app's own state proves what the replay did. On an
updated page the replay stops at the changed step and nothing after it runs (the fail-safe)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from aframes_web.activity.replay_run import CHROMIUM_ARGS, run_plan
from compiler import replay
from compiler.actions import history
from compiler.document import compile_day
from compiler.routines import mine
from compiler.sources import jsonl
from tests.conftest import need_service
from tests.replay_app import Served
from tests.replay_record import Recorder

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parent.parent
TZ = "Europe/Berlin"
MORNINGS = [date(2026, 3, 2) + timedelta(days=n) for n in range(3)]
RECORDED = [("12.50", "Cafe Zur"), ("8.00", "Bakery Lind"), ("40.10", "Taxi Nord")]
STEPS = [
    ("click", "New expense", "AXLink", "127.0.0.1/expenses"),
    ("click", "Amount", "AXTextField", "127.0.0.1/expenses/new"),
    ("type", "Amount", "AXTextField", "127.0.0.1/expenses/new"),
    ("click", "Merchant", "AXTextField", "127.0.0.1/expenses/new"),
    ("type", "Merchant", "AXTextField", "127.0.0.1/expenses/new"),
    ("click", "Save", "AXButton", "127.0.0.1/expenses/new"),
    ("click", "Submit expense", "AXButton", "127.0.0.1/expenses/*"),
]
SAVE, SUBMIT = 5, 6
SLOTS = {"amount": "99.95", "merchant": "Hotel Adler"}
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser():
    need_service("Chromium (/usr/bin/chromium)", CHROMIUM.exists())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS)
        )
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def served():
    app = Served()
    yield app
    app.close()


@pytest.fixture(scope="module")
def recording(browser, served, tmp_path_factory) -> Path:
    """The routine done by hand (through Playwright) on three mornings, as a JSONL capture."""
    served.app.reset()
    context = browser.new_context()
    page = context.new_page()
    recorder = Recorder(page)
    for morning, (amount, merchant) in zip(MORNINGS, RECORDED, strict=True):
        start = datetime.combine(morning, datetime.min.time(), ZoneInfo(TZ)).replace(hour=9)
        with recorder.session(start):
            page.goto(f"{served.url}/expenses")
            page.get_by_role("link", name="New expense").click()
            for field, value in (("Amount", amount), ("Merchant", merchant)):
                page.get_by_role("textbox", name=field).click()
                page.get_by_role("textbox", name=field).press_sequentially(value)
            page.get_by_role("button", name="Save").click()
            page.get_by_role("button", name="Submit expense").click()
            page.wait_for_url("**/expenses")
    context.close()
    assert [(e.amount, e.merchant, e.submitted) for e in served.app.expenses] == [
        (amount, merchant, True) for amount, merchant in RECORDED
    ]
    return recorder.write(tmp_path_factory.mktemp("capture") / "mornings.jsonl")


@pytest.fixture(scope="module")
def plan(recording, tmp_path_factory) -> dict:
    """Compile each morning through the JSONL reader, mine the routine, emit its plan."""
    capture = jsonl.read(recording)
    days = [compile_day(capture, morning, TZ) for morning in MORNINGS]
    routines = mine(history(days, "action"))
    assert len(routines) == 1, [r.steps for r in routines]
    return replay.plan(routines[0])


@pytest.fixture
def page(browser, served, plan):
    # `plan` first: the recording's own expenses must be made before the app is reset.
    served.app.reset()
    context = browser.new_context()
    opened = context.new_page()
    opened.goto(f"{served.url}/expenses")
    yield opened
    context.close()


def test_recorded_mornings_compile_to_one_guarded_plan(plan, recording) -> None:
    assert [
        (s["op"], s["target"], s["role"], s["guard"]["expect_url_template"]) for s in plan["steps"]
    ] == STEPS
    assert all(s["guard"]["expect_app"] == "Chromium" for s in plan["steps"])
    assert plan["slots"] == [
        {"name": "amount", "field": "Amount"},
        {"name": "merchant", "field": "Merchant"},
    ]
    assert plan["guard_coverage"] == 1.0
    # The typed values are parameters: none of the recorded texts is in the plan.
    text = json.dumps(plan)
    assert not any(value in text for pair in RECORDED for value in pair)


def test_replay_fills_the_form_and_stops_before_the_destructive_submit(page, served, plan) -> None:
    report = run_plan(page, plan, SLOTS, execute=True)
    assert report["executed"] is True
    assert [s["status"] for s in report["steps"]] == ["done"] * SUBMIT + ["blocked"]
    assert report["stopped_at"] == SUBMIT and "destructive" in report["reason"]
    assert "--allow-destructive" in report["steps"][SUBMIT]["reason"]
    # The app got the slot values, and the submit never reached it.
    assert [(e.amount, e.merchant, e.submitted) for e in served.app.expenses] == [
        ("99.95", "Hotel Adler", False)
    ]
    assert served.app.posts == ["/expenses"]


def test_allowed_destructive_step_runs(page, served, plan) -> None:
    report = run_plan(page, plan, SLOTS, execute=True, allow_destructive=True)
    assert report["completed"] and report["stopped_at"] is None
    assert {s["status"] for s in report["steps"]} == {"done"}
    assert [(e.amount, e.merchant, e.submitted) for e in served.app.expenses] == [
        ("99.95", "Hotel Adler", True)
    ]
    assert served.app.posts == ["/expenses", "/expenses/1/submit"]


def test_changed_page_stops_at_the_renamed_button_and_nothing_after_runs(
    page, served, plan
) -> None:
    served.app.reset(changed=True)  # the app was updated: "Save" is now "Save draft"
    report = run_plan(page, plan, SLOTS, execute=True, allow_destructive=True, timeout_s=2.0)
    statuses = [s["status"] for s in report["steps"]]
    assert statuses == ["done"] * SAVE + ["guard_failed", "skipped"]
    failed = report["steps"][SAVE]
    assert report["stopped_at"] == SAVE
    assert failed["expectation"] == "expect_element"
    assert failed["expected"] == 'a button named "Save"'
    assert '"Save draft"' in failed["found"]
    assert report["reason"] == (
        'step 5 (click button "Save"): guard expect_element failed: expected a button named '
        '"Save", found buttons "Save draft"'
    )
    # The form was filled in the browser, but nothing was sent: no save, no submit.
    assert page.get_by_role("textbox", name="Amount").input_value() == "99.95"
    assert served.app.posts == [] and served.app.expenses == []


def test_dry_run_from_the_command_line_performs_nothing(served, plan, recording, tmp_path) -> None:
    """The command-line path: the capture file to ``python -m compiler routines``, its
    routines document to ``manage.py replay_plan --routine``."""
    served.app.reset()
    routines = tmp_path / "routines.json"
    command = ("--source", f"jsonl:{recording}", "--tz", TZ, "-f", "json")
    days = ("--from", MORNINGS[0].isoformat(), "--to", MORNINGS[-1].isoformat())
    with routines.open("w") as out:
        subprocess.run(
            [sys.executable, "-m", "compiler", "routines", *command, *days],
            cwd=ROOT,
            stdout=out,
            check=True,
            timeout=120,
        )
    # Its own process: Playwright's sync API runs one loop per thread, and this module's
    # browser holds this one.
    done = subprocess.run(
        [
            *(sys.executable, "manage.py", "replay_plan", str(routines)),
            *("--routine", plan["routine"], "--url", f"{served.url}/expenses"),
            *("--slot", "amount=1.00", "--slot", "merchant=Kiosk", "--allow-destructive"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["executed"] is False and report["completed"] is True
    assert report["routine"] == plan["routine"]
    assert [s["status"] for s in report["steps"]] == ["would_do"] * len(STEPS)
    # The first click's guard is checked on the page; later ones only when a run gets there.
    assert report["steps"][0]["guard"] == "held"
    assert {s["guard"] for s in report["steps"][1:]} == {"unchecked"}
    assert "after step 0 changes the page" in report["steps"][1]["reason"]
    assert served.app.posts == [] and served.app.expenses == []


def test_a_chromium_that_does_not_start_is_a_clear_error(served, plan, tmp_path) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    done = subprocess.run(
        [
            *(sys.executable, "manage.py", "replay_plan", str(plan_file)),
            *("--url", f"{served.url}/expenses", "--slot", "amount=1", "--slot", "merchant=x"),
            *("--chromium", "/bin/true"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "Chromium at /bin/true did not start" in done.stderr
    assert "Traceback" not in done.stderr


def test_dry_run_on_the_wrong_page_reports_the_url_guard(page, served, plan) -> None:
    page.goto(f"{served.url}/expenses/new")
    report = run_plan(page, plan, SLOTS, timeout_s=2.0)
    assert report["stopped_at"] == 0
    first = report["steps"][0]
    assert first["status"] == "guard_failed" and first["expectation"] == "expect_url_template"
    assert first["expected"] == "127.0.0.1/expenses"
    assert first["found"] == f"127.0.0.1/expenses/new, at {served.url}/expenses/new"
    assert {s["status"] for s in report["steps"][1:]} == {"skipped"}
    assert served.app.posts == []


def _step(op, target, role=None, *, element=None, app="Chromium", url="127.0.0.1/expenses"):
    return {
        "op": op,
        "target": target,
        "role": role,
        "guard": {
            "expect_element": element,
            "expect_role": role if element else None,
            "expect_app": app,
            "expect_url_template": url,
        },
    }


LINK = ("click", "New expense", "AXLink")


@pytest.mark.parametrize(
    ("state", "steps", "execute", "statuses", "expectation", "found", "final"),
    [
        pytest.param(
            {},
            [_step("click", "New expense", "AXButton", element="New expense")],
            False,
            ["guard_failed"],
            "expect_role",
            '"New expense" is a link, not a button',
            "/expenses",
            id="role-differs",
        ),
        pytest.param(
            {},
            [_step(*LINK, element="New expense", app="Slack")],
            False,
            ["guard_failed"],
            "expect_app",
            "a web browser",
            "/expenses",
            id="not-a-browser",
        ),
        pytest.param(
            {},
            [_step("click", "Help", "AXLink", element="Help")],
            True,
            ["guard_failed"],
            "expect_element",
            "2 of them (ambiguous)",
            "/expenses",
            id="ambiguous",
        ),
        pytest.param(
            {},
            [_step("click", "Export", "AXButton", element="Export")],
            True,
            ["guard_failed"],
            "expect_element",
            "it is disabled",
            "/expenses",
            id="disabled",
        ),
        pytest.param(
            {},
            [_step("click", "New expense")],
            True,
            ["done"],
            None,
            "click",
            "/expenses/new",
            id="no-role-found-among-controls",
        ),
        pytest.param(
            {},
            [_step("click", "Add receipt")],
            True,
            ["guard_failed"],
            "target",
            'controls "Help", "New expense", "Export", "Help"',
            "/expenses",
            id="unguarded-target-absent",
        ),
        pytest.param(
            {},
            [{**_step(*LINK, element="New expense"), "target": "Add receipt"}],
            True,
            ["guard_failed"],
            "target",
            'links "Help", "New expense", "Help"',
            "/expenses",
            id="guard-holds-target-absent",
        ),
        pytest.param(
            {},
            [
                _step("navigate", "127.0.0.1/expenses/new", url="127.0.0.1/expenses/new"),
                _step("navigate", "127.0.0.1/expenses/*", url="127.0.0.1/expenses/*"),
            ],
            True,
            ["done", "blocked"],
            None,
            "holds an identifier (*) that no slot fills",
            "/expenses/new",
            id="navigate",
        ),
        pytest.param(
            {"banner": True},
            [_step(*LINK, element="New expense")],
            True,
            ["failed"],
            None,
            "the browser could not do it",
            "/expenses",
            id="covered-by-a-banner",
        ),
    ],
)
def test_each_guard_stops_on_what_the_page_does_not_hold(
    page, served, state, steps, execute, statuses, expectation, found, final
) -> None:
    if state:
        served.app.reset(**state)
        page.reload()
    plan = {"routine": "r-by-hand", "granularity": "action", "steps": steps, "slots": []}
    # Two seconds: enough for a page of this app to load on a busy machine, and what a case
    # whose element is absent waits before it reports.
    report = run_plan(page, plan, execute=execute, timeout_s=2.0)
    assert [s["status"] for s in report["steps"]] == statuses
    last = report["steps"][-1]
    assert last.get("expectation") == expectation
    assert found in last.get("found", last["reason"])
    if expectation is not None:
        assert last["reason"].endswith(
            f"guard {expectation} failed: expected {last['expected']}, found {last['found']}"
        )
    assert report["final_url"] == f"{served.url}{final}"
    assert served.app.posts == []
