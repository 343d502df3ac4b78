"""Over a long history the service retires candidates as the engine does, and a day close reads
only what it must: the live regularities, the retired ones by id, the replay window's days."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from aframes_web.streams.services import entity_create, events_ingest
from benchmark.synthetic.memory_streams import ZONES, generate, local_day
from memory import selectors
from memory.engine.decide import RulesPolicy
from memory.engine.serial import state_to_fields
from memory.engine.stream import MemoryStream
from memory.models import STATE_RANK, Regularity, RegularityTally
from memory.services import closing
from tests.conftest import regularity_states

pytestmark = pytest.mark.django_db
DAYS = 45  # past the 28-day trial, so candidates retire


def _grown(team: Any, commits: Any) -> tuple[Any, list[date]]:
    items = generate("home", days=DAYS, seed=7, start=date(2025, 1, 6))
    entity = entity_create(team=team, key="long", scope="home", timezone_name=ZONES["home"])
    by_day: dict[date, list[dict[str, Any]]] = {}
    for item in items:
        by_day.setdefault(local_day(item, "home"), []).append(item)
    for day in sorted(by_day):
        with commits(execute=True):  # what ingestion queues runs (tasks eager): days close
            events_ingest(entity=entity, items=by_day[day])
    return entity, sorted(by_day)


def test_the_service_retires_what_the_engine_retires_and_keeps_the_same_states(
    team: Any, django_capture_on_commit_callbacks: Any
) -> None:
    entity, days = _grown(team, django_capture_on_commit_callbacks)
    closed = sorted(selectors.closed_days(entity))
    assert len(closed) == DAYS - 1
    engine = MemoryStream("home", ZoneInfo(ZONES["home"]), RulesPolicy())
    for day in days:
        for event in selectors.day_events(entity, day):
            engine.ingest(event)
    engine.close_through(closed[-1] + timedelta(days=1))
    retired = {rid for rid, t in engine.tracked.items() if t.state.state == "retired"}
    assert retired, "nothing retired over the long history"
    assert selectors.retired_ids(entity) == retired
    live = selectors.tracked(entity)
    assert set(live) == set(engine.tracked) - retired
    for rid, t in live.items():
        assert state_to_fields(t.state) == state_to_fields(engine.tracked[rid].state), rid
    stored = Regularity.objects.get(entity=entity, rid=min(retired))
    assert stored.state == "retired" and stored.trial_days == 28


def test_the_state_tally_follows_every_close_retirement_and_rebuild(
    team: Any, django_capture_on_commit_callbacks: Any
) -> None:
    entity, _ = _grown(team, django_capture_on_commit_callbacks)
    counts = regularity_states(entity)
    assert counts.get("retired") and len(counts) > 2  # states moved, not just created
    assert selectors.memory_summary(entity)["regularities"] == counts
    # The rank the lists are read in follows each state the close wrote.
    ranks = Regularity.objects.filter(entity=entity).values_list("state", "state_rank")
    assert all(rank == STATE_RANK.index(state) for state, rank in ranks)
    # A state every regularity has left is counted 0, never below.
    assert all(n >= 0 for n in RegularityTally.objects.values_list("count", flat=True))
    with django_capture_on_commit_callbacks(execute=True):
        closing.memory_rebuild(entity=entity)
    assert selectors.memory_summary(entity)["regularities"] == regularity_states(entity) == counts


def test_a_close_reads_live_regularities_and_the_replay_windows_days_only(
    team: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    entity, days = _grown(team, django_capture_on_commit_callbacks)
    read: dict[str, Any] = {}
    day_records, tracked = selectors.day_records, selectors.tracked

    def records_spy(entity: Any, wanted: Any = None) -> Any:
        read["days"] = sorted(wanted)
        return day_records(entity, read["days"])

    def tracked_spy(entity: Any, states: Any = None) -> Any:
        read["tracked"] = found = tracked(entity, states)
        return found

    monkeypatch.setattr(selectors, "day_records", records_spy)
    monkeypatch.setattr(selectors, "tracked", tracked_spy)
    monkeypatch.setattr(closing, "REPLAY_DAYS", 10)
    day = days[-1]
    with django_capture_on_commit_callbacks(execute=True):
        events_ingest(entity=entity, items=_next_day(day))  # the last day closes
    assert selectors.closed_days(entity) >= {day}
    assert read["days"] == [day - timedelta(days=n) for n in range(9, 0, -1)]
    assert all(t.state.state != "retired" for t in read["tracked"].values())


def _next_day(day: date) -> list[dict[str, Any]]:
    later = generate("home", days=1, seed=8, start=day + timedelta(days=1))
    return [{**item, "source_key": f"next-{item['source_key']}"} for item in later[:5]]


def test_closed_days_are_read_once_per_process_and_a_rebuilt_day_again(
    team: Any, django_capture_on_commit_callbacks: Any, django_assert_num_queries: Any
) -> None:
    entity, days = _grown(team, django_capture_on_commit_callbacks)
    window = sorted(selectors.closed_days(entity))[-10:]
    selectors._RECORDS.clear()
    first = selectors.day_records(entity, window)
    assert [r.day for r in first] == window and all(r.observations for r in first)
    with django_assert_num_queries(1):  # the trajectories' ids only: no fact is read again
        assert selectors.day_records(entity, window) == first
    with django_assert_num_queries(2):  # one day more: its facts alone
        more = selectors.day_records(entity, [window[0] - timedelta(days=1), *window])
    assert more[1:] == first

    # Rebuilt, the days are new trajectories (new rows), read anew; they hold the same facts.
    closing.memory_rebuild(entity=entity)
    with django_assert_num_queries(2):
        assert selectors.day_records(entity, window) == first
    # Shown in another zone, the times are read again in it.
    entity.timezone = "UTC"
    moved = selectors.day_records(entity, window)
    assert moved[0].observations[0].at.tzinfo == ZoneInfo("UTC")
    assert [o.at for o in moved[0].observations] == [o.at for o in first[0].observations]
