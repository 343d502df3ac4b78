"""What the dashboard draws from a stored day document: the timeline's geometry, the per-app
ledger, the month grid and a readable diff of two versions. Pure functions over document JSON.
"""

from __future__ import annotations

import calendar
import difflib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from compiler.document import expand_runs

# Tableau 10 then the light halves of Tableau 20 (Stone, "Tableau 20" qualitative palette): the
# first ten are mutually distinct hues, so the apps that fill most of a day never share a colour.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#a0cbe8",
    "#ffbe7d",
    "#ff9d9a",
    "#86bcb6",
    "#8cd17d",
    "#f1ce63",
    "#d4a6c8",
    "#fabfd2",
    "#d7b5a6",
    "#79706e",
)
OTHER_COLOUR = "#d9dde2"  # apps past the palette: the smallest of a day, drawn alike


def _app_seconds(frames: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Active seconds per app, interruptions credited to their own app (the ledger's rule)."""
    seconds: dict[str, float] = {}
    for item in frames:
        seconds[item["app"]] = seconds.get(item["app"], 0.0) + item["duration_min"] * 60.0
        for interruption in item["interruptions"]:
            other = interruption["app"]
            seconds[other] = seconds.get(other, 0.0) + interruption["seconds"]
    return seconds


def app_colours(frames: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """One colour per app of a day, by rank of active time: the busiest app gets the first
    colour of the palette, and so on; the same app has the same colour on every page of the
    day (timeline, ledger, frame). A hash of the name made different apps collide."""
    seconds = _app_seconds(frames)
    order = sorted(seconds, key=lambda app: (-seconds[app], app))
    return {
        app: PALETTE[rank] if rank < len(PALETTE) else OTHER_COLOUR
        for rank, app in enumerate(order)
    }


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def hhmm(moment: datetime) -> str:
    return moment.strftime("%H:%M")


def _duration(minutes: float) -> str:
    if minutes < 1:
        return f"{round(minutes * 60)} s"
    return f"{minutes:.1f} min"


# --- Timeline -----------------------------------------------------------------------------------

# SVG user units: the drawing scales to the page width through its viewBox.
TIMELINE_WIDTH = 1000
PLOT_LEFT = 64  # room for the monitor labels
PLOT_RIGHT = 20  # room for the last hour label
AXIS_HEIGHT = 20
LANE_HEIGHT = 22
LANE_GAP = 6
LABEL_HEIGHT = 16  # one line of gap labels, one of away labels
MIN_BAR_WIDTH = 0.8  # a 20-second frame in a 10-hour view would otherwise be invisible
LABEL_CHAR_WIDTH = 5.6  # average glyph width at the 10-unit label font, to avoid overlaps


@dataclass(frozen=True)
class Bar:
    frame_id: str
    app: str
    site: str
    monitor: str
    start: datetime
    end: datetime
    minutes: float
    wall_minutes: float
    window: str
    interruptions: int
    colour: str
    x: float
    y: float
    width: float
    height: float

    @property
    def title(self) -> str:
        where = f"{self.app} ({self.site})" if self.site else self.app
        return (
            f"{hhmm(self.start)}–{hhmm(self.end)} {where}, {_duration(self.minutes)} active"
            f" on monitor {self.monitor}"
        )

    @property
    def summary(self) -> str:
        """The hover detail: what the frame is, one fact a line."""
        lines = [self.title]
        if self.window:
            lines.append(f"Window: {self.window}")
        if self.interruptions:
            word = "interruption" if self.interruptions == 1 else "interruptions"
            lines.append(f"{self.interruptions} {word}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Band:
    """A stretch without capture (``gap``) or with an explicit away signal (``away``)."""

    kind: str
    start: datetime
    end: datetime
    minutes: float
    reason: str
    x: float
    width: float
    label: str
    label_x: float | None  # None when the label would overlap its neighbour

    @property
    def title(self) -> str:
        word = "no capture" if self.kind == "gap" else "away"
        reason = f", {self.reason.replace('_', ' ')}" if self.reason else ""
        return f"{word} {hhmm(self.start)}–{hhmm(self.end)} ({_duration(self.minutes)}{reason})"


@dataclass(frozen=True)
class Tick:
    """An interruption inside a frame, drawn where its first row was captured."""

    frame_id: str
    app: str
    site: str
    seconds: float
    at: datetime | None
    host_app: str
    colour: str
    x: float
    y: float
    height: float

    @property
    def title(self) -> str:
        where = f"{self.app} ({self.site})" if self.site else self.app
        when = f" at {self.at.strftime('%H:%M:%S')}" if self.at else ""
        return f"{where} interrupted {self.host_app} for {self.seconds:g} s{when}"


@dataclass(frozen=True)
class Row:
    monitor: str
    y: float
    height: float
    lanes: int
    bars: list[Bar]

    @property
    def label_y(self) -> float:
        return self.y + self.height / 2 + 4


@dataclass(frozen=True)
class Timeline:
    width: int
    height: float
    plot_left: float
    plot_right: float
    rows: list[Row]
    bands: list[Band]
    ticks: list[Tick]
    hours: list[tuple[float, str]]
    band_top: float
    band_height: float
    gap_label_y: float
    away_label_y: float
    start: datetime
    end: datetime

    @property
    def bars(self) -> list[Bar]:
        return [bar for row in self.rows for bar in row.bars]

    @property
    def plot_width(self) -> float:
        return self.plot_right - self.plot_left

    @property
    def gaps(self) -> list[Band]:
        return [band for band in self.bands if band.kind == "gap"]

    @property
    def away(self) -> list[Band]:
        return [band for band in self.bands if band.kind == "away"]


def _lanes(frames: list[dict[str, Any]]) -> list[int]:
    """Greedy lanes so that frames of one monitor never overlap (they rarely do)."""
    ends: list[datetime] = []
    lanes = []
    for item in frames:
        start = parse_time(item["start"])
        for lane, end in enumerate(ends):
            if end <= start:
                ends[lane] = parse_time(item["end"])
                lanes.append(lane)
                break
        else:
            ends.append(parse_time(item["end"]))
            lanes.append(len(ends) - 1)
    return lanes


def _view(body: Mapping[str, Any]) -> tuple[datetime, datetime]:
    """Whole local hours around the activity, or the document's window when it has none."""
    tz = ZoneInfo(body["window"]["timezone"])
    coverage = body["coverage"]
    moments = [parse_time(f["start"]) for f in body["frames"]] + [
        parse_time(f["end"]) for f in body["frames"]
    ]
    for key in ("gaps", "away"):
        for span in coverage.get(key) or []:
            moments += [parse_time(span["start"]), parse_time(span["end"])]
    window_start = parse_time(body["window"]["start"])
    window_end = parse_time(body["window"]["end"])
    if not moments:
        return window_start.astimezone(tz), window_end.astimezone(tz)
    low = max(min(moments), window_start).astimezone(tz)
    high = min(max(moments), window_end).astimezone(tz)
    low = low - timedelta(minutes=low.minute, seconds=low.second, microseconds=low.microsecond)
    floor = high - timedelta(
        minutes=high.minute, seconds=high.second, microseconds=high.microsecond
    )
    high = floor if floor == high else floor + timedelta(hours=1)
    if high <= low:
        high = low + timedelta(hours=1)
    return low, high


def timeline(
    body: Mapping[str, Any], interruption_times: Mapping[int, datetime] | None = None
) -> Timeline:
    """One row per monitor, x is local time of day; gaps and away spans shade every row.

    ``interruption_times`` maps an interruption's first evidence row id to when it was captured
    (the document itself keeps only the rows), so ticks sit where the interruption happened.
    """
    tz = ZoneInfo(body["window"]["timezone"])
    times = interruption_times or {}
    colours = app_colours(body["frames"])
    view_start, view_end = _view(body)
    # Positions come from epoch seconds: subtracting two datetimes of the same ZoneInfo counts
    # wall-clock time, which puts the repeated hour of a DST change on top of itself.
    origin = view_start.timestamp()
    span_s = view_end.timestamp() - origin
    plot_width = TIMELINE_WIDTH - PLOT_LEFT - PLOT_RIGHT

    def x_of(moment: datetime) -> float:
        offset = (moment.timestamp() - origin) / span_s
        return round(PLOT_LEFT + min(max(offset, 0.0), 1.0) * plot_width, 2)

    monitors = list(body["coverage"].get("monitors") or [])
    for item in body["frames"]:
        if item["monitor"] not in monitors:
            monitors.append(item["monitor"])
    rows: list[Row] = []
    ticks: list[Tick] = []
    y = float(AXIS_HEIGHT)
    for monitor in monitors:
        frames = sorted(
            (f for f in body["frames"] if f["monitor"] == monitor),
            key=lambda f: parse_time(f["start"]).timestamp(),
        )
        lanes = _lanes(frames)
        count = max(lanes, default=0) + 1
        bars = []
        for item, lane in zip(frames, lanes, strict=True):
            start, end = (
                parse_time(item["start"]).astimezone(tz),
                parse_time(item["end"]).astimezone(tz),
            )
            x = x_of(start)
            top = y + lane * LANE_HEIGHT + 2
            bars.append(
                Bar(
                    frame_id=item["id"],
                    app=item["app"],
                    site=item["site"] or "",
                    monitor=monitor,
                    start=start,
                    end=end,
                    minutes=item["duration_min"],
                    wall_minutes=item["wall_min"],
                    window=(item.get("windows") or [""])[0],
                    interruptions=len(item["interruptions"]),
                    colour=colours[item["app"]],
                    x=x,
                    y=top,
                    width=max(round(x_of(end) - x, 2), MIN_BAR_WIDTH),
                    height=LANE_HEIGHT - 4,
                )
            )
            for interruption in item["interruptions"]:
                ids = expand_runs(interruption["evidence"])
                at = times.get(ids[0]) if ids else None
                at = at.astimezone(tz) if at is not None else None
                ticks.append(
                    Tick(
                        frame_id=item["id"],
                        app=interruption["app"],
                        site=interruption.get("site") or "",
                        seconds=interruption["seconds"],
                        at=at,
                        host_app=item["app"],
                        colour=colours[interruption["app"]],
                        x=x_of(at) if at is not None else x,
                        y=top - 2,
                        height=LANE_HEIGHT,
                    )
                )
        height = count * LANE_HEIGHT
        rows.append(Row(monitor=monitor, y=y, height=height, lanes=count, bars=bars))
        y += height + LANE_GAP
    band_top = float(AXIS_HEIGHT)
    band_height = max(y - LANE_GAP - band_top, LANE_HEIGHT)
    gap_label_y = band_top + band_height + 12
    bands = _bands(body["coverage"], "gaps", "gap", x_of, tz)
    bands += _bands(body["coverage"], "away", "away", x_of, tz)
    step = 1 if span_s <= 12 * 3600 else 2
    hours = []
    moment = view_start.astimezone(UTC)  # stepped in UTC: a 23- or 25-hour day keeps its hours
    while moment <= view_end:
        hours.append((x_of(moment), hhmm(moment.astimezone(tz))))
        moment += timedelta(hours=step)
    return Timeline(
        width=TIMELINE_WIDTH,
        height=gap_label_y + LABEL_HEIGHT + 4,
        plot_left=PLOT_LEFT,
        plot_right=TIMELINE_WIDTH - PLOT_RIGHT,
        rows=rows,
        bands=bands,
        ticks=ticks,
        hours=hours,
        band_top=band_top,
        band_height=band_height,
        gap_label_y=gap_label_y,
        away_label_y=gap_label_y + LABEL_HEIGHT,
        start=view_start,
        end=view_end,
    )


def _bands(coverage: Mapping[str, Any], key: str, word: str, x_of: Any, tz: ZoneInfo) -> list[Band]:
    bands = []
    last_label_end = -math.inf
    for span in coverage.get(key) or []:
        start, end = (
            parse_time(span["start"]).astimezone(tz),
            parse_time(span["end"]).astimezone(tz),
        )
        if end <= start:
            # An away signal that ended the moment it began (a lock screen dismissed at once)
            # covers no time: drawing or listing it would say "away 0 s" about nothing.
            continue
        reason = span.get("reason", "")
        label = f"{word} {_duration(span['minutes'])}"
        x = x_of(start)
        width = max(x_of(end) - x, MIN_BAR_WIDTH)
        half = len(label) * LABEL_CHAR_WIDTH / 2
        centre = x + width / 2
        label_x = None
        if centre - half > last_label_end:
            label_x = round(centre, 2)
            last_label_end = centre + half
        bands.append(
            Band(
                kind="gap" if key == "gaps" else "away",
                start=start,
                end=end,
                minutes=span["minutes"],
                reason=reason,
                x=x,
                width=round(width, 2),
                label=label,
                label_x=label_x,
            )
        )
    return bands


def monitor_minutes(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Active minutes per monitor of a stored document, in the coverage's monitor order.

    The coverage's active minutes sum every monitor's stream (activity frames §4.2: credited
    per-monitor segments), so on a two-monitor day they can exceed the wall-clock span; this
    is the split a reader needs to see why.
    """
    minutes: dict[str, float] = dict.fromkeys(body["coverage"].get("monitors") or [], 0.0)
    for item in body["frames"]:
        minutes[item["monitor"]] = minutes.get(item["monitor"], 0.0) + item["duration_min"]
    return [{"monitor": m, "minutes": round(v, 1)} for m, v in minutes.items()]


# --- Ledger -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerRow:
    app: str
    minutes: float
    sessions: int
    longest_min: float
    share_pct: float
    colour: str


def ledger(frames: Iterable[Mapping[str, Any]]) -> list[LedgerRow]:
    """Per app: active minutes, sessions and the longest session, from a stored document.

    compiler.views.ledger needs a Compiled, i.e. a recompile of the day. We compute from the
    stored frames instead: the page shows one stored version, and a recompile would read every
    event of the day again (about half a second for a synthetic day, on every view) and could
    describe events newer than the version on screen. The rules are the compiler's: frames count
    as sessions and interruptions credit their own app. The one difference is that a stored
    document leaves out frames under the floor; the day page shows their total (``omitted``)
    beside the ledger, so every credited minute is still accounted for.
    """
    frames = list(frames)
    seconds = _app_seconds(frames)
    colours = app_colours(frames)
    sessions: dict[str, int] = {}
    longest: dict[str, float] = {}
    for item in frames:
        app = item["app"]
        active = item["duration_min"] * 60.0
        sessions[app] = sessions.get(app, 0) + 1
        longest[app] = max(longest.get(app, 0.0), active)
    total = sum(seconds.values()) or 1.0
    order = sorted(seconds, key=lambda app: (-seconds[app], app))
    return [
        LedgerRow(
            app=app,
            minutes=round(seconds[app] / 60, 2),
            sessions=sessions.get(app, 0),
            longest_min=round(longest.get(app, 0.0) / 60, 2),
            share_pct=round(100 * seconds[app] / total, 1),
            colour=colours[app],
        )
        for app in order
    ]


# --- Month grid ---------------------------------------------------------------------------------

SHADES = 4  # levels of the calendar's shading, besides "nothing"


@dataclass(frozen=True)
class CalendarDay:
    day: date
    in_month: bool
    minutes: float | None  # active minutes of the current document, None without one
    frames: int
    events: int  # events captured that local day (0 when none)
    level: int  # 0 (nothing) .. SHADES (the month's busiest day)


def month_grid(
    year: int,
    month: int,
    documents: Mapping[date, tuple[float, int]],
    captured: Mapping[date, int],
) -> list[list[CalendarDay]]:
    """Weeks from Monday; days shaded relative to the busiest day of the month.

    ``documents`` maps a day to (active minutes, frames); ``captured`` a day to its events.
    """
    weeks = calendar.Calendar(firstweekday=0).monthdatescalendar(year, month)
    busiest = max(
        (m for d, (m, _) in documents.items() if (d.year, d.month) == (year, month)), default=0.0
    )
    grid = []
    for week in weeks:
        row = []
        for day in week:
            in_month = day.month == month
            minutes, frames = documents.get(day, (None, 0)) if in_month else (None, 0)
            level = 0
            if minutes is not None and busiest > 0:
                level = min(SHADES, max(1, math.ceil(SHADES * minutes / busiest)))
            row.append(
                CalendarDay(
                    day=day,
                    in_month=in_month,
                    minutes=minutes,
                    frames=frames,
                    events=captured.get(day, 0) if in_month else 0,
                    level=level,
                )
            )
        grid.append(row)
    return grid


@dataclass(frozen=True)
class MemoryCalendarDay:
    """A day of an entity whose days are closed into memory rather than compiled."""

    day: date
    in_month: bool
    events: int
    closed: bool
    facts: int
    decisions: int
    interventions: int
    level: int  # 0 (no events) .. SHADES (the month's busiest day)


def memory_month_grid(year: int, month: int, figures: Mapping[date, Any]) -> list[list[Any]]:
    """Weeks from Monday; days shaded by events relative to the month's busiest day.

    ``figures`` maps a day to an object with ``events``, ``closed``, ``facts``, ``decisions``
    and ``interventions`` (dashboard.selectors.MemoryDayFigures).
    """
    weeks = calendar.Calendar(firstweekday=0).monthdatescalendar(year, month)
    busiest = max(
        (f.events for d, f in figures.items() if (d.year, d.month) == (year, month)), default=0
    )
    grid = []
    for week in weeks:
        row = []
        for day in week:
            in_month = day.month == month
            found = figures.get(day) if in_month else None
            events = found.events if found else 0
            level = min(SHADES, max(1, math.ceil(SHADES * events / busiest))) if events else 0
            row.append(
                MemoryCalendarDay(
                    day=day,
                    in_month=in_month,
                    events=events,
                    closed=bool(found and found.closed),
                    facts=found.facts if found else 0,
                    decisions=found.decisions if found else 0,
                    interventions=found.interventions if found else 0,
                    level=level,
                )
            )
        grid.append(row)
    return grid


# --- Version diff -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldChange:
    name: str
    before: str
    after: str


@dataclass(frozen=True)
class FrameChange:
    frame_id: str
    app: str
    when: str
    changes: list[FieldChange]


@dataclass(frozen=True)
class FrameLine:
    frame_id: str
    app: str
    when: str
    minutes: float


@dataclass
class DocumentDiff:
    fields: list[FieldChange] = field(default_factory=list)
    added: list[FrameLine] = field(default_factory=list)
    removed: list[FrameLine] = field(default_factory=list)
    changed: list[FrameChange] = field(default_factory=list)
    unchanged: int = 0
    context: list[tuple[str, str]] = field(default_factory=list)  # (line, "add"|"del"|"hunk"|"")

    @property
    def empty(self) -> bool:
        return not (self.fields or self.added or self.removed or self.changed or self.context)


def show(value: Any) -> str:
    """A stored value as text: strings as they are, the rest as compact JSON."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _item(value: Any) -> str:
    """One list element as a person reads it (gaps, pages, interruptions, plain values)."""
    if isinstance(value, dict):
        if {"start", "end", "minutes"} <= value.keys():
            reason = f", {value['reason']}" if value.get("reason") else ""
            return f"{value['start'][11:19]}–{value['end'][11:19]} ({value['minutes']} min{reason})"
        if {"kind", "entity", "count"} <= value.keys():
            return f"{value['kind']}:{value['entity']} ×{value['count']}"
        if {"app", "seconds"} <= value.keys():
            site = f" ({value['site']})" if value.get("site") else ""
            return f"{value['app']}{site} {value['seconds']:g} s"
    return show(value)


def _list_change(name: str, before: list[Any], after: list[Any]) -> FieldChange:
    old = [_item(v) for v in before]
    new = [_item(v) for v in after]
    removed = [v for v in old if v not in new]
    added = [v for v in new if v not in old]
    if not removed and not added:
        return FieldChange(name, "order: " + "; ".join(old), "order: " + "; ".join(new))
    return FieldChange(
        name,
        "removed: " + "; ".join(removed) if removed else "",
        "added: " + "; ".join(added) if added else "",
    )


def _runs_change(name: str, before: str, after: str) -> FieldChange:
    old, new = set(expand_runs(before)), set(expand_runs(after))
    gone, came = sorted(old - new), sorted(new - old)

    def some(ids: list[int]) -> str:
        shown = ", ".join(map(str, ids[:8]))
        return shown + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")

    return FieldChange(
        f"{name} (event ids)",
        f"−{len(gone)}: {some(gone)}" if gone else "",
        f"+{len(came)}: {some(came)}" if came else "",
    )


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict):
            out.update(_flatten(item, f"{name}."))
        else:
            out[name] = item
    return out


def _changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[FieldChange]:
    flat_a, flat_b = _flatten(before), _flatten(after)
    changes = []
    for name in sorted(flat_a.keys() | flat_b.keys()):
        old, new = flat_a.get(name), flat_b.get(name)
        if old == new:
            continue
        if name.startswith("evidence.") and isinstance(old, str) and isinstance(new, str):
            changes.append(_runs_change(name, old, new))
        elif isinstance(old, list) and isinstance(new, list):
            changes.append(_list_change(name, old, new))
        else:
            changes.append(FieldChange(name, show(old), show(new)))
    return changes


def _line(item: Mapping[str, Any]) -> FrameLine:
    return FrameLine(
        frame_id=item["id"],
        app=item["app"] + (f" ({item['site']})" if item.get("site") else ""),
        when=f"{item['start'][11:16]}–{item['end'][11:16]}",
        minutes=item["duration_min"],
    )


def document_diff(
    before: Mapping[str, Any], after: Mapping[str, Any], before_context: str, after_context: str
) -> DocumentDiff:
    """Field by field: document fields (coverage, omitted, provenance ...), then frames matched
    by their stable id (added, removed, changed), then the context block line by line."""
    diff = DocumentDiff()
    rest_a = {k: v for k, v in before.items() if k != "frames"}
    rest_b = {k: v for k, v in after.items() if k != "frames"}
    diff.fields = _changes(rest_a, rest_b)
    frames_a = {f["id"]: f for f in before["frames"]}
    frames_b = {f["id"]: f for f in after["frames"]}
    diff.removed = [_line(f) for i, f in frames_a.items() if i not in frames_b]
    diff.added = [_line(f) for i, f in frames_b.items() if i not in frames_a]
    for frame_id, old in frames_a.items():
        new = frames_b.get(frame_id)
        if new is None:
            continue
        changes = _changes(old, new)
        if changes:
            line = _line(new)
            diff.changed.append(FrameChange(frame_id, line.app, line.when, changes))
        else:
            diff.unchanged += 1
    for line in difflib.unified_diff(
        before_context.splitlines(), after_context.splitlines(), lineterm="", n=1
    ):
        if line.startswith(("---", "+++")):
            continue
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")
        diff.context.append((line, kind))
    return diff
