"""ProactMem's service side: decide in causal order (ARCHITECTURE.md, principle 4), day close,
rebuild, resume."""

from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from aframes_web.streams.models import Entity, Event
from aframes_web.streams.services import entity_create, events_counted, events_ingest
from memory import selectors
from memory.models import Decision, Fact, Regularity, Segment, Trajectory
from memory.services.closing import late_days, memory_close_due, memory_rebuild
from memory.services.deciding import DecideRejected, decide_batch, memory_decide
from tests.home_streams import START, motion, routine_day, stream

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def home(team: Any) -> Entity:
    return entity_create(team=team, key="flat-1", scope="home", timezone_name="Europe/Paris")


def memory_rows(entity: Entity) -> dict[str, Any]:
    """Everything derived, without database ids or wall-clock times: what must be equal.

    Fact references name a segment by its first event's id; two entities fed the same stream
    hold different ids, so ids are shown as the events' source keys.
    """
    keys = dict(Event.objects.filter(entity=entity).values_list("pk", "source_key"))

    def named(value: Any) -> Any:
        if isinstance(value, str):
            return re.sub(r"@(\d+)", lambda m: "@" + keys[int(m.group(1))], value)
        if isinstance(value, list | tuple):
            return type(value)(named(v) for v in value)
        if isinstance(value, dict):
            return {k: named(v) for k, v in value.items()}
        return value

    return named(
        {
            "days": list(
                Trajectory.objects.filter(entity=entity)
                .order_by("day")
                .values_list("day", "event_count", "segment_count", "rejected_count", "fact_count")
            ),
            "segments": list(
                Segment.objects.filter(trajectory__entity=entity)
                .order_by("trajectory__day", "index")
                .values_list(
                    "trajectory__day", "index", "kind", "start", "end", "accepted", "reason"
                )
            ),
            # Sorted once ids are source keys: an order by ids would differ between entities.
            "facts": sorted(
                named(
                    list(
                        Fact.objects.filter(entity=entity).values_list(
                            "ref", "type", "path", "value", "grounded_event__source_key"
                        )
                    )
                ),
                key=repr,
            ),
            "regularities": list(
                Regularity.objects.filter(entity=entity)
                .order_by("rid")
                .values_list(
                    "rid", "state", "n_f", "n_v", "observable", "violation_run", "last_day"
                )
            ),
            "assessments": sorted(
                named(
                    [
                        (r.rid, a.day, a.outcome, tuple(a.fact_refs))
                        for r in Regularity.objects.filter(entity=entity)
                        for a in r.assessments.all()
                    ]
                ),
                key=repr,
            ),
            "transitions": sorted(
                named(
                    [
                        (r.rid, t.seq, t.day, t.from_state, t.to_state, tuple(t.fact_refs))
                        for r in Regularity.objects.filter(entity=entity)
                        for t in r.transitions.all()
                    ]
                ),
                key=repr,
            ),
        }
    )


def test_decide_follows_the_causal_order_and_reads_memory_without_the_event(home) -> None:
    steps: list[str] = []
    item = motion(START, 7, 0, "bedroom")
    result = memory_decide(entity=home, item=item, trace=steps.append)
    assert steps == ["read", "stage", "decide", "control", "store", "commit", "maintain"]
    decision = result.decision
    assert result.created and decision.event.source_key == item["source_key"]
    assert decision.action == "abstain" and decision.policy == "rules"
    # The only event is the current one: nothing earlier was in memory.
    assert decision.evidence == [] or all(not e.startswith("fact:") for e in decision.evidence)


def test_the_same_event_twice_returns_the_stored_decision_and_stores_nothing(home) -> None:
    item = motion(START, 7, 0, "bedroom")
    first = memory_decide(entity=home, item=item)
    again = memory_decide(entity=home, item=item)
    assert not again.created and again.decision.pk == first.decision.pk
    assert Event.objects.filter(entity=home).count() == Decision.objects.count() == 1


def test_an_invalid_event_is_rejected_by_field_and_nothing_is_stored(home) -> None:
    with pytest.raises(DecideRejected) as caught:
        memory_decide(entity=home, item={"occurred_at": "yesterday", "kind": "observation"})
    assert any(e["field"].startswith("occurred_at") for e in caught.value.errors)
    assert not Event.objects.exists() and not Decision.objects.exists()


