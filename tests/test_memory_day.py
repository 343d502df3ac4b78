"""Day close (memory/engine/day.py) and engine serialisation (memory/engine/serial.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from memory.engine.control import home_signature, sports_signature
from memory.engine.day import (
    Tracked,
    advance_regularities,
    check_segments,
    day_record,
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
from memory.engine.regularities import RegularityState, run
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
