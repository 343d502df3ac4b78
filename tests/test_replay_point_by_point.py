"""The one-pass replay decides as memory rebuilt from scratch before each point would.

``benchmark.replay`` keeps memory incrementally: the open day's extraction is extended event by
event and reused when the day closes, expectations grow as points are decided, several methods
share one memory. None of that may change a decision: at any point, a memory that ingests the
stream's earlier events from empty (closing each day afresh, its open day extracted once) and
decides there must propose what the replay proposed. Hand-made home streams of random
routines, doors and lamps (hypothesis), checked at a sample of their points.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from benchmark.methods.registry import methods_named
from benchmark.replay import engine_event, point_event, replay
from benchmark.streams.build import build_stream
from benchmark.streams.records import Stream, StreamEvent
from memory.engine.control import ControlState
from memory.engine.decide import EventOnlyPolicy, RulesPolicy
from memory.engine.records import EngineEvent
from memory.engine.stream import MemoryStream, decide_on

ZONE = ZoneInfo("Europe/Madrid")
START = date(2025, 3, 3)
ROOMS = ("Bedroom", "Kitchen", "Bathroom", "Living")


def _event(n: int, at: datetime, kind: str, value: str, sensor: str, room: str) -> StreamEvent:
    payload = {"type": kind, "value": value, "attributes": {"sensor": sensor, "room": room}}
    return StreamEvent(n, at, "observation", payload, f"e{n}")


day_plan = st.tuples(
    st.lists(st.tuples(st.sampled_from(ROOMS), st.integers(6 * 60, 23 * 60)), max_size=6),
    st.integers(0, 300),  # minutes the front door stays open (0: not opened)
    st.integers(7 * 60, 20 * 60),  # when it opens
    st.booleans(),  # the kitchen lamp left on for two hours
)


def _stream(plans: list[tuple[list[tuple[str, int]], int, int, bool]]) -> Stream:
    events: list[StreamEvent] = []

    def at(day: int, minute: int) -> datetime:
        d = START + timedelta(days=day)
        return datetime(d.year, d.month, d.day, tzinfo=ZONE) + timedelta(minutes=minute)

    for day, (visits, door_open, door_at, lamp) in enumerate(plans):
        # Every day: up at seven in the bedroom, breakfast in the kitchen at half past.
        moves = [("Bedroom", 7 * 60), ("Kitchen", 7 * 60 + 30), *visits]
        for room, minute in moves:
            events.append(
                _event(len(events) + 1, at(day, minute), "motion", "ON", f"M{room}", room)
            )
        if door_open:
            opened, closed = at(day, door_at), at(day, min(door_at + door_open, 23 * 60 + 50))
            events.append(_event(len(events) + 1, opened, "door", "OPEN", "FrontDoor", "Entry"))
            events.append(_event(len(events) + 1, closed, "door", "CLOSE", "FrontDoor", "Entry"))
        if lamp:
            events.append(
                _event(len(events) + 1, at(day, 19 * 60), "lamp", "ON", "KitchenLight", "Kitchen")
            )
            events.append(
                _event(len(events) + 1, at(day, 21 * 60), "lamp", "OFF", "KitchenLight", "Kitchen")
            )
    return build_stream("home-made", "home", events, ZONE)


Seen = tuple[tuple[str, str, str], tuple[object, ...]]


def _seen(memory: MemoryStream, current: EngineEvent) -> Seen:
    """What both policies propose at ``current`` (no intervention control: its state is the
    decisions', not memory's), and the memory they read: today so far, the closed days, the
    regularities and their states."""
    view = memory.view(current)
    rules, _ = decide_on(view, RulesPolicy(), ControlState())
    base, _ = decide_on(view, EventOnlyPolicy(), ControlState())
    proposed = (
        rules.controlled.proposed.action,
        rules.controlled.proposed.message,
        base.controlled.proposed.action,
    )
    read = (
        view.today_of().observations,
        tuple(c.record for _, c in sorted(view.closed.items())),
        tuple(sorted((rid, t.state) for rid, t in view.tracked.items())),
    )
    return proposed, read


def _walk(stream: Stream, at: set[str] | None = None, stop: str = "") -> dict[str, Seen]:
    """One pass over the stream, recording what is seen at the points ``at``; or, with
    ``stop``, memory built from empty up to that point alone."""
    memory = MemoryStream("home", ZONE, RulesPolicy())
    found: dict[str, Seen] = {}
    for number, step in enumerate(stream.steps(), start=1):
        if isinstance(step, StreamEvent):
            memory.ingest(engine_event(step))
            continue
        current = point_event(step, number)
        if step.key == stop or (at is not None and step.key in at):
            found[step.key] = _seen(memory, current)
            if step.key == stop:
                return found
        memory.note_point(current)
    return found


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    # No shrinking: a failure names its point, and shrinking a replay takes minutes.
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(plans=st.lists(day_plan, min_size=7, max_size=9), sample=st.randoms(use_true_random=False))
def test_replay_decides_as_memory_rebuilt_from_scratch_before_each_point(plans, sample) -> None:
    stream = _stream(plans).without_private()
    run = replay(stream, methods_named(["proactmem", "event_only"]), control=False)
    points = list(stream.points)
    # The last two days (history long enough for memory to speak) and a few earlier points.
    late = [p for p in points if p.at >= points[-1].at - timedelta(days=2)]
    index = {p.key: i for i, p in enumerate(points)}
    keys = {p.key for p in sample.sample(late, min(6, len(late))) + sample.sample(points, 3)}
    one_pass = _walk(stream, at=keys)
    for key in sorted(keys, key=index.__getitem__):
        fast_rules = run.decisions["proactmem"][index[key]]
        fast_base = run.decisions["event_only"][index[key]]
        proposed, read = _walk(stream, stop=key)[key]
        assert (fast_rules.proposed, fast_rules.message, fast_base.proposed) == proposed, key
        assert one_pass[key] == (proposed, read), key
