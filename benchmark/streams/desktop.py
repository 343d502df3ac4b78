"""Desktop decision points: frame boundaries of the compiled day documents.

A desktop stream is a person's compiled activity frames (Activity Frames §3–§4); the moments to
decide are where one frame ends. A frame is final (its app, bounds and input can no longer
change) once the next frame on its monitor has lasted the fold limit (an A→B→A return within
``FLICKER_MAX_S`` would fold B into A), or once the session gap has passed without a row; the
point is available then, not at the frame's end.

Public fields: ``app``, ``site``, ``monitor``, ``minutes`` (active), ``wall_minutes``, input
counts (``keys``, ``clicks``, ``copies``), ``page_kinds`` (up to four, most frequent first), the
frame's local ``start`` and ``end``, ``next_app`` (the frame that followed on the monitor, None
after a gap), ``switches_30`` (frames that started on any monitor in the 30 minutes before the
point), ``active_min_today`` (active minutes of the day's frames final by then), ``day``,
``weekday``. Frames of a single row (``transit``) make no point. Desktop data here is
SYNTHETIC (``benchmark/synthetic/desktop.py``); it carries no ground truth, so points have no
private fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from benchmark.streams.records import DecisionPoint
from compiler.document import expand_runs
from compiler.params import FLICKER_MAX_S, SESSION_GAP_S

SWITCH_WINDOW = timedelta(minutes=30)  # our choice: how far back ``switches_30`` looks
PAGE_KINDS_MAX = 4


def _final_at(frame: Mapping[str, Any], following: Mapping[str, Any] | None) -> datetime:
    end = datetime.fromisoformat(frame["end"])
    if following is not None:
        start = datetime.fromisoformat(following["start"])
        if (start - end).total_seconds() <= SESSION_GAP_S:
            return max(end, start + timedelta(seconds=FLICKER_MAX_S))
    return end + timedelta(seconds=SESSION_GAP_S)


def points(
    frames_by_day: Mapping[date, Sequence[Mapping[str, Any]]], zone: ZoneInfo
) -> list[DecisionPoint]:
    """One point per non-transit frame of every compiled day (module docstring)."""
    out: list[DecisionPoint] = []
    for day in sorted(frames_by_day):
        frames = sorted(frames_by_day[day], key=lambda f: (f["start"], f["id"]))
        by_monitor: dict[str, list[Mapping[str, Any]]] = {}
        for frame in frames:
            by_monitor.setdefault(str(frame.get("monitor", "")), []).append(frame)
        starts = sorted(datetime.fromisoformat(f["start"]) for f in frames)
        finals: list[tuple[datetime, Mapping[str, Any], Mapping[str, Any] | None]] = []
        for monitor_frames in by_monitor.values():
            for i, frame in enumerate(monitor_frames):
                following = monitor_frames[i + 1] if i + 1 < len(monitor_frames) else None
                finals.append((_final_at(frame, following), frame, following))
        finals.sort(key=lambda item: (item[0], item[1]["id"]))
        active = 0.0
        for at, frame, following in finals:
            active += float(frame.get("duration_min") or 0)
            if frame.get("transit"):
                continue
            out.append(_point(day, at, frame, following, starts, active, zone))
    return out


def _point(
    day: date,
    at: datetime,
    frame: Mapping[str, Any],
    following: Mapping[str, Any] | None,
    starts: Sequence[datetime],
    active: float,
    zone: ZoneInfo,
) -> DecisionPoint:
    end = datetime.fromisoformat(frame["end"])
    gap = (
        following is None
        or (datetime.fromisoformat(following["start"]) - end).total_seconds() > SESSION_GAP_S
    )
    kinds: dict[str, int] = {}
    for page in frame.get("pages") or ():
        kinds[page["kind"]] = kinds.get(page["kind"], 0) + int(page.get("count") or 0)
    inputs = frame.get("input") or {}
    public = {
        "type": "frame_end",
        "app": frame.get("app"),
        "site": frame.get("site"),
        "monitor": frame.get("monitor"),
        "minutes": frame.get("duration_min"),
        "wall_minutes": frame.get("wall_min", frame.get("duration_min")),
        "keys": inputs.get("keys", 0),
        "clicks": inputs.get("clicks", 0),
        "copies": inputs.get("copies", 0),
        "page_kinds": [k for k, _ in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))][
            :PAGE_KINDS_MAX
        ],
        "start": datetime.fromisoformat(frame["start"]).astimezone(zone).strftime("%H:%M"),
        "end": end.astimezone(zone).strftime("%H:%M"),
        "next_app": None if gap or following is None else following.get("app"),
        "switches_30": sum(1 for s in starts if at - SWITCH_WINDOW <= s <= at),
        "active_min_today": round(active, 2),
        "day": day.isoformat(),
        "weekday": day.weekday(),
    }
    evidence = frame.get("evidence") or {}
    rows = expand_runs(str(evidence.get("rows") or ""))
    return DecisionPoint(
        key=f"desktop:{day.isoformat()}/{frame['id']}",
        scope="desktop",
        at=at,
        public=public,
        cites=tuple(rows),
    )
