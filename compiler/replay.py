"""The two replay rungs of a routine (Activity Frames §7.1): the guarded skill plan and the
minimal replay script. Pure: the executor that drives a browser lives outside the compiler.

A plan step is ``{op, target, role, guard}`` (``slot`` too for typing: the value is a parameter,
never the recorded text). Its guard holds only what every recorded occurrence agreed on, so a
replay that finds something else stops instead of acting somewhere unexpected (the fail-safe):

- ``expect_app``: the app the step happened in;
- ``expect_element`` / ``expect_role``: for click and type, the element's name and role when the
  role is known (a replay grounds an element by accessibility role and name; a bare name could
  be any text on the page), otherwise None;
- ``expect_url_template``: the page template every occurrence was on (for ``navigate``, the
  template it arrives at, checked after navigating), otherwise None.

Guard coverage is the share of steps with an element or URL guard. Plans are deterministic:
the same routine gives a byte-identical ``json.dumps(plan, sort_keys=True)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from compiler.actions import one_line
from compiler.routines import Routine, Step

DESTRUCTIVE_VERBS = (
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
)
"""§7.1: a step whose target begins with one of these runs only with an explicit allow flag."""

_DESTRUCTIVE = re.compile(r"^\W*(?:" + "|".join(DESTRUCTIVE_VERBS) + r")\b", re.IGNORECASE)
_SLOT_CHARS = re.compile(r"[^0-9a-z]+")


def is_destructive(step: Mapping[str, Any]) -> bool:
    """Whether a plan step's target begins with a destructive verb (whole word, any case)."""
    if not isinstance(step, Mapping) or not isinstance(step.get("target"), str):
        raise ValueError("a plan step is a mapping with a string 'target'")
    return bool(_DESTRUCTIVE.match(one_line(step["target"])))


def _slot_names(steps: tuple[Step, ...]) -> list[str | None]:
    """A value slot per typing step, named for its field (``customer``, ``customer_2``)."""
    names: list[str | None] = []
    taken: set[str] = set()
    for step in steps:
        if step.op != "type":
            names.append(None)
            continue
        base = _SLOT_CHARS.sub("_", step.target.casefold()).strip("_") or "value"
        name, number = base, 1
        while name in taken:  # "Amount", "Amount", "Amount 2": amount, amount_2, amount_2_2
            number += 1
            name = f"{base}_{number}"
        taken.add(name)
        names.append(name)
    return names


def _guard(step: Step) -> dict[str, str | None]:
    element = step.op in ("click", "type") and step.role is not None
    page = step.target if step.op == "navigate" else step.url_template
    return {
        "expect_app": step.app,
        "expect_element": one_line(step.target) if element else None,
        "expect_role": step.role if element else None,
        "expect_url_template": page,
    }


def _check(routine: Routine) -> None:
    if not isinstance(routine, Routine):
        raise ValueError(f"expected a compiler.routines.Routine, not {type(routine).__name__}")
    if not routine.steps:
        raise ValueError(f"routine {routine.id} has no steps")
    for index, step in enumerate(routine.steps):
        if step.op not in ("click", "type", "navigate"):
            raise ValueError(
                f"routine {routine.id} step {index + 1}: op {step.op!r} is not click, type "
                "or navigate"
            )
        if not one_line(step.target):
            raise ValueError(f"routine {routine.id} step {index + 1} has an empty target")


def plan(routine: Routine) -> dict[str, Any]:
    """The guarded skill plan of a routine."""
    _check(routine)
    names = _slot_names(routine.steps)
    steps: list[dict[str, Any]] = []
    slots: list[dict[str, str]] = []
    guarded = 0
    for step, name in zip(routine.steps, names, strict=True):
        guard = _guard(step)
        guarded += guard["expect_element"] is not None or guard["expect_url_template"] is not None
        item: dict[str, Any] = {
            "op": step.op,
            "target": one_line(step.target),
            "role": step.role,
            "guard": guard,
        }
        if name is not None:
            item["slot"] = name
            slots.append({"name": name, "field": one_line(step.target)})
        steps.append(item)
    return {
        "routine": routine.id,
        "granularity": routine.granularity,
        "steps": steps,
        "slots": slots,
        "guard_coverage": round(guarded / len(steps), 4),
    }


def script(routine: Routine) -> str:
    """The minimal replay script: one line per step, typed values as ``{slot}``."""
    _check(routine)
    lines = []
    for step, name in zip(routine.steps, _slot_names(routine.steps), strict=True):
        target = one_line(step.target)
        if step.op == "type":
            lines.append(f"type {target} {{{name}}}")
        else:
            lines.append(f"{step.op} {target}")
    return "\n".join(lines) + "\n"
