"""Closing a local day: extract its trajectory, validate it, and advance the regularities.

The pure half of ProactMem's day close (ARCHITECTURE.md, "Remember"): the Django side loads a
day's events, calls :func:`close_day` and :func:`advance_regularities`, and stores what they
return; the in-memory stream (stream.py) calls the same two functions, so a benchmark run and the
service agree.

Choices made here:

* **Observations.** Each fact of an accepted segment becomes one observation at the path
  ``(segment.kind, *fact.path)``, placed at the fact's ``at`` (or the segment's start) in local
  time, with the fact reference ``fact:DAY/SEGMENT/FACT`` as its id. Rejected segments give
  nothing (fail closed).
* **Order at day close.** Existing regularities are assessed on the new day first; then the
  miner runs over the recent days with the known proposals excluded, and each new proposal is
  replayed from scratch over the replay window.
* **Mining and replay windows.** The miner sees the last :data:`MINING_DAYS` closed days: a
  routine older than that, never seen again, is not worth proposing. A new proposal is
  replayed over the last :data:`REPLAY_DAYS` (so it starts with the standing it would have had
  if proposed that long ago); a regularity already tracked moves one assessed day at a time.
* **Retirement.** A retired candidate (``regularities.RETIRE_AFTER_DAYS``) is not assessed
  again, and the miner does not propose it again (its routine may come back under another
  window). The service does not load retired regularities at a close: it names their ids.
* **One regularity per routine.** A proposal whose trigger, behavior and weekday set match an
  active or weakening regularity (its *family*, ``regularities.family_key``) is not tracked
  again with another window: the miner re-derives windows from the latest days, and without
  this the same routine would come back every few days and crowd retrieval. A candidate or a
  habit does not block its family: as days accrue, the miner may find the routine's own time
  (a habit "some time every morning" is not the routine "by eight after getting up at seven").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from operator import attrgetter
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.extract import OpenDay, day_events, extract_day, grounding_view
from memory.engine.mine import mine
from memory.engine.records import DayRecord, EngineEvent, Fact, Observation, Proposal, Segment
from memory.engine.refs import fact_ref, regularity_id
from memory.engine.regularities import (
    Assessment,
    RegularityState,
    advance,
    advanced,
    assess_day,
    family_key,
    one_per_date,
    proposal_key,
    validate_proposal,
)
from memory.engine.validate import (
    Accepted,
    IndexCache,
    Verdict,
    accepted,
    validate_extension,
    validate_segment,
)

GrownKey = tuple[str, datetime, tuple[Fact, ...]]  # a segment's kind, start and facts
MINING_DAYS = 28  # our choice: four weeks of closed days feed the miner
# Our choice: a new proposal is replayed over the last thirteen weeks of closed days (every
# weekday thirteen times, a season's routines). Reading every closed day would make each close
# cost more as history grows (ARCHITECTURE.md: cost follows the day, not history), and a
# routine's standing a season ago says little about whether it holds now.
REPLAY_DAYS = 91

Extractor = Callable[..., tuple[Segment, ...]]
Miner = Callable[..., tuple[Proposal, ...]]


@dataclass(slots=True)
class DayCache:
    """What a day's repeated extraction can reuse while the day is open: each event's grounding
    view and leaf index, by event id (events never change). A decision re-reads its open day at
    every event; this keeps that from re-deriving the same views and indexes each time."""

    views: dict[int, EngineEvent] = field(default_factory=dict)
    # The events given views so far, when they were a prefix of the day's ordered events: the
    # count and the last of them (a read extends its views by the events after it).
    viewed: tuple[int, EngineEvent] | None = None
    indexes: IndexCache = field(default_factory=dict)
    # The day's extraction so far, extended by the events added since (extract.OpenDay).
    opened: Any = None
    # A segment extracted again unchanged has the same verdict: validation reads only the
    # segment, its cited events (immutable) and the day, which the cache is for.
    verdicts: dict[Segment, Verdict] = field(default_factory=dict)
    # The last read's segments by identity (extract.OpenDay hands back the same object while a
    # segment is unchanged): its verdict, and its key and observations, found without hashing
    # every fact of the day at every read. The segment is held, so a reused id never matches.
    checked: dict[int, CheckedSegment] = field(default_factory=dict)
    observed: dict[int, tuple[Segment, str, tuple[Observation, ...]]] = field(default_factory=dict)
    # The last accepted segment of each kind, start and facts: a stretch still growing at the
    # open day's end is checked again only for the events it gained (validate_extension).
    grown: dict[GrownKey, Accepted] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CheckedSegment:
    """A segment as extracted, its position and key in the day, and the validator's verdict.

    ``key`` (refs.py) is what fact references name: kind and lowest cited event id, with
    ``~2``, ``~3`` ... appended in day order should two segments share one.
    """

    index: int
    segment: Segment
    verdict: Verdict
    key: str


@dataclass(frozen=True, slots=True)
class ClosedDay:
    """A completed local day: every segment with its verdict, and the record replay reads."""

    day: date
    segments: tuple[CheckedSegment, ...]
    record: DayRecord

    @property
    def rejected(self) -> tuple[CheckedSegment, ...]:
        return tuple(c for c in self.segments if not c.verdict.accepted)


def segment_keys(segments: Sequence[Segment]) -> list[str]:
    """Each segment's key (``CheckedSegment.key``), in the order given."""
    seen: dict[str, int] = {}
    keys = []
    for s in segments:
        base = f"{s.kind}@{min(s.citations)}" if s.citations else f"{s.kind}@none"
        seen[base] = seen.get(base, 0) + 1
        keys.append(base if seen[base] == 1 else f"{base}~{seen[base]}")
    return keys


