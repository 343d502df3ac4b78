"""The routines page of a desktop entity: what recurs, where it happened, its replay plan and
script, and what replay saves (Activity Frames §7.1-§7.4). Calls one service, a read."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from aframes_web.activity.routines import WINDOW_DAYS_DEFAULT, entity_routines, step_words
from aframes_web.activity.selectors import frame_ids_stored
from aframes_web.dashboard.base import entity_or_404, render_local
from aframes_web.dashboard.forms import RoutinesForm
from aframes_web.streams.models import Entity
from compiler.cost import percent

ROUTINES_PER_PAGE = 25  # 60 busy days give hundreds of routines, each with its occurrences


def _times(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}×"


def _figures(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The window's R and h figures as a person reads them."""
    held = summary.get("holdout")
    return [
        ("h raw: steps inside any recurring 3-step sequence", percent(summary["h_raw"])),
        ("h specific: steps inside a routine", percent(summary["h_specific"])),
        (
            "Hold-out h: later steps inside a routine known earlier",
            f"{percent(held['h_holdout'])} (fit on {len(held['fit_days'])} days)"
            if held
            else "too few days",
        ),
        ("R inject, median", _times(summary["r_inject"]["median"])),
        ("R info, median", _times(summary["r_info"]["median"])),
        ("Ceiling h·(1 − 1/R info)", percent(summary["ceiling"])),
    ]


@login_required
def entity_routines_page(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    membership, entity = entity_or_404(request, slug, key)
    if entity.scope != Entity.Scope.DESKTOP:
        raise Http404(
            f"{entity.key} is a {entity.get_scope_display().lower()} entity: routines are "
            "mined from compiled desktop activity. Its memory page shows its regularities."
        )
    form = RoutinesForm(request.GET or None)
    valid = form.is_valid() if form.is_bound else True
    wanted = form.cleaned_data if form.is_bound and valid else {}
    days = wanted.get("days") or WINDOW_DAYS_DEFAULT
    granularity = wanted.get("granularity") or "action"
    result = entity_routines(entity=entity, days=days, granularity=granularity)
    # get_page reads the raw parameter: a bad or out-of-range one shows the nearest page.
    page = Paginator(result["routines"], ROUTINES_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    # A frame under the floor (min_minutes) or of a day whose compile is pending has no page.
    named = {f for r in page for o in r["occurrences"] for f in o["frames"]}
    stored = frame_ids_stored(entity=entity, frame_ids=named)
    evidence_url = reverse("api:evidence", args=[entity.key])
    routines = [
        {
            **r,
            "words": step_words(r["steps"]),
            "guards": percent(r["guard_coverage"]),
            "occurrences": [
                {
                    **o,
                    "frames": [(f, f in stored) for f in o["frames"]],
                    "evidence_url": f"{evidence_url}?ids={o['evidence']}",
                }
                for o in r["occurrences"]
            ],
        }
        for r in page
    ]
    context = {
        "team": membership.team,
        "entity": entity,
        "form": form,
        "days": days,
        "granularity": granularity,
        "result": result,
        "figures": _figures(result["summary"]),
        "routines": routines,
        "page": page,
        "query": query.urlencode(),
        "page_url": reverse("dashboard:routines", args=[slug, key]),
        "partial": "routines",
    }
    return render_local(request, "dashboard/routines.html", context, entity)
