from __future__ import annotations

import json

import pytest
from django.test import override_settings

from tests.conftest import snapshot

pytestmark = pytest.mark.django_db
URL = "/api/v1/entities/alice-laptop/events"


def _seed(api, n: int = 7) -> None:
    api.post(URL, [snapshot(f"2026-03-02T08:00:{i:02d}Z", f"s{i}") for i in range(n)])


def test_pages_follow_time_order_with_a_cursor(owner_api, desktop) -> None:
    _seed(owner_api)
    first = owner_api.get(URL, data={"limit": 3}).json()
    assert [e["source_key"] for e in first["results"]] == ["s0", "s1", "s2"]
    second = owner_api.get(first["next"]).json()
    assert [e["source_key"] for e in second["results"]] == ["s3", "s4", "s5"]
    last = owner_api.get(second["next"]).json()
    assert [e["source_key"] for e in last["results"]] == ["s6"] and last["next"] is None
    assert first["results"][0]["occurred_at"] == "2026-03-02T08:00:00.000000Z"


def test_filters_by_time_and_kind_and_rejects_bad_params(owner_api, desktop) -> None:
    _seed(owner_api)
    window = owner_api.get(
        URL, data={"from": "2026-03-02T08:00:02Z", "to": "2026-03-02T09:00:04+01:00"}
    ).json()
    assert [e["source_key"] for e in window["results"]] == ["s2", "s3"]
    assert owner_api.get(URL, data={"kind": "input"}).json()["results"] == []
    assert owner_api.get(URL, data={"from": "2026-03-02T08:00:02"}).status_code == 400
    assert owner_api.get(URL, data={"kind": "nope"}).status_code == 400
    assert owner_api.get(URL, data={"cursor": "!!"}).status_code == 400


def test_ndjson_export_streams_every_event(owner_api, desktop) -> None:
    _seed(owner_api)
    answer = owner_api.get(URL, headers={"Accept": "application/x-ndjson"})
    assert answer["Content-Type"] == "application/x-ndjson"
    lines = b"".join(answer.streaming_content).decode().splitlines()
    assert [json.loads(line)["source_key"] for line in lines] == [f"s{i}" for i in range(7)]


def test_stored_text_is_shown_only_to_admin_scope_on_request(
    owner_api, reader_api, desktop
) -> None:
    typed = {
        "occurred_at": "2026-03-02T08:00:00Z",
        "kind": "input",
        "source_key": "t",
        "payload": {"type": "text", "text": "dear diary"},
    }
    with override_settings(AFRAMES_STORE_INPUT_TEXT=True):
        owner_api.post(URL, [typed])
    assert "text" not in owner_api.get(URL).json()["results"][0]["payload"]
    shown = owner_api.get(URL, data={"include_text": "1"}).json()["results"][0]["payload"]
    assert shown["text"] == "dear diary"
    assert reader_api.get(URL, data={"include_text": "1"}).status_code == 403


def test_outsider_cannot_read_events(outsider_api, owner_api, desktop) -> None:
    _seed(owner_api, 1)
    assert outsider_api.get(URL).status_code == 404


def test_ground_truth_never_leaves_through_the_api(owner_api, team) -> None:
    from aframes_web.streams.services import entity_create

    entity_create(team=team, key="home-a", scope="home")
    owner_api.post(
        "/api/v1/entities/home-a/events",
        [
            {
                "occurred_at": "2026-03-02T08:00:00Z",
                "kind": "observation",
                "source_key": "o1",
                "payload": {"type": "motion", "value": "ON", "private": {"activity": "Sleeping"}},
            }
        ],
    )
    page = owner_api.get("/api/v1/entities/home-a/events", data={"include_text": "1"}).json()
    assert page["results"][0]["payload"] == {"type": "motion", "value": "ON"}
    export = owner_api.get(
        "/api/v1/entities/home-a/events", headers={"Accept": "application/x-ndjson"}
    )
    assert b"Sleeping" not in b"".join(export.streaming_content)


def test_an_export_streams_asynchronously_under_asgi_and_synchronously_under_wsgi() -> None:
    """Django consumes a synchronous iterator whole before an ASGI server sends a byte (and an
    asynchronous one under WSGI): the export hands each server the kind it streams
    (``make bench-export`` measures the memory this keeps flat)."""
    import asyncio

    from django.test import AsyncRequestFactory, RequestFactory

    from aframes_web.streaming import streamed

    def chunks():
        yield from (b"a\n", b"b\n")

    over_asgi = streamed(AsyncRequestFactory().get("/"), chunks(), content_type="text/plain")
    assert over_asgi.is_async

    async def read() -> bytes:
        return b"".join([part async for part in over_asgi.streaming_content])

    assert asyncio.run(read()) == b"a\nb\n"
    over_wsgi = streamed(RequestFactory().get("/"), chunks(), content_type="text/plain")
    assert not over_wsgi.is_async and b"".join(over_wsgi.streaming_content) == b"a\nb\n"
