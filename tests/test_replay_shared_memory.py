"""Validated memory and memory without validation share one ``MemoryStream`` in a replay until
the validator first rejects a segment; the decisions are those of separate memories.

The deterministic extractors cite exactly their events, so the real validator rejects nothing
on the bundled streams. Here it is replaced by one that rejects chosen segments, so that the
``no_validation`` ablation's memory must part from the validated one: at a decision point
(the open day's record rejects a segment) or at a day's close (a day without points, first
read whole when it closes).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta

import pytest

from benchmark.methods.registry import STANDARD, UNVALIDATED, methods_named
from benchmark.replay import StreamRun, _Memories, engine_event, point_event, replay
from benchmark.streams.build import build_stream
from benchmark.streams.records import DecisionPoint, Step, Stream, StreamEvent
from memory.engine import day as day_module
from memory.engine.control import ControlState
from memory.engine.decide import EventOnlyPolicy, RulesPolicy
from memory.engine.stream import MemoryStream, decide_on
from memory.engine.validate import Verdict
from memory.engine.validate import validate_segment as real_validate
from tests.test_replay_point_by_point import ZONE, _event

START = date(2025, 3, 3)
# recent_memory reads the open day at every point, so a rejection there is seen at once.
METHODS = ["proactmem", "event_only", "recent_memory", "no_trajectory", "no_validation"]


def _stream(days: int = 9) -> Stream:
    events: list[StreamEvent] = []

    def at(day: int, minute: int) -> datetime:
        d = START + timedelta(days=day)
        return datetime(d.year, d.month, d.day, tzinfo=ZONE) + timedelta(minutes=minute)

    for day in range(days):
        for room, minute in (("Bedroom", 420), ("Kitchen", 450), ("Bathroom", 480 + day)):
            events.append(
                _event(len(events) + 1, at(day, minute), "motion", "ON", f"M{room}", room)
            )
        events.append(_event(len(events) + 1, at(day, 600), "door", "OPEN", "FrontDoor", "Entry"))
        events.append(_event(len(events) + 1, at(day, 640), "door", "CLOSE", "FrontDoor", "Entry"))
        events.append(
            _event(len(events) + 1, at(day, 1140), "lamp", "ON", "KitchenLight", "Kitchen")
        )
    return build_stream("home-made", "home", events, ZONE).without_private()


def _day(step: Step) -> date:
    return step.at.astimezone(ZONE).date()


def _rejecting(rejected: list[date], when) -> object:
    def validate(segment, events_by_id, day, zone, *, index_cache=None):
        if when(segment, day):
            rejected.append(day)
            return Verdict(False, "rejected by the test")
        return real_validate(segment, events_by_id, day, zone, index_cache=index_cache)

    return validate


Split = tuple[Step, Step | None, _Memories]


def _splits(monkeypatch: pytest.MonkeyPatch) -> list[Split]:
    """Where each replay's memories parted: the last step the unvalidated memory was built
    from on its own, the next step (None at the stream's end), and the replay's memories."""
    splits: list[Split] = []
    split = _Memories.split

    def spy(self: _Memories, steps: list[Step], number: int) -> None:
        following = steps[number - 1] if number <= len(steps) else None
        splits.append((steps[number - 2], following, self))
        split(self, steps, number)

    monkeypatch.setattr(_Memories, "split", spy)
    return splits


def _held_apart(stream: Stream, memories: _Memories) -> None:
    """At the end of the run each variant holds what a memory of its own, fed the whole
    stream, holds; and they differ (the rejected segments)."""
    for variant, validate in ((STANDARD, True), (UNVALIDATED, False)):
        alone = MemoryStream("home", ZONE, RulesPolicy(), validate=validate)
        for event in stream.events:
            alone.ingest(engine_event(event))
        held = memories.of(variant)
        assert _records(held) == _records(alone), variant
    assert _records(memories.of(STANDARD)) != _records(memories.of(UNVALIDATED))


def _records(memory: MemoryStream) -> list[object]:
    return [c.record for _, c in sorted(memory.closed.items())]


def _decisions(run: StreamRun, name: str) -> list[tuple[object, ...]]:
    return [(d.point, d.action, d.proposed, d.message, d.evidence) for d in run.decisions[name]]


def _each_alone(stream: Stream) -> dict[str, StreamRun]:
    return {name: replay(stream, methods_named([name])) for name in METHODS}


def _same_as_alone(stream: Stream) -> StreamRun:
    together = replay(stream, methods_named(METHODS))
    alone = _each_alone(stream)
    for name in METHODS:
        assert _decisions(together, name) == _decisions(alone[name], name), name
    return together


def test_without_rejections_the_shared_memory_decides_as_separate_ones() -> None:
    _same_as_alone(_stream())


def test_a_rejection_at_a_point_parts_the_memories(monkeypatch: pytest.MonkeyPatch) -> None:
    # From the seventh day, every device segment (the door, the lamp) is rejected: the open
    # day's record at a point after ten o'clock is the first to hold one.
    rejected: list[date] = []
    late = START + timedelta(days=6)
    when = lambda segment, day: day >= late and segment.kind == "device_use"  # noqa: E731
    monkeypatch.setattr(day_module, "validate_segment", _rejecting(rejected, when))
    splits = _splits(monkeypatch)
    _same_as_alone(_stream())
    assert rejected, "the test's validator rejected nothing"
    # Parted once, just before a decision point (the one whose open day held the rejection).
    assert len(splits) == 1
    _, following, memories = splits[0]
    assert isinstance(following, DecisionPoint) and _day(following) >= late
    _held_apart(_stream(), memories)


def test_a_rejection_at_a_close_parts_the_memories(monkeypatch: pytest.MonkeyPatch) -> None:
    # Day five has no decision points, so its record is first built when it closes (while an
    # event of day six is ingested); that day's segments are all rejected.
    stream = _stream()
    quiet = START + timedelta(days=5)
    stream = replace(
        stream, points=tuple(p for p in stream.points if p.at.astimezone(ZONE).date() != quiet)
    )
    rejected: list[date] = []
    monkeypatch.setattr(
        day_module, "validate_segment", _rejecting(rejected, lambda segment, day: day == quiet)
    )
    splits = _splits(monkeypatch)
    _same_as_alone(stream)
    assert rejected == [quiet] * len(rejected) and rejected
    # Parted once, right after the event whose ingestion closed the quiet day: the next day's
    # first.
    assert len(splits) == 1
    last, _, memories = splits[0]
    _held_apart(stream, memories)
    assert isinstance(last, StreamEvent) and _day(last) == quiet + timedelta(days=1)
    assert last == min(
        (e for e in stream.events if _day(e) == quiet + timedelta(days=1)), key=lambda e: e.at
    )


def test_policies_deciding_on_one_view_share_its_work_and_decide_as_on_their_own() -> None:
    # Retrieval and memory's judgement of the point are worked out once per view and kept by
    # what they depend on (the replay gate, blindness, the threshold): methods deciding one
    # after the other on a view decide as each would on a view of its own.
    stream = _stream(days=12)
    memory = MemoryStream("home", ZONE, RulesPolicy())
    ways = [
        (RulesPolicy(threshold=0.0), True, False),
        (RulesPolicy(threshold=1.0), True, False),
        (RulesPolicy(), False, False),
        (RulesPolicy(), False, True),
        (RulesPolicy(), True, True),
        (EventOnlyPolicy(), True, False),
    ]
    told_apart = blind_apart = 0
    for number, step in enumerate(stream.steps(), start=1):
        if isinstance(step, StreamEvent):
            memory.ingest(engine_event(step))
            continue
        current = point_event(step, number)
        shared = memory.view(current)
        together = [_proposed(shared, *way) for way in ways]
        alone = [_proposed(memory.view(current), *way) for way in ways]
        assert together == alone, step.key
        told_apart += together[0] != together[1]
        blind_apart += together[2] != together[3]
        memory.note_point(current)
    # The two thresholds part at some points, and so do blind and seeing retrieval (of the
    # habits, without the gate): work kept without what it depends on would fail.
    assert told_apart and blind_apart


def _proposed(view: object, policy: object, gate: bool, blind: bool) -> tuple[object, ...]:
    outcome, _ = decide_on(view, policy, ControlState(), gate=gate, blind=blind)
    proposed = outcome.controlled.proposed
    return proposed.action, proposed.intent, proposed.message, tuple(proposed.evidence_ids)


def _counting_decides(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    calls: list[object] = []
    decide = RulesPolicy.decide

    def spy(self: RulesPolicy, ctx: object) -> object:
        calls.append(ctx)
        return decide(self, ctx)

    monkeypatch.setattr(RulesPolicy, "decide", spy)
    return calls


def test_no_validation_sharing_memory_takes_proactmems_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # While the memories are one, no_validation decides on ProactMem's view with ProactMem's
    # policy from the same control state: the decision is made once, and both get it.
    stream = _stream()
    calls = _counting_decides(monkeypatch)
    together = replay(stream, methods_named(["proactmem", "no_validation"]))
    assert len(calls) == len(stream.points)
    assert _decisions(together, "no_validation") == _decisions(together, "proactmem")
    assert any(d.action == "intervene" for d in together.decisions["proactmem"])
    calls.clear()
    alone = replay(stream, methods_named(["no_validation"]))
    assert len(calls) == len(stream.points)
    assert _decisions(together, "no_validation") == _decisions(alone, "no_validation")


def test_once_the_memories_part_no_validation_decides_on_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rejected: list[date] = []
    late = START + timedelta(days=6)
    when = lambda segment, day: day >= late and segment.kind == "device_use"  # noqa: E731
    monkeypatch.setattr(day_module, "validate_segment", _rejecting(rejected, when))
    stream = _stream()
    splits = _splits(monkeypatch)
    calls = _counting_decides(monkeypatch)
    together = replay(stream, methods_named(["proactmem", "no_validation"]))
    assert rejected and len(splits) == 1
    # The memories part after ingesting an event or at a point (where the shared decision is
    # set aside and no_validation decides again on its own memory): one decision a point
    # before, two from there on.
    steps = list(stream.steps())
    last = splits[0][0]
    parted = next(i for i, step in enumerate(steps) if step is last)
    if isinstance(last, StreamEvent):
        parted += 1
    shared = sum(1 for step in steps[:parted] if isinstance(step, DecisionPoint))
    assert shared and len(calls) == shared + 2 * (len(stream.points) - shared)
    alone = replay(stream, methods_named(["no_validation"]))
    assert _decisions(together, "no_validation") == _decisions(alone, "no_validation")


def test_the_replay_keeps_what_was_alive_before_it_out_of_the_collectors_scans_until_it_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gc

    frozen: list[int] = []
    failing: list[bool] = []
    ingest = _Memories.ingest

    def spy(self: _Memories, *args: object) -> None:
        frozen.append(gc.get_freeze_count())
        if failing:
            raise RuntimeError("memory failed")
        ingest(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_Memories, "ingest", spy)
    gc.unfreeze()  # whatever an earlier test in this process left frozen
    replay(_stream(2), methods_named(["event_only"]))
    assert frozen and min(frozen) > 0 and gc.get_freeze_count() == 0
    # A replay that fails still gives the objects back to the collector.
    failing.append(True)
    with pytest.raises(RuntimeError, match="memory failed"):
        replay(_stream(2), methods_named(["event_only"]))
    assert gc.get_freeze_count() == 0
    # What someone else froze stays frozen.
    failing.clear()
    gc.freeze()
    try:
        replay(_stream(2), methods_named(["event_only"]))
        # Still frozen (unfreezing empties the permanent generation; a frozen object that dies
        # leaves it, so the count itself may fall).
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_what_the_replay_builds_to_keep_is_frozen_as_it_goes_and_given_back_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gc

    import benchmark.replay as replay_module

    monkeypatch.setattr(replay_module, "KEEP_EVERY", 4)
    seen: list[tuple[bool, bool, bool]] = []
    first: list[object] = []
    ingest = _Memories.ingest

    def spy(self: _Memories, event: object, steps: list[Step], number: int) -> None:
        if not first:
            first.append(event)  # memory keeps it (its recent events, the open day)
        tracked = gc.get_objects()
        seen.append(
            (
                any(o is steps for o in tracked),
                any(o is first[0] for o in tracked),
                gc.isenabled(),
            )
        )
        ingest(self, event, steps, number)  # type: ignore[arg-type]

    monkeypatch.setattr(_Memories, "ingest", spy)
    stream = _stream(3)
    gc.unfreeze()  # whatever an earlier test in this process left frozen
    assert gc.isenabled()
    run = replay(stream, methods_named(["proactmem", "event_only"]))
    # The steps are built before the first step and kept out of every generation; the first
    # event memory took in is still in one when it is taken in, and frozen a few steps later.
    assert len(seen) > 8 and not any(steps for steps, _, _ in seen)
    assert seen[0][1] and not seen[-1][1]
    assert all(enabled for _, _, enabled in seen)  # paused only while the steps were built
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    assert any(o is first[0] for o in gc.get_objects())  # given back to the collector
    # A collector the caller switched off stays off.
    gc.disable()
    try:
        again = replay(stream, methods_named(["proactmem", "event_only"]))
        assert not gc.isenabled()
    finally:
        gc.enable()
    # Freezing changes nothing a method decides: as a replay that does not own the freeze.
    gc.freeze()
    try:
        other = replay(stream, methods_named(["proactmem", "event_only"]))
    finally:
        gc.unfreeze()
    assert run.decisions == again.decisions == other.decisions
