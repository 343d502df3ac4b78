"""Decision policies: intervene or abstain at one event, from memory as it stood (ProactMem).

A policy reads a :class:`DecisionContext` (the current event, the recent events, today's
observations so far, recent completed days and the at most three retrieved regularities) and
returns a :class:`control.Proposed`; intervention control runs after it. Four policies:

* ``rules`` (:class:`RulesPolicy`, the deterministic default) acts on memory;
* ``event_only`` (:class:`EventOnlyPolicy`, the baseline) sees the recent events only;
* ``recent_memory`` (:class:`RecentMemoryPolicy`, a baseline) sees recent events and the
  trajectories of the last days, but no regularities;
* ``llm`` (:class:`LlmPolicy`) asks a model and fails closed on any reply it cannot check.

The current "event" may be a ProactiveStream decision point (``catalogue.py``); a decision
then cites it as ``point:N``, and its recent events are the stream's earlier points.

An abstention has the intent ``ABSTAIN`` ("") and says why in its message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, time, timedelta
from types import MappingProxyType
from typing import Any, Protocol

from memory.engine import usual, words
from memory.engine.canonical import Canonical, canonical
from memory.engine.catalogue import (
    Service,
    code_object,
    desktop_app,
    episode,
    intents,
    is_motion,
    is_point,
    is_steps,
    point_rooms,
    services,
)
from memory.engine.control import Proposed, Scope
from memory.engine.expect import Expectations, as_number, minutes_words
from memory.engine.memo import IdentityMemo
from memory.engine.records import DayRecord, EngineEvent, Path, Predicate
from memory.engine.refs import current_ref, regularity_id
from memory.engine.regularities import assess_day
from memory.engine.retrieve import Retrieved
from memory.engine.usual import device_named

ABSTAIN = ""  # the intent of an abstention
# Our choice: a pending regularity is acted on in the last half hour of its window, the same
# span retrieval shows a window early and late (retrieve.RETRIEVAL_LEAD / GRACE).
NEAR_DEADLINE = timedelta(minutes=30)
# Our choice for the baseline: an hour of recent events is what the event-only rule looks at.
EVENT_ONLY_LOOKBACK = timedelta(minutes=60)
# The team's cost of a false alarm against that of a missed need (ARCHITECTURE.md, principle
# 10). A candidate scored p (usual.py) costs (1 - p) false alarms if acted on and p misses if
# not, so acting pays from p >= cost / (1 + cost). Default 1: a needless nudge and a missed need
# weigh alike, and the policy acts from even odds (the baseline's word where no history speaks).
DEFAULT_FALSE_ALARM_COST = 1.0


def threshold_for(false_alarm_cost: float) -> float:
    """The score from which acting pays, for a false alarm costing ``false_alarm_cost`` misses."""
    if not false_alarm_cost > 0 or false_alarm_cost == float("inf"):
        raise ValueError(
            f"the cost of a false alarm must be a positive number of misses, not {false_alarm_cost}"
        )
    return false_alarm_cost / (1 + false_alarm_cost)


DEFAULT_THRESHOLD = threshold_for(DEFAULT_FALSE_ALARM_COST)


def cost_or_default(false_alarm_cost: float | None) -> float:
    """A team's cost of a false alarm: its own setting, or the default where it set none."""
    return DEFAULT_FALSE_ALARM_COST if false_alarm_cost is None else false_alarm_cost


# The LLM prompt carries at most this many recent events and today's observations (newest).
LLM_RECENT_MAX = 20
LLM_TODAY_MAX = 30
LLM_SCREEN_KEYS = frozenset({"screen"})
LLM_REPLY_KEYS = frozenset({"decision", "intent", "message", "evidence"})


