"""The agents' hot reads through Django's WSGI handler inside the ASGI application: the same
answers as every other door gives, through the live server ``manage.py serve`` runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx2
import pytest
from django.db import connections
from django.test import Client

from aframes_web import asgi
from aframes_web.streams.models import Entity
from aframes_web.streams.services import events_ingest
from aframes_web.teams.services import token_create, token_revoke
from tests.asgi_server import serving
from tests.conftest import snapshot

pytestmark = pytest.mark.django_db(transaction=True)

AT = "2026-03-02T10:00:00+00:00"


@pytest.fixture
def server_url() -> Iterator[str]:
    application = asgi.build_application()
    with serving(application) as url:
        yield url
    # The lean door's thread keeps its connection between requests, as a server's does.
    application.lean.executor.submit(connections.close_all).result(timeout=10)


def _scope(method: str, path: str, kind: str = "http") -> dict[str, Any]:
    return {"type": kind, "method": method, "path": path}


def test_only_reads_of_a_context_window_or_a_day_take_the_lean_door() -> None:
    assert asgi.is_lean(_scope("GET", "/api/v1/entities/alice-laptop/context"))
    assert asgi.is_lean(_scope("HEAD", "/api/v1/entities/a/days/2026-03-02"))
    assert not asgi.is_lean(_scope("POST", "/api/v1/entities/a/context"))
    assert not asgi.is_lean(_scope("GET", "/api/v1/entities/a/events"))  # streams: ASGI
    assert not asgi.is_lean(_scope("GET", "/api/v1/entities/a/context/extra"))
    assert not asgi.is_lean(_scope("GET", "/teams/acme/entities/a/context"))
    assert not asgi.is_lean({"type": "lifespan"})


def test_a_hot_read_answers_through_the_server_as_the_api_does(
    server_url: str, team: Any, desktop: Entity
) -> None:
    items = [snapshot(f"2026-03-02T09:{m:02d}:00Z", f"s{m}", app="Code") for m in range(30)]
    events_ingest(entity=desktop, items=items)
    key = token_create(team=team, name="agent", scopes=["read"]).key
    path = f"/api/v1/entities/{desktop.key}/context?hours=2&at={quote(AT)}"
    auth = {"Authorization": f"Bearer {key}"}

    served = httpx2.get(server_url + path, headers=auth, timeout=30)
    direct = Client().get(path, headers=auth)
    assert served.status_code == direct.status_code == 200
    assert served.text == direct.content.decode() and "Code" in served.text
    assert served.headers["ETag"] == direct.headers["ETag"]
    assert served.headers["Content-Type"] == direct.headers["Content-Type"]
    assert "Content-Security-Policy" in served.headers  # the middleware ran as for any path

    again = httpx2.get(
        server_url + path, headers={**auth, "If-None-Match": served.headers["ETag"]}, timeout=30
    )
    assert again.status_code == 304 and again.content == b""
    head = httpx2.head(server_url + path, headers=auth, timeout=30)
    assert head.status_code == 200 and head.content == b""

    day_path = f"/api/v1/entities/{desktop.key}/days/2026-03-02"
    day = httpx2.get(server_url + day_path, headers=auth, timeout=30)
    assert day.status_code == Client().get(day_path, headers=auth).status_code


def test_refusals_at_the_lean_door_are_the_apis_own(
    server_url: str, team: Any, desktop: Entity
) -> None:
    path = f"/api/v1/entities/{desktop.key}/context?hours=2&at={quote(AT)}"
    issued = token_create(team=team, name="soon-revoked", scopes=["read"])
    token_revoke(token=issued.token)
    for headers in ({}, {"Authorization": f"Bearer {issued.key}"}):
        served = httpx2.get(server_url + path, headers=headers, timeout=30)
        direct = Client().get(path, headers=headers)
        assert served.status_code == direct.status_code == 401
        assert served.json() == direct.json()
        assert served.headers["Content-Type"] == direct.headers["Content-Type"]
    live = token_create(team=team, name="agent", scopes=["read"]).key
    auth = {"Authorization": f"Bearer {live}"}
    missing = httpx2.get(f"{server_url}/api/v1/entities/nobody/context", headers=auth)
    assert missing.status_code == 404
    assert missing.json() == Client().get("/api/v1/entities/nobody/context", headers=auth).json()
    wrong = path.replace("hours=2", "hours=zero")
    bad = httpx2.get(server_url + wrong, headers=auth)
    assert bad.status_code == 400 and bad.json() == Client().get(wrong, headers=auth).json()


def _door_scope(path: str) -> dict[str, Any]:
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 5000), "server": ("testserver", 80),
    }  # fmt: skip


def _through(door: asgi.LeanDoor, path: str) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(door(_door_scope(path), receive, send))
    return sent


def test_the_door_sends_the_whole_answer_of_a_wsgi_application() -> None:
    def application(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        write = start_response("201 Created", [("Content-Type", "text/plain"), ("X-Path", "p")])
        write(b"written ")
        return [b"first ", b"", environ["PATH_INFO"].encode()]

    door = asgi.LeanDoor(application, threads=1)
    start, body = _through(door, "/a/b")
    assert start == {
        "type": "http.response.start",
        "status": 201,
        "headers": [(b"content-type", b"text/plain"), (b"x-path", b"p")],
    }
    assert body == {"type": "http.response.body", "body": b"written first /a/b"}


def test_the_door_keeps_one_cache_client_across_requests() -> None:
    """Django keeps cache clients in context variables: each request in a fresh copy of the
    event loop's context would get a new client, and with Redis a new connection."""
    from django.core.cache import caches

    seen: list[int] = []

    def application(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen.append(id(caches["default"]))
        start_response("200 OK", [])
        return [b""]

    door = asgi.LeanDoor(application, threads=1)
    for _ in range(3):
        _through(door, "/")
    assert len(seen) == 3 and len(set(seen)) == 1


def test_a_second_start_without_an_error_is_refused() -> None:
    def application(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [])
        start_response("500 Internal Server Error", [])
        return [b""]

    with pytest.raises(RuntimeError, match="start_response called twice"):
        _through(asgi.LeanDoor(application, threads=1), "/")
