"""What a person needs to judge a decision point at a glance, read only from what was known at
the point (ARCHITECTURE.md, "How data flows", step 5: an annotator sees the stream as the
methods saw it, never after the point).

- :func:`readable`: an event as a row a person reads (local time, room or place, sensor or
  source, message), the raw payload kept for "show raw";
- :func:`at_close`: what is on or open at the point's close and since when, and the quiet;
- :func:`baseline`: the same hours of the day on the previous days (14 or 28) as small
  multiples, one panel a day, lanes by room (home) or by event type (other scopes), events as
  ticks and devices that were on as bars;
- :func:`day_summary`: one of those days as far as it is known at the point (first and last
  activity per lane, longest device-on, longest quiet), asked for one day at a time.

Every moment is shown in the entity's local time; the page names the zone once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Q

from aframes_web.annotation.models import Task
from aframes_web.annotation.selectors import known_at
from aframes_web.proactivestream.models import DecisionPoint
from aframes_web.streams.models import Event
from aframes_web.streams.names import display, names_of
from benchmark.labelers.code import CodeLabeler, span_of
from benchmark.labelers.desktop import BREAK_MIN, work_stretch
from benchmark.streams.home import ACTIVE_VALUES
from benchmark.streams.records import StreamEvent
from benchmark.streams.words import plural, span_words
from memory.engine.expect import as_number, device_of
from memory.engine.usual import device_words
from memory.selectors import engine_event

# The window shown for a point: the two hours up to its close, or the point's own window when
# longer (a home segment states its start): enough to see what led up to the moment.
WINDOW = timedelta(hours=2)
# How many earlier days a baseline shows: two weeks by default (both weekdays and weekends
# twice), four on request; more would not fit a screen as small multiples.
BASELINE_DAYS = (14, 28)
PANEL_W, LANE_H = 260, 9  # one panel's drawing width and one lane's height, in SVG units
# How far back the workbench reads a repository's events for what waits for an answer at the
# close: two months hold nearly every open pull request's or issue's opening on an active
# repository, and a read of the whole history on every page would grow without bound; an item
# opened earlier is not listed (the page says so).
CODE_LOOKBACK = timedelta(days=60)
UNANSWERED_SHOWN = 8  # the longest waits; more would push the form off the screen


@dataclass(frozen=True, slots=True)
class Row:
    """An event as a person reads it."""

    id: int
    at: datetime  # aware; templates render it in the entity's zone
    lane: str  # room, place or app; else the event's type
    source: str  # sensor, window or field
    message: str
    raw: Mapping[str, Any]


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def readable(event: Event, names: Mapping[str, Any] | None = None) -> Row:
    """``event`` as a row: the payload as the engine sees it (no private ground truth); a
    sensor by its name from the entity's names table (``streams.names``) with its id beside
    it, and in the room the table gives it."""
    payload = engine_event(event).payload
    attributes = payload.get("attributes")
    attributes = attributes if isinstance(attributes, Mapping) else {}
    kind = _text(payload.get("type")) or event.kind
    if event.kind == "snapshot":
        lane, source = _text(payload.get("app")), _text(payload.get("window"))
        message = _text(payload.get("url"))
    elif event.kind in ("input", "absence"):
        lane, source = _text(payload.get("app")) or event.kind, _text(payload.get("window"))
        message = _text(payload.get("type") or payload.get("reason"))
    else:
        lane = _text(attributes.get("room") or attributes.get("place")) or kind
        source = _text(attributes.get("sensor") or attributes.get("device"))
        named = (names or {}).get(source)
        if named is not None:
            lane = named.room or lane
            source = f"{named.name} ({source})" if named.name != source else source
        value = _text(payload.get("value"))
        unit = _text(payload.get("unit"))
        message = " ".join(part for part in (kind, value, unit) if part)
    return Row(event.pk, event.occurred_at, lane, source, message, payload)


def _local(moment: Any, zone: ZoneInfo) -> datetime | None:
    try:
        found = datetime.fromisoformat(str(moment))
    except ValueError:
        return None
    return found.astimezone(zone) if found.tzinfo else found.replace(tzinfo=zone)


def at_close(task: Task, names: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What is on or open at the close, each with its local start and how long, and the quiet
    before the close (home points state these; other scopes state their own in words); a
    device by its name in the entity's names table when it has one."""
    public = task.point.public or {}
    zone = ZoneInfo(task.stream.entity.timezone)
    close = task.point.at.astimezone(zone)
    on = []
    for item in public.get("on_at_close") or ():
        since = _local(item.get("since"), zone)
        minutes = (close - since).total_seconds() / 60 if since else None
        named = (names or {}).get(_text(item.get("device")))
        on.append(
            {
                "device": f"the {display(named)}" if named is not None else device_words(item),
                "sensor": _text(item.get("device")),
                "kind": _text(item.get("kind")),
                "since": since,
                "for": span_words(minutes) if minutes is not None else "",
            }
        )
    quiet = public.get("quiet_min")
    return {
        "close": close,
        "state": state_at_close(task, public, close),
        "on": on,
        # Under a minute of quiet is no quiet: the page says the home was active at the close.
        "quiet": span_words(quiet) if isinstance(quiet, int | float) and quiet >= 1 else "",
        "active_at_close": isinstance(quiet, int | float) and quiet < 1,
        "home": public.get("type") == "home_segment",
    }


