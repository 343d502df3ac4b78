"""The entity's tally of events: kept by every insert, and what "did anything come late?" reads
in place of counting a whole history (ProactMem's caches; ARCHITECTURE.md, "How data flows")."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from aframes_web.streams.models import Entity, Event, EventTally
from aframes_web.streams.selectors import events_through
from aframes_web.streams.services import (
    BatchRejected,
    entity_create,
    events_counted,
    events_ingest,
    events_stage,
    events_store_staged,
    validate_events,
)
from memory.services import caches
from memory.services.closing import late_days
from memory.services.deciding import decide_batch, memory_decide
from tests.home_streams import START, ZONE, motion, stream

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def home(team: Any) -> Entity:
    return entity_create(team=team, key="flat-1", scope="home", timezone_name="Europe/Paris")


def tally(entity: Entity) -> int:
    row = EventTally.objects.filter(entity=entity).first()
    return 0 if row is None else row.stored


def store_by_hand(entity: Entity, at: datetime, key: str, payload: dict[str, Any]) -> Event:
    """A row stored outside ingestion, as a concurrent batch's would land, not yet counted."""
    return Event.objects.create(
        entity=entity,
        occurred_at=at,
        kind="observation",
        source_key=key,
        payload=payload,
        received_at=at,
    )


def test_every_insert_path_counts_what_it_stored_and_no_duplicate(home: Entity) -> None:
    assert tally(home) == 0  # no events, no row
    items = stream(3)
    events_ingest(entity=home, items=items[:10])
    assert tally(home) == 10
    events_ingest(entity=home, items=items[:12])  # ten repeats are duplicates
    assert tally(home) == 12
    staged = events_stage(validate_events(entity=home, items=items[10:16]))
    events_store_staged(entity=home, rows=staged)  # the import path (COPY on PostgreSQL)
    assert tally(home) == 16
    memory_decide(entity=home, item=items[16])  # an event decided on is stored with its decision
    assert tally(home) == 17 == Event.objects.filter(entity=home).count()


def test_a_batch_rolled_back_or_rejected_counts_nothing(home: Entity) -> None:
    events_ingest(entity=home, items=stream(1))
    before = tally(home)
    with pytest.raises(RuntimeError), transaction.atomic():
        events_ingest(entity=home, items=stream(2)[-3:])
        raise RuntimeError("the request failed after storing")
    bad = [*stream(2)[-3:], {"occurred_at": "not a time", "kind": "observation"}]
    with pytest.raises(BatchRejected):
        events_ingest(entity=home, items=bad)
    assert tally(home) == before == Event.objects.filter(entity=home).count()


def test_events_through_counts_up_to_the_mark_in_time_and_id_order(home: Entity) -> None:
    events_ingest(entity=home, items=stream(4))
    rows = list(Event.objects.filter(entity=home).order_by("occurred_at", "pk"))
    for n, row in enumerate(rows):
        assert events_through(home.pk, row.occurred_at, row.pk) == n + 1
        assert events_through(home.pk, row.occurred_at) == sum(
            1 for r in rows if r.occurred_at < row.occurred_at
        )
    assert events_through(home.pk, rows[-1].occurred_at + timedelta(days=1)) == len(rows)
    other = entity_create(team=home.team, key="flat-2", scope="home", timezone_name="UTC")
    assert events_through(other.pk, rows[-1].occurred_at) == 0


def test_events_through_reads_the_tally_not_the_history(home: Entity) -> None:
    # Its cost must follow the events after the mark: a row before the mark that the tally
    # does not hold is not seen (no insert of the product leaves one; this one is by hand).
    events_ingest(entity=home, items=stream(3))
    last = Event.objects.filter(entity=home).order_by("occurred_at", "pk").last()
    held = events_through(home.pk, last.occurred_at, last.pk)
    store_by_hand(home, last.occurred_at - timedelta(days=1), "uncounted", {"type": "motion"})
    assert events_through(home.pk, last.occurred_at, last.pk) == held
    events_counted(home.pk, 1)
    assert events_through(home.pk, last.occurred_at, last.pk) == held + 1
    with CaptureQueriesContext(connection) as queries:
        events_through(home.pk, last.occurred_at, last.pk)
    assert len(queries.captured_queries) == 1


def lamp(day: Any, hour: int, minute: int, value: str) -> dict[str, Any]:
    moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=ZONE)
    return {
        "occurred_at": moment.isoformat(),
        "kind": "observation",
        "source_key": f"lamp:{moment.isoformat()}:{value}",
        "payload": {"type": "switch", "value": value, "attributes": {"sensor": "KitchenLight"}},
    }


def test_expectations_learn_a_late_event_and_are_kept_otherwise(home: Entity) -> None:
    days = [START + timedelta(days=i) for i in range(6)]
    items = [x for d in days for x in (lamp(d, 18, 0, "ON"), lamp(d, 18, 20, "OFF"))]
    events_ingest(entity=home, items=items)
    at = datetime(days[-1].year, days[-1].month, days[-1].day, 23, 0, tzinfo=ZONE)
    caches._USUAL.clear()
    first = caches.expectations_at(home, at)
    assert first.device_minutes["KitchenLight"] == [20.0] * 6
    assert caches.expectations_at(home, at) is first  # nothing new: the same, extended

    # A lamp left on for an hour on an earlier day, committed late: learned, in its place.
    late = [lamp(days[0], 20, 0, "ON"), lamp(days[0], 21, 0, "OFF")]
    events_ingest(entity=home, items=late)
    again = caches.expectations_at(home, at)
    assert again is not first
    assert sorted(again.device_minutes["KitchenLight"]) == [20.0] * 6 + [60.0]


def test_a_close_finds_late_events_through_the_tally(home: Entity) -> None:
    decide_batch(entity=home, items=stream(4))
    assert late_days(home) == {}
    # Stored behind maintenance's back (ingestion would rebuild memory at once), counted as
    # its insert would count it.
    late = motion(START + timedelta(days=1), 9, 0, "hall", 7)
    store_by_hand(home, datetime.fromisoformat(late["occurred_at"]), "late", late["payload"])
    events_counted(home.pk, 1)
    assert late_days(home) == {START + timedelta(days=1): 1}
