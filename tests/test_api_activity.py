"""The compiled-activity API: days, a day's document, frames, a context window, evidence rows."""

from __future__ import annotations

import json
import sys
from datetime import date
from typing import Any

import pytest

from aframes_web.activity.models import CompileRequest, DayDocument, Frame
from aframes_web.activity.services import compile_requests_add
from aframes_web.streams.models import Event
from aframes_web.streams.services import entity_create
from benchmark.synthetic.desktop import generate_day
from compiler.document import canonical_sha256, expand_runs
from compiler.emit import to_json, to_markdown, to_yaml
from tests.conftest import snapshot

pytestmark = pytest.mark.django_db

DAY = date(2026, 3, 2)  # a Monday
BASE = "/api/v1/entities/alice-laptop"
ENDPOINTS = [
    "/days",
    "/days/2026-03-02",
    "/frames",
    "/context?at=2026-03-02T12:00:00Z",
    "/evidence?ids=1",
]


def _rows(
    minutes: range, app: str, prefix: str, day: str = "2026-03-02", **payload: Any
) -> list[dict[str, Any]]:
    """A snapshot every 30 s through the given minutes of 09:xx local time (Berlin, +01:00)."""
    return [
        snapshot(f"{day}T09:{m:02d}:{s:02d}+01:00", f"{prefix}{m}.{s}", app=app, **payload)
        for m in minutes
        for s in (0, 30)
    ]


def _small_day() -> list[dict[str, Any]]:
    """Code 09:00-09:10, a one-minute chat, GitHub in Firefox until 09:21."""
    return (
        _rows(range(0, 10), "Code", "c")
        + _rows(range(10, 11), "Slack", "s")
        + _rows(range(11, 21), "Firefox", "f", url="https://github.com/acme/app/pull/3")
    )


@pytest.fixture
def small_day(load: Any, desktop: Any) -> DayDocument:
    load(desktop, _small_day())
    return DayDocument.objects.get(entity=desktop, day=DAY, current=True)


@pytest.fixture
def real_day(load: Any, desktop: Any) -> DayDocument:
    load(desktop, generate_day(DAY, seed=3, tz="Europe/Berlin"))
    return DayDocument.objects.get(entity=desktop, day=DAY, current=True)


def _field_error(answer: Any, name: str) -> str:
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert name in body["fields"], body
    return str(body["fields"][name][0])


# --- Isolation and scopes, every endpoint -----------------------------------------------------


@pytest.mark.parametrize("path", ENDPOINTS)
def test_owner_and_member_read_and_an_outsider_sees_no_entity(
    path, owner_api, reader_api, outsider_api, small_day
) -> None:
    assert owner_api.get(BASE + path).status_code == 200
    assert reader_api.get(BASE + path).status_code == 200
    theirs = outsider_api.get(BASE + path)
    missing = outsider_api.get(BASE.replace("alice-laptop", "nobody-here") + path)
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["detail"].replace("alice-laptop", "K") == missing.json()["detail"].replace(
        "nobody-here", "K"
    )


@pytest.mark.parametrize("path", ENDPOINTS)
def test_every_endpoint_needs_the_read_scope(path, team, make_client, small_day) -> None:
    denied = make_client(team, ["write"], "writer").get(BASE + path)
    assert denied.status_code == 403 and "'read' scope" in denied.json()["detail"]


@pytest.mark.parametrize("path", ENDPOINTS)
def test_only_desktop_entities_have_activity(path, owner_api, team) -> None:
    entity_create(team=team, key="flat", scope="home")
    answer = owner_api.get("/api/v1/entities/flat" + path)
    assert answer.status_code == 404
    assert "'flat' is a home entity; only desktop entities" in answer.json()["detail"]


