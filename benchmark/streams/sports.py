"""Sports decision points: five decision slots a day, as in HeartSteps (ProactMem A.1).

HeartSteps V1 offered a suggestion at five decision times a day. Where a stream holds the
study's own decision points (``decision_point`` observations of the HeartSteps importer), those
are the points; otherwise (Fitbit) every local day with step data gets the five fixed local
slots :data:`SLOTS`, on the hour so that hourly rows (stamped at the end of their hour) line up
with them.

Public fields of a point, each None where the data cannot say:

* ``slot`` (0–4), ``slot_time`` (local ``HH:MM``), ``day``, ``weekday``;
* ``steps_last_60`` and ``steps_last_30``: steps in the hour and half hour before the slot
  (the half hour needs minute data: Fitabase's wide minute files or HeartSteps' minute rows);
* ``steps_today``: steps from local midnight to the slot;
* ``intensity_last_60``: Fitbit's intensity in the hour before (sum of minute levels 0–3);
  ``active_min_last_60`` and ``sedentary_min_last_60``: minutes at level 2 or more, and at 0
  (minute intensities only);
* ``worn_last_60``: whether the hour before shows any step or intensity (a tracker that records
  nothing for an hour was off, or its wearer asleep: unknown);
* ``last_sleep_min``: minutes asleep of the latest sleep record available by the slot (Fitabase
  stamps a day's sleep at its end, so this is the night before last or older);
* ``resolution``: ``minute`` or ``hour``, the finest data the slot's hour has;
* HeartSteps points add what the study's decision saw: ``available``, ``in_transit``,
  ``snoozed``, ``connected``, ``recognized_activity``, ``location`` (category).

Private fields: HeartSteps' randomised assignment (``sent``, ``suggestion``) and outcomes (the
participant's response, steps after the decision). Fitbit data carries no ground truth, so
its points have none (the labeler defines its opportunities from the complete minute history
up to the slot).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from benchmark.streams.records import DecisionPoint, StreamEvent

# Our choice, on the hour: HeartSteps' five times (morning, lunch, mid-afternoon, evening
# commute, after dinner) placed where hourly rows end.
SLOTS = (time(9), time(12), time(15), time(18), time(21))
HOUR = timedelta(hours=1)
HALF_HOUR = timedelta(minutes=30)
MINUTE = timedelta(minutes=1)
ACTIVE_LEVEL = 2  # Fitbit's minute intensity: 2 fairly active, 3 very active
STEP_TYPES = frozenset({"steps", "steps_by_minute"})
HEARTSTEPS_CONTEXT = (
    "available",
    "in_transit",
    "snoozed",
    "connected",
    "recognized_activity",
    "location",
)


def _attributes(event: StreamEvent) -> Mapping[str, Any]:
    found = event.payload.get("attributes")
    return found if isinstance(found, Mapping) else {}


def _type(event: StreamEvent) -> str:
    found = event.payload.get("type")
    return found if isinstance(found, str) else ""


def _count(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return value


@dataclass
class _Series:
    """Rows of one kind, sorted by the end of their period: ``(end, start, value)``."""

    ends: list[datetime] = field(default_factory=list)
    rows: list[tuple[datetime, datetime, float]] = field(default_factory=list)

    def add(self, start: datetime, end: datetime, value: float) -> None:
        self.rows.append((end, start, value))

    def close(self) -> None:
        self.rows.sort()
        self.ends = [r[0] for r in self.rows]

    def total(self, since: datetime, until: datetime) -> float | None:
        """Sum of rows whose period lies in (since, until] by its end; None if no row."""
        lo, hi = bisect_right(self.ends, since), bisect_right(self.ends, until)
        rows = [r for r in self.rows[lo:hi] if r[1] >= since]
        return sum(r[2] for r in rows) if rows else None


@dataclass
class _Minutes:
    """Per-minute values, from wide hourly rows or minute rows: minute start -> value."""

    values: dict[datetime, float] = field(default_factory=dict)
    starts: list[datetime] = field(default_factory=list)

    def add(self, start: datetime, value: float) -> None:
        self.values[start] = value

    def close(self) -> None:
        self.starts = sorted(self.values)

    def window(self, since: datetime, until: datetime) -> list[float] | None:
        """The minutes that start in [since, until) and end by ``until``; None if none."""
        lo, hi = bisect_left(self.starts, since), bisect_left(self.starts, until)
        found = [self.values[s] for s in self.starts[lo:hi]]
        return found or None


@dataclass
class _Person:
    steps: _Series = field(default_factory=_Series)  # hourly totals
    intensity: _Series = field(default_factory=_Series)
    minute_steps: _Minutes = field(default_factory=_Minutes)
    minute_levels: _Minutes = field(default_factory=_Minutes)
    sleep: list[tuple[datetime, float]] = field(default_factory=list)
    decisions: list[StreamEvent] = field(default_factory=list)
    days: set[date] = field(default_factory=set)
    cited: list[tuple[datetime, int]] = field(default_factory=list)  # (row end, event id)


def _read(events: Sequence[StreamEvent], zone: ZoneInfo) -> _Person:
    person = _Person()
    for event in events:
        kind = _type(event)
        attributes = _attributes(event)
        value = _count(event.payload.get("value"))
        if kind == "decision_point":
            person.decisions.append(event)
            continue
        if kind == "sleep" and value is not None:
            person.sleep.append((event.at, value))
            continue
        minutes = attributes.get("minutes")
        if kind in ("steps_by_minute", "intensity_by_minute") and isinstance(minutes, list):
            start = event.at - MINUTE * len(minutes)
            target = person.minute_steps if kind == "steps_by_minute" else person.minute_levels
            for offset, count in enumerate(minutes):
                number = _count(count)
                if number is not None:
                    target.add(start + MINUTE * offset, number)
        elif kind == "steps" and value is not None:
            resolution = attributes.get("resolution")
            if resolution == "hour":
                person.steps.add(event.at - HOUR, event.at, value)
            elif resolution == "minute":
                person.minute_steps.add(event.at - MINUTE, value)
            else:
                continue
        elif kind == "intensity" and value is not None and attributes.get("resolution") == "hour":
            person.intensity.add(event.at - HOUR, event.at, value)
        else:
            continue
        person.days.add(event.at.astimezone(zone).date())
        person.cited.append((event.at, event.id))
    for series in (person.steps, person.intensity):
        series.close()
    for minutes_ in (person.minute_steps, person.minute_levels):
        minutes_.close()
    person.sleep.sort()
    person.cited.sort()
    return person


def _sum(values: list[float] | None) -> float | None:
    return None if values is None else sum(values)


def _whole(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else round(value, 2)


def _measures(person: _Person, at: datetime, midnight: datetime) -> dict[str, Any]:
    hour_ago, half_ago = at - HOUR, at - HALF_HOUR
    minute_steps = person.minute_steps.window(hour_ago, at)
    steps_60 = person.steps.total(hour_ago, at)
    if steps_60 is None:
        steps_60 = _sum(minute_steps)
    steps_30 = _sum(person.minute_steps.window(half_ago, at))
    steps_today = person.steps.total(midnight, at)
    if steps_today is None:
        steps_today = _sum(person.minute_steps.window(midnight, at))
    levels = person.minute_levels.window(hour_ago, at)
    intensity = person.intensity.total(hour_ago, at)
    if intensity is None:
        intensity = _sum(levels)
    worn = None
    if steps_60 is not None or intensity is not None:
        worn = bool(steps_60) or bool(intensity)
    slept = [minutes for stamp, minutes in person.sleep if stamp <= at]
    resolution = "minute" if minute_steps or levels else "hour" if steps_60 is not None else None
    return {
        "steps_last_60": _whole(steps_60),
        "steps_last_30": _whole(steps_30),
        "steps_today": _whole(steps_today),
        "intensity_last_60": _whole(intensity),
        "active_min_last_60": None
        if levels is None
        else sum(1 for v in levels if v >= ACTIVE_LEVEL),
        "sedentary_min_last_60": None if levels is None else sum(1 for v in levels if v == 0),
        "worn_last_60": worn,
        "last_sleep_min": _whole(slept[-1]) if slept else None,
        "resolution": resolution,
    }


def _cited(person: _Person, since: datetime, until: datetime) -> tuple[int, ...]:
    """The ids of the rows whose period ends in (since, until]."""
    lo = bisect_right(person.cited, (since, float("inf")))
    hi = bisect_right(person.cited, (until, float("inf")))
    return tuple(sorted(i for _, i in person.cited[lo:hi]))


def points(events: Sequence[StreamEvent], zone: ZoneInfo) -> list[DecisionPoint]:
    """The sports decision points of one entity's events (module docstring)."""
    if not events:
        return []
    person = _read(events, zone)
    last = max(e.at for e in events)
    if person.decisions:
        return [_heartsteps(person, d, zone) for d in sorted(person.decisions, key=_at_id)]
    out = []
    for day in sorted(person.days):
        midnight = datetime.combine(day, time(), tzinfo=zone)
        for index, slot in enumerate(SLOTS):
            at = datetime.combine(day, slot, tzinfo=zone)
            if at > last:
                break
            public = {
                "type": "sports_slot",
                "slot": index,
                "slot_time": slot.strftime("%H:%M"),
                "day": day.isoformat(),
                "weekday": day.weekday(),
                **_measures(person, at, midnight),
            }
            out.append(
                DecisionPoint(
                    key=f"sports:{day.isoformat()}/{index}",
                    scope="sports",
                    at=at,
                    public=public,
                    cites=_cited(person, at - HOUR, at),
                )
            )
    return out


def _at_id(event: StreamEvent) -> tuple[datetime, int]:
    return event.at, event.id


def _heartsteps(person: _Person, decision: StreamEvent, zone: ZoneInfo) -> DecisionPoint:
    attributes = _attributes(decision)
    local = decision.at.astimezone(zone)
    midnight = datetime.combine(local.date(), time(), tzinfo=zone)
    slot = attributes.get("slot")
    public: dict[str, Any] = {
        "type": "sports_slot",
        "slot": int(slot) - 1
        if isinstance(slot, int | float) and not isinstance(slot, bool)
        else None,
        "slot_time": local.strftime("%H:%M"),
        "day": local.date().isoformat(),
        "weekday": local.weekday(),
        **_measures(person, decision.at, midnight),
    }
    for key in HEARTSTEPS_CONTEXT:
        public[key] = attributes.get(key)
    private: dict[str, Any] = {
        "sent": decision.payload.get("value") == 1,
        "suggestion": attributes.get("suggestion"),
        **decision.private,
    }
    return DecisionPoint(
        key=f"sports:{decision.source_key or decision.id}",
        scope="sports",
        at=decision.at,
        public=public,
        private=private,
        cites=(decision.id, *_cited(person, decision.at - HOUR, decision.at)),
    )
