"""Dashboard pages for signed-in members; each view calls selectors only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from aframes_web.dashboard.forms import ImportUploadForm
from aframes_web.streams.selectors import entity_overview, import_jobs_for_team
from aframes_web.streams.uploads import import_job_create
from aframes_web.teams.models import ROLE_SCOPES, Membership, Scope
from aframes_web.teams.selectors import membership_get, teams_for_user


def _membership(request: HttpRequest, slug: str) -> Membership:
    membership = membership_get(user=request.user, team_slug=slug)
    if membership is None:
        raise Http404("No such team among yours.")
    return membership


@login_required
def home(request: HttpRequest) -> HttpResponse:
    teams = list(teams_for_user(user=request.user))
    if len(teams) == 1:
        return redirect("dashboard:team", slug=teams[0].slug)
    return render(request, "dashboard/home.html", {"teams": teams})


@login_required
def team(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _membership(request, slug)
    entities = entity_overview(team=membership.team)
    context = {"team": membership.team, "membership": membership, "entities": entities}
    if request.htmx:
        return render(request, "dashboard/team.html#entities", context)
    return render(request, "dashboard/team.html", context)


@login_required
def import_upload(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _membership(request, slug)
    can_write = Scope.WRITE in ROLE_SCOPES[membership.role]
    form = ImportUploadForm()
    if request.method == "POST":
        if not can_write:
            raise PermissionDenied("Only team owners can import data.")
        form = ImportUploadForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            job = import_job_create(
                team=membership.team,
                user=request.user,
                format_name=data["format"],
                entity_key=data["entity"],
                upload=data["file"],
                scope=data["scope"],
                tz=data["timezone"],
            )
            return redirect("dashboard:import_job", slug=slug, job_id=job.pk)
    context = {
        "team": membership.team,
        "form": form,
        "can_write": can_write,
        "jobs": import_jobs_for_team(team=membership.team)[:20],
    }
    return render(request, "dashboard/import.html", context)


@login_required
def import_job(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    membership = _membership(request, slug)
    job = import_jobs_for_team(team=membership.team).filter(pk=job_id).first()
    if job is None:
        raise Http404("No such import in this team.")
    context = {"team": membership.team, "job": job}
    if request.htmx:
        return render(request, "dashboard/import_job.html#status", context)
    return render(request, "dashboard/import_job.html", context)