@pytest.mark.parametrize(
    "path", ["/days/2026-03-02", "/context?at=2026-03-02T12:00:00Z", "/evidence?ids=1"]
)
def test_include_text_needs_the_admin_scope(path, reader_api, small_day) -> None:
    joiner = "&" if "?" in path else "?"
    denied = reader_api.get(f"{BASE}{path}{joiner}include_text=1")
    assert denied.status_code == 403
    assert denied.json()["detail"] == "include_text needs the 'admin' scope."


# --- GET .../days -----------------------------------------------------------------------------


def test_days_lists_current_documents_with_their_figures(owner_api, load, desktop) -> None:
    load(desktop, _small_day() + _rows(range(0, 5), "Code", "t", day="2026-03-03"))
    load(desktop, _rows(range(30, 35), "Mail", "late"))  # a second version of Monday
    monday = DayDocument.objects.get(entity=desktop, day=DAY, current=True)
    answer = owner_api.get(BASE + "/days")
    assert answer.status_code == 200
    results = answer.json()["results"]
    assert [r["day"] for r in results] == ["2026-03-02", "2026-03-03"]
    first = results[0]
    assert first == {
        "day": "2026-03-02",
        "version": 2,
        "sha256": monday.sha256,
        "frames": monday.frame_count,
        "active_minutes": monday.active_minutes,
        "events": monday.event_count,
        "compiled_at": first["compiled_at"],
        "compile_ms": monday.compile_ms,
        "pending": False,
    }
    assert first["compiled_at"].endswith("Z") and first["events"] == 52
    assert answer.json()["pending_days"] == []


def test_days_says_which_days_have_a_compile_pending(owner_api, desktop, small_day) -> None:
    # Ingestion has recorded new events but their compile has not run yet.
    compile_requests_add(pairs=[(desktop.pk, DAY), (desktop.pk, date(2026, 3, 4))])
    body = owner_api.get(BASE + "/days").json()
    assert [(r["day"], r["pending"]) for r in body["results"]] == [("2026-03-02", True)]
    assert body["pending_days"] == ["2026-03-04"]


def test_days_of_an_entity_without_activity_is_an_empty_list(owner_api, desktop) -> None:
    assert owner_api.get(BASE + "/days").json() == {
        "results": [],
        "next": None,
        "pending_days": [],
    }


# --- GET .../days/{date} ----------------------------------------------------------------------


def test_day_json_is_the_stored_document_with_its_sha256_as_etag(owner_api, small_day) -> None:
    answer = owner_api.get(BASE + "/days/2026-03-02")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/json; charset=utf-8"
    assert answer["ETag"] == f'"{small_day.sha256}"'
    assert answer.content.decode() == to_json(small_day.body)
    assert canonical_sha256(json.loads(answer.content)) == small_day.sha256
    explicit = owner_api.get(BASE + "/days/2026-03-02", data={"format": "json"})
    assert explicit.content == answer.content and explicit["ETag"] == answer["ETag"]


@pytest.mark.parametrize(
    ("fmt", "content_type"),
    [
        ("yaml", "application/yaml; charset=utf-8"),
        ("md", "text/markdown; charset=utf-8"),
        ("context", "text/plain; charset=utf-8"),
    ],
)
def test_day_in_each_format_names_the_format_in_its_etag(
    fmt, content_type, owner_api, small_day
) -> None:
    answer = owner_api.get(BASE + "/days/2026-03-02", data={"format": fmt})
    assert answer.status_code == 200
    assert answer["Content-Type"] == content_type
    assert answer["ETag"] == f'"{small_day.sha256}-{fmt}"'
    expected = {
        "yaml": to_yaml(small_day.body),
        "md": to_markdown(small_day.body),
        "context": small_day.context,
    }[fmt]
    assert answer.content.decode() == expected


