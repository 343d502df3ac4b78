"""Data migrations of the event store and of memory, run forward on rows written under the
older schema."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from compiler.sources import activitywatch

BEFORE = ("streams", "0004_event_absence_index")
AFTER = ("streams", "0005_activitywatch_row_keys")
START = datetime(2026, 3, 2, 9, 0, 0, 50_000, tzinfo=UTC)  # 09:00:00.05


class Migration:
    """Rows written at ``before``, then the schema migrated ``forward()`` to ``after``; the
    database goes back to the newest schema when the test ends."""

    def __init__(self, before: tuple[str, str], after: tuple[str, str]) -> None:
        self.executor = MigrationExecutor(connection)
        self.executor.migrate([before])
        self.old = self.executor.loader.project_state([before]).apps
        self.after = after

    def forward(self) -> Any:
        """Migrate to ``after``; its apps (the models as they are there)."""
        self.executor.loader.build_graph()
        self.executor.migrate([self.after])
        return self.executor.loader.project_state([self.after]).apps

    def restore(self) -> None:
        self.executor.loader.build_graph()
        self.executor.migrate(self.executor.loader.graph.leaf_nodes())


@contextmanager
def migration(before: tuple[str, str], after: tuple[str, str]) -> Iterator[Migration]:
    step = Migration(before, after)
    try:
        yield step
    finally:
        step.restore()


def _old_id(bucket: int, event: int, k: int) -> int:
    """The reader's former id: bucket position, event position, heartbeat."""
    return (bucket + 1) * 10**14 + event * 10**5 + k


def _export() -> dict:
    window = {
        "timestamp": START.isoformat(),
        "duration": 100.0,
        "data": {"app": "Code", "title": "a.py"},
    }
    afk = {"timestamp": START.isoformat(), "duration": 50.0, "data": {"status": "afk"}}
    return {
        "buckets": {
            "aw-watcher-afk_h": {"id": "aw-watcher-afk_h", "type": "afkstatus", "events": [afk]},
            "aw-watcher-window_h": {
                "id": "aw-watcher-window_h",
                "type": "currentwindow",
                "events": [window],
            },
        }
    }


@pytest.mark.django_db(transaction=True)
def test_stored_activitywatch_rows_take_the_ids_the_reader_now_gives_them() -> None:
    with migration(BEFORE, AFTER) as step:
        old = step.old
        team = old.get_model("teams", "Team").objects.create(slug="acme", name="Acme")
        entity = old.get_model("streams", "Entity").objects.create(
            team=team, scope="desktop", key="aw", name="aw", timezone="UTC"
        )
        Event = old.get_model("streams", "Event")
        now = datetime(2026, 3, 3, tzinfo=UTC)

        def event(key: str, at: datetime, kind: str = "snapshot") -> None:
            Event.objects.create(
                entity=entity,
                occurred_at=at,
                kind=kind,
                source_key=key,
                payload={},
                received_at=now,
            )

        # Rows 0 and 2 of the window event (bucket 1 of 2), the absence of the same instant
        # (bucket 0: it keeps the second's number, the window event takes the next), and a
        # screenpipe row, which is left alone.
        event(f"aw:s{_old_id(1, 0, 0)}", START)
        event(f"aw:s{_old_id(1, 0, 2)}", START + timedelta(seconds=60))
        event(f"aw:a{_old_id(0, 0, 0)}", START, kind="absence")
        event("sp:s12", START)
        capture = activitywatch.read_export(_export())
        rows = [s.id for s in capture.snapshots]

        keys = set(
            step.forward()
            .get_model("streams", "Event")
            .objects.values_list("source_key", flat=True)
        )
        assert keys == {
            f"aw:s{rows[0]}",
            f"aw:s{rows[2]}",
            f"aw:a{capture.absences[0].id}",
            "sp:s12",
        }
        assert capture.absences[0].id // 10**5 + 1 == rows[0] // 10**5


@pytest.mark.django_db(transaction=True)
def test_events_stored_before_the_tally_are_counted_by_its_migration() -> None:
    before, after = ("streams", "0007_sensor_names"), ("streams", "0008_event_tally")
    with migration(before, after) as step:
        old = step.old
        team = old.get_model("teams", "Team").objects.create(slug="acme", name="Acme")
        Entity = old.get_model("streams", "Entity")
        Event = old.get_model("streams", "Event")
        now = datetime(2026, 3, 3, tzinfo=UTC)
        counts = {"a": 3, "b": 1, "empty": 0}
        for key, n in counts.items():
            entity = Entity.objects.create(
                team=team, scope="home", key=key, name=key, timezone="UTC"
            )
            for i in range(n):
                Event.objects.create(
                    entity=entity,
                    occurred_at=START + timedelta(minutes=i),
                    kind="observation",
                    source_key=f"{key}-{i}",
                    payload={},
                    received_at=now,
                )

        Tally = step.forward().get_model("streams", "EventTally")
        assert dict(Tally.objects.values_list("entity__key", "stored")) == {"a": 3, "b": 1}


@pytest.mark.django_db(transaction=True)
def test_regularities_stored_before_the_state_tally_are_counted_by_its_migration() -> None:
    before, after = ("memory", "0005_regularity_retired"), ("memory", "0006_regularity_tally")
    with migration(before, after) as step:
        old = step.old
        team = old.get_model("teams", "Team").objects.create(slug="acme", name="Acme")
        Entity = old.get_model("streams", "Entity")
        Regularity = old.get_model("memory", "Regularity")
        states = {"a": ["active", "retired", "retired"], "b": ["habit"], "none": []}
        for key, held in states.items():
            entity = Entity.objects.create(
                team=team, scope="home", key=key, name=key, timezone="UTC"
            )
            for n, state in enumerate(held):
                Regularity.objects.create(
                    entity=entity,
                    rid=f"reg:{n:012x}",
                    proposal={},
                    summary="",
                    state=state,
                    confidence=0.5,
                    replay_confidence=0.5,
                    lift=1.0,
                    n_f=1,
                    n_v=0,
                    observable=1,
                    behavior_days=1,
                    violation_run=0,
                    proposed_on=START.date(),
                )

        Tally = step.forward().get_model("memory", "RegularityTally")
        rows = Tally.objects.values_list("entity__key", "state", "count")
        assert sorted(rows) == [("a", "active", 1), ("a", "retired", 2), ("b", "habit", 1)]
