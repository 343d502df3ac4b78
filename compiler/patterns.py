"""Workflow patterns over a window of compiled days (Activity Frames §7): deterministic
detectors, each item ``{kind, label, count, evidence: {frames, rows}}``.

Kinds, in report order:

- ``repeated_click``: the same named element (name, role, app) clicked ``min_count`` times;
- ``action_sequence``: the same 2- or 3-step contiguous sequence of actions, counted without
  overlaps, inside sessions cut at 90 s gaps with self-repeats collapsed (as routines are,
  ``compiler.routines``); a 2-step sequence inside a 3-step one of the same count is left out;
- ``daily_habit``: the same element clicked on ``min_count`` distinct days (count = days);
- ``url_pattern``: navigations to the same ``host/p0/p1/*`` template (``compiler.actions``);
- ``app_switch``: one app's frame followed directly by another app's on the same monitor (no
  session break between them);
- ``repeated_text``: the same text typed into the same field, only with ``include_text`` (typed
  text is private; it is read only from compiles that kept it);
- ``temporal_rhythm``: an app active in the same 30-minute local slot on at least ``min_count``
  days with regularity at least 0.6, where *regularity* is the days the app was active in that
  slot divided by the days observed (local days with any credited time in the window). An app
  is active in a slot when its rows there earn at least :data:`SLOT_ACTIVE_S` seconds.

Evidence names the frames (``f-<first row id>``) and the event ids as runs
(``compiler.document.runs``), so every item can be traced to raw rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from compiler.actions import Action, actions, one_line
from compiler.document import Compiled, runs
from compiler.routines import GAP_S
from compiler.segment import UNKNOWN_APP

KINDS = (
    "repeated_click",
    "action_sequence",
    "daily_habit",
    "url_pattern",
    "app_switch",
    "repeated_text",
    "temporal_rhythm",
)
SLOT_MINUTES = 30  # §7: temporal rhythm is read in 30-minute local slots
MIN_REGULARITY = 0.6  # §7: days present in the slot / days observed
SLOT_ACTIVE_S = 60.0
"""Credited seconds that make an app active in a slot: a glance of a few seconds is no rhythm
(our threshold, one minute, the granularity at which the ledger reports time)."""
SEQUENCE_LENGTHS = (2, 3)  # §7: repeated action sequences of 2 and 3 steps


def detect(
    days: Sequence[Compiled], *, include_text: bool = False, min_count: int = 3
) -> list[dict[str, Any]]:
    """The patterns of a window of compiled days, ordered by kind, count (desc), then label."""
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 2:
        raise ValueError(f"min_count must be an integer of at least 2, not {min_count!r}")
    if not isinstance(include_text, bool):
        raise ValueError(f"include_text must be True or False, not {include_text!r}")
    for index, day in enumerate(days):
        if not isinstance(day, Compiled):
            raise ValueError(
                f"days[{index}] is a {type(day).__name__}, not a compiled day "
                "(compiler.document.Compiled)"
            )
    clicks = sorted(
        (a for c in days for a in actions(c, "action")), key=lambda a: (a.t, a.evidence[0])
    )
    navigations = [a for c in days for a in actions(c, "url")]
    found: list[dict[str, Any]] = []
    found += _repeated_clicks(clicks, min_count)
    found += _sequences(clicks, min_count)
    found += _daily_habits(clicks, min_count)
    found += _url_patterns(navigations, min_count)
    found += _app_switches(days, min_count)
    if include_text:
        found += _repeated_text(clicks, min_count)
    found += _rhythms(days, min_count)
    order = {kind: i for i, kind in enumerate(KINDS)}
    found.sort(key=lambda p: (order[p["kind"]], -p["count"], p["label"]))
    return found


def _item(kind: str, label: str, count: int, items: Iterable[Action]) -> dict[str, Any]:
    chosen = list(items)
    return _evidence(
        kind,
        label,
        count,
        (a.frame for a in chosen),
        (i for a in chosen for i in a.evidence),
    )


def _evidence(
    kind: str, label: str, count: int, frames: Iterable[str], rows: Iterable[int]
) -> dict[str, Any]:
    return {
        "kind": kind,
        "label": label,
        "count": count,
        "evidence": {"frames": list(dict.fromkeys(frames)), "rows": runs(rows)},
    }


def _element(action: Action) -> str:
    role = f" ({action.role})" if action.role else ""
    return f'click "{one_line(action.target)}"{role} in {action.app}'


def _step_label(action: Action) -> str:
    """A click by its element's name; typing says so (clicking a field, then typing into it,
    is two steps that name one field)."""
    name = one_line(action.target)
    return f"{name} (typing)" if action.op == "type" else name


def _repeated_clicks(stream: Sequence[Action], min_count: int) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str | None, str], list[Action]] = defaultdict(list)
    for a in stream:
        if a.op == "click":
            groups[(a.target, a.role, a.app)].append(a)
    return [
        _item("repeated_click", _element(group[0]), len(group), group)
        for group in groups.values()
        if len(group) >= min_count
    ]


def _daily_habits(stream: Sequence[Action], min_count: int) -> list[dict[str, Any]]:
    observed = len({a.day for a in stream})
    groups: dict[tuple[str, str | None, str], list[Action]] = defaultdict(list)
    for a in stream:
        if a.op == "click":
            groups[(a.target, a.role, a.app)].append(a)
    out = []
    for group in groups.values():
        days = len({a.day for a in group})
        if days >= min_count:
            # observed >= days >= min_count >= 2: "days" is always plural.
            label = f"{_element(group[0])} on {days} of {observed} days"
            out.append(_item("daily_habit", label, days, group))
    return out


def _sessions(stream: Sequence[Action]) -> list[list[list[Action]]]:
    """Sessions cut at gaps over 90 s, each a list of steps (a self-repeat joins its step)."""
    sessions: list[list[list[Action]]] = []
    previous: Action | None = None
    for a in stream:
        if previous is None or a.t - previous.t > GAP_S:
            sessions.append([[a]])
        elif sessions[-1][-1][0].key == a.key and sessions[-1][-1][0].app == a.app:
            sessions[-1][-1].append(a)
        else:
            sessions[-1].append([a])
        previous = a
    return sessions


def _sequences(stream: Sequence[Action], min_count: int) -> list[dict[str, Any]]:
    sessions = _sessions(stream)
    chosen: dict[int, dict[tuple[Any, ...], list[list[list[Action]]]]] = {}
    for n in SEQUENCE_LENGTHS:
        found: dict[tuple[Any, ...], list[list[list[Action]]]] = defaultdict(list)
        ends: dict[tuple[Any, ...], tuple[int, int]] = {}
        for s, session in enumerate(sessions):
            for p in range(len(session) - n + 1):
                window = session[p : p + n]
                key = tuple((step[0].key, step[0].app) for step in window)
                if key in ends and ends[key] > (s, p - 1):
                    continue  # overlaps the previous occurrence of this sequence
                ends[key] = (s, p + n - 1)
                found[key].append(window)
        chosen[n] = {k: v for k, v in found.items() if len(v) >= min_count}
    longer = defaultdict(set)
    for key, windows in chosen[3].items():
        longer[len(windows)].update({key[:2], key[1:]})
    out = []
    for n in SEQUENCE_LENGTHS:
        for key, windows in chosen[n].items():
            if n == 2 and key in longer[len(windows)]:
                continue
            label = " → ".join(_step_label(step[0]) for step in windows[0])
            steps = [a for window in windows for step in window for a in step]
            out.append(_item("action_sequence", label, len(windows), steps))
    return out


def _url_patterns(stream: Sequence[Action], min_count: int) -> list[dict[str, Any]]:
    groups: dict[str, list[Action]] = defaultdict(list)
    for a in stream:
        groups[a.target].append(a)
    return [
        _item("url_pattern", template, len(group), group)
        for template, group in groups.items()
        if len(group) >= min_count
    ]


def _app_switches(days: Sequence[Compiled], min_count: int) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[tuple[str, str, int, int]]] = defaultdict(list)
    for compiled in days:
        last: dict[str, Any] = {}  # monitor -> its previous frame
        for frame in compiled.frames:
            before = last.get(frame.monitor)
            last[frame.monitor] = frame
            if before is None or before.break_after or before.app == frame.app:
                continue
            if UNKNOWN_APP in (before.app, frame.app):
                continue
            groups[(before.app, frame.app)].append(
                (
                    f"f-{before.rows[0].id}",
                    f"f-{frame.rows[0].id}",
                    before.rows[-1].id,
                    frame.rows[0].id,
                )
            )
    return [
        _evidence(
            "app_switch",
            f"{source} → {target}",
            len(group),
            (f for g in group for f in g[:2]),
            (r for g in group for r in g[2:]),
        )
        for (source, target), group in groups.items()
        if len(group) >= min_count
    ]


def _repeated_text(stream: Sequence[Action], min_count: int) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str, str], list[Action]] = defaultdict(list)
    for a in stream:
        if a.op == "type" and a.text and a.text.strip():
            groups[(a.text.strip(), a.target, a.app)].append(a)
    return [
        _item(
            "repeated_text",
            f'typed "{one_line(text)}" into {one_line(field)} in {app}',
            len(group),
            group,
        )
        for (text, field, app), group in groups.items()
        if len(group) >= min_count
    ]


def _rhythms(days: Sequence[Compiled], min_count: int) -> list[dict[str, Any]]:
    # (app, slot) -> day -> [credited seconds, frames, row ids]
    seen: dict[tuple[str, int], dict[str, list[Any]]] = defaultdict(dict)
    observed: set[str] = set()
    for compiled in days:
        for frame in compiled.frames:
            frame_id = f"f-{frame.rows[0].id}"
            for row, credit in zip(frame.rows, frame.credits, strict=True):
                if credit <= 0:
                    continue
                stamp = compiled.local(row.t)
                day = stamp[:10]
                observed.add(day)
                minute = int(stamp[11:13]) * 60 + int(stamp[14:16])
                cell = seen[(frame.app, minute // SLOT_MINUTES)].setdefault(day, [0.0, [], []])
                cell[0] += credit
                cell[1].append(frame_id)
                cell[2].append(row.id)
    out = []
    for (app, slot), by_day in seen.items():
        if app == UNKNOWN_APP:
            continue
        present = {day: cell for day, cell in by_day.items() if cell[0] >= SLOT_ACTIVE_S}
        if len(present) < min_count or len(present) / len(observed) < MIN_REGULARITY:
            continue
        start = slot * SLOT_MINUTES
        end = start + SLOT_MINUTES
        label = (
            f"{app} active {start // 60:02d}:{start % 60:02d}–{end // 60 % 24:02d}:"
            f"{end % 60:02d} on {len(present)} of {len(observed)} days"  # >= min_count >= 2
        )
        cells = [present[day] for day in sorted(present)]
        out.append(
            _evidence(
                "temporal_rhythm",
                label,
                len(present),
                (f for cell in cells for f in cell[1]),
                (r for cell in cells for r in cell[2]),
            )
        )
    return out