@pytest.mark.parametrize("fmt", ["json", "yaml", "md", "context"])
def test_day_answers_304_to_a_matching_if_none_match(fmt, owner_api, small_day) -> None:
    path = f"{BASE}/days/2026-03-02?format={fmt}"
    etag = owner_api.get(path)["ETag"]
    for held in (etag, f"W/{etag}", f'"stale", {etag}', "*"):
        again = owner_api.get(path, headers={"If-None-Match": held})
        assert again.status_code == 304 and again["ETag"] == etag and again.content == b""
    stale = owner_api.get(path, headers={"If-None-Match": '"0000"'})
    assert stale.status_code == 200 and stale.content


def test_a_new_version_changes_the_etag(owner_api, load, desktop, small_day) -> None:
    before = owner_api.get(BASE + "/days/2026-03-02")["ETag"]
    load(desktop, _rows(range(40, 45), "Mail", "late"))
    answer = owner_api.get(BASE + "/days/2026-03-02", headers={"If-None-Match": before})
    assert answer.status_code == 200 and answer["ETag"] != before
    assert json.loads(answer.content)["coverage"]["distinct_apps"] == 4


def test_min_minutes_recompiles_with_its_own_sha256(owner_api, small_day) -> None:
    path = BASE + "/days/2026-03-02"
    answer = owner_api.get(path, data={"min_minutes": "2"})
    assert answer.status_code == 200
    document = json.loads(answer.content)
    assert [f["app"] for f in document["frames"]] == ["Code", "Firefox"]
    assert document["omitted"] == {"below_min_minutes": 1, "minutes": 1.0, "min_minutes": 2.0}
    sha = canonical_sha256(document)
    assert sha != small_day.sha256 and answer["ETag"] == f'"{sha}"'
    # The same request gives the same bytes (the stored version's generated_at), and a 304.
    assert owner_api.get(path, data={"min_minutes": "2"}).content == answer.content
    assert document["generated_at"] == small_day.body["generated_at"]
    cached = owner_api.get(path, data={"min_minutes": "2"}, headers={"If-None-Match": f'"{sha}"'})
    assert cached.status_code == 304
    # Nothing was stored by the recompile.
    assert DayDocument.objects.filter(entity=small_day.entity).count() == 1
    markdown = owner_api.get(path, data={"min_minutes": "2", "format": "md"})
    assert markdown["ETag"] == f'"{sha}-md"' and "1 frame under 2.0 min" in markdown.text


def test_min_minutes_equal_to_the_stored_one_serves_the_stored_document(
    owner_api, small_day
) -> None:
    assert small_day.params["min_minutes"] == 0.5
    answer = owner_api.get(BASE + "/days/2026-03-02", data={"min_minutes": "0.5"})
    assert answer["ETag"] == f'"{small_day.sha256}"'
    zero = owner_api.get(BASE + "/days/2026-03-02", data={"min_minutes": "0"})
    assert zero.status_code == 200 and zero["ETag"] != answer["ETag"]


def test_a_token_budget_shortens_the_context_block(owner_api, real_day) -> None:
    path = BASE + "/days/2026-03-02"
    full = owner_api.get(path, data={"format": "context"})
    assert full.content.decode() == real_day.context
    short = owner_api.get(path, data={"format": "context", "budget_tokens": "150"})
    assert short.status_code == 200 and len(short.content) < len(full.content)
    assert "beyond the token budget" in short.text
    assert short["ETag"] == f'"{real_day.sha256}-context-b150"'
    again = owner_api.get(
        path,
        data={"format": "context", "budget_tokens": "150"},
        headers={"If-None-Match": short["ETag"]},
    )
    assert again.status_code == 304


