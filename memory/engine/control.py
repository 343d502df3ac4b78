"""Intervention control: suppress a repeat of an intervention already allowed (ProactMem B.3).

Control acts only on a proposed intervention; an abstention passes through unchanged, so control
can never turn an abstention into an intervention. Where the rule leaves a choice open, the choice
is written next to the code that makes it and tested by name (tests/test_memory_control.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from types import MappingProxyType
from typing import Any, Literal

from memory.engine.canonical import Canonical, canonical, is_scalar

Action = Literal["intervene", "abstain"]
Scope = Literal["sports", "home", "code", "desktop"]
Phase = Literal["onset", "confirmed", "sustained"]
# Why control let a proposal through or not, for the decision's audit page.
Reason = Literal[
    "abstained",  # the policy abstained; control passes it through
    "first",  # no intervention with this identity was allowed before
    "new_day",  # allowed before, on another local day
    "signature_changed",  # allowed before, with another scope signature
    "stronger_phase",  # allowed before (home), at a weaker phase
    "repeat",  # suppressed: same identity, day, signature and no stronger phase
]

# Home phases (ProactMem, intervention control): onset / confirmed / sustained at 1 / 2 / >= 3
# consecutive matching observations.
CONFIRMED_AT = 2
SUSTAINED_AT = 3
PHASE_RANK: Mapping[Phase, int] = MappingProxyType({"onset": 0, "confirmed": 1, "sustained": 2})

# The context keys each scope signature reads (ProactMem, intervention control). A key is looked
# up at the top of the mapping, then under "attributes", so a caller may pass an event payload
# as stored ({"type", "value", "attributes"}) or a flat context; a missing key reads as None.
# Sports: the HeartSteps importer's attribute names for the decision-point context.
SPORTS_KEYS = (
    "available",
    "connected",
    "snoozed",
    "in_transit",
    "recognized_activity",
    "location",  # the location *category* (dec.location.category), never the exact place
)
# Home: the caller maps a labelled activity to its family (the home service catalogue's job);
# the room set is "rooms" (a list) or, for one sensor event, its "room".
HOME_FAMILY_KEY = "activity_family"
# Code: the repository object (repo, kind, number) and the proposed intervention's delivery;
# the state holds the last allowed one's, so a change of any of them re-enters.
CODE_KEYS = (
    "repo",
    "object_kind",  # pull_request, issue, release, ...
    "number",
    "mode",  # how it is delivered: comment, notification, ...
    "recipient",
    "content",
    "firing_condition",
)
# Desktop (our choice; the paper leaves it open): the focused app and site. Not the frame id:
# the compiler cuts a new frame at every dwell cap and focus return, so a frame-keyed signature
# would re-enter every few minutes and never suppress; app + site is what the user is doing.
DESKTOP_KEYS = ("app", "site")

# A field's comparable value: canonical (so "Home " == "home" and 1 == 1.0, as grounding
# compares), or, for a set, its sorted members.
Key = Canonical | tuple[Canonical, ...]
# Identity (ProactMem): episode + service intent + sorted regularity ids in context.
Identity = tuple[str, str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Proposed:
    """What a decision policy proposes, before control."""

    action: Action
    intent: str  # the service intent from the scope's catalogue
    episode: str  # the caller's key, e.g. the local day plus a scope-specific episode key
    regularity_ids: tuple[str, ...] = ()
    message: str = ""
    evidence_ids: tuple[str, ...] = ()  # cited event, fact and regularity ids
    # What the intervention is about when it is not the current event's own object (code:
    # ``pull_request:12``, a waiting item nudged at another event); control holds that identity.
    target: str = ""
    # How far the moment goes beyond the entity's history, in [0, 1] (usual.py); None where the
    # policy does not score (the baselines, the model).
    score: float | None = None
    # The other interventions the policy would make at this moment, in its order: control takes
    # the first of them it allows when this one is a repeat (control_first). A moment that
    # repeats one thing may still hold another worth saying.
    alternatives: tuple[Proposed, ...] = ()


@dataclass(frozen=True, slots=True)
class Signature:
    """What the situation looked like for one scope; phase is set for home only."""

    scope: Scope
    fields: tuple[tuple[str, Key], ...]
    phase: Phase | None = None


@dataclass(frozen=True, slots=True)
class Allowed:
    """The last intervention control allowed for one identity."""

    day: date
    signature: Signature


@dataclass(frozen=True, slots=True)
class ControlState:
    """Every identity allowed so far, with the day and signature of its last allowed intervention.

    One entry per identity, replaced when it is allowed again. Immutable: ``control`` returns a
    new state.
    """

    allowed: Mapping[Identity, Allowed] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class Controlled:
    """The final decision after control."""

    action: Action
    suppressed: bool
    identity: Identity
    reason: Reason
    suppressed_by: Identity | None  # the allowed identity this repeated; None unless suppressed
    proposed: Proposed
    # The first proposal, suppressed as a repeat, that this one (an alternative) is said in
    # place of (control_first); None when the first proposal is the decision. An audit of the
    # decision shows what was not said again, and why, beside what was said.
    instead_of: Controlled | None = None


def identity(proposed: Proposed) -> Identity:
    """Episode, service intent and the regularity ids in context, sorted and without duplicates.

    A duplicate id is the same evidence, so ("r1", "r1") and ("r1",) are one identity.
    """
    return (proposed.episode, proposed.intent, tuple(sorted(set(proposed.regularity_ids))))


def control(
    proposed: Proposed, signature: Signature, day: date, state: ControlState
) -> tuple[Controlled, ControlState]:
    """Suppress an exact repeat of an allowed intervention; return the outcome and the new state.

    An abstention passes through and leaves the state as it was. An intervention re-enters (is
    allowed) when its identity was never allowed, or was last allowed on another local ``day``,
    with another signature (phase aside), or at a weaker home phase. A changed service intent or
    changed regularity ids make another identity, so they re-enter as ``first``. Regularity
    evidence is the set of regularity ids only: cited event and fact ids are left out, because
    every new event is cited and would make every repeat re-enter. An allowed intervention
    records its day and signature; a suppressed one changes nothing.
    """
    ident = identity(proposed)
    if proposed.action != "intervene":
        return Controlled("abstain", False, ident, "abstained", None, proposed), state
    before = state.allowed.get(ident)
    reason = _reentry(before, signature, day)
    if reason is None:
        return Controlled("abstain", True, ident, "repeat", ident, proposed), state
    allowed = dict(state.allowed)
    allowed[ident] = Allowed(day, signature)
    new_state = ControlState(MappingProxyType(allowed))
    return Controlled("intervene", False, ident, reason, None, proposed), new_state


def control_first(
    proposed: Proposed,
    day: date,
    signature_of: Callable[[Proposed], Signature],
    state_of: Callable[[Proposed], ControlState],
) -> tuple[Controlled, ControlState, Signature]:
    """:func:`control` of ``proposed``, and when it is suppressed as a repeat, of each of its
    ``alternatives`` in turn: the first one allowed is the decision. When every one is a
    repeat, the decision is the suppression of ``proposed`` itself. ``signature_of`` and
    ``state_of`` give each candidate's signature and the control state holding its identity
    (worked out only for the candidates tried). Returns the outcome (an alternative's names the
    suppressed first as ``instead_of``), the new state (of the candidate decided on) and that
    candidate's signature."""
    first_signature = signature_of(proposed)
    first = control(proposed, first_signature, day, state_of(proposed))
    if not first[0].suppressed:
        return (*first, first_signature)
    for other in proposed.alternatives:
        other_signature = signature_of(other)
        controlled, new_state = control(other, other_signature, day, state_of(other))
        if not controlled.suppressed:
            return replace(controlled, instead_of=first[0]), new_state, other_signature
    return (*first, first_signature)


