"""The Sports reference labeler: opportunities from the person's own minute-level history.

Fitbit data carries no annotations, so what happened is read from the complete record up to
the slot: every earlier day's minute intensities and steps at the same slot (where minute data
exists; hourly rows otherwise), never a later row. HeartSteps' randomised assignment and
outcomes (private) are never used: an outcome is what followed a decision, not what the
situation was. Opportunity types, in the order a point is labelled:

1. **sedentary_usual_active** → ``suggest_walk``. The hour before the slot was sedentary
   (at most :data:`SEDENTARY_ACTIVE_MIN` fairly or very active minutes and fewer than
   :data:`SEDENTARY_STEPS` steps; hourly data: fewer than :data:`SEDENTARY_STEPS` steps)
   while the tracker was worn (a step or an intensity in the two hours before), and on at
   least :data:`USUAL_SHARE` of at least :data:`MIN_DAYS` earlier days with data at this slot
   the same hour was active (at least :data:`ACTIVE_MIN` active minutes, or
   :data:`ACTIVE_STEPS` steps). Episode ``DAY/slotN``.
2. **long_sitting** → ``stand_break``. Minute data shows at least :data:`SITTING_MIN`
   sedentary minutes in the hour before the slot with fewer than :data:`SEDENTARY_STEPS`
   steps, the tracker worn, and such a sitting hour at this slot happened on at most
   :data:`UNUSUAL_SHARE` of the earlier days: sitting that is unusual for this person now.
   Episode ``DAY/slotN``.
3. **behind_pace** → ``step_goal_nudge``. At the noon, mid-afternoon and evening slots, steps
   so far today are below :data:`PACE_SHARE` of this person's median at the same slot over
   the earlier days (at least :data:`MIN_DAYS`, median at least :data:`PACE_MIN_MEDIAN`),
   with the tracker worn today. Episode ``DAY/pace`` (once a day).

Every opportunity needs the tracker worn: a person who is not wearing it cannot be reached
through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from benchmark.labelers.base import Opportunity, mapping, median
from benchmark.streams.records import DecisionPoint, StreamEvent

MIN_DAYS = 5
USUAL_SHARE = 0.5
UNUSUAL_SHARE = 0.34
ACTIVE_MIN = 10  # fairly or very active minutes in the hour: a walk
ACTIVE_STEPS = 1000  # hourly data: a walk's worth of steps in the hour
SEDENTARY_ACTIVE_MIN = 2
SEDENTARY_STEPS = 250
SITTING_MIN = 50
PACE_SHARE = 0.5
PACE_MIN_MEDIAN = 1000
PACE_SLOTS = frozenset({1, 2, 3})
# Our choice: a slot's own opportunity is timely at that slot only; catching up on the day's
# pace is still timely at the next slot, three hours on.
PACE_TIMELY = timedelta(hours=3)
ACTIVE_LEVEL = 2
HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


@dataclass
class _Slot:
    """What one slot of one day looked like, measured from the history."""

    steps_60: float | None
    steps_today: float | None
    active_min: int | None
    sedentary_min: int | None
    worn: bool


@dataclass
class SportsLabeler:
    zone: ZoneInfo
    name: str = "sports"
    version: int = 1
    minute_steps: dict[datetime, float] = field(default_factory=dict)
    minute_levels: dict[datetime, float] = field(default_factory=dict)
    hour_steps: dict[datetime, float] = field(default_factory=dict)  # by the hour's end
    hour_intensity: dict[datetime, float] = field(default_factory=dict)
    history: dict[int, list[tuple[date, _Slot]]] = field(default_factory=dict)

    def observe(self, event: StreamEvent) -> None:
        kind = event.payload.get("type")
        attributes = mapping(event.payload.get("attributes"))
        minutes = attributes.get("minutes")
        if kind in ("steps_by_minute", "intensity_by_minute") and isinstance(minutes, list):
            target = self.minute_steps if kind == "steps_by_minute" else self.minute_levels
            start = event.at - MINUTE * len(minutes)
            for offset, count in enumerate(minutes):
                number = _number(count)
                if number is not None:
                    target[start + MINUTE * offset] = number
            return
        value = _number(event.payload.get("value"))
        if value is None:
            return
        if kind == "steps" and attributes.get("resolution") == "minute":
            self.minute_steps[event.at - MINUTE] = value
        elif kind == "steps" and attributes.get("resolution") == "hour":
            self.hour_steps[event.at] = value
        elif kind == "intensity" and attributes.get("resolution") == "hour":
            self.hour_intensity[event.at] = value

    def _minutes(
        self, series: Mapping[datetime, float], since: datetime, until: datetime
    ) -> list[float]:
        return [
            series[since + MINUTE * i]
            for i in range(int((until - since) / MINUTE))
            if since + MINUTE * i in series
        ]

    def _measure(self, at: datetime) -> _Slot:
        steps_min = self._minutes(self.minute_steps, at - HOUR, at)
        levels = self._minutes(self.minute_levels, at - HOUR, at)
        steps_60 = self.hour_steps.get(at)
        if steps_60 is None and steps_min:
            steps_60 = sum(steps_min)
        local = at.astimezone(self.zone)
        midnight = datetime.combine(local.date(), time(), tzinfo=self.zone)
        hours = [v for end, v in self.hour_steps.items() if midnight < end <= at]
        if hours:
            today: float | None = sum(hours)
        else:
            found = self._minutes(self.minute_steps, midnight, at)
            today = sum(found) if found else None
        earlier_steps = self._minutes(self.minute_steps, at - 2 * HOUR, at)
        earlier_levels = self._minutes(self.minute_levels, at - 2 * HOUR, at)
        worn = (
            any(earlier_steps)
            or any(earlier_levels)
            or bool(self.hour_steps.get(at))
            or bool(self.hour_steps.get(at - HOUR))
            or bool(self.hour_intensity.get(at))
        )
        return _Slot(
            steps_60,
            today,
            sum(1 for v in levels if v >= ACTIVE_LEVEL) if levels else None,
            sum(1 for v in levels if v == 0) if levels else None,
            worn,
        )

    def opportunities(self, point: DecisionPoint) -> list[Opportunity]:
        slot = point.public.get("slot")
        if not isinstance(slot, int):
            return []
        day = point.at.astimezone(self.zone).date()
        now = self._measure(point.at)
        earlier = [s for d, s in self.history.get(slot, []) if d < day and s.steps_60 is not None]
        self.history.setdefault(slot, []).append((day, now))
        if not now.worn or now.steps_60 is None or len(earlier) < MIN_DAYS:
            return []
        found = []
        clock = point.at.astimezone(self.zone).strftime("%H:%M")
        if self._sedentary(now):
            active = [s for s in earlier if self._active(s)]
            if len(active) >= USUAL_SHARE * len(earlier):
                found.append(
                    Opportunity(
                        "sedentary_usual_active",
                        "suggest_walk",
                        f"{day.isoformat()}/slot{slot}",
                        f"Only {int(now.steps_60)} steps in the hour before {clock}; that hour was "
                        f"active on {len(active)} of {len(earlier)} earlier days.",
                    )
                )
        if (
            now.sedentary_min is not None
            and now.sedentary_min >= SITTING_MIN
            and now.steps_60 < SEDENTARY_STEPS
        ):
            sitting = [
                s for s in earlier if s.sedentary_min is not None and s.sedentary_min >= SITTING_MIN
            ]
            measured = [s for s in earlier if s.sedentary_min is not None]
            if len(measured) >= MIN_DAYS and len(sitting) <= UNUSUAL_SHARE * len(measured):
                found.append(
                    Opportunity(
                        "long_sitting",
                        "stand_break",
                        f"{day.isoformat()}/slot{slot}",
                        f"{now.sedentary_min} sedentary minutes in the hour before {clock}; "
                        f"such an hour happened on {len(sitting)} of {len(measured)} earlier days.",
                    )
                )
        if slot in PACE_SLOTS and now.steps_today is not None:
            paces = [s.steps_today for s in earlier if s.steps_today is not None]
            if len(paces) >= MIN_DAYS:
                usual = median(paces)
                if usual >= PACE_MIN_MEDIAN and now.steps_today < PACE_SHARE * usual:
                    found.append(
                        Opportunity(
                            "behind_pace",
                            "step_goal_nudge",
                            f"{day.isoformat()}/pace",
                            f"{int(now.steps_today)} steps by {clock}; usually "
                            f"{int(usual)} by then (median of {len(paces)} days).",
                            timely=PACE_TIMELY,
                        )
                    )
        return found

    @staticmethod
    def _sedentary(s: _Slot) -> bool:
        if s.steps_60 is None or s.steps_60 >= SEDENTARY_STEPS:
            return False
        return s.active_min is None or s.active_min <= SEDENTARY_ACTIVE_MIN

    @staticmethod
    def _active(s: _Slot) -> bool:
        if s.active_min is not None:
            return s.active_min >= ACTIVE_MIN
        return s.steps_60 is not None and s.steps_60 >= ACTIVE_STEPS