@pytest.mark.parametrize(
    ("query", "name", "says"),
    [
        ({"format": "pdf"}, "format", "json, yaml, md, context"),
        ({"min_minutes": "-1"}, "min_minutes", "from 0 to 1440"),
        ({"min_minutes": "soon"}, "min_minutes", "number of minutes"),
        ({"min_minutes": "nan"}, "min_minutes", "number of minutes"),
        ({"min_minutes": "1e9"}, "min_minutes", "from 0 to 1440"),
        ({"format": "context", "budget_tokens": "0"}, "budget_tokens", "at least 1"),
        ({"format": "context", "budget_tokens": "lots"}, "budget_tokens", "whole number"),
        ({"budget_tokens": "100"}, "budget_tokens", "only to format=context"),
    ],
)
def test_day_rejects_bad_parameters_by_name(query, name, says, owner_api, small_day) -> None:
    assert says in _field_error(owner_api.get(BASE + "/days/2026-03-02", data=query), name)


@pytest.mark.parametrize("bad", ["2026-3-2", "2026-02-30", "yesterday", "20260302"])
def test_day_rejects_a_bad_date(bad, owner_api, small_day) -> None:
    assert "is not a date like 2026-03-02" in _field_error(
        owner_api.get(f"{BASE}/days/{bad}"), "date"
    )


def test_a_day_without_a_document_says_why(owner_api, desktop, small_day) -> None:
    quiet = owner_api.get(BASE + "/days/2026-03-05")
    assert quiet.status_code == 404
    assert quiet.json()["detail"] == (
        "Entity 'alice-laptop' has no document for 2026-03-05; "
        "no desktop activity was captured that day."
    )
    compile_requests_add(pairs=[(desktop.pk, date(2026, 3, 5))])
    coming = owner_api.get(BASE + "/days/2026-03-05")
    assert coming.status_code == 404 and "a compile is pending" in coming.json()["detail"]
    CompileRequest.objects.filter(entity=desktop).update(last_error="SourceError: event 7: bad")
    failed = owner_api.get(BASE + "/days/2026-03-05").json()["detail"]
    assert "its compile failed (SourceError: event 7: bad)" in failed


def test_yaml_without_pyyaml_is_refused_with_the_alternatives(
    owner_api, small_day, monkeypatch
) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # as if PyYAML were not installed
    answer = owner_api.get(BASE + "/days/2026-03-02", data={"format": "yaml"})
    assert answer.status_code == 406
    assert "PyYAML" in answer.json()["detail"] and "format=json" in answer.json()["detail"]


# --- Text: only with the admin scope, only when the team stored it ----------------------------


@pytest.fixture
def typed_day(load: Any, desktop: Any, settings: Any) -> DayDocument:
    settings.AFRAMES_STORE_INPUT_TEXT = True
    typed = {
        "occurred_at": "2026-03-02T09:05:10+01:00",
        "kind": "input",
        "source_key": "typed-1",
        "payload": {"type": "text", "text": "dear diary"},
    }
    load(desktop, _small_day() + [typed])
    return DayDocument.objects.get(entity=desktop, day=DAY, current=True)


def test_day_shows_stored_text_only_to_admin_on_request(owner_api, typed_day) -> None:
    path = BASE + "/days/2026-03-02"
    plain = owner_api.get(path)
    assert b"dear diary" not in plain.content
    assert "text" not in json.loads(plain.content)["frames"][0]["input"]
    shown = owner_api.get(path, data={"include_text": "1"})
    assert shown.status_code == 200
    document = json.loads(shown.content)
    assert document["frames"][0]["input"]["text"] == "dear diary"
    assert document["source"]["parameters"]["include_text"] is True
    assert shown["ETag"] == f'"{canonical_sha256(document)}"' != plain["ETag"]
    assert owner_api.get(path, data={"include_text": "true", "format": "yaml"}).status_code == 200


def test_text_the_team_did_not_store_is_simply_absent(owner_api, load, desktop) -> None:
    typed = {
        "occurred_at": "2026-03-02T09:05:10+01:00",
        "kind": "input",
        "source_key": "typed-1",
        "payload": {"type": "text", "text": "dear diary"},
    }
    load(desktop, _small_day() + [typed])  # AFRAMES_STORE_INPUT_TEXT is off
    shown = owner_api.get(BASE + "/days/2026-03-02", data={"include_text": "1"})
    assert shown.status_code == 200 and b"dear diary" not in shown.content
    assert json.loads(shown.content)["frames"][0]["input"]["text"] == ""
    event = Event.objects.get(source_key="typed-1")
    evidence = owner_api.get(BASE + "/evidence", data={"ids": event.id, "include_text": "1"})
    assert "text" not in evidence.json()["results"][0]["payload"]


