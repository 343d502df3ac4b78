"""The entity's sensor names: what each sensor is called on every page, corrected by owners."""

from __future__ import annotations

from urllib.parse import quote

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from aframes_web.dashboard.base import entity_or_404, render_local
from aframes_web.streams import names
from aframes_web.teams.models import Role
from memory.services.closing import summaries_refresh


@login_required
def sensor_names(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    """GET: the table; POST (owners): save one sensor's name, room and kind, or read the
    sensors of the stored events into the table (the guesses of sensors not named yet)."""
    membership, entity = entity_or_404(request, slug, key)
    owner = membership.role == Role.OWNER
    here = reverse("dashboard:sensor_names", args=[slug, key])
    if request.method == "POST":
        if not owner:
            raise PermissionDenied("Only the team's owners name sensors.")
        if "read_events" in request.POST:
            added = names.read_from_events(entity)
            return redirect(f"{here}?said={quote(f'{added} sensor(s) added from the events.')}")
        try:
            names.correct(
                entity,
                sensor=request.POST.get("sensor", ""),
                name=request.POST.get("name", ""),
                room=request.POST.get("room", ""),
                kind=request.POST.get("kind", ""),
                user=request.user,
            )
        except names.NameRefused as exc:
            return redirect(f"{here}?problem={quote(str(exc))}")
        summaries_refresh(entity)  # the regularities' sentences say the corrected name
        return redirect(f"{here}?said={quote('Saved.')}")
    context = {
        "team": membership.team,
        "entity": entity,
        "rows": sorted(names.names_of(entity).values(), key=lambda n: (n.room, n.name)),
        "owner": owner,
        "problem": request.GET.get("problem", "")[:300],
        "said": request.GET.get("said", "")[:200],
    }
    return render_local(request, "dashboard/sensor_names.html", context, entity)