def check_segments(
    segments: Sequence[Segment],
    events_by_id: Mapping[int, EngineEvent],
    day: date,
    zone: ZoneInfo,
    *,
    index_cache: IndexCache | None = None,
    verdicts: dict[Segment, Verdict] | None = None,
    known: dict[int, CheckedSegment] | None = None,
    grown: dict[GrownKey, Accepted] | None = None,
) -> tuple[CheckedSegment, ...]:
    """Validate each segment on its own; one bad segment never takes another down.

    ``verdicts`` (by value) and ``known`` (the last call's, by segment identity; replaced by
    this call's) hold verdicts already given; a segment's verdict depends only on it, its
    cited events and the day. ``grown`` holds the last accepted segment of each kind, start
    and facts, which a segment that extends it is checked against (validate_extension).
    """
    checked = []
    seen: dict[int, CheckedSegment] = {}
    for i, (s, key) in enumerate(zip(segments, segment_keys(segments), strict=True)):
        held = known.get(id(s)) if known is not None else None
        if held is not None and held.segment is s:
            if held.index != i or held.key != key:
                held = CheckedSegment(i, s, held.verdict, key)
        else:
            verdict = verdicts.get(s) if verdicts is not None else None
            if verdict is None:
                verdict = _verdict(s, events_by_id, day, zone, index_cache, grown)
                if verdicts is not None:
                    verdicts[s] = verdict
            held = CheckedSegment(i, s, verdict, key)
        seen[id(s)] = held
        checked.append(held)
    if known is not None:
        known.clear()
        known.update(seen)
    return tuple(checked)


def _verdict(
    segment: Segment,
    events_by_id: Mapping[int, EngineEvent],
    day: date,
    zone: ZoneInfo,
    index_cache: IndexCache | None,
    grown: dict[GrownKey, Accepted] | None,
) -> Verdict:
    if grown is None:
        return validate_segment(segment, events_by_id, day, zone, index_cache=index_cache)
    key = (segment.kind, segment.start, segment.facts)
    prior = grown.get(key)
    found = None if prior is None else validate_extension(prior, segment, events_by_id, day, zone)
    if found is None:
        verdict = validate_segment(segment, events_by_id, day, zone, index_cache=index_cache)
        found = accepted(segment, verdict, events_by_id)
        if found is None:
            return verdict
    grown[key] = found
    return found.verdict


