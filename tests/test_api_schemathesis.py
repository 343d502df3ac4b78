"""The live OpenAPI schema against the app itself (schemathesis, WSGI): for generated valid and
invalid inputs, no answer is a 5xx and every answer conforms to the schema (status, media type,
headers, body), on a team with a compiled desktop day and a home with memory."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from aframes_web.teams.services import token_create
from aframes_web.wsgi import application
from tests.test_api_activity import _small_day
from tests.test_api_memory import home, lived_in  # noqa: F401  # fixtures

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = 25  # per operation and generation mode: the whole API in about a minute on 2 cores
# Where "every schema-valid input is accepted" cannot hold, because the rule is not one JSON
# Schema can state; every other check still runs on them.
RULES_BEYOND_THE_SCHEMA = {
    "events_ingest": "each kind's payload fields, and which kinds an entity's scope takes",
    "decide": "the same rules for the one event",
    "evidence_retrieve": "a run is written low-high and all runs name at most 5,000 ids",
    "days_retrieve": "budget_tokens goes only with format=context",
}

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)


@pytest.fixture
def populated(team: Any, load: Any, desktop: Any, lived_in: Any, settings: Any) -> str:  # noqa: F811
    """A team with a compiled desktop day and a home with memory; its all-scopes token."""
    load(desktop, _small_day())
    # Thousands of requests from one token: the rate limit is tested on its own.
    settings.AFRAMES_API_RATE = "1000000/minute"
    return token_create(team=team, name="fuzz", scopes=["read", "write", "label", "admin"]).key


def _real_key(operation: Any) -> str | None:
    """An entity of the team that the operation's views serve (desktop or home)."""
    if "{key}" not in operation.path:
        return None
    memory = ("trajectories", "regularities", "decisions", "decide")
    return "flat-1" if any(part in operation.path for part in memory) else "alice-laptop"


def _exercise(operation: Any, mode: GenerationMode, headers: dict[str, str]) -> None:
    beyond = operation.definition.raw.get("operationId") in RULES_BEYOND_THE_SCHEMA
    excluded = [positive_data_acceptance] if beyond else []
    key = _real_key(operation)

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: Any) -> None:
        if case.query and mode is GenerationMode.POSITIVE:
            # A cursor is opaque and signed: no generated string is one, so "valid input is
            # accepted" cannot hold for it (negative mode still sends them, expecting 400).
            case.query.pop("cursor", None)
        case.call_and_validate(headers=headers, excluded_checks=excluded)
        if key is not None and case.path_parameters.get("key") != key:
            # The same input on an entity that exists reaches the view's own checks.
            case.path_parameters = {**case.path_parameters, "key": key}
            case.call_and_validate(headers=headers, excluded_checks=excluded)

    check()


def test_every_operation_conforms_and_never_fails(populated: str) -> None:
    headers = {"Authorization": f"Bearer {populated}"}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _exercise(operation, mode, headers)
