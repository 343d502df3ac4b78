"""Retrieval: the at most three regularities that bear on the current moment (ProactMem, retrieval).

Only active or weakening regularities are retrieved, never a candidate or a dormant one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from operator import attrgetter
from typing import Any, Literal

from memory.engine.canonical import Canonical, canonical
from memory.engine.memo import IdentityMemo
from memory.engine.records import DayRecord, Observation, Predicate, Proposal
from memory.engine.regularities import (
    PRIOR_FAILURES,
    PRIOR_SUCCESSES,
    RegularityState,
    proposal_key,
    proposal_problem,
    wilson_lower,
)

RETRIEVAL_LEAD = timedelta(minutes=30)  # ProactMem retrieval: a window is shown 30 min early
# ... and after it closes, where only a deviation can still be retrieved (a fulfilled or
# untriggered occurrence is left out). Our choice: two hours, because the first moment to act
# on a deviation may come well after the window (the next motion at home, the next event on
# a pull request); intervention control suppresses repeats of one identity.
RETRIEVAL_GRACE = timedelta(hours=2)
TOP_K = 3  # ProactMem: at most three regularities in a decision's context

Occurrence = Literal["upcoming", "pending", "fulfilled", "deviated", "censored", "not_triggered"]
# What a decision may see; fulfilled, censored and not_triggered occurrences are never retrieved.
RETRIEVED: tuple[Occurrence, ...] = ("deviated", "pending", "upcoming")  # in rank order
LIFECYCLE_RANK = {"active": 0, "weakening": 1}


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One regularity retrieved for the current moment, with the facts of today it rests on."""

    key: str  # proposal_key: the stable tie-break
    proposal: Proposal
    state: Literal["active", "weakening"]
    confidence: float
    occurrence: Occurrence
    distance: timedelta  # from now to the window [start, end); zero inside it
    deadline: datetime  # the window's end today, local
    fact_ids: tuple[str, ...]  # today's first in-window trigger, if seen
    n_f: int = 0  # the regularity's fulfilled and violated days, for its evidence in words
    n_v: int = 0

    @property
    def assured(self) -> float:
        """How often, at least, the behavior follows the trigger on the evidence of the tally:
        the lower bound of the Wilson score interval (95 %) of n_f fulfilled days in n_f + n_v.

        What a deviation is scored by (``decide.RulesPolicy``): the threshold a team sets is
        the chance an act must have of being right, and three fulfilled days in six show a
        routine that holds about half the time, not one that holds at least half the time.
        Activation and ranking read the same bound of the same tally (``Tally.margin``).
        """
        return wilson_lower(self.n_f, self.n_f + self.n_v)


def occurrence(
    proposal: Proposal, now: datetime, today: DayRecord
) -> tuple[Occurrence, tuple[str, ...]]:
    """Today's occurrence of ``proposal`` as of ``now`` (local), and the trigger fact it rests on.

    Only observations at or before ``now`` count. In order: no observation today is
    ``censored``; before the window opens, ``upcoming``; once open, with no trigger in the window
    yet, ``not_triggered``; a behavior at or after the first in-window trigger and inside the
    window is ``fulfilled``; otherwise ``pending`` while the window is open and ``deviated`` once
    it has closed (a behavior after the window's end does not fulfil it, as in replay).
    """
    return _occurrence(proposal, now, today.day, _by_path(today, now))


# Today's observations up to now, by path and canonical value, each list in (time, fact id)
# order: a regularity looks up its trigger and its behavior directly instead of scanning the day
# and canonicalising every value again for each of hundreds of regularities.
Seen = dict[tuple[str, ...], dict[Canonical, list[Observation]]]


# The last record indexed, the moment it was indexed for, the index, and the record's latest
# observation when every one was at or before that moment (else None).
_SEEN: list[tuple[DayRecord, datetime, Seen, datetime | None]] = []
_OBSERVATION_ORDER = attrgetter("at", "fact_id")


def _by_path(today: DayRecord, now: datetime) -> Seen:
    # Several policies (the benchmark's methods) retrieve on one record at one moment, and
    # decisions follow one another on one record until the day gains events: index it once.
    # An index that holds every observation holds them for any later moment too. The record is
    # immutable; holding it tells a reused id apart.
    if not today.observations:
        return {}  # nothing seen today: no index to keep (it would push out a real one)
    held = _SEEN[0] if _SEEN else None  # read once: another thread may replace it
    if held is not None and held[0] is today:
        _, then, found, latest = held
        if now == then or (latest is not None and now >= latest):
            return found
    found = _seen(today, now)
    last = max(o.at for o in today.observations)
    _SEEN[:] = [(today, now, found, last if last <= now else None)]
    return found


