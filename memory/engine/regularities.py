"""Regularities: replay a proposal over daily records, activate it, and run its lifecycle.

ProactMem (arXiv 2610.36967) §2–§3 as ARCHITECTURE.md and docs/explanation/proactmem.md state
them. Where the rules leave a choice open, the choice is written next to the code that makes
it and tested by name.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, time
from fractions import Fraction
from typing import Literal

from memory.engine.canonical import canonical, is_scalar, same
from memory.engine.memo import IdentityMemo
from memory.engine.records import DayRecord, Observation, Predicate, Proposal

# Activation (ProactMem §3.1, replay): a candidate needs all of these over the replayed days.
MIN_FULFILLED = 3  # n_f >= 3: support on distinct days
MIN_CONFIDENCE = 0.5  # n_f / (n_f + n_v) >= 0.5
# Lift "accounts for how common the behavior is under comparable temporal restrictions"
# (§3.1): confidence / base, base the share of observable days with the behavior in the
# window. A behavior that happens on every day has base 1, so no trigger can raise it and it
# predicts nothing. Our margin: the behavior must be at least 20% more likely after the
# trigger than on comparable days; over the few weeks an entity is observed a smaller
# difference is within day-to-day noise (at a base of 0.5 it is 10 percentage points).
MIN_LIFT = 1.2
# Contrast: days on which the trigger did not happen in the window, without which nothing
# says the trigger matters (our choice: two such days at least).
MIN_CONTRAST = 2
# And the evidence must hold at the sample's size: the Wilson score lower bound (95%) of the
# triggered confidence must lie above the behavior's rate on the untriggered days.
WILSON_Z = 1.96
# The two ratio thresholds as exact rationals, so a lift of exactly 1.2 or a confidence of
# exactly 1/2 passes (made once: Fraction.limit_denominator is slow for a check this frequent).
_MIN_LIFT = Fraction(MIN_LIFT).limit_denominator(100)
_MIN_CONFIDENCE = Fraction(MIN_CONFIDENCE)
# A behavior in its window on at least this share of observable days (and on at least
# MIN_FULFILLED of them) whatever the trigger is a habit: shown and usable as context, never a
# deviation alert (it fails the lift margin by construction).
HABIT_SHARE = 0.9
# Our choice: a candidate gets 28 observable days from its first fulfilled day to pass
# activation; one that has not by then is retired: no longer assessed at each close, offered to
# retrieval, or tracked again under the same proposal (the routine may come back under another
# window). Four weeks, the miner's window (day.MINING_DAYS): every weekday four times, enough
# for the three fulfilled and two contrast days activation asks, so a trigger that has not
# shown it raises the behavior by then is not predictive. Without it, every proposal ever mined
# is assessed at every close and a close costs more each day (a desktop's miner proposes tens
# a day, the same routines under new windows, nearly all never activating).
RETIRE_AFTER_DAYS = 28
# Lifecycle (ProactMem): consecutive violations that weaken, then put to sleep, an active one.
WEAKENING_AFTER = 2
DORMANT_AFTER = 4
# Lifecycle confidence is smoothed with one prior success and one prior failure (ProactMem).
PRIOR_SUCCESSES = 1
PRIOR_FAILURES = 1
# A fulfilment returns a weakening regularity to active at this smoothed confidence (ProactMem).
RECOVERY_CONFIDENCE = 0.5
# Our choice: an active or weakening regularity must keep the evidence it was activated on
# (lift >= MIN_LIFT and a margin over the untriggered days); one that loses it is a candidate
# again, since only active regularities can call for a service. A hysteresis band (demoting
# only below lift 1) was measured on the real streams: it kept a tenth of the active set
# between lift 1 and 1.2 and saved few flips (48 against 62 regularities activated twice).

Outcome = Literal["fulfilled", "violated", "censored", "inapplicable", "not_triggered"]
# Eligible days: the trigger was observed in the window. Only these move confidence.
ELIGIBLE: frozenset[str] = frozenset({"fulfilled", "violated"})
# Observable, applicable days: the denominator of base (and of nothing else).
OBSERVABLE: frozenset[str] = frozenset({"fulfilled", "violated", "not_triggered"})

LifecycleState = Literal["candidate", "habit", "active", "weakening", "dormant", "retired"]


class MalformedProposal(ValueError):
    """A proposal that cannot be replayed; it fails closed (never activates)."""


def validate_proposal(p: object) -> str | None:
    """Why ``p`` cannot be replayed, or None when it can.

    Proposals come from a miner and, optionally, an LLM, so everything is checked at run time.
    """
    if not isinstance(p, Proposal):
        return f"a proposal must be a Proposal, not {type(p).__name__}"
    for role, pred in (("trigger", p.trigger), ("behavior", p.behavior)):
        reason = _predicate_problem(pred)
        if reason:
            return f"{role}: {reason}"
    if p.trigger.path == p.behavior.path and same(p.trigger.value, p.behavior.value):
        return "trigger and behavior are the same predicate; a day would fulfil itself"
    window = p.window
    if not (isinstance(window, tuple) and len(window) == 2):
        return "window must be a (start, end) pair of local times of day"
    start, end = window
    if not (isinstance(start, time) and isinstance(end, time)):
        return "window start and end must be datetime.time values"
    if start.tzinfo is not None or end.tzinfo is not None:
        return "window times are local wall-clock times and carry no time zone"
    if start >= end:
        # No window crosses midnight: it would span two local days, and a day is replayed alone.
        return f"window start {start.isoformat()} must be before its end {end.isoformat()}"
    if p.weekdays is not None:
        if not isinstance(p.weekdays, frozenset) or not p.weekdays:
            return "weekdays must be None (every day) or a non-empty frozenset"
        bad = [d for d in p.weekdays if isinstance(d, bool) or not isinstance(d, int)]
        if bad or not all(0 <= d <= 6 for d in p.weekdays):
            got = sorted(map(repr, p.weekdays))
            return f"weekdays must be integers 0 (Monday) to 6 (Sunday), got {got}"
    return None


# A proposal is immutable: checked once while held, not once per day it is assessed on (a
# tracked regularity is assessed at every close, a new one on every day of its replay).
_problems: IdentityMemo[Proposal, str | None] = IdentityMemo(validate_proposal, limit=16384)


def proposal_problem(p: Proposal) -> str | None:
    """:func:`validate_proposal` of a :class:`Proposal`, worked out once per proposal held."""
    return _problems(p)


def _predicate_problem(pred: object) -> str | None:
    if not isinstance(pred, Predicate):
        return f"must be a Predicate, not {type(pred).__name__}"
    if not isinstance(pred.path, tuple) or not pred.path:
        return "path must be a non-empty tuple of field names"
    if not all(isinstance(part, str) and part for part in pred.path):
        return f"path {pred.path!r} has an empty or non-string field name"
    if not is_scalar(pred.value):
        return (
            f"value must be a scalar (str, number, bool or null), got {type(pred.value).__name__}"
        )
    if isinstance(pred.value, float) and not math.isfinite(pred.value):
        return f"value {pred.value!r} is not a finite number"
    return None


def _predicate_key(q: Predicate) -> list[object]:
    return [list(q.path), list(canonical(q.value) or ())]


def _key_text(parts: list[object]) -> str:
    return json.dumps(
        parts,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,  # a canonical time (a datetime) as its ISO text
    )


def _weekdays(p: Proposal) -> list[int] | None:
    return None if p.weekdays is None else sorted(p.weekdays)


def _proposal_key(p: Proposal) -> str:
    start, end = p.window
    return _key_text(
        [
            _predicate_key(p.trigger),
            _predicate_key(p.behavior),
            start.isoformat(),
            end.isoformat(),
            _weekdays(p),
        ]
    )


# A proposal is immutable and asked for its key at every close and decision that reads it.
_proposal_keys: IdentityMemo[Proposal, str] = IdentityMemo(_proposal_key, limit=16384)


def proposal_key(p: Proposal) -> str:
    """A stable text identity of a proposal: equal for proposals that match the same days."""
    return _proposal_keys(p)


def family_key(p: Proposal) -> str:
    """What a proposal claims, window aside: trigger, behavior and weekday set.

    The miner re-derives a routine's window from the latest days, so the same routine comes
    back with a slightly different window as days accrue; one regularity per family keeps it
    from being tracked again and again (day.py).
    """
    return _key_text([_predicate_key(p.trigger), _predicate_key(p.behavior), _weekdays(p)])


def matches(pred: Predicate, obs: Observation) -> bool:
    """Same field path and the same canonical value (ProactMem's matching rule)."""
    return obs.path == pred.path and same(pred.value, obs.value)


def in_window(p: Proposal, day: date, obs: Observation) -> bool:
    """Whether ``obs`` lies in the proposal's window on ``day``: local wall clock, [start, end).

    An observation whose local date is not ``day`` is outside every window of that day.
    """
    start, end = p.window
    return obs.at.date() == day and start <= obs.at.time() < end


# A closed day's observations by (path, canonical value), each list in (time, fact id) order:
# every regularity assessed on the day looks its trigger and behavior up instead of scanning
# the day. Records are immutable; the cache holds the record itself to tell a reused id apart.
DayIndex = dict[tuple[tuple[str, ...], object], list[Observation]]
_INDEXES: dict[int, tuple[DayRecord, DayIndex]] = {}
_INDEXES_MAX = 512


def day_index(record: DayRecord) -> DayIndex:
    """The record's observations of its own date by (path, canonical value), time-ordered."""
    held = _INDEXES.get(id(record))
    if held is not None and held[0] is record:
        return held[1]
    index: DayIndex = {}
    for o in record.observations:
        if o.at.date() != record.day:
            continue  # outside every window of the day (in_window)
        key = canonical(o.value)
        if key is not None:
            index.setdefault((o.path, key), []).append(o)
    for found in index.values():
        found.sort(key=lambda o: (o.at, o.fact_id))
    if len(_INDEXES) >= _INDEXES_MAX:
        _INDEXES.clear()
    _INDEXES[id(record)] = (record, index)
    return index


def _matching(index: DayIndex, pred: Predicate) -> list[Observation]:
    key = canonical(pred.value)
    return [] if key is None else index.get((pred.path, key), [])


@dataclass(frozen=True, slots=True)
class Assessment:
    """How one day went for one proposal, and the facts that say so."""

    day: date
    outcome: Outcome
    # The first trigger's fact id, then the behavior's when fulfilled; empty otherwise.
    fact_ids: tuple[str, ...] = ()
    # Whether the behavior occurred in the window at all that day (base's numerator).
    behavior_in_window: bool = False


def assess_day(proposal: Proposal, record: DayRecord) -> Assessment:
    """The outcome of one day (ProactMem replay rules).

    In order: a weekday outside the set is ``inapplicable`` whether or not it was observed; a day
    with no observations at all is ``censored``; an observed day with no trigger inside the window
    is ``not_triggered`` (not eligible: only a trigger inside the window makes a day eligible, so a
    trigger before the window opens does not count); otherwise the day is ``fulfilled`` when the
    behavior occurs inside the window at or after the first in-window trigger, else ``violated``.
    """
    reason = proposal_problem(proposal)
    if reason:
        raise MalformedProposal(reason)
    day = record.day
    if proposal.weekdays is not None and record.weekday not in proposal.weekdays:
        return Assessment(day, "inapplicable")
    if not record.observations:
        return Assessment(day, "censored")
    index = day_index(record)
    start, end = proposal.window

    def inside(o: Observation) -> bool:
        return start <= o.at.time() < end

    behaviors = [o for o in _matching(index, proposal.behavior) if inside(o)]
    behavior_in_window = bool(behaviors)
    # Each list is in (time, fact id) order: the first inside the window is the earliest.
    trigger = next((o for o in _matching(index, proposal.trigger) if inside(o)), None)
    if trigger is None:
        return Assessment(day, "not_triggered", (), behavior_in_window)
    behavior = next((o for o in behaviors if o.at >= trigger.at), None)
    if behavior is None:
        return Assessment(day, "violated", (trigger.fact_id,), behavior_in_window)
    return Assessment(day, "fulfilled", (trigger.fact_id, behavior.fact_id), behavior_in_window)


def wilson_lower(successes: int, trials: int, z: float = WILSON_Z) -> float:
    """The Wilson score interval's lower bound of a proportion; 0 for no trials."""
    if trials <= 0:
        return 0.0
    p = successes / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return (centre - spread) / (1 + z * z / trials)


@dataclass(frozen=True, slots=True)
class Tally:
    """Replay counts over a run of days: the one place activation is computed."""

    n_f: int = 0
    n_v: int = 0
    observable: int = 0  # observable, applicable days: base's denominator
    behavior_days: int = 0  # of those, days with the behavior in the window: base's numerator
    # Of the observable days without a trigger in the window (the contrast), those with the
    # behavior in the window anyway: the untriggered base rate's numerator.
    untriggered_behavior: int = 0

    def add(self, a: Assessment) -> Tally:
        if a.outcome not in OBSERVABLE:
            return self
        return Tally(
            self.n_f + (a.outcome == "fulfilled"),
            self.n_v + (a.outcome == "violated"),
            self.observable + 1,
            self.behavior_days + a.behavior_in_window,
            self.untriggered_behavior + (a.outcome == "not_triggered" and a.behavior_in_window),
        )

    @property
    def contrast(self) -> int:
        """Observable days on which the trigger did not happen in the window."""
        return self.observable - self.n_f - self.n_v

    @property
    def untriggered_base(self) -> float:
        """The behavior's rate in the window on the contrast days; 0 on none."""
        return self.untriggered_behavior / self.contrast if self.contrast else 0.0

    @property
    def margin(self) -> float:
        """How much the trigger predicts: the Wilson lower bound of the triggered confidence
        less the untriggered base rate (what regularities are ranked by)."""
        return wilson_lower(self.n_f, self.n_f + self.n_v) - self.untriggered_base

    @property
    def habit(self) -> bool:
        """A behavior in its window on nearly every observable day, whatever the trigger."""
        return (
            self.behavior_days >= MIN_FULFILLED
            and self.behavior_days >= HABIT_SHARE * self.observable
        )

    def _confidence(self) -> Fraction:
        eligible = self.n_f + self.n_v
        return Fraction(self.n_f, eligible) if eligible else Fraction(0)

    def _base(self) -> Fraction:
        return Fraction(self.behavior_days, self.observable) if self.observable else Fraction(0)

    def _lift(self) -> Fraction:
        base = self._base()
        return self._confidence() / base if base else Fraction(0)

    @property
    def confidence(self) -> float:
        """n_f / (n_f + n_v); 0 when no day was eligible."""
        return float(self._confidence())

    @property
    def base(self) -> float:
        """Share of observable, applicable days with the behavior in the window; 0 on none."""
        return float(self._base())

    @property
    def lift(self) -> float:
        """confidence / base; 0 when base is 0."""
        return float(self._lift())

    @property
    def smoothed_confidence(self) -> float:
        """(n_f + 1) / (n_f + n_v + 2): the lifecycle's confidence."""
        return float(self._smoothed())

    def _smoothed(self) -> Fraction:
        return Fraction(
            self.n_f + PRIOR_SUCCESSES, self.n_f + self.n_v + PRIOR_SUCCESSES + PRIOR_FAILURES
        )

    @property
    def informative(self) -> bool:
        """The trigger raises the behavior: lift >= MIN_LIFT (exact: 1.2 passes) and a margin."""
        return self._lift() >= _MIN_LIFT and self.margin > 0

    @property
    def activated(self) -> bool:
        # Exact rationals: a confidence of exactly 1/2 or a lift of exactly 1.2 passes.
        return (
            self.n_f >= MIN_FULFILLED
            and self.contrast >= MIN_CONTRAST
            and self._confidence() >= _MIN_CONFIDENCE
            and self.informative
        )


def one_per_date(records: Iterable[DayRecord]) -> list[DayRecord]:
    """Each date once, in date order; of several records for a date, the last one given wins.

    A later record for a date is a re-extraction of that day (after new events or a fixed
    extractor), so it supersedes the earlier one.
    """
    by_day: dict[date, DayRecord] = {}
    for r in records:
        by_day[r.day] = r
    return [by_day[d] for d in sorted(by_day)]


@dataclass(frozen=True, slots=True)
class Replay:
    """A proposal replayed over daily records."""

    assessments: tuple[Assessment, ...]
    tally: Tally
    rejected: str | None = None  # why a malformed proposal was not replayed

    @property
    def n_f(self) -> int:
        return self.tally.n_f

    @property
    def n_v(self) -> int:
        return self.tally.n_v

    @property
    def confidence(self) -> float:
        return self.tally.confidence

    @property
    def base(self) -> float:
        return self.tally.base

    @property
    def lift(self) -> float:
        return self.tally.lift

    @property
    def activated(self) -> bool:
        return self.rejected is None and self.tally.activated


def replay(proposal: Proposal, records: Sequence[DayRecord]) -> Replay:
    """Assess every date once and compute the activation figures. Malformed: fails closed."""
    reason = validate_proposal(proposal)
    if reason:
        return Replay((), Tally(), rejected=reason)
    assessments = tuple(assess_day(proposal, r) for r in one_per_date(records))
    tally = Tally()
    for a in assessments:
        tally = tally.add(a)
    return Replay(assessments, tally)


@dataclass(frozen=True, slots=True)
class Transition:
    """A lifecycle change, with the day and the facts that caused it."""

    day: date
    from_state: LifecycleState
    to_state: LifecycleState
    reason: str
    fact_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RegularityState:
    """Where a proposal stands after the days processed so far.

    ``tally`` counts the days of the current replay: from the first day (or from the day after
    the regularity went dormant) through activation and on; after activation only eligible days
    move it. ``last_day`` is the last day processed: days at or before it are ignored, so
    processing an overlapping batch again changes nothing.
    """

    state: LifecycleState = "candidate"
    tally: Tally = field(default_factory=Tally)
    violation_run: int = 0
    violation_facts: tuple[str, ...] = ()  # the trigger facts of the current violation run
    transitions: tuple[Transition, ...] = ()
    last_day: date | None = None
    rejected: str | None = None  # a malformed proposal stays a candidate, never processed
    # Observable days as a candidate since its first fulfilled day as one (retirement).
    trial_days: int = 0

    @property
    def n_f(self) -> int:
        return self.tally.n_f

    @property
    def n_v(self) -> int:
        return self.tally.n_v

    @property
    def confidence(self) -> float:
        """The smoothed support ratio (n_f + 1) / (n_f + n_v + 2) over the tallied days."""
        return self.tally.smoothed_confidence


def advance(state: RegularityState, a: Assessment) -> RegularityState:
    """Apply one assessed day to the lifecycle (ProactMem lifecycle rules).

    - candidate: the day joins the replay tally; the first day on which the activation rule holds
      moves it to active (the transition cites that day's facts). Its support counts carry over.
      A candidate whose behavior turns out to happen on nearly every day whatever the trigger
      becomes a *habit*, and back to a candidate should that change; a habit never weakens or
      alerts, and becomes active only by passing the activation rule.
    - active / weakening: not_triggered days count towards the base rate and the contrast only;
      censored and inapplicable days change nothing. A violation extends the run of consecutive
      violations: at 2 an active one weakens, at 4 it is dormant. A fulfilment ends the run
      (even if it stays weakening) and returns a weakening one to active when the smoothed
      confidence is >= 0.5. One whose behavior has become a habit is a habit; one whose
      trigger no longer carries the activation evidence (lift below ``MIN_LIFT`` or no margin)
      is a candidate again.
    - dormant: the tally restarts empty at the day it went dormant and replays every later day;
      the first eligible day after it makes it a candidate again (and is the first eligible day
      of the new replay), which then activates only by passing replay over those days.
    - a candidate that has not activated ``RETIRE_AFTER_DAYS`` observable days after its first
      fulfilled day as one is retired, and a retired one changes no more.
    """
    if state.rejected is not None or state.state == "retired":
        return state
    if state.last_day is not None and a.day <= state.last_day:
        return state
    # The lifecycle never reads the last day processed: it is set with the trial count, in
    # one new state, after the lifecycle moved (a regularity is advanced at every close).
    s = _lifecycle(state, a)
    if s.state != "candidate":
        return replace(s, last_day=a.day, trial_days=0)
    # The trial starts at the first fulfilled day as a candidate (a routine replayed over days
    # before it began is not on trial yet), and again whenever it becomes a candidate anew.
    held = state.trial_days if state.state == "candidate" else 0
    on_trial = a.outcome in OBSERVABLE and (held > 0 or a.outcome == "fulfilled")
    trial = held + 1 if on_trial else held
    s = replace(s, last_day=a.day, trial_days=trial)
    if trial >= RETIRE_AFTER_DAYS:
        reason = (
            f"not activated {RETIRE_AFTER_DAYS} observable days after it was first fulfilled: "
            "the trigger does not raise the behavior enough to predict it"
        )
        return _move(s, a, "retired", reason)
    return s


def _lifecycle(s: RegularityState, a: Assessment) -> RegularityState:
    """:func:`advance` for a state that takes the day, before retirement."""
    if s.state in ("candidate", "habit"):
        s = _activate_if_due(replace(s, tally=s.tally.add(a)), a)
        if s.state == "candidate" and s.tally.habit:
            return _to_habit(s, a)
        if s.state == "habit" and not s.tally.habit:
            return _move(s, a, "candidate", "the behavior no longer happens on nearly every day")
        return s
    if s.state == "dormant":
        s = replace(s, tally=s.tally.add(a))
        if a.outcome not in ELIGIBLE:
            return s
        s = _move(s, a, "candidate", "first eligible day after going dormant: replay again")
        return _activate_if_due(s, a)
    tally = s.tally.add(a)
    if a.outcome not in ELIGIBLE:
        return _stale_if_so(replace(s, tally=tally), a)
    if a.outcome == "fulfilled":
        s = replace(s, tally=tally, violation_run=0, violation_facts=())
        if s.state == "weakening" and tally._smoothed() >= Fraction(RECOVERY_CONFIDENCE):
            return _stale_if_so(
                _move(s, a, "active", "fulfilled with smoothed confidence >= 0.5"), a
            )
        return _stale_if_so(s, a)
    run_length = s.violation_run + 1
    s = replace(
        s,
        tally=tally,
        violation_run=run_length,
        violation_facts=s.violation_facts + a.fact_ids,
    )
    if run_length >= DORMANT_AFTER:
        s = _move(s, a, "dormant", f"{DORMANT_AFTER} consecutive violations", s.violation_facts)
        return replace(s, tally=Tally(), violation_run=0, violation_facts=())
    if run_length >= WEAKENING_AFTER and s.state == "active":
        s = _move(s, a, "weakening", f"{WEAKENING_AFTER} consecutive violations", s.violation_facts)
    return _stale_if_so(s, a)


def _stale_if_so(s: RegularityState, a: Assessment) -> RegularityState:
    t = s.tally
    if s.state not in ("active", "weakening"):
        return s
    if t.habit:
        return _to_habit(s, a)
    if t.informative:
        return s
    reason = (
        f"the trigger no longer predicts the behavior: lift {t.lift:.2f}, behavior on "
        f"{t.untriggered_behavior} of {t.contrast} days without the trigger"
    )
    s = _move(s, a, "candidate", reason)
    return replace(s, violation_run=0, violation_facts=())


def _to_habit(s: RegularityState, a: Assessment) -> RegularityState:
    t = s.tally
    reason = (
        f"the behavior happened on {t.behavior_days} of {t.observable} days whatever the "
        "trigger: a habit, never a deviation alert"
    )
    return replace(_move(s, a, "habit", reason), violation_run=0, violation_facts=())


def _activate_if_due(s: RegularityState, a: Assessment) -> RegularityState:
    if not s.tally.activated:
        return s
    t = s.tally
    reason = (
        f"replay passed: fulfilled on {t.n_f} of {t.n_f + t.n_v} triggered days "
        f"(confidence {t.confidence:.2f}), lift {t.lift:.2f}, behavior on "
        f"{t.untriggered_behavior} of {t.contrast} days without the trigger"
    )
    return _move(s, a, "active", reason)


def _move(
    s: RegularityState,
    a: Assessment,
    to: LifecycleState,
    reason: str,
    fact_ids: tuple[str, ...] | None = None,
) -> RegularityState:
    t = Transition(a.day, s.state, to, reason, a.fact_ids if fact_ids is None else fact_ids)
    return replace(s, state=to, transitions=s.transitions + (t,))


def run(
    proposal: Proposal,
    records: Sequence[DayRecord],
    state: RegularityState | None = None,
) -> RegularityState:
    """Process ``records`` (one per date, last wins, in date order) from ``state`` or the start.

    Resumable: ``run(p, a + b)`` equals ``run(p, b, run(p, a))`` when every date in ``b`` is
    after every date in ``a`` — a completed day is processed once; records for days at or before
    the last one processed are ignored.
    """
    reason = validate_proposal(proposal)
    if reason:
        return RegularityState(rejected=reason)
    s = state if state is not None else RegularityState()
    return advanced(s, (assess_day(proposal, record) for record in one_per_date(records)))


def advanced(state: RegularityState, assessments: Iterable[Assessment]) -> RegularityState:
    """``state`` after each of ``assessments`` in turn (:func:`advance`)."""
    for a in assessments:
        state = advance(state, a)
    return state
