"""The regularity miner: deterministic candidate proposals from validated facts (ProactMem §3).

ProactMem proposes regularities with a deterministic miner over validated facts and leaves the
decision about them to replay and the lifecycle (``regularities.run``). The miner only proposes;
a mined proposal is a *candidate* until replay activates it. The rule, in order:

1. **Predicates.** Every distinct (path, canonical value) of the records' observations, except
   paths with a ``private`` part (never mined: private data is no regularity's evidence) and
   values that equal nothing (NaN). A predicate needs ``MIN_FULFILLED`` distinct days.
   *Equivalent* predicates, seen on the same days and each day first within
   ``EQUIVALENT_WITHIN`` of each other (two sensors of one room, a field and its alias), are
   one: the most readable (``READABLE``: a room before a device, a device before a type) stands
   for them, so one routine is never tracked twice under two names. Only the
   ``MAX_PREDICATES`` best supported (days, then key) go on, so the pair step is bounded by
   ``MAX_PREDICATES ** 2`` whatever a day holds.
2. **Pairs.** An ordered pair (trigger, behavior) of those predicates is supported on a day when
   the behavior occurs at or after the day's first trigger. Pairs of two facts of one segment
   kind at different paths (``decision_point/available`` then ``decision_point/location``) are
   skipped: such facts are cut from the same segments and pairing them mines the extractor, not
   the person. The same path with two values (a door OPEN, then CLOSE) is a real pair. A pair
   whose behavior came at the very instant of the trigger on every supporting day is one
   observation under two names (getting up in the bedroom, activity in the bedroom): skipped.
3. **Window.** A routine happens around one time of day: the supporting days are those whose
   first trigger fell in the most common hour (the earliest of equals), when at least
   ``MIN_FULFILLED`` did, and all of them otherwise. From those: the hour the first trigger
   fell in, to the hour after the behavior's (so a behavior on the hour is inside
   ``[start, end)``); the earliest and latest ``WINDOW_TRIM`` share of days are dropped first,
   so one odd day does not widen the window to the whole day. A window never leaves its day:
   an end past 23:00 is ``time.max``. Days whose trigger came at another hour are then the
   contrast that tells a routine (getting up at seven, breakfast by eight) from a habit
   (breakfast at some point of every morning), which replay gates on.
4. **Recount.** Support is counted again with replay's own rule inside that window (the first
   trigger *in the window*, then the behavior at or after it, still in the window) and must
   still reach ``MIN_FULFILLED``.
5. **Weekdays.** Besides the every-day proposal, a Mon–Fri or Sat–Sun variant is proposed only
   when support clearly concentrates there: that group has ``MIN_FULFILLED`` supporting days,
   the other group has ``MIN_FULFILLED`` days with the trigger in the window (enough to say it
   differs), and the other group's fulfilment rate is at most ``1 / CONCENTRATION`` of the
   group's. The variant gets its own window from its own days.
6. **Output.** Proposals whose ``proposal_key`` is in ``known`` (or whose regularity id is in
   ``known_ids``) are skipped; the rest are ranked
   by support (days, more first), then key, and at most ``limit`` are returned. Every one passes
   ``validate_proposal``.

Records are read one per date (the last given wins, as replay reads them), so the result does
not depend on the order the records come in. Measured (one CPU core, 90 days of random
observations over 8 paths, where nearly every pair passes: the worst case for the pair step):
30 observations a day in about 0.25 s, 300 in 0.6 s, 3,000 in 1.0 s.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Collection, Sequence
from datetime import date, datetime, time
from functools import lru_cache
from itertools import count

from memory.engine.canonical import Canonical, canonical, is_scalar
from memory.engine.memo import IdentityMemo
from memory.engine.records import DayRecord, Path, Predicate, Proposal, Scalar
from memory.engine.refs import regularity_id
from memory.engine.regularities import (
    MIN_FULFILLED,
    one_per_date,
    proposal_key,
    proposal_problem,
)

MIN_SUPPORT_DAYS = MIN_FULFILLED  # ProactMem: a regularity needs n_f >= 3, so a pair needs 3 days
MAX_PREDICATES = 40  # our bound: 40 * 39 ordered pairs per day at most, whatever a day holds
MINE_LIMIT = 50  # our default: proposals returned per call
WINDOW_TRIM = 0.1  # our choice: the earliest and latest 10% of days do not stretch the window
CONCENTRATION = 2.0  # our choice: the other weekday group fulfils at most half as often
PRIVATE = "private"  # a path with this part is never mined (ARCHITECTURE: private by default)
WEEKDAY_GROUPS: tuple[frozenset[int], ...] = (frozenset(range(5)), frozenset({5, 6}))
EQUIVALENT_WITHIN = 10  # minutes: our choice, a few heartbeats of two sensors of one spot
# Which of equivalent predicates stands for them, by the last part of its path (lower first):
# what a person names (a room, an app, a device) before what a source names (a kind, a type).
READABLE = {
    "room": 0,
    "place": 0,
    "app": 1,
    "site": 1,
    "sensor": 2,
    "action": 2,
    "event": 2,
    "conclusion": 2,
    "name": 3,
    "type": 6,
}

_PredKey = tuple[Path, Canonical]


# Per predicate, the days it was observed on: the day's position among the days read, to its
# wall-clock times that day, sorted (positions ascending). A pair's days are found from the
# trigger's own days, never by walking every day for every pair.
_Days = dict[int, list[time]]


def mine(
    records: Sequence[DayRecord],
    *,
    known: Collection[str] = (),
    known_ids: Collection[str] = (),
    limit: int = MINE_LIMIT,
) -> tuple[Proposal, ...]:
    """Candidate proposals mined from ``records`` (see the module docstring for the rule);
    ``known`` and ``known_ids`` name proposals to skip by key and by regularity id."""
    if limit <= 0:
        return ()
    days = one_per_date(records)
    preds, dates, seen = _scan(days)
    weekdays = [day.weekday() for day in dates]
    signature = {key: _signature(on, dates) for key, on in seen.items()}
    known_keys = frozenset(known)
    skipped_ids = frozenset(known_ids)
    found: dict[str, tuple[int, Proposal]] = {}
    for trig in preds:
        for beh in preds:
            if trig == beh or _same_segment_fields(trig, beh):
                continue
            pt, pb = preds[trig], preds[beh]
            held = _pair_key(pt, pb, signature[trig], signature[beh])
            pair = _PAIRS.get(held) if held is not None else None
            if pair is None:
                pair = _pair(pt, pb, seen[trig], seen[beh], weekdays)
                if held is not None:
                    if len(_PAIRS) >= PAIRS_HELD:
                        _PAIRS.clear()
                    _PAIRS[held] = pair
            for key, support, proposal in pair:
                if key in known_keys or (skipped_ids and regularity_id(proposal) in skipped_ids):
                    continue
                found[key] = (support, proposal)
    ranked = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return tuple(p for _, (_, p) in ranked[:limit])


def _pair(
    pt: Predicate, pb: Predicate, on_trig: _Days, on_beh: _Days, weekdays: Sequence[int]
) -> tuple[tuple[str, int, Proposal], ...]:
    """Steps 2 to 5 of the module docstring for the pair (``pt``, ``pb``): each proposal it
    gives, every day and weekday variant, as (key, support, proposal), problems left out."""
    _, supporting = _first_pairs(on_trig, on_beh, time.min, time.max, weekdays)
    if len(supporting) < MIN_SUPPORT_DAYS or all(f == a for _, f, a in supporting):
        return ()
    out: list[tuple[str, int, Proposal]] = []
    for group in (None, *_concentrated(on_trig, on_beh, weekdays, supporting)):
        chosen = [s for s in supporting if group is None or weekdays[s[0]] in group]
        window = _window(_modal_hour([(f, a) for _, f, a in chosen]))
        proposal = _proposal(pt, pb, window, group)
        _, fulfilled = _first_pairs(on_trig, on_beh, *window, weekdays, group)
        support = len(fulfilled)
        if support < MIN_SUPPORT_DAYS or proposal_problem(proposal):
            continue
        out.append((proposal_key(proposal), support, proposal))
    return tuple(out)


# A pair's proposals (_pair) follow from its two predicates and their times on each day (a
# day's weekday follows from its date). The miner reads its last 28 days again at every close,
# one day in and one out, so most pairs are seen again unchanged: their proposals are kept by
# what they follow from. Each predicate's days and times are numbered once per call
# (_signature); numbers are never reused, so an entry can only be found for the same days
# and times. Only predicates of plain values are kept (a str, an int, a bool or None, told
# apart by type): values that compare equal yet read differently never share an entry.
# Our bounds on what is kept, each dropped whole when reached. A close needs only the close
# before it: at most MAX_PREDICATES (40) days-and-times and 40 * 39 pairs. 4,096 and 16,384
# keep far more than that, for streams replayed one after another, in a few megabytes (a
# day-and-times entry holds up to 28 days' times).
SIGNATURES_HELD = 4096
PAIRS_HELD = 16384
_PAIRS: dict[tuple[object, ...], tuple[tuple[str, int, Proposal], ...]] = {}
_SIGNATURES: dict[tuple[tuple[date, tuple[time, ...]], ...], int] = {}
_NUMBERS = count()
_PLAIN = (str, int, bool, type(None))


def _signature(on: _Days, dates: Sequence[date]) -> int | None:
    """A number for a predicate's days and wall-clock times on each (None: not kept, a time
    in a repeated hour of a DST change, whose ``fold`` equality does not see)."""
    days = tuple((dates[position], tuple(times)) for position, times in on.items())
    if any(t.fold for _, times in days for t in times):
        return None
    number = _SIGNATURES.get(days)
    if number is None:
        if len(_SIGNATURES) >= SIGNATURES_HELD:
            _SIGNATURES.clear()
        number = _SIGNATURES[days] = next(_NUMBERS)
    return number


def _pair_key(
    pt: Predicate, pb: Predicate, trig: int | None, beh: int | None
) -> tuple[object, ...] | None:
    if trig is None or beh is None or type(pt.value) not in _PLAIN or type(pb.value) not in _PLAIN:
        return None
    return (pt.path, type(pt.value), pt.value, pb.path, type(pb.value), pb.value, trig, beh)


def _scan(
    days: Sequence[DayRecord],
) -> tuple[dict[_PredKey, Predicate], list[date], dict[_PredKey, _Days]]:
    """The ``MAX_PREDICATES`` best supported predicates (each with a representative value),
    each day's date by position, and the days each of those predicates was seen on with its
    sorted wall-clock times there. One pass over the observations."""
    first: dict[_PredKey, tuple[date, datetime, str, Predicate]] = {}
    support: dict[_PredKey, int] = {}
    per_day: list[tuple[date, dict[_PredKey, list[time]]]] = []
    for record in days:
        times, firsts = _day_scan(record)
        for key, seen in firsts.items():
            support[key] = support.get(key, 0) + 1
            # The representative of canonically equal values is the first seen by (day, time,
            # fact id), whatever order the observations were given in.
            if key not in first or seen[:3] < first[key][:3]:
                first[key] = seen
        per_day.append((record.day, times))
    shown = {k: v[3] for k, v in first.items()}
    eligible = _distinct([k for k, n in support.items() if n >= MIN_SUPPORT_DAYS], per_day)
    eligible.sort(key=lambda k: (-support[k], _sort_text(k)))
    chosen = sorted(eligible[:MAX_PREDICATES], key=_sort_text)
    preds = {k: shown[k] for k in chosen}
    seen_on: dict[_PredKey, _Days] = {k: {} for k in preds}
    for position, (_, times) in enumerate(per_day):
        for key, found in times.items():
            on = seen_on.get(key)
            if on is not None:
                on[position] = sorted(found)
    return preds, [day for day, _ in per_day], seen_on


def _scan_day(
    record: DayRecord,
) -> tuple[dict[_PredKey, list[time]], dict[_PredKey, tuple[date, datetime, str, Predicate]]]:
    """One day's wall-clock times per predicate (in the record's order) and, per predicate,
    its first observation by (day, time, fact id) with that observation's predicate. Callers
    never change what it returns."""
    keys: dict[tuple[Path, type, Scalar], _PredKey | None] = {}  # canonical() once per value
    times: dict[_PredKey, list[time]] = {}
    firsts: dict[_PredKey, tuple[date, datetime, str, Predicate]] = {}
    for obs in record.observations:
        raw = (obs.path, type(obs.value), obs.value)
        if raw not in keys:
            keys[raw] = _pred_key(obs.path, obs.value)
        key = keys[raw]
        if key is None or obs.at.date() != record.day:
            continue
        if key not in times:
            times[key] = []
        times[key].append(obs.at.time().replace(tzinfo=None))
        seen = (record.day, obs.at, obs.fact_id)
        if key not in firsts or seen < firsts[key][:3]:
            firsts[key] = (*seen, Predicate(obs.path, obs.value))
    return times, firsts


# The miner reads the same closed days at close after close (its last 28), and a record never
# changes: each is scanned once.
_day_scan = IdentityMemo(_scan_day, limit=4096)


def _distinct(
    keys: list[_PredKey],
    per_day: Sequence[tuple[date, dict[_PredKey, list[time]]]],
) -> list[_PredKey]:
    """One predicate of each group of equivalent ones (module docstring, 1)."""
    firsts: dict[_PredKey, dict[date, int]] = {k: {} for k in keys}
    for day, times in per_day:
        for key, found in times.items():
            if key in firsts:
                first = min(found)
                firsts[key][day] = first.hour * 60 + first.minute
    order = sorted(keys, key=lambda k: (READABLE.get(k[0][-1], 4), _sort_text(k)))
    kept: list[_PredKey] = []
    for key in order:
        mine = firsts[key]
        if not any(
            other.keys() == mine.keys()
            and all(abs(other[d] - m) <= EQUIVALENT_WITHIN for d, m in mine.items())
            for other in (firsts[k] for k in kept)
        ):
            kept.append(key)
    return kept


def _pred_key(path: Path, value: Scalar) -> _PredKey | None:
    if not path or PRIVATE in path or not is_scalar(value):
        return None
    found = canonical(value)
    return None if found is None else (path, found)


@lru_cache(maxsize=16384)
def _sort_text(key: _PredKey) -> str:
    """A predicate's text to sort by: its path and canonical value, written once (a stream's
    predicates recur close after close)."""
    path, value = key
    return json.dumps([list(path), list(value)], default=str)


def _proposal(
    trigger: Predicate,
    behavior: Predicate,
    window: tuple[time, time],
    weekdays: frozenset[int] | None,
) -> Proposal:
    """``Proposal(trigger, behavior, window, weekdays)``, the very object given before for the
    same parts: the miner proposes most pairs again at every close, and what is worked out of
    a proposal (its key, its id, its problems) is kept by the proposal's identity. Parts that
    compare equal yet read differently (``-0.0`` and ``0.0``, a time's fold) never share one."""
    if type(trigger.value) is float or type(behavior.value) is float:
        return Proposal(trigger, behavior, window, weekdays)
    start, end = window
    return _held_proposal(
        trigger.path, trigger.value, behavior.path, behavior.value,
        start, start.fold, end, end.fold, weekdays,
    )  # fmt: skip


# typed: 1, True and "1" are different values of a predicate, and so of a proposal.
@lru_cache(maxsize=16384, typed=True)
def _held_proposal(
    trigger_path: Path,
    trigger_value: Scalar,
    behavior_path: Path,
    behavior_value: Scalar,
    start: time,
    start_fold: int,
    end: time,
    end_fold: int,
    weekdays: frozenset[int] | None,
) -> Proposal:
    return Proposal(
        Predicate(trigger_path, trigger_value),
        Predicate(behavior_path, behavior_value),
        (start, end),
        weekdays,
    )


def _same_segment_fields(a: _PredKey, b: _PredKey) -> bool:
    return a[0][0] == b[0][0] and a[0] != b[0]


def _first_pairs(
    on_trig: _Days,
    on_beh: _Days,
    start: time,
    end: time,
    weekdays: Sequence[int],
    group: frozenset[int] | None = None,
) -> tuple[int, list[tuple[int, time, time]]]:
    """Replay's rule on each day of ``group`` (every day for None): the first trigger in
    [start, end), then the first behavior at or after it and before ``end``. Returns how many
    days had a trigger in the window and, for those that also had the behavior, (the day's
    position, the trigger's time, the behavior's time) in day order."""
    triggered = 0
    pairs: list[tuple[int, time, time]] = []
    for position, t_times in on_trig.items():
        if group is not None and weekdays[position] not in group:
            continue
        i = bisect_left(t_times, start)
        if i == len(t_times) or t_times[i] >= end:
            continue
        triggered += 1
        b_times = on_beh.get(position)
        if not b_times:
            continue
        first = t_times[i]
        j = bisect_left(b_times, first)
        if j < len(b_times) and b_times[j] < end:
            pairs.append((position, first, b_times[j]))
    return triggered, pairs


def _modal_hour(pairs: Sequence[tuple[time, time]]) -> Sequence[tuple[time, time]]:
    """The pairs whose trigger fell in the most common hour, when enough did (module
    docstring, 3); all of them otherwise."""
    by_hour: dict[int, list[tuple[time, time]]] = {}
    for pair in pairs:
        by_hour.setdefault(pair[0].hour, []).append(pair)
    hour = min(by_hour, key=lambda h: (-len(by_hour[h]), h))
    modal = by_hour[hour]
    return modal if len(modal) >= MIN_SUPPORT_DAYS else pairs


def _window(pairs: Sequence[tuple[time, time]]) -> tuple[time, time]:
    """Hour of the first trigger to the hour after the behavior's, outer days trimmed."""
    starts = sorted(f for f, _ in pairs)
    ends = sorted(a for _, a in pairs)
    # k < n / 2, so some day lies between the trimmed start and end: start < end always holds.
    k = int(len(pairs) * WINDOW_TRIM)
    start = starts[k].replace(minute=0, second=0, microsecond=0)
    last = ends[len(ends) - 1 - k]
    if last.hour == 23:
        return start, time.max
    return start, time(last.hour + 1)


def _concentrated(
    on_trig: _Days,
    on_beh: _Days,
    weekdays: Sequence[int],
    supporting: Sequence[tuple[int, time, time]],
) -> list[frozenset[int]]:
    """The weekday groups the pair's support clearly concentrates in (module docstring, 5)."""
    out: list[frozenset[int]] = []
    for group in WEEKDAY_GROUPS:
        other = frozenset(range(7)) - group
        inside = [(f, a) for position, f, a in supporting if weekdays[position] in group]
        if len(inside) < MIN_SUPPORT_DAYS:
            continue
        window = _window(inside)
        rate = _rate(on_trig, on_beh, weekdays, window, group)
        other_rate = _rate(on_trig, on_beh, weekdays, window, other)
        if rate is None or other_rate is None:
            continue  # the other group shows too few triggered days to tell a difference
        if other_rate * CONCENTRATION <= rate:
            out.append(group)
    return out


def _rate(
    on_trig: _Days,
    on_beh: _Days,
    weekdays: Sequence[int],
    window: tuple[time, time],
    group: frozenset[int],
) -> float | None:
    """Fulfilled / triggered days of ``group`` in ``window``; None under MIN_SUPPORT_DAYS
    triggered days."""
    triggered, fulfilled = _first_pairs(on_trig, on_beh, *window, weekdays, group)
    if triggered < MIN_SUPPORT_DAYS:
        return None
    return len(fulfilled) / triggered
