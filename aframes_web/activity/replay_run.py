"""Replay a guarded skill plan in a real browser: the parametric executor of Activity Frames §7.1.

``compiler.replay.plan`` turns a mined routine into a guarded plan; this module runs one, with
the caller's slot values, through Playwright's sync API in the system Chromium, and never asks a
model anything. It lives outside ``compiler/`` because it does I/O and needs a browser
(ARCHITECTURE.md, principle 6: the plan is the pure core's output, this is a shell around it),
and beside the activity app's services because plans are read from compiled activity.

Safety rules, in the order they are applied to each step:

1. **Dry-run is the default.** Without ``execute`` nothing is clicked, typed or opened: each
   guard that can be checked on the page as it is now is checked, and the report says what the
   replay would do. Only the steps up to and including the first click or navigation are
   checked strictly, because any later step may face a page that step changes.
2. **Destructive steps need an explicit allow.** A step whose target begins with a destructive
   verb (``compiler.replay.is_destructive``: send, delete, pay, submit, ...) stops the replay
   before it unless ``allow_destructive`` is given.
3. **Guards fail safe.** Before a step runs, its guard is checked: the app is a web browser, the
   page's URL template (``host/p0/p1/*``, ``compiler.actions.url_template``) is the expected
   one, and exactly one element with the expected accessibility role and name is there and
   usable. When anything does not match, nothing further is performed and the report says at
   which step, which expectation failed and what was there instead. A step is never performed
   on an element that cannot be found by role and name, guarded or not.

What a replay accepts (the plan's shape, slot values, the AX-to-ARIA role table, the app and
URL-template matching) is checked in :mod:`aframes_web.activity.replay_checks` before Chromium
starts.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from aframes_web.activity.replay_checks import (
    BrowserUnavailable,
    PlanStep,
    ReplayError,
    check_plan,
    check_slots,
    is_browser,
    url_matches,
)
from compiler.actions import url_template

try:  # the optional `replay` extra: without it, replay() says how to install it
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - the dev and replay extras both install Playwright
    sync_playwright = None

    class PlaywrightError(Exception):  # type: ignore[no-redef]  # never raised without Playwright
        pass

    class PlaywrightTimeout(PlaywrightError):  # type: ignore[no-redef]
        pass


if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

STATUSES = ("done", "would_do", "blocked", "guard_failed", "failed", "skipped")
DEFAULT_TIMEOUT_S = 5.0  # how long a guard waits for its element or URL after the last step
CHROMIUM_PATHS = ("/usr/bin/chromium",)  # Debian's `chromium` package
CHROMIUM_NAMES = ("chromium", "chromium-browser")  # looked up on $PATH after CHROMIUM_PATHS
# Flags of every Chromium this project drives (tests/test_browser.py): no sandbox inside
# containers, no GPU, and nothing that reaches the network on its own.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

# Where a step has no role, its element is looked for among the roles a person acts on.
INTERACTIVE_ROLES = (
    "button",
    "link",
    "textbox",
    "searchbox",
    "combobox",
    "checkbox",
    "radio",
    "switch",
    "menuitem",
    "tab",
    "option",
    "spinbutton",
    "slider",
)
_SNAPSHOT_LINE = re.compile(r'^\s*- (?P<role>[a-z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?')
_FOUND_MAX = 8  # names listed when an element is not found


@dataclass(frozen=True, slots=True)
class GuardFailure:
    """Which expectation of a guard failed, what it expected, and what was there instead."""

    expectation: str  # expect_app | expect_url_template | expect_element | expect_role | target
    expected: str
    found: str


def find_chromium(
    explicit: str | None = None,
    *,
    paths: Sequence[str] = CHROMIUM_PATHS,
    names: Sequence[str] = CHROMIUM_NAMES,
) -> str:
    """The Chromium executable to launch; never downloads one (no ``playwright install``)."""
    if explicit is not None:
        if Path(explicit).is_file():
            return explicit
        raise BrowserUnavailable(f"no Chromium executable at {explicit} (given with --chromium).")
    for path in paths:
        if Path(path).is_file():
            return path
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    looked = [*paths, *(f"{name} on $PATH" for name in names)]
    raise BrowserUnavailable(
        f"no Chromium found (looked at {', '.join(looked)}); install Debian's chromium package "
        "(apt-get install chromium) or pass --chromium PATH."
    )


# --------------------------------------------------------------------------------------------
# Guards and steps on a live page.
# --------------------------------------------------------------------------------------------


def _on_page(page: Page) -> list[tuple[str, str | None]]:
    """(ARIA role, accessible name) of everything Chromium's accessibility tree shows."""
    try:
        text = page.locator("body").aria_snapshot(timeout=1000)
    except PlaywrightError:  # a page mid-navigation has no tree: nothing was seen
        return []
    out: list[tuple[str, str | None]] = []
    for line in text.splitlines():
        match = _SNAPSHOT_LINE.match(line)
        if match:
            name = match["name"]
            out.append((match["role"], name.replace('\\"', '"') if name is not None else None))
    return out


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(f'"{item}"' for item in items[:_FOUND_MAX])
    return shown + (f" and {len(items) - _FOUND_MAX} more" if len(items) > _FOUND_MAX else "")


