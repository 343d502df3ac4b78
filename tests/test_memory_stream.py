"""The in-memory causal loop (memory/engine/stream.py): order, causality, day close, late events."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any
from unittest.mock import patch
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.engine import day as day_module
from memory.engine.catalogue import control_context
from memory.engine.control import ControlState, Proposed, control, signature
from memory.engine.day import ClosedDay, DayCache, Tracked, close_day
from memory.engine.decide import (
    POLICIES,
    REGULARITIES,
    TODAY,
    TRAJECTORIES,
    DecisionContext,
    RecentMemoryPolicy,
)
from memory.engine.recent import RECENT_MAX_PRIOR
from memory.engine.records import (
    POINT_KIND,
    DayRecord,
    EngineEvent,
    Observation,
    Predicate,
    Proposal,
)
from memory.engine.refs import regularity_id
from memory.engine.regularities import RegularityState
from memory.engine.stream import (
    LateEvent,
    MemoryStream,
    MemoryView,
    Outcome,
    compiled_frames,
    decide_on,
    stored_frames,
)

ZONE = ZoneInfo("Europe/Paris")
START = date(2024, 5, 6)


def motion(eid: int, day: date, hour: int, minute: int, room: str) -> EngineEvent:
    moment = datetime.combine(day, time(hour, minute), tzinfo=ZONE).astimezone(UTC)
    payload = {"type": "motion", "value": "ON", "attributes": {"sensor": f"M-{room}", "room": room}}
    return EngineEvent(eid, moment, "observation", payload)


LATE = frozenset({1, 3})  # days up late: the contrast that makes the morning routine a routine


def days(n: int, skip: frozenset[int] = frozenset()) -> list[EngineEvent]:
    events: list[EngineEvent] = []
    for i in range(n):
        day = START + timedelta(days=i)
        if i in LATE:
            plan = [(10, 30, "bedroom"), (11, 0, "kitchen"), (12, 0, "living")]
        else:
            plan = [(7, 0, "bedroom"), (7, 5, "bedroom")]
            if i not in skip:
                plan += [(7, 30, "kitchen"), (7, 35, "kitchen")]
            plan += [(8, 10, "study"), (8, 40, "hall"), (12, 0, "living")]
        for hour, minute, room in plan:
            events.append(motion(len(events) + 1, day, hour, minute, room))
    return events


class Spy:
    """The rules policy, remembering every context it was given."""

    name = "rules"

    def __init__(self) -> None:
        self.seen: list[DecisionContext] = []

    def decide(self, ctx: DecisionContext):  # type: ignore[no-untyped-def]
        self.seen.append(ctx)
        return POLICIES["rules"].decide(ctx)


def test_each_event_runs_the_steps_in_causal_order() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    s.run(days(2))
    steps = [name for name, _ in s.log]
    per_event = ["read", "stage", "decide", "control", "store", "commit", "maintain"]
    assert steps == per_event * len(days(2))


def test_a_decision_sees_only_earlier_events_and_closed_days() -> None:
    spy = Spy()
    s = MemoryStream("home", ZONE, spy)
    stream = days(3)
    s.run(stream)
    for ctx in spy.seen:
        assert ctx.recent[-1] is ctx.current
        assert all((e.at, e.id) < (ctx.current.at, ctx.current.id) for e in ctx.recent[:-1])
        assert all(o.at <= ctx.now for o in ctx.today.observations)
        assert all(r.day < ctx.now.date() for r in ctx.trajectories)
    # The first event of day 2 is decided before day 1 closes (maintenance comes last).
    first_of_day2 = next(c for c in spy.seen if c.now.date() == START + timedelta(days=1))
    assert first_of_day2.trajectories == ()
    assert START in s.closed and START + timedelta(days=1) in s.closed


def test_today_is_the_days_earlier_events_extracted_and_never_the_current_one() -> None:
    spy = Spy()
    stream = days(8)
    MemoryStream("home", ZONE, spy).run(stream)
    asked = [c for c in spy.seen if c.regularities]
    assert asked, "no decision retrieved a regularity"
    for ctx in asked:
        earlier = [
            e
            for e in stream
            if e.at.astimezone(ZONE).date() == ctx.now.date() and e.at < ctx.current.at
        ]
        assert ctx.today == close_day("home", earlier, ctx.now.date(), ZONE).record


def test_an_event_for_a_closed_day_is_refused_before_any_step() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    s.run(days(3))
    steps, decisions, closed = len(s.log), list(s.decisions), dict(s.closed)
    with pytest.raises(LateEvent, match="2024-05-06 is closed"):
        s.process(motion(999, START, 20, 0, "kitchen"))
    assert (len(s.log), s.decisions, s.closed) == (steps, decisions, closed)
    assert all(e.id != 999 for e in s._recent)


def test_resuming_from_a_copy_at_any_cut_gives_the_same_memory() -> None:
    stream = days(6, skip=frozenset({3}))
    whole = MemoryStream("home", ZONE, POLICIES["rules"])
    whole.run(stream)
    for cut in range(1, len(stream)):  # every cut point
        part = MemoryStream("home", ZONE, POLICIES["rules"])
        part.run(stream[:cut])
        resumed = part.fork()  # what a process restart from saved state reads back
        resumed.run(stream[cut:])
        assert resumed.tracked == whole.tracked
        assert resumed.closed == whole.closed
        assert part.decisions == whole.decisions[:cut]  # the fork left the original alone
        assert [o.controlled for o in resumed.decisions] == [o.controlled for o in whole.decisions]


# -- decide_on: what each policy is handed, the ablation switches, the outcome ------------------

DAY = START + timedelta(days=9)
# After getting up (the bedroom), the kitchen within the window: in reach at 07:50.
ROUTINE = Proposal(
    Predicate(("room_presence", "room"), "bedroom"),
    Predicate(("room_presence", "room"), "kitchen"),
    (time(7, 15), time(8, 0)),
)
LATER = Proposal(ROUTINE.trigger, ROUTINE.behavior, (time(12), time(13)))  # out of reach


def at_local(day: date, hour: int, minute: int) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=ZONE)


def tracked(proposal: Proposal, state: str, rejected: str | None = None) -> Tracked:
    st = RegularityState(state=state, rejected=rejected)  # type: ignore[arg-type]
    return Tracked(regularity_id(proposal), proposal, st)


class Recorder:
    """A policy that reads what it is told to and remembers each context; it intervenes."""

    def __init__(self, reads: frozenset[str], name: str = "recorder") -> None:
        self.reads = reads
        self.name = name
        self.seen: list[DecisionContext] = []

    def decide(self, ctx: DecisionContext) -> Proposed:
        self.seen.append(ctx)
        return Proposed("intervene", "check_in_routine", ctx.episode, message="hello")


TODAY_SEEN = DayRecord(
    DAY,
    (Observation(at_local(DAY, 7, 20), ("room_presence", "room"), "bedroom", "fact:today/1"),),
)


def view_of(
    tracked_: dict[str, Tracked] | None = None, recent: tuple[EngineEvent, ...] = ()
) -> tuple[MemoryView, list[int]]:
    calls: list[int] = []

    def today_of() -> DayRecord:
        calls.append(1)
        return TODAY_SEEN

    current = motion(500, DAY, 7, 50, "living")
    closed = {
        d: ClosedDay(d, (), DayRecord(d)) for d in (DAY - timedelta(days=n) for n in (4, 1, 3, 2))
    }
    view = MemoryView(
        scope="home",
        current=current,
        now=current.at.astimezone(ZONE),
        recent=(*recent, current),
        tracked=tracked_ if tracked_ is not None else {},
        closed=closed,
        today_of=today_of,
    )
    return view, calls


def memory_of_states() -> dict[str, Tracked]:
    weekly = Proposal(ROUTINE.trigger, ROUTINE.behavior, (time(7), time(8)))
    return {
        "a": tracked(ROUTINE, "active"),
        "w": tracked(weekly, "weakening"),
        "c": tracked(
            Proposal(ROUTINE.trigger, ROUTINE.behavior, (time(7), time(7, 55))), "candidate"
        ),
        "r": tracked(
            Proposal(ROUTINE.trigger, ROUTINE.behavior, (time(7), time(7, 50))), "candidate", "bad"
        ),
        "l": tracked(LATER, "active"),
    }


def test_reachable_is_active_or_weakening_in_reach_and_without_the_gate_any_replayable() -> None:
    view, _ = view_of(memory_of_states())
    st = view.tracked
    assert view.reachable() == [
        (st["a"].proposal, st["a"].state),
        (st["w"].proposal, st["w"].state),
    ]
    assert view.reachable(gate=False) == [(st[k].proposal, st[k].state) for k in ("a", "w", "c")]


def test_reachable_holds_in_reach_at_every_clock_and_follows_a_new_set_of_regularities() -> None:
    # The reach of each regularity is worked out once per set (memory replaces the set at each
    # close); what a view finds is still in_reach of its own moment, whatever view came before.
    from memory.engine.retrieve import in_reach

    states = memory_of_states()
    for hour, minute in ((5, 0), (6, 31), (7, 50), (8, 29), (9, 59), (10, 1), (23, 0)):
        view, _ = view_of(states)
        view = replace(view, now=view.now.replace(hour=hour, minute=minute))
        expected = [
            (t.proposal, t.state)
            for t in states.values()
            if t.state.rejected is None and in_reach(t.proposal, view.now)
        ]
        assert view.reachable(gate=False) == expected, (hour, minute)
    fewer = {k: v for k, v in states.items() if k != "a"}
    view, _ = view_of(fewer)
    assert (ROUTINE, states["a"].state) not in view.reachable(gate=False)


def test_policies_deciding_on_one_home_moment_share_its_control_signature(monkeypatch) -> None:
    # A home's (and a wearable's) control context is the moment's, not the proposal's: the
    # benchmark's methods deciding on one view work it out once, and each is controlled by it.
    import memory.engine.stream as stream_module

    made: list[object] = []
    real = stream_module.control_context

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(stream_module, "control_context", counting)
    view, _ = view_of({"a": tracked(ROUTINE, "active")})
    first, _ = decide_on(view, POLICIES["rules"], ControlState())
    second, _ = decide_on(view, Recorder(frozenset({REGULARITIES})), ControlState())
    assert made == [view.current]
    context, prior = real("home", view.current, view.recent[:-1], first.controlled.proposed)
    assert first.signature == second.signature == signature("home", context, prior)


class Proposing:
    """A policy that reads nothing and proposes ``proposed`` whatever it sees."""

    reads = frozenset[str]()

    def __init__(self, proposed: Proposed, name: str) -> None:
        self.proposed = proposed
        self.name = name

    def decide(self, ctx: DecisionContext) -> Proposed:
        return self.proposed


def test_policies_proposing_alike_on_one_code_event_share_its_signature(monkeypatch) -> None:
    # A repository's control context is the event's together with what is proposed (its
    # intent, target and message): worked out once per distinct proposal on one view.
    import memory.engine.stream as stream_module

    made: list[tuple[str, str, str]] = []
    real = stream_module.control_context

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append((args[3].intent, args[3].target, args[3].message))
        return real(*args, **kwargs)

    monkeypatch.setattr(stream_module, "control_context", counting)
    current = EngineEvent(
        7, at_local(DAY, 10, 0), "observation",
        {"type": "pull_request", "attributes": {"action": "opened", "number": 12,
                                                "author": "ana"}},
    )  # fmt: skip
    view = MemoryView("code", current, current.at, (current,), {}, {}, lambda: DayRecord(DAY))
    review = Proposed("intervene", "request_review", "e", message="Ask for a review of #12.")
    other = replace(review, message="Someone should look at #12.")
    waiting = replace(review, target="pull_request:12")
    proposals = (review, review, other, waiting, waiting)
    outcomes = [
        decide_on(view, Proposing(p, f"p{n}"), ControlState())[0] for n, p in enumerate(proposals)
    ]
    assert made == [
        ("request_review", "", "Ask for a review of #12."),
        ("request_review", "", "Someone should look at #12."),
        ("request_review", "pull_request:12", "Ask for a review of #12."),
    ]
    for proposed, outcome in zip(proposals, outcomes, strict=True):
        context, prior = real("code", current, (), proposed)
        assert outcome.signature == signature("code", context, prior)
    assert outcomes[0].signature != outcomes[2].signature != outcomes[3].signature


def test_trajectories_are_the_last_three_closed_days_oldest_first() -> None:
    view, _ = view_of()
    assert [r.day for r in view.trajectories()] == [DAY - timedelta(days=n) for n in (3, 2, 1)]
    assert view.day == DAY


class Asking(Recorder):
    """A recorder that reads the closed days only when retrieval found a regularity."""

    def reads_trajectories(self, retrieved: Any) -> bool:
        return bool(retrieved)


def test_a_policy_reading_closed_days_only_for_what_is_retrieved_gets_them_only_then() -> None:
    asked = Asking(frozenset({TRAJECTORIES, REGULARITIES}))
    decide_on(view_of({"a": tracked(ROUTINE, "active")})[0], asked, ControlState())
    decide_on(view_of({"l": tracked(LATER, "active")})[0], asked, ControlState())  # out of reach
    found, none = asked.seen
    assert [r.proposal for r in found.regularities] == [ROUTINE]
    assert [r.day for r in found.trajectories] == [DAY - timedelta(days=n) for n in (3, 2, 1)]
    assert (none.regularities, none.trajectories) == ((), ())
    # A policy that does not say gets them whenever it names them.
    plain = Recorder(frozenset({TRAJECTORIES}))
    decide_on(view_of()[0], plain, ControlState())
    assert len(plain.seen[0].trajectories) == 3


def test_a_policy_reading_nothing_gets_no_memory_and_costs_no_extraction() -> None:
    view, calls = view_of({"a": tracked(ROUTINE, "active")})
    policy = Recorder(frozenset())
    outcome, _ = decide_on(view, policy, ControlState())
    (ctx,) = policy.seen
    assert (calls, ctx.today, ctx.trajectories, ctx.regularities) == ([], DayRecord(DAY), (), ())
    assert outcome.retrieved == ()


def test_a_policy_reading_regularities_gets_them_with_todays_facts() -> None:
    view, calls = view_of({"a": tracked(ROUTINE, "active"), "c": tracked(LATER, "active")})
    policy = Recorder(frozenset({REGULARITIES}))
    outcome, _ = decide_on(view, policy, ControlState())
    (ctx,) = policy.seen
    assert calls == [1] and ctx.today is TODAY_SEEN and ctx.trajectories == ()
    assert [(r.proposal, r.occurrence, r.fact_ids) for r in ctx.regularities] == [
        (ROUTINE, "pending", ("fact:today/1",))
    ]
    assert outcome.retrieved == ctx.regularities


def test_a_policy_reading_today_and_trajectories_gets_them_without_regularities() -> None:
    view, calls = view_of({"a": tracked(ROUTINE, "active")})
    policy = Recorder(frozenset({TODAY, TRAJECTORIES}))
    decide_on(view, policy, ControlState())
    (ctx,) = policy.seen
    assert calls == [1] and ctx.today is TODAY_SEEN and ctx.regularities == ()
    assert ctx.trajectories == view.trajectories()


def test_a_policy_that_tells_it_will_not_read_today_here_costs_no_extraction() -> None:
    # The view's closed days are empty records: nothing happened by now on each of them, so
    # recent memory abstains without today's facts, and none are extracted for it.
    view, calls = view_of({"a": tracked(ROUTINE, "active")})
    outcome, _ = decide_on(view, RecentMemoryPolicy(), ControlState())
    assert calls == [] and outcome.controlled.proposed.message == (
        "recent_memory: nothing usual by now is missing today"
    )
    # A policy that names TODAY and says nothing more is always handed today.
    told = Recorder(frozenset({TODAY}))
    told.reads_today = lambda trajectories, now: False  # type: ignore[attr-defined]
    decide_on(view, told, ControlState())
    assert calls == [] and told.seen[0].today == DayRecord(DAY)
    plain = Recorder(frozenset({TODAY}))
    decide_on(view, plain, ControlState())
    assert calls == [1] and plain.seen[0].today is TODAY_SEEN


def test_a_policy_that_does_not_say_what_it_reads_gets_regularities() -> None:
    view, calls = view_of({"a": tracked(ROUTINE, "active")})
    policy = Spy()
    decide_on(view, policy, ControlState())
    assert calls == [1] and len(policy.seen[0].regularities) == 1


def test_no_extraction_when_only_a_regularity_the_gate_holds_back_is_in_reach() -> None:
    view, calls = view_of({"c": tracked(ROUTINE, "candidate")})
    decide_on(view, Recorder(frozenset({REGULARITIES})), ControlState())
    assert calls == []


def test_blind_reads_no_trajectory_of_today_and_judges_by_the_clock() -> None:
    view, calls = view_of({"a": tracked(ROUTINE, "active")})
    policy = Recorder(frozenset({TODAY, REGULARITIES}))
    decide_on(view, policy, ControlState(), blind=True)
    (ctx,) = policy.seen
    assert calls == [] and ctx.today == DayRecord(DAY)
    assert [(r.occurrence, r.fact_ids) for r in ctx.regularities] == [("pending", ())]


def test_without_the_gate_a_candidate_is_retrieved_and_with_it_not() -> None:
    states = {"c": tracked(ROUTINE, "candidate")}
    view, _ = view_of(states)
    policy = Recorder(frozenset({REGULARITIES}))
    decide_on(view, policy, ControlState())
    decide_on(view, policy, ControlState(), gate=False)
    assert [len(c.regularities) for c in policy.seen] == [0, 1]


def test_the_outcome_is_the_controlled_proposal_with_its_signature() -> None:
    kitchen = tuple(motion(490 + i, DAY, 7, 40 + i, "kitchen") for i in range(2))
    view, _ = view_of({"a": tracked(ROUTINE, "active")}, recent=kitchen)
    current = replace(view.current, payload=kitchen[0].payload)
    view = replace(view, current=current, recent=(*kitchen, current))
    policy = Recorder(frozenset({REGULARITIES}), name="mine")
    proposed = Proposed("intervene", "check_in_routine", "2024-05-15/meal", message="hello")
    context, history = control_context("home", current, kitchen, proposed)
    sig = signature("home", context, history)
    assert sig.phase == "sustained"  # two prior kitchen events: the whole history counts
    controlled, state = control(proposed, sig, DAY, ControlState())
    outcome, new_state = decide_on(view, policy, ControlState())
    assert outcome == Outcome(
        500, current.at, DAY, "mine", controlled, sig, tuple(policy.seen[0].regularities)
    )
    assert new_state == state
    again, _ = decide_on(view, policy, new_state)
    assert again.suppressed  # the state carries the allowed intervention on


def test_the_code_signature_reads_the_proposal() -> None:
    payload = {
        "type": "PullRequestEvent",
        "value": None,
        "attributes": {"action": "opened", "number": 7},
    }
    current = EngineEvent(1, at_local(DAY, 10, 0), "observation", payload)
    view = replace(view_of()[0], scope="code", current=current, recent=(current,))
    outcome, _ = decide_on(view, Recorder(frozenset()), ControlState())
    assert dict(outcome.signature.fields)["content"] == ("str", "hello")


# -- the stream: views, checks, today's record, ingestion ---------------------------------------


class NoOffset(tzinfo):
    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None


def test_a_naive_or_offsetless_time_is_refused() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    naive = datetime(2024, 5, 6, 7)  # noqa: DTZ001 - the bad input under test
    for moment in (naive, datetime(2024, 5, 6, 7, tzinfo=NoOffset())):
        event = EngineEvent(7, moment, "observation", {"type": "motion"})
        for step in (s.process, s.view, s.ingest):
            with pytest.raises(ValueError) as refused:
                step(event)
            assert str(refused.value) == "event 7: its time must be aware"
    assert s.log == [] and s.decisions == []


def test_the_view_is_in_the_streams_zone_with_earlier_events_or_points() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    first = motion(1, START, 7, 0, "bedroom")
    s.process(first)
    late_utc = EngineEvent(
        2, datetime(2024, 5, 6, 23, 30, tzinfo=UTC), "observation", first.payload
    )
    view = s.view(late_utc)
    assert view.now == late_utc.at and view.now.tzinfo is ZONE and view.day == START + timedelta(1)
    assert (
        view.recent == (first, late_utc) and view.closed is s.closed and view.tracked is s.tracked
    )
    point = EngineEvent(3, first.at + timedelta(hours=1), POINT_KIND, {"type": "home_segment"})
    assert s.view(point).recent == (point,)  # a point's recent events are earlier points
    s.decide_point(point)
    later = replace(point, id=4, at=point.at + timedelta(hours=1))
    assert s.view(later).recent == (point, later)
    assert s.view(replace(first, id=5, at=later.at)).recent[:-1] == (first,)


def test_the_day_of_an_event_is_its_local_day() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    s.run(days(2))  # 2024-05-06 closed
    # 23:30 UTC on the 6th is 01:30 on the 7th in Paris: not a closed day.
    next_night = motion(900, START, 0, 0, "kitchen")
    next_night = replace(next_night, at=datetime(2024, 5, 6, 23, 30, tzinfo=UTC))
    assert s.process(next_night).day == START + timedelta(days=1)


def test_an_event_before_a_closed_day_is_late_even_on_a_day_never_seen() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    for d in (0, 2, 3):
        s.process(motion(10 + d, START + timedelta(days=d), 9, 0, "kitchen"))
    assert sorted(s.closed) == [START, START + timedelta(days=2)]
    with pytest.raises(LateEvent) as late:
        s.process(motion(99, START + timedelta(days=1), 9, 0, "kitchen"))
    assert str(late.value) == "event 99: 2024-05-07 is closed in memory"
    with pytest.raises(LateEvent):
        s.ingest(motion(98, START, 9, 30, "kitchen"))


def test_close_through_returns_the_days_it_closed_oldest_first() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    for e in days(3):
        s.ingest(e)
    assert s.close_through(START + timedelta(days=5)) == [START + timedelta(days=2)]
    assert s.close_through(START + timedelta(days=5)) == []
    assert sorted(s.closed) == [START + timedelta(days=n) for n in range(3)]


def test_ingest_builds_the_memory_process_builds_without_deciding() -> None:
    stream = days(5)
    decided = MemoryStream("home", ZONE, POLICIES["rules"])
    decided.run(stream)
    ingested = MemoryStream("home", ZONE, POLICIES["rules"])
    for e in stream:
        ingested.ingest(e)
    assert (ingested.log, ingested.decisions) == ([], [])
    assert ingested.closed == decided.closed and ingested.tracked == decided.tracked
    assert list(ingested._recent) == list(decided._recent)
    assert ingested.today_record(START + timedelta(days=4), stream[-1].at) == (
        decided.today_record(START + timedelta(days=4), stream[-1].at)
    )


def test_today_record_is_the_days_events_up_to_now_extracted() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    stream = days(1)  # 07:00 ... 12:00, one day
    for e in stream:
        s.ingest(e)
    for cut, e in enumerate(stream, start=1):
        expected = close_day("home", stream[:cut], START, ZONE).record
        assert s.today_record(START, e.at) == expected  # an event at now counts
    assert s.today_record(START, stream[0].at - timedelta(minutes=1)) == DayRecord(START)
    assert s.today_record(START + timedelta(days=1), stream[-1].at) == DayRecord(
        START + timedelta(days=1)
    )


def test_a_stay_growing_through_the_open_day_reads_as_the_day_extracted_afresh() -> None:
    # An hour in the kitchen, a motion event a minute (one stay that grows at every read), then
    # the hall: each read of the open day equals extracting and validating its events whole,
    # and the stay's earlier events are not checked again at each read.
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    stream = [motion(n, START, 9 + n // 60, n % 60, "kitchen") for n in range(60)]
    stream += [motion(60 + n, START, 10, 30 + n, "hall") for n in range(3)]
    checked: list[int] = []
    real = day_module.validate_extension

    def counted(prior: Any, segment: Any, *rest: Any) -> Any:
        checked.append(len(segment.citations) - len(prior.segment.citations))
        return real(prior, segment, *rest)

    with patch.object(day_module, "validate_extension", counted):
        for cut, e in enumerate(stream, start=1):
            s.ingest(e)
            read = s._close(START, stream[:cut], cache=s._day_caches.setdefault(START, DayCache()))
            afresh = close_day("home", stream[:cut], START, ZONE)
            assert read.record == afresh.record
            assert [c.verdict for c in read.segments] == [c.verdict for c in afresh.segments]
    assert checked and set(checked) == {1}  # each read checked the one event the stay gained


def test_an_event_late_within_its_open_day_is_read_in_time_order() -> None:
    # A decision sees only the day's events at or before it, whatever order they came in.
    policy = Recorder(frozenset({TODAY}))
    s = MemoryStream("home", ZONE, policy)
    kitchen, bedroom, hall = (
        motion(1, START, 10, 0, "kitchen"),
        motion(2, START, 9, 0, "bedroom"),
        motion(3, START, 9, 30, "hall"),
    )
    s.run([kitchen, bedroom, hall])
    assert policy.seen[-1].today == close_day("home", [bedroom], START, ZONE).record
    assert [e.id for e in s._open[START]] == [2, 3, 1]
    assert (
        s.today_record(START, kitchen.at)
        == close_day("home", [bedroom, hall, kitchen], START, ZONE).record
    )
    assert s.today_record(START, bedroom.at) == close_day("home", [bedroom], START, ZONE).record
    # Read again with no new event, it is reused even when some events are after now.
    before_kitchen = s.today_record(START, hall.at)
    assert s.today_record(START, hall.at) is before_kitchen
    # As many events before now as the last read, but not the same ones: read afresh.
    earlier = motion(4, START, 8, 0, "study")
    s.ingest(earlier)
    assert s.today_record(START, earlier.at + timedelta(minutes=30)) == (
        close_day("home", [earlier], START, ZONE).record
    )


def test_today_record_is_reused_until_the_day_gains_events() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    stream = days(2)
    first_day = [e for e in stream if e.at.astimezone(ZONE).date() == START]
    for e in first_day:
        s.ingest(e)
    record = s.today_record(START, first_day[-1].at)
    assert s.today_record(START, first_day[-1].at) is record
    assert s._today_cache == (START, len(first_day), len(first_day), record)
    # Another day with as many events is another record, extracted with a fresh cache.
    second_day = [replace(e, id=e.id + 100, at=e.at + timedelta(days=1)) for e in first_day]
    other = MemoryStream("home", ZONE, POLICIES["rules"])
    for e in first_day + second_day:
        other._commit(e, e.at.astimezone(ZONE).date())
    assert other.today_record(START, first_day[-1].at) == record
    cache = other._day_caches[START]
    nxt = START + timedelta(days=1)
    assert (
        other.today_record(nxt, second_day[-1].at)
        == close_day("home", second_day, nxt, ZONE).record
    )
    # Each open day keeps its own cache until it closes.
    assert other._day_caches[START] is cache and other._day_caches[nxt] is not cache
    other.close_through(nxt)
    assert list(other._day_caches) == [nxt]


# -- desktop frames: which ones a decision and a close read -------------------------------------


def snap(
    eid: int, day: date, hour: int, minute: int, second: int = 0, app: str = "Code"
) -> EngineEvent:
    moment = datetime.combine(day, time(hour, minute, second), tzinfo=ZONE)
    payload = {"app": app, "window": "w", "url": None, "focused": True}
    return EngineEvent(eid, moment, "snapshot", payload, monitor="m1")


def desktop_day(day: date = START, first: int = 1) -> list[EngineEvent]:
    return [
        snap(first + i, day, 9, i // 2, 30 * (i % 2), "Code" if i < 20 else "Mail")
        for i in range(40)
    ]


def test_compiled_frames_are_the_compilers_frames_of_the_days_snapshots() -> None:
    events = desktop_day(first=101)
    frames = compiled_frames(list(reversed(events)), START, ZONE)  # any order
    assert [
        (f["app"], f["start"], f["end"], f["evidence"]["rows"], f["monitor"]) for f in frames
    ] == [
        ("Code", "2024-05-06T09:00:00+02:00", "2024-05-06T09:10:00+02:00", "101-120", "m1"),
        ("Mail", "2024-05-06T09:10:00+02:00", "2024-05-06T09:19:30+02:00", "121-140", "m1"),
    ]
    assert compiled_frames(events, START, ZONE) == frames


def test_stored_frames_give_the_days_frames_or_none() -> None:
    frames = ({"id": "f-1"},)
    source = stored_frames({START: frames})
    assert source([], START, ZONE) == frames
    assert source([], START + timedelta(days=1), ZONE) == ()


class Source:
    """A frame source over fixed frames, counting its compiles."""

    def __init__(self, frames: list[dict[str, Any]]) -> None:
        self.frames = frames
        self.calls: list[tuple[tuple[int, ...], date, ZoneInfo]] = []

    def __call__(self, events: Any, day: date, zone: ZoneInfo) -> list[dict[str, Any]]:
        self.calls.append((tuple(e.id for e in events), day, zone))
        return self.frames


FRAMES = [
    {"id": "a", "evidence": {"rows": "1-3"}},
    {"id": "b", "evidence": {"rows": "4"}},
    {"id": "c", "evidence": {"rows": "3,5"}},
    {"id": "d", "evidence": {}},
    {"id": "e"},
]


def test_open_frames_recompile_after_five_minutes_and_keep_frames_on_seen_rows() -> None:
    source = Source(FRAMES)
    s = MemoryStream("desktop", ZONE, POLICIES["rules"], frame_source=source)
    events = [snap(i, START, 10, 0, i) for i in (1, 2, 3)]

    def ids(found: Any) -> list[str]:
        return [f["id"] for f in found]

    assert ids(s._open_frames(START, events)) == ["a", "d", "e"]
    assert source.calls == [((1, 2, 3), START, ZONE)]
    events.append(snap(4, START, 10, 4, 59))  # under five minutes after the last compile
    assert ids(s._open_frames(START, events)) == ["a", "b", "d", "e"]
    assert len(source.calls) == 1
    events.append(snap(5, START, 10, 5, 3))  # five minutes after the compiled rows' newest
    assert ids(s._open_frames(START, events)) == ["a", "b", "c", "d", "e"]
    assert [c[0] for c in source.calls] == [(1, 2, 3), (1, 2, 3, 4, 5)]
    assert s._frames_cache is not None and s._frames_cache[1] == events[-1].at
    # Another day compiles afresh; a day with no events yet shows no frames.
    other = [snap(9, START + timedelta(days=1), 8, 0)]
    assert ids(s._open_frames(START + timedelta(days=1), other)) == ["d", "e"]
    assert len(source.calls) == 3
    assert s._open_frames(START + timedelta(days=2), []) == ()
    assert ids(s._open_frames(START + timedelta(days=1), [])) == ["d", "e"]
    assert len(source.calls) == 3


def test_open_frames_read_the_events_given_when_the_prefix_shrinks_or_one_comes_late() -> None:
    # The ids a frame must rest on are kept from call to call while the day only grows; an
    # earlier moment (fewer events) or an event placed before the last read's newest is read
    # afresh.
    s = MemoryStream("desktop", ZONE, POLICIES["rules"], frame_source=Source(FRAMES))

    def ids(found: Any) -> list[str]:
        return [f["id"] for f in found]

    one, two, three, five = (snap(i, START, 10, 0, i) for i in (1, 2, 3, 5))
    assert ids(s._open_frames(START, [one, two, three])) == ["a", "d", "e"]
    assert ids(s._open_frames(START, [one, two])) == ["d", "e"]
    assert ids(s._open_frames(START, [one, two, three, five])) == ["a", "c", "d", "e"]
    late = snap(4, START, 10, 0, 4)  # row 4, placed before 5 (it came late)
    assert ids(s._open_frames(START, [one, two, three, late])) == ["a", "b", "d", "e"]
    assert ids(s._open_frames(START, [one, two, three, late, five])) == [
        "a",
        "b",
        "c",
        "d",
        "e",
    ]


def test_a_decision_point_is_never_committed() -> None:
    # The day's extraction reads the committed events as they are kept, so a point among them
    # would be read as an event of the day.
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    point = EngineEvent(5, at_local(START, 9, 0), POINT_KIND, {"type": "home_segment"})
    for commit in (s.ingest, s.process):
        with pytest.raises(ValueError, match="a decision point is decided on, never committed"):
            commit(point)
    assert s._open == {} and list(s._recent) == [] and s.decisions == [] and s.log == []


def test_open_frames_without_a_source_are_none() -> None:
    s = MemoryStream("desktop", ZONE, POLICIES["rules"])
    assert s._open_frames(START, [snap(1, START, 10, 0)]) == ()


def test_a_desktop_day_is_closed_and_read_on_its_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    import memory.engine.stream as stream_module

    seen: list[dict[str, Any]] = []

    def recording(scope: str, events: Any, day: date, zone: ZoneInfo, **kw: Any) -> Any:
        seen.append({"scope": scope, "day": day, "zone": zone, "n": len(events), **kw})
        return close_day(scope, events, day, zone, **kw)

    monkeypatch.setattr(stream_module, "close_day", recording)
    events = desktop_day()
    frames = compiled_frames(events, START, ZONE)
    source = Source(list(frames))
    s = MemoryStream(
        "desktop", ZONE, Recorder(frozenset({TODAY})), frame_source=source, validate=False
    )
    s.run(events[:3])
    assert source.calls == [((1,), START, ZONE)]  # compiled once: the rows are 30 s apart
    opened = seen[-1]
    assert (opened["scope"], opened["day"], opened["zone"], opened["n"]) == (
        "desktop",
        START,
        ZONE,
        2,
    )
    assert opened["cache"] is s._day_caches[START] and opened["validate"] is False
    assert opened["frames"] == []  # no frame rests wholly on the first two rows
    s.run(events[3:] + [snap(100, START + timedelta(days=1), 8, 0)])
    # The close comes after a decision on the next day, and still extends the open day's
    # extraction (its cache) instead of extracting the day afresh.
    closing = next(c for c in seen if c["day"] == START and c["n"] == 40)
    assert closing["frames"] == frames and closing["cache"] is opened["cache"]
    assert START not in s._day_caches
    assert source.calls[-1] == (tuple(range(1, 41)), START, ZONE)
    assert s.closed[START].record.observations  # the frames' facts are in the day's record


def test_only_a_desktop_stream_reads_frames_and_days_are_validated_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memory.engine.stream as stream_module

    validated: list[bool] = []

    def recording(*args: Any, **kw: Any) -> Any:
        validated.append(kw["validate"])
        assert kw["frames"] == ()
        return close_day(*args, **kw)

    monkeypatch.setattr(stream_module, "close_day", recording)
    source = Source(FRAMES)
    s = MemoryStream("home", ZONE, Recorder(frozenset({TODAY})), frame_source=source)
    s.run(days(2))
    assert source.calls == []
    assert validated and all(v is True for v in validated)


# -- decision points -----------------------------------------------------------------------------


def test_decide_point_runs_steps_one_to_five_and_commits_nothing() -> None:
    s = MemoryStream("home", ZONE, Recorder(frozenset()))
    s.run(days(1))
    log, recent, opened = list(s.log), list(s._recent), dict(s._open)
    state = s.control_state
    point = EngineEvent(
        77, at_local(START + timedelta(days=1), 10, 0), POINT_KIND, {"type": "home_segment"}
    )
    outcome = s.decide_point(point)
    assert s.log == [*log, ("read", 77), ("decide", 77), ("store", 77)]
    assert s.decisions[-1] is outcome and outcome.event_id == 77
    assert list(s._recent) == recent and s._open.keys() == opened.keys()
    assert s.closed == {}  # a point on a later day closes nothing
    assert list(s._recent_points) == [point]
    assert s.control_state != state  # the intervention was allowed and is remembered


def test_decide_point_refuses_an_event_and_a_late_point() -> None:
    s = MemoryStream("home", ZONE, POLICIES["rules"])
    with pytest.raises(ValueError) as refused:
        s.decide_point(motion(5, START, 7, 0, "kitchen"))
    assert str(refused.value) == "5: a decision point has kind 'decision_point'"
    s.run(days(2))
    with pytest.raises(LateEvent):
        s.decide_point(EngineEvent(6, at_local(START, 9, 0), POINT_KIND, {"type": "home_segment"}))
    assert list(s._recent_points) == []


# -- fork ----------------------------------------------------------------------------------------


def test_a_fork_has_every_part_of_memory_in_its_own_containers() -> None:
    source = stored_frames({START: compiled_frames(desktop_day(), START, ZONE)})
    s = MemoryStream("desktop", ZONE, Recorder(frozenset({TODAY})), frame_source=source)
    s.run(desktop_day()[:30])
    s.decide_point(EngineEvent(90, at_local(START, 9, 5), POINT_KIND, {"type": "frame_end"}))
    copy = s.fork()
    assert (copy.scope, copy.zone, copy.policy, copy.frame_source, copy.validate) == (
        "desktop",
        ZONE,
        s.policy,
        source,
        True,
    )
    assert s.fork().validate is True and replace(s, validate=False).fork().validate is False
    assert (copy.log, copy.decisions, copy.closed, copy.tracked) == (
        s.log,
        s.decisions,
        s.closed,
        s.tracked,
    )
    assert copy.control_state == s.control_state
    for mine, theirs in ((copy._recent, s._recent), (copy._recent_points, s._recent_points)):
        assert list(mine) == list(theirs) and mine is not theirs
        assert mine.maxlen == theirs.maxlen == RECENT_MAX_PRIOR
    assert copy._open == s._open and copy._open[START] is not s._open[START]
    assert s._today_cache is not None and copy._today_cache == s._today_cache
    assert list(copy._day_caches) == list(s._day_caches) == [START]
    assert s._frames_cache is not None and copy._frames_cache == s._frames_cache
    for part in ("views", "indexes", "verdicts"):
        mine, theirs = getattr(copy._day_caches[START], part), getattr(s._day_caches[START], part)
        assert mine == theirs and mine is not theirs
    # The open day's views, leaf indexes and verdicts were cached.
    cached, copied = s._day_caches[START], copy._day_caches[START]
    assert cached.views and cached.indexes and cached.verdicts
    assert copied.opened is not None and copied.opened is not cached.opened
    # Going on from the fork reads the same as going on from the original.
    later = desktop_day()[30:]
    copy.run(later)
    s.run(later)
    assert copy.decisions == s.decisions and copy._today_cache == s._today_cache


# Zones with a DST change at midnight or a half hour, one far east, one without DST.
_ZONES = ["Europe/Paris", "America/Santiago", "Asia/Beirut", "Australia/Lord_Howe",
          "Pacific/Kiritimati", "America/Havana", "UTC"]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    zone=st.sampled_from(_ZONES),
    first=st.integers(1_546_300_800, 1_798_675_200),  # 2019 to 2026, in Unix seconds
    steps=st.lists(st.integers(0, 6 * 3600 * 10**6), min_size=1, max_size=40),
    offset=st.sampled_from([UTC, ZoneInfo("America/New_York"), None]),
)
def test_each_event_is_of_its_local_day_across_dst_changes(zone, first, steps, offset) -> None:
    # An event's local day is known from the last event's day while both share one UTC offset
    # all day (local_day_span); across a DST day each event is converted itself.
    from memory.engine.stream import local_day_span

    stream = MemoryStream("home", ZoneInfo(zone), POLICIES["rules"])
    at = datetime.fromtimestamp(first, UTC)
    for number, step in enumerate(steps, start=1):
        at += timedelta(microseconds=step)
        shown = at if offset is None else at.astimezone(offset)
        event = EngineEvent(number, shown, "observation", {"type": "motion", "value": "ON"})
        expected = at.astimezone(ZoneInfo(zone)).date()
        assert stream._check(event) == expected
        span = local_day_span(expected, ZoneInfo(zone))
        if span is not None:
            start, end, day = span
            assert day == expected and start <= at < end
            assert (start - timedelta(microseconds=1)).astimezone(ZoneInfo(zone)).date() < day
            assert end.astimezone(ZoneInfo(zone)).date() > day


def test_a_dst_day_is_not_known_by_its_bounds() -> None:
    from memory.engine.stream import local_day_span

    paris = ZoneInfo("Europe/Paris")
    assert local_day_span(date(2024, 3, 31), paris) is None  # 23 hours long
    assert local_day_span(date(2024, 10, 27), paris) is None  # 25 hours long
    start, end, _ = local_day_span(date(2024, 3, 30), paris)  # type: ignore[misc]
    assert end - start == timedelta(hours=24)
    # Santiago's clocks jump from 00:00 to 01:00: the day starts at 01:00 and keeps one offset
    # through its 23 hours, which are then known by their bounds.
    santiago = ZoneInfo("America/Santiago")
    start, end, _ = local_day_span(date(2022, 9, 11), santiago)  # type: ignore[misc]
    assert end - start == timedelta(hours=23)
    assert start.astimezone(santiago).time() == time(1)
