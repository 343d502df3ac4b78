"""Sports trajectories at the resolution the data has: walks from minutes, active hours from
hourly rows, sedentary stretches from either, and HeartSteps' decision points (ProactMem §3).

Reads the payloads the HeartSteps and Fitabase importers write: ``steps`` rows with
``attributes.resolution`` ``minute`` (HeartSteps, one row a minute, ``source`` jawbone or
google_fit) or ``hour`` (Fitabase), Fitabase's wide ``steps_by_minute`` rows (an hour's 60
minute counts in ``attributes.minutes``, stamped when the hour ended) and ``decision_point``.
Segment kinds:

* ``decision_point``: one per decision-point event, interval ``[at, at]``. Facts: ``type``
  (observed) and, as ``context_before``, each of ``available``, ``in_transit``, ``snoozed``,
  ``connected``, ``recognized_activity`` and ``location`` the event carries. The event's
  ``value`` (whether the study sent a suggestion) is the study's own intervention, not the
  situation, so it is no fact.
* ``step_bout`` (a walk): a maximal run of *consecutive* minutes of one source, each with at
  least :data:`BOUT_MIN_STEPS_PER_MIN` steps, lasting at least :data:`BOUT_MIN_DURATION`. It
  cites every row holding one of its minutes; facts ``type`` (``steps`` or
  ``steps_by_minute``), ``source`` (when the rows have one) and ``resolution`` (``minute``),
  at the walk's first minute.
* ``active_hour``: an hourly row with at least :data:`ACTIVE_HOUR_STEPS` steps (hourly data
  cannot show a minute-scale walk, but an hour holding one shows); facts ``type`` and
  ``resolution`` (``hour``), at the row.
* ``sedentary``: a maximal run of consecutive rows (minutes, or hours) of one source and
  resolution, each below :data:`SEDENTARY_STEPS_PER_MIN` steps a minute, lasting at least
  :data:`SEDENTARY_MIN_DURATION`. Facts ``type``, ``source`` (when present) and
  ``resolution``.

* ``day_start``: the first row at or after :data:`DAY_STARTS` local with steps of someone up
  and about (:data:`UP_STEPS_PER_MIN` a minute, or an hourly row of as many per minute); facts
  ``type`` and ``resolution``, at that row's end. Getting up later or earlier is what tells a
  routine (a morning walk) from a fixed habit.

Minutes are *consecutive* when one starts exactly a minute after the other; hourly rows when
one is stamped exactly an hour after the other; anything else (a missing row, a duplicate) ends
a run. Uncovered time is unknown, never inactivity: only explicit zero or low rows make a
sedentary stretch. A minute before the day's local midnight (the last hour of the day before,
in the row stamped at midnight) belongs to that day and is left out. Minutes and steps are no
facts (an aggregate is no leaf of any event); what was done is the segment's kind, and when,
its time. The extraction is incremental (:class:`SportsDay`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from itertools import groupby
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.records import EngineEvent, Fact, Path, Segment

# Tudor-Locke et al. 2011 (IJBNPA 8:79): a cadence of 100 steps/min marks moderate-intensity
# walking in adults.
BOUT_MIN_STEPS_PER_MIN = 100
# 2008 Physical Activity Guidelines for Americans: moderate activity counts in bouts of at
# least 10 minutes.
BOUT_MIN_DURATION = timedelta(minutes=10)
# Our choice: an hour with a guideline bout (10 minutes at 100 steps a minute) holds at least
# 1,000 steps.
ACTIVE_HOUR_STEPS = BOUT_MIN_STEPS_PER_MIN * 10
# Our choice, after HeartSteps V2's anti-sedentary trigger (fewer than 150 steps in the last
# 40 minutes): every row of the stretch stays below that average rate, 3.75 steps a minute
# (at most 3 in a minute row, at most 224 in an hour row).
SEDENTARY_STEPS_PER_MIN = 150 / 40
SEDENTARY_MIN_DURATION = timedelta(minutes=40)
# Our choices: the day starts at five in the morning at the earliest, with the first minute of
# at least 10 steps (a few steps in bed are not getting up), or an hour of 600.
DAY_STARTS = time(5)
UP_STEPS_PER_MIN = 10

MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)
ZERO = timedelta(0)
RESOLUTIONS: Mapping[str, timedelta] = MappingProxyType({"minute": MINUTE, "hour": HOUR})
WIDE_TYPE = "steps_by_minute"
CONTEXT_KEYS = (
    "available",
    "in_transit",
    "snoozed",
    "connected",
    "recognized_activity",
    "location",
)

VOCABULARY: Mapping[str, tuple[Path, ...]] = MappingProxyType(
    {
        "decision_point": (("type",), *((key,) for key in CONTEXT_KEYS)),
        "step_bout": (("type",), ("source",), ("resolution",)),
        "active_hour": (("type",), ("resolution",)),
        "sedentary": (("type",), ("source",), ("resolution",)),
        "day_start": (("type",), ("resolution",)),
    }
)


def _attributes(event: EngineEvent) -> Mapping[str, Any]:
    attributes = event.payload.get("attributes")
    return attributes if isinstance(attributes, Mapping) else {}


def _count(value: object) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None  # a bool, a missing or a NaN count is no row of steps
    return value


@dataclass(slots=True)
class _Run:
    """A run of consecutive kept rows: when its first and last rows ended, how many rows it
    holds, and the events holding them in time order (each once). A day holds up to 1,440
    minute rows, read again by every replayed memory; a run keeps what its segment says, not
    its rows."""

    first: datetime
    last: datetime
    rows: int
    events: list[EngineEvent]


@dataclass(slots=True)
class _Runs:
    """The maximal runs of consecutive kept rows (one period apart) of one stream, kept as
    the rows arrive: a row not kept, or one not a period after the last, ends a run. Each
    run's segment is made once per length it reaches."""

    period: timedelta
    runs: list[_Run] = field(default_factory=list)
    open: bool = False  # the last run may still grow
    made: dict[int, tuple[int, Segment]] = field(default_factory=dict)  # run index -> segment

    def add(self, end: datetime, event: EngineEvent, kept: bool, follows: bool = False) -> None:
        """A row ending at ``end``, held by ``event``. ``follows``: the caller knows the last
        row added here ended exactly a period before (the minute before, in the same hour's
        list), so the gap need not be measured."""
        if not kept:
            self.open = False
            return
        run = self.runs[-1] if self.open else None
        if run is not None and (follows or end - run.last == self.period):
            run.last = end
            run.rows += 1
            if run.events[-1] is not event:
                run.events.append(event)
        else:
            self.runs.append(_Run(end, end, 1, [event]))
            self.open = True

    def add_rows(
        self, start: datetime, rows: Sequence[tuple[int, bool]], event: EngineEvent
    ) -> None:
        """One event's rows at once, as :meth:`add` row by row: ``rows`` are (offset, kept) in
        list order, row ``offset`` ending ``offset + 1`` periods after ``start``, and a row
        follows the one before it when their offsets are consecutive.

        A wearable's hour holds sixty minutes, each read by every replayed memory: the rows
        are taken a piece without a missing row at a time (:meth:`add_flags`), usually the
        whole hour.
        """
        first = 0
        for index in range(1, len(rows) + 1):
            if index == len(rows) or rows[index][0] != rows[index - 1][0] + 1:
                # A row missing before ``index``: the rows up to it are one piece. The next
                # piece's first row never goes on a run of this piece (it ends two periods or
                # more after that run's last row), as a row that does not follow never does.
                piece = rows[first:index]
                self.add_flags(start, piece[0][0], [kept for _, kept in piece], event)
                first = index

    def add_flags(
        self, start: datetime, first: int, flags: Sequence[bool], event: EngineEvent
    ) -> None:
        """:meth:`add_rows` of rows at offsets ``first``, ``first + 1``, ... with no row missing
        between them, each kept or not by ``flags``: taken a stretch of equal flags at a time
        (an hour of minutes holds a few), not row by row. A run extended here keeps its reach
        as an offset, and its end time is made once, when it stops growing."""
        period = self.period
        run = self.runs[-1] if self.open else None
        reached = -1  # as in add_rows: the offset ``run`` reached in this list
        offset = first
        for kept, same in groupby(flags):
            count = len(list(same))
            if not kept:
                if run is not None and reached >= 0:
                    run.last = start + period * (reached + 1)
                run, reached = None, -1
            else:
                # The stretch's first row follows the row before it in this list (the row before
                # was not kept, so ``run`` is None there), or goes on a run from before when it
                # ends a period after that run's last row.
                if run is not None and (
                    offset > first
                    or (reached < 0 and start + period * (offset + 1) - run.last == period)
                ):
                    run.rows += count
                    if run.events[-1] is not event:
                        run.events.append(event)
                else:
                    if run is not None and reached >= 0:
                        run.last = start + period * (reached + 1)
                    end = start + period * (offset + 1)
                    run = _Run(end, end, count, [event])
                    self.runs.append(run)
                reached = offset + count - 1
            offset += count
        if run is not None and reached >= 0:
            run.last = start + period * (reached + 1)
        self.open = run is not None

    def stretches(
        self, kind: str, at_least: timedelta, source: str | None, resolution: str
    ) -> list[Segment]:
        out = []
        for index, run in enumerate(self.runs):
            if run.rows * self.period < at_least:
                continue
            held = self.made.get(index)
            if held is None or held[0] != run.rows:
                held = self.made[index] = (run.rows, _stretch(kind, run, source, resolution))
            out.append(held[1])
        return out