def _plural(role: str) -> str:
    return role + ("es" if role.endswith(("x", "s")) else "s")  # textboxes, checkboxes


def _absent(page: Page, name: str, role: str | None) -> GuardFailure:
    """Why no element named ``name`` with ``role`` is there: what the page holds instead."""
    seen = _on_page(page)
    if role is not None:
        other = sorted({r for r, n in seen if n == name and r != role})
        if other:
            return GuardFailure(
                "expect_role",
                f'a {role} named "{name}"',
                f'"{name}" is a {" and a ".join(other)}, not a {role}',
            )
        same = [n for r, n in seen if r == role and n]
        found = f"{_plural(role)} {_listed(same)}" if same else f"no {role} at all"
        return GuardFailure("expect_element", f'a {role} named "{name}"', found)
    names = [n for r, n in seen if r in INTERACTIVE_ROLES and n]
    return GuardFailure(
        "expect_element",
        f'an element named "{name}"',
        f"controls {_listed(names)}" if names else "no named control",
    )


def _element(
    page: Page, name: str, role: str | None, deadline: float
) -> tuple[Locator | None, GuardFailure | None]:
    """The one element named ``name`` with ``role`` (any interactive role when None), waiting
    until ``deadline`` for it to appear."""
    roles = (role,) if role is not None else INTERACTIVE_ROLES
    while True:
        hits = [page.get_by_role(r, name=name, exact=True) for r in roles]  # type: ignore[arg-type]
        try:
            counts = [locator.count() for locator in hits]
        except PlaywrightError:  # the page is navigating: look again once it has loaded
            counts = [0] * len(hits)
        total = sum(counts)
        if total == 1:
            return hits[next(i for i, c in enumerate(counts) if c)], None
        if total > 1:
            return None, GuardFailure(
                "expect_element",
                f'one {role or "element"} named "{name}"',
                f"{total} of them (ambiguous)",
            )
        if time.monotonic() >= deadline:
            return None, _absent(page, name, role)
        page.wait_for_timeout(100)


