"""The ProactMem benchmark's streams: the SYNTHETIC ones valid, deterministic, with routines that
activate and nothing always-true that can intervene; the real ones all found, one entity each."""

from __future__ import annotations

import pytest

from aframes_web.streams.records import validate_batch
from benchmark.synthetic.memory_streams import SCOPES, generate
from perf import real
from perf.memory import build, real_sources, replay, synthetic_sources
from tests.conftest import need_service

# Short streams keep the test fast; the engine needs three fulfilled days and two days without
# the trigger to activate a routine (the planted sports walk needs about three weeks of them).
DAYS = {"sports": 20, "home": 8, "code": 7, "desktop": 7}


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
    [source] = synthetic_sources([scope], DAYS[scope], seed=7)
    # A coarser desktop day (one snapshot per app or window change, else one per 10 min).
    source.items = generate(scope, days=DAYS[scope], seed=7, desktop_gap_s=600)
    held = build(source)
    assert held.closed_days == DAYS[scope] and held.events == len(source.items)
    assert held.states["active"] >= 1 and len(held.active_lifts) == held.states["active"]
    assert held.intervening >= 1 and held.always_true == 0
    run = replay(source)
    assert run.memory["closed_days"] == DAYS[scope]
    assert len(run.decide_ms) == run.events


def test_the_real_streams_are_every_home_person_and_repository() -> None:
    need_service("shared data (../shared/data)", real.DATA.is_dir())
    sources = real_sources()
    by = {}
    for s in sources:
        by.setdefault(s.source, []).append(s)
    assert {k: v[0].scope for k, v in by.items()} == {
        "ordonez-a": "home",
        "ordonez-b": "home",
        "fitbit": "sports",
        "k8s": "code",
        "ants": "code",
    }
    assert len(by["fitbit"]) == 33 and len(by["k8s"]) > 1
    for s in sources:
        stamps = [(i["occurred_at"], i.get("source_key", "")) for i in s.items]
        assert stamps == sorted(stamps), s.key  # a causal stream: in time order
