"""Every API error is an RFC 9457 problem (``application/problem+json``): a stable type per
kind, title, status, detail, and the extension members clients read (fields, errors)."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from django.test import Client

from aframes_web.api.problems import PROBLEMS, TYPE_PREFIX
from aframes_web.streams.models import Event
from aframes_web.streams.services import entity_create
from tests.conftest import ApiClient, snapshot

pytestmark = pytest.mark.django_db

EVENTS = "/api/v1/entities/alice-laptop/events"


def problem(answer: Any, slug: str) -> dict[str, Any]:
    """The answer's problem body, checked to be of kind ``slug``."""
    assert answer["Content-Type"] == "application/problem+json", answer.content
    body = answer.json()
    assert body["type"] == TYPE_PREFIX + slug, body
    assert body["status"] == answer.status_code == PROBLEMS[slug].status, body
    assert body["title"] == PROBLEMS[slug].title
    assert isinstance(body["detail"], str) and body["detail"], body
    return body


def test_problem_types_are_distinct_stable_uris() -> None:
    uris = [p.uri for p in PROBLEMS.values()]
    assert len(set(uris)) == len(uris)
    assert all(u.startswith("tag:aframes.dev,2026:problem/") for u in uris)


def test_validation_names_the_field_and_the_parameter(owner_api, desktop) -> None:
    body = problem(
        owner_api.post("/api/v1/entities", {"key": "a", "scope": "garden"}), "validation"
    )
    assert "scope" in body["fields"] and body["detail"].startswith("scope:")
    param = problem(owner_api.get(EVENTS, data={"limit": "many"}), "validation")
    assert param["fields"] == {"limit": [param["detail"].removeprefix("limit: ")]}


def test_invalid_batch_keeps_one_error_per_item(owner_api, desktop) -> None:
    items = [snapshot("2026-03-02T09:00:00Z", "ok"), {"kind": "snapshot"}, "nope"]
    body = problem(owner_api.post(EVENTS, items), "invalid-batch")
    assert [e["index"] for e in body["errors"]] == [1, 2]
    assert "nothing was stored" in body["detail"]


def test_unreadable_bodies_are_invalid_body(owner_api, desktop) -> None:
    problem(owner_api.post(EVENTS, "{not json"), "invalid-body")
    truncated = gzip.compress(b"[]")[:-4]
    sent = owner_api.post(EVENTS, truncated, headers={"Content-Encoding": "gzip"})
    problem(sent, "invalid-body")
    ndjson = owner_api.post(EVENTS, "{}\nnot-json\n", content_type="application/x-ndjson")
    assert problem(ndjson, "invalid-body")["errors"][0]["index"] == 1


def test_authentication_problems_carry_the_challenge(team) -> None:
    missing = Client().get("/api/v1/entities")
    problem(missing, "authentication")
    assert missing["WWW-Authenticate"] == "Bearer"
    wrong = Client().get("/api/v1/entities", headers={"Authorization": "Bearer afr_nope"})
    assert "revoked" in problem(wrong, "authentication")["detail"]


def test_permission_names_the_scope(reader_api) -> None:
    body = problem(reader_api.post("/api/v1/entities", {"key": "x", "scope": "home"}), "permission")
    assert "'write' scope" in body["detail"]


def test_not_found_reads_the_same_for_another_team_and_for_no_such_path(
    team, owner_api, outsider_api
) -> None:
    entity_create(team=team, key="secret-box", scope="home")
    theirs = problem(outsider_api.get("/api/v1/entities/secret-box"), "not-found")
    never = problem(outsider_api.get("/api/v1/entities/never-was"), "not-found")
    assert {**theirs, "detail": ""} == {**never, "detail": ""}
    nowhere = problem(owner_api.get("/api/v1/no/such/endpoint"), "not-found")
    assert "/api/v1/no/such/endpoint" in nowhere["detail"]
    # A POST to a wrong path is the same 404, not a CSRF page.
    problem(owner_api.post("/api/v1/nowhere", {}), "not-found")
    problem(owner_api.get("/api/v1/benchmark/runs/123"), "not-found")