def test_evidence_shows_stored_text_only_to_admin_on_request(owner_api, typed_day) -> None:
    event = Event.objects.get(source_key="typed-1")
    plain = owner_api.get(BASE + "/evidence", data={"ids": event.id}).json()
    assert "text" not in plain["results"][0]["payload"]
    shown = owner_api.get(BASE + "/evidence", data={"ids": event.id, "include_text": "1"})
    assert shown.json()["results"][0]["payload"]["text"] == "dear diary"


def test_context_with_include_text_is_its_own_document(owner_api, typed_day) -> None:
    query = {"at": "2026-03-02T12:00:00Z", "hours": "4"}
    plain = owner_api.get(BASE + "/context", data=query)
    texted = owner_api.get(BASE + "/context", data={**query, "include_text": "1"})
    assert texted.status_code == 200 and texted["ETag"] != plain["ETag"]


# --- GET .../frames ---------------------------------------------------------------------------


def test_frames_match_the_document_and_page_with_a_cursor(owner_api, real_day) -> None:
    stored = real_day.body["frames"]
    assert len(stored) > 10
    seen: list[dict[str, Any]] = []
    page = owner_api.get(BASE + "/frames", data={"limit": 4}).json()
    assert len(page["results"]) == 4
    while True:
        seen += page["results"]
        if page["next"] is None:
            break
        page = owner_api.get(page["next"]).json()
    assert [f["frame_id"] for f in seen] == [f["id"] for f in stored]
    first, body = seen[0], stored[0]
    assert first["start"] == body["start"] and first["end"] == body["end"]
    assert (first["app"], first["site"], first["monitor"]) == (
        body["app"],
        body["site"],
        body["monitor"],
    )
    assert first["active_s"] == round(body["duration_min"] * 60, 1)
    assert first["evidence"] == body["evidence"]
    assert (first["keys"], first["clicks"], first["copies"]) == (
        body["input"]["keys"],
        body["input"]["clicks"],
        body["input"]["copies"],
    )
    assert first["interruptions"] == len(body["interruptions"])
    assert first["transit"] == body["transit"] and first["day"] == "2026-03-02"
    assert first["document"] == {"version": 1, "sha256": real_day.sha256}
    assert set(first) >= {"wall_s", "active_s"}


def test_frames_filter_by_time_app_site_and_day(owner_api, load, desktop, small_day) -> None:
    load(desktop, _rows(range(0, 5), "Code", "t", day="2026-03-03"))

    def ids(**query: Any) -> list[tuple[str, str]]:
        answer = owner_api.get(BASE + "/frames", data=query)
        assert answer.status_code == 200, answer.content
        return [(f["day"], f["app"]) for f in answer.json()["results"]]

    monday = [("2026-03-02", "Code"), ("2026-03-02", "Slack"), ("2026-03-02", "Firefox")]
    assert ids() == [*monday, ("2026-03-03", "Code")]
    assert ids(day="2026-03-02") == monday
    assert ids(app="code") == [("2026-03-02", "Code"), ("2026-03-03", "Code")]
    assert ids(site="GitHub.com") == [("2026-03-02", "Firefox")]
    # Frames overlapping [from, to): Slack ran 09:10-09:11 local (08:10-08:11Z).
    assert ids(**{"from": "2026-03-02T09:10:30+01:00", "to": "2026-03-02T08:11:00Z"}) == [
        ("2026-03-02", "Slack")
    ]
    assert ids(**{"from": "2026-03-03T00:00:00+01:00"}) == [("2026-03-03", "Code")]


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ({"from": "2026-03-02T09:00:00"}, "from"),
        ({"to": "next week"}, "to"),
        ({"day": "2026-13-01"}, "day"),
        ({"cursor": "!!"}, "cursor"),
        ({"limit": "0"}, "limit"),
        ({"limit": "many"}, "limit"),
    ],
)
def test_frames_reject_bad_parameters_by_name(query, name, owner_api, small_day) -> None:
    _field_error(owner_api.get(BASE + "/frames", data=query), name)