def _seen(today: DayRecord, now: datetime) -> Seen:
    found: Seen = {}
    for o in sorted(today.observations, key=_OBSERVATION_ORDER):
        if o.at <= now:
            key = canonical(o.value)
            if key is not None:
                found.setdefault(o.path, {}).setdefault(key, []).append(o)
    return found


def _matching(seen: Seen, pred: Predicate) -> list[Observation]:
    key = _canonical_value(pred)
    return [] if key is None else seen.get(pred.path, {}).get(key, [])


# A regularity's trigger and behavior are looked up at decision after decision, and a
# predicate never changes: each value is made canonical once.
_canonical_value: IdentityMemo[Predicate, Canonical | None] = IdentityMemo(
    lambda pred: canonical(pred.value), limit=8192
)


def _occurrence(
    proposal: Proposal, now: datetime, day: date, seen: Seen
) -> tuple[Occurrence, tuple[str, ...]]:
    start, end, _low, _high = _bounds(day, proposal.window)
    return _occurrence_within(proposal, _wall(now), start, end, day, seen)


def _occurrence_within(
    proposal: Proposal, wall: datetime, start: datetime, end: datetime, day: date, seen: Seen
) -> tuple[Occurrence, tuple[str, ...]]:
    """:func:`_occurrence` at the wall clock ``wall``, the window's [start, end) today given."""
    if not seen:
        return "censored", ()
    if wall < start:
        return "upcoming", ()
    first, behavior = _found(proposal, day, seen)
    if first is None:
        return "not_triggered", ()
    if behavior is not None:
        return "fulfilled", (first.fact_id, behavior.fact_id)
    return ("pending" if wall < end else "deviated"), (first.fact_id,)


@lru_cache(maxsize=4096)
def _bounds(day: date, window: tuple[time, time]) -> tuple[datetime, datetime, datetime, datetime]:
    """The window on ``day``'s wall clock, [start, end), and the reach around it, [low, high):
    the same for every regularity with that window, at every decision of the day."""
    start = datetime.combine(day, window[0])
    end = datetime.combine(day, window[1])
    return start, end, start - RETRIEVAL_LEAD, end + RETRIEVAL_GRACE


# The first in-window trigger and the behavior after it, per proposal, on the last index they
# were looked up in (_FOUND_IN): decisions follow one another on one index until the day gains
# an observation, and only the clock decides between upcoming, pending and deviated. Each
# entry holds its proposal and its index, so a reused id, or another thread's index, never
# matches.
_FOUND: dict[int, tuple[Proposal, Seen, date, Observation | None, Observation | None]] = {}
_FOUND_IN: list[Seen] = []


def _found(
    proposal: Proposal, day: date, seen: Seen
) -> tuple[Observation | None, Observation | None]:
    if not _FOUND_IN or _FOUND_IN[0] is not seen:
        _FOUND.clear()
        _FOUND_IN[:] = [seen]
    held = _FOUND.get(id(proposal))
    if held is not None and held[0] is proposal and held[1] is seen and held[2] == day:
        return held[3], held[4]
    opens, closes = proposal.window
    # in_window(proposal, day, o), inlined: a decision tests hundreds of regularities.
    first = behavior = None
    for o in _matching(seen, proposal.trigger):
        at = o.at
        if at.date() == day and opens <= at.time() < closes:
            first = o
            break
    if first is not None:
        began = first.at
        for o in _matching(seen, proposal.behavior):
            at = o.at
            if at >= began and at.date() == day and opens <= at.time() < closes:
                behavior = o
                break
    _FOUND[id(proposal)] = (proposal, seen, day, first, behavior)
    return first, behavior


def _by_clock(wall_now: datetime, start: datetime, end: datetime) -> Occurrence:
    if wall_now < start:
        return "upcoming"
    return "pending" if wall_now < end else "deviated"


def _wall(t: datetime) -> datetime:
    # Windows are local wall-clock ranges; comparing wall clocks keeps a DST day's windows where
    # the clock on the wall says they are.
    return t.replace(tzinfo=None)


def in_reach(proposal: Proposal, now: datetime) -> bool:
    """Whether ``now`` (local) is inside today's window widened by the lead and the grace: the
    only time retrieval can pick the regularity (weekdays aside)."""
    low, high = _reach(proposal.window)
    return low <= clock_seconds(now) < high


def clock_seconds(now: datetime) -> float:
    """``now``'s wall clock in seconds after local midnight, as :func:`in_reach` reads it."""
    return now.hour * 3600 + now.minute * 60 + now.second + now.microsecond / 1e6


def reach(proposal: Proposal) -> tuple[float, float]:
    """The seconds after local midnight within which :func:`in_reach` holds: [low, high)."""
    return _reach(proposal.window)