def test_an_event_ingested_without_a_decision_cannot_be_decided_afterwards(home) -> None:
    item = motion(START, 7, 0, "bedroom")
    events_ingest(entity=home, items=[item])
    with pytest.raises(DecideRejected) as caught:
        memory_decide(entity=home, item=item)
    assert "without a decision" in caught.value.errors[0]["message"]


def test_unknown_policy_is_refused_with_the_choices(home) -> None:
    with pytest.raises(ValueError, match="event_only"):
        memory_decide(entity=home, item=motion(START, 7, 0, "bedroom"), policy="oracle")


def test_days_close_when_the_stream_moves_past_them_and_ground_truth_never_enters(home) -> None:
    decide_batch(entity=home, items=stream(3))
    days = list(Trajectory.objects.filter(entity=home).values_list("day", flat=True))
    assert days == [START, START + timedelta(days=1)]  # the third day is still open
    facts = Fact.objects.filter(entity=home)
    assert facts.exists()
    assert all(f.grounded_event_id for f in facts)
    assert not any("private" in f.path or f.value == "secret-label" for f in facts)


def test_a_planted_routine_activates_and_a_deviation_is_intervened_on_once(home) -> None:
    decide_batch(entity=home, items=stream(6))
    routine = [
        r
        for r in Regularity.objects.filter(entity=home, state="active")
        if r.proposal["trigger"]["value"] == "bedroom"
        and r.proposal["behavior"]["value"] == "kitchen"
    ]
    assert routine, list(Regularity.objects.values_list("summary", "state"))
    rids = {r.rid for r in routine}  # the miner may propose it with more than one window
    deviation = START + timedelta(days=6)
    extra = [motion(deviation, 8, m, "study", m) for m in (15, 20, 25)]
    items = sorted(routine_day(deviation, kitchen=False) + extra, key=lambda i: i["occurred_at"])
    results = [r.decision for r in decide_batch(entity=home, items=items)]
    acted = [d for d in results if d.action == "intervene"]
    assert acted, [(d.occurred_at, d.message) for d in results]
    first = acted[0]
    assert set(first.regularity_ids) & rids, Regularity.objects.get(
        rid=first.regularity_ids[0]
    ).summary
    assert all(r in first.evidence for r in first.regularity_ids)
    assert f"event:{first.event_id}" in first.evidence
    assert any(e.startswith("fact:") for e in first.evidence)
    # The cited facts of the open day are kept as seen, and still name stored facts once the
    # day has closed (references survive the day's growth).
    seen = {f["ref"]: f for f in first.facts_seen}
    assert seen and set(seen) <= set(first.evidence)
    decide_batch(entity=home, items=routine_day(deviation + timedelta(days=1)))
    stored = {f.ref: f for f in Fact.objects.filter(entity=home, ref__in=list(seen))}
    assert set(stored) == set(seen)
    assert all(stored[r].value == seen[r]["value"] for r in seen)
    # Intervention control in the study: onset is allowed, confirmed and sustained re-enter as
    # stronger phases, and sustained again is a repeat: a suppressed abstention.
    study = [d for d in results if d.identity_key == first.identity_key]
    assert [(d.action, d.control_reason) for d in study] == [
        ("intervene", "first"),
        ("intervene", "stronger_phase"),
        ("intervene", "stronger_phase"),
        ("abstain", "repeat"),
    ]
    assert study[-1].suppressed and study[-1].suppressed_by == first.identity


def test_rebuild_equals_the_incrementally_kept_memory(home) -> None:
    decide_batch(entity=home, items=stream(7, skip=frozenset({2})))
    incremental = memory_rows(home)
    assert incremental["regularities"]
    memory_rebuild(entity=home)
    # The entity was fed a moment ago, so the clock closes nothing more than the stream did.
    assert memory_rows(home) == incremental