@dataclass
class SportsDay:
    """One day's sports segments, extended event by event (module docstring)."""

    zone: ZoneInfo
    decision_points: list[Segment] = field(default_factory=list)
    active_hours: list[Segment] = field(default_factory=list)
    # The (source, resolution) of each stream seen today, an event naming it being enough
    # (segments() reads only which there are)
    streams: dict[tuple[str | None, str], None] = field(default_factory=dict)
    # (source, resolution) -> its walks' and its sedentary stretches' runs, kept as rows arrive
    brisk: dict[tuple[str | None, str], _Runs] = field(default_factory=dict)
    still: dict[tuple[str | None, str], _Runs] = field(default_factory=dict)
    midnight: datetime | None = None
    started: Segment | None = None
    fed: int = 0

    def feed(self, events: Sequence[EngineEvent]) -> None:
        for event in events:
            self.fed += 1
            if self.midnight is None:
                local = event.at.astimezone(self.zone)
                self.midnight = datetime.combine(local.date(), time(), tzinfo=self.zone)
            kind = event.payload.get("type")
            attributes = _attributes(event)
            if kind == "decision_point":
                self.decision_points.append(_decision_point(event))
            elif kind == WIDE_TYPE and isinstance(attributes.get("minutes"), list):
                self._minutes(event, attributes)
            elif kind == "steps":
                self._row(event, attributes)

    def _minutes(self, event: EngineEvent, attributes: Mapping[str, Any]) -> None:
        minutes = attributes["minutes"]
        source = attributes.get("source")
        key = (source if isinstance(source, str) else None, "minute")
        start = event.at - MINUTE * len(minutes)
        assert self.midnight is not None
        # Minutes ending before midnight + 1 belong to the day before: the first `skip` of them.
        before_midnight = self.midnight - start
        skip = -(-before_midnight // MINUTE) if before_midnight > ZERO else 0
        # Up to 1,440 rows a day: a bool, a missing or a NaN count is no row of steps.
        rows = [
            (offset, value)
            for offset, value in enumerate(minutes)
            if offset >= skip and (type(value) is int or type(value) is float) and value == value
        ]
        self.streams.setdefault(key, None)
        brisk = self.brisk.setdefault(key, _Runs(MINUTE))
        still = self.still.setdefault(key, _Runs(MINUTE))
        if rows and rows[-1][0] - rows[0][0] == len(rows) - 1:  # no minute missing between
            counts = [v for _, v in rows]
            brisk.add_flags(start, rows[0][0], [v >= BOUT_MIN_STEPS_PER_MIN for v in counts], event)
            still.add_flags(start, rows[0][0], [v < SEDENTARY_STEPS_PER_MIN for v in counts], event)
        else:
            brisk.add_rows(start, [(o, v >= BOUT_MIN_STEPS_PER_MIN) for o, v in rows], event)
            still.add_rows(start, [(o, v < SEDENTARY_STEPS_PER_MIN) for o, v in rows], event)
        if self.started is None:
            for offset, value in rows:
                if value >= UP_STEPS_PER_MIN:
                    self._maybe_start(start + MINUTE * (offset + 1), value, MINUTE, event, "minute")
                    if self.started is not None:
                        break

    def _row(self, event: EngineEvent, attributes: Mapping[str, Any]) -> None:
        resolution = attributes.get("resolution")
        steps = _count(event.payload.get("value"))
        if resolution not in RESOLUTIONS or steps is None:
            return
        source = attributes.get("source")
        key = (source if isinstance(source, str) else None, str(resolution))
        period = RESOLUTIONS[key[1]]
        self.streams.setdefault(key, None)
        if key[1] == "minute":
            brisk = self.brisk.get(key) or self.brisk.setdefault(key, _Runs(period))
            brisk.add(event.at, event, steps >= BOUT_MIN_STEPS_PER_MIN)
        still = self.still.get(key) or self.still.setdefault(key, _Runs(period))
        still.add(event.at, event, steps < SEDENTARY_STEPS_PER_MIN * (period / MINUTE))
        self._maybe_start(event.at, steps, period, event, str(resolution))
        if resolution == "hour" and steps >= ACTIVE_HOUR_STEPS:
            facts = (
                Fact("", "observed", ("type",), "steps", event.at),
                Fact("", "observed", ("resolution",), "hour", event.at),
            )
            self.active_hours.append(Segment(event.at, event.at, facts, (event.id,), "active_hour"))

    def _maybe_start(
        self, end: datetime, steps: float, period: timedelta, event: EngineEvent, resolution: str
    ) -> None:
        if self.started is not None or steps < UP_STEPS_PER_MIN * (period / MINUTE):
            return
        if (end - period).astimezone(self.zone).time() < DAY_STARTS:
            return
        facts = (
            Fact("", "observed", ("type",), event.payload["type"], end),
            Fact("", "observed", ("resolution",), resolution, end),
        )
        start = min(end, event.at)
        self.started = Segment(start, max(end, event.at), facts, (event.id,), "day_start")

    def segments(self) -> list[Segment]:
        out = [*self.decision_points, *self.active_hours]
        if self.started is not None:
            out.append(self.started)
        for key in sorted(self.streams, key=str):
            source, resolution = key
            if resolution == "minute":
                out += self.brisk[key].stretches("step_bout", BOUT_MIN_DURATION, source, resolution)
            out += self.still[key].stretches(
                "sedentary", SEDENTARY_MIN_DURATION, source, resolution
            )
        return out


def _decision_point(event: EngineEvent) -> Segment:
    facts = [Fact("", "observed", ("type",), "decision_point", event.at)]
    attributes = _attributes(event)
    for key in CONTEXT_KEYS:
        value = attributes.get(key)
        if isinstance(value, str | int | float):  # bool is an int; None is left out
            facts.append(Fact("", "context_before", (key,), value, event.at))
    return Segment(event.at, event.at, tuple(facts), (event.id,), kind="decision_point")


def _stretch(kind: str, run: _Run, source: str | None, resolution: str) -> Segment:
    events = sorted({e.id: e for e in run.events}.values(), key=lambda e: (e.at, e.id))
    first = events[0]
    # A minute's row is the hour's event stamped later: the stretch reaches to what it cites.
    # No row ends after its event is stamped, so the last event ends it.
    start = min(run.first, first.at)
    end = events[-1].at
    began = run.first  # an hourly row ends when its event is stamped
    kind_of = first.payload.get("type")
    facts = [Fact("", "observed", ("type",), kind_of, began)]
    if source is not None:
        facts.append(Fact("", "observed", ("source",), source, began))
    facts.append(Fact("", "observed", ("resolution",), resolution, began))
    citations = tuple(event.id for event in events)
    return Segment(start, end, tuple(facts), citations, kind=kind)


def segments(events: Sequence[EngineEvent], zone: ZoneInfo) -> list[Segment]:
    """The sports segments of one day's events, sorted by (time, id) (module docstring)."""
    day = SportsDay(zone)
    day.feed(events)
    return day.segments()