@lru_cache(maxsize=4096)
def _reach(window: tuple[time, time]) -> tuple[float, float]:
    # Seconds after local midnight on the wall clock; the same test as comparing wall-clock
    # datetimes of one day (a bound before midnight or after it simply never excludes).
    start, end = (t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6 for t in window)
    return start - RETRIEVAL_LEAD.total_seconds(), end + RETRIEVAL_GRACE.total_seconds()


def retrieve(
    states_with_proposals: Iterable[tuple[Proposal, RegularityState]],
    now: datetime,
    today: DayRecord,
    *,
    gate: bool = True,
    blind: bool = False,
) -> list[Retrieved]:
    """The top three active or weakening regularities for ``now`` (local, aware).

    A regularity is considered when today's weekday is in its set and ``now`` is in
    [start - 30 min, end + 30 min) of today's window (lead and grace stay inside today: a window
    near midnight is not looked for on the neighbouring day). Ranked by occurrence (deviated,
    pending, upcoming), then lifecycle state (active before weakening), then how much the
    regularity predicts (``Tally.margin``, more first), then distance from now to the window
    (closer first), then proposal key.

    Two ProactMem ablations (§5) switch a layer off: ``gate=False`` retrieves every replayable
    regularity whatever its lifecycle state (no replay gate: a candidate or a dormant one counts
    as active); ``blind=True`` reads no trajectory of today, so an occurrence is judged by the
    clock alone (upcoming before the window, pending inside it, deviated after it) and cites no
    fact.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("retrieve: `now` must be an aware local datetime (the entity's time zone)")
    if today.day != now.date():
        raise ValueError(
            f"retrieve: today's record is for {today.day}, but now is {now.date()}; "
            "pass the record of now's local day"
        )
    seen: Seen = {} if blind else _by_path(today, now)  # blind reads no facts of today
    wall_now = _wall(now)
    weekday = today.weekday
    day = today.day
    # Rank first, build the records of the top three only: hundreds of regularities can be in
    # reach at once, and a decision waits for this. Their order's first two keys (occurrence,
    # lifecycle state) are cheap; the rest is worked out only for the candidates whose first
    # two keys can still place them among the top three.
    found: list[tuple[tuple[int, int], Proposal, RegularityState, Occurrence, tuple[str, ...],
                      datetime, datetime]]  # fmt: skip
    found = []
    for proposal, st in states_with_proposals:
        if gate and st.state not in LIFECYCLE_RANK:
            continue
        if proposal.weekdays is not None and weekday not in proposal.weekdays:
            continue
        if proposal_problem(proposal) is not None:
            continue
        start, end, low, high = _bounds(day, proposal.window)
        if not (low <= wall_now < high):
            continue
        fact_ids: tuple[str, ...]
        if blind:
            occ, fact_ids = _by_clock(wall_now, start, end), ()
        else:
            occ, fact_ids = _occurrence_within(proposal, wall_now, start, end, day, seen)
        if occ not in RETRIEVED:
            continue
        first_keys = (RETRIEVED.index(occ), LIFECYCLE_RANK.get(st.state, 0))
        found.append((first_keys, proposal, st, occ, fact_ids, start, end))
    found.sort(key=lambda item: item[0])
    if len(found) > TOP_K:
        last = found[TOP_K - 1][0]
        found = [item for item in found if item[0] <= last]
    ranked: list[tuple[tuple[Any, ...], Proposal, RegularityState, Occurrence, tuple[str, ...]]]
    ranked = []
    for first_keys, proposal, st, occ, fact_ids, start, end in found:
        if wall_now < start:
            distance = start - wall_now
        elif wall_now >= end:
            distance = wall_now - end
        else:
            distance = timedelta(0)
        rank = (*first_keys, -st.tally.margin, distance, proposal_key(proposal))
        ranked.append((rank, proposal, st, occ, fact_ids))
    ranked.sort(key=lambda item: item[0])
    return [
        Retrieved(
            key=rank[4],
            proposal=proposal,
            state="weakening" if st.state == "weakening" else "active",
            # The smoothed confidence as RegularityState.confidence gives it (int / int is
            # correctly rounded, as float(Fraction) is), without building a Fraction.
            confidence=(st.tally.n_f + PRIOR_SUCCESSES)
            / (st.tally.n_f + st.tally.n_v + PRIOR_SUCCESSES + PRIOR_FAILURES),
            occurrence=occ,
            distance=rank[3],
            deadline=datetime.combine(today.day, proposal.window[1], tzinfo=now.tzinfo),
            fact_ids=fact_ids,
            n_f=st.tally.n_f,
            n_v=st.tally.n_v,
        )
        for rank, proposal, st, occ, fact_ids in ranked[:TOP_K]
    ]