@pytest.mark.parametrize("cut", [1, 9, 23, 30])
def test_memory_is_the_same_processed_in_one_run_or_resumed_from_a_cut(team, cut) -> None:
    items = stream(6, skip=frozenset({3}))
    whole = entity_create(team=team, key="whole", scope="home", timezone_name="Europe/Paris")
    split = entity_create(team=team, key="split", scope="home", timezone_name="Europe/Paris")
    decide_batch(entity=whole, items=items)
    decide_batch(entity=split, items=items[:cut])
    memory_close_due(entity_id=split.pk)  # a worker restart runs the sweep: nothing changes
    decide_batch(entity=split, items=items[cut:])
    assert memory_rows(split) == memory_rows(whole)
    actions = [
        list(Decision.objects.filter(entity=e).order_by("occurred_at").values_list("action"))
        for e in (whole, split)
    ]
    assert actions[0] == actions[1]


def test_an_event_late_for_a_closed_day_rebuilds_memory_to_what_a_rebuild_gives(home) -> None:
    decide_batch(entity=home, items=stream(7))
    late = motion(START + timedelta(days=2), 7, 32, "kitchen", 9)
    events_ingest(entity=home, items=[late])
    memory_close_due(entity_id=home.pk)
    incremental = memory_rows(home)
    day = Trajectory.objects.get(entity=home, day=START + timedelta(days=2))
    assert (day.event_count, day.late_events) == (len(routine_day(START)) + 1, 1)
    memory_rebuild(entity=home)
    assert memory_rows(home) == incremental
    assert Trajectory.objects.get(entity=home, day=day.day).late_events == 1


def test_late_days_are_found_by_one_count_when_none_came_late(
    home: Entity, django_assert_num_queries: Any
) -> None:
    # Grouping every event by its local day would cost each close more as history grows: when
    # the events up to the newest closed day are as many as the closed days took in, one count
    # says nothing came late.
    decide_batch(entity=home, items=stream(5))
    with django_assert_num_queries(2):
        assert late_days(home) == {}
    # A late event stored behind maintenance's back (ingestion would rebuild memory at once).
    first = Event.objects.filter(entity=home).order_by("occurred_at").first()
    Event.objects.create(
        entity=home,
        occurred_at=first.occurred_at + timedelta(days=1, minutes=1),
        kind=first.kind,
        source_key="late-1",
        payload=first.payload,
        received_at=first.received_at,
    )
    events_counted(home.pk, 1)  # in the insert's transaction, as every insert counts it
    with django_assert_num_queries(3):
        assert late_days(home) == {START + timedelta(days=1): 1}


def test_a_day_imported_after_later_days_closed_is_taken_in_by_a_rebuild(home) -> None:
    items = stream(8)
    third = str(START + timedelta(days=3))
    day3 = [i for i in items if i["occurred_at"].startswith(third)]
    decide_batch(entity=home, items=[i for i in items if i not in day3])
    events_ingest(entity=home, items=day3)
    memory_close_due(entity_id=home.pk)
    incremental = memory_rows(home)
    assert START + timedelta(days=3) in [d[0] for d in incremental["days"]]
    memory_rebuild(entity=home)
    assert memory_rows(home) == incremental
    # Every regularity was assessed on that day, not skipped.
    assessed = {a[0] for a in incremental["assessments"] if a[1] == START + timedelta(days=3)}
    assert assessed == {r[0] for r in incremental["regularities"]}


def test_an_event_for_a_day_memory_moved_past_cannot_be_decided(home) -> None:
    decide_batch(entity=home, items=stream(3))
    with pytest.raises(DecideRejected) as closed:
        memory_decide(entity=home, item=motion(START, 20, 0, "kitchen", 5))
    assert "closed in memory" in closed.value.errors[0]["message"]
    # A day with no events yet, not closed, but a later day has events: memory moved past it.
    events_ingest(entity=home, items=[motion(START + timedelta(days=5), 7, 0, "bedroom", 3)])
    with pytest.raises(DecideRejected) as later:
        memory_decide(entity=home, item=motion(START + timedelta(days=4), 21, 0, "hall", 5))
    assert "already has events after" in later.value.errors[0]["message"]
    assert not Event.objects.filter(source_key__contains="21" + "00:hall").exists()