@dataclass(frozen=True, slots=True)
class DecisionContext:
    """What a policy sees at one event; nothing in it is later than the event."""

    scope: Scope
    current: EngineEvent
    recent: tuple[EngineEvent, ...]  # oldest first, the current event last
    now: datetime  # local, aware
    trajectories: tuple[DayRecord, ...]  # recent completed days, newest last
    today: DayRecord  # today's observations so far
    regularities: tuple[Retrieved, ...]  # at most three, ranked
    expectations: Expectations | None = None  # what is usual (expect.py); None: not kept
    # How the entity's sensors are named (sensor id -> display name, the names table an owner
    # corrects); sentences use it, decisions never depend on it.
    names: Mapping[str, str] = field(default_factory=dict)
    # What several policies deciding at the same moment on the same memory work out alike
    # (memory's judgement of the point), kept once for all of them; None: nothing kept.
    shared: dict[object, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def episode(self) -> str:
        return episode(self.scope, self.current, self.now)

    def abstain(self, reason: str) -> Proposed:
        return Proposed("abstain", ABSTAIN, self.episode, message=reason)


# What a policy reads besides the current and recent events: today's observations, and the
# closed days' trajectories. The callers skip what a policy does not read (an extraction of the
# open day costs more than most decisions), so a policy names what it needs.
TODAY = "today"
TRAJECTORIES = "trajectories"
REGULARITIES = "regularities"  # retrieved regularities (retrieval costs a ranking of all in reach)
EXPECTATIONS = "expectations"  # what is usual for the entity (expect.py; the service reads history)


class Policy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def reads(self) -> frozenset[str]: ...

    def decide(self, ctx: DecisionContext) -> Proposed: ...


def reads(policy: Any) -> frozenset[str]:
    """What ``policy`` reads beyond recent events (``TODAY``, ``TRAJECTORIES``,
    ``REGULARITIES``)."""
    # A policy that does not say is handed regularities, as the rules policy is.
    found: object = getattr(policy, "reads", frozenset({REGULARITIES}))
    return frozenset(str(x) for x in found) if isinstance(found, frozenset) else frozenset()


def reads_today(policy: Any, trajectories: tuple[DayRecord, ...], now: datetime) -> bool:
    """Whether ``policy``'s decision at ``now`` reads today's observations: it names ``TODAY``
    (:func:`reads`), and where it can tell from the closed days alone that this decision will
    not (its ``reads_today``), it is not handed them. The open day's extraction costs more than
    most decisions."""
    if TODAY not in reads(policy):
        return False
    ask = getattr(policy, "reads_today", None)
    return True if ask is None else bool(ask(trajectories, now))


def reads_trajectories(policy: Any, retrieved: Sequence[Retrieved]) -> bool:
    """Whether ``policy``'s decision reads the last closed days: it names ``TRAJECTORIES``
    (:func:`reads`), and where it reads them only for what retrieval found (its
    ``reads_trajectories``), only then. Loading closed days costs the service a read."""
    if TRAJECTORIES not in reads(policy):
        return False
    ask = getattr(policy, "reads_trajectories", None)
    return True if ask is None else bool(ask(retrieved))


# -- rules --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RulesPolicy:
    """Memory that adds and vetoes, never hides; then a regularity that is due.

    At a decision point it first weighs what the event-only rules see there, service by service
    in catalogue order, against what is usual for this entity (:func:`usual.judge`): memory
    keeps, vetoes or adds; where history is short the baseline's rule stands. Then the
    retrieved regularities are walked in rank order. The first one that is ``deviated``, or
    ``pending`` with its deadline at most ``NEAR_DEADLINE`` away, and for which a service of the
    scope (in catalogue order) applies to it and is actionable at the current event, is acted
    on. The proposal cites the current event, the regularity's facts of today and its id.
    Otherwise it abstains, saying why.

    Every candidate carries one score (a judged moment: :mod:`usual`; a regularity: how often,
    at least, its behavior follows its trigger on the days replayed, ``Retrieved.assured``),
    and only a candidate scored at or above ``threshold`` (:func:`threshold_for` the team's
    false-alarm cost) is proposed.
    """

    name: str = "rules"
    # Today's observations only when a regularity is in reach (the callers know that).
    reads: frozenset[str] = frozenset({REGULARITIES, EXPECTATIONS, TRAJECTORIES})
    threshold: float = DEFAULT_THRESHOLD

    def reads_trajectories(self, retrieved: Sequence[Retrieved]) -> bool:
        """The last closed days are read only to judge a retrieved regularity after a late
        trigger (:func:`_late_trigger`): without one, the callers need not load them."""
        return bool(retrieved)

    def decide(self, ctx: DecisionContext) -> Proposed:
        reasons: list[str] = []
        verdicts: Mapping[str, usual.Judged] = {}
        if is_point(ctx.current) or ctx.scope == "code":  # code decides at native events
            judged, verdicts = _judged_point(ctx, self.threshold)
            if judged.action == "intervene":
                return judged
            reasons.append(judged.message)
        if not ctx.regularities:
            return ctx.abstain("; ".join([*reasons, "no regularity bears on now"]))
        for r in ctx.regularities:
            rid = regularity_id(r.proposal)
            due = r.occurrence == "deviated" or (
                r.occurrence == "pending" and r.deadline - ctx.now <= NEAR_DEADLINE
            )
            if not due:
                reasons.append(f"{rid} is {r.occurrence}, not due")
                continue
            applying = [s for s in services(ctx.scope) if s.applies(r.proposal)]
            if not applying:
                reasons.append(f"{rid}: no service applies to its behavior")
                continue
            chosen = next((s for s in applying if s.actionable(ctx.current)), None)
            if chosen is None:
                reasons.append(f"{rid}: the current event is no moment to act")
                continue
            if (
                ctx.scope == "home"
                and chosen.intent == "check_in_routine"
                and not usual.care_routine(r.proposal.behavior)
            ):
                reasons.append(f"{rid}: not a routine a caregiver checks on")
                continue
            veto = verdicts.get(chosen.intent)
            if veto is not None and not veto.act:  # memory explains the moment (usual.py)
                reasons.append(f"{rid}: {veto.sentence}")
                continue
            under_way = (
                usual.routine_under_way(
                    ctx.expectations, r.proposal.behavior, ctx.now, ctx.current.payload
                )
                if ctx.scope == "home" and ctx.expectations is not None
                else None
            )
            if under_way is not None:
                reasons.append(f"{rid}: {under_way}")
                continue
            late = _late_trigger(r, ctx)
            if late is not None:
                reasons.append(f"{rid}: {late}")
                continue
            if r.assured < self.threshold:
                reasons.append(
                    f"{rid}: fulfilled on {r.n_f} of {r.n_f + r.n_v} days, "
                    f"{_below(r.assured, self.threshold)}"
                )
                continue
            return Proposed(
                "intervene",
                chosen.intent,
                ctx.episode,
                regularity_ids=(rid,),
                message=words.deviation(
                    r.proposal,
                    r.occurrence,
                    ctx.now,
                    r.n_f,
                    r.n_v,
                    intro=chosen.message,
                    names=ctx.names,
                ),
                evidence_ids=(current_ref(ctx.current), *r.fact_ids, rid),
                score=r.assured,
            )
        return ctx.abstain("; ".join(reasons))


def _late_trigger(r: Retrieved, ctx: DecisionContext) -> str | None:
    """Why a due regularity is not overdue yet: its trigger came late today, and on the last
    days memory holds (the trajectories) its behavior took longer after the trigger than has
    passed since today's. After a late getting up, breakfast comes later (ProactMem's
    trajectories: a regularity is judged against what today's trajectory shows). None where
    today's trigger or any recent day's lag is unknown, or the wait is already longer."""
    if not r.fact_ids or not ctx.trajectories:
        return None
    triggered = next((o.at for o in ctx.today.observations if o.fact_id == r.fact_ids[0]), None)
    if triggered is None:
        return None
    lags = []
    for record in ctx.trajectories:
        held = assess_day(r.proposal, record)
        if held.outcome != "fulfilled" or len(held.fact_ids) < 2:
            continue
        at = {o.fact_id: o.at for o in record.observations if o.fact_id in held.fact_ids}
        if len(at) == 2:
            lags.append(at[held.fact_ids[1]] - at[held.fact_ids[0]])
    if not lags or ctx.now - triggered >= max(lags):
        return None
    since = triggered.astimezone(ctx.now.tzinfo).strftime("%H:%M")
    return (
        f"{words.phrase(r.proposal.trigger, ctx.names)} only at {since} today; on the last days "
        f"{words.phrase(r.proposal.behavior, ctx.names)} came up to "
        f"{minutes_words(max(lags).total_seconds() / 60)} after it: not overdue yet"
    )


def _below(score: float, threshold: float) -> str:
    return f"score {score:.2f} is below the threshold {threshold:.2f}"


def _judged_point(
    ctx: DecisionContext, threshold: float = DEFAULT_THRESHOLD
) -> tuple[Proposed, Mapping[str, usual.Judged]]:
    """At a decision point: the first service (catalogue order) that the event-only rules or
    memory's expectations say to act on, memory vetoing what it explains (:mod:`usual`), and
    scored at or above ``threshold``."""
    if ctx.shared is None:
        return _judge_point(ctx, threshold)
    key = ("judged", threshold, ctx.expectations is None)
    found = ctx.shared.get(key)
    if found is None:
        found = ctx.shared[key] = _judge_point(ctx, threshold)
    judged: tuple[Proposed, Mapping[str, usual.Judged]] = found
    return judged


def _judge_point(
    ctx: DecisionContext, threshold: float
) -> tuple[Proposed, Mapping[str, usual.Judged]]:
    prior = [e for e in ctx.recent if e.id != ctx.current.id or e.kind != ctx.current.kind]
    reasons = _point_reasons(ctx, prior)
    judged = usual.judge(
        ctx.scope, ctx.current.payload, ctx.now, ctx.expectations, reasons, ctx.names
    )
    said: list[str] = []
    acting: list[tuple[Proposed, usual.Judged]] = []
    for service in services(ctx.scope):
        verdict = judged.get(service.intent)
        if verdict is None:
            continue
        if not verdict.act:
            said.append(f"{service.intent}: {verdict.sentence}")
            continue
        # A verdict posted on its target itself (a repository's reminder, on the waiting pull
        # request or issue or the failed check) may be posted at any moment.
        if not verdict.on_target and not service.actionable(ctx.current):
            continue
        if verdict.score < threshold:
            said.append(
                f"{service.intent}: {verdict.sentence} ({_below(verdict.score, threshold)})"
            )
            continue
        message = verdict.message or (
            f"{service.message} ({verdict.sentence})" if verdict.baseline else verdict.sentence
        )
        episode = ctx.episode
        if verdict.target:  # an episode of its own: the waiting item, the stretch of work
            day = ctx.now.date().isoformat()
            episode = verdict.target if ctx.scope == "code" else f"{day}/{verdict.target}"
        proposed = Proposed(
            "intervene",
            service.intent,
            episode,
            message=message,
            evidence_ids=(current_ref(ctx.current),),
            target=verdict.target,
            score=verdict.score,
        )
        acting.append((proposed, verdict))
    if acting:
        # The first in catalogue order; the others memory itself finds unusual are said
        # instead when control finds it a repeat (control.control_first): someone told to
        # catch up on steps this morning and sitting unusually long now still hears about the
        # sitting. The baseline's rule standing in without history is no such finding.
        others = tuple(p for p, verdict in acting[1:] if not verdict.baseline)
        return replace(acting[0][0], alternatives=others), judged
    return ctx.abstain("; ".join(said) or "nothing unusual at this point"), judged


def _pred(p: Predicate) -> str:
    return f"{'/'.join(p.path)}={p.value}"


def _clock(t: time) -> str:
    return "24:00" if t == time.max else t.strftime("%H:%M")


# -- event only ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EventOnlyPolicy:
    """The baseline: a service actionable at the current event, and a rule on recent events.

    Trajectories and regularities are ignored even when given. At a raw event, with ``prior``
    the recent events before it within ``EVENT_ONLY_LOOKBACK``:

    * sports (``suggest_walk``): no step count above zero in ``prior``;
    * home (``check_in_routine``): no motion event in ``prior`` (someone reappears after an
      hour of stillness);
    * code (any service): no event on the same repository object in ``prior`` (the first touch
      of a pull request or issue in an hour);
    * desktop (``resume_focus``): no snapshot of the same app in ``prior`` (a return to it).

    The first service (in catalogue order) actionable at the current event is proposed; it
    cites the current event only. At a decision point, the rule of :func:`_point_rule` for
    its scope reads the point and the earlier points of the last 72 hours (the recent events
    of a point are points).
    """

    name: str = "event_only"
    reads: frozenset[str] = frozenset()

    def decide(self, ctx: DecisionContext) -> Proposed:
        prior = [e for e in ctx.recent if e.id != ctx.current.id or e.kind != ctx.current.kind]
        if is_point(ctx.current):
            return _point_rule(ctx, prior)
        chosen = next((s for s in services(ctx.scope) if s.actionable(ctx.current)), None)
        if chosen is None:
            return ctx.abstain("no service is actionable at this event")
        since = ctx.current.at - EVENT_ONLY_LOOKBACK
        prior = [e for e in prior if since <= e.at <= ctx.current.at]
        blocker = _recent_blocker(ctx.scope, ctx.current, prior)
        if blocker is not None:
            return ctx.abstain(f"event_only: {blocker} in the last hour")
        return Proposed(
            "intervene",
            chosen.intent,
            ctx.episode,
            message=chosen.message,
            evidence_ids=(current_ref(ctx.current),),
        )


def _recent_blocker(scope: Scope, current: EngineEvent, prior: Sequence[EngineEvent]) -> str | None:
    if scope == "sports":
        if any(is_steps(e) and _positive(e.payload.get("value")) for e in prior):
            return "steps were counted"
    elif scope == "home":
        if any(is_motion(e) for e in prior):
            return "motion was seen"
    elif scope == "code":
        target = code_object(current)
        if any(code_object(e) == target for e in prior):
            return f"{target[0]}:{target[1]} had an event"
    elif scope == "desktop":
        app = desktop_app(current)
        if any(e.kind == "snapshot" and desktop_app(e) == app for e in prior):
            return f"{app} was in use"
    return None


# Our choices for the event-only rules at decision points: plain thresholds on what a point
# and the last days' points show, no memory beyond them.
DEVICE_OPEN_MIN = usual.DEVICE_OPEN_MIN  # home: a door or appliance on for this long
STILL_MIN = 180  # home: minutes without an event, in the daytime hours below
DAYTIME = (time(8), time(22))
SEDENTARY_STEPS = 250  # sports: steps in the hour below which it was sedentary
ACTIVE_STEPS = 1000  # sports: steps in the hour above which it was active
SITTING_MIN = 50  # sports: sedentary minutes of the hour
PACE_SHARE = 0.5  # sports: steps so far below this share of yesterday's at the slot
PACE_SLOTS = frozenset({1, 2, 3})
SWITCHES = usual.SWITCH_FLOOR  # desktop: frame starts in the last 30 minutes


def _point_rule(ctx: DecisionContext, prior: Sequence[EngineEvent]) -> Proposed:
    """The event-only rule at a decision point: the first service (catalogue order) whose
    rule holds on the point and the earlier points, and which is actionable now."""
    reasons = _point_reasons(ctx, prior)
    for service in services(ctx.scope):
        reason = reasons.get(service.intent)
        if reason is None or not service.actionable(ctx.current):
            continue
        return Proposed(
            "intervene",
            service.intent,
            ctx.episode,
            message=f"{service.message} ({reason})",
            evidence_ids=(current_ref(ctx.current),),
        )
    return ctx.abstain("event_only: no rule holds at this point")


def _point_reasons(ctx: DecisionContext, prior: Sequence[EngineEvent]) -> Mapping[str, str]:
    """The event-only rules of the scope at this point, by service: what ``prior`` (the
    earlier points of ``ctx.recent``) and the point show. Worked out once for every policy
    deciding on one memory view (the baseline and ProactMem read the same rules)."""
    rule = _POINT_RULES.get(ctx.scope)
    if rule is None:
        return {}
    if ctx.shared is None:
        return rule(ctx, prior)
    found = ctx.shared.get(_REASONS)
    if found is None:
        found = ctx.shared[_REASONS] = MappingProxyType(rule(ctx, prior))
    reasons: Mapping[str, str] = found
    return reasons


_REASONS = ("point rules",)


def _same_slot_yesterday(
    ctx: DecisionContext, prior: Sequence[EngineEvent], field_name: str, back: int = 1
) -> EngineEvent | None:
    day = (ctx.now.date() - timedelta(days=back)).isoformat()
    return next(
        (
            e
            for e in reversed(prior)
            if e.payload.get("day") == day
            and e.payload.get(field_name) == ctx.current.payload.get(field_name)
        ),
        None,
    )


def _home_rules(ctx: DecisionContext, prior: Sequence[EngineEvent]) -> dict[str, str]:
    p = ctx.current.payload
    found: dict[str, str] = {}
    before = [_same_slot_yesterday(ctx, prior, "segment", back) for back in (1, 2)]
    if all(b is not None for b in before):
        usual = set.intersection(*(set(point_rooms(b)) for b in before if b is not None))
        missing = sorted(usual - set(point_rooms(ctx.current)))
        if missing:
            found["check_in_routine"] = (
                f"the {words.room_words(missing[0])} was active at this time on the last two days"
            )
    for item in p.get("on_at_close") or ():
        since = item.get("since") if isinstance(item, Mapping) else None
        if isinstance(since, str):
            opened = datetime.fromisoformat(since)
            if ctx.now - opened >= timedelta(minutes=DEVICE_OPEN_MIN):
                device = device_named(item, ctx.names)
                found["check_device"] = f"{device} on since {opened.strftime('%H:%M')}"
                break
    quiet = as_number(p.get("quiet_min"))
    if quiet is not None and quiet >= STILL_MIN and DAYTIME[0] <= ctx.now.time() < DAYTIME[1]:
        found["wellbeing_check"] = f"no sensor event for {int(quiet)} minutes"
    return found


def _sports_rules(ctx: DecisionContext, prior: Sequence[EngineEvent]) -> dict[str, str]:
    p = ctx.current.payload
    found: dict[str, str] = {}
    steps = as_number(p.get("steps_last_60"))
    yesterday = _same_slot_yesterday(ctx, prior, "slot")
    if steps is not None and steps < SEDENTARY_STEPS and yesterday is not None:
        before = as_number(yesterday.payload.get("steps_last_60"))
        if before is not None and before >= ACTIVE_STEPS:
            found["suggest_walk"] = f"{int(steps)} steps in the last hour, {int(before)} yesterday"
    today = as_number(p.get("steps_today"))
    if p.get("slot") in PACE_SLOTS and today is not None and yesterday is not None:
        before = as_number(yesterday.payload.get("steps_today"))
        if before is not None and before >= ACTIVE_STEPS and today < PACE_SHARE * before:
            found["step_goal_nudge"] = f"{int(today)} steps so far, {int(before)} by now yesterday"
    sitting = as_number(p.get("sedentary_min_last_60"))
    if (
        sitting is not None
        and sitting >= SITTING_MIN
        and steps is not None
        and steps < SEDENTARY_STEPS
    ):
        found["stand_break"] = f"{int(sitting)} sedentary minutes in the last hour"
    return found


def _desktop_rules(ctx: DecisionContext, prior: Sequence[EngineEvent]) -> dict[str, str]:
    p = ctx.current.payload
    found: dict[str, str] = {}
    today = [e for e in (*prior, ctx.current) if e.payload.get("day") == p.get("day")]
    reach = usual.work_stretch(
        (_clock_on(e.payload.get("start")), _clock_on(e.payload.get("end"))) for e in today
    )
    if reach is not None and reach[1] - reach[0] >= usual.WORK_SPAN_MIN:
        found["take_break"] = f"working without a break since {usual.hhmm(reach[0])}"
    switches = as_number(p.get("switches_30"))
    if switches is not None and switches >= SWITCHES:
        found["refocus"] = f"{int(switches)} apps and windows started in the last 30 minutes"
    return found


def _clock_on(clock: Any) -> int:
    """A point's local ``HH:MM`` as minutes since midnight (anything else: midnight)."""
    text = clock if isinstance(clock, str) and len(clock) == 5 else "00:00"
    moment = time.fromisoformat(text)
    return moment.hour * 60 + moment.minute


_POINT_RULES: Mapping[str, Callable[[DecisionContext, Sequence[EngineEvent]], dict[str, str]]] = (
    MappingProxyType({"home": _home_rules, "sports": _sports_rules, "desktop": _desktop_rules})
)


# -- recent memory ------------------------------------------------------------------------------

RECENT_MEMORY_DAYS = 3  # ProactMem's recent-memory baseline reads the last days' trajectories


@dataclass(frozen=True, slots=True)
class RecentMemoryPolicy:
    """A baseline with trajectories but no regularities: what happened by this time of day on
    each of the last ``RECENT_MEMORY_DAYS`` closed days and has not happened yet today.

    Every (path, value) observed on each of those days at or before the current local clock
    time, and not observed today, is a candidate; the first (in path and value order) for which
    a service of the scope applies to its segment kind and is actionable now is proposed,
    citing the current moment and the latest of those days' facts. No replay, no lift: a habit
    of three days is enough, which is what regularities gate.
    """

    name: str = "recent_memory"
    reads: frozenset[str] = frozenset({TODAY, TRAJECTORIES})

    def reads_today(self, trajectories: tuple[DayRecord, ...], now: datetime) -> bool:
        """Whether the decision at ``now`` reads today's observations: only where something
        happened by now on each of the last days (else it abstains without them), so the
        callers skip the open day's extraction (:func:`reads_today`)."""
        habits = _habits(trajectories)
        return habits is not None and habits.any_by(now.time().replace(tzinfo=None))

    def decide(self, ctx: DecisionContext) -> Proposed:
        habits = _habits(ctx.trajectories)
        if habits is None:
            return ctx.abstain(f"fewer than {RECENT_MEMORY_DAYS} closed days in memory")
        clock = ctx.now.time().replace(tzinfo=None)
        today = _firsts(ctx.today)
        for (path, key), latest in habits.in_order:
            if latest > clock:
                continue  # not yet by now on every one of those days
            seen = today.get((path, key))
            if seen is not None and seen[0] <= clock:
                continue  # happened today already
            service = _applying(ctx, path)
            if service is None:
                continue
            return Proposed(
                "intervene",
                service.intent,
                ctx.episode,
                message=(
                    f"{service.message} ({'/'.join(path)} happened by "
                    f"{clock.strftime('%H:%M')} on each of the last {RECENT_MEMORY_DAYS} days, "
                    "not yet today)"
                ),
                evidence_ids=(current_ref(ctx.current), habits.last[(path, key)][1]),
            )
        return ctx.abstain("recent_memory: nothing usual by now is missing today")


@dataclass(frozen=True, slots=True)
class _Habits:
    """What was observed on each of the last ``RECENT_MEMORY_DAYS`` closed days: every
    (path, canonical value) seen on all of them, with the latest of its first times of day
    (it happened by a clock time on each day when that clock is at or after this), in
    (path, value) order by ``repr``; and the last day's first occurrences (the facts cited)."""

    days: tuple[DayRecord, ...]
    in_order: tuple[tuple[tuple[Path, Canonical], time], ...]
    earliest: time | None  # the least of those latest times: nothing is habitual before it
    last: _Firsts

    def any_by(self, clock: time) -> bool:
        return self.earliest is not None and self.earliest <= clock


def _habits(trajectories: tuple[DayRecord, ...]) -> _Habits | None:
    """The habits of the last ``RECENT_MEMORY_DAYS`` closed days; None with fewer. Worked out
    once per set of days (memory closes a day, then decides many times on the same three)."""
    days = trajectories[-RECENT_MEMORY_DAYS:]
    if len(days) < RECENT_MEMORY_DAYS:
        return None
    held = _HABITS.get(id(days[-1]))
    if held is not None and all(a is b for a, b in zip(held.days, days, strict=True)):
        return held
    made = _habits_over(days)
    if len(_HABITS) >= 4096:
        _HABITS.clear()
    _HABITS[id(days[-1])] = made  # held with its days: a reused id never matches
    return made


_HABITS: dict[int, _Habits] = {}


def _habits_over(days: tuple[DayRecord, ...]) -> _Habits:
    firsts = [_firsts(record) for record in days]
    common = set(firsts[0]).intersection(*firsts[1:])
    latest = {key: max(found[key][0] for found in firsts) for key in common}
    in_order = tuple(sorted(latest.items(), key=lambda item: repr(item[0])))
    return _Habits(days, in_order, min(latest.values(), default=None), firsts[-1])


# Per day record: the earliest local time of day of each (path, canonical value), with its
# fact id. Records are immutable, so each is read once while held (memo.IdentityMemo): the
# closed days a decision reads stay the same from close to close, while today's record is new
# whenever the day gained an event; the bound holds a month of closed days of many entities
# besides the open days' records.
_Firsts = dict[tuple[Path, Canonical], tuple[time, str]]


def _day_firsts(record: DayRecord) -> _Firsts:
    found: dict[tuple[Path, Canonical], tuple[time, str]] = {}
    for o in record.observations:
        value = canonical(o.value)
        if value is None:
            continue
        key = (o.path, value)
        seen = (o.at.time(), o.fact_id)  # the wall clock, without a zone
        held = found.get(key)
        if held is None or seen < held:
            found[key] = seen
    return found


_firsts: IdentityMemo[DayRecord, _Firsts] = IdentityMemo(_day_firsts, limit=4096)


def _applying(ctx: DecisionContext, path: Path) -> Service | None:
    return next(
        (
            s
            for s in services(ctx.scope)
            if path and path[0] in s.behavior_kinds and s.actionable(ctx.current)
        ),
        None,
    )


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


# -- LLM ----------------------------------------------------------------------------------------

SCREEN_PROMPT = (
    "You screen events for a proactive assistant. Given the context below, reply with JSON "
    'only: {"screen": "skip"} when no service could help now, or {"screen": "escalate"} when '
    "a decision is worth making.\n"
)
DECIDE_PROMPT = (
    "You decide whether a proactive assistant should intervene now. Reply with JSON only: "
    '{"decision": "intervene" | "abstain", "intent": one of the services\' intents (or "" to '
    'abstain), "message": the text to send or why not, "evidence": [ids]}. Cite only ids that '
    "appear in the context (event:N, fact:..., reg:...); an intervention cites at least one.\n"
)


@dataclass(frozen=True, slots=True)
class LlmPolicy:
    """Ask a model, in two steps, and accept only a reply that checks out.

    ``complete`` takes a prompt and returns the model's text (the Django side injects a
    recorded, cached client). First a pre-screen (``SCREEN_PROMPT``): ``skip`` abstains,
    ``escalate`` goes on to the decision (``DECIDE_PROMPT``). Both prompts end with the same
    deterministic JSON of the context (:func:`prompt_context`). Fails closed: a call that
    raises, a reply that is not a JSON object with exactly the expected keys, an unknown
    decision, an intent not in the scope's catalogue, an empty message, or an evidence id not in
    the context all abstain, with the reason in the message. An intervention's regularity ids
    are the ``reg:`` ids it cites.
    """

    complete: Callable[[str], str]
    name: str = field(default="llm")
    reads: frozenset[str] = field(default=frozenset({TODAY, TRAJECTORIES, REGULARITIES}))

    def decide(self, ctx: DecisionContext) -> Proposed:
        context = prompt_context(ctx)
        text = json.dumps(context, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        screen, problem = self._ask(SCREEN_PROMPT + text, LLM_SCREEN_KEYS)
        if screen is None:
            return ctx.abstain(f"llm pre-screen: {problem}")
        if screen["screen"] == "skip":
            return ctx.abstain("llm pre-screen: skip")
        if screen["screen"] != "escalate":
            return ctx.abstain(f"llm pre-screen: unknown answer {screen['screen']!r}")
        reply, problem = self._ask(DECIDE_PROMPT + text, LLM_REPLY_KEYS)
        if reply is None:
            return ctx.abstain(f"llm decision: {problem}")
        return _checked(ctx, reply, frozenset(context["citable"]))

    def _ask(self, prompt: str, keys: frozenset[str]) -> tuple[Mapping[str, Any] | None, str]:
        try:
            raw = self.complete(prompt)
        except Exception as exc:  # the outside world: any failure fails closed
            return None, f"the call failed ({type(exc).__name__}: {exc})"
        if not isinstance(raw, str):
            return None, f"the reply is {type(raw).__name__}, not text"
        try:
            reply = json.loads(raw)
        except ValueError:
            return None, f"the reply is not JSON: {raw[:200]!r}"
        if not isinstance(reply, dict):
            return None, f"the reply is JSON {type(reply).__name__}, not an object"
        if set(reply) != keys:
            return None, f"the reply has keys {sorted(reply)}, expected {sorted(keys)}"
        return reply, ""


def _checked(ctx: DecisionContext, reply: Mapping[str, Any], citable: frozenset[str]) -> Proposed:
    decision, intent, message, evidence = (
        reply["decision"],
        reply["intent"],
        reply["message"],
        reply["evidence"],
    )
    if decision not in ("intervene", "abstain"):
        return ctx.abstain(f"llm decision: unknown decision {decision!r}")
    if not isinstance(message, str):
        return ctx.abstain("llm decision: the message is not text")
    if not isinstance(evidence, list) or not all(isinstance(i, str) for i in evidence):
        return ctx.abstain("llm decision: evidence is not a list of ids")
    unknown = [i for i in evidence if i not in citable]
    if unknown:
        return ctx.abstain(f"llm decision: cites ids not in the context: {unknown[:5]}")
    if decision == "abstain":
        return ctx.abstain(f"llm: {message}" if message else "llm: abstain")
    if not isinstance(intent, str) or intent not in intents(ctx.scope):
        return ctx.abstain(f"llm decision: intent {intent!r} is not a {ctx.scope} service")
    if not message.strip():
        return ctx.abstain("llm decision: an intervention needs a message")
    if not evidence:
        return ctx.abstain("llm decision: an intervention must cite evidence")
    cited = tuple(dict.fromkeys(evidence))
    return Proposed(
        "intervene",
        intent,
        ctx.episode,
        regularity_ids=tuple(i for i in cited if i.startswith("reg:")),
        message=message.strip(),
        evidence_ids=cited,
    )


def prompt_context(ctx: DecisionContext) -> dict[str, Any]:
    """The JSON the LLM sees: deterministic for a given context, every citable id listed."""
    recent = [e for e in ctx.recent if e.id != ctx.current.id][-LLM_RECENT_MAX:]
    today = list(ctx.today.observations)[-LLM_TODAY_MAX:]
    regularities = [
        {
            "id": regularity_id(r.proposal),
            "sentence": words.regularity(r.proposal, ctx.names),
            "trigger": _pred(r.proposal.trigger),
            "behavior": _pred(r.proposal.behavior),
            "window": [_clock(t) for t in r.proposal.window],
            "weekdays": None if r.proposal.weekdays is None else sorted(r.proposal.weekdays),
            "state": r.state,
            "confidence": round(r.confidence, 3),
            "occurrence": r.occurrence,
            "deadline": r.deadline.isoformat(),
            "facts": list(r.fact_ids),
        }
        for r in ctx.regularities
    ]
    citable = [current_ref(e) for e in (*recent, ctx.current)]
    citable += [o.fact_id for o in today]
    for r in ctx.regularities:
        citable += [*r.fact_ids, regularity_id(r.proposal)]
    return {
        "scope": ctx.scope,
        "now": ctx.now.isoformat(),
        "services": [{"intent": s.intent, "message": s.message} for s in services(ctx.scope)],
        "current": _event_json(ctx.current),
        "recent": [_event_json(e) for e in recent],
        "today": [
            {"id": o.fact_id, "at": o.at.isoformat(), "path": list(o.path), "value": o.value}
            for o in today
        ],
        "regularities": regularities,
        "citable": sorted(set(citable)),
    }


def _event_json(e: EngineEvent) -> dict[str, Any]:
    payload = {k: v for k, v in e.payload.items() if k != "private"}  # private never leaves
    return {"id": current_ref(e), "at": e.at.isoformat(), "kind": e.kind, "payload": payload}


# -- registry -----------------------------------------------------------------------------------

POLICIES: Mapping[str, Policy] = MappingProxyType(
    {
        "rules": RulesPolicy(),
        "event_only": EventOnlyPolicy(),
        "recent_memory": RecentMemoryPolicy(),
    }
)


def llm_policy(complete: Callable[[str], str]) -> LlmPolicy:
    return LlmPolicy(complete)


def policy(name: str, *, complete: Callable[[str], str] | None = None) -> Policy:
    """The policy called ``name``; ``llm`` needs ``complete``."""
    if name == "llm":
        if complete is None:
            raise ValueError("the llm policy needs a `complete` callable (the model client)")
        return llm_policy(complete)
    try:
        return POLICIES[name]
    except KeyError:
        known = ", ".join(sorted([*POLICIES, "llm"]))
        raise ValueError(f"unknown policy {name!r}; use one of {known}") from None