def test_method_not_allowed(owner_api) -> None:
    problem(
        owner_api.client.delete("/api/v1/entities", headers=owner_api.headers), "method-not-allowed"
    )


def test_not_acceptable(owner_api, desktop) -> None:
    answer = owner_api.get("/api/v1/entities", headers={"Accept": "text/html"})
    problem(answer, "not-acceptable")


def test_conflict(owner_api) -> None:
    owner_api.post("/api/v1/entities", {"key": "twice", "scope": "home"})
    body = problem(
        owner_api.post("/api/v1/entities", {"key": "twice", "scope": "home"}), "conflict"
    )
    assert "key" in body["fields"]


def test_payload_too_large(owner_api, desktop, settings) -> None:
    settings.AFRAMES_MAX_BATCH_EVENTS = 1
    items = [snapshot("2026-03-02T09:00:00Z", "a"), snapshot("2026-03-02T09:00:01Z", "b")]
    assert (
        "AFRAMES_MAX_BATCH_EVENTS"
        in problem(owner_api.post(EVENTS, items), "payload-too-large")["detail"]
    )


def test_unsupported_media_type(owner_api, desktop) -> None:
    problem(owner_api.post(EVENTS, "a,b", content_type="text/csv"), "unsupported-media-type")
    sent = owner_api.post(EVENTS, b"[]", headers={"Content-Encoding": "br"})
    problem(sent, "unsupported-media-type")
    form = owner_api.post("/api/v1/entities", "key=a&scope=home",
                          content_type="application/x-www-form-urlencoded")  # fmt: skip
    problem(form, "unsupported-media-type")


def test_decide_problems_keep_errors_and_decisions(owner_api, team) -> None:
    entity_create(team=team, key="flat", scope="home", timezone_name="Europe/Paris")
    body = problem(owner_api.post("/api/v1/entities/flat/decide", [1, 2]), "invalid-body")
    assert body["errors"] == []
    bad = {"occurred_at": "2024-05-06T07:00:00", "kind": "observation", "payload": {}}
    rejected = problem(owner_api.post("/api/v1/entities/flat/decide", bad), "invalid-batch")
    assert rejected["errors"]
    batch = problem(owner_api.post("/api/v1/entities/flat/events?decide=1", [bad]), "invalid-batch")
    assert batch["errors"][0]["index"] == 0


@pytest.mark.parametrize(
    ("path", "query", "name"),
    [
        ("/api/v1/entities/alice-laptop/events", {"kind": "snap\x00shot"}, "kind"),
        ("/api/v1/entities/alice-laptop/frames", {"app": "Co\x00de"}, "app"),
        ("/api/v1/entities", {"team\x00": "x"}, "team\x00"),
        ("/api/v1/entities/alice-laptop/events", {"from": "2026-03-02T09:00:00\x00Z"}, "from"),
    ],
)
def test_nul_in_a_query_parameter_is_a_400_naming_it(owner_api, desktop, path, query, name):
    body = problem(owner_api.get(path, data=query), "validation")
    assert name in body["fields"] and "NUL" in body["fields"][name][0]


def test_nul_in_a_path_parameter_is_a_400_naming_it(owner_api, desktop) -> None:
    for path, name in (
        ("/api/v1/entities/alice%00laptop", "key"),
        ("/api/v1/entities/alice-laptop/regularities/r%00", "rid"),
        ("/api/v1/entities/alice-laptop/days/2026-03-02%00", "day"),
    ):
        body = problem(owner_api.get(path), "validation")
        assert name in body["fields"], (path, body)


