"""The look-ahead walk: every route an annotator can reach, asked with later ids, later times
and far-future ranges, and what of each answer comes from after the point they are on.

Shared by ``make bench-annotation`` (``lookahead_leaks``) and the test suite
(``tests/test_workbench_lookahead.py``). The caller puts events carrying :data:`MARKER` in their
sensor and room names after the annotator's current point, and passes the ids of every event
after it: an answer leaks when it holds the marker or one of those ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

# Imported by the suite (Django set up by pytest-django) and by bench-annotation after
# perf.harness.django_on: never before Django has its settings.
from aframes_web.streams.models import Event
from aframes_web.streams.services import events_ingest

MARKER = "lookaheadmarker"
FAR = "2099-01-01T00:00"


def marker_events(after: datetime, minutes: Iterable[int] = (1, 60, 1440)) -> list[dict[str, Any]]:
    """Door events ``minutes`` after ``after``, named with the marker."""
    return [
        {
            "occurred_at": (after + timedelta(minutes=m)).isoformat(),
            "kind": "observation",
            "source_key": f"{MARKER}-{n}",
            "payload": {
                "type": "door",
                "value": "OPEN",
                "attributes": {"sensor": f"{MARKER}-sensor", "room": f"{MARKER}room"},
            },
        }
        for n, m in enumerate(minutes)
    ]


def plant(entity: Any, moment: datetime) -> set[int]:
    """Marker events after ``moment`` in ``entity``'s stream; the ids of every event after it
    (markers and the stream's own), which no annotator route may show."""
    events_ingest(entity=entity, items=marker_events(moment))
    later = Event.objects.filter(entity=entity, occurred_at__gt=moment)
    return set(later.values_list("pk", flat=True))


def leaks(text: str, after: set[int]) -> list[str]:
    """What of ``text`` comes from after the point: the marker, or a later event's id as a
    history row or an (event) id of a JSON answer."""
    found = [MARKER] if MARKER in text else []
    ids = {int(i) for i in re.findall(r'<td class="num">(\d+)</td>', text)}
    ids |= {int(i) for i in re.findall(r'"(?:id|event_id)":\s*(\d+)', text)}
    return found + [f"event {i}" for i in sorted(ids & after)]


def walk(
    *,
    browser: Any,
    api: Any,
    mcp_next: Callable[[], str],
    mcp_list: Callable[[], str],
    team: str,
    entity: str,
    project: int,
    current: int,
    later: int,
    after: set[int],
    day: str,
) -> tuple[dict[str, list[str]], list[str]]:
    """Every annotator route: (what each answer leaked, the routes that answered a later point
    instead of refusing it). ``browser`` is a signed-in test client, ``api`` a client with a
    label token acting for the annotator, ``mcp_next`` and ``mcp_list`` call the MCP tools
    next_label_task and list_entities; ``entity`` is the key of the stream's entity;
    ``day`` is the point's local day (YYYY-MM-DD), whose summary is asked for, and the next."""
    base = f"/t/{team}/labels/{project}"
    page = f"{base}/annotate/{current}/"
    pages = [
        page,
        f"{page}?hpage=2",
        f"{page}?hpage=3",
        f"{page}?hfrom={FAR}&hto=2099-12-31T00:00",
        f"{page}?hto={FAR}",
        f"{page}?hfrom=2000-01-01T00:00&hto={FAR}",
        f"{page}?baseline=28",
        f"{page}day/{day}/",
        f"{base}/annotate/",
        f"{base}/",
    ]
    found: dict[str, list[str]] = {}
    for route in pages:
        found[route] = leaks(browser.get(route, follow=True).content.decode(), after)
    partial = browser.get(f"{page}?hpage=2", headers={"HX-Request": "true"})
    found["htmx history"] = leaks(partial.content.decode(), after)
    for route in (
        f"/api/v1/labels/projects/{project}/next",
        f"/api/v1/labels/projects/{project}/next?page=2",
        "/api/v1/labels/assignments",
    ):
        found[route] = leaks(api.get(route).content.decode(), after)
    found["mcp next_label_task"] = leaks(mcp_next(), after)
    answered = []
    ahead = f"{base}/annotate/{later}/"
    if browser.get(ahead).status_code != 404:
        answered.append(ahead)
    if browser.post(f"{ahead}draft/", {"rationale": "x"}).status_code != 404:
        answered.append(f"{ahead}draft/")
    # Lists show each entity's last activity: the entity labelled blind is not in them.
    listed = {
        f"/t/{team}/": f">{entity}<" in browser.get(f"/t/{team}/").content.decode(),
        "/api/v1/entities": any(
            e["key"] == entity for e in api.get("/api/v1/entities").json()["results"]
        ),
        "mcp list_entities": any(e["key"] == entity for e in json.loads(mcp_list())),
    }
    for route in (route for route, shown in listed.items() if shown):
        found.setdefault(route, []).append(f"lists {entity}")
    following = (datetime.fromisoformat(day) + timedelta(days=1)).date().isoformat()
    if browser.get(f"{page}day/{following}/").status_code != 404:
        answered.append(f"{page}day/{following}/")
    submit = f"/api/v1/labels/projects/{project}/tasks/{later}"
    if api.post(submit, {"decision": "abstain"}).status_code not in (404, 422):
        answered.append(submit)
    return {route: what for route, what in found.items() if what}, answered
