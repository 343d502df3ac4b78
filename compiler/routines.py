"""Routines: contiguous action sequences that recur in the action stream (Activity Frames §7.1).

A routine is a contiguous sequence of ``min_len``..``max_len`` (3..60) steps that occurs at
least ``min_count`` (3) times without overlapping itself and names at least two distinct
*specific* targets. The stream is first cut into sessions wherever two actions are more than
``gap_s`` (90 s) apart, and an immediate self-repeat (the same step twice in a row: "Next",
"Next", "Next") is collapsed into one step, so a routine never differs from another only by how
often a button was pressed. Only maximal sequences are kept: a sequence contained in a longer
kept routine with the same count says nothing the longer one does not.

Two actions are the same step when their operation, target, role and app agree (a "Send" in
Slack is not a "Send" in Mail). The page a step happens on is not part of it: the routine's step
carries a URL template only when every occurrence saw the same one, which is what a replay guard
may then expect (see ``compiler.replay``).

:func:`recurrence` measures how much of the stream recurs (``h_raw``, ``h_specific``) and
:func:`holdout` how much of a later stretch an earlier one already knew (the temporal
hold-out of the cost instrument, §7.1–§7.4).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from compiler.actions import GRANULARITIES, Action

MIN_COUNT = 3  # §7.1: a routine recurs at least three times
MIN_LEN = 3  # §7.1: 3 to 60 UI actions
MAX_LEN = 60
GAP_S = 90.0  # §7.1: sessions are cut at action gaps over 90 s
MIN_SPECIFIC_TARGETS = 2  # §7.1: a routine names at least two distinct specific targets
RAW_NGRAM = 3
"""``h_raw`` counts steps inside any recurring n-gram with 3 <= n <= 60 (§7.1's routine lengths).

Every window of a recurring n-gram's occurrence is itself a recurring 3-gram (it occurs at each
non-overlapping occurrence of the longer one), so the steps covered by recurring n-grams of any
of those lengths are exactly the steps covered by recurring 3-grams, which is what is counted.
"""

OPS = {"action": frozenset({"click", "type"}), "url": frozenset({"navigate"})}

GENERIC_TARGETS = frozenset(
    {
        "ok",
        "okay",
        "cancel",
        "close",
        "back",
        "forward",
        "next",
        "previous",
        "prev",
        "done",
        "yes",
        "no",
        "continue",
        "more",
        "menu",
        "more options",
        "apply",
        "dismiss",
        "x",
        "×",
        "…",
        "...",
    }
)
"""Controls every app has: they name no place a replay could tell apart from another (§7.1
"specific targets"). A sequence of "Next", "OK", "Close" is navigation, not a routine."""

_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a routine: what every occurrence did at this position."""

    op: str  # click | type | navigate
    target: str  # element name, field name, or URL template for navigate
    role: str | None
    app: str
    url_template: str | None  # the page of every occurrence, None if they differ or none


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One time a routine was performed, with the frames and event ids it was read from."""

    day: str  # local ISO date of its first step
    start: float  # UTC epoch seconds of its first step
    end: float  # of its last action (a collapsed repeat ends at its last press)
    frames: tuple[str, ...]
    evidence: tuple[int, ...]  # event ids of every action it covers, ascending


@dataclass(frozen=True, slots=True)
class Routine:
    id: str
    granularity: str
    steps: tuple[Step, ...]
    occurrences: tuple[Occurrence, ...]

    @property
    def count(self) -> int:
        return len(self.occurrences)


def is_specific(target: str, granularity: str) -> bool:
    """Whether a target names a particular place (§7.1 "specific targets").

    At action granularity: a name with a letter that is not a generic control
    (:data:`GENERIC_TARGETS`). At URL granularity: a template whose path is not wildcards only
    (``shop.example/*/*`` is any page of the site; ``shop.example`` is its home page).
    """
    name = " ".join(target.split()).casefold()
    if granularity == "url":
        _, _, path = name.partition("/")
        return bool(name) and (not path or any(part != "*" for part in path.split("/")))
    return bool(_LETTER.search(name)) and name not in GENERIC_TARGETS


def mine(
    actions: Sequence[Action],
    *,
    granularity: str = "action",
    min_count: int = MIN_COUNT,
    min_len: int = MIN_LEN,
    max_len: int = MAX_LEN,
    gap_s: float = GAP_S,
) -> list[Routine]:
    """The routines of an action stream, ordered by count (desc), length (desc), then id."""
    _check_granularity(granularity)
    _check_int("min_count", min_count, 2)
    _check_int("min_len", min_len, 2)
    _check_int("max_len", max_len, min_len)
    _check_gap(gap_s)
    stream = _Stream(actions, granularity, gap_s)
    candidates = _frequent(stream.seq, min_count, min_len, max_len)
    specific = stream.specific_ids
    candidates = [
        (pattern, positions)
        for pattern, positions in candidates
        if len({specific[s] for s in pattern} - {None}) >= MIN_SPECIFIC_TARGETS
    ]
    # Longest first, so every longer routine is decided before the ones it may contain.
    candidates.sort(key=lambda c: -len(c[0]))
    kept: list[tuple[tuple[int, ...], list[int]]] = []
    contained: dict[int, set[tuple[int, ...]]] = {}  # count -> substrings of kept routines
    for pattern, starts in candidates:
        count = len(starts)
        if pattern in contained.get(count, ()):
            continue
        kept.append((pattern, starts))
        inner = contained.setdefault(count, set())
        size = len(pattern)
        for length in range(min_len, size):
            for offset in range(size - length + 1):
                inner.add(pattern[offset : offset + length])
    routines = [stream.routine(pattern, starts) for pattern, starts in kept]
    routines.sort(key=lambda r: (-r.count, -len(r.steps), r.id))
    return routines


def recurrence(
    actions: Sequence[Action],
    routines: Sequence[Routine],
    *,
    granularity: str,
    min_count: int = MIN_COUNT,
    gap_s: float = GAP_S,
) -> dict[str, Any]:
    """How much of the stream recurs (§7.1): ``h_raw`` and ``h_specific`` as shares 0..1.

    Steps are counted after sessions are cut and self-repeats collapsed (the stream the miner
    reads). ``h_raw``: share of steps inside any recurring n-gram (see :data:`RAW_NGRAM`);
    ``h_specific``: share of steps inside an occurrence of one of ``routines``.
    """
    _check_granularity(granularity)
    _check_int("min_count", min_count, 2)
    _check_gap(gap_s)
    for routine in routines:
        if routine.granularity != granularity:
            raise ValueError(
                f"routine {routine.id} was mined at {routine.granularity} granularity, "
                f"not {granularity}"
            )
    stream = _Stream(actions, granularity, gap_s)
    total = stream.steps
    raw: set[int] = set()
    for _, positions in _frequent(stream.seq, min_count, RAW_NGRAM, RAW_NGRAM):
        for start in _non_overlapping(positions, RAW_NGRAM):
            raw.update(range(start, start + RAW_NGRAM))
    evidence = {i for r in routines for o in r.occurrences for i in o.evidence}
    specific = {p for p, first in enumerate(stream.first_ids) if first in evidence}
    return {
        "granularity": granularity,
        "actions": len(actions),
        "steps": total,
        "raw_steps": len(raw),
        "specific_steps": len(specific),
        "h_raw": _share(len(raw), total),
        "h_specific": _share(len(specific), total),
        "raw_ngram": RAW_NGRAM,
    }


def holdout(
    actions: Sequence[Action],
    *,
    fit_days: int,
    granularity: str,
    min_count: int = MIN_COUNT,
    min_len: int = MIN_LEN,
    max_len: int = MAX_LEN,
    gap_s: float = GAP_S,
) -> dict[str, Any]:
    """The temporal hold-out (Activity Frames §7): mine the first ``fit_days`` active days,
    then report the share of the later days' steps inside an occurrence of a known routine."""
    _check_granularity(granularity)
    _check_int("fit_days", fit_days, 1)
    days = sorted({a.day for a in actions})
    if len(days) <= fit_days:
        raise ValueError(
            f"the hold-out needs more than fit_days={fit_days} active days; "
            f"the actions cover {len(days)}"
        )
    fit_set = set(days[:fit_days])
    fit = [a for a in actions if a.day in fit_set]
    test = [a for a in actions if a.day not in fit_set]
    known = mine(
        fit,
        granularity=granularity,
        min_count=min_count,
        min_len=min_len,
        max_len=max_len,
        gap_s=gap_s,
    )
    stream = _Stream(test, granularity, gap_s)
    covered = stream.cover([r.steps for r in known])
    return {
        "granularity": granularity,
        "fit_days": days[:fit_days],
        "test_days": days[fit_days:],
        "known_routines": len(known),
        "test_steps": stream.steps,
        "covered_steps": len(covered),
        "h_holdout": _share(len(covered), stream.steps),
    }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 6) if whole else 0.0


def _check_granularity(granularity: str) -> None:
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity {granularity!r} must be one of {', '.join(GRANULARITIES)}")


def _check_int(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer of at least {low}, not {value!r}")


def _check_gap(gap_s: object) -> None:
    if (
        isinstance(gap_s, bool)
        or not isinstance(gap_s, int | float)
        or not math.isfinite(gap_s)
        or gap_s <= 0
    ):
        raise ValueError(f"gap_s must be a positive number of seconds, not {gap_s!r}")


def _key(action: Action) -> tuple[str, str, str | None, str]:
    return (action.op, action.target, action.role, action.app)


def _non_overlapping(positions: Iterable[int], length: int) -> list[int]:
    """Leftmost greedy choice: the most occurrences of one length that do not overlap."""
    out: list[int] = []
    free = -1
    for p in positions:
        if p >= free:
            out.append(p)
            free = p + length
    return out


def _frequent(
    seq: Sequence[int], min_count: int, min_len: int, max_len: int
) -> list[tuple[tuple[int, ...], list[int]]]:
    """Contiguous patterns of min_len..max_len symbols with >= min_count non-overlapping
    occurrences, each with those occurrences' starts.

    Grown one symbol at a time from the positions of the shorter pattern (a pattern occurs no
    more often than its prefix, so a prefix below the count ends its branch). ``seq`` holds -1
    at session boundaries, which no pattern crosses.
    """
    n = len(seq)
    level: dict[tuple[int, ...], list[int]] = {}
    for p, symbol in enumerate(seq):
        if symbol >= 0:
            level.setdefault((symbol,), []).append(p)
    out: list[tuple[tuple[int, ...], list[int]]] = []
    length = 1
    while level:
        grown: dict[tuple[int, ...], list[int]] = {}
        for pattern, positions in level.items():
            starts = _non_overlapping(positions, length)
            if len(starts) < min_count:
                continue
            if length >= min_len:
                out.append((pattern, starts))
            if length == max_len:
                continue
            groups: dict[int, list[int]] = {}
            for p in positions:
                q = p + length
                if q < n and seq[q] >= 0:
                    groups.setdefault(seq[q], []).append(p)
            for symbol, ps in groups.items():
                if len(ps) >= min_count:
                    grown[(*pattern, symbol)] = ps
        level = grown
        length += 1
    return out


class _Stream:
    """Actions as one sequence of step symbols: sessions cut, self-repeats collapsed."""

    def __init__(self, actions: Sequence[Action], granularity: str, gap_s: float) -> None:
        allowed = OPS[granularity]
        ordered = sorted(actions, key=lambda a: (a.t, a.evidence[0] if a.evidence else -1))
        self.granularity = granularity
        self.symbols: dict[tuple[str, str, str | None, str], int] = {}
        self.keys: list[tuple[str, str, str | None, str]] = []
        self.specific_ids: list[str | None] = []  # symbol -> its target if specific
        self.seq: list[int] = []  # symbols, -1 between sessions
        self.groups: list[list[Action]] = []  # parallel to seq; [] at boundaries
        previous: Action | None = None
        for action in ordered:
            if action.op not in allowed:
                raise ValueError(
                    f"action {action.op!r} on {action.target!r} at t={action.t} does not "
                    f"belong to {granularity} granularity (expected "
                    f"{' or '.join(sorted(allowed))})"
                )
            if not action.evidence:
                raise ValueError(f"action {action.op} {action.target!r} has no evidence ids")
            key = _key(action)
            symbol = self.symbols.get(key)
            if symbol is None:
                symbol = self.symbols[key] = len(self.keys)
                self.keys.append(key)
                self.specific_ids.append(
                    action.target if is_specific(action.target, granularity) else None
                )
            if previous is not None and action.t - previous.t > gap_s:
                self.seq.append(-1)
                self.groups.append([])
            elif self.seq and self.seq[-1] == symbol:
                self.groups[-1].append(action)  # an immediate self-repeat
                previous = action
                continue
            self.seq.append(symbol)
            self.groups.append([action])
            previous = action
        self.steps = sum(1 for s in self.seq if s >= 0)
        # The first event id of each position (-1 at boundaries): how occurrences are found.
        self.first_ids = [g[0].evidence[0] if g else -1 for g in self.groups]

    def routine(self, pattern: tuple[int, ...], starts: Sequence[int]) -> Routine:
        size = len(pattern)
        steps = []
        for i, symbol in enumerate(pattern):
            op, target, role, app = self.keys[symbol]
            pages = {a.url_template for p in starts for a in self.groups[p + i]}
            steps.append(Step(op, target, role, app, pages.pop() if len(pages) == 1 else None))
        occurrences = []
        for p in starts:
            covered = [a for g in self.groups[p : p + size] for a in g]
            frames = tuple(dict.fromkeys(a.frame for a in covered))
            evidence = tuple(sorted({i for a in covered for i in a.evidence}))
            occurrences.append(
                Occurrence(
                    covered[0].day,
                    covered[0].t,
                    max(a.t for a in covered),
                    frames,
                    evidence,
                )
            )
        return Routine(
            routine_id(self.granularity, steps), self.granularity, tuple(steps), tuple(occurrences)
        )

    def cover(self, known: Sequence[Sequence[Step]]) -> set[int]:
        """Positions inside a non-overlapping occurrence of one of the known step sequences."""
        by_first: dict[int, list[tuple[int, ...]]] = {}
        for steps in known:
            symbols = [self.symbols.get((s.op, s.target, s.role, s.app)) for s in steps]
            if any(s is None for s in symbols):
                continue  # a step never seen in this stream: the routine cannot occur
            pattern = tuple(s for s in symbols if s is not None)
            by_first.setdefault(pattern[0], []).append(pattern)
        covered: set[int] = set()
        free: dict[tuple[int, ...], int] = {}
        seq = self.seq
        for p, symbol in enumerate(seq):
            for pattern in by_first.get(symbol, ()):
                size = len(pattern)
                if p >= free.get(pattern, -1) and tuple(seq[p : p + size]) == pattern:
                    free[pattern] = p + size
                    covered.update(range(p, p + size))
        return covered


def routine_id(granularity: str, steps: Iterable[Step]) -> str:
    """``r-`` and 12 hex digits of the steps' identity: stable as days are added.

    Only what makes a step the same step (op, target, role, app) is hashed, not the page
    template, which depends on which occurrences were seen.
    """
    body = json.dumps(
        [granularity, [[s.op, s.target, s.role, s.app] for s in steps]],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return "r-" + hashlib.sha256(body.encode()).hexdigest()[:12]
