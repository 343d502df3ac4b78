"""The OpenAPI document and the interactive docs: complete, valid, served offline."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def _schema() -> dict:
    answer = Client().get("/api/schema/", {"format": "json"})
    assert answer.status_code == 200, answer.content
    return json.loads(answer.content)


def test_schema_is_served_as_yaml_and_json_without_signing_in() -> None:
    as_yaml = Client().get("/api/schema/")
    assert as_yaml.status_code == 200
    assert as_yaml["Content-Type"].startswith("application/vnd.oai.openapi")
    document = yaml.safe_load(as_yaml.content)
    assert document["openapi"].startswith("3.")
    assert document == _schema()


def test_schema_validates_with_no_warning(tmp_path) -> None:
    out = tmp_path / "schema.yaml"
    errors = StringIO()
    # --fail-on-warn turns every warning of drf-spectacular into a failure (SystemExit).
    call_command("spectacular", "--validate", "--fail-on-warn", file=str(out), stderr=errors)
    assert out.read_text().startswith("openapi: 3")
    assert errors.getvalue() == ""


def test_every_operation_is_described_with_examples_and_problems() -> None:
    document = _schema()
    operations = [
        (path, method, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
    ]
    assert len(operations) >= 24
    for path, method, op in operations:
        where = f"{method.upper()} {path}"
        assert op.get("description"), where
        examples = [
            media
            for status, answer in op["responses"].items()
            if status.startswith("2")
            for media in answer.get("content", {}).values()
            if media.get("examples")
        ]
        assert examples, f"{where} has no example of a successful answer"
        for status in ("401", "403", "429"):
            problem = op["responses"][status]["content"]["application/problem+json"]
            assert problem["schema"]["$ref"].endswith("/ProblemShape"), where
        assert {"bearerToken": []} in op["security"], where


def test_bearer_scheme_and_list_parameters_are_declared() -> None:
    document = _schema()
    scheme = document["components"]["securitySchemes"]["bearerToken"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    lists = [
        "/api/v1/entities",
        "/api/v1/entities/{key}/events",
        "/api/v1/entities/{key}/days",
        "/api/v1/entities/{key}/frames",
        "/api/v1/entities/{key}/trajectories",
        "/api/v1/entities/{key}/regularities",
        "/api/v1/entities/{key}/decisions",
        "/api/v1/benchmark/runs",
        "/api/v1/labels/projects",
        "/api/v1/labels/assignments",
    ]
    for path in lists:
        names = {p["name"] for p in document["paths"][path]["get"]["parameters"]}
        assert {"limit", "cursor"} <= names, path
        answer = document["paths"][path]["get"]["responses"]["200"]["content"]
        ref = answer["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        page = document["components"]["schemas"][ref]
        assert {"results", "next"} <= set(page["required"]), path
    regularities = document["paths"]["/api/v1/entities/{key}/regularities"]["get"]
    assert {"state", "order"} <= {p["name"] for p in regularities["parameters"]}
    decisions = document["paths"]["/api/v1/entities/{key}/decisions"]["get"]
    assert {"from", "to", "action"} <= {p["name"] for p in decisions["parameters"]}


def test_swagger_ui_is_served_from_our_static_files_with_no_cdn() -> None:
    page = Client().get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "swagger-ui" in html
    sources = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)
    assert sources, html
    for source in sources:
        # Our static files, or the page's own start-up script (served apart for the CSP).
        assert source.startswith(("/static/", "/api/docs/?script=")), source
    assert not re.search(r"https?://(?!localhost|testserver)", html), "a URL leaves the server"
    script = next(s for s in sources if s.endswith("swagger-ui-bundle.js"))
    assert Client().get(script).status_code == 200