def _reentry(before: Allowed | None, signature: Signature, day: date) -> Reason | None:
    if before is None:
        return "first"
    if day != before.day:
        # Any other day, earlier or later: a late event's day is still not the allowed one's.
        return "new_day"
    if (signature.scope, signature.fields) != (before.signature.scope, before.signature.fields):
        return "signature_changed"
    # Only a stronger phase re-enters: a run that broke and restarted at onset is a repeat.
    if _rank(signature.phase) > _rank(before.signature.phase):
        return "stronger_phase"
    return None


def _rank(phase: Phase | None) -> int:
    return -1 if phase is None else PHASE_RANK[phase]


def sports_signature(context: Mapping[str, Any]) -> Signature:
    """Availability, connectivity, snooze, transit, recognised activity and location category."""
    return Signature("sports", tuple((k, _key(_read(context, k))) for k in SPORTS_KEYS))


def home_signature(
    context: Mapping[str, Any], history: Sequence[Mapping[str, Any]] = ()
) -> Signature:
    """Activity family plus room set, and the phase of the run of matching observations.

    ``history`` is the prior observations, oldest first. The run is the current observation plus
    the unbroken stretch of prior ones, counted back from the newest, with the same family and
    room set: 1 is onset, 2 confirmed, 3 or more sustained.
    """
    fields = _home_fields(context)
    run = 1
    for prior in reversed(history):
        if _home_fields(prior) != fields:
            break
        run += 1
    return Signature("home", fields, phase_of(run))


