"""The in-memory causal loop (memory/engine/stream.py): order, causality, day close, late events."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory.engine.day import close_day
from memory.engine.decide import POLICIES, DecisionContext
from memory.engine.records import EngineEvent
from memory.engine.stream import LateEvent, MemoryStream

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
