"""Every write endpoint of the OpenAPI schema, sent bodies built to break a parser: nested past
the recursion limit, a hundred thousand open brackets, a number of 5,000 digits, bytes that are
not UTF-8, text that is not JSON, nothing at all, and more bytes than the server takes. Each gets
a 4xx problem that says what is wrong with the body, never a 500, and nothing is stored.

The operations are read off the schema itself, so a write endpoint added later is tested here
or fails ``test_every_write_operation_is_covered`` until it is.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from django.test import override_settings
from drf_spectacular.generators import SchemaGenerator

from aframes_web.annotation.models import Label
from aframes_web.api.problems import TYPE_PREFIX
from aframes_web.streams.models import Entity, Event
from memory.models import Decision
from tests.conftest import ApiClient

WRITES = ("post", "put", "patch", "delete")
# The write operations this file knows how to reach, with the content types each reads.
COVERED = {
    ("post", "/api/v1/entities"),
    ("post", "/api/v1/entities/{key}/decide"),
    ("post", "/api/v1/entities/{key}/events"),
    ("post", "/api/v1/labels/projects/{pk}/tasks/{task}"),
}
# AFRAMES_MAX_BATCH_BYTES here: small, to be quick, and above every other hostile body, so each
# of those reaches the parser.
LIMIT_BYTES = 128 * 1024

HOSTILE: dict[str, tuple[bytes, str]] = {
    # name: (body, what the answer's detail must say)
    "deep-array": (b"[" * 2000 + b"]" * 2000, "too deeply"),
    "open-brackets": (b"[" * 100_000, "too deeply"),
    "deep-object": (b'{"a": ' * 2000 + b"1" + b"}" * 2000, "too deeply"),
    "long-number": (b'{"n": ' + b"9" * 5000 + b"}", "more than 4,300 digits"),
    "latin-1": ('{"a": "caf\xe9"}'.encode("latin-1"), "UTF-8"),
    "not-json": (b"{not json", "JSON"),
    "empty": (b"", ""),
    "oversized": (b'{"pad": "' + b"x" * (2 * LIMIT_BYTES) + b'"}', "AFRAMES_MAX_BATCH_BYTES"),
}


def _schema_writes() -> set[tuple[str, str]]:
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    return {(method, path) for path, item in paths.items() for method in WRITES if method in item}


def test_every_write_operation_is_covered() -> None:
    assert _schema_writes() == COVERED


@pytest.fixture
def doors(team, people, homes, owner_api, desktop) -> list[tuple[ApiClient, str]]:
    """(client, URL) for each operation of COVERED, with real keys and ids."""
    from aframes_web.annotation import services as workbench
    from aframes_web.annotation.models import Assignment
    from aframes_web.annotation.services import ProjectSpec
    from aframes_web.teams.services import token_create

    project = workbench.project_create(
        team=team, spec=ProjectSpec(name="H", scope="home", entities=["home-1"]), build=False
    )
    annotator = Assignment.objects.filter(stream__project=project).first().annotator
    key = token_create(team=team, name="a", scopes=["label"], created_by=annotator).key
    labeller = ApiClient(key)
    task = labeller.get(f"/api/v1/labels/projects/{project.pk}/next").json()["task"]
    return [
        (owner_api, "/api/v1/entities"),
        (owner_api, "/api/v1/entities/alice-laptop/decide"),
        (owner_api, "/api/v1/entities/alice-laptop/events"),
        (labeller, f"/api/v1/labels/projects/{project.pk}/tasks/{task}"),
    ]


def _stored() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Entity, Event, Decision, Label))


def _refused(answer: Any, name: str, url: str, words: str) -> None:
    where = f"{name} to {url}"
    assert 400 <= answer.status_code < 500, f"{where}: {answer.status_code} {answer.content[:99]}"
    assert answer["Content-Type"].startswith("application/problem+json"), where
    body = json.loads(answer.content)
    assert body["type"].startswith(TYPE_PREFIX) and body["detail"], where
    assert words in json.dumps(body), f"{where}: {body}"
    assert "set_int_max_str_digits" not in json.dumps(body), where


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_hostile_bodies_are_refused_with_a_problem_and_nothing_stored(
    doors, name: str, encoding: str
) -> None:
    body, words = HOSTILE[name]
    before = _stored()
    with override_settings(AFRAMES_MAX_BATCH_BYTES=LIMIT_BYTES):
        for client, url in doors:
            headers = {}
            sent = body
            if encoding == "gzip":
                if not url.endswith(("/events", "/decide")):
                    continue  # only these two read Content-Encoding (an event may be large)
                sent, headers = gzip.compress(body), {"Content-Encoding": "gzip"}
            answer = client.client.post(
                url,
                sent,
                content_type="application/json",
                headers={**client.headers, **headers},
            )
            _refused(answer, name, url, words)
    assert _stored() == before


def test_ndjson_lines_nested_too_deeply_are_refused_by_line(doors) -> None:
    client, url = next(d for d in doors if d[1].endswith("/events"))
    before = _stored()
    lines = (
        b'{"occurred_at": "2026-03-02T08:00:00Z", "kind": "snapshot", "payload": {"app": "X"}}\n'
    )
    lines += b'{"a": ' * 2000 + b"1" + b"}" * 2000 + b"\n"
    answer = client.client.post(
        url, lines, content_type="application/x-ndjson", headers=client.headers
    )
    _refused(answer, "deep NDJSON line", url, "too deeply")
    assert _stored() == before
