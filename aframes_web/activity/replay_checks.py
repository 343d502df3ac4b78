"""What a replay accepts, checked before any browser starts (Activity Frames §7.1): the plan's
shape, the ARIA role each step is grounded by, the slot values, the app and URL-template guards.

Plans carry the roles the capture recorded, which on macOS are AX roles (``AXButton``); a browser
is searched by ARIA roles, so ``AX_TO_ARIA`` maps one to the other, and ARIA role names pass
through unchanged. A role neither knows is refused here, never guessed at replay time. Used by
:mod:`aframes_web.activity.replay_run`, which drives the browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compiler.actions import url_template
from compiler.replay import is_destructive
from compiler.segment import normalise_app

OPS = ("click", "type", "navigate")
GUARD_KEYS = ("expect_element", "expect_role", "expect_app", "expect_url_template")

AX_TO_ARIA: dict[str, str] = {
    # macOS accessibility roles (NSAccessibility) -> the ARIA role Chromium gives the same
    # control, which is what Playwright's get_by_role matches.
    "AXButton": "button",
    "AXMenuButton": "button",
    "AXDisclosureTriangle": "button",
    "AXPopUpButton": "combobox",  # a <select>: Chromium exposes it as a combobox
    "AXComboBox": "combobox",
    "AXTextField": "textbox",
    "AXTextArea": "textbox",
    "AXSecureTextField": "textbox",  # password inputs have no ARIA role of their own
    "AXSearchField": "searchbox",
    "AXLink": "link",
    "AXCheckBox": "checkbox",
    "AXSwitch": "switch",
    "AXRadioButton": "radio",
    "AXMenuItem": "menuitem",
    "AXMenuBarItem": "menuitem",
    "AXTab": "tab",
    "AXTabGroup": "tablist",
    "AXSlider": "slider",
    "AXIncrementor": "spinbutton",
    "AXCell": "cell",
    "AXRow": "row",
    "AXHeading": "heading",
    "AXImage": "img",
    "AXList": "list",
    "AXOutline": "tree",
    "AXGroup": "group",
    "AXToolbar": "toolbar",
    "AXMenu": "menu",
    "AXMenuBar": "menubar",
    "AXSheet": "dialog",
    "AXDialog": "dialog",
}
# The roles Playwright's get_by_role accepts (playwright.sync_api.Page.get_by_role), as one
# string the way its documentation lists them.
_ARIA_ROLE_NAMES = (
    "alert alertdialog application article banner blockquote button caption cell checkbox code "
    "columnheader combobox complementary contentinfo definition deletion dialog directory "
    "document emphasis feed figure form generic grid gridcell group heading img insertion link "
    "list listbox listitem log main marquee math menu menubar menuitem menuitemcheckbox "
    "menuitemradio meter navigation none note option paragraph presentation progressbar radio "
    "radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider "
    "spinbutton status strong subscript superscript switch tab table tablist tabpanel term "
    "textbox time timer toolbar tooltip tree treegrid treeitem"
)
ARIA_ROLES = frozenset(_ARIA_ROLE_NAMES.split())
# Browsers as capture names them, after compiler.segment.normalise_app and case folding: the
# only apps a step may expect when the executor is a browser.
BROWSERS = frozenset(
    {
        "chromium",
        "google chrome",
        "google chrome canary",
        "chrome",
        "firefox",
        "firefox developer edition",
        "firefox nightly",
        "safari",
        "safari technology preview",
        "microsoft edge",
        "brave browser",
        "brave",
        "arc",
        "opera",
        "vivaldi",
        "zen browser",
    }
)
_SLOT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


class ReplayError(ValueError):
    """Bad input to a replay (plan, slots, browser): nothing was run."""


class PlanError(ReplayError):
    """The plan is not a guarded plan of the shape ``compiler.replay.plan`` writes."""


class SlotError(ReplayError):
    """Slot values are malformed, missing or not the plan's."""


