"""The Desktop reference labeler: opportunities from the person's own compiled days.

Desktop capture here is SYNTHETIC (no openly licensed real capture exists) and carries no
annotations, so what happened is read from the frames of the day so far and of earlier days, as
the decision points report them (each frame once it is final); never a later one. Opportunity
types, in the order a point is labelled; a frame boundary is a moment at the computer, so each
is actionable:

1. **late_start** → ``resume_focus``. The day's *main app* (the app with the most active
   minutes) was the same on at least :data:`USUAL_SHARE` of at least :data:`MIN_DAYS` earlier
   days; its usual first use is the third quartile of its first frame starts on those days. A
   point past that time plus :data:`GRACE` (and within :data:`RELEVANT_FOR`) on a day it has
   not appeared holds it. Episode ``DAY/APP``.
2. **no_break** → ``take_break``. Work has gone on for :data:`WORK_LIMIT` since the last break
   (a stretch of at least :data:`BREAK_MIN` without any frame on any monitor). Episode
   ``DAY/work@START``; strength 2 at :data:`WORK_ESCALATE`.
3. **fragmented** → ``refocus``. More frames started in the last 30 minutes than at the 95th
   percentile of the earlier days' points (at least :data:`MIN_DAYS` days), and at least
   :data:`SWITCH_FLOOR`. Episode ``DAY/switching@HH`` (the hour it began); it reopens after
   the switching has calmed down.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from benchmark.labelers.base import Opportunity, quantile
from benchmark.streams.records import DecisionPoint, StreamEvent

MIN_DAYS = 3
USUAL_SHARE = 0.6
GRACE = timedelta(minutes=30)
RELEVANT_FOR = timedelta(hours=3)
BREAK_MIN = timedelta(minutes=5)
WORK_LIMIT = timedelta(minutes=90)
WORK_ESCALATE = timedelta(minutes=150)
SWITCH_FLOOR = 12
TIMELY = timedelta(minutes=30)  # our choice: a nudge at the computer is timely for half an hour


def _clock(moment: datetime | timedelta) -> str:
    if isinstance(moment, timedelta):
        minutes = int(moment.total_seconds() // 60)
        return f"{minutes // 60:02d}:{minutes % 60:02d}"
    return moment.strftime("%H:%M")


@dataclass
class _Day:
    minutes: dict[str, float] = field(default_factory=dict)
    first: dict[str, timedelta] = field(default_factory=dict)  # app -> first frame start
    switches: list[int] = field(default_factory=list)
    frames: list[tuple[datetime, datetime]] = field(default_factory=list)

    def work_since(self) -> tuple[datetime, datetime] | None:
        return work_stretch(self.frames)


def work_stretch(frames: Iterable[tuple[datetime, datetime]]) -> tuple[datetime, datetime] | None:
    """The start and end of the latest stretch of frames (start, end) without a break of
    :data:`BREAK_MIN` between them; None without frames."""
    stretch: tuple[datetime, datetime] | None = None
    for start, end in sorted(frames):
        if stretch is None or start - stretch[1] >= BREAK_MIN:
            stretch = (start, end)
        else:
            stretch = (stretch[0], max(stretch[1], end))
    return stretch


@dataclass
class DesktopLabeler:
    zone: ZoneInfo
    name: str = "desktop"
    version: int = 1
    days: dict[date, _Day] = field(default_factory=dict)
    switching_since: str | None = None

    def observe(self, event: StreamEvent) -> None:
        return None  # the points carry the frames; raw rows add nothing this labeler reads

    def _record(self, point: DecisionPoint, day: date) -> tuple[datetime, datetime]:
        p = point.public
        midnight = datetime.combine(day, datetime.min.time(), tzinfo=self.zone)
        start = midnight + _offset(str(p.get("start", "00:00")))
        end = midnight + _offset(str(p.get("end", "00:00")))
        record = self.days.setdefault(day, _Day())
        app = str(p.get("app") or "")
        record.minutes[app] = record.minutes.get(app, 0.0) + float(p.get("minutes") or 0)
        record.first.setdefault(app, start - midnight)
        if record.first[app] > start - midnight:
            record.first[app] = start - midnight
        following = p.get("next_app")
        if isinstance(following, str) and following:
            record.first.setdefault(following, end - midnight)
        record.switches.append(int(p.get("switches_30") or 0))
        record.frames.append((start, end))
        return start, end

    def opportunities(self, point: DecisionPoint) -> list[Opportunity]:
        local = point.at.astimezone(self.zone)
        day = date.fromisoformat(str(point.public.get("day", local.date().isoformat())))
        self._record(point, day)
        earlier = [d for d in sorted(self.days) if d < day]
        found: list[Opportunity] = []
        found += self._late_start(point, day, earlier)
        stretch = self.days[day].work_since()
        if stretch is not None and stretch[1] - stretch[0] >= WORK_LIMIT:
            since, worked = stretch[0], stretch[1] - stretch[0]
            found.append(
                Opportunity(
                    "no_break",
                    "take_break",
                    f"{day.isoformat()}/work@{_clock(since)}",
                    f"At the computer since {_clock(since)} with no break of "
                    f"{int(BREAK_MIN.total_seconds() // 60)} minutes "
                    f"({int(worked.total_seconds() // 60)} min so far).",
                    strength=2 if worked >= WORK_ESCALATE else 1,
                    timely=TIMELY,
                )
            )
        found += self._fragmented(point, day, earlier, local)
        return found

    def _late_start(
        self, point: DecisionPoint, day: date, earlier: list[date]
    ) -> list[Opportunity]:
        if len(earlier) < MIN_DAYS:
            return []
        mains = [
            max(self.days[d].minutes.items(), key=lambda kv: (kv[1], kv[0]))[0]
            for d in earlier
            if self.days[d].minutes
        ]
        if not mains:
            return []
        app = max(set(mains), key=lambda a: (mains.count(a), a))
        if mains.count(app) < USUAL_SHARE * len(earlier):
            return []
        firsts = [self.days[d].first[app] for d in earlier if app in self.days[d].first]
        deadline = quantile(firsts, 0.75) + GRACE
        midnight = datetime.combine(day, datetime.min.time(), tzinfo=self.zone)
        now = point.at.astimezone(self.zone) - midnight
        if app in self.days[day].first or not deadline <= now <= deadline + RELEVANT_FOR:
            return []
        return [
            Opportunity(
                "late_start",
                "resume_focus",
                f"{day.isoformat()}/{app}",
                f"{app} is the main app on {mains.count(app)} of {len(earlier)} days and usually "
                f"in use by {_clock(deadline - GRACE)}; not opened by {_clock(now)}.",
                timely=TIMELY,
            )
        ]

    def _fragmented(
        self, point: DecisionPoint, day: date, earlier: list[date], local: datetime
    ) -> list[Opportunity]:
        switches = int(point.public.get("switches_30") or 0)
        history = [s for d in earlier for s in self.days[d].switches]
        if len(earlier) < MIN_DAYS or not history:
            self.switching_since = None
            return []
        threshold = max(quantile(history, 0.95), SWITCH_FLOOR)
        if switches <= threshold:
            self.switching_since = None
            return []
        if self.switching_since is None:
            self.switching_since = f"{day.isoformat()}/switching@{local.strftime('%H')}"
        return [
            Opportunity(
                "fragmented",
                "refocus",
                self.switching_since,
                f"{switches} frames started in the last 30 minutes; more than on 95% of "
                f"earlier moments (over {int(threshold)}).",
                timely=TIMELY,
            )
        ]


def _offset(clock: str) -> timedelta:
    hours, minutes = clock.split(":")
    return timedelta(hours=int(hours), minutes=int(minutes))