def phase_of(run: int) -> Phase:
    """The home phase of ``run`` consecutive matching observations (at least one)."""
    if run >= SUSTAINED_AT:
        return "sustained"
    if run >= CONFIRMED_AT:
        return "confirmed"
    return "onset"


def code_signature(context: Mapping[str, Any]) -> Signature:
    """The repository object (repo, kind, number) and the intervention's mode, recipient,
    content and firing condition."""
    return Signature("code", tuple((k, _key(_read(context, k))) for k in CODE_KEYS))


def desktop_signature(context: Mapping[str, Any]) -> Signature:
    """The focused app and site (see DESKTOP_KEYS for why not the frame)."""
    return Signature("desktop", tuple((k, _key(_read(context, k))) for k in DESKTOP_KEYS))


def signature(
    scope: Scope, context: Mapping[str, Any], history: Sequence[Mapping[str, Any]] = ()
) -> Signature:
    """The scope's signature of the current event's payload or context (history: home only)."""
    if scope == "sports":
        return sports_signature(context)
    if scope == "home":
        return home_signature(context, history)
    if scope == "code":
        return code_signature(context)
    if scope == "desktop":
        return desktop_signature(context)
    raise ValueError(f"unknown scope {scope!r}; use one of sports, home, code, desktop")


def _home_fields(context: Mapping[str, Any]) -> tuple[tuple[str, Key], ...]:
    rooms = _read(context, "rooms")
    if rooms is None:
        room = _read(context, "room")
        rooms = () if room is None else (room,)
    elif isinstance(rooms, str) or not isinstance(rooms, Sequence | set | frozenset):
        rooms = (rooms,)
    members = tuple(sorted({_key(r) for r in rooms}, key=repr))
    return ((HOME_FAMILY_KEY, _key(_read(context, HOME_FAMILY_KEY))), ("rooms", members))


def _read(context: Mapping[str, Any], key: str) -> Any:
    if key in context:
        return context[key]
    attributes = context.get("attributes")
    if isinstance(attributes, Mapping):
        return attributes.get(key)
    return None


def _key(value: Any) -> Canonical:
    # A value canonical() cannot compare (NaN, a list, a dict) is kept by its repr, so the same
    # malformed value repeated still suppresses instead of re-entering every time.
    found = canonical(value) if is_scalar(value) else None
    return found if found is not None else ("raw", repr(value))
