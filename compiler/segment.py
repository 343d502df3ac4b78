"""Segmentation (activity frames §4.2): snapshot rows → credited per-monitor segments.

Each monitor is its own stream. A row is credited the time to the next row of its monitor,
capped; a long silence or an explicit absence closes the segment. Short A→B→A flickers fold
B into A as an interruption. Every row ends up in exactly one segment, interruption or away
span, and every credited second is counted once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from compiler.capture import (
    BY_TIME,
    INVISIBLE,
    Absence,
    Snapshot,
    in_time_order,
)
from compiler.entities import site_of
from compiler.params import Params

# Apps whose rows mean the screen was locked or asleep: an explicit absence signal.
LOCK_APPS = frozenset(
    name.casefold()
    for name in (
        "loginwindow",
        "LockApp",
        "LockApp.exe",
        "ScreenSaverEngine",
        "screensaver",
        "gnome-screensaver",
        "xscreensaver",
        "kscreenlocker_greet",
        "Windows Default Lock Screen",
        "lockscreen",
    )
)


UNKNOWN_APP = "(unknown app)"
# Names recorders use for "could not tell which app" (ActivityWatch's window watcher writes
# "unknown"); they are one disclosed placeholder, never an app of their own.
_PLACEHOLDERS = frozenset({"", "unknown", "(unknown)", "n/a"})
# One app under several spellings, as platforms and recorders name it: the key is the name
# case-folded with spaces, hyphens, underscores and dots taken out and a trailing "exe"
# dropped; the value is the name shown. Only spellings seen in real captures are listed;
# any other name is kept exactly as captured (distinct apps stay distinct).
APP_ALIASES = {
    "codeinsiders": "Code - Insiders",  # "Code - Insiders" (macOS), "Code-insiders" (Linux)
    "code": "Code",  # Code.exe (Windows); the key has lost its "exe" already
    "msedge": "Microsoft Edge",  # msedge.exe (Windows)
    "microsoftedge": "Microsoft Edge",
    "firefoxesr": "Firefox",
    "mozillafirefox": "Firefox",
}
_FOLD = str.maketrans("", "", " -_.")


def _alias_key(name: str) -> str:
    key = name.casefold().translate(_FOLD)
    return key[:-3] if key.endswith("exe") and len(key) > 3 else key


@lru_cache(maxsize=4096)
def normalise_app(name: str) -> str:
    """Remove invisible marks and outer space, then map known spellings of one app to one
    name (``APP_ALIASES``); placeholders become ``UNKNOWN_APP``. No case folding otherwise."""
    cleaned = " ".join(name.translate(INVISIBLE).split())
    if cleaned.casefold() in _PLACEHOLDERS:
        return UNKNOWN_APP
    return APP_ALIASES.get(_alias_key(cleaned), cleaned)


@lru_cache(maxsize=4096)
def is_lock_app(app: str) -> bool:
    return app.casefold() in LOCK_APPS


@lru_cache(maxsize=4096)
def _classify(raw: str) -> tuple[str, bool]:
    """(normalised app name, whether it is a lock screen) of a captured app name."""
    app = normalise_app(raw)
    return app, is_lock_app(app)


@dataclass(slots=True)
class Segment:
    """Consecutive rows of one monitor with the same (app, site)."""

    monitor: str
    app: str
    site: str | None
    rows: list[Snapshot] = field(default_factory=list)
    credits: list[float] = field(default_factory=list)
    break_after: bool = False  # a session gap or absence follows the last row
    interruptions: list[Segment] = field(default_factory=list)

    @property
    def first_t(self) -> float:
        return self.rows[0].t

    @property
    def end_t(self) -> float:
        return self.rows[-1].t + self.credits[-1]

    @property
    def active_s(self) -> float:
        return sum(self.credits)


@dataclass(slots=True)
class AwaySpan:
    """Time an explicit signal says nobody was there; never credited.

    Spans of one reason that overlap are one span whatever their monitors (the document's
    coverage lists time away, §3.4); which rows it holds says where it was seen.
    """

    start: float
    end: float
    reason: str
    rows: list[Snapshot] = field(default_factory=list)


@dataclass(slots=True)
class Segmentation:
    segments: list[Segment]  # all monitors, ordered by (first_t, monitor, first row id)
    away: list[AwaySpan]
    by_monitor: dict[str, list[Snapshot]]  # each monitor's rows in (t, id) order
    times: dict[str, list[float]]  # each monitor's row times, parallel to by_monitor


def _merge_absences(absences: Iterable[Absence]) -> list[tuple[float, float, str | None]]:
    """Overlapping absences of the same monitor (None: all monitors) become one interval."""
    merged: list[tuple[float, float, str | None]] = []
    for item in sorted(absences, key=lambda a: (a.monitor or "", a.start, a.end, a.id)):
        if merged and merged[-1][2] == item.monitor and item.start <= merged[-1][1]:
            start, end, monitor = merged[-1]
            merged[-1] = (start, max(end, item.end), monitor)
        else:
            merged.append((item.start, item.end, item.monitor))
    return sorted(merged, key=lambda m: (m[0], m[1], m[2] or ""))


def _segment_monitor(
    monitor: str,
    rows: Sequence[Snapshot],
    times: Sequence[float],
    absences: Sequence[tuple[float, float, str | None]],
    params: Params,
    away: list[AwaySpan],
) -> list[Segment]:
    cap, gap = params.dwell_cap_s, params.session_gap_s
    mine = [(s, e) for s, e, m in absences if m is None or m == monitor]
    starts = [s for s, _ in mine]
    stack: list[Segment] = []
    current: Segment | None = None
    lock_run: AwaySpan | None = None
    a = 0  # index of the first absence that ends after the current row
    n_absences = len(mine)
    count = len(rows)
    # A day repeats a few dozen app names and URLs: each is classified once per segmentation.
    classes: dict[str, tuple[str, bool]] = {}
    sites: dict[str, str | None] = {}
    append_row = append_credit = None
    for i in range(count):
        row = rows[i]
        t = times[i]
        if n_absences:
            while a < n_absences and mine[a][1] <= t:
                a += 1
            inside = a < n_absences and mine[a][0] <= t
        else:
            inside = False
        raw = row.app
        try:
            app, locked = classes[raw]
        except KeyError:
            app, locked = classes[raw] = _classify(raw)
        if inside or locked:
            if current is not None:
                current.break_after = True
                current = None
            if inside:
                # Rows inside a source's absence interval are part of that away span.
                away.append(AwaySpan(t, t, "afk", [row]))
            else:
                if lock_run is None:
                    lock_run = AwaySpan(t, t, "lock_screen", [])
                    away.append(lock_run)
                lock_run.rows.append(row)
                nxt = times[i + 1] if i + 1 < count else t
                lock_run.end = nxt if nxt - t <= gap else t
            continue
        lock_run = None
        credit = 0.0
        brk = True
        silent = True  # no next row within the session gap, and no absence cuts the row short
        if i + 1 < count:
            nxt_t = times[i + 1]
            delta = nxt_t - t
            # An absence that starts before the next row cuts the credit and closes the frame.
            if n_absences and a < n_absences and t < starts[a] < nxt_t:
                cut = starts[a] - t
                credit = cap if cap < cut else cut  # min(cut, cap), without the call
                silent = False
            elif delta <= gap:
                credit = cap if cap < delta else delta
                brk = silent = False
        own_end = row.end
        if own_end is not None:
            # The source says when this row left the screen: never credited past that, and
            # credited up to it (capped) even before a silence, since the source measured it.
            known = own_end - t if own_end > t else 0.0
            if silent or known < credit:
                credit = cap if cap < known else known
        url = row.url
        if url:
            try:
                site = sites[url]
            except KeyError:
                site = sites[url] = site_of(url)
        else:
            site = None
        if current is None or current.app != app or current.site != site:
            current = Segment(monitor, app, site)
            stack.append(current)
            append_row, append_credit = current.rows.append, current.credits.append
        assert append_row is not None and append_credit is not None
        append_row(row)
        append_credit(credit)
        if brk:
            current.break_after = True
            current = None
    return stack


def _fold(stack: list[Segment], flicker: float) -> list[Segment]:
    """Fold every A→B→A with B shorter than the flicker limit and no break around B."""
    out: list[Segment] = []
    for seg in stack:
        if len(out) >= 2:
            b, host = out[-1], out[-2]
            if (
                host.app == seg.app
                and host.site == seg.site
                and not host.break_after
                and not b.break_after
                and seg.first_t - b.first_t <= flicker
            ):
                out.pop()
                # Interruptions stay flat: B's own folded flickers become the host's too.
                host.interruptions.append(b)
                host.interruptions.extend(b.interruptions)
                b.interruptions = []
                host.interruptions.extend(seg.interruptions)
                host.rows.extend(seg.rows)
                host.credits.extend(seg.credits)
                host.break_after = seg.break_after
                continue
        out.append(seg)
    return out


def segment(
    snapshots: Sequence[Snapshot], absences: Sequence[Absence], params: Params
) -> Segmentation:
    """Segment all monitors; input order does not matter (rows are sorted by (t, id))."""
    by_monitor: dict[str, list[Snapshot]] = {}
    for row in snapshots:
        by_monitor.setdefault(row.monitor, []).append(row)
    merged = _merge_absences(absences)
    away: list[AwaySpan] = []
    segments: list[Segment] = []
    times: dict[str, list[float]] = {}
    for monitor in sorted(by_monitor):
        rows = by_monitor[monitor]
        times[monitor] = [row.t for row in rows]
        if not in_time_order(rows, times[monitor]):
            rows.sort(key=BY_TIME)
            times[monitor] = [row.t for row in rows]
        stack = _segment_monitor(monitor, rows, times[monitor], merged, params, away)
        segments.extend(_fold(stack, params.flicker_max_s))
    for start, end, _ in merged:
        away.append(AwaySpan(start, end, "afk", []))
    segments.sort(key=lambda s: (s.first_t, s.monitor, s.rows[0].id))
    return Segmentation(segments, _merge_away(away), by_monitor, times)


def _merge_away(spans: list[AwaySpan]) -> list[AwaySpan]:
    """Overlapping away spans of the same reason become one (rows kept, ordered)."""
    merged: list[AwaySpan] = []
    for span in sorted(spans, key=lambda s: (s.reason, s.start, s.end)):
        last = merged[-1] if merged else None
        if last is not None and last.reason == span.reason and span.start <= last.end:
            last.end = max(last.end, span.end)
            last.rows.extend(span.rows)
        else:
            merged.append(AwaySpan(span.start, span.end, span.reason, list(span.rows)))
    for span in merged:
        span.rows.sort(key=lambda r: (r.t, r.id))
    merged.sort(key=lambda s: (s.start, s.reason))
    return merged
