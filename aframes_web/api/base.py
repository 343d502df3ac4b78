"""The base views every REST endpoint builds on: scope checks, text parameters, entity lookup."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.views import APIView

from aframes_web.annotation.selectors import blind_refusal
from aframes_web.api.params import check_text_params
from aframes_web.api.permissions import HasScope
from aframes_web.streams.models import Entity
from aframes_web.streams.selectors import entity_get, entity_overview
from aframes_web.teams.auth import principal_for
from aframes_web.teams.models import Scope


class TeamAPIView(APIView):
    permission_classes = [HasScope]
    required_scopes: dict[str, str] = {"GET": Scope.READ, "HEAD": Scope.READ}

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # Before authentication: a NUL in a parameter is refused whoever sends it.
        check_text_params(request, kwargs)
        super().initial(request, *args, **kwargs)

    def entity(self, request: Request, key: str, *, overview: bool = False) -> Entity:
        team = principal_for(request).team
        if overview:
            entity = entity_overview(team=team).filter(key=key).first()
        else:
            entity = entity_get(team=team, key=key)
        if entity is None:
            # Another team's entity is indistinguishable from a missing one (principle 7).
            raise exceptions.NotFound(f"Team {team.slug!r} has no entity {key!r}.")
        refused = blind_refusal(principal_for(request).person, entity)
        if refused:
            raise exceptions.PermissionDenied(refused)
        return entity


class ActivityAPIView(TeamAPIView):
    def desktop(self, request: Request, key: str) -> Entity:
        entity = self.entity(request, key)
        if entity.scope != Entity.Scope.DESKTOP:
            raise exceptions.NotFound(
                f"Entity {key!r} is a {entity.scope} entity; only desktop entities have "
                "compiled days, frames, context, evidence, patterns and routines."
            )
        return entity
