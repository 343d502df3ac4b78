"""What every dashboard page starts from: the user's team, its entity, and rendering in the
entity's own time zone (the zone its days are cut in)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from aframes_web.annotation.errors import LabellingBlind
from aframes_web.annotation.selectors import blind_refusal
from aframes_web.streams.models import Entity
from aframes_web.streams.selectors import entity_get
from aframes_web.teams.models import Membership
from aframes_web.teams.selectors import membership_get


def membership_or_404(request: HttpRequest, slug: str) -> Membership:
    membership = membership_get(user=request.user, team_slug=slug)
    if membership is None:
        raise Http404("No such team among yours.")
    return membership


def entity_or_404(request: HttpRequest, slug: str, key: str) -> tuple[Membership, Entity]:
    """The entity of one of the user's teams; another team's entity is the same 404 as none."""
    membership = membership_or_404(request, slug)
    entity = entity_get(team=membership.team, key=key)
    if entity is None:
        raise Http404("No such entity in this team.")
    refused = blind_refusal(request.user, entity)
    if refused:
        raise LabellingBlind(refused)
    return membership, entity


def render_local(
    request: HttpRequest, template: str, context: dict[str, Any], entity: Entity
) -> HttpResponse:
    """Render with datetimes in the entity's time zone, the zone its days are cut in."""
    partial = context.pop("partial", None)
    if request.htmx and partial:
        template = f"{template}#{partial}"
    with timezone.override(ZoneInfo(entity.timezone)):
        return render(request, template, context)
