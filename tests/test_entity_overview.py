"""The entity lists' figures: right, and worked out per entity, not per day of history."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pytest

from aframes_web.streams.selectors import entity_overview
from aframes_web.streams.services import entity_create, events_ingest
from benchmark.synthetic.memory_streams import ZONES, generate

pytestmark = pytest.mark.django_db


def test_days_events_and_last_activity_per_entity(
    team: Any, django_capture_on_commit_callbacks: Any
) -> None:
    busy = entity_create(team=team, key="busy", scope="home", timezone_name=ZONES["home"])
    entity_create(team=team, key="empty", scope="home")
    items = generate("home", days=3, seed=7, start=date(2025, 1, 6))
    with django_capture_on_commit_callbacks(execute=True):  # the day summaries are written
        events_ingest(entity=busy, items=items)
    rows = {e.key: e for e in entity_overview(team=team)}
    assert rows["busy"].days_captured == 3
    assert rows["busy"].event_total == len(items)
    last = max(datetime.fromisoformat(i["occurred_at"].replace("Z", "+00:00")) for i in items)
    assert rows["busy"].last_activity == last
    assert (rows["empty"].days_captured, rows["empty"].event_total) == (0, 0)
    assert rows["empty"].last_activity is None


def test_the_figures_are_subqueries_not_a_join_over_every_day(team: Any) -> None:
    # Joined to the day summaries, every figure a list adds (documents, decisions, closed
    # days) is worked out once per day of history: a team page of a year's entities took
    # 0.27 s, and PostgreSQL compiled the plan just in time for its cost.
    sql = str(entity_overview(team=team).query)
    assert "JOIN" not in sql.upper()