# --- GET .../context --------------------------------------------------------------------------


def test_context_is_a_rolling_window_that_crosses_days(owner_api, load, desktop) -> None:
    load(desktop, _small_day() + _rows(range(0, 5), "Mail", "t", day="2026-03-03"))
    # 24 h back from Tuesday 09:15 Berlin covers Monday 09:15 onwards: Firefox's tail and Mail.
    answer = owner_api.get(
        BASE + "/context", data={"at": "2026-03-03T09:15:00+01:00", "hours": "24"}
    )
    assert answer.status_code == 200
    assert answer["Content-Type"] == "text/plain; charset=utf-8"
    text = answer.content.decode()
    assert text.startswith(
        "Activity 2026-03-02T09:15 to 2026-03-03T09:15 (Europe/Berlin): measured from capture"
    )
    assert "- 09:15-09:20 Firefox/github.com" in text and "Mail" in text and "Code" not in text
    week = owner_api.get(BASE + "/context", data={"at": "2026-03-03T09:30:00+01:00", "hours": 168})
    assert "Code" in week.text and "Mail" in week.text
    one = owner_api.get(BASE + "/context", data={"at": "2026-03-02T09:05:00+01:00", "hours": 1})
    assert "Code" in one.text and "Firefox" not in one.text


def test_context_etag_is_stable_for_the_same_window_and_answers_304(owner_api, small_day) -> None:
    query = {"at": "2026-03-02T12:00:00.750Z", "hours": "6"}
    first = owner_api.get(BASE + "/context", data=query)
    etag = first["ETag"]
    assert etag.startswith('"') and etag.endswith('-context"') and len(etag) == 64 + 10
    # The instant is taken to the second, as the document states it.
    same = owner_api.get(BASE + "/context", data={**query, "at": "2026-03-02T13:00:00+01:00"})
    assert same["ETag"] == etag and same.content == first.content
    cached = owner_api.get(BASE + "/context", data=query, headers={"If-None-Match": etag})
    assert cached.status_code == 304 and cached["ETag"] == etag
    budget = owner_api.get(BASE + "/context", data={**query, "budget_tokens": 60})
    assert budget["ETag"] == etag.replace('-context"', '-context-b60"')
    assert "beyond the token budget" in budget.text
    later = owner_api.get(BASE + "/context", data={**query, "hours": "7"})
    assert later["ETag"] != etag


def test_context_without_at_ends_now(owner_api, small_day) -> None:
    answer = owner_api.get(BASE + "/context")
    assert answer.status_code == 200
    assert "no activity captured in this window" in answer.text  # the test day is long past


@pytest.mark.parametrize(
    ("query", "name", "says"),
    [
        ({"hours": "0"}, "hours", "from 0.25 to 168"),
        ({"hours": "169"}, "hours", "from 0.25 to 168"),
        ({"hours": "a day"}, "hours", "number of hours"),
        ({"hours": "nan"}, "hours", "number of hours"),
        ({"at": "2026-03-02T12:00:00"}, "at", "no UTC offset"),
        ({"at": "noon"}, "at", "not an ISO 8601 timestamp"),
        ({"budget_tokens": "-5"}, "budget_tokens", "at least 1"),
    ],
)
def test_context_rejects_bad_parameters_by_name(query, name, says, owner_api, small_day) -> None:
    assert says in _field_error(owner_api.get(BASE + "/context", data=query), name)


