"""Source validation of a trajectory segment (ProactMem: source-validated trajectories).

A segment is kept only when every fact leaf it claims is grounded in an event it cites; one bad
citation or one ungrounded leaf rejects the whole segment, with a sentence saying why.

The rule leaves some choices open; these are the ones made here:

* **Entity.** ``events_by_id`` holds the events of the segment's entity only (the caller scopes
  it), so an id of another entity's event is an *unknown* citation.
* **Completed day.** The caller passes only completed local days; this module has no clock.
* **Segment times.** ``start`` and ``end`` must be aware, ``start <= end``, and both fall on
  ``day`` in ``zone``; otherwise the segment is rejected before any citation is looked at.
* **Interval.** A cited event must satisfy ``start <= event.at <= end``: inclusive at both ends,
  so an event at the exact close of a segment still grounds it.
* **Local day.** A cited event's ``at`` converted to ``zone`` must fall on ``day``; this is
  checked (and reported) before the interval, as it is the more specific reason.
* **Empty segments.** No citations, or no facts, rejects the segment. A citation listed twice
  counts once.
* **Facts.** Fact ids must be unique within the segment and paths non-empty; a fact's ``at``, when
  given, must be aware and inside the segment's interval (records.py: "inside the segment").
* **Suffix path.** A fact at path ``F`` is grounded by a payload leaf at path ``P`` when ``F == P``
  or ``F`` is a proper suffix of ``P``, component by component with exact (case-sensitive)
  names: ``("state",)`` matches ``("pull_request", "state")``. Not the reverse: a fact may not
  claim more structure than the event has.
* **Lists.** Items of a list are leaves at the list's own path, the index dropped:
  ``{"labels": ["bug", "ui"]}`` has the leaves ``(("labels",), "bug")`` and
  ``(("labels",), "ui")``; dicts inside lists continue the path
  (``[{"name": "bug"}]`` gives ``(("labels", "name"), "bug")``); nested lists flatten.
  Empty lists and dicts have no leaves; values of any other type (and non-string keys) are not
  leaves and are skipped, since stored payloads are JSON.
* **Canonical values.** Strings are NFC-normalised, trimmed and case-folded. Numbers compare
  exactly with ints and floats unified (``1 == 1.0``, ``-0.0 == 0``, ``0.1 + 0.2 != 0.3``); NaN
  and the infinities ground nothing. Booleans are not numbers (``True != 1``). ``None`` equals
  only ``None``. A string never equals a number or a boolean (``"1" != 1``).
* **Times to the minute.** A string that, trimmed, starts ``YYYY-MM-DD[T ]HH:MM`` and parses with
  :meth:`datetime.fromisoformat` is a time: an aware one compares by its UTC instant floored to
  the minute (``09:15:59Z == 09:15:00Z == 11:15:30+02:00``), a naive one by its wall clock
  floored to the minute, and a naive time never equals an aware one (fail closed: their zone is
  unknown). Date-only strings, bare times of day and unparseable strings compare as strings.
* **Which grounding.** When several leaves ground a fact, the earliest cited event (by ``at``,
  then id) wins, and within it the first matching leaf in payload order.
* **Which problem.** Citations are checked in ascending id order and facts in ascending id
  order, so the verdict, reason included, does not depend on the order they are listed in.
* **Rejected segments** carry no groundings (fail closed: nothing of them may be used).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.canonical import Canonical, canonical
from memory.engine.records import EngineEvent, Fact, Path, Scalar, Segment

# At most this many differing values are quoted when a fact's path exists but its value does not.
_QUOTED_VALUES = 3


@dataclass(frozen=True, slots=True)
class Grounding:
    """Where a fact was found: the cited event and the payload path of the matching leaf."""

    event_id: int
    path: Path


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of validating one segment.

    ``reason`` names the first problem when rejected and is None when accepted; ``grounding``
    maps every fact id to where it was found, and is empty when rejected.
    """

    accepted: bool
    reason: str | None = None
    grounding: Mapping[str, Grounding] = field(default_factory=lambda: MappingProxyType({}))


def leaves(payload: Mapping[str, Any]) -> Iterator[tuple[Path, Scalar]]:
    """Yield every scalar leaf of a payload with its field path, in payload order.

    List indices are not path components: a list's items are leaves at the list's path.
    """
    yield from _walk(payload, ())