def test_ids_beyond_a_bigint_are_a_400_naming_them(owner_api, desktop) -> None:
    huge = 2**63
    for path in (
        f"/api/v1/entities/alice-laptop/decisions/{huge}",
        f"/api/v1/benchmark/runs/{huge}",
        f"/api/v1/labels/projects/{huge}",
    ):
        assert "pk" in problem(owner_api.get(path), "validation")["fields"], path
    assert problem(owner_api.get(f"/api/v1/benchmark/runs/{huge - 1}"), "not-found")
    page = owner_api.get("/api/v1/entities", data={"limit": str(huge - 1)})
    assert page.status_code == 200  # a limit beyond the largest page is served as that page
    assert (
        "limit" in problem(owner_api.get(f"/api/v1/entities?limit={huge}"), "validation")["fields"]
    )
    history = owner_api.get("/api/v1/labels/projects/1/next", data={"page": str(huge)})
    assert history.status_code in (400, 403)


def test_odd_unicode_and_odd_moments_are_refused_at_the_boundary(owner_api, desktop) -> None:
    # A lone surrogate cannot be stored as text by any database: 400, not 500.
    made = owner_api.post(
        "/api/v1/entities",
        '{"key": "ok-key", "scope": "home", "name": "bad \\ud800 name"}',
    )
    assert "name" in problem(made, "validation")["fields"]
    # Bytes that are no UTF-8 (a surrogate's encoding) arrive replaced, and are no kind.
    assert "kind" in problem(owner_api.get(EVENTS + "?kind=%ED%A0%80"), "validation")["fields"]
    # Moments past datetime's range in UTC are taken at its edge, not a crash.
    for moment in ("0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"):
        assert owner_api.get(EVENTS, data={"from": moment}).status_code == 200
        context = owner_api.get("/api/v1/entities/alice-laptop/context", data={"at": moment})
        assert context.status_code == 200, context.content
    event = {"occurred_at": "0001-01-01T00:00:00+05:00", "kind": "snapshot", "payload": {}}
    body = problem(owner_api.post(EVENTS, [event]), "invalid-batch")
    assert "years 1 to 9999" in body["errors"][0]["message"]
    # A moment datetime can hold whose day cannot be compiled is refused too, never stored
    # (its day's compile would fail and be retried forever).
    for moment in ("0001-01-01T00:00:00Z", "9999-12-31T23:00:00Z", "1899-12-31T23:59:59Z"):
        event = {"occurred_at": moment, "kind": "snapshot", "payload": {"app": "X"}}
        body = problem(owner_api.post(EVENTS, [event]), "invalid-batch")
        assert "outside the years 1900 to 2199" in body["errors"][0]["message"], moment
    late = {
        "occurred_at": "2026-03-02T08:00:00Z",
        "kind": "absence",
        "payload": {"end": "9999-01-01T00:00:00Z"},
    }
    body = problem(owner_api.post(EVENTS, [late]), "invalid-batch")
    assert body["errors"][0]["field"] == "payload.end"


def test_unprocessable_label(team, people, homes) -> None:
    from aframes_web.annotation import services as workbench
    from aframes_web.annotation.models import Assignment
    from aframes_web.annotation.services import ProjectSpec
    from aframes_web.teams.services import token_create

    project = workbench.project_create(
        team=team, spec=ProjectSpec(name="H", scope="home", entities=["home-1"]), build=False
    )
    annotator = Assignment.objects.filter(stream__project=project).first().annotator
    api = ApiClient(token_create(team=team, name="a", scopes=["label"], created_by=annotator).key)
    task = api.get(f"/api/v1/labels/projects/{project.pk}/next").json()["task"]
    path = f"/api/v1/labels/projects/{project.pk}/tasks/{task}"
    body = problem(api.post(path, {"decision": "maybe"}), "unprocessable")
    assert body["detail"]
    nul = problem(api.post(path, {"decision": "abstain", "rationale": "a\x00b"}), "validation")
    assert "rationale" in nul["fields"]
    not_object = problem(api.post(path, [1]), "validation")
    assert "JSON object" in not_object["detail"]