def state_at_close(task: Task, public: Mapping[str, Any], close: datetime) -> list[list[str]]:
    """What stands at the close for a wearable, a desktop or a repository, as (what, how
    much) rows: the equivalents of a home's open doors and quiet. A wearable: the hour's
    steps, sitting and active minutes, the day's steps. A desktop: how long work has gone on
    without a break and the day's active minutes. A repository: what waits for a first answer
    and for how long. Only what is known at the close (the point's own fields, and events and
    frames at or before it)."""
    kind = public.get("type")
    if kind == "sports_slot":
        return _sports_state(public)
    if kind == "frame_end":
        return _desktop_state(task, public, close)
    if kind == "home_segment":
        return []
    return _code_state(task, close)


def _sports_state(p: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for field_name, what, unit in (
        ("steps_last_60", "Steps in the hour before", "step"),
        ("sedentary_min_last_60", "Sitting in the hour before", "min"),
        ("active_min_last_60", "Active in the hour before", "min"),
        ("steps_today", "Steps today so far", "step"),
    ):
        value = as_number(p.get(field_name))
        if value is not None:
            shown = plural(value, "step") if unit == "step" else span_words(value)
            rows.append([what, shown])
    if p.get("worn_last_60") is False:
        rows.append(["Tracker", "no step or movement recorded in the hour (not worn?)"])
    sleep = as_number(p.get("last_sleep_min"))
    if sleep is not None:
        rows.append(["Last sleep", span_words(sleep)])
    return rows


def _desktop_state(task: Task, p: Mapping[str, Any], close: datetime) -> list[list[str]]:
    zone = close.tzinfo
    midnight = close.replace(hour=0, minute=0, second=0, microsecond=0)
    frames = []
    for public in DecisionPoint.objects.filter(
        entity_id=task.stream.entity_id, at__gte=midnight, at__lte=task.point.at
    ).values_list("public", flat=True):
        start, end = (
            _clock_at(midnight, public.get("start")),
            _clock_at(midnight, public.get("end")),
        )
        if start is not None and end is not None:
            frames.append((start, max(start, end)))
    rows = []
    stretch = work_stretch(frames)
    if stretch is not None and close - stretch[1] < BREAK_MIN:
        minutes = (close - stretch[0]).total_seconds() / 60
        rows.append(
            [
                "Working without a break",
                f"since {stretch[0].astimezone(zone):%H:%M}, {span_words(minutes)} "
                f"(a break: {span_words(BREAK_MIN.total_seconds() / 60)} without any frame)",
            ]
        )
    elif stretch is not None:
        rows.append(["Last break", f"since {stretch[1].astimezone(zone):%H:%M}"])
    active = as_number(p.get("active_min_today"))
    if active is not None:
        rows.append(["Active today so far", span_words(active)])
    switches = as_number(p.get("switches_30"))
    if switches is not None:
        rows.append(["Frames started in the last 30 min", f"{switches:.0f}"])
    return rows


def _clock_at(midnight: datetime, clock: Any) -> datetime | None:
    try:
        hours, minutes = str(clock).split(":")
        return midnight + timedelta(hours=int(hours), minutes=int(minutes))
    except ValueError:
        return None


def _code_state(task: Task, close: datetime) -> list[list[str]]:
    reader = CodeLabeler()
    rows = (
        known_at(task)
        .filter(occurred_at__gte=task.point.at - CODE_LOOKBACK)
        .order_by("occurred_at", "id")
        .values_list("pk", "occurred_at", "kind", "payload")
    )
    for pk, at, kind, payload in rows.iterator(chunk_size=2000):
        reader.observe(StreamEvent(pk, at, kind, payload))
    waiting = reader.unanswered()
    days = CODE_LOOKBACK.days
    if not waiting:
        return [["Waiting for a first answer", f"nothing opened in the last {days} days"]]
    shown = [
        [
            f"{kind.capitalize()} #{number}" + (f" “{title}”" if title else ""),
            f"waiting {span_of(close - opened)} for a first answer"
            + (f" (opened by {author})" if author else ""),
        ]
        for kind, number, opened, author, title in waiting[:UNANSWERED_SHOWN]
    ]
    if len(waiting) > UNANSWERED_SHOWN:
        shown.append(["…", f"{len(waiting) - UNANSWERED_SHOWN} more waiting"])
    shown.append(["Read from", f"the events of the last {days} days (older ones are not listed)"])
    return shown


def window_of(task: Task) -> tuple[datetime, datetime]:
    """The point's window, local: [close − max(WINDOW, the point's own span), close]."""
    zone = ZoneInfo(task.stream.entity.timezone)
    close = task.point.at.astimezone(zone)
    public = task.point.public or {}
    length = WINDOW
    start = public.get("start")
    if isinstance(start, str) and len(start) == 5 and start[2] == ":":
        began = close.replace(hour=int(start[:2]), minute=int(start[3:]), second=0, microsecond=0)
        if began < close:
            length = max(length, close - began)
    return close - length, close


@dataclass
class Day:
    """One panel of the baseline: a local day's window."""

    day: date
    today: bool
    ticks: list[tuple[str, float]] = field(default_factory=list)  # (lane, 0..1 across)
    bars: list[tuple[str, float, float]] = field(default_factory=list)  # (lane, from, to)
    events: int = 0


def _is_on(row: Row) -> bool:
    return _text(row.raw.get("value")).strip().upper() in ACTIVE_VALUES


def _windows(start: datetime, close: datetime, days: int) -> list[tuple[date, datetime, datetime]]:
    """(day, start, end) of the point's window [``start``, ``close``] (local) on its day and
    each of ``days`` earlier days, oldest first: the same wall-clock hours (a change of clocks
    moves the window with the clock, as a person's routine moves)."""
    zone = close.tzinfo
    found = []
    for offset in range(days, -1, -1):
        day = close.date() - timedelta(days=offset)
        begins = datetime.combine(day, start.time(), tzinfo=zone)
        if start.date() != close.date():  # a window across midnight starts the day before
            begins -= timedelta(days=1)
        found.append((day, begins, begins + (close - start)))
    return found


def _rows_in(
    task: Task,
    ranges: Sequence[tuple[datetime, datetime]],
    names: Mapping[str, Any] | None = None,
) -> list[Row]:
    """The events known at the point inside any of ``ranges``, in time order."""
    wanted = Q()
    for begins, ends in ranges:
        wanted |= Q(occurred_at__gte=begins, occurred_at__lt=ends)
    found = known_at(task).filter(wanted).only("id", "occurred_at", "kind", "payload", "monitor")
    return [readable(e, names) for e in found.order_by("occurred_at", "id")]


def baseline(
    task: Task, days: int = BASELINE_DAYS[0], names: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The point's window on its own day (up to the close) and on each of the ``days`` earlier
    days, as panels to draw, with lanes shared by every panel.

    Only the windows are read (a few hundred rows on a month of a busy home, not the month),
    each with one window's length before it, so a door opened shortly before the window is
    drawn open from its start; one opened earlier than that is not drawn."""
    start, close = window_of(task)
    length = (close - start).total_seconds()
    windows = _windows(start, close, days)
    lookback = close - start
    named = names_of(task.stream.entity) if names is None else names
    rows = _rows_in(task, [(begins - lookback, ends) for _, begins, ends in windows], named)
    panels: list[Day] = []
    lanes: set[str] = set()
    cursor = 0
    for day, begins, ends in windows:
        panel = Day(day=day, today=day == close.date())
        open_at: dict[str, tuple[str, datetime]] = {}
        while cursor < len(rows) and rows[cursor].at < begins - lookback:
            cursor += 1
        while cursor < len(rows) and rows[cursor].at < ends:
            row = rows[cursor]
            cursor += 1
            device = device_of(row.raw)
            if device is not None and _is_on(row):
                open_at.setdefault(device, (row.lane, row.at))
            elif device is not None and device in open_at:
                lane, since = open_at.pop(device)
                if row.at > begins:
                    at = _fraction(since, begins, length), _fraction(row.at, begins, length)
                    panel.bars.append((lane, *at))
            if row.at >= begins:
                panel.ticks.append((row.lane, _fraction(row.at, begins, length)))
                panel.events += 1
                lanes.add(row.lane)
        for lane, since in open_at.values():  # still on at the window's end
            panel.bars.append((lane, _fraction(since, begins, length), 1.0))
        lanes.update(lane for lane, *_ in panel.bars)
        panels.append(panel)
    panels.reverse()  # the point's day first
    return _drawn(panels, sorted(lanes), start, close, days)


def day_summary(task: Task, day: date) -> dict[str, Any]:
    """One local day as far as it is known at the point: first and last activity per lane, the
    longest time a door or appliance was on, and the longest quiet between two events."""
    zone = ZoneInfo(task.stream.entity.timezone)
    begins = datetime.combine(day, datetime.min.time(), tzinfo=zone)
    ends = min(begins + timedelta(days=1), task.point.at.astimezone(zone) + timedelta(seconds=1))
    rows = _rows_in(task, [(begins, ends)], names_of(task.stream.entity))
    first_last: dict[str, tuple[str, str]] = {}
    for row in rows:
        clock = row.at.astimezone(zone).strftime("%H:%M")
        first_last[row.lane] = (first_last.get(row.lane, (clock, clock))[0], clock)
    on: dict[str, tuple[str, datetime]] = {}
    longest_on = (0.0, "")
    for row in rows:
        device = device_of(row.raw)
        if device is None:
            continue
        if _is_on(row):
            on.setdefault(device, (row.lane, row.at))
        elif device in on:
            lane, since = on.pop(device)
            minutes = (row.at - since).total_seconds() / 60
            if minutes > longest_on[0]:
                longest_on = (minutes, device_words({"device": device, "room": lane}))
    for device, (lane, since) in on.items():  # still on at the day's end or the close
        minutes = (ends - since).total_seconds() / 60
        if minutes > longest_on[0]:
            named = device_words({"device": device, "room": lane})
            longest_on = (minutes, f"{named} (still on)")
    gaps = [(b.at - a.at, a.at) for a, b in zip(rows, rows[1:], strict=False)]
    quiet = max(gaps, key=lambda gap: gap[0]) if gaps else None  # the first, on a tie
    return {
        "day": day,
        "events": len(rows),
        "first_last": sorted(first_last.items()),
        "longest_on": f"{longest_on[1]}, {span_words(longest_on[0])}" if longest_on[1] else "",
        "longest_quiet": (
            f"{span_words(quiet[0].total_seconds() / 60)} from {quiet[1].astimezone(zone):%H:%M}"
            if quiet
            else ""
        ),
    }


def _fraction(moment: datetime, start: datetime, length: float) -> float:
    return min(1.0, max(0.0, (moment - start).total_seconds() / length)) if length else 0.0


def _drawn(
    panels: Sequence[Day], lanes: Sequence[str], start: datetime, close: datetime, days: int
) -> dict[str, Any]:
    """Coordinates for the template's SVG: one panel per day, a lane per room or type."""
    lane_y = {lane: n * LANE_H for n, lane in enumerate(lanes)}
    height = max(1, len(lanes)) * LANE_H
    drawn = []
    for panel in panels:
        drawn.append(
            {
                "day": panel.day,
                "today": panel.today,
                "events": panel.events,
                "height": height,
                "ticks": [
                    {"x": round(x * PANEL_W, 1), "y": lane_y[lane]} for lane, x in panel.ticks
                ],
                "bars": [
                    {
                        "x": round(a * PANEL_W, 1),
                        "w": max(1.0, round((b - a) * PANEL_W, 1)),
                        "y": lane_y[lane],
                        "lane": lane,
                    }
                    for lane, a, b in panel.bars
                    if lane in lane_y
                ],
            }
        )
    return {
        "panels": drawn,
        "lanes": [{"name": lane, "y": lane_y[lane] + LANE_H - 2} for lane in lanes],
        "width": PANEL_W,
        "height": height,
        "from": start,
        "to": close,
        "days": days,
        "choices": BASELINE_DAYS,
    }


def history_range(task: Task, start: datetime | None, end: datetime | None) -> Iterable[Event]:
    """The events known at the point between ``start`` and ``end`` (either open), oldest first:
    never past the point, whatever ``end`` asks."""
    found = known_at(task)
    if start is not None:
        found = found.filter(occurred_at__gte=start)
    if end is not None:
        found = found.filter(occurred_at__lte=end)
    return found.order_by("occurred_at", "id")