def check_guard(
    page: Page, step: PlanStep, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> tuple[Locator | None, GuardFailure | None]:
    """Check one step's guard on the page; the element to act on, or the failure.

    Expectations are checked in order: the app, the URL template (not for a navigate step,
    whose template names where it lands and is checked after it ran), then the element by
    role and name. A click or type step always needs its own element, so the step's target
    is looked for even where the guard names no element (reported as ``target``).
    """
    if step.expect_app is not None and not is_browser(step.expect_app):
        return None, GuardFailure(
            "expect_app", f'the app "{step.expect_app}"', "a web browser (Chromium)"
        )
    deadline = time.monotonic() + timeout_s
    if step.op == "navigate":
        return None, None
    if step.expect_url_template is not None:
        failure = _wait_for_template(page, step.expect_url_template, deadline)
        if failure is not None:
            return None, failure
    name = step.expect_element or step.target
    role = step.expect_aria or step.aria
    locator, failure = _element(page, name, role, deadline)
    if failure is not None:
        if step.expect_element is None:
            failure = GuardFailure("target", failure.expected, failure.found)
        return None, failure
    assert locator is not None
    if step.expect_element is not None and step.expect_element != step.target:
        # The guard names a landmark; the step acts on its own target, which must be there too.
        locator, failure = _element(page, step.target, step.aria, deadline)
        if failure is not None:
            return None, GuardFailure("target", failure.expected, failure.found)
        assert locator is not None
    usable = locator.is_editable() if step.op == "type" else locator.is_enabled()
    if not usable:
        state = "read-only" if step.op == "type" else "disabled"
        return None, GuardFailure(
            "expect_element", f'a usable {role or "element"} named "{name}"', f"it is {state}"
        )
    return locator, None


def _wait_for_template(page: Page, template: str, deadline: float) -> GuardFailure | None:
    remaining_ms = max(0.0, deadline - time.monotonic()) * 1000
    try:
        page.wait_for_url(lambda url: url_matches(template, url), timeout=max(remaining_ms, 1))
    except PlaywrightTimeout:
        found = url_template(page.url) or page.url
        return GuardFailure("expect_url_template", template, f"{found}, at {page.url}")
    return None


def _destination(page: Page, template: str) -> str | None:
    """A concrete URL for a navigate step's template, on the current page's origin when the
    template names its host; None when the template holds an identifier no value fills."""
    if "*" in template.split("/"):
        return None
    host, _, path = template.partition("/")
    current = urlsplit(page.url)
    here = (current.hostname or "").removeprefix("www.")
    origin = f"{current.scheme}://{current.netloc}" if here == host else f"https://{host}"
    return f"{origin}/{path}" if path else f"{origin}/"


def _entry(step: PlanStep, status: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {
        "index": step.index,
        "op": step.op,
        "target": step.target,
        "status": status,
        "reason": reason,
        **extra,
    }


def _guard_failed(step: PlanStep, failure: GuardFailure, when: str = "") -> dict[str, Any]:
    reason = (
        f"step {step.index} ({step.describe()}): guard {failure.expectation} failed{when}: "
        f"expected {failure.expected}, found {failure.found}"
    )
    return _entry(
        step,
        "guard_failed",
        reason,
        guard="failed",
        expectation=failure.expectation,
        expected=failure.expected,
        found=failure.found,
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@dataclass(slots=True)
class _Run:
    """One replay in progress: its options and what it has reported so far."""

    page: Page
    values: Mapping[str, str]
    execute: bool
    allow_destructive: bool
    timeout_s: float
    steps: list[dict[str, Any]]
    stopped_at: int | None = None
    reason: str | None = None
    changed_by: int | None = None  # dry-run: the first step that may change the page

    def stop(self, entry: dict[str, Any]) -> None:
        self.steps.append(entry)
        self.stopped_at, self.reason = entry["index"], entry["reason"]

    def step(self, step: PlanStep) -> None:
        if self.stopped_at is not None:
            reason = f"not attempted: the replay stopped at step {self.stopped_at}"
            self.steps.append(_entry(step, "skipped", reason))
            return
        if step.destructive and not self.allow_destructive:
            reason = (
                f"step {step.index} ({step.describe()}) begins with a destructive verb; it "
                "runs only with an explicit allow (--allow-destructive)"
            )
            self.stop(_entry(step, "blocked", reason))
            return
        if not self.execute and self.changed_by is not None:
            self.steps.append(self._unchecked(step))
            return
        locator, failure = check_guard(self.page, step, timeout_s=self.timeout_s)
        if failure is not None:
            self.stop(_guard_failed(step, failure))
            return
        if step.op == "navigate":
            self._navigate(step)
        elif not self.execute:
            what = f"would {step.describe()}"
            if step.op == "type":
                what += f" with the value of slot {step.slot}"
            self.steps.append(_entry(step, "would_do", f"{what}; its guard holds", guard="held"))
            if step.op == "click":
                self.changed_by = step.index
        else:
            self._act(step, locator)

    def _unchecked(self, step: PlanStep) -> dict[str, Any]:
        # Step `changed_by` would change the page first: what is here now says nothing
        # certain about this guard, so it is reported, never held against the plan.
        _, failure = check_guard(self.page, step, timeout_s=0)
        now = (
            "it holds on the current page already"
            if failure is None
            else f"on the current page {failure.expectation} finds {failure.found}"
        )
        reason = (
            f"would {step.describe()}; its guard is checked when a run gets there, after step "
            f"{self.changed_by} changes the page ({now})"
        )
        return _entry(step, "would_do", reason, guard="unchecked")

    def _navigate(self, step: PlanStep) -> None:
        ms = self.timeout_s * 1000
        if url_matches(step.target, self.page.url):
            status = "done" if self.execute else "would_do"
            self.steps.append(_entry(step, status, f"already at {step.target}", guard="held"))
            return
        destination = _destination(self.page, step.target)
        if destination is None:
            reason = (
                f"step {step.index} ({step.describe()}): the template holds an identifier (*) "
                "that no slot fills, so there is no page to open; open it and replay from the "
                "next step"
            )
            self.stop(_entry(step, "blocked", reason))
            return
        if not self.execute:
            self.steps.append(_entry(step, "would_do", f"would open {destination}"))
            self.changed_by = step.index
            return
        try:
            self.page.goto(destination, timeout=ms)
        except PlaywrightError as exc:
            reason = f"step {step.index} ({step.describe()}): cannot open {destination}: "
            self.stop(_entry(step, "failed", reason + _first_line(exc)))
            return
        if not url_matches(step.target, self.page.url):
            # A navigate step's guard names where it lands (compiler.replay): checked after.
            found = url_template(self.page.url) or self.page.url
            failure = GuardFailure("expect_url_template", step.target, found)
            self.stop(_guard_failed(step, failure, " after navigating"))
            return
        self.steps.append(_entry(step, "done", f"opened {destination}", guard="held"))

    def _act(self, step: PlanStep, locator: Locator | None) -> None:
        assert locator is not None
        ms = self.timeout_s * 1000
        try:
            if step.op == "click":
                locator.click(timeout=ms)
            else:
                locator.fill(self.values[step.slot or ""], timeout=ms)
            # A click that starts a navigation has waited for it to start; let it load.
            self.page.wait_for_load_state(timeout=ms)
        except PlaywrightError as exc:
            reason = f"step {step.index} ({step.describe()}): the browser could not do it: "
            self.stop(_entry(step, "failed", reason + _first_line(exc), guard="held"))
            return
        done = step.describe() + (f" with slot {step.slot}" if step.op == "type" else "")
        self.steps.append(_entry(step, "done", done, guard="held"))


def run_plan(
    page: Page,
    plan: Mapping[str, Any],
    slots: Mapping[str, str] | None = None,
    *,
    execute: bool = False,
    allow_destructive: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> dict[str, Any]:
    """Replay ``plan`` on an open page (dry-run unless ``execute``); the JSON-able report.

    ``{executed, routine, steps: [{index, op, target, status, reason, ...}], stopped_at,
    reason, completed, start_url, final_url}``: ``executed`` says whether this was a real run
    (not a dry-run), ``completed`` whether every step ran (or, dry, would run). A step's
    status is one of ``STATUSES``; ``failed`` is a step whose guard held but whose action the
    browser refused (the reason carries the browser's words). A step that checked its guard
    says ``guard``: ``held``, ``failed`` or, in a dry-run past the first page-changing step,
    ``unchecked``; a failed guard also says ``expectation``, ``expected`` and ``found``.
    Bad plans and slot values raise :class:`ReplayError` before anything runs.
    """
    steps = check_plan(plan)
    values = check_slots(plan, steps, slots or {})
    start_url = page.url
    run = _Run(page, values, execute, allow_destructive, timeout_s, [])
    for step in steps:
        run.step(step)
    return {
        "executed": execute,
        "routine": plan.get("routine"),
        "steps": run.steps,
        "stopped_at": run.stopped_at,
        "reason": run.reason,
        "completed": run.stopped_at is None,
        "start_url": start_url,
        "final_url": page.url,
    }


def replay(
    plan: Mapping[str, Any],
    url: str,
    slots: Mapping[str, str] | None = None,
    *,
    execute: bool = False,
    allow_destructive: bool = False,
    headed: bool = False,
    chromium: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> dict[str, Any]:
    """Open ``url`` in the system Chromium and replay ``plan`` there (see :func:`run_plan`).

    The plan, the slot values, the URL and the browser are all checked before Chromium starts.
    """
    steps = check_plan(plan)
    check_slots(plan, steps, slots or {})
    if urlsplit(url).scheme not in ("http", "https", "file"):
        raise ReplayError(f"the start URL must be an http(s) or file URL, got {url!r}.")
    executable = find_chromium(chromium)
    if sync_playwright is None:
        raise BrowserUnavailable(
            "Playwright is not installed; pip install 'aframes[replay]' (it drives the system "
            "Chromium and downloads no browser)."
        )
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=executable, args=list(CHROMIUM_ARGS), headless=not headed
            )
        except PlaywrightError as exc:
            hint = ""
            if headed and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
                hint = "; --headed needs a display (DISPLAY or WAYLAND_DISPLAY is not set)"
            raise BrowserUnavailable(
                f"Chromium at {executable} did not start: {_first_line(exc)}{hint}"
            ) from None
        try:
            page = browser.new_page()
            try:
                page.goto(url, timeout=timeout_s * 1000)
            except PlaywrightError as exc:
                raise ReplayError(f"cannot open {url}: {_first_line(exc)}") from None
            return run_plan(
                page,
                plan,
                slots,
                execute=execute,
                allow_destructive=allow_destructive,
                timeout_s=timeout_s,
            )
        finally:
            browser.close()
