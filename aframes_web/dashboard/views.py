"""Dashboard pages for signed-in members; each view calls selectors only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from aframes_web.streams.selectors import entity_overview
from aframes_web.teams.selectors import membership_get, teams_for_user


@login_required
def home(request: HttpRequest) -> HttpResponse:
    teams = list(teams_for_user(user=request.user))
    if len(teams) == 1:
        return redirect("dashboard:team", slug=teams[0].slug)
    return render(request, "dashboard/home.html", {"teams": teams})


@login_required
def team(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_get(user=request.user, team_slug=slug)
    if membership is None:
        raise Http404("No such team among yours.")
    entities = entity_overview(team=membership.team)
    context = {"team": membership.team, "membership": membership, "entities": entities}
    if request.htmx:
        return render(request, "dashboard/team.html#entities", context)
    return render(request, "dashboard/team.html", context)