def _walk(value: object, path: Path) -> Iterator[tuple[Path, Scalar]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                yield from _walk(item, (*path, key))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _walk(item, path)
    elif path and (value is None or isinstance(value, str | int | float)):  # bool is an int
        yield path, value


def _is_aware(moment: datetime) -> bool:
    return moment.tzinfo is not None and moment.utcoffset() is not None


def _show_path(path: Path) -> str:
    return ".".join(path) if path else "(empty path)"


def _reject(reason: str) -> Verdict:
    return Verdict(accepted=False, reason=reason)


IndexCache = dict[int, dict[Canonical, list[Path]]]


def validate_segment(
    segment: Segment,
    events_by_id: Mapping[int, EngineEvent],
    day: date,
    zone: ZoneInfo,
    *,
    index_cache: IndexCache | None = None,
) -> Verdict:
    """Accept ``segment`` only if every fact is grounded in a valid citation (module docstring).

    ``index_cache`` keeps each event's leaf index by event id across calls: events never change,
    and a day validated again as it grows re-reads mostly the same events.
    """
    problem = _segment_problem(segment, day, zone)
    if problem is None:
        problem = _fact_problem(segment)
    if problem is not None:
        return _reject(problem)

    cited: list[EngineEvent] = []
    for event_id in sorted(set(segment.citations)):
        event = events_by_id.get(event_id)
        problem = _citation_problem(event_id, event, segment, day, zone)
        if problem is not None:
            return _reject(problem)
        assert event is not None  # _citation_problem reports a missing event
        cited.append(event)
    cited.sort(key=lambda event: (event.at, event.id))

    indexed = _Indexed(cited, {} if index_cache is None else index_cache)
    grounding: dict[str, Grounding] = {}
    for fact in sorted(segment.facts, key=lambda fact: fact.id):
        found = _ground(fact, indexed)
        if found is None:
            return _reject(_ungrounded_reason(fact, indexed))
        grounding[fact.id] = found
    return Verdict(accepted=True, reason=None, grounding=MappingProxyType(grounding))


@dataclass(frozen=True, slots=True)
class Accepted:
    """An accepted segment, its verdict, and the latest of its cited events by (time, id)."""

    segment: Segment
    verdict: Verdict
    latest: tuple[datetime, int]


def accepted(
    segment: Segment, verdict: Verdict, events_by_id: Mapping[int, EngineEvent]
) -> Accepted | None:
    """``segment`` as an :class:`Accepted` one to extend (:func:`validate_extension`); None
    when the verdict rejected it."""
    if not verdict.accepted:
        return None
    latest = max((events_by_id[i].at, i) for i in segment.citations)
    return Accepted(segment, verdict, latest)


def validate_extension(
    prior: Accepted,
    segment: Segment,
    events_by_id: Mapping[int, EngineEvent],
    day: date,
    zone: ZoneInfo,
) -> Accepted | None:
    """``segment``'s verdict where it only extends ``prior`` (an open day's stretch that grew
    by later events): :func:`validate_segment`'s, found by checking the new citations alone.

    It extends the prior segment when it has the same kind, start and facts, ends no earlier,
    and cites the same events followed by events later in (time, id) than every one of them.
    Then every earlier citation still lies inside the interval (the same start, an end no
    earlier) and on the day; each fact still lies inside it; and each fact's grounding, the
    earliest cited event holding it, is still the one found before, as every new event comes
    after it. So the verdict is the prior one once each new citation passes its own checks.
    None where the segment is no such extension or a new citation has a problem: the whole
    validation then gives the verdict, worded as ever.
    """
    before = prior.segment
    n = len(before.citations)
    if (
        segment.kind != before.kind
        or segment.start != before.start
        or segment.end < before.end
        or len(segment.citations) <= n
        or segment.citations[:n] != before.citations
        or segment.facts != before.facts
        or _segment_problem(segment, day, zone) is not None
    ):
        return None
    latest = prior.latest
    for event_id in segment.citations[n:]:
        event = events_by_id.get(event_id)
        if _citation_problem(event_id, event, segment, day, zone) is not None:
            return None
        assert event is not None  # _citation_problem reports a missing event
        order = (event.at, event_id)
        if order <= latest:
            return None
        latest = order
    return Accepted(segment, prior.verdict, latest)


def _segment_problem(segment: Segment, day: date, zone: ZoneInfo) -> str | None:
    if not (_is_aware(segment.start) and _is_aware(segment.end)):
        return "The segment's start and end must be aware datetimes (with a time zone)."
    if segment.start > segment.end:
        return (
            f"The segment starts at {segment.start.isoformat()}, "
            f"after its end at {segment.end.isoformat()}."
        )
    for name, moment in (("start", segment.start), ("end", segment.end)):
        local = moment.astimezone(zone)
        if local.date() != day:
            return (
                f"The segment's {name} {local.isoformat()} is not on the local day "
                f"{day.isoformat()} in {zone.key}."
            )
    if not segment.citations:
        return "The segment cites no events, so none of its facts can be grounded."
    if not segment.facts:
        return "The segment has no facts; there is nothing to validate."
    return None


def _fact_problem(segment: Segment) -> str | None:
    seen: set[str] = set()
    for fact in sorted(segment.facts, key=lambda fact: fact.id):
        if fact.id in seen:
            return f"Fact id {fact.id!r} appears more than once in the segment."
        seen.add(fact.id)
        if not fact.path:
            return f"Fact {fact.id!r} has an empty field path, so it cannot be grounded."
        if fact.at is not None:
            if not _is_aware(fact.at):
                return f"Fact {fact.id!r} has a naive time {fact.at.isoformat()}."
            if not segment.start <= fact.at <= segment.end:
                return (
                    f"Fact {fact.id!r} is dated {fact.at.isoformat()}, outside the segment's "
                    f"interval [{segment.start.isoformat()}, {segment.end.isoformat()}]."
                )
    return None


def _citation_problem(
    event_id: int, event: EngineEvent | None, segment: Segment, day: date, zone: ZoneInfo
) -> str | None:
    if event is None:
        return f"Citation {event_id} is unknown: no event with that id for this entity."
    if not _is_aware(event.at):
        return f"Cited event {event_id} has a naive time {event.at.isoformat()}."
    local = event.at.astimezone(zone)
    if local.date() != day:
        return (
            f"Cited event {event_id} at {local.isoformat()} is not of the local day "
            f"{day.isoformat()} in {zone.key}."
        )
    if not segment.start <= event.at <= segment.end:
        return (
            f"Cited event {event_id} at {event.at.isoformat()} is outside the segment's "
            f"interval [{segment.start.isoformat()}, {segment.end.isoformat()}]."
        )
    return None


class _Indexed:
    """The cited events in (time, id) order, each with its leaf index (:func:`_index`), built
    the first time a fact's search reaches the event.

    A fact is grounded by the first cited event that holds it, so a search stops there: a
    stay in a room cites every motion event of the stay, and its facts are usually all held by
    the first. Indexing only what a search reaches gives the same groundings as indexing every
    cited event first, at a fraction of the cost on a dense home.
    """

    __slots__ = ("events", "cache")

    def __init__(self, events: Sequence[EngineEvent], cache: IndexCache) -> None:
        self.events = events
        self.cache = cache

    def __iter__(self) -> Iterator[tuple[EngineEvent, dict[Canonical, list[Path]]]]:
        cache = self.cache
        for event in self.events:
            index = cache.get(event.id)
            if index is None:
                index = cache[event.id] = _index(event)
            yield event, index


def _index(event: EngineEvent) -> dict[Canonical, list[Path]]:
    """Canonical value -> the payload paths holding it, in payload order, each path once.

    The leaves of :func:`leaves`, walked without a generator per level: a wearable's hour
    holds sixty minute counts at one path, and every cited event of a day is indexed.
    """
    index: dict[Canonical, list[Path]] = {}
    _index_into(event.payload, (), index)
    return index


def _index_into(value: object, path: Path, index: dict[Canonical, list[Path]]) -> None:
    # The exact types of a JSON payload are told by one type test each; other types take the
    # abstract checks. Leaves inside a mapping or a list are noted without a call each (an hour
    # of a wearable holds sixty minute counts; a desktop snapshot a score of fields).
    kind = type(value)
    if kind in _SCALARS:
        if path:
            _note(value, path, index)
    elif type(value) is dict or isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                child = (*path, key)
                if type(item) in _SCALARS:
                    _note(item, child, index)
                else:
                    _index_into(item, child, index)
    elif type(value) is list or isinstance(value, list | tuple):
        for item in value:
            if type(item) not in _SCALARS:
                _index_into(item, path, index)
            elif path:
                # _note inlined: a list's items are its leaves, sixty to a wearable's hour
                key = canonical(item)
                if key is None:
                    continue
                found = index.get(key)
                if found is None:
                    index[key] = [path]
                elif found[-1] != path:
                    found.append(path)
    elif path and (value is None or isinstance(value, str | int | float)):  # bool is an int
        _note(value, path, index)


# The leaf types of a JSON payload (bool is an int, but its own type here).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _note(value: Any, path: Path, index: dict[Canonical, list[Path]]) -> None:
    key = canonical(value)
    if key is not None:
        paths = index.get(key)
        if paths is None:
            index[key] = [path]
        elif paths[-1] != path:  # a list's equal items: the path once is what grounds
            paths.append(path)


def _suffix_of(fact_path: Path, payload_path: Path) -> bool:
    n = len(fact_path)
    return 0 < n <= len(payload_path) and payload_path[-n:] == fact_path


def _ground(
    fact: Fact, indexed: Iterable[tuple[EngineEvent, dict[Canonical, list[Path]]]]
) -> Grounding | None:
    key = canonical(fact.value)
    if key is None:
        return None
    for event, index in indexed:
        for path in index.get(key, ()):
            if _suffix_of(fact.path, path):
                return Grounding(event_id=event.id, path=path)
    return None


def _ungrounded_reason(
    fact: Fact, indexed: Iterable[tuple[EngineEvent, dict[Canonical, list[Path]]]]
) -> str:
    ids = ", ".join(str(event.id) for event, _ in indexed)
    reason = (
        f"Fact {fact.id!r} ({_show_path(fact.path)} = {fact.value!r}) is grounded by no cited "
        f"event (cited: {ids})."
    )
    # Quoting what the cited events do hold at that path tells an auditor whether the path or
    # the value was wrong.
    held: list[str] = []
    for event, _ in indexed:
        for path, value in leaves(event.payload):
            shown = repr(value)
            if _suffix_of(fact.path, path) and shown not in held:
                held.append(shown)
    if held:
        more = ", ..." if len(held) > _QUOTED_VALUES else ""
        reason += f" At that path they hold {', '.join(held[:_QUOTED_VALUES])}{more}."
    else:
        reason += " No cited event has that path."
    return reason
