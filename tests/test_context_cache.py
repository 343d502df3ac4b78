"""A window's context block is cached under what it read, and never served stale."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from aframes_web.activity import renderings
from aframes_web.activity.queries import ContextQuery
from aframes_web.activity.renderings import context_rendering
from aframes_web.streams.services import events_ingest
from tests.conftest import snapshot

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
END = START + timedelta(hours=2)


def _rows(minutes: range, app: str, prefix: str) -> list[dict[str, Any]]:
    return [
        snapshot(f"2026-03-02T08:{m:02d}:{s:02d}Z", f"{prefix}{m}.{s}", app=app)
        for m in minutes
        for s in (0, 30)
    ]


def _block(entity: Any) -> tuple[str, str]:
    rendering = context_rendering(ContextQuery(entity=entity, end=END, hours=2))
    return rendering.etag, rendering.render()


def test_a_repeated_window_is_answered_from_the_cache(desktop) -> None:
    events_ingest(entity=desktop, items=_rows(range(0, 20), "Code", "c"))
    first = _block(desktop)
    with CaptureQueriesContext(connection) as queries:
        again = _block(desktop)
    assert again == first and "Code" in first[1]
    # The worker that served it reads the entity's tally of events alone: nothing arrived.
    assert len(queries) == 1 and "streams_eventtally" in queries[0]["sql"], queries.captured_queries
    # Another worker reads the tally and the watermark, and finds the block in the shared
    # cache: no event row is fetched for a cached window.
    renderings._SERVED.clear()
    with CaptureQueriesContext(connection) as queries:
        assert _block(desktop) == first
    assert len(queries) == 3, [q["sql"] for q in queries]


def test_an_event_the_window_would_read_changes_the_answer(desktop) -> None:
    events_ingest(entity=desktop, items=_rows(range(0, 20), "Code", "c"))
    before = _block(desktop)
    events_ingest(entity=desktop, items=_rows(range(30, 40), "Slack", "s"))
    after = _block(desktop)
    assert after[0] != before[0] and "Slack" in after[1] and "Slack" not in before[1]


def test_an_absence_that_began_before_the_window_and_reaches_in_changes_the_answer(
    desktop,
) -> None:
    events_ingest(entity=desktop, items=_rows(range(0, 20), "Code", "c"))
    before = _block(desktop)
    away = {
        "occurred_at": "2026-03-02T07:00:00Z",
        "kind": "absence",
        "source_key": "afk-1",
        "payload": {"end": "2026-03-02T08:10:00Z", "reason": "afk"},
    }
    events_ingest(entity=desktop, items=[away])
    after = _block(desktop)
    assert after != before and "away (afk): 09:00-09:10" in after[1]


def test_events_outside_what_the_window_reads_keep_the_cached_answer(desktop) -> None:
    events_ingest(entity=desktop, items=_rows(range(0, 20), "Code", "c"))
    before = _block(desktop)
    later = snapshot("2026-03-02T11:00:00Z", "later", app="Slack")
    events_ingest(entity=desktop, items=[later])
    with CaptureQueriesContext(connection) as queries:
        after = _block(desktop)
    # The tally moved, so the watermark is read: it is the window's own, so the block stands.
    assert after == before and len(queries) == 3
    with CaptureQueriesContext(connection) as queries:
        assert _block(desktop) == before
    assert len(queries) == 1


def test_the_worker_serves_a_window_again_only_while_no_event_has_arrived(desktop) -> None:
    events_ingest(entity=desktop, items=_rows(range(0, 20), "Code", "c"))
    before = _block(desktop)
    # An event in the window arrives: the tally moves with it, so the worker does not serve
    # what it kept (every insert adds to the tally in its own transaction).
    late = snapshot("2026-03-02T08:45:00Z", "late", app="Slack")
    events_ingest(entity=desktop, items=[late])
    after = _block(desktop)
    assert after != before and "Slack" in after[1]
    assert renderings._SERVED  # kept, and bounded
    for n in range(renderings._SERVED_MAX + 5):
        context_rendering(ContextQuery(entity=desktop, end=END + timedelta(minutes=n), hours=1))
    assert len(renderings._SERVED) == renderings._SERVED_MAX