def test_a_new_entity_that_gets_a_deleted_ones_id_starts_from_its_own_memory(team) -> None:
    # SQLite gives a new row the id of a deleted one; the per-process caches of decide must not
    # serve the deleted entity's events (here: a later day, which would refuse this one).
    gone = entity_create(team=team, key="flat-old", scope="home", timezone_name="Europe/Paris")
    decide_batch(entity=gone, items=stream(3))
    reused = gone.pk
    gone.delete()
    fresh = Entity.objects.create(
        pk=reused, team=team, key="flat-new", scope="home", timezone="Europe/Paris", name="new"
    )
    result = memory_decide(entity=fresh, item=motion(START, 7, 0, "bedroom"))
    assert result.created and Event.objects.filter(entity=fresh).count() == 1


def test_a_stray_event_dated_in_the_future_closes_nothing(home, settings) -> None:
    # Ingestion refuses events past its tolerance; one within it (a tolerance set wide, or a
    # clock ahead by less) must still close nothing that has not ended.
    settings.AFRAMES_FUTURE_TOLERANCE_H = 24 * 365 * 20
    future = motion(START + timedelta(days=4000), 7, 0, "bedroom")
    events_ingest(entity=home, items=[future])
    decide_batch(entity=home, items=stream(3))
    closed = Trajectory.objects.filter(entity=home).order_by("day")
    assert [t.day for t in closed] == [START, START + timedelta(days=1)]
    per_day = Counter(item["occurred_at"][:10] for item in stream(3))
    assert [t.event_count for t in closed] == [per_day[t.day.isoformat()] for t in closed]


def test_decide_reads_a_bounded_number_of_queries_whatever_the_history(home) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    decide_batch(entity=home, items=stream(10))
    counts = []
    for item in routine_day(START + timedelta(days=10))[1:]:
        with CaptureQueriesContext(connection) as queries:
            memory_decide(entity=home, item=item)
        counts.append(len(queries.captured_queries))
    # Read, stage, store and the day summary: a few dozen, never one per fact, day or
    # regularity; the first event of a day also closes the day before, in a fixed number more.
    assert max(counts[1:]) <= 30 and counts[0] <= 60, counts


def test_the_last_closed_days_are_one_bounded_read_oldest_first(home) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    decide_batch(entity=home, items=stream(8))  # seven days closed, the eighth open
    every = selectors.day_records(home)  # each day read once in this process
    with CaptureQueriesContext(connection) as queries:
        found = selectors.day_records(home, before=START + timedelta(days=5), last=3)
    assert [r.day for r in found] == [START + timedelta(days=n) for n in (2, 3, 4)]
    assert found == every[2:5]
    assert len(queries.captured_queries) == 1
    assert "LIMIT 3" in queries.captured_queries[0]["sql"]
    assert selectors.day_records(home, before=START, last=3) == []


def test_typed_text_never_enters_memory(team, settings) -> None:
    settings.AFRAMES_STORE_INPUT_TEXT = True
    desk = entity_create(team=team, key="desk-1", scope="desktop", timezone_name="UTC")
    item = {
        "occurred_at": "2026-03-02T09:00:00Z",
        "kind": "input",
        "source_key": "i1",
        "payload": {"type": "text", "text": "my password", "app": "Code"},
    }
    decision = memory_decide(entity=desk, item=item).decision
    assert Event.objects.get(pk=decision.event_id).payload["text"] == "my password"
    from memory.selectors import engine_event

    assert "text" not in engine_event(decision.event).payload


def test_a_desktop_day_closes_only_on_its_compiled_frames(load, desktop) -> None:
    from datetime import date

    from benchmark.synthetic.desktop import generate_day

    day = date(2026, 3, 3)
    load(
        desktop,
        generate_day(day, seed=3, tz="Europe/Berlin")
        + generate_day(day + timedelta(days=1), seed=3, tz="Europe/Berlin"),
    )
    incremental = Trajectory.objects.get(entity=desktop, day=day)
    assert incremental.segments.filter(kind="frame").count() > 20
    figures = (incremental.segment_count, incremental.fact_count)
    memory_rebuild(entity=desktop)
    rebuilt = Trajectory.objects.get(entity=desktop, day=day)
    assert (rebuilt.segment_count, rebuilt.fact_count) == figures
