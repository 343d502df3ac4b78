"""The per-scope service catalogue: what an agent may offer, and when (ProactiveStream's
services; ProactMem B.3).

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

The current "event" may also be a ProactiveStream decision point (kind ``decision_point``,
``benchmark/streams``): its payload is the point's public fields, a home's segment
(``home_segment``: rooms, devices, quiet minutes), a sports slot (``sports_slot``: steps,
intensity, whether the tracker was worn) or a desktop frame boundary (``frame_end``: app,
site, minutes); a code point is the native event itself. The services' intents are the ids of
the shared catalogue ``benchmark/streams/catalogue.py`` (a test holds them equal).
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
from memory.engine.records import POINT_KIND, EngineEvent, Proposal

# The segment kinds of the trajectory extractors (memory/engine/extract/): a behavior's segment
# kind is what a service applies to.
SPORTS_WALK_KINDS = frozenset({"step_bout", "active_hour"})
HOME_ROUTINE_KINDS = frozenset({"room_presence", "device_use"})
NO_KINDS: frozenset[str] = frozenset()  # a service no regularity leads to (other policies may)
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
    ("medic", "medication"),  # a medicine cabinet, a medication box (not "pill": a pillow)
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
# The routines a caregiver checks on when they have not happened by their usual time: meals, and
# medication where a sensor names it. When and where someone washes, dresses or sits is their
# own business (blind annotators declined such checks in the validity study of the home
# labels). Being up is checked apart: the day's first activity outside the places of sleep.
CARE_FAMILIES = frozenset({"meal", "medication"})
HOME_CONTACT_FAMILY = "outing"
# Our choice: a home segment shows someone about when it had events, or its last event is at
# most this many minutes old at its close.
HOME_PRESENT_QUIET_MIN = 50


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
    # A plain dict or none at all, the common cases, before the abstract type's check.
    if type(found) is dict:
        return found
    return found if found is not None and isinstance(found, Mapping) else _NO_ATTRIBUTES


_NO_ATTRIBUTES: Mapping[str, Any] = MappingProxyType({})


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
        found = _family_of(value) if isinstance(value, str) else None
        if found is not None:
            return found
    if payload_type(event).lower() in CONTACT_TYPES:
        return HOME_CONTACT_FAMILY
    return HOME_DEFAULT_FAMILY


def code_object(event: EngineEvent) -> tuple[str, int | None]:
    """The repository object an event concerns: (kind, number). Kinds: ``pull_request``,
    ``issue`` (a comment on a pull request is the pull request's), ``ci_run``, else the
    payload type itself; the number is None where the event names none."""
    kind = code_kind(event)
    a = attributes(event)
    if kind == "ci_run" and _object_of(payload_type(event)) == "ci_run":
        run = a.get("run_id")
        return kind, run if isinstance(run, int) and not isinstance(run, bool) else None
    number = a.get("number")
    return kind, number if isinstance(number, int) and not isinstance(number, bool) else None


def code_kind(event: EngineEvent) -> str:
    """The kind of :func:`code_object` alone (every event is asked whether it is a check run)."""
    kind = payload_type(event)
    found = _object_of(kind)
    if found == "issue" and attributes(event).get("pull_request") is True:
        return "pull_request"
    return found if found is not None else kind or "event"


def _object_of(payload_kind: str) -> str | None:
    return OBJECT_OF_KIND.get(CODE_KINDS.get(payload_kind, ""))


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


def failed_run(event: EngineEvent) -> bool:
    """Whether the event reports a check run that concluded in failure (its ``conclusion``)."""
    conclusion = attributes(event).get("conclusion")
    return isinstance(conclusion, str) and conclusion.lower() in CI_FAILED


def ci_moment(event: EngineEvent) -> bool:
    """A failed CI run, or any event on an open pull request (its CI is what follows up)."""
    return (code_object(event)[0] == "ci_run" and failed_run(event)) or open_pull_request(event)


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
    return site_of(event.payload.get("url"))  # None for a missing or non-text URL


# -- decision points ----------------------------------------------------------------------------


def is_point(event: EngineEvent, point_type: str | None = None) -> bool:
    """A ProactiveStream decision point (of ``point_type``, when given)."""
    return event.kind == POINT_KIND and (point_type is None or payload_type(event) == point_type)


def point_rooms(event: EngineEvent) -> dict[str, int]:
    """A home segment's activations per room."""
    rooms = event.payload.get("rooms")
    if not isinstance(rooms, Mapping):
        return {}
    return {
        str(k): int(v)
        for k, v in rooms.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def home_present(event: EngineEvent) -> bool:
    """A home segment in which someone was about (``HOME_PRESENT_QUIET_MIN``)."""
    if not is_point(event, "home_segment"):
        return False
    events = event.payload.get("events")
    quiet = event.payload.get("quiet_min")
    if isinstance(events, int) and events > 0:
        return True
    return (
        isinstance(quiet, int | float)
        and not isinstance(quiet, bool)
        and (quiet <= HOME_PRESENT_QUIET_MIN)
    )


def home_motion_moment(event: EngineEvent) -> bool:
    """A raw motion event, or a home segment with someone about: a check-in can be answered."""
    return is_motion(event) or home_present(event)


def home_point(event: EngineEvent) -> bool:
    """Any home segment: a reminder about a door or a still home reaches a resident who is out."""
    return is_point(event, "home_segment")


def sports_reachable(event: EngineEvent) -> bool:
    """A sports slot at which the person can be reached: HeartSteps' own availability rules
    where the point has them, otherwise a tracker that recorded steps or intensity in the hour
    before (a silent tracker was off, or its wearer asleep)."""
    if not is_point(event, "sports_slot"):
        return False
    p = event.payload
    if "available" in p and p.get("available") is not None:
        return truthy(p.get("available")) and not (
            truthy(p.get("in_transit")) or truthy(p.get("snoozed"))
        )
    return p.get("worn_last_60") is True


# Our choice: an hour before a slot with this many sedentary minutes (or, from hourly rows
# alone, fewer steps than a sedentary hour holds) was spent sitting.
SITTING_MIN = 50
SITTING_HOUR_STEPS = 225


def sitting(event: EngineEvent) -> bool:
    """A reachable slot after an hour spent mostly sitting."""
    if not sports_reachable(event):
        return False
    p = event.payload
    minutes = p.get("sedentary_min_last_60")
    if isinstance(minutes, int | float) and not isinstance(minutes, bool):
        return minutes >= SITTING_MIN
    steps = p.get("steps_last_60")
    return (
        isinstance(steps, int | float)
        and not isinstance(steps, bool)
        and (steps < SITTING_HOUR_STEPS)
    )


def walk_or_slot(event: EngineEvent) -> bool:
    """A HeartSteps walk moment, or a reachable slot, after an hour of sitting too.

    Which nudge a slot after sitting gets is not the catalogue's to say: a walk where that hour
    is usually an active one for this person (the walk they usually take, which stands them up
    as well), a break to stand up where sitting then is what is unusual (the policy's judgement,
    ``usual.py``, in catalogue order). The sports reference labeler orders the two the same
    way."""
    return walk_moment(event) or sports_reachable(event)


def desktop_point(event: EngineEvent) -> bool:
    """A frame boundary: the person is at the computer."""
    return is_point(event, "frame_end")


def focus_moment(event: EngineEvent) -> bool:
    return focused_snapshot(event) or desktop_point(event)


# -- the catalogue ------------------------------------------------------------------------------

CATALOGUE: Mapping[Scope, tuple[Service, ...]] = MappingProxyType(
    {
        "sports": (
            Service(
                "suggest_walk",
                SPORTS_WALK_KINDS,
                walk_or_slot,
                "You usually take a walk around now; a short one fits in.",
            ),
            Service(
                "step_goal_nudge",
                NO_KINDS,
                sports_reachable,
                "You are behind your usual step count for this time of day; a walk would help "
                "you catch up.",
            ),
            Service(
                "stand_break",
                SPORTS_WALK_KINDS,
                sitting,
                "You have been sitting for most of the last hour; stand up and move for a few "
                "minutes.",
            ),
        ),
        "home": (
            Service(
                "check_in_routine",
                HOME_ROUTINE_KINDS,
                home_motion_moment,
                "Your usual routine has not happened yet today; is everything all right?",
            ),
            Service(
                "check_device",
                NO_KINDS,
                home_point,
                "A door or appliance has been left open or on longer than usual; please check it.",
            ),
            Service(
                "wellbeing_check",
                NO_KINDS,
                home_point,
                "The home has been still for longer than usual; is everything all right?",
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
                focus_moment,
                "You usually work on this around now; pick up where you left off?",
            ),
            Service(
                "take_break",
                NO_KINDS,
                desktop_point,
                "You have been working for a long stretch without a break; take a few minutes "
                "away from the screen.",
            ),
            Service(
                "refocus",
                NO_KINDS,
                desktop_point,
                "You have switched between many apps in the last half hour; close what you do "
                "not need and pick one task.",
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


# Each scope's services by intent: control reads one for every decision of every method.
_BY_INTENT: Mapping[Scope, Mapping[str, Service]] = MappingProxyType(
    {scope: MappingProxyType({s.intent: s for s in found}) for scope, found in CATALOGUE.items()}
)


def intents(scope: Scope) -> frozenset[str]:
    return frozenset(s.intent for s in services(scope))


def service(scope: Scope, intent: str) -> Service | None:
    if scope not in _BY_INTENT:
        services(scope)  # the error naming the scopes
    return _BY_INTENT[scope].get(intent)


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
        return f"{day}/{home_family(current)}"
    if scope == "code":
        kind, number = code_object(current)
        return f"{kind}:{number}" if number is not None else f"{kind}@{day}"
    if scope == "desktop":
        return f"{day}/{desktop_app(current)}"
    raise ValueError(f"unknown scope {scope!r}; use one of sports, home, code, desktop")


def home_family(event: EngineEvent) -> str:
    """The activity family of a sensor event, or of a home segment's most active room (ties:
    the room first in name order); a segment without activations is ``presence``."""
    if not is_point(event):
        return activity_family(event)
    rooms = point_rooms(event)
    if not rooms:
        return HOME_DEFAULT_FAMILY
    room = min(rooms, key=lambda r: (-rooms[r], r))
    return _family_of(room) or HOME_DEFAULT_FAMILY


def is_sleep_place(text: str) -> bool:
    """Whether a room or device (its name) is where someone sleeps (the ``sleep`` family)."""
    return _family_of(text) == "sleep"


def is_care_place(text: str) -> bool:
    """Whether a room or device (its name) is where a routine a caregiver checks on happens
    (:data:`CARE_FAMILIES`)."""
    return _family_of(text) in CARE_FAMILIES


def _family_of(text: str) -> str | None:
    lowered = text.lower()
    return next((family for word, family in HOME_FAMILIES if word in lowered), None)


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
    they are what was seen); for a proposal about a target of its own (a device's stretch on
    or open, a routine not begun today), that target alone. code: the object (``repo`` from
    the attributes when a source has it, else None: the entity is the repository),
    ``object_kind``, ``number``, and the intervention's delivery: the service's ``mode``,
    ``recipient`` (the pull request's or issue's author, else the actor), ``content`` (the
    proposed message) and ``firing_condition`` (the payload type and action that fired it).
    desktop: app and site.
    """
    if scope == "sports":
        return current.payload, ()
    if scope == "home":
        if proposed.target:  # a device left on or open, a routine not begun (usual.py): said
            # once, wherever the resident is meanwhile
            return {"activity_family": proposed.intent, "rooms": [proposed.target]}, ()
        history = tuple(
            _home_context(e) for e in recent if e.id != current.id and e.kind == "observation"
        )
        return _home_context(current), history
    if scope == "code":
        a = attributes(current)
        found = service("code", proposed.intent)
        if proposed.target:
            # A nudge about a waiting item (B.3): its identity and the service, whatever event
            # it was posted at; its waiting time growing is no new state, so it is said once.
            target_kind, _, target_number = proposed.target.partition(":")
            return {
                "repo": a.get("repo"),
                "object_kind": target_kind,
                "number": int(target_number) if target_number.isdigit() else target_number,
                "mode": found.mode if found is not None else None,
                "recipient": None,
                "content": proposed.intent,
                "firing_condition": "waiting",
            }, ()
        kind, number = code_object(current)
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
        if proposed.target:  # a stretch of work or of switching: one nudge, whatever the app
            return {"app": proposed.target, "site": None}, ()
        if is_point(current):
            site = current.payload.get("site")
            return {
                "app": desktop_app(current),
                "site": site if isinstance(site, str) else None,
            }, ()
        return {"app": desktop_app(current), "site": desktop_site(current)}, ()
    raise ValueError(f"unknown scope {scope!r}; use one of sports, home, code, desktop")


def _home_context(event: EngineEvent) -> Mapping[str, Any]:
    if is_point(event):
        return {"activity_family": home_family(event), "rooms": sorted(point_rooms(event))}
    room = home_room(event)
    return {"activity_family": activity_family(event), "rooms": [] if room is None else [room]}