# --- GET .../evidence -------------------------------------------------------------------------


def test_evidence_returns_a_frames_rows_in_time_order(owner_api, real_day) -> None:
    frame = Frame.objects.filter(document=real_day).exclude(evidence_inputs="").first()
    assert frame is not None
    runs = f"{frame.evidence_inputs},{frame.evidence_rows}"
    answer = owner_api.get(BASE + "/evidence", data={"ids": runs})
    assert answer.status_code == 200
    body = answer.json()
    wanted = sorted(set(expand_runs(runs)))
    assert sorted(e["id"] for e in body["results"]) == wanted and body["missing"] == []
    moments = [(e["occurred_at"], e["id"]) for e in body["results"]]
    assert moments == sorted(moments)
    kinds = {e["kind"] for e in body["results"]}
    assert kinds == {"snapshot", "input"}
    assert set(body["results"][0]) == {
        "id",
        "occurred_at",
        "kind",
        "source_key",
        "monitor",
        "payload",
        "received_at",
    }


def test_evidence_lists_missing_ids_and_never_another_teams(
    owner_api, outsider_api, other_team, load, small_day
) -> None:
    theirs = entity_create(team=other_team, key="bob-pc", scope="desktop")
    load(theirs, _rows(range(0, 2), "Secret", "x"))
    foreign = list(Event.objects.filter(entity=theirs).values_list("id", flat=True))
    mine = list(Event.objects.filter(entity=small_day.entity).values_list("id", flat=True))
    query = ",".join(str(i) for i in [mine[0], *foreign, 999999])
    body = owner_api.get(BASE + "/evidence", data={"ids": query}).json()
    assert [e["id"] for e in body["results"]] == [mine[0]]
    assert body["missing"] == sorted([*foreign, 999999])
    assert "Secret" not in json.dumps(body)
    # The other team asking for our ids through its own entity gets them as missing too.
    back = outsider_api.get("/api/v1/entities/bob-pc/evidence", data={"ids": mine[0]}).json()
    assert back == {"results": [], "missing": [mine[0]]}


def test_evidence_accepts_runs_spaces_and_duplicates(owner_api, small_day) -> None:
    ids = list(
        Event.objects.filter(entity=small_day.entity).order_by("id").values_list("id", flat=True)
    )
    query = f"{ids[0]}-{ids[2]}, {ids[1]},{ids[5]},"
    body = owner_api.get(BASE + "/evidence", data={"ids": query}).json()
    assert [e["id"] for e in body["results"]] == [*ids[0:3], ids[5]]


def test_evidence_caps_the_number_of_ids(owner_api, small_day) -> None:
    assert owner_api.get(BASE + "/evidence", data={"ids": "1-5000"}).status_code == 200
    too_many = owner_api.get(BASE + "/evidence", data={"ids": "1-4999,7000,8000"})
    assert "more than 5,000 ids" in _field_error(too_many, "ids")
    huge = owner_api.get(BASE + "/evidence", data={"ids": "1-999999999999"})
    assert "more than 5,000 ids" in _field_error(huge, "ids")


@pytest.mark.parametrize(
    ("ids", "says"),
    [
        (None, "is required"),
        ("", "is required"),
        (" , ", "is required"),
        ("12,abc", "'abc' is not an event id"),
        ("12-", "'12-' is not an event id"),
        ("-3", "'-3' is not an event id"),
        ("1.5", "'1.5' is not an event id"),
        ("9-4", "runs backwards; write 4-9"),
        ("1234567890123456789", "is not an event id"),
    ],
)
def test_evidence_rejects_bad_ids_by_name(ids, says, owner_api, small_day) -> None:
    query = {} if ids is None else {"ids": ids}
    assert says in _field_error(owner_api.get(BASE + "/evidence", data=query), "ids")
