"""Desktop trajectories: the compiled activity frames and the day's first and last activity.

A person's desktop day reaches ProactMem as its compiled document (activity frames §4): the
trajectory layer *is* the frames, each cut into one segment that cites the snapshot rows it was
compiled from. Segment kinds:

* ``frame``: one per frame of the day's document. Interval: the frame's ``start`` to ``end``,
  widened to the times of its cited rows (the document writes whole seconds, a row may fall a
  fraction later) and cut to the local day (a frame's credited end may pass midnight). It
  cites the frame's ``evidence.rows`` that are events of this day; ``source`` is the frame id.
  Facts: ``app`` (the raw app name of the first cited row the compiler normalises to the
  frame's app), ``site``, and ``page.kind`` / ``page.entity`` of the frame's most frequent
  page, each when a cited row's grounding view holds it. The frame's minutes, input counts and
  interruptions are aggregates, no leaf of any event, so they are no facts; ``source`` points
  an auditor to them.
* ``first_activity`` / ``last_activity``: the day's first and last snapshot, lock screens left
  out (the compiler's own test, as frames leave them out), interval ``[at, at]``; facts ``app``
  and ``site`` (when the row has a web URL).

:func:`grounding_view` adds to a snapshot what its own URL says, with the very functions frames
are compiled with: ``site`` (``compiler.entities.site_of``) and ``page`` ``{kind, entity}``
(``compiler.entities.parse_url``). Nothing in a view comes from another event, so a fact
grounded in it is still grounded in that one event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from compiler.document import expand_runs
from compiler.entities import parse_url, site_of
from compiler.segment import is_lock_app, normalise_app
from memory.engine.records import EngineEvent, Fact, Path, Segment

VOCABULARY: Mapping[str, tuple[Path, ...]] = MappingProxyType(
    {
        "frame": (("app",), ("site",), ("page", "kind"), ("page", "entity")),
        "first_activity": (("app",), ("site",)),
        "last_activity": (("app",), ("site",)),
    }
)


# An open day is extracted again at every decision: each event's view and each frame's segment
# is derived once. Events and frames are never changed once made; the caches hold the object
# itself to tell a reused id apart, and are emptied when full.
_VIEWS: dict[int, tuple[EngineEvent, EngineEvent]] = {}
_FRAMES: dict[tuple[int, date, str], tuple[Mapping[str, Any], Segment | None]] = {}
_CACHED_MAX = 200_000


def grounding_view(event: EngineEvent) -> EngineEvent:
    """A snapshot with ``site`` and ``page`` derived from its own URL; other events as they are."""
    if event.kind != "snapshot":
        return event
    held = _VIEWS.get(id(event))
    if held is not None and held[0] is event:
        return held[1]
    view = _view(event)
    if len(_VIEWS) >= _CACHED_MAX:
        _VIEWS.clear()
    _VIEWS[id(event)] = (event, view)
    return view


def _view(event: EngineEvent) -> EngineEvent:
    url = event.payload.get("url")
    if not isinstance(url, str):
        return event
    derived: dict[str, Any] = {}
    site = site_of(url)
    if site is not None:
        derived["site"] = site
    page = parse_url(url)
    if page is not None:
        derived["page"] = {"kind": page.kind, "entity": page.entity}
    if not derived:
        return event
    return replace(event, payload={**event.payload, **derived})


@dataclass
class DesktopDay:
    """One day's desktop events seen so far: each one's grounding view, and the first and last
    activity; the frames (a compiled document's) are given with each call for segments."""

    zone: ZoneInfo
    views: dict[int, EngineEvent] = field(default_factory=dict)
    first: EngineEvent | None = None
    last: EngineEvent | None = None
    fed: int = 0

    def feed(self, events: Sequence[EngineEvent]) -> None:
        for event in events:
            self.fed += 1
            view = grounding_view(event)
            self.views[event.id] = view
            app = view.payload.get("app")
            if (
                view.kind == "snapshot"
                and isinstance(app, str)
                and not is_lock_app(normalise_app(app))
            ):
                if self.first is None:
                    self.first = view
                self.last = view

    def segments(self, day: date, frames: Sequence[Mapping[str, Any]]) -> list[Segment]:
        views = self.views
        out = [
            segment
            for frame in frames
            if (segment := _frame_once(frame, views, day, self.zone)) is not None
        ]
        if self.first is not None and self.last is not None:
            out.append(_moment("first_activity", self.first))
            out.append(_moment("last_activity", self.last))
        return out


def _day_bounds(day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(), tzinfo=zone).astimezone(UTC)
    after = datetime.combine(day + timedelta(days=1), time(), tzinfo=zone).astimezone(UTC)
    return start.astimezone(zone), (after - timedelta(microseconds=1)).astimezone(zone)


def _when(frame: Mapping[str, Any], key: str) -> datetime:
    text = frame.get(key)
    moment = None
    if isinstance(text, str):
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            moment = None
    if moment is None or moment.utcoffset() is None:
        raise ValueError(
            f"Frame {frame.get('id')!r} has {key} {text!r}, not an ISO 8601 time with an "
            "offset; pass the frames of a compiled day document."
        )
    return moment


def _frame_once(
    frame: Mapping[str, Any], views: Mapping[int, EngineEvent], day: date, zone: ZoneInfo
) -> Segment | None:
    """``_frame``, derived once per frame whose rows are all among ``views`` (a frame of an
    open day is handed over only then; one with rows still missing is derived each time)."""
    key = (id(frame), day, zone.key)
    held = _FRAMES.get(key)
    if held is not None and held[0] is frame:
        return held[1]
    segment = _frame(frame, views, day, zone)
    evidence = frame.get("evidence")
    rows = evidence.get("rows") if isinstance(evidence, Mapping) else None
    if isinstance(rows, str) and all(row in views for row in expand_runs(rows)):
        if len(_FRAMES) >= _CACHED_MAX:
            _FRAMES.clear()
        _FRAMES[key] = (frame, segment)
    return segment


def _frame(
    frame: Mapping[str, Any], views: Mapping[int, EngineEvent], day: date, zone: ZoneInfo
) -> Segment | None:
    evidence = frame.get("evidence")
    rows = evidence.get("rows") if isinstance(evidence, Mapping) else None
    if not isinstance(rows, str):
        raise ValueError(
            f"Frame {frame.get('id')!r} has no evidence.rows; pass the frames of a compiled "
            "day document."
        )
    cited = sorted(
        (views[row] for row in set(expand_runs(rows)) if row in views),
        key=lambda event: (event.at, event.id),
    )
    if not cited:
        return None  # every row of the frame lies on another day
    first_of_day, last_of_day = _day_bounds(day, zone)
    start = max(min(_when(frame, "start"), cited[0].at), first_of_day)
    end = min(max(_when(frame, "end"), cited[-1].at), last_of_day)
    facts: list[Fact] = []
    app = frame.get("app")
    for event in cited:
        raw = event.payload.get("app")
        if isinstance(raw, str) and normalise_app(raw) == app:
            facts.append(Fact("", "observed", ("app",), raw, event.at))
            break
    site = frame.get("site")
    holder = _first(cited, lambda payload: payload.get("site") == site)
    if isinstance(site, str) and holder is not None:
        facts.append(Fact("", "observed", ("site",), site, holder.at))
    pages = frame.get("pages")
    top = pages[0] if isinstance(pages, list) and pages else None
    if isinstance(top, Mapping):
        page = {"kind": top.get("kind"), "entity": top.get("entity")}
        holder = _first(cited, lambda payload: payload.get("page") == page)
        if holder is not None and isinstance(page["kind"], str) and isinstance(page["entity"], str):
            facts.append(Fact("", "observed", ("page", "kind"), page["kind"], holder.at))
            facts.append(Fact("", "observed", ("page", "entity"), page["entity"], holder.at))
    if not facts:
        return None
    return Segment(
        start.astimezone(zone),
        end.astimezone(zone),
        tuple(facts),
        tuple(event.id for event in cited),
        kind="frame",
        source=str(frame.get("id", "")),
    )


def _first(
    events: Iterable[EngineEvent], test: Callable[[Mapping[str, Any]], bool]
) -> EngineEvent | None:
    return next((event for event in events if test(event.payload)), None)


def _moment(kind: str, view: EngineEvent) -> Segment:
    facts = [Fact("", "observed", ("app",), view.payload["app"], view.at)]
    site = view.payload.get("site")
    if isinstance(site, str):
        facts.append(Fact("", "observed", ("site",), site, view.at))
    return Segment(view.at, view.at, tuple(facts), (view.id,), kind=kind)
