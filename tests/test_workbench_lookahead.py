"""No look-ahead: an annotator labelling blind reaches nothing later than the point they are on.

Events are added to the stream after the annotator's current point, each carrying a marker
name; then every route the annotator can reach is walked, pages, REST with a label token acting
for them, and MCP, with later task ids, later times and far-future ranges. No answer may carry a
marker, nor the id of an event after the point; the entity's own pages, API and benchmark runs
are refused while they have points left, with a sentence that says why.
"""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from aframes_web.annotation import services as workbench
from aframes_web.annotation.models import Assignment, Task
from aframes_web.annotation.services import LabelInput, ProjectSpec
from aframes_web.mcp import tools
from aframes_web.teams.auth import Principal
from aframes_web.teams.services import token_create
from perf import lookahead
from perf.lookahead import MARKER
from tests.conftest import ApiClient


@pytest.fixture
def walk(team, people, homes) -> dict[str, Any]:
    """ana halfway through home-2's stream, with marker events after her current point."""
    project = workbench.project_create(
        team=team, spec=ProjectSpec(name="Blind", scope="home", entities=["home-2"]), build=False
    )
    ana = people["ana"]
    place = Assignment.objects.get(stream__project=project, annotator=ana)
    tasks = list(Task.objects.filter(stream=place.stream).order_by("seq").select_related("point"))
    half = len(tasks) // 2
    for task in tasks[:half]:
        workbench.label_submit(task=task, user=ana, given=LabelInput(decision="abstain"))
    current, later = tasks[half], tasks[-1]
    entity = place.stream.entity
    # A point's close is the end of its segment: markers a minute, an hour and a day later.
    after = lookahead.plant(entity, current.point.at)
    browser = Client()
    browser.force_login(ana)
    key = token_create(team=team, name="ana-labels", scopes=["read", "label"], created_by=ana).key
    return {
        "project": project,
        "current": current,
        "later": later,
        "entity": entity,
        "after": after,
        "browser": browser,
        "api": ApiClient(key),
        "principal": Principal(team=team, scopes=frozenset({"read", "label"}), user=ana),
    }


def test_every_annotator_route_shows_nothing_after_the_point(walk) -> None:
    project = walk["project"]
    found, answered = lookahead.walk(
        browser=walk["browser"],
        api=walk["api"],
        mcp_next=lambda: tools.next_label_task(walk["principal"], project=project.pk),
        mcp_list=lambda: tools.list_entities(walk["principal"]),
        team="acme",
        entity=walk["entity"].key,
        project=project.pk,
        current=walk["current"].pk,
        later=walk["later"].pk,
        after=walk["after"],
        day=walk["current"]
        .point.at.astimezone(ZoneInfo(walk["entity"].timezone))
        .date()
        .isoformat(),
    )
    assert found == {} and answered == []
    # The walk sees a leak where there is one: the marker, or a later id in a history row.
    later_id = min(walk["after"])
    assert lookahead.leaks(f'<td class="num">{later_id}</td>', walk["after"]) == [
        f"event {later_id}"
    ]
    assert lookahead.leaks(MARKER, set()) == [MARKER]


def test_the_entity_and_the_methods_are_refused_while_points_are_left(walk) -> None:
    key = walk["entity"].key
    browser, api = walk["browser"], walk["api"]
    for route in (f"/t/acme/e/{key}/", f"/t/acme/e/{key}/memory/", "/t/acme/benchmark/"):
        answer = browser.get(route)
        assert answer.status_code == 403, route
        page = answer.content.decode()
        assert "labelling" in page and "blind" in page
        # Back to the workbench, not a hint about roles nor a link to the refused calendar.
        assert "/t/acme/labels/" in page and "change your role" not in page
    for route in (
        f"/api/v1/entities/{key}/events",
        f"/api/v1/entities/{key}/decisions",
        "/api/v1/benchmark/runs",
    ):
        answer = api.get(route)
        assert answer.status_code == 403, route
        assert "blind" in answer.json()["detail"], route
    for call in (
        lambda: tools.search_events(walk["principal"], query="door", entity=key),
        lambda: tools.get_benchmark_run(walk["principal"], run=1),
    ):
        with pytest.raises(tools.ToolFailure, match="blind"):
            call()


def test_once_every_point_is_labelled_the_stream_opens_again(walk) -> None:
    ana = walk["principal"].user
    for task in Task.objects.filter(stream__project=walk["project"]).order_by("seq"):
        if task.seq >= walk["current"].seq:
            workbench.label_submit(task=task, user=ana, given=LabelInput(decision="abstain"))
    assert walk["browser"].get(f"/t/acme/e/{walk['entity'].key}/").status_code == 200
    answer = walk["api"].get(f"/api/v1/entities/{walk['entity'].key}/events")
    assert answer.status_code == 200 and MARKER in json.dumps(answer.json())
