"""A team set up for the annotation workbench tests: an owner, three annotators, an
adjudicator, a viewer, and two home streams (CASAS-shaped, ``tests/home_streams.py``) with
their decision points built by the real builder."""

from __future__ import annotations

from typing import Any

import pytest

from aframes_web.proactivestream.services import points_build
from aframes_web.streams.services import entity_create, events_ingest
from aframes_web.teams.models import Role
from aframes_web.teams.services import member_add, user_get_or_create
from tests import home_streams

PASSWORD = "label-pass-1"


def person(team: Any, name: str, role: str) -> Any:
    user = user_get_or_create(username=name, password=PASSWORD)
    member_add(team=team, user=user, role=role)
    return user


@pytest.fixture
def people(team: Any, owner: Any, member: Any) -> dict[str, Any]:
    """ana, ben, cy annotate; adi adjudicates; olivia owns; mia views."""
    found = {name: person(team, name, Role.ANNOTATOR) for name in ("ana", "ben", "cy")}
    found["adi"] = person(team, "adi", Role.ADJUDICATOR)
    found["olivia"] = owner
    found["mia"] = member
    return found


@pytest.fixture
def homes(team: Any) -> list[Any]:
    """Two home entities, one and two days long, with their decision points."""
    entities = []
    for key, days in (("home-1", 1), ("home-2", 2)):
        entity = entity_create(
            team=team, key=key, scope="home", timezone_name=str(home_streams.ZONE)
        )
        events_ingest(entity=entity, items=home_streams.stream(days))
        points_build(entity=entity)
        entities.append(entity)
    return entities