@pytest.mark.parametrize("method", ["get", "post"])
def test_an_empty_or_unknown_format_on_events_is_refused(owner_api, desktop, method) -> None:
    path = "/api/v1/entities/alice-laptop/events?format="
    answer = owner_api.get(path) if method == "get" else owner_api.post(path, [])
    assert answer.status_code == 400 and "format" in answer.json()["fields"]
    listed = owner_api.get("/api/v1/entities/alice-laptop/events?format=json")
    assert listed.status_code == 200 and listed.json()["results"] == []


@pytest.mark.parametrize(
    "path", ["/api/v1/entities", "/api/v1/entities/alice-laptop/events?from=2026-03-02T00:00:00Z"]
)
def test_head_needs_the_scope_get_needs(make_client, team, desktop, path) -> None:
    writer = make_client(team, ["write"], "writer-only")
    assert writer.get(path).status_code == 403
    # Refused like GET: the size of the answer it would have had never leaves the server.
    assert writer.client.head(path, headers=writer.headers).status_code == 403
    reader = make_client(team, ["read"], "reader-only")
    assert reader.client.head(path, headers=reader.headers).status_code == 200


def test_json_nested_past_the_parsers_limit_is_a_400_not_a_500(owner_api, desktop) -> None:
    deep = "[" * 2000 + "]" * 2000
    assert "too deeply" in problem(owner_api.post(EVENTS, deep), "invalid-body")["detail"]
    line = '{"a": ' * 2000 + "1" + "}" * 2000
    ndjson = owner_api.post(EVENTS, line + "\n", content_type="application/x-ndjson")
    assert "too deeply" in json.dumps(problem(ndjson, "invalid-body"))
    # Any JSON body the API reads, not only events.
    made = owner_api.post("/api/v1/entities", deep)
    assert made.status_code == 400 and "too deeply" in made.json()["detail"]


def test_decide_reads_its_body_as_every_other_door_does(owner_api, desktop) -> None:
    """Deep nesting, a 5,000-digit number, bytes that are not UTF-8 and text that is not JSON:
    each a 400 that says what is wrong with the body, never a 500 nor Python's advice."""
    decide = "/api/v1/entities/alice-laptop/decide"
    deep = owner_api.post(decide, "[" * 2000 + "]" * 2000)
    assert deep.status_code == 400 and "too deeply" in deep.json()["detail"]
    brackets = owner_api.post(decide, "[" * 100_000)
    assert brackets.status_code == 400 and "too deeply" in brackets.json()["detail"]
    huge = owner_api.post(decide, '{"payload": {"n": ' + "9" * 5000 + "}}")
    assert huge.status_code == 400
    said = huge.json()["detail"]
    assert "more than 4,300 digits" in said and "set_int_max_str_digits" not in said
    latin = owner_api.post(decide, '{"a": "caf\xe9"}'.encode("latin-1"))
    assert latin.status_code == 400 and "not UTF-8" in latin.json()["detail"]
    garbled = owner_api.post(decide, "{not json")
    assert garbled.status_code == 400 and "is not JSON" in garbled.json()["detail"]
    # The batch door and DRF's parser say the same of the same number.
    for path in (EVENTS, "/api/v1/entities"):
        answer = owner_api.post(path, '[{"n": ' + "9" * 5000 + "}]")
        assert answer.status_code == 400, path
        assert "more than 4,300 digits" in json.dumps(answer.json()), path
    assert Event.objects.count() == 0


def test_a_monitor_of_a_hundred_digits_is_refused_not_stored_or_crashed(owner_api, desktop):
    event = {"occurred_at": "2026-03-02T08:00:00Z", "kind": "snapshot", "payload": {"app": "X"}}
    body = "[" + json.dumps(event)[:-1] + ', "monitor": ' + "9" * 101 + "}]"
    answer = owner_api.post(EVENTS, body)
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "monitor"
