"""Every list of the API is a keyset page: ``results``, ``next`` (absolute URL or null),
``limit`` and ``cursor``; filters where a reader expects them; one spelling of a moment."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from aframes_web.activity.models import DayDocument
from aframes_web.annotation import services as workbench
from aframes_web.annotation.models import Assignment
from aframes_web.annotation.services import ProjectSpec
from aframes_web.proactivestream.models import BenchmarkRun
from aframes_web.streams.services import entity_create
from aframes_web.teams.services import token_create
from memory.models import Regularity
from tests.conftest import ApiClient, snapshot
from tests.test_api_memory import home, lived_in  # noqa: F401  # fixtures

MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


def _walk(api: ApiClient, path: str, **query: Any) -> list[dict[str, Any]]:
    """Every item of a list, following ``next`` one page at a time."""
    seen: list[dict[str, Any]] = []
    answer = api.get(path, data=query)
    while True:
        assert answer.status_code == 200, answer.content
        body = answer.json()
        seen += body["results"]
        if body["next"] is None:
            return seen
        assert body["next"].startswith("http://testserver/api/v1/")
        answer = api.get(body["next"])


@pytest.mark.django_db
def test_entities_page_by_key_and_filter_by_scope(team, owner_api, outsider_api) -> None:
    for n in range(5):
        entity_create(team=team, key=f"box-{n}", scope="home" if n % 2 else "desktop")
    first = owner_api.get("/api/v1/entities", data={"limit": 2}).json()
    assert [e["key"] for e in first["results"]] == ["box-0", "box-1"]
    keys = [e["key"] for e in _walk(owner_api, "/api/v1/entities", limit=2)]
    assert keys == [f"box-{n}" for n in range(5)]
    homes = [e["key"] for e in _walk(owner_api, "/api/v1/entities", limit=1, scope="home")]
    assert homes == ["box-1", "box-3"]
    # Counts are zero, never null, for an entity without events; created_at is a moment.
    entity = first["results"][0]
    assert (entity["days_captured"], entity["event_total"], entity["last_activity"]) == (0, 0, None)
    assert MOMENT.match(entity["created_at"])
    assert outsider_api.get("/api/v1/entities").json() == {"results": [], "next": None}


@pytest.mark.django_db
def test_a_new_entity_answers_zero_counts(owner_api) -> None:
    made = owner_api.post("/api/v1/entities", {"key": "fresh", "scope": "code"}).json()
    assert (made["days_captured"], made["event_total"]) == (0, 0)


@pytest.mark.django_db
def test_days_page_and_filter_by_day_keeping_pending_days(owner_api, load, desktop) -> None:
    for day in ("2026-03-02", "2026-03-03", "2026-03-04"):
        load(desktop, [snapshot(f"{day}T09:00:00+01:00", f"{day}-a")])
    base = "/api/v1/entities/alice-laptop/days"
    assert [d["day"] for d in _walk(owner_api, base, limit=1)] == [
        "2026-03-02",
        "2026-03-03",
        "2026-03-04",
    ]
    middle = owner_api.get(base, data={"from": "2026-03-03", "to": "2026-03-03"}).json()
    assert [d["day"] for d in middle["results"]] == ["2026-03-03"]
    assert middle["pending_days"] == [] and middle["next"] is None
    assert MOMENT.match(middle["results"][0]["compiled_at"])
    assert DayDocument.objects.filter(entity=desktop).count() == 3


@pytest.mark.django_db(transaction=True)
def test_memory_lists_page_with_filters(owner_api, lived_in) -> None:  # noqa: F811
    base = "/api/v1/entities/flat-1"
    days = [t["day"] for t in _walk(owner_api, base + "/trajectories", limit=2)]
    assert days == sorted(days) and len(days) >= 6
    some = _walk(owner_api, base + "/trajectories", **{"from": days[1], "to": days[2]})
    assert [t["day"] for t in some] == days[1:3]
    assert all(MOMENT.match(t["closed_at"]) for t in some)

    everything = owner_api.get(base + "/regularities", data={"limit": 1000}).json()["results"]
    assert everything, "memory has regularities to page through"
    paged = _walk(owner_api, base + "/regularities", limit=3)
    assert [r["id"] for r in paged] == [r["id"] for r in everything]
    by_lift = _walk(owner_api, base + "/regularities", limit=2, order="lift")
    assert sorted(r["id"] for r in by_lift) == sorted(r["id"] for r in everything)
    lifts = [r["replay"]["lift"] for r in by_lift]
    assert lifts == sorted(lifts, reverse=True)
    state = everything[0]["state"]
    assert {r["state"] for r in _walk(owner_api, base + "/regularities", state=state)} == {state}
    assert Regularity.objects.count() == len(everything)

    decisions = _walk(owner_api, base + "/decisions", limit=50)
    assert all(MOMENT.match(d["occurred_at"]) for d in decisions)
    late = decisions[len(decisions) // 2]["occurred_at"]
    after = _walk(owner_api, base + "/decisions", **{"from": late})
    assert after and all(d["occurred_at"] >= late for d in after)


@pytest.mark.django_db
def test_a_cursor_is_refused_on_another_list_and_when_altered(team, owner_api, load, desktop):
    entity_create(team=team, key="box-a", scope="home")
    entity_create(team=team, key="box-b", scope="home")
    load(desktop, [snapshot(f"2026-03-02T09:0{n}:00+01:00", f"k{n}") for n in range(3)])
    events = owner_api.get("/api/v1/entities/alice-laptop/events", data={"limit": 1}).json()
    cursor = re.search(r"cursor=([^&]+)", events["next"])[1]
    other = owner_api.get("/api/v1/entities", data={"cursor": cursor})
    assert other.status_code == 400 and "cursor" in other.json()["fields"]
    altered = cursor[:-3] + ("AAA" if not cursor.endswith("AAA") else "BBB")
    tampered = owner_api.get("/api/v1/entities/alice-laptop/events", data={"cursor": altered})
    assert tampered.status_code == 400 and "cursor" in tampered.json()["fields"]


@pytest.mark.django_db
def test_benchmark_runs_page_and_filter_by_creation_time(team, owner_api, outsider_api) -> None:
    start = datetime(2026, 3, 1, tzinfo=UTC)
    for n in range(4):
        run = BenchmarkRun.objects.create(team=team, config={"scope": "home"}, code_version="t")
        BenchmarkRun.objects.filter(pk=run.pk).update(created_at=start + timedelta(days=n))
    ids = [r["id"] for r in _walk(owner_api, "/api/v1/benchmark/runs", limit=3)]
    assert ids == sorted(ids) and len(ids) == 4
    later = _walk(owner_api, "/api/v1/benchmark/runs", **{"from": "2026-03-03T00:00:00Z"})
    assert [r["id"] for r in later] == ids[2:]
    assert all(MOMENT.match(r["created_at"]) for r in later)
    assert outsider_api.get("/api/v1/benchmark/runs").json()["results"] == []


@pytest.mark.django_db
def test_label_projects_and_assignments_page(team, people, homes, owner_api) -> None:
    made = [
        workbench.project_create(
            team=team,
            spec=ProjectSpec(name=f"P{n}", scope="home", entities=["home-1", "home-2"]),
            build=False,
        )
        for n in range(3)
    ]
    names = [p["name"] for p in _walk(owner_api, "/api/v1/labels/projects", limit=2)]
    assert names == ["P2", "P1", "P0"]  # newest first
    annotator = Assignment.objects.filter(stream__project=made[0]).first().annotator
    api = ApiClient(token_create(team=team, name="a", scopes=["label"], created_by=annotator).key)
    mine = _walk(api, "/api/v1/labels/assignments", limit=1)
    assert len(mine) == Assignment.objects.filter(annotator=annotator).count() >= 3
    assert [a["project"] for a in mine] == sorted(a["project"] for a in mine)


@pytest.mark.django_db
def test_limit_is_capped_and_checked(team, owner_api) -> None:
    entity_create(team=team, key="one", scope="home")
    assert owner_api.get("/api/v1/entities", data={"limit": 10**9}).status_code == 200
    for bad in ("0", "-1", "x", "", "99999999999999999999999"):
        answer = owner_api.get("/api/v1/entities", data={"limit": bad})
        assert answer.status_code == 400 and "limit" in answer.json()["fields"], bad


def test_moments_have_one_spelling() -> None:
    from zoneinfo import ZoneInfo

    from aframes_web.streams.records import format_timestamp

    moment = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
    assert format_timestamp(moment) == "2026-03-02T08:00:00.000000Z"
    berlin = ZoneInfo("Europe/Berlin")
    assert format_timestamp(moment.astimezone(berlin)) == "2026-03-02T08:00:00.000000Z"
    local = format_timestamp(moment, berlin, timespec="seconds")
    assert local == "2026-03-02T09:00:00+01:00"
    assert format_timestamp(None) is None
    assert date(2026, 3, 2).isoformat() == "2026-03-02"