class BrowserUnavailable(ReplayError):
    """No Chromium (or no Playwright) to replay in."""


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One checked step of a plan, with the ARIA role it is grounded by."""

    index: int
    op: str
    target: str
    role: str | None  # as the plan gives it
    aria: str | None  # ARIA role to ground by (None: any interactive role)
    slot: str | None
    expect_element: str | None
    expect_aria: str | None
    expect_app: str | None
    expect_url_template: str | None
    destructive: bool

    def describe(self) -> str:
        if self.op == "navigate":
            return f"navigate to {self.target}"
        what = f'{self.aria} "{self.target}"' if self.aria else f'"{self.target}"'
        return f"type into {what}" if self.op == "type" else f"click {what}"


def aria_role(role: str | None) -> str | None:
    """The ARIA role of a plan role (an AX role or an ARIA role), or None for no role.

    Raises :class:`PlanError` for a role neither table knows.
    """
    if role is None:
        return None
    if role in AX_TO_ARIA:
        return AX_TO_ARIA[role]
    if role.casefold() in ARIA_ROLES:
        return role.casefold()
    raise PlanError(
        f"role {role!r} has no ARIA equivalent a browser can be searched by; known AX roles: "
        f"{', '.join(sorted(AX_TO_ARIA))}, or any ARIA role."
    )


def is_browser(app: str) -> bool:
    """Whether a captured app name is a web browser (the only app this executor drives)."""
    return normalise_app(app).casefold() in BROWSERS


def url_matches(template: str, url: str) -> bool:
    """Whether ``url`` has the URL template ``template`` (``host/p0/p1/*``).

    The template of ``url`` is computed as the compiler computes it, so a ``*`` segment matches
    one identifier segment (a number, a hash, a long opaque token) and a trailing ``/*`` matches
    any deeper path; the port, query and fragment are not part of a template.
    """
    actual = url_template(url)
    return actual is not None and actual == template.casefold()


def parse_slot(text: str) -> tuple[str, str]:
    """``name=value`` as (name, value); the value may be empty and may hold ``=``."""
    name, sep, value = text.partition("=")
    if not sep or not _SLOT_NAME.fullmatch(name):
        raise SlotError(
            f"slot {text!r} is not name=value (a name of letters, digits, _ . -, then =, "
            "then the value), e.g. --slot amount=12.50"
        )
    return name, value


def parse_slots(items: Iterable[str]) -> dict[str, str]:
    """``name=value`` items as a mapping; a name given twice is an error."""
    out: dict[str, str] = {}
    for item in items:
        name, value = parse_slot(item)
        if name in out:
            raise SlotError(f"slot {name!r} is given twice.")
        out[name] = value
    return out


def _optional_text(value: Any, where: str) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    raise PlanError(f"{where} must be a non-empty string or null, got {value!r}.")


def check_plan(plan: Any) -> tuple[PlanStep, ...]:
    """The plan's steps, checked and grounded; :class:`PlanError` names the first bad field."""
    if not isinstance(plan, Mapping):
        raise PlanError(f"a plan is a JSON object, got {type(plan).__name__}.")
    steps = plan.get("steps")
    if not isinstance(steps, list) or not steps:
        raise PlanError("plan.steps must be a non-empty array of steps.")
    slots = plan.get("slots", [])
    if not isinstance(slots, list):
        raise PlanError("plan.slots must be an array of {name, field}.")
    names: set[str] = set()
    for n, slot in enumerate(slots):
        if not isinstance(slot, Mapping) or not isinstance(slot.get("name"), str):
            raise PlanError(f"plan.slots[{n}] must be an object with a string name.")
        names.add(slot["name"])
    out: list[PlanStep] = []
    for index, step in enumerate(steps):
        where = f"plan.steps[{index}]"
        if not isinstance(step, Mapping):
            raise PlanError(f"{where} must be an object.")
        op = step.get("op")
        if op not in OPS:
            raise PlanError(f"{where}.op is {op!r}; a step is one of {', '.join(OPS)}.")
        target = step.get("target")
        if not isinstance(target, str) or not target.strip():
            raise PlanError(f"{where}.target must be a non-empty string.")
        role = _optional_text(step.get("role"), f"{where}.role")
        guard = step.get("guard", {})
        if not isinstance(guard, Mapping):
            raise PlanError(f"{where}.guard must be an object.")
        unknown = sorted(set(guard) - set(GUARD_KEYS))
        if unknown:
            raise PlanError(
                f"{where}.guard has {', '.join(unknown)}; a guard holds {', '.join(GUARD_KEYS)}."
            )
        expect = {key: _optional_text(guard.get(key), f"{where}.guard.{key}") for key in GUARD_KEYS}
        slot = step.get("slot")
        if op == "type":
            if not isinstance(slot, str) or slot not in names:
                raise PlanError(
                    f"{where} types into {target!r} but its slot {slot!r} is not one of "
                    f"plan.slots ({', '.join(sorted(names)) or 'none'})."
                )
        elif slot is not None:
            raise PlanError(f"{where} is a {op} step; only type steps have a slot.")
        try:
            aria = aria_role(role) if op != "navigate" else None
            expect_aria = aria_role(expect["expect_role"]) if op != "navigate" else None
        except PlanError as problem:
            raise PlanError(f"{where}: {problem}") from None
        out.append(
            PlanStep(
                index,
                op,
                target,
                role,
                aria,
                slot,
                expect["expect_element"],
                expect_aria,
                expect["expect_app"],
                expect["expect_url_template"],
                is_destructive(dict(step)),
            )
        )
    return tuple(out)


def select_plan(document: Any, routine: str | None = None) -> dict[str, Any]:
    """The plan to replay from a plan file: a plan itself (``compiler.replay.plan``), or one
    routine's plan from the routines document ``python -m compiler routines -f json`` writes
    (``routine`` picks it by id; it may be left out when the document holds one routine)."""
    if isinstance(document, Mapping) and "steps" in document:
        if routine is not None and document.get("routine") != routine:
            raise PlanError(f"this plan is routine {document.get('routine')!r}, not {routine!r}.")
        return dict(document)
    items = document.get("routines") if isinstance(document, Mapping) else None
    if not isinstance(items, list):
        raise PlanError(
            "expected a plan (an object with steps) or a routines document (an object with "
            "routines, as python -m compiler routines -f json writes)."
        )
    ids = [item.get("id") if isinstance(item, Mapping) else None for item in items]
    if routine is None:
        if len(items) != 1:
            listed = ", ".join(str(i) for i in ids) or "none"
            raise PlanError(
                f"the routines document holds {len(items)} routines ({listed}); pick one with "
                "--routine ID."
            )
        routine = ids[0]
    if routine not in ids:
        raise PlanError(
            f"no routine {routine!r} in the routines document (it holds "
            f"{', '.join(str(i) for i in ids) or 'none'})."
        )
    chosen = items[ids.index(routine)].get("plan")
    if not isinstance(chosen, Mapping):
        raise PlanError(f"routine {routine!r} of the routines document has no plan object.")
    return dict(chosen)


def check_slots(
    plan: Mapping[str, Any], steps: Sequence[PlanStep], values: Mapping[str, str]
) -> dict[str, str]:
    """The slot values, once every type step has one and none is unknown to the plan."""
    fields = {slot["name"]: slot.get("field") for slot in plan.get("slots", [])}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise SlotError(
            f"unknown slot{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; this plan's "
            f"slots are {', '.join(sorted(fields)) or 'none'}."
        )
    needed = dict.fromkeys(step.slot for step in steps if step.slot is not None)
    missing = [name for name in needed if name not in values]
    if missing:
        listed = ", ".join(f'{name} (field "{fields.get(name) or name}")' for name in missing)
        example = " ".join(f"--slot {name}=..." for name in missing)
        raise SlotError(f"no value for slot{'s' if len(missing) > 1 else ''} {listed}; {example}")
    return {name: values[name] for name in needed}
