"""A busy closed day's memory page cites its events compactly, as id runs with a link that
opens them (in place with htmx, or on the segment's own page), instead of inlining thousands."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from aframes_web.dashboard.memory_views import SEGMENT_EVENTS_PER_PAGE
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.services import entity_create
from memory.models import Citation, Fact, Segment, Trajectory
from tests.conftest import page_text as text
from tests.conftest import signed_in

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
DAY = date(2026, 3, 2)
BASE = "/t/acme/e/busy/memory"
SEGMENTS = 45  # more than a page shows open
PER_SEGMENT = 25  # more than a segment shows inline
BIG = 250  # the last segment's events: two pages of them


@pytest.fixture
def busy(team: Any) -> Entity:
    entity = entity_create(team=team, key="busy", scope="home", timezone_name="Europe/Berlin")
    start = datetime(2026, 3, 2, 8, tzinfo=BERLIN)
    sizes = [PER_SEGMENT] * (SEGMENTS - 1) + [BIG]
    events = Event.objects.bulk_create(
        Event(
            entity=entity,
            occurred_at=start + timedelta(seconds=n),
            kind="observation",
            source_key=f"e{n}",
            monitor="",
            payload={"type": "motion", "value": "ON", "attributes": {"room": "hall"}},
            received_at=timezone.now(),
        )
        for n in range(sum(sizes))
    )
    trajectory = Trajectory.objects.create(
        entity=entity,
        day=DAY,
        event_count=len(events),
        segment_count=SEGMENTS,
        rejected_count=1,
        fact_count=SEGMENTS,
    )
    first = 0
    for index, size in enumerate(sizes):
        cited = events[first : first + size]
        first += size
        segment = Segment.objects.create(
            trajectory=trajectory,
            index=index,
            kind="presence",
            start=cited[0].occurred_at,
            end=cited[-1].occurred_at,
            accepted=index != 1,
            reason="" if index != 1 else "the room is not in the cited events",
            cited_ids=[e.pk for e in cited],
        )
        Citation.objects.bulk_create(Citation(segment=segment, event=e) for e in cited)
        Fact.objects.create(
            segment=segment,
            entity=entity,
            ref=f"fact:{DAY.isoformat()}/{index}/f1",
            fact_id="f1",
            type="observed",
            path=["room"],
            value="hall",
            at=cited[-1].occurred_at,
            grounded_event=cited[-1],
            grounded_path=["attributes", "room"],
        )
    return entity


def test_a_busy_day_cites_events_as_runs_and_inlines_none(busy, owner) -> None:
    page = text(signed_in(owner).get(f"{BASE}/d/{DAY.isoformat()}/"))
    assert '<table class="events">' not in page
    segment = Segment.objects.get(trajectory__entity=busy, index=3)
    ids = sorted(segment.cited_ids)
    assert f'Cited events ({PER_SEGMENT}): <code class="runs">{ids[0]}-{ids[-1]}</code>' in page
    url = f"{BASE}/d/{DAY.isoformat()}/s/3/"
    assert f'<a href="{url}" hx-get="{url}" hx-target="#segment-3-events"' in page
    # A fact's grounding event is linked where it is shown: its segment's page of events.
    assert f'href="{url}#s3-event-{ids[-1]}"' in page
    # Accepted segments fold on a day this busy; the rejected one, what an auditor wants, not.
    assert page.count('<details class="segment-body">') == SEGMENTS - 1
    rejected = page.split('id="segment-1"', 1)[1].split("</section>", 1)[0]
    assert "segment-body" not in rejected and "the room is not in the cited events" in rejected


def test_a_segments_events_open_in_place_or_on_their_own_page(busy, owner, outsider) -> None:
    client = signed_in(owner)
    url = f"{BASE}/d/{DAY.isoformat()}/s/3/"
    ids = sorted(Segment.objects.get(trajectory__entity=busy, index=3).cited_ids)
    full = text(client.get(url))
    assert "<header" in full and f"{PER_SEGMENT} events." in full
    assert all(f'id="s3-event-{i}"' in full for i in ids)
    partial = text(client.get(url, headers={"HX-Request": "true"}))
    assert partial.lstrip().startswith('<div id="segment-3-list">') and "<html" not in partial
    assert signed_in(outsider).get(url).status_code == 404
    assert client.get(f"{BASE}/d/{DAY.isoformat()}/s/99/").status_code == 404


def test_a_long_segment_pages_its_events_and_links_facts_to_the_right_page(busy, owner) -> None:
    client = signed_in(owner)
    last = SEGMENTS - 1
    ids = sorted(Segment.objects.get(trajectory__entity=busy, index=last).cited_ids)
    url = f"{BASE}/d/{DAY.isoformat()}/s/{last}/"
    day = text(client.get(f"{BASE}/d/{DAY.isoformat()}/"))
    assert f'href="{url}?page=2#s{last}-event-{ids[-1]}"' in day
    first = text(client.get(url))
    assert f"page 1 of 2, 1–{SEGMENT_EVENTS_PER_PAGE}" in first
    assert f'id="s{last}-event-{ids[SEGMENT_EVENTS_PER_PAGE]}"' not in first
    second = text(client.get(f"{url}?page=2"))
    assert f'id="s{last}-event-{ids[-1]}"' in second
