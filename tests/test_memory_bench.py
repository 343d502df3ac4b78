"""SYNTHETIC ProactMem benchmark streams: valid events, deterministic, routines that activate."""

from __future__ import annotations

import pytest

from aframes_web.streams.records import validate_batch
from benchmark.memory import replay
from benchmark.synthetic.memory_streams import SCOPES, generate

# Short streams keep the test fast; the engine needs three fulfilled days and two days without
# the trigger to activate a routine.
DAYS = {"sports": 6, "home": 8, "code": 7, "desktop": 7}


@pytest.mark.parametrize("scope", SCOPES)
def test_generated_events_pass_the_projects_own_validation(scope: str) -> None:
    items = generate(scope, days=3, seed=3)
    assert items
    batch = validate_batch(items, scope=scope, store_text=False)
    assert batch.errors == []
    assert len({item["source_key"] for item in items}) == len(items)
    assert [i["occurred_at"] for i in items] == sorted(i["occurred_at"] for i in items)


@pytest.mark.parametrize("scope", SCOPES)
def test_the_same_seed_gives_the_same_stream_and_another_seed_another(scope: str) -> None:
    assert generate(scope, days=2, seed=5) == generate(scope, days=2, seed=5)
    assert generate(scope, days=2, seed=5) != generate(scope, days=2, seed=6)


@pytest.mark.parametrize("scope", SCOPES)
def test_the_planted_routine_activates_a_regularity_in_a_short_replay(scope: str) -> None:
    # A coarser desktop day (one snapshot per app or window change, else one per 10 min).
    run = replay(scope, generate(scope, days=DAYS[scope], seed=7, desktop_gap_s=600))
    assert run.memory["closed_days"] == DAYS[scope]
    assert run.memory["regularities"].get("active", 0) >= 1, run.memory
    assert len(run.decide_ms) == run.events