def unchecked_segments(segments: Sequence[Segment]) -> tuple[CheckedSegment, ...]:
    """Every segment accepted without validation (the no-validation ablation), keyed as
    :func:`check_segments` keys them."""
    return tuple(
        CheckedSegment(i, s, Verdict(True), key)
        for i, (s, key) in enumerate(zip(segments, segment_keys(segments), strict=True))
    )


def day_record(
    day: date,
    zone: ZoneInfo,
    checked: Sequence[CheckedSegment],
    observed: dict[int, tuple[Segment, str, tuple[Observation, ...]]] | None = None,
) -> DayRecord:
    """The observations of the accepted segments, in (time, fact reference) order.

    ``observed``: the last call's observations per segment, by identity (replaced by this
    call's); a segment read again under the same key gives the same observations.
    """
    observations: list[Observation] = []
    seen: dict[int, tuple[Segment, str, tuple[Observation, ...]]] = {}
    for c in checked:
        if not c.verdict.accepted:
            continue
        segment = c.segment
        held = observed.get(id(segment)) if observed is not None else None
        if held is None or held[0] is not segment or held[1] != c.key:
            held = (segment, c.key, _observations(day, zone, segment, c.key))
        seen[id(segment)] = held
        observations += held[2]
    observations.sort(key=_observation_order)
    if observed is not None:
        observed.clear()
        observed.update(seen)
    return DayRecord(day, tuple(observations))


def _observations(day: date, zone: ZoneInfo, segment: Segment, key: str) -> tuple[Observation, ...]:
    return tuple(
        Observation(
            at=(fact.at or segment.start).astimezone(zone),
            path=(segment.kind, *fact.path),
            value=fact.value,
            fact_id=fact_ref(day, key, fact.id),
        )
        for fact in segment.facts
    )


_observation_order = attrgetter("at", "fact_id")


def close_day(
    scope: str,
    events: Sequence[EngineEvent],
    day: date,
    zone: ZoneInfo,
    *,
    frames: Sequence[Mapping[str, Any]] = (),
    extractor: Extractor | None = None,
    cache: DayCache | None = None,
    validate: bool = True,
    ordered: bool = False,
) -> ClosedDay:
    """Extract the day's segments, validate them against the day's events, build its record.

    ``events`` are the entity's events of ``day`` (local, in ``zone``); ``frames`` the compiled
    desktop frames of that day. ``extractor`` replaces the deterministic one (an LLM extractor
    proposes segments the same way and is validated the same way). ``validate=False`` is
    ProactMem's no-validation ablation (§5): every segment is accepted unchecked. ``ordered``
    is the caller's word that ``events`` are already the day's own events in (time, id) order,
    none a decision point (what the in-memory stream keeps), so they are not picked and sorted
    again at every read of an open day.
    """

    if cache is not None and extractor is None:
        segments = _extended(cache, scope, events, day, zone, frames, ordered)
    else:
        segments = (extractor or extract_day)(scope, events, day, zone, frames)
    if cache is None:
        by_id = {e.id: grounding_view(scope, e) for e in events}
    else:
        views = cache.views
        held = cache.viewed
        fresh = events
        if (
            ordered
            and held is not None
            and 0 < held[0] <= len(events)
            and events[held[0] - 1] is held[1]
        ):
            fresh = events[held[0] :]
        for e in fresh:
            if e.id not in views:
                views[e.id] = grounding_view(scope, e)
        cache.viewed = (len(events), events[-1]) if ordered and events else None
        by_id = views
    indexes = cache.indexes if cache is not None else None
    verdicts = cache.verdicts if cache is not None else None
    known = cache.checked if cache is not None else None
    if validate:
        checked = check_segments(
            segments,
            by_id,
            day,
            zone,
            index_cache=indexes,
            verdicts=verdicts,
            known=known,
            grown=cache.grown if cache is not None else None,
        )
    else:
        checked = unchecked_segments(segments)
    observed = cache.observed if cache is not None else None
    return ClosedDay(day, checked, day_record(day, zone, checked, observed))


