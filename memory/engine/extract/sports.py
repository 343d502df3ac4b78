"""Sports trajectories: decision points, step bouts and sedentary stretches (issue 6).

Reads the payloads the HeartSteps and Fitabase importers write (``type`` ``decision_point`` or
``steps``; ``attributes.resolution`` ``minute`` or ``hour``; ``attributes.source`` for HeartSteps
minutes: ``jawbone`` or ``google_fit``). Segment kinds:

* ``decision_point``: one per decision-point event, interval ``[at, at]``. Facts: ``type``
  (observed) and, as ``context_before``, each of ``available``, ``in_transit``, ``snoozed``,
  ``connected``, ``recognized_activity`` and ``location`` the event carries. The event's
  ``value`` (whether the study sent a suggestion) is the study's own intervention, not the
  situation, so it is no fact.
* ``step_bout``: a maximal run of *consecutive* minute rows of one source, each with at least
  :data:`BOUT_MIN_STEPS_PER_MIN` steps, covering at least :data:`BOUT_MIN_DURATION`. It cites
  every minute of the run; facts ``type`` = ``steps`` and ``source`` (when the rows have one),
  both at the run's first row. Hourly rows never make a bout: an hour's total cannot show a
  minute-scale bout.
* ``sedentary``: a maximal run of consecutive rows of one source and resolution (minute or
  hour), each with fewer steps than :data:`SEDENTARY_STEPS_PER_MIN` times its minutes, covering
  at least :data:`SEDENTARY_MIN_DURATION`. Facts ``type``, ``source`` (when present) and
  ``resolution``.

Rows are *consecutive* when the later one is stamped exactly one resolution (a minute, an hour)
after the earlier one; anything else (a missing row, a duplicate) ends the run. Uncovered time
is unknown, never inactivity: only explicit zero or low rows make a sedentary stretch, so a
source that writes no zero rows (only minutes with steps) never shows one, and a sedentary
stretch never spans a missing row. A run covers ``n`` rows times the resolution; its segment's
interval is from its first row's stamp to its last's (the rows are stamped when their period
ends, so the interval starts one period after the run's real start). Minutes are not facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
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
# Our choice, after HeartSteps V2's anti-sedentary trigger (fewer than 150 steps in the last
# 40 minutes): every row of the stretch stays below that average rate, 3.75 steps a minute
# (at most 3 in a minute row, at most 224 in an hour row).
SEDENTARY_STEPS_PER_MIN = 150 / 40
SEDENTARY_MIN_DURATION = timedelta(minutes=40)

RESOLUTIONS: Mapping[str, timedelta] = MappingProxyType(
    {"minute": timedelta(minutes=1), "hour": timedelta(hours=1)}
)
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
        "step_bout": (("type",), ("source",)),
        "sedentary": (("type",), ("source",), ("resolution",)),
    }
)


def _attributes(event: EngineEvent) -> Mapping[str, Any]:
    attributes = event.payload.get("attributes")
    return attributes if isinstance(attributes, Mapping) else {}


def _steps(event: EngineEvent) -> int | float | None:
    value = event.payload.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None  # a bool, a missing or a NaN count is no row of steps
    return value


def segments(events: Sequence[EngineEvent], zone: ZoneInfo) -> list[Segment]:
    """The sports segments of one day's events, sorted by (time, id) (module docstring)."""
    out: list[Segment] = []
    # (source, resolution) -> that stream's step rows, in time order
    streams: dict[tuple[str | None, str], list[tuple[EngineEvent, int | float]]] = {}
    for event in events:
        kind = event.payload.get("type")
        if kind == "decision_point":
            out.append(_decision_point(event))
        elif kind == "steps":
            attributes = _attributes(event)
            resolution = attributes.get("resolution")
            steps = _steps(event)
            if resolution in RESOLUTIONS and steps is not None:
                source = attributes.get("source")
                key = (source if isinstance(source, str) else None, str(resolution))
                streams.setdefault(key, []).append((event, steps))
    for (source, resolution), rows in sorted(streams.items(), key=lambda item: str(item[0])):
        period = RESOLUTIONS[resolution]
        if resolution == "minute":
            brisk = [steps >= BOUT_MIN_STEPS_PER_MIN for _, steps in rows]
            for run in _runs(rows, brisk, period):
                if len(run) * period >= BOUT_MIN_DURATION:
                    out.append(_stretch("step_bout", run, source, None))
        low = SEDENTARY_STEPS_PER_MIN * (period / timedelta(minutes=1))
        for run in _runs(rows, [steps < low for _, steps in rows], period):
            if len(run) * period >= SEDENTARY_MIN_DURATION:
                out.append(_stretch("sedentary", run, source, resolution))
    return out


def _decision_point(event: EngineEvent) -> Segment:
    facts = [Fact("", "observed", ("type",), "decision_point", event.at)]
    attributes = _attributes(event)
    for key in CONTEXT_KEYS:
        value = attributes.get(key)
        if isinstance(value, str | int | float):  # bool is an int; None is left out
            facts.append(Fact("", "context_before", (key,), value, event.at))
    return Segment(event.at, event.at, tuple(facts), (event.id,), kind="decision_point")


def _runs(
    rows: Sequence[tuple[EngineEvent, int | float]], keep: Sequence[bool], period: timedelta
) -> list[list[EngineEvent]]:
    """Maximal runs of consecutive rows (one period apart) that are all kept."""
    runs: list[list[EngineEvent]] = []
    for (event, _), kept in zip(rows, keep, strict=True):
        if not kept:
            runs.append([])  # closes the run; empty runs are dropped below
        elif runs and runs[-1] and event.at - runs[-1][-1].at == period:
            runs[-1].append(event)
        else:
            runs.append([event])
    return [run for run in runs if run]


def _stretch(
    kind: str, run: Sequence[EngineEvent], source: str | None, resolution: str | None
) -> Segment:
    first = run[0]
    facts = [Fact("", "observed", ("type",), "steps", first.at)]
    if source is not None:
        facts.append(Fact("", "observed", ("source",), source, first.at))
    if resolution is not None:
        facts.append(Fact("", "observed", ("resolution",), resolution, first.at))
    citations = tuple(event.id for event in run)
    return Segment(first.at, run[-1].at, tuple(facts), citations, kind=kind)
