"""The per-scope service catalogue: what an agent may offer, and when (ProactMem, issue 6).

A *service* is one thing the agent can do for an entity of a scope. It *applies* to a
regularity by the segment kind of the regularity's behavior (the first part of the behavior
predicate's path: ``step_bout``, ``room_presence``, ...), and it is *actionable* at an event
when that event, read on its own, gives the agent a moment to act (a decision point where the
participant is available, an event on an open pull request). Policies pick services from here;
intervention control reads each scope's episode key and signature context from here too, so the
scope-specific readings of a payload live in this one module.

Payloads are the stored ones (``aframes_web/streams/importers``): sports, home and code events are
``observation`` events ``{"type", "value", "attributes"}``, desktop events ``snapshot`` events
``{"app", "window", "url", "focused"}``. ``private`` is never read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

from compiler.entities import site_of
from compiler.segment import is_lock_app, normalise_app
from memory.engine.control import Proposed, Scope
from memory.engine.extract.code import KINDS as CODE_KINDS
from memory.engine.extract.home import CONTACT_TYPES, MOTION_TYPES, ROOM_KEYS
from memory.engine.records import EngineEvent, Proposal

# The segment kinds of the trajectory extractors (memory/engine/extract/): a behavior's segment
# kind is what a service applies to.
SPORTS_WALK_KINDS = frozenset({"step_bout"})
HOME_ROUTINE_KINDS = frozenset({"room_presence", "door", "sensor_activity"})
CODE_REVIEW_KINDS = frozenset({"review", "pull_request"})
CODE_CI_KINDS = frozenset({"ci_run"})
CODE_ISSUE_KINDS = frozenset({"issue"})
DESKTOP_FOCUS_KINDS = frozenset({"frame", "first_activity", "last_activity"})

# The repository object of a code segment kind (extract/code.KINDS): a review is on a pull
# request; a release is no object that stays open.
OBJECT_OF_KIND: Mapping[str, str] = MappingProxyType(
    {"pull_request": "pull_request", "review": "pull_request", "issue": "issue", "ci_run": "ci_run"}
)
# What ends a pull request or issue: after one of these it is no longer open.
CLOSED_TYPES = frozenset({"pr_merged", "pr_closed", "issue_closed"})
CLOSED_ACTIONS = frozenset({"closed", "merged", "deleted", "transferred"})
CI_FAILED = frozenset({"failure", "timed_out", "startup_failure", "action_required"})

# Home activity families (our choice; the paper names family + room set but not the mapping).
# A sensor event carries no activity (the labels are private), so the family is read from where
# it fired: the first word below found in the room (``room``, ``place``, then the sensor name),
# lower-cased. A contact sensor matching none is ``outing`` (front doors are the common
# contact sensor in CASAS homes); any other unmatched event is ``presence``.
HOME_FAMILIES: tuple[tuple[str, str], ...] = (
    ("kitchen", "meal"),
    ("dining", "meal"),
    ("fridge", "meal"),
    ("cooktop", "meal"),
    ("microwave", "meal"),
    ("toaster", "meal"),
    ("bath", "hygiene"),
    ("toilet", "hygiene"),
    ("shower", "hygiene"),
    ("basin", "hygiene"),
    ("bed", "sleep"),
    ("living", "leisure"),
    ("lounge", "leisure"),
    ("seat", "leisure"),
    ("office", "work"),
    ("study", "work"),
    ("entr", "outing"),  # entrance, entry
    ("maindoor", "outing"),
    ("hall", "outing"),
)
HOME_DEFAULT_FAMILY = "presence"
HOME_CONTACT_FAMILY = "outing"


@dataclass(frozen=True, slots=True)
class Service:
    """One service of a scope: its intent, what it applies to, when it can act, what it says.

    ``mode`` is how it is delivered (code's signature compares it).
    """

    intent: str
    behavior_kinds: frozenset[str]
    when: Callable[[EngineEvent], bool]
    message: str
    mode: str = "notification"

    def applies(self, proposal: Proposal) -> bool:
        """Whether the regularity's behavior is of a segment kind this service serves."""
        path = proposal.behavior.path
        return bool(path) and path[0] in self.behavior_kinds

    def actionable(self, current: EngineEvent) -> bool:
        """Whether ``current``, on its own, gives this service a moment to act."""
        try:
            return self.when(current)
        except (AttributeError, TypeError, ValueError):
            return False  # a malformed payload is no moment to act


# -- payload readings ---------------------------------------------------------------------------


def attributes(event: EngineEvent) -> Mapping[str, Any]:
    found = event.payload.get("attributes")
    return found if isinstance(found, Mapping) else MappingProxyType({})


def payload_type(event: EngineEvent) -> str:
    found = event.payload.get("type")
    return found if isinstance(found, str) else ""


def truthy(value: Any) -> bool:
    """True, 1 or a yes-word (HeartSteps flags are stored as booleans; older rows as text)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value == 1
    return isinstance(value, str) and value.strip().lower() in ("true", "t", "1", "yes")


def is_decision_point(event: EngineEvent) -> bool:
    return event.kind == "observation" and payload_type(event) == "decision_point"


def is_steps(event: EngineEvent) -> bool:
    return event.kind == "observation" and payload_type(event) == "steps"


def walk_moment(event: EngineEvent) -> bool:
    """Sports: a decision point where the participant is available and neither in transit nor
    snoozed (HeartSteps sends nothing otherwise: availability rules of the trial)."""
    a = attributes(event)
    return (
        is_decision_point(event)
        and truthy(a.get("available"))
        and not truthy(a.get("in_transit"))
        and not truthy(a.get("snoozed"))
    )


def is_motion(event: EngineEvent) -> bool:
    return event.kind == "observation" and payload_type(event).lower() in MOTION_TYPES


def home_room(event: EngineEvent) -> str | None:
    a = attributes(event)
    for key in ROOM_KEYS:
        value = a.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def activity_family(event: EngineEvent) -> str:
    """The home activity family of a sensor event (see HOME_FAMILIES)."""
    a = attributes(event)
    for key in ROOM_KEYS:
        value = a.get(key)
        if not isinstance(value, str):
            continue
        text = value.lower()
        for word, family in HOME_FAMILIES:
            if word in text:
                return family
    if payload_type(event).lower() in CONTACT_TYPES:
        return HOME_CONTACT_FAMILY
    return HOME_DEFAULT_FAMILY


def code_object(event: EngineEvent) -> tuple[str, int | None]:
    """The repository object an event concerns: (kind, number). Kinds: ``pull_request``,
    ``issue`` (a comment on a pull request is the pull request's), ``ci_run``, else the
    payload type itself; the number is None where the event names none."""
    kind = payload_type(event)
    a = attributes(event)
    number = a.get("number")
    number = number if isinstance(number, int) and not isinstance(number, bool) else None
    found = OBJECT_OF_KIND.get(CODE_KINDS.get(kind, ""))
    if found == "issue" and a.get("pull_request") is True:
        return "pull_request", number
    if found == "ci_run":
        run = a.get("run_id")
        return found, run if isinstance(run, int) and not isinstance(run, bool) else None
    if found is not None:
        return found, number
    return kind or "event", number


def is_open(event: EngineEvent) -> bool:
    """Whether the event is on a pull request or issue that is still open after it: it names a
    number and neither closes the object nor reports it closed or merged."""
    kind, number = code_object(event)
    if event.kind != "observation" or kind not in ("pull_request", "issue") or number is None:
        return False
    a = attributes(event)
    state = a.get("state")
    return not (
        payload_type(event) in CLOSED_TYPES
        or a.get("action") in CLOSED_ACTIONS
        or (isinstance(state, str) and state.lower() in ("closed", "merged"))
        or a.get("merged") is True
    )


def open_pull_request(event: EngineEvent) -> bool:
    return is_open(event) and code_object(event)[0] == "pull_request"


def open_issue(event: EngineEvent) -> bool:
    return is_open(event) and code_object(event)[0] == "issue"


def ci_moment(event: EngineEvent) -> bool:
    """A failed CI run, or any event on an open pull request (its CI is what follows up)."""
    conclusion = attributes(event).get("conclusion")
    failed = isinstance(conclusion, str) and conclusion.lower() in CI_FAILED
    return (code_object(event)[0] == "ci_run" and failed) or open_pull_request(event)


def focused_snapshot(event: EngineEvent) -> bool:
    """Desktop: a snapshot of an app, not a lock screen, that is not reported unfocused."""
    app = event.payload.get("app")
    return (
        event.kind == "snapshot"
        and isinstance(app, str)
        and bool(app.strip())
        and not is_lock_app(normalise_app(app))
        and event.payload.get("focused") is not False
    )


def desktop_app(event: EngineEvent) -> str:
    """The app as the compiler names it (``normalise_app``), so episodes match frames."""
    app = event.payload.get("app")
    return normalise_app(app) if isinstance(app, str) else ""


def desktop_site(event: EngineEvent) -> str | None:
    url = event.payload.get("url")
    return site_of(url) if isinstance(url, str) else None


# -- the catalogue ------------------------------------------------------------------------------

CATALOGUE: Mapping[Scope, tuple[Service, ...]] = MappingProxyType(
    {
        "sports": (
            Service(
                "suggest_walk",
                SPORTS_WALK_KINDS,
                walk_moment,
                "You usually take a walk around now; a short one fits in.",
            ),
        ),
        "home": (
            Service(
                "check_in_routine",
                HOME_ROUTINE_KINDS,
                is_motion,
                "Your usual routine has not happened yet today; is everything all right?",
            ),
        ),
        "code": (
            Service(
                "review_nudge",
                CODE_REVIEW_KINDS,
                open_pull_request,
                "This pull request usually gets a review by now; a reviewer may need a nudge.",
                mode="comment",
            ),
            Service(
                "ci_follow_up",
                CODE_CI_KINDS,
                ci_moment,
                "CI usually runs here by now; check the pipeline for this change.",
            ),
            Service(
                "triage_nudge",
                CODE_ISSUE_KINDS,
                open_issue,
                "Issues like this one usually see activity by now; it may need triage.",
                mode="comment",
            ),
        ),
        "desktop": (
            Service(
                "resume_focus",
                DESKTOP_FOCUS_KINDS,
                focused_snapshot,
                "You usually work on this around now; pick up where you left off?",
            ),
        ),
    }
)


def services(scope: Scope) -> tuple[Service, ...]:
    """The scope's services, in the order policies try them."""
    try:
        return CATALOGUE[scope]
    except KeyError:
        raise ValueError(
            f"unknown scope {scope!r}; use one of sports, home, code, desktop"
        ) from None


def intents(scope: Scope) -> frozenset[str]:
    return frozenset(s.intent for s in services(scope))


def service(scope: Scope, intent: str) -> Service | None:
    return next((s for s in services(scope) if s.intent == intent), None)


# -- episodes and control context ---------------------------------------------------------------


def episode(scope: Scope, current: EngineEvent, now_local: datetime) -> str:
    """The caller's episode key of ``current`` for intervention control and labels.

    sports: the local day (one walk suggestion episode per day). home: the local day and the
    event's activity family (``2024-05-01/meal``). code: the repository object,
    ``pull_request:42`` (the entity is the repository; an event naming no object is its type
    and the local day). desktop: the local day and the app (``2024-05-01/Code``).
    """
    day = now_local.date().isoformat()
    if scope == "sports":
        return day
    if scope == "home":
        return f"{day}/{activity_family(current)}"
    if scope == "code":
        kind, number = code_object(current)
        return f"{kind}:{number}" if number is not None else f"{kind}@{day}"
    if scope == "desktop":
        return f"{day}/{desktop_app(current)}"
    raise ValueError(f"unknown scope {scope!r}; use one of sports, home, code, desktop")


def control_context(
    scope: Scope,
    current: EngineEvent,
    recent: Sequence[EngineEvent],
    proposed: Proposed,
) -> tuple[Mapping[str, Any], tuple[Mapping[str, Any], ...]]:
    """The context and history ``control.signature`` reads for ``current``.

    ``recent`` is the prior events, oldest first (a trailing ``current`` is ignored, so the
    decision context's ``recent`` may be passed as is). sports: the payload as stored (the
    signature reads its attributes). home: ``{activity_family, rooms}`` of the current event,
    and the same of each prior home sensor observation as history (ambient readings included:
    they are what was seen). code: the object (``repo`` from the attributes when a source has
    it, else None: the entity is the repository), ``object_kind``, ``number``, and the
    intervention's delivery: the service's ``mode``, ``recipient`` (the pull request's or
    issue's author, else the actor), ``content`` (the proposed message) and
    ``firing_condition`` (the payload type and action that fired it). desktop: app and site.
    """
    prior = tuple(e for e in recent if e.id != current.id)
    if scope == "sports":
        return current.payload, ()
    if scope == "home":
        history = tuple(_home_context(e) for e in prior if e.kind == "observation")
        return _home_context(current), history
    if scope == "code":
        a = attributes(current)
        kind, number = code_object(current)
        found = service("code", proposed.intent)
        recipient = a.get("author") or a.get("actor")
        action = a.get("action")
        condition = payload_type(current) + (f":{action}" if isinstance(action, str) else "")
        context: dict[str, Any] = {
            "repo": a.get("repo"),
            "object_kind": kind,
            "number": number,
            "mode": found.mode if found is not None else None,
            "recipient": recipient if isinstance(recipient, str) else None,
            "content": proposed.message,
            "firing_condition": condition,
        }
        return context, ()
    if scope == "desktop":
        return {"app": desktop_app(current), "site": desktop_site(current)}, ()
    raise ValueError(f"unknown scope {scope!r}; use one of sports, home, code, desktop")


def _home_context(event: EngineEvent) -> Mapping[str, Any]:
    room = home_room(event)
    return {"activity_family": activity_family(event), "rooms": [] if room is None else [room]}
