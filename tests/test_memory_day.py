"""Day close (memory/engine/day.py) and engine serialisation (memory/engine/serial.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory.engine.control import home_signature, sports_signature
from memory.engine.day import (
    MINING_DAYS,
    REPLAY_DAYS,
    ClosedDay,
    DayCache,
    Tracked,
    advance_regularities,
    check_segments,
    close_day,
    day_record,
    segment_keys,
    unchecked_segments,
)
from memory.engine.records import (
    DayRecord,
    EngineEvent,
    Fact,
    Observation,
    Predicate,
    Proposal,
    Segment,
)
from memory.engine.refs import parse_ref, regularity_id
from memory.engine.regularities import RegularityState, proposal_key, run
from memory.engine.serial import (
    identity_from_json,
    identity_to_json,
    proposal_from_json,
    proposal_to_json,
    signature_from_json,
    signature_to_json,
    state_from_fields,
    state_to_fields,
)

ZONE = ZoneInfo("Europe/Paris")
DAY = date(2024, 5, 6)  # a Monday


def at(hour: int, minute: int = 0, day: date = DAY) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=ZONE)


def event(eid: int, moment: datetime, **payload: object) -> EngineEvent:
    return EngineEvent(eid, moment.astimezone(UTC), "observation", payload)


def seg(kind: str, start: datetime, end: datetime, cites: tuple[int, ...], *facts: Fact) -> Segment:
    return Segment(start, end, facts, cites, kind=kind)


def test_rejected_segment_gives_no_observations_and_never_takes_another_down() -> None:
    events = {1: event(1, at(8), room="kitchen"), 2: event(2, at(9), room="hall")}
    good = seg(
        "room_presence", at(8), at(8, 30), (1,), Fact("f1", "observed", ("room",), "Kitchen")
    )
    bad = seg("room_presence", at(9), at(9, 30), (2,), Fact("f1", "observed", ("room",), "attic"))
    checked = check_segments([good, bad], events, DAY, ZONE)
    assert [c.verdict.accepted for c in checked] == [True, False]
    assert "attic" in (checked[1].verdict.reason or "")
    record = day_record(DAY, ZONE, checked)
    assert [(o.path, o.value, o.fact_id) for o in record.observations] == [
        (("room_presence", "room"), "Kitchen", "fact:2024-05-06/room_presence@1/f1")
    ]


def test_unchecked_segments_accept_every_segment_keyed_as_checked_ones_are() -> None:
    # The no-validation ablation: the segment the check rejects is taken as it is.
    events = {1: event(1, at(8), room="kitchen"), 2: event(2, at(9), room="hall")}
    good = seg(
        "room_presence", at(8), at(8, 30), (1,), Fact("f1", "observed", ("room",), "Kitchen")
    )
    bad = seg("room_presence", at(9), at(9, 30), (2,), Fact("f1", "observed", ("room",), "attic"))
    unchecked = unchecked_segments([good, bad])
    checked = check_segments([good, bad], events, DAY, ZONE)
    assert [(c.index, c.segment, c.key) for c in unchecked] == [
        (c.index, c.segment, c.key) for c in checked
    ]
    assert [c.index for c in unchecked] == [0, 1]
    assert [(c.verdict.accepted, c.verdict.reason) for c in unchecked] == [(True, None)] * 2
    assert [o.value for o in day_record(DAY, ZONE, unchecked).observations] == [
        "Kitchen",
        "attic",
    ]
    assert unchecked_segments([]) == ()


def test_observation_sits_at_fact_time_else_segment_start_in_local_time() -> None:
    events = {1: event(1, at(8, 10), room="kitchen", door="open")}
    s = seg(
        "door",
        at(8),
        at(8, 20),
        (1,),
        Fact("f1", "observed", ("room",), "kitchen", at=at(8, 10)),
        Fact("f2", "observed", ("door",), "open"),
    )
    record = day_record(DAY, ZONE, check_segments([s], events, DAY, ZONE))
    assert [(o.at, o.fact_id) for o in record.observations] == [
        (at(8), "fact:2024-05-06/door@1/f2"),
        (at(8, 10), "fact:2024-05-06/door@1/f1"),
    ]
    assert all(o.at.tzinfo == ZONE for o in record.observations)


def _obs(day: date, hour: int, path: tuple[str, ...], value: str, n: int) -> Observation:
    return Observation(at(hour, day=day), path, value, f"fact:{day}/{n}/f1")


WAKE = Predicate(("room_presence", "room"), "bedroom")
KITCHEN = Predicate(("room_presence", "room"), "kitchen")
PROPOSAL = Proposal(WAKE, KITCHEN, (time(6), time(10)))


def _routine_day(day: date, kept: bool) -> DayRecord:
    obs = [_obs(day, 7, WAKE.path, "bedroom", 0)]
    if kept:
        obs.append(_obs(day, 8, KITCHEN.path, "kitchen", 1))
    else:
        obs.append(_obs(day, 8, ("room_presence", "room"), "hall", 1))
    return DayRecord(day, tuple(obs))


def _slept_in(day: date) -> DayRecord:
    """A day up only at 11:00: no trigger in the window, no kitchen in it (a contrast day)."""
    return DayRecord(day, (_obs(day, 11, WAKE.path, "bedroom", 0),))


def _no_miner(records: object, *, known: object = ()) -> tuple[Proposal, ...]:
    return ()


def test_known_regularity_is_assessed_once_per_closed_day_and_a_second_call_changes_nothing() -> (
    None
):
    rid = regularity_id(PROPOSAL)
    tracked = {rid: Tracked(rid, PROPOSAL)}
    record = _routine_day(DAY, kept=True)
    step = advance_regularities(tracked, [], record, miner=_no_miner)
    assert [a.outcome for a in step.assessments[rid]] == ["fulfilled"]
    again = advance_regularities(step.tracked, [], record, miner=_no_miner)
    assert again.assessments == {}
    assert again.tracked[rid].state == step.tracked[rid].state


def test_new_proposal_is_replayed_over_every_closed_day_as_if_proposed_on_day_one() -> None:
    days = [DAY + timedelta(days=i) for i in range(7)]
    records = [
        _slept_in(d) if i in (0, 3) else _routine_day(d, kept=i != 1) for i, d in enumerate(days)
    ]

    def miner(recent: object, *, known: object = ()) -> tuple[Proposal, ...]:
        return (PROPOSAL,)

    step = advance_regularities({}, records[:-1], records[-1], miner=miner)
    rid = regularity_id(PROPOSAL)
    assert step.new_ids == (rid,)
    assert [a.day for a in step.assessments[rid]] == days
    assert step.tracked[rid].state == run(PROPOSAL, records)
    # 4 fulfilled of 5 triggered days, no kitchen on the 2 days up late: lift 1.4.
    assert step.tracked[rid].state.state == "active"


def test_known_proposals_are_passed_to_the_miner_and_never_tracked_twice() -> None:
    rid = regularity_id(PROPOSAL)
    seen: list[object] = []

    def miner(recent: object, *, known: object = ()) -> tuple[Proposal, ...]:
        seen.append(known)
        return (PROPOSAL,)

    step = advance_regularities(
        {rid: Tracked(rid, PROPOSAL)}, [], _routine_day(DAY, True), miner=miner
    )
    assert step.new_ids == ()
    assert seen and len(seen[0]) == 1  # type: ignore[arg-type]


def test_malformed_mined_proposal_fails_closed_and_is_not_kept() -> None:
    bad = Proposal(WAKE, KITCHEN, (time(10), time(6)))

    def miner(recent: object, *, known: object = ()) -> tuple[Proposal, ...]:
        return (bad,)

    step = advance_regularities({}, [], _routine_day(DAY, True), miner=miner)
    assert step.tracked == {} and step.new_ids == ()


def test_proposal_json_round_trip_is_exact() -> None:
    p = Proposal(
        Predicate(("decision_point", "available"), True),
        Predicate(("step_bout", "type"), "steps"),
        (time(8, 30), time(11)),
        frozenset({0, 1, 2, 3, 4}),
    )
    assert proposal_from_json(proposal_to_json(p)) == p
    assert proposal_from_json(proposal_to_json(PROPOSAL)) == PROPOSAL


def test_state_round_trip_keeps_what_advancing_needs() -> None:
    records = [_slept_in(DAY), _slept_in(DAY + timedelta(days=1))]
    records += [_routine_day(DAY + timedelta(days=2 + i), kept=True) for i in range(4)]
    state = run(PROPOSAL, records)
    back = state_from_fields(state_to_fields(state))
    assert back.tally == state.tally
    assert (back.state, back.violation_run, back.last_day) == ("active", 0, state.last_day)
    later = [_routine_day(DAY + timedelta(days=6 + i), kept=False) for i in range(2)]
    assert run(PROPOSAL, later, back).state == run(PROPOSAL, later, state).state == "weakening"
    assert state_from_fields(state_to_fields(RegularityState())) == RegularityState()


def test_signature_and_identity_round_trip_including_room_sets_and_times() -> None:
    home = home_signature(
        {"activity_family": "meal", "rooms": ["Kitchen", "hall"]},
        [{"activity_family": "meal", "rooms": ["hall", "kitchen"]}],
    )
    sports = sports_signature(
        {"attributes": {"available": True, "location": "home", "snoozed": None}}
    )
    empty_rooms = home_signature({"activity_family": "meal"})
    timed = sports_signature({"recognized_activity": "2024-05-06T08:00:00+02:00"})
    for sig in (home, sports, empty_rooms, timed):
        assert signature_from_json(signature_to_json(sig)) == sig
    ident = ("2024-05-06", "suggest_walk", ("reg:abc", "reg:def"))
    assert identity_from_json(identity_to_json(ident)) == ident


def test_evidence_references_parse_by_prefix() -> None:
    assert parse_ref("event:12") == ("event", "12")
    assert parse_ref("fact:2024-05-06/door@3/f2") == ("fact", "2024-05-06/door@3/f2")
    assert parse_ref(regularity_id(PROPOSAL))[0] == "reg"
    for bad in ("event:", "12", "frame:3"):
        try:
            parse_ref(bad)
        except ValueError as err:
            assert "evidence reference" in str(err)
        else:
            raise AssertionError(f"{bad!r} parsed")


def test_segments_sharing_kind_and_first_event_get_numbered_keys_in_day_order() -> None:
    events = {1: event(1, at(8), room="kitchen"), 2: event(2, at(9), room="kitchen")}
    fact = Fact("f1", "observed", ("room",), "kitchen")
    a = seg("room_presence", at(8), at(8, 30), (1,), fact)
    b = seg("room_presence", at(8), at(9, 30), (1, 2), fact)
    c = seg("door", at(9), at(9), (2,), fact)
    keys = [x.key for x in check_segments([a, b, c], events, DAY, ZONE)]
    assert keys == ["room_presence@1", "room_presence@1~2", "door@2"]


def test_a_growing_segment_keeps_its_fact_references_as_the_day_goes_on() -> None:
    early = {1: event(1, at(8), room="kitchen")}
    later = {**early, 2: event(2, at(7), room="hall"), 3: event(3, at(8, 20), room="kitchen")}
    fact = Fact("f1", "observed", ("room",), "kitchen")
    morning = [seg("room_presence", at(8), at(8), (1,), fact)]
    evening = [
        seg("room_presence", at(7), at(7), (2,), Fact("f1", "observed", ("room",), "hall")),
        seg("room_presence", at(8), at(8, 20), (1, 3), fact),
    ]
    before = day_record(DAY, ZONE, check_segments(morning, early, DAY, ZONE))
    after = day_record(DAY, ZONE, check_segments(evening, later, DAY, ZONE))
    kitchen = before.observations[0].fact_id
    assert kitchen in {o.fact_id for o in after.observations if o.value == "kitchen"}


def test_the_stored_state_columns_are_what_a_state_writes() -> None:
    from memory.engine.serial import STATE_FIELDS

    assert tuple(state_to_fields(RegularityState())) == STATE_FIELDS


# --- close_day: the cache of an open day, frames, validation, zones ---------------------------


def sensor(eid: int, moment: datetime, room: str) -> EngineEvent:
    payload = {"type": "motion", "value": "ON", "attributes": {"sensor": f"M{eid}", "room": room}}
    return EngineEvent(eid, moment.astimezone(UTC), "observation", payload)


# A morning, the first event 00:30 local: 22:30 UTC the day before, on DAY only in ZONE.
ROOMS = ("bedroom", "bedroom", "kitchen", "kitchen", "hall", "living", "living", "kitchen")
MORNING = (
    sensor(1, at(0, 30), "bedroom"),
    *(sensor(i + 2, at(7 + i // 2, (i % 2) * 20), room) for i, room in enumerate(ROOMS)),
)


def validations(monkeypatch: pytest.MonkeyPatch) -> list[Segment]:
    """Every segment the day close validates from now on, in order."""
    from memory.engine import day as day_module

    calls: list[Segment] = []
    real = day_module.validate_segment

    def counted(s: Segment, *args: object, **kwargs: object) -> object:
        calls.append(s)
        return real(s, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(day_module, "validate_segment", counted)
    return calls


def _summary(closed: ClosedDay) -> list[tuple[object, ...]]:
    return [(c.key, c.segment, c.verdict.accepted, c.verdict.reason) for c in closed.segments]


def test_a_cached_open_day_closes_as_a_fresh_one_at_every_event_reusing_its_extraction() -> None:
    cache = DayCache()
    opened = None
    for n in range(1, len(MORNING) + 1):
        closed = close_day("home", MORNING[:n], DAY, ZONE, cache=cache)
        assert _summary(closed) == _summary(close_day("home", MORNING[:n], DAY, ZONE))
        assert closed.record == close_day("home", MORNING[:n], DAY, ZONE).record
        if opened is not None:
            assert cache.opened is opened  # extended, not extracted afresh
        opened = cache.opened
        assert opened.fed == n
    again = close_day("home", MORNING, DAY, ZONE, cache=cache)  # nothing new: kept as it is
    assert cache.opened is opened and _summary(again) == _summary(closed)
    assert cache.views.keys() == {e.id for e in MORNING}
    assert cache.verdicts and all(v is not None for v in cache.verdicts.values())
    assert cache.indexes


def test_an_open_day_read_again_reuses_each_unchanged_segment_its_verdict_and_observations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A decision reads its open day at every event: a segment that did not change is numbered,
    # validated and placed once, not at every read (found by identity, the same object).
    cache = DayCache()
    first = close_day("home", MORNING[:6], DAY, ZONE, cache=cache)
    validated = validations(monkeypatch)
    second = close_day("home", MORNING[:7], DAY, ZONE, cache=cache)
    kept = [c for c in first.segments if c.segment in {d.segment for d in second.segments}]
    assert kept  # the day's earlier rooms are closed stretches, unchanged by one more event
    later = {d.segment: d for d in second.segments}
    # Closed stretches come back as the same objects (numbered once); only the stretch still
    # open is made again, equal to the last one.
    same = [c for c in kept if later[c.segment].segment is c.segment]
    assert len(same) >= len(kept) - 1 >= 1
    assert all(later[c.segment].verdict is c.verdict for c in kept)  # validated once
    assert not any(s == c.segment for s in validated for c in kept)
    keys = {f"fact:{DAY.isoformat()}/{c.key}/" for c in same}
    reused = [o for o in second.record.observations if o.fact_id.rsplit("/", 1)[0] + "/" in keys]
    assert reused and all(any(o is p for p in first.record.observations) for o in reused)
    assert _summary(second) == _summary(close_day("home", MORNING[:7], DAY, ZONE))
    assert second.record == close_day("home", MORNING[:7], DAY, ZONE).record


def test_an_ordered_open_day_grounds_an_event_that_came_in_between_those_read_before() -> None:
    # The in-memory stream keeps the day's events in time order and says so (ordered=True):
    # each read gives views to the events after the last read's. An event placed between
    # them (a late one within its open day) is still given its view and grounds its segment.
    cache = DayCache()
    events = list(MORNING[:6])
    close_day("home", events, DAY, ZONE, cache=cache, ordered=True)
    late = sensor(99, at(7, 10), "hall")
    events.insert(next(i for i, e in enumerate(events) if e.at > late.at), late)
    closed = close_day("home", events, DAY, ZONE, cache=cache, ordered=True)
    assert 99 in cache.views
    assert _summary(closed) == _summary(close_day("home", events, DAY, ZONE))
    assert all(c.verdict.accepted for c in closed.segments)
    events.append(MORNING[6])  # and one after them: only it is new
    again = close_day("home", events, DAY, ZONE, cache=cache, ordered=True)
    assert _summary(again) == _summary(close_day("home", events, DAY, ZONE))
    assert cache.viewed == (len(events), MORNING[6])


def test_a_cached_day_starts_afresh_for_an_event_out_of_order_another_day_or_scope() -> None:
    cache = DayCache()
    close_day("home", MORNING[:6], DAY, ZONE, cache=cache)
    first = cache.opened
    late = sensor(99, at(7, 10), "hall")  # between events already fed
    events = sorted([*MORNING[:6], late], key=lambda e: (e.at, e.id))
    closed = close_day("home", events, DAY, ZONE, cache=cache)
    assert cache.opened is not first
    assert _summary(closed) == _summary(close_day("home", events, DAY, ZONE))
    fewer = close_day("home", MORNING[:3], DAY, ZONE, cache=cache)  # fewer than were fed
    assert _summary(fewer) == _summary(close_day("home", MORNING[:3], DAY, ZONE))
    nextday = tuple(sensor(e.id + 100, e.at + timedelta(days=1), "kitchen") for e in MORNING)
    tomorrow = DAY + timedelta(days=1)
    other = close_day("home", nextday, tomorrow, ZONE, cache=cache)
    assert _summary(other) == _summary(close_day("home", nextday, tomorrow, ZONE))
    assert cache.opened.day == tomorrow
    sports = close_day("sports", nextday, tomorrow, ZONE, cache=cache)
    assert sports.segments == close_day("sports", nextday, tomorrow, ZONE).segments == ()


def test_the_first_event_after_local_midnight_belongs_to_the_day_in_its_zone() -> None:
    for cache in (None, DayCache()):
        closed = close_day("home", MORNING, DAY, ZONE, cache=cache)
        assert closed.day == DAY
        first = closed.segments[0]
        assert first.segment.citations == (1,) and first.verdict.accepted, first.verdict.reason
        assert closed.record.observations[0].at == at(0, 30)
        assert all(o.at.tzinfo is ZONE for o in closed.record.observations)


def test_a_given_extractor_is_used_with_or_without_a_cache_and_validated() -> None:
    bad = seg("room_presence", at(9), at(9, 30), (2,), Fact("f1", "observed", ("room",), "attic"))

    def extractor(*args: object) -> tuple[Segment, ...]:
        return (bad,)

    for cache in (None, DayCache()):
        closed = close_day("home", MORNING, DAY, ZONE, extractor=extractor, cache=cache)
        assert [c.segment for c in closed.segments] == [bad]
        assert not closed.segments[0].verdict.accepted
        # The no-validation ablation takes it as it is.
        unchecked = close_day(
            "home", MORNING, DAY, ZONE, extractor=extractor, cache=cache, validate=False
        )
        assert [(c.segment, c.verdict.accepted) for c in unchecked.segments] == [(bad, True)]
        assert [o.value for o in unchecked.record.observations] == ["attic"]


def test_desktop_frames_reach_the_extraction_with_or_without_a_cache() -> None:
    from tests.test_memory_extract import BERLIN, synthetic_desktop_day

    day, events, frames = synthetic_desktop_day()
    for cache in (None, DayCache()):
        closed = close_day("desktop", events, day, BERLIN, frames=frames, cache=cache)
        cut = [c for c in closed.segments if c.segment.kind == "frame"]
        assert len(cut) == len(frames) and all(c.verdict.accepted for c in cut)


def test_a_verdict_is_reused_for_a_segment_checked_before(monkeypatch) -> None:
    events = {1: event(1, at(8), room="kitchen")}
    good = seg(
        "room_presence", at(8), at(8, 30), (1,), Fact("f1", "observed", ("room",), "Kitchen")
    )
    calls = validations(monkeypatch)
    verdicts: dict[Segment, object] = {}
    first = check_segments([good], events, DAY, ZONE, verdicts=verdicts)  # type: ignore[arg-type]
    second = check_segments([good], events, DAY, ZONE, verdicts=verdicts)  # type: ignore[arg-type]
    assert calls == [good] and first == second and verdicts[good] == first[0].verdict
    indexes: dict[int, object] = {}
    check_segments([good], events, DAY, ZONE, index_cache=indexes)  # type: ignore[arg-type]
    assert set(indexes) == {1}


def test_a_segment_without_citations_is_keyed_none() -> None:
    bare = seg("first_activity", at(8), at(8), ())
    assert segment_keys([bare, bare]) == ["first_activity@none", "first_activity@none~2"]


# --- advance_regularities: every regularity, the mining window, one per family ---------------

OTHER = Proposal(WAKE, Predicate(("room_presence", "room"), "hall"), (time(6), time(10)))


def test_a_rejected_or_already_advanced_regularity_never_stops_the_others() -> None:
    first, second = sorted([PROPOSAL, OTHER], key=regularity_id)
    one, two = regularity_id(first), regularity_id(second)
    record = _routine_day(DAY, kept=True)
    for held in (
        RegularityState(rejected="a person rejected it"),
        RegularityState(last_day=DAY),
    ):
        step = advance_regularities(
            {one: Tracked(one, first, held), two: Tracked(two, second)},
            [],
            record,
            miner=_no_miner,
        )
        assert set(step.assessments) == {two}
        assert step.tracked[one].state == held
        assert step.tracked[two].id == two and step.tracked[two].state.last_day == DAY


def test_the_miner_sees_the_last_28_closed_days_only() -> None:
    seen: list[list[date]] = []

    def miner(recent: list[DayRecord], *, known: object = ()) -> tuple[Proposal, ...]:
        seen.append([r.day for r in recent])
        return ()

    days = [DAY - timedelta(days=n) for n in range(MINING_DAYS, 0, -1)]
    advance_regularities(
        {}, [_routine_day(d, True) for d in days], _routine_day(DAY, True), miner=miner
    )
    assert seen == [[*days[1:], DAY]]  # the day exactly 28 days back is out


def test_one_routine_is_tracked_once_per_family_while_its_regularity_is_active() -> None:
    narrower = Proposal(WAKE, KITCHEN, (time(6), time(9)))  # the same routine, another window
    bad = Proposal(WAKE, KITCHEN, (time(10), time(6)))

    def miner(recent: object, *, known: object = ()) -> tuple[Proposal, ...]:
        return (bad, PROPOSAL, narrower)

    records = [_routine_day(DAY - timedelta(days=n), True) for n in range(6, 0, -1)]
    fresh = advance_regularities({}, records, _routine_day(DAY, True), miner=miner)
    rid = regularity_id(PROPOSAL)
    assert fresh.new_ids == (rid,)  # the malformed one skipped, the second of the family too
    assert fresh.tracked[rid].id == rid

    def weekly(state: str) -> dict[str, Tracked]:
        return {rid: Tracked(rid, PROPOSAL, RegularityState(state=state, last_day=DAY))}

    for state, blocked in (("active", True), ("weakening", True), ("candidate", False)):
        step = advance_regularities(
            weekly(state),
            records,
            _routine_day(DAY, True),
            miner=lambda recent, known=(): (narrower, OTHER),
        )
        assert (regularity_id(narrower) not in step.new_ids) is blocked, state
        assert regularity_id(OTHER) in step.new_ids  # another family, after a blocked one


def test_a_decision_cites_the_event_or_the_decision_point_it_decided_at() -> None:
    from memory.engine.records import POINT_KIND
    from memory.engine.refs import current_ref, event_ref, point_ref

    assert current_ref(EngineEvent(7, at(8), POINT_KIND, {})) == point_ref(7) != event_ref(7)
    assert current_ref(event(7, at(8))) == event_ref(7)


def test_every_state_field_survives_the_row_and_an_iso_last_day_is_read_as_a_date() -> None:
    from memory.engine.regularities import Tally

    state = RegularityState(
        state="violated",
        tally=Tally(n_f=4, n_v=2, observable=7, behavior_days=5, untriggered_behavior=2),
        violation_run=2,
        violation_facts=("fact:2024-05-06/room_presence@1/f1",),
        last_day=DAY,
        rejected="a person said this is not a routine",
    )
    fields = state_to_fields(state)
    back = state_from_fields(fields)
    assert (back.state, back.tally, back.violation_run, back.violation_facts) == (
        state.state,
        state.tally,
        2,
        state.violation_facts,
    )
    assert (back.last_day, back.rejected) == (DAY, "a person said this is not a routine")
    assert state_from_fields({**fields, "last_day": DAY.isoformat()}).last_day == DAY
    assert state_to_fields(RegularityState())["rejected"] == ""
    assert state_from_fields(state_to_fields(RegularityState())).rejected is None


def test_an_unreadable_stored_proposal_or_signature_says_what_was_stored() -> None:
    import pytest

    from memory.engine.serial import StoredDataInvalid

    stored = proposal_to_json(PROPOSAL)
    odd = {**stored, "trigger": {**stored["trigger"], "path": ["room", 3]}}
    with pytest.raises(StoredDataInvalid, match=r"predicate path \['room', 3\] is not a list of"):
        proposal_from_json(odd)
    with pytest.raises(StoredDataInvalid, match=r"^stored proposal \{\} is unreadable: "):
        proposal_from_json({})
    with pytest.raises(StoredDataInvalid, match=r"^stored signature \{\} is unreadable: "):
        signature_from_json({})


# -- retirement and the replay window -------------------------------------------------------------


def test_a_retired_regularity_is_neither_assessed_nor_tracked_again() -> None:
    rid = regularity_id(PROPOSAL)
    retired = Tracked(rid, PROPOSAL, RegularityState(state="retired", last_day=DAY))
    seen: list[object] = []

    def miner(recent: object, *, known: object = ()) -> tuple[Proposal, ...]:
        seen.append(known)
        return (PROPOSAL,)

    record = _routine_day(DAY + timedelta(days=1), True)
    step = advance_regularities({rid: retired}, [], record, miner=miner)
    assert step.assessments == {} and step.new_ids == ()
    assert step.tracked[rid] is retired
    assert seen == [{proposal_key(PROPOSAL)}]  # the miner is told it is known


def test_retired_ids_named_apart_keep_the_miner_from_proposing_them() -> None:
    # The service does not load retired regularities: it names their ids, and the default
    # miner skips them as it skips those tracked.
    days = [DAY + timedelta(days=i) for i in range(8)]
    records = [_slept_in(d) if i in (0, 3) else _routine_day(d, True) for i, d in enumerate(days)]
    found = advance_regularities({}, records[:-1], records[-1])
    assert found.new_ids
    skipped = advance_regularities({}, records[:-1], records[-1], retired=found.new_ids[:1])
    assert found.new_ids[0] not in skipped.new_ids
    assert set(skipped.new_ids) == set(found.new_ids[1:])


def test_a_new_proposal_is_replayed_over_the_replay_window_only() -> None:
    assert REPLAY_DAYS == 91
    days = [DAY + timedelta(days=i) for i in range(120)]
    records = [_routine_day(d, kept=i % 3 != 1) for i, d in enumerate(days)]

    def miner(recent: object, *, known: object = ()) -> tuple[Proposal, ...]:
        return (PROPOSAL,)

    step = advance_regularities({}, records[:-1], records[-1], miner=miner)
    rid = regularity_id(PROPOSAL)
    assert [a.day for a in step.assessments[rid]] == days[-REPLAY_DAYS:]
    assert step.tracked[rid].state == run(PROPOSAL, records[-REPLAY_DAYS:])
