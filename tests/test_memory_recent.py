"""Recent events: the current event plus at most 99 prior events within 72 hours."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from memory.engine.recent import RECENT_MAX_PRIOR, RECENT_WINDOW, recent_events
from memory.engine.records import EngineEvent

NOW = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)


def _event(event_id: int, at: datetime) -> EngineEvent:
    return EngineEvent(id=event_id, at=at, kind="observation", payload={"type": "x"})


def test_keeps_the_99_latest_prior_events_then_the_current_one() -> None:
    current = _event(1000, NOW)
    prior = [_event(i, NOW - timedelta(minutes=i)) for i in range(1, 300)]
    got = recent_events(current, prior)
    assert len(got) == RECENT_MAX_PRIOR + 1 and got[-1] is current
    assert [e.id for e in got[:-1]] == list(range(99, 0, -1))  # oldest first


def test_leaves_out_events_older_than_72_hours_and_keeps_the_edge() -> None:
    current = _event(10, NOW)
    edge = _event(1, NOW - RECENT_WINDOW)
    older = _event(2, NOW - RECENT_WINDOW - timedelta(seconds=1))
    assert recent_events(current, [older, edge]) == (edge, current)


def test_never_sees_the_future_or_the_current_event_twice() -> None:
    current = _event(10, NOW)
    same_time_earlier_id = _event(9, NOW)
    same_time_later_id = _event(11, NOW)
    later = _event(3, NOW + timedelta(seconds=1))
    got = recent_events(current, [later, same_time_later_id, current, same_time_earlier_id])
    assert got == (same_time_earlier_id, current)


def test_the_answer_does_not_depend_on_input_order() -> None:
    current = _event(500, NOW)
    prior = [_event(i, NOW - timedelta(minutes=i % 37, seconds=i)) for i in range(1, 200)]
    shuffled = prior[:]
    random.Random(7).shuffle(shuffled)
    assert recent_events(current, prior) == recent_events(current, shuffled)


def test_a_naive_current_time_is_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        recent_events(_event(1, NOW.replace(tzinfo=None)), [])


def test_a_naive_current_time_is_a_clear_error() -> None:
    naive = EngineEvent(1, datetime.fromisoformat("2026-03-02T08:00:00"), "observation", {})
    with pytest.raises(ValueError, match="^the current event's time must be aware$"):
        recent_events(naive, [])