def _extended(
    cache: DayCache,
    scope: str,
    events: Sequence[EngineEvent],
    day: date,
    zone: ZoneInfo,
    frames: Sequence[Mapping[str, Any]],
    ordered: bool = False,
) -> tuple[Segment, ...]:
    """The day's segments, extending the cached extraction by the events it has not seen; a
    day whose earlier events changed (one arrived out of order) is extracted afresh."""

    todays = events if ordered else day_events(events, day, zone)
    opened = cache.opened
    fed = opened.fed if opened is not None else 0
    if (
        opened is None
        or opened.scope != scope
        or opened.day != day
        or fed > len(todays)
        or (fed and opened.last != (todays[fed - 1].at, todays[fed - 1].id))
    ):
        opened = cache.opened = OpenDay(scope, day, zone)
        fed = 0
    opened.feed(todays[fed:])
    segments: tuple[Segment, ...] = opened.segments(frames)
    return segments


@dataclass(frozen=True, slots=True)
class Tracked:
    """One regularity of an entity: its proposal and where its lifecycle stands."""

    id: str  # refs.regularity_id(proposal)
    proposal: Proposal
    state: RegularityState = field(default_factory=RegularityState)


@dataclass(frozen=True, slots=True)
class DayAdvance:
    """What one closed day did to the regularities: new states, new ones, the day's outcomes.

    ``assessments`` maps a regularity id to the assessments to store: one for an existing
    regularity (the new day), every day of its replay for a new one.
    """

    tracked: Mapping[str, Tracked]
    new_ids: tuple[str, ...]
    assessments: Mapping[str, tuple[Assessment, ...]]


def advance_regularities(
    tracked: Mapping[str, Tracked],
    history: Sequence[DayRecord],
    closed: DayRecord,
    *,
    miner: Miner | None = None,
    retired: Collection[str] = (),
) -> DayAdvance:
    """Assess every known regularity on ``closed``, then mine and replay new proposals.

    ``history`` holds the records of the days closed before ``closed`` (any order; one per
    date; only the last :data:`REPLAY_DAYS` are read, so a caller may pass just those). A
    regularity whose ``last_day`` is at or after ``closed.day`` is left as it is, so calling
    this twice for one day changes nothing. ``retired`` names retired regularities not in
    ``tracked`` (the service leaves them unloaded); retired ones in ``tracked`` count alike.
    """

    updated = dict(tracked)
    outcomes: dict[str, tuple[Assessment, ...]] = {}
    for rid in sorted(tracked):
        t = tracked[rid]
        if t.state.rejected is not None or t.state.state == "retired":
            continue
        if t.state.last_day is not None and t.state.last_day >= closed.day:
            continue
        a = assess_day(t.proposal, closed)
        updated[rid] = Tracked(rid, t.proposal, advance(t.state, a))
        outcomes[rid] = (a,)

    days = [r for r in one_per_date([*history, closed]) if (closed.day - r.day).days < REPLAY_DAYS]
    recent = [r for r in days if (closed.day - r.day).days < MINING_DAYS]
    families = {
        family_key(t.proposal) for t in updated.values() if t.state.state in ("active", "weakening")
    }
    new_ids: list[str] = []
    # What is tracked (retired or not) is not proposed again: named by id to the miner (a set of
    # ids costs nothing to build; keys would be rebuilt for every tracked proposal at every
    # close), by key to a miner passed in.
    if miner is None:
        proposed = mine(recent, known_ids=frozenset(tracked) | frozenset(retired))
    else:
        proposed = miner(recent, known={proposal_key(t.proposal) for t in tracked.values()})
    for proposal in proposed:
        if validate_proposal(proposal) is not None:
            continue  # a malformed proposal fails closed and is not kept
        rid = regularity_id(proposal)
        family = family_key(proposal)
        if rid in updated or family in families:
            continue  # a routine already tracked, proposed again with another window
        families.add(family)
        # Replayed over the days, each assessed once (``run`` over ``days``, which are one per
        # date in date order already).
        assessed = tuple(assess_day(proposal, r) for r in days)
        state = advanced(RegularityState(), assessed)
        updated[rid] = Tracked(rid, proposal, state)
        outcomes[rid] = assessed
        new_ids.append(rid)
    return DayAdvance(updated, tuple(new_ids), outcomes)
