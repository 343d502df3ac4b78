"""Lookups compiled once per process (aframes_web.prepared): the rows and instances the ORM
would give, in one statement, on SQLite and PostgreSQL alike."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from aframes_web.prepared import Lookup
from aframes_web.streams.models import Entity, EventTally
from aframes_web.streams.services import events_ingest
from aframes_web.teams.models import ApiToken, Team
from aframes_web.teams.services import token_create
from tests.conftest import snapshot

pytestmark = pytest.mark.django_db

TOKEN = Lookup(ApiToken, ["prefix"], related=["team"])
ENTITY = Lookup(Entity, ["team_id", "key"])
TALLY = Lookup(EventTally, ["entity_id"])


def _fields(instance: Any) -> dict[str, Any]:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_a_token_and_its_team_equal_the_orms_in_one_statement(team: Team) -> None:
    issued = token_create(team=team, name="agent", scopes=["read", "write"])
    expected = ApiToken.objects.select_related("team").get(pk=issued.token.pk)
    with CaptureQueriesContext(connection) as queries:
        found = TOKEN(prefix=expected.prefix)
        assert found is not None
        assert found.team.slug == team.slug  # attached: no second query
    assert len(queries) == 1
    assert _fields(found) == _fields(expected)
    assert _fields(found.team) == _fields(expected.team)
    assert found.scopes == ["read", "write"]  # the JSON field's converter ran
    assert found.created_at.tzinfo is not None
    assert found._state.adding is False and found._state.db == "default"


def test_an_entity_is_found_by_its_team_and_key_only(team: Team, desktop: Entity) -> None:
    other = Team.objects.create(slug="other", name="Other")
    found = ENTITY(team_id=team.pk, key=desktop.key)
    assert found is not None and found.pk == desktop.pk
    assert _fields(found) == _fields(Entity.objects.get(pk=desktop.pk))
    assert ENTITY(team_id=other.pk, key=desktop.key) is None
    assert ENTITY(team_id=team.pk, key="nobody") is None


def test_values_are_bound_not_spliced(team: Team) -> None:
    assert ENTITY(team_id=team.pk, key="x' OR '1'='1") is None
    assert TOKEN(prefix="%s") is None


def test_a_tally_follows_inserts(desktop: Entity) -> None:
    assert TALLY(entity_id=desktop.pk) is None
    events_ingest(entity=desktop, items=[snapshot("2026-03-02T08:00:00Z", "a")])
    first = TALLY(entity_id=desktop.pk)
    assert first is not None and first.stored == 1
    events_ingest(entity=desktop, items=[snapshot("2026-03-02T08:01:00Z", "b")])
    again = TALLY(entity_id=desktop.pk)
    assert again is not None and again.stored == 2


def test_wrong_keys_are_refused_by_name(team: Team) -> None:
    with pytest.raises(TypeError, match=r"lookup takes \('team_id', 'key'\), got \('key',\)"):
        ENTITY(key="a")
    with pytest.raises(TypeError, match="got \\('team_id', 'key', 'scope'\\)"):
        ENTITY(team_id=team.pk, key="a", scope="desktop")


def test_a_key_of_another_kind_is_refused_when_first_run() -> None:
    with pytest.raises(TypeError, match="revoked_at: a Lookup key must be an integer or text"):
        Lookup(ApiToken, ["revoked_at"])(revoked_at=None)
