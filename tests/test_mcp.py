"""The MCP server through a real MCP client: streamable HTTP against a live uvicorn, and stdio.

The SDK's own client (``mcp.Client`` over ``streamable_http_client``) talks to the ASGI
application that ``manage.py serve`` and gunicorn serve, started here on a free port.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx2
import pytest
from django.utils import timezone
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from aframes_web.activity.models import Frame
from aframes_web.annotation import services as annotation
from aframes_web.annotation.services import ProjectSpec
from aframes_web.proactivestream.models import BenchmarkRun
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.services import entity_create
from aframes_web.teams.services import token_create, token_revoke
from memory.models import Decision
from memory.services.deciding import decide_batch
from tests.asgi_server import serving
from tests.conftest import page_text
from tests.home_streams import START, motion, routine_day, stream

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {
    "get_context",
    "get_activity",
    "get_steps",
    "get_day_summary",
    "get_patterns",
    "get_communications",
    "list_entities",
    "get_memory",
    "decide",
    "get_decisions",
    "get_evidence",
    "search_events",
    "get_benchmark_run",
    "next_label_task",
}


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """The ASGI application on uvicorn in a thread, as `manage.py serve` runs it."""
    from aframes_web.asgi import build_application

    with serving(build_application()) as url:
        yield url


class Answer:
    def __init__(self, result: Any) -> None:
        self.error = bool(result.is_error)
        self.text = result.content[0].text

    def json(self) -> Any:
        assert not self.error, self.text
        return json.loads(self.text)


def calls(url: str, key: str, *steps: tuple[str, dict[str, Any]]) -> list[Answer]:
    """Call tools in order in one MCP session with ``key`` as the bearer token."""

    async def run() -> list[Answer]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            return [Answer(await client.call_tool(name, args)) for name, args in steps]

    return asyncio.run(run())


def call(url: str, key: str, name: str, args: dict[str, Any] | None = None) -> Answer:
    return calls(url, key, (name, args or {}))[0]


def _rows(minutes: range, app: str, prefix: str, **payload: Any) -> list[dict[str, Any]]:
    from tests.conftest import snapshot

    return [
        snapshot(f"2026-03-02T09:{m:02d}:{s:02d}+01:00", f"{prefix}{m}.{s}", app=app, **payload)
        for m in minutes
        for s in (0, 30)
    ]


@pytest.fixture
def desktop_day(load: Any, desktop: Entity) -> Entity:
    """Code 09:00-09:10, Slack for a minute, GitHub in Firefox until 09:21 (Berlin)."""
    load(
        desktop,
        _rows(range(0, 10), "Code", "c")
        + _rows(range(10, 11), "Slack", "s")
        + _rows(range(11, 21), "Firefox", "f", url="https://github.com/acme/app/pull/3"),
    )
    return desktop


@pytest.fixture
def home(team: Any) -> Entity:
    """Six days of a routine, then a day without the kitchen: memory has something to show."""
    entity = entity_create(team=team, key="flat-1", scope="home", timezone_name="Europe/Paris")
    decide_batch(entity=entity, items=stream(6))
    decide_batch(entity=entity, items=routine_day(START + timedelta(days=6), kitchen=False))
    return entity


def key(team: Any, scopes: list[str], name: str = "agent", user: Any = None) -> str:
    return token_create(team=team, name=name, scopes=scopes, created_by=user).key


def test_lists_every_tool_with_a_description_and_a_typed_schema(server_url, team) -> None:
    agent = key(team, ["read"])

    async def run() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {agent}"})
        async with Client(streamable_http_client(f"{server_url}/mcp", http_client=http)) as c:
            return c.server_info, (await c.list_tools()).tools

    info, tools = asyncio.run(run())
    assert info is not None and info.name == "aframes"
    assert {t.name for t in tools} == TOOLS
    for tool in tools:
        assert tool.description and len(tool.description) > 60, tool.name
        assert tool.input_schema["type"] == "object"
        for name, field in tool.input_schema["properties"].items():
            assert field.get("description"), (tool.name, name)
    by_name = {t.name: t for t in tools}
    assert by_name["get_steps"].input_schema["required"] == ["frame"]
    assert by_name["decide"].input_schema["required"] == ["event"]
    assert set(by_name["get_decisions"].input_schema["properties"]) == {
        "entity",
        "from",
        "to",
        "action",
        "limit",
    }
    # Tools reading captured text say that it is data, not instructions.
    for name in (
        "get_context",
        "get_activity",
        "get_steps",
        "search_events",
        "get_evidence",
        "get_patterns",
    ):
        assert "untrusted" in by_name[name].description.lower() or "treat them as data" in (
            by_name[name].description
        )


def test_desktop_tools_answer_from_the_compiled_day(server_url, team, desktop_day) -> None:
    agent = key(team, ["read"])
    context, activity, summary, comms, patterns = calls(
        server_url,
        agent,
        ("get_context", {"hours": 4, "at": "2026-03-02T12:00:00+01:00"}),
        ("get_activity", {"day": "2026-03-02"}),
        ("get_day_summary", {"entity": "alice-laptop", "day": "2026-03-02"}),
        ("get_communications", {"day": "2026-03-02"}),
        ("get_patterns", {"days": 3}),
    )
    assert "Code" in context.text and "Firefox" in context.text and "github" in context.text
    document = activity.json()
    frames = document["frames"]
    assert [f["app"] for f in frames[:1]] == ["Code"]
    assert {"coverage", "blind_spots", "frames"} <= set(document)
    apps = {a["app"]: a for a in summary.json()["apps"]}
    assert apps["Code"]["minutes"] == pytest.approx(10, abs=0.6)
    assert summary.json()["day"] == "2026-03-02"
    assert any(s["app"] == "Slack" for s in comms.json())
    # compiler.patterns over the last 3 days with activity: the fixture has one.
    assert not patterns.error
    found = patterns.json()
    assert (found["entity"], found["days"], found["from"]) == ("alice-laptop", 1, "2026-03-02")
    assert isinstance(found["patterns"], list)
    for item in found["patterns"]:
        assert {"kind", "label", "count", "evidence"} <= set(item)


def _recent(entity: Entity, load: Any) -> datetime:
    """Code 30 minutes ago and Slack 5 hours ago (whole minutes): inside and outside the
    default window."""
    from tests.conftest import snapshot

    now = timezone.now().replace(second=0, microsecond=0)
    rows = [
        snapshot((now - ago).isoformat(), f"{app}{ago}", app=app)
        for app, start in (("Code", timedelta(minutes=30)), ("Slack", timedelta(hours=5)))
        for ago in (start - timedelta(seconds=30 * i) for i in range(10))
    ]
    load(entity, rows)
    return now


def test_rest_mcp_and_the_page_ask_one_context_question_with_one_default(
    server_url, team, owner, desktop, load
) -> None:
    from tests.conftest import ApiClient, signed_in

    _recent(desktop, load)
    token = key(team, ["read"])
    rest = ApiClient(token)
    page = signed_in(owner)
    base = "/api/v1/entities/alice-laptop/context"
    at = (timezone.now() + timedelta(minutes=1)).replace(second=0, microsecond=0)
    local_at = at.astimezone(ZoneInfo("Europe/Berlin")).strftime("%Y-%m-%dT%H:%M")

    # No hours anywhere: each door applies the one default (2 hours) to the same moment.
    by_rest = rest.get(base, data={"at": at.isoformat()}).content.decode()
    by_mcp = call(server_url, token, "get_context", {"at": at.isoformat()}).text
    by_page = page.get("/t/acme/e/alice-laptop/context/", data={"at": local_at})
    assert by_rest == by_mcp
    assert html.unescape(page_text(by_page)).count(by_rest.strip()) == 1
    assert "Code" in by_rest and "Slack" not in by_rest

    # No at either: a window ending now, with the same default length.
    for text in (
        rest.get(base).content.decode(),
        call(server_url, token, "get_context").text,
        page_text(page.get("/t/acme/e/alice-laptop/context/")),
    ):
        assert "Code" in text and "Slack" not in text

    # One limit and one message for a bad value, whichever door it came through.
    problem = rest.get(base, data={"hours": "200"}).json()
    refused = call(server_url, token, "get_context", {"hours": 200})
    shown = page_text(page.get("/t/acme/e/alice-laptop/context/", data={"hours": "200"}))
    message = "must be a number of hours from 0.25 to 168"
    assert message in json.dumps(problem) and refused.error and message in refused.text
    assert message in shown
    longer = rest.get(base, data={"hours": "6", "at": at.isoformat()}).content.decode()
    assert "Slack" in longer


def test_get_steps_finds_a_frame_from_any_window_by_its_stable_id(
    server_url, team, desktop_day
) -> None:
    frame = Frame.objects.filter(entity=desktop_day, app="Firefox").get().frame_id
    agent = key(team, ["read"])
    on_day, far_window, unknown = calls(
        server_url,
        agent,
        ("get_steps", {"frame": frame, "day": "2026-03-02"}),
        ("get_steps", {"frame": frame, "hours": 1}),  # the last hour: long after the frame
        ("get_steps", {"frame": "f-999999"}),
    )
    assert on_day.json() == far_window.json()
    assert on_day.json()["step_count"] == len(on_day.json()["steps"])
    assert unknown.error and "has no frame 'f-999999'" in unknown.text


def test_memory_tools_read_trajectories_regularities_decisions_and_evidence(
    server_url, team, home
) -> None:
    agent = key(team, ["read"])
    newest = Decision.objects.filter(entity=home).order_by("-occurred_at", "-id").first()
    decided = next(d for d in Decision.objects.filter(entity=home).order_by("-id") if d.evidence)
    memory, decisions, abstains, evidence, found = calls(
        server_url,
        agent,
        ("get_memory", {"entity": "flat-1"}),
        ("get_decisions", {"entity": "flat-1", "limit": 5}),
        ("get_decisions", {"entity": "flat-1", "action": "abstain", "from": "2000-01-01T00:00Z"}),
        ("get_evidence", {"entity": "flat-1", "ids": ",".join(decided.evidence)}),
        ("search_events", {"entity": "flat-1", "query": "KITCHEN", "limit": 3}),
    )
    body = memory.json()
    assert body["trajectory"]["day"] == (START + timedelta(days=5)).isoformat()
    assert body["trajectory"]["segments"] and body["active_regularities"]
    regularity = body["active_regularities"][0]
    assert regularity["summary"] and regularity["state"] == "active"
    assert regularity["evidence"] and regularity["evidence"][0]["facts"]
    listed = decisions.json()["results"]
    assert len(listed) == 5 and decisions.json()["truncated"] is True
    assert newest is not None and listed[-1]["id"] == newest.pk  # the newest five, oldest first
    assert {d["action"] for d in abstains.json()["results"]} == {"abstain"}
    cited = evidence.json()
    event_ids = [int(r.removeprefix("event:")) for r in decided.evidence if r.startswith("event:")]
    assert set(event_ids) <= {e["id"] for e in cited["results"]}
    assert cited["missing"] == [] or all(m.startswith("fact:") for m in cited["missing"])
    hits = found.json()["results"]
    assert len(hits) == 3 and all("kitchen" in json.dumps(h).lower() for h in hits)


def test_search_never_matches_private_ground_truth(server_url, team) -> None:
    entity = entity_create(team=team, key="flat-2", scope="home", timezone_name="Europe/Paris")
    item = motion(START, 7, 0, "bedroom")
    item["payload"]["private"] = {"activity": "secret-sleeping"}
    decide_batch(entity=entity, items=[item])
    assert Event.objects.filter(entity=entity).count() == 1
    hits = call(server_url, key(team, ["read"]), "search_events", {"query": "secret-sleeping"})
    assert hits.json()["results"] == []


def test_decide_stores_the_event_after_its_decision_and_needs_write(server_url, team, home) -> None:
    event = motion(START + timedelta(days=7), 7, 5, "bedroom", n=99)
    refused = call(
        server_url, key(team, ["read"], "r"), "decide", {"entity": "flat-1", "event": event}
    )
    assert refused.error and "needs the 'write' scope" in refused.text
    assert not Event.objects.filter(source_key=event["source_key"]).exists()
    writer = key(team, ["read", "write"], "w")
    first, again = calls(
        server_url,
        writer,
        ("decide", {"entity": "flat-1", "event": event}),
        ("decide", {"entity": "flat-1", "event": event}),
    )
    made = first.json()
    assert made["action"] in ("intervene", "abstain") and made["duplicate"] is False
    assert made["event_id"] == Event.objects.get(source_key=event["source_key"]).pk
    assert again.json()["duplicate"] is True and again.json()["id"] == made["id"]
    bad = call(server_url, writer, "decide", {"entity": "flat-1", "event": {"kind": "x"}})
    assert bad.error and "nothing was stored" in bad.text


def test_benchmark_run_and_next_label_task(server_url, team, people, homes) -> None:
    run = BenchmarkRun.objects.create(team=team, config={"scope": "home"}, code_version="t")
    spec = ProjectSpec(name="Homes", scope="home", entities=["home-1"], labels_per_point=1)
    project = annotation.project_create(team=team, spec=spec, build=False)
    annotator = project.streams.get().assignments.get().annotator
    labeller = key(team, ["read", "label"], "l", user=annotator)
    shown, task, nobody = (
        call(server_url, key(team, ["read"], "r"), "get_benchmark_run", {"id": run.pk}),
        call(server_url, labeller, "next_label_task", {}),
        call(server_url, key(team, ["label"], "n"), "next_label_task", {}),
    )
    assert shown.json()["id"] == run.pk and shown.json()["status"] == "queued"
    nxt = task.json()
    assert nxt["project"] == project.pk and nxt["seq"] == 1 and nxt["label"] is None
    assert nobody.error and "acts for nobody" in nobody.text


def test_another_teams_entities_and_runs_read_as_missing(
    server_url, team, other_team, desktop_day, home
) -> None:
    theirs = key(other_team, ["read", "write", "label", "admin"], "theirs")
    entity_create(team=other_team, key="their-desk", scope="desktop", timezone_name="UTC")
    run = BenchmarkRun.objects.create(team=team, config={}, code_version="t")
    steps: list[tuple[str, dict[str, Any]]] = [
        ("get_context", {"entity": "alice-laptop"}),
        ("get_activity", {"entity": "alice-laptop", "day": "2026-03-02"}),
        ("get_steps", {"entity": "alice-laptop", "frame": "f-1"}),
        ("get_day_summary", {"entity": "alice-laptop", "day": "2026-03-02"}),
        ("get_patterns", {"entity": "alice-laptop"}),
        ("get_communications", {"entity": "alice-laptop"}),
        ("get_memory", {"entity": "flat-1"}),
        ("decide", {"entity": "flat-1", "event": motion(START, 7, 0, "bedroom", n=5)}),
        ("get_decisions", {"entity": "flat-1"}),
        ("get_evidence", {"entity": "flat-1", "ids": "1-3"}),
        ("search_events", {"entity": "flat-1", "query": "kitchen"}),
    ]
    answers = calls(server_url, theirs, *steps)
    for (name, args), answer in zip(steps, answers, strict=True):
        assert answer.error, name
        assert f"has no entity {args['entity']!r}" in answer.text, (name, answer.text)
    missing = calls(server_url, theirs, ("get_memory", {"entity": "no-such-thing"}))[0]
    assert missing.text.replace("no-such-thing", "flat-1") == answers[6].text
    hidden = call(server_url, theirs, "get_benchmark_run", {"id": run.pk})
    assert hidden.error and "has no benchmark run" in hidden.text
    listed = call(server_url, theirs, "list_entities")
    assert [e["key"] for e in listed.json()] == ["their-desk"]
    # The team's only entity is the default.
    only = call(server_url, theirs, "get_context", {"hours": 1})
    assert not only.error and "measured from capture" in only.text


def test_entity_is_required_only_when_the_team_has_several(server_url, team, desktop_day, home):
    answer = call(server_url, key(team, ["read"]), "get_context", {})
    assert answer.error and "several entities (alice-laptop, flat-1)" in answer.text
    wrong_kind = call(server_url, key(team, ["read"], "k"), "get_context", {"entity": "flat-1"})
    assert wrong_kind.error and "is a home entity" in wrong_kind.text


def test_bad_arguments_are_tool_errors_not_protocol_failures(server_url, team, home) -> None:
    agent = key(team, ["read"])
    answers = calls(
        server_url,
        agent,
        ("get_decisions", {"entity": "flat-1", "action": "maybe"}),
        ("get_decisions", {"entity": "flat-1", "from": "yesterday"}),
        ("get_evidence", {"entity": "flat-1", "ids": "9-3"}),
        ("get_memory", {"entity": "flat-1", "day": "2026-13-40"}),
        ("get_steps", {"frame": "f-1", "max_steps": 0}),
        ("get_context", {"entity": "flat-1", "hours": 1000}),
        ("search_events", {"entity": "flat-1", "query": "  "}),
        ("get_decisions", {"entity": "flat-1", "limit": "many"}),
        ("get_evidence", {"entity": "flat-1", "ids": "1", "include_text": True}),
    )
    assert all(a.error for a in answers), [a.text for a in answers]
    texts = [a.text for a in answers]
    assert "action must be one of" in texts[0]
    assert "from:" in texts[1]
    assert "runs backwards" in texts[2]
    assert "is not a date like" in texts[3]
    assert "needs the 'admin' scope" in texts[8]
    # A wrong type is one plain sentence, no pydantic report.
    assert texts[7] == "get_decisions: limit must be a whole number, not 'many'."
    assert "pydantic" not in " ".join(texts) and "validation error" not in " ".join(texts)


def _initialize(url: str, headers: dict[str, str]) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    return httpx2.post(
        f"{url}/mcp",
        json=body,
        headers={"Accept": "application/json, text/event-stream", **headers},
        timeout=30,
    )


def test_auth_failures_are_refused_before_any_tool(server_url, team) -> None:
    assert _initialize(server_url, {}).status_code == 401
    assert "Bearer" in _initialize(server_url, {}).headers.get("www-authenticate", "")
    assert _initialize(server_url, {"Authorization": "Bearer afr_nope_nope"}).status_code == 401
    good = token_create(team=team, name="soon-revoked", scopes=["read"])
    assert _initialize(server_url, {"Authorization": f"Bearer {good.key}"}).status_code == 200
    token_revoke(token=good.token)
    assert _initialize(server_url, {"Authorization": f"Bearer {good.key}"}).status_code == 401


def test_a_401_names_the_resource_metadata_that_says_how_to_get_a_token(server_url, team) -> None:
    """MCP authorization (RFC 9728): the challenge points at the metadata; the metadata says
    bearer tokens from manage.py create_token are the way in, with no OAuth server."""
    host = server_url.removeprefix("http://")
    said = {"": "needs a bearer token", "Bearer afr_nope_nope": "unknown to this server"}
    for sent, words in said.items():
        refused = _initialize(server_url, {"Authorization": sent} if sent else {})
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        expected = f'resource_metadata="http://{host}/.well-known/oauth-protected-resource/mcp"'
        assert expected in challenge and challenge.count("resource_metadata") == 1
        assert challenge.count("error_description=") == 1
        # What a client prints (the inspector shows the body): what was wrong and what to do.
        answer = refused.json()
        assert answer["error"] == "invalid_token"
        assert words in answer["error_description"]
        assert "manage.py create_token" in answer["error_description"]
        assert int(refused.headers["content-length"]) == len(refused.content)
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        document = httpx2.get(server_url + path, timeout=10).json()
        assert document["resource"] == f"http://{host}/mcp"
        assert document["authorization_servers"] == []
        assert document["bearer_methods_supported"] == ["header"]
        assert "manage.py create_token" in document["aframes_authentication"]


def test_the_sdk_client_connects_with_a_good_token_and_is_refused_with_a_bad_one_or_none(
    server_url, team
) -> None:
    good = key(team, ["read"])
    assert {t.name for t in _list_tools(server_url, {"Authorization": f"Bearer {good}"})} >= TOOLS
    for headers in ({"Authorization": "Bearer afr_nope_nope"}, {}):
        # The SDK's client, given no OAuth provider, reports the 401 as an error response of
        # the handshake (raised through its task groups): no session, no tool.
        with pytest.raises(BaseExceptionGroup) as refused:
            _list_tools(server_url, headers)
        assert "Server returned an error response" in repr(refused.value)


def _list_tools(url: str, headers: dict[str, str]) -> list[Any]:
    async def run() -> list[Any]:
        http = httpx2.AsyncClient(headers=headers, timeout=30)
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            return list((await client.list_tools()).tools)

    return asyncio.run(run())


def test_a_hostile_body_is_a_4xx_never_a_500(server_url, team) -> None:
    """The SDK parses the body (pydantic): nested too deeply, a 5,000-digit number, bytes that
    are not UTF-8 or not JSON each get a client error, as the REST doors do."""
    headers = {
        "Authorization": f"Bearer {key(team, ['read'])}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    bodies = {
        "deep": b"[" * 2000 + b"]" * 2000,
        "brackets": b"[" * 100_000,
        "number": b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "tools/list"}',
        "latin-1": '{"jsonrpc": "2.0", "id": "caf\xe9"}'.encode("latin-1"),
        "not-json": b"{not json",
    }
    for name, body in bodies.items():
        answer = httpx2.post(f"{server_url}/mcp", content=body, headers=headers, timeout=30)
        assert 400 <= answer.status_code < 500, f"{name}: {answer.status_code}"


def test_hosts_and_origins_outside_allowed_hosts_are_refused(server_url, team) -> None:
    auth = {"Authorization": f"Bearer {key(team, ['read'])}"}
    assert _initialize(server_url, {**auth, "Host": "evil.example"}).status_code == 400
    rebinding = _initialize(server_url, {**auth, "Origin": "http://evil.example"})
    assert rebinding.status_code == 403
    assert _initialize(server_url, {**auth, "Origin": "http://localhost:8000"}).status_code == 200


def test_the_web_pages_still_answer_beside_mcp(server_url) -> None:
    assert httpx2.get(f"{server_url}/healthz", timeout=10).status_code == 200
    assert httpx2.get(f"{server_url}/login/", timeout=10).status_code == 200
    assert httpx2.get(f"{server_url}/api/v1/entities", timeout=10).status_code in (401, 403)
    js = httpx2.get(f"{server_url}/static/vendor/htmx-2.0.11/htmx.min.js", timeout=10)
    assert js.status_code == 200 and len(js.content) > 10_000


def test_stdio_server_through_a_real_pipe(tmp_path: Path) -> None:
    """`manage.py mcp_stdio` in its own process, on its own SQLite database."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'stdio.sqlite3'}",
        "AFRAMES_VAR_DIR": str(tmp_path / "var"),
        "SECRET_KEY": "stdio-test",
    }
    env.pop("REDIS_URL", None)
    manage = [sys.executable, str(ROOT / "manage.py")]

    def run(*args: str) -> str:
        done = subprocess.run(
            [*manage, *args], env=env, capture_output=True, text=True, timeout=180, check=True
        )
        return done.stdout

    run("migrate", "--noinput")
    run("create_team", "acme", "--name", "Acme")
    agent = run("create_token", "acme", "agent", "--scopes", "read", "--quiet").strip()
    run("create_team", "globex", "--name", "Globex")
    theirs = run("create_token", "globex", "theirs", "--scopes", "read", "--quiet").strip()

    async def session(token: str) -> list[Answer]:
        params = StdioServerParameters(
            command=sys.executable,
            args=[str(ROOT / "manage.py"), "mcp_stdio", "--token", token],
            env=env,
        )
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            return [
                Answer(await client.call_tool("list_entities", {})),
                Answer(await client.call_tool("get_memory", {"entity": "nope"})),
            ]

    listed, missing = asyncio.run(session(agent))
    assert listed.json() == []
    assert missing.error and "Team 'acme' has no entity 'nope'" in missing.text
    assert "Team 'globex' has no entity" in asyncio.run(session(theirs))[1].text
    refused = subprocess.run(
        [*manage, "mcp_stdio", "--token", "afr_bad_bad"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert refused.returncode != 0 and "unknown or has been revoked" in refused.stderr


def test_tokens_last_use_is_recorded(server_url, team) -> None:
    issued = token_create(team=team, name="fresh", scopes=["read"])
    call(server_url, issued.key, "list_entities")
    token = issued.token
    token.refresh_from_db()
    assert token.last_used_at is not None
    assert timezone.now() - token.last_used_at < timedelta(minutes=2)


def test_downloads_stream_under_asgi_without_reading_everything_first(
    server_url, team, desktop_day, recwarn
) -> None:
    reader = key(team, ["read"])
    with httpx2.stream(
        "GET",
        f"{server_url}/api/v1/entities/alice-laptop/events",
        headers={"Authorization": f"Bearer {reader}", "Accept": "application/x-ndjson"},
        timeout=30,
    ) as answer:
        assert answer.status_code == 200
        lines = [json.loads(line) for line in answer.iter_lines() if line]
    assert len(lines) == Event.objects.filter(entity=desktop_day).count()
    # Django warns when it must read a synchronous iterator whole to serve it over ASGI.
    assert not [w for w in recwarn if "consume synchronous iterators" in str(w.message)]


def test_argument_errors_are_plain_sentences_per_field() -> None:
    from pydantic import BaseModel, ConfigDict, Field, ValidationError

    from aframes_web.mcp.server import argument_sentences

    class Arguments(BaseModel):
        model_config = ConfigDict(extra="forbid")
        entity: str
        hours: float = 2
        limit: int = Field(default=10, ge=1)
        text: bool = False

    try:
        Arguments.model_validate({"hours": "soon", "limit": 0, "text": "maybe", "colour": 1})
    except ValidationError as error:
        said = argument_sentences("get_context", error)
    assert said == (
        "get_context: entity is required; hours must be a number, not 'soon'; limit should be "
        "greater than or equal to 1; text must be true or false, not 'maybe'; colour is not an "
        "argument of get_context."
    )


def test_a_client_that_hung_up_is_one_info_line_not_an_error(caplog) -> None:
    import logging

    from starlette.requests import ClientDisconnect

    sdk = logging.getLogger("mcp.server.streamable_http")
    with caplog.at_level(logging.INFO):
        try:
            raise ClientDisconnect()
        except ClientDisconnect:
            sdk.exception("Error handling POST request")
        try:
            raise ValueError("a real fault")
        except ValueError:
            sdk.exception("Error handling POST request")
    gone, fault = [r for r in caplog.records if r.name == sdk.name]
    assert gone.levelno == logging.INFO and gone.exc_info is None
    assert gone.getMessage() == (
        "Error handling POST request: the client disconnected before its request was read "
        "(not a server error)"
    )
    assert fault.levelno == logging.ERROR and fault.exc_info is not None


def test_a_stateless_request_ending_logs_no_session_a_real_session_end_is_kept(caplog) -> None:
    import logging

    sdk = logging.getLogger("mcp.server.streamable_http")
    with caplog.at_level(logging.INFO):
        sdk.info(f"Terminating session: {None}")
        sdk.info("Terminating session: 5f1c0e")
    assert [r.getMessage() for r in caplog.records if r.name == sdk.name] == [
        "Terminating session: 5f1c0e"
    ]
