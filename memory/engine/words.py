"""Memory in a person's words: what a fact, a regularity and a decision say (ProactMem §3–§4).

What a person reads on a page or an agent in a tool result is a sentence in the reader's
terms, never an internal encoding (a predicate path, a canonical key such as ``["str",
"meal"]``). Each segment kind of the extractors (``memory/engine/extract``) has a phrase;
anything without one is said plainly from its parts. Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, time
from typing import Any

from memory.engine.records import Predicate, Proposal

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
ROOM_FIELDS = frozenset({"room", "place"})
# A home sensor's kind, when nothing names the device (CASAS ids): what using it means.
DEVICE_KINDS = {
    "door": "a door opened",
    "magnetic": "a door or cupboard opened",
    "electric": "an appliance switched on",
    "lamp": "a lamp switched on",
    "pressure": "a seat or bed in use",
    "flush": "the toilet flushed",
    "item": "an item taken",
    "motion": "movement",
    "pir": "movement",
}
CODE_KINDS = {
    "pull_request": "a pull request",
    "issue": "an issue",
    "review": "a review",
    "ci_run": "a CI run",
    "release": "a release",
}
CODE_ACTIONS = {
    "opened": "opened",
    "closed": "closed",
    "reopened": "reopened",
    "created": "commented on",
    "submitted": "reviewed",
    "review_requested": "with a review requested",
    "labeled": "labelled",
    "assigned": "assigned",
    "published": "published",
    "synchronize": "updated with new commits",
}
# A source's event type (extract/code.KINDS) as what happened; ``{noun}`` is the object's.
CODE_TYPES = {
    "PullRequestEvent": "activity on {noun}",
    "IssuesEvent": "activity on {noun}",
    "IssueCommentEvent": "a comment on {noun}",
    "issue_comment": "a comment on {noun}",
    "issue_event": "{noun} updated",
    "pr_opened": "{noun} opened",
    "pr_merged": "{noun} merged",
    "pr_closed": "{noun} closed",
    "issue_opened": "{noun} opened",
    "issue_closed": "{noun} closed",
    "PullRequestReviewEvent": "{noun} submitted",
    "pr_review": "{noun} submitted",
    "PullRequestReviewCommentEvent": "a review comment",
    "pr_review_comment": "a review comment",
    "workflow_run": "a CI run",
    "WorkflowRunEvent": "a CI run",
    "workflow_job": "a CI job",
    "WorkflowJobEvent": "a CI job",
    "CheckRunEvent": "a CI check",
    "CheckSuiteEvent": "a CI check suite",
    "StatusEvent": "a commit status",
    "ReleaseEvent": "a release published",
    "CreateEvent": "a tag created",
}
# A CI run's conclusion (GitHub's values) as what happened to it.
CONCLUSIONS = {
    "failure": "failed",
    "success": "passed",
    "cancelled": "was cancelled",
    "timed_out": "timed out",
    "skipped": "was skipped",
    "action_required": "needs action",
}
SPORTS_KINDS = {
    "step_bout": "a walk",
    "active_hour": "an active hour",
    "sedentary": "a sedentary stretch",
    "day_start": "the first steps of the day",
}


# A room a home's sensors name by one word where people say two.
ROOM_NOUNS = {"living": "living room", "dining": "dining room", "laundry": "laundry room"}


def name_words(name: str) -> str:
    """A sensor's or room's own name as words: ``FrontDoor`` -> ``front door``,
    ``kitchen_light`` -> ``kitchen light``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name.replace("_", " ").replace("-", " "))
    return " ".join(spaced.split()).lower()


def room_words(room: Any) -> str:
    """A room as a person says it: ``Living`` -> ``living room``, ``LivingRoom`` -> ``living
    room``, ``Kitchen`` -> ``kitchen``."""
    said = name_words(str(room))
    return ROOM_NOUNS.get(said, said)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def phrase(pred: Predicate, names: Mapping[str, str] | None = None) -> str:
    """What a predicate says happened: ``activity in the Kitchen``, ``a walk``; a sensor by
    its display name in ``names`` (sensor id -> name, the entity's names table) if there."""
    kind, *rest = pred.path
    value = pred.value
    if names and rest and rest[-1] == "sensor" and isinstance(value, str):
        value = names.get(value, value)
    if not rest:  # a kind without a field: nothing more specific to say than its parts
        return f"{kind.replace('_', ' ')} {_text(value)}"
    field = rest[-1]
    if kind == "room_presence":
        if field in ROOM_FIELDS:
            return f"activity in the {room_words(value)}"
        if field == "sensor":
            return f"activity at the {value}"
        return DEVICE_KINDS.get(str(value).lower(), "movement")
    if kind == "device_use":
        if field == "sensor":
            return f"the {value} in use"
        if field in ROOM_FIELDS:
            return f"something switched on or opened in the {room_words(value)}"
        return DEVICE_KINDS.get(str(value).lower(), f"the {value} sensor on")
    if kind == "day_start" and field in ROOM_FIELDS | {"sensor"}:
        where = room_words(value) if field in ROOM_FIELDS else value
        return f"getting up (first activity in the {where})"
    if kind in SPORTS_KINDS:
        return SPORTS_KINDS[kind]
    if kind == "decision_point":
        if field == "type":
            return "a decision point"
        if field == "location":
            return f"a decision point at {value}"
        if field == "recognized_activity":
            return f"a decision point while {value}"
        if isinstance(value, bool):  # available, in_transit, snoozed, connected
            said = field.replace("_", " ")
            return f"a decision point {'while' if value else 'while not'} {said}"
        return f"a decision point with {field.replace('_', ' ')} {_text(value)}"
    if kind in CODE_KINDS:
        return _code(kind, field, value)
    if kind == "frame":
        if field == "app":
            return f"working in {value}"
        if field == "site":
            return f"{value} open"
        if rest[:1] == ["page"]:
            return f"a {value} page" if field == "kind" else f"the page {value}"
    if kind in ("first_activity", "last_activity") and field == "app":
        when = "starting" if kind == "first_activity" else "ending"
        return f"{when} the day in {value}"
    parts = " ".join(p.replace("_", " ") for p in pred.path)
    return f"{parts} {_text(value)}"


