"""REST API of ProactMem: decide, decide=true ingestion, trajectories, regularities, decisions."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from aframes_web.streams.models import Entity, Event
from aframes_web.streams.services import entity_create
from memory.models import Decision, Regularity
from memory.services.deciding import decide_batch
from tests.home_streams import START, motion, routine_day, stream

pytestmark = pytest.mark.django_db(transaction=True)
BASE = "/api/v1/entities/flat-1"
READS = ["/trajectories", "/regularities", "/decisions"]


@pytest.fixture
def home(team: Any) -> Entity:
    return entity_create(team=team, key="flat-1", scope="home", timezone_name="Europe/Paris")


@pytest.fixture
def lived_in(home: Entity) -> Entity:
    """Six days of a routine, then a day without the kitchen: memory has something to show."""
    decide_batch(entity=home, items=stream(6))
    decide_batch(entity=home, items=routine_day(START + timedelta(days=6), kitchen=False))
    return home


def _field_error(answer: Any, name: str) -> str:
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert name in body["fields"], body
    return str(body["fields"][name][0])


def test_decide_returns_the_decision_with_its_evidence_then_commits_the_event(
    owner_api, home
) -> None:
    item = motion(START, 7, 0, "bedroom")
    answer = owner_api.post(f"{BASE}/decide", item)
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["action"] in ("intervene", "abstain") and body["policy"] == "rules"
    assert body["duplicate"] is False
    assert body["event_id"] == Event.objects.get(source_key=item["source_key"]).pk
    assert set(body["control"]) == {
        "reason",
        "suppressed",
        "identity",
        "suppressed_by",
        "instead_of",
        "signature",
    }
    assert body["control"]["instead_of"] is None  # the first decision is its first proposal
    again = owner_api.post(f"{BASE}/decide", item)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert again.json()["id"] == body["id"]


def test_decide_with_the_event_only_baseline(owner_api, home) -> None:
    answer = owner_api.post(f"{BASE}/decide?policy=event_only", motion(START, 7, 0, "bedroom"))
    assert answer.status_code == 201 and answer.json()["policy"] == "event_only"


def test_decide_rejects_an_unknown_policy_by_name(owner_api, home) -> None:
    answer = owner_api.post(f"{BASE}/decide?policy=oracle", motion(START, 7, 0, "bedroom"))
    assert "rules" in _field_error(answer, "policy")
    assert not Event.objects.exists()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("[1, 2]", "one event"),
        ("not json", "not JSON"),
        ('{"kind": "observation"}', "invalid"),
    ],
)
def test_decide_rejects_a_bad_body_and_stores_nothing(owner_api, home, body, says) -> None:
    answer = owner_api.post(f"{BASE}/decide", body)
    assert answer.status_code == 400 and says in answer.json()["detail"], answer.content
    assert not Event.objects.exists() and not Decision.objects.exists()


def test_an_invalid_event_names_each_field(owner_api, home) -> None:
    item = {**motion(START, 7, 0, "bedroom"), "occurred_at": "2024-05-06T07:00:00"}
    answer = owner_api.post(f"{BASE}/decide", item)
    assert answer.status_code == 400
    assert [e["field"] for e in answer.json()["errors"]] == ["occurred_at"]


def test_decide_needs_the_write_scope_and_an_outsider_sees_no_entity(
    home, reader_api, outsider_api
) -> None:
    item = motion(START, 7, 0, "bedroom")
    assert reader_api.post(f"{BASE}/decide", item).status_code == 403
    assert outsider_api.post(f"{BASE}/decide", item).status_code == 404
    assert not Event.objects.exists()


def test_ingestion_with_decide_returns_the_decisions_in_order(owner_api, home) -> None:
    items = routine_day(START)
    answer = owner_api.post(f"{BASE}/events?decide=true", items)
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["accepted"] == len(items) and body["duplicates"] == 0
    times = [d["occurred_at"] for d in body["decisions"]]
    assert times == sorted(times) and len(times) == len(items)
    again = owner_api.post(f"{BASE}/events?decide=true", items).json()
    assert again["accepted"] == 0 and all(d["duplicate"] for d in again["decisions"])
    # ?format= shapes events read back; what ingestion answers is JSON, as documented.
    for read_format in ("ndjson", "json"):
        answered = owner_api.post(f"{BASE}/events?decide=true&format={read_format}", items)
        assert answered["Content-Type"] == "application/json"
        assert answered.json()["accepted"] == 0
    plain = owner_api.post(f"{BASE}/events?format=ndjson", items)
    assert plain["Content-Type"] == "application/json" and plain.json()["duplicates"] == len(items)


def test_ingestion_with_decide_rejects_a_bad_batch_whole(owner_api, home) -> None:
    items = [motion(START, 7, 0, "bedroom"), {"kind": "observation"}]
    answer = owner_api.post(f"{BASE}/events?decide=true", items)
    assert answer.status_code == 400 and answer.json()["errors"][0]["index"] == 1
    assert not Event.objects.exists()


@pytest.mark.parametrize("path", READS)
def test_reads_need_the_read_scope_and_hide_other_teams(
    path, lived_in, owner_api, reader_api, outsider_api, make_client, team
) -> None:
    assert owner_api.get(BASE + path).status_code == 200
    assert reader_api.get(BASE + path).status_code == 200
    assert outsider_api.get(BASE + path).status_code == 404
    assert make_client(team, ["write"], "w").get(BASE + path).status_code == 403


def test_trajectory_shows_facts_with_their_grounding_and_citations(owner_api, lived_in) -> None:
    listed = owner_api.get(f"{BASE}/trajectories").json()["results"]
    assert [d["day"] for d in listed][:2] == [START.isoformat(), (START + timedelta(1)).isoformat()]
    day = owner_api.get(f"{BASE}/trajectories/{START.isoformat()}").json()
    accepted = [s for s in day["segments"] if s["accepted"]]
    assert accepted and all(s["citations"] for s in accepted)
    fact = accepted[0]["facts"][0]
    assert fact["ref"].startswith(f"fact:{START.isoformat()}/")
    assert fact["grounded_in"]["event_id"] in accepted[0]["citations"]
    assert "private" not in str(day) and "secret-label" not in str(day)
    ranged = owner_api.get(f"{BASE}/trajectories", data={"from": "2024-05-07", "to": "2024-05-08"})
    assert [d["day"] for d in ranged.json()["results"]] == ["2024-05-07", "2024-05-08"]


def test_an_open_day_has_no_trajectory_yet_and_says_why(owner_api, lived_in) -> None:
    answer = owner_api.get(f"{BASE}/trajectories/{(START + timedelta(days=6)).isoformat()}")
    assert answer.status_code == 404 and "not closed" in answer.json()["detail"]
    assert "not a date" in _field_error(owner_api.get(f"{BASE}/trajectories/yesterday"), "day")


def test_regularities_with_assessments_and_transitions(owner_api, lived_in) -> None:
    active = owner_api.get(f"{BASE}/regularities", data={"state": "active"}).json()["results"]
    assert active and all(r["state"] == "active" for r in active)
    detail = owner_api.get(f"{BASE}/regularities/{active[0]['id']}").json()
    assert detail["assessments"] and detail["transitions"][0]["to"] == "active"
    outcomes = {a["outcome"] for a in detail["assessments"]}
    assert outcomes <= {"fulfilled", "violated", "censored", "inapplicable", "not_triggered"}
    assert "candidate" in _field_error(
        owner_api.get(f"{BASE}/regularities", data={"state": "sleepy"}), "state"
    )
    assert owner_api.get(f"{BASE}/regularities/reg:000000000000").status_code == 404
    assert Regularity.objects.filter(entity=lived_in).count() == len(
        owner_api.get(f"{BASE}/regularities").json()["results"]
    )


def test_decisions_page_by_cursor_and_filter_by_action(owner_api, lived_in) -> None:
    first = owner_api.get(f"{BASE}/decisions", data={"limit": 5}).json()
    assert len(first["results"]) == 5 and first["next"]
    second = owner_api.get(first["next"]).json()
    ids = [d["id"] for d in first["results"] + second["results"]]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    acted = owner_api.get(f"{BASE}/decisions", data={"action": "intervene"}).json()["results"]
    assert acted and all(d["action"] == "intervene" for d in acted)
    one = owner_api.get(f"{BASE}/decisions/{acted[0]['id']}").json()
    assert one["evidence"] == acted[0]["evidence"]
    assert "abstain" in _field_error(
        owner_api.get(f"{BASE}/decisions", data={"action": "maybe"}), "action"
    )
    assert owner_api.get(f"{BASE}/decisions/999999").status_code == 404