def _code(kind: str, field: str, value: Any) -> str:
    noun = CODE_KINDS[kind]
    if field == "action" and isinstance(value, str):
        return f"{noun} {CODE_ACTIONS.get(value, value.replace('_', ' '))}"
    if field == "event" and isinstance(value, str):
        return f"{noun} {CODE_ACTIONS.get(value, value.replace('_', ' '))}"
    if field == "conclusion" and isinstance(value, str):
        return f"{noun} that {CONCLUSIONS.get(value, value.replace('_', ' '))}"
    if field == "merged":
        return f"{noun} merged" if value is True else f"{noun} closed unmerged"
    if field == "state" and isinstance(value, str):
        return f"{noun} {value.lower()}"
    if field == "name":
        return f"{noun} of {value}"
    if field == "type" and isinstance(value, str):
        template = CODE_TYPES.get(value)
        return template.format(noun=noun) if template else f"{noun} ({value.replace('_', ' ')})"
    return f"{noun} with {field.replace('_', ' ')} {_text(value)}"


def clock(t: time) -> str:
    return "midnight" if t == time.max else t.strftime("%H:%M")


def days(weekdays: Iterable[int] | None) -> str:
    """``every day``, ``on weekdays``, ``at weekends`` or ``on Mon, Wed``."""
    if weekdays is None:
        return "every day"
    chosen = sorted(set(weekdays))
    if chosen == [0, 1, 2, 3, 4]:
        return "on weekdays"
    if chosen == [5, 6]:
        return "at weekends"
    return "on " + ", ".join(WEEKDAYS[d] for d in chosen)


def regularity(p: Proposal, names: Mapping[str, str] | None = None) -> str:
    """The sentence of a regularity: ``After getting up (first activity in the Bedroom),
    activity in the Kitchen between 07:00 and 08:00, every day.``"""
    start, end = p.window
    behavior = phrase(p.behavior, names)
    return (
        f"After {phrase(p.trigger, names)}, {behavior} between {clock(start)} and {clock(end)}, "
        f"{days(p.weekdays)}."
    )


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def support(n_f: int, n_v: int) -> str:
    """``9 of the last 11 times``: fulfilled of the days its trigger came."""
    return f"{n_f} of the last {plural(n_f + n_v, 'time')}"


def deviation(
    p: Proposal,
    occurrence: str,
    now: datetime,
    n_f: int,
    n_v: int,
    intro: str = "",
    names: Mapping[str, str] | None = None,
) -> str:
    """Why a regularity calls for a service now, in words, with its evidence:
    ``Usually activity in the Kitchen by 08:00 after getting up ... (9 of the last 11 times);
    none yet today at 08:55.``"""
    _, end = p.window
    on = "" if p.weekdays is None else f" {days(p.weekdays)}"
    usual = (
        f"Usually {phrase(p.behavior, names)} by {clock(end)}{on} after {phrase(p.trigger, names)}"
    )
    if n_f + n_v:
        usual += f" ({support(n_f, n_v)})"
    if occurrence == "pending":
        status = f"not yet at {now.strftime('%H:%M')}"
    else:
        status = f"none yet today at {now.strftime('%H:%M')}"
    text = f"{usual}; {status}."
    return f"{intro} {text}" if intro else text


def plain(value: Any) -> Any:
    """A stored canonical key (``["str", "meal"]``, ``{"set": [...]}``) as the value it stands
    for, for showing; anything else as it is."""
    if isinstance(value, dict) and set(value) == {"set"} and isinstance(value["set"], list):
        return [plain(v) for v in value["set"]]
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and value[0] in ("str", "num", "bool", "none", "time", "raw")
    ):
        return value[1]
    return value


def values(items: Sequence[Any]) -> str:
    return ", ".join(_text(plain(v)) for v in items)


def said(value: Any) -> str:
    """A stored value (canonical or not) as text: ``meal``, ``Kitchen, Bedroom``, ``yes``."""
    shown = plain(value)
    if isinstance(shown, list | tuple):
        return values(shown) if shown else "none"
    if shown is None:
        return "none"
    return _text(shown)
