"""Dashboard pages of ProactiveStream runs: the list, a run with its figures and plots, and
every true positive, false positive and false negative with both sides (ProactMem §5)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from aframes_web.activity.selectors import evidence_events
from aframes_web.annotation.errors import LabellingBlind
from aframes_web.annotation.selectors import runs_refusal
from aframes_web.dashboard.base import membership_or_404
from aframes_web.dashboard.forms import BenchmarkRunForm, OutcomeFilterForm
from aframes_web.dashboard.memory_views import event_row
from aframes_web.proactivestream.models import BenchmarkRun, RunArtefact, RunOutcome
from aframes_web.proactivestream.selectors import (
    outcomes_for_run,
    run_file_names,
    run_get,
    runs_for_team,
)
from aframes_web.proactivestream.services import RunConfigError, run_create
from aframes_web.streams.models import Entity
from aframes_web.streams.names import said_of
from aframes_web.teams.models import Membership, Role
from benchmark.labelers.registry import rule_text
from benchmark.metrics import METRICS
from benchmark.report import cell
from benchmark.streams.words import describe
from memory import llm
from memory.engine.decide import cost_or_default, threshold_for
from memory.models import Regularity

RUNS_SHOWN = 20
OUTCOMES_PER_PAGE = 50
CITED_SHOWN = 40  # raw events shown under a point; the rest are counted


def _can_start(membership: Membership) -> bool:
    return membership.role == Role.OWNER


@login_required
def _unless_blind(request: HttpRequest) -> None:
    refused = runs_refusal(request.user)
    if refused:
        raise LabellingBlind(refused)


def benchmark_runs(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_or_404(request, slug)
    _unless_blind(request)
    team = membership.team
    can_start = _can_start(membership)
    form = BenchmarkRunForm(llm_configured=llm.configured())
    problem = ""
    if request.method == "POST":
        if not can_start:
            raise PermissionDenied("Only team owners can start a benchmark run.")
        form = BenchmarkRunForm(request.POST, llm_configured=llm.configured())
        if form.is_valid():
            data = form.cleaned_data
            try:
                run = run_create(
                    team=team,
                    scope=data["scope"],
                    methods=data["methods"],
                    control=data["control"],
                    user=request.user,
                    false_alarm_cost=cost_or_default(team.false_alarm_cost),
                    curve=data["curve"],
                )
            except RunConfigError as exc:
                problem = str(exc)
            else:
                return redirect("dashboard:benchmark_run", slug=slug, pk=run.pk)
    context = {
        "team": team,
        "form": form,
        "can_start": can_start,
        "problem": problem,
        "cost": cost_or_default(team.false_alarm_cost),
        "threshold": threshold_for(cost_or_default(team.false_alarm_cost)),
        "runs": runs_for_team(team=team)[:RUNS_SHOWN],
    }
    return render(request, "dashboard/benchmark_runs.html", context)


def _run(request: HttpRequest, slug: str, pk: int) -> tuple[Membership, BenchmarkRun]:
    membership = membership_or_404(request, slug)
    _unless_blind(request)
    run = run_get(team=membership.team, pk=pk)
    if run is None:
        raise Http404("No such benchmark run in this team.")
    return membership, run


def _tables(run: BenchmarkRun) -> list[dict[str, Any]]:
    results = run.results or {}
    synthetic = set(results.get("synthetic_scopes") or ())
    speed = results.get("replay_points_per_s") or {}
    tables = []
    for scope, by_method in (results.get("scopes") or {}).items():
        tables.append(
            {
                "scope": scope,
                "synthetic": scope in synthetic,
                "speed": speed.get(scope),
                "rows": [
                    {
                        "method": method,
                        "cells": [cell(figures, m) for m in METRICS],
                        "counts": [figures[k] for k in ("tp", "fp", "fn", "tn", "invalid")],
                    }
                    for method, figures in by_method.items()
                ],
            }
        )
    return tables


@login_required
def benchmark_run(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership, run = _run(request, slug, pk)
    names = run_file_names(run)
    context = {
        "team": membership.team,
        "run": run,
        "metrics": METRICS,
        "tables": _tables(run),
        "streams": (run.results or {}).get("streams", []),
        "plots": [n for n in names if n.endswith(".png")],
        "files": [n for n in names if not n.endswith(".png")],
        "methods": run.config.get("methods", []),
    }
    if request.htmx:
        response = render(request, "dashboard/benchmark_run.html#status", context)
        if run.status == BenchmarkRun.Status.DONE:
            # The figures, plots and files are outside the polled part: show the whole page.
            response["HX-Refresh"] = "true"
        return response
    return render(request, "dashboard/benchmark_run.html", context)


@login_required
def benchmark_file(request: HttpRequest, slug: str, pk: int, name: str) -> HttpResponse:
    _, run = _run(request, slug, pk)
    artefact = RunArtefact.objects.filter(run=run, name=name).first()
    if artefact is None:
        raise Http404("This run has no such file.")
    response = HttpResponse(bytes(artefact.content), content_type=artefact.content_type)
    if not artefact.content_type.startswith("image/"):
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{name}"'
    return response


@login_required
def benchmark_outcomes(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership, run = _run(request, slug, pk)
    form = OutcomeFilterForm(request.GET)
    data = form.cleaned_data if form.is_valid() else {}
    found = outcomes_for_run(
        run=run,
        method=data.get("method") or None,
        outcome=data.get("outcome") or None,
        scope=data.get("scope") or None,
        entity=data.get("entity") or None,
    )
    page = Paginator(found, OUTCOMES_PER_PAGE).get_page(data.get("page") or 1)
    spoken: dict[int, dict[str, str]] = {}  # entity id -> its names, read once a page
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "team": membership.team,
        "run": run,
        "form": form,
        "page": page,
        "rows": [
            {"o": o, "words": describe(o.point.get("public") or {}, _said(o.entity, spoken))}
            for o in page
        ],
        "query": query.urlencode(),
        "methods": run.config.get("methods", []),
    }
    return render(request, "dashboard/benchmark_outcomes.html", context)


def _said(entity: Entity | None, known: dict[int, dict[str, str]]) -> dict[str, str]:
    """The entity's sensor names as sentences say them, read once per entity into ``known``."""
    if entity is None:
        return {}
    if entity.pk not in known:
        known[entity.pk] = said_of(entity)
    return known[entity.pk]


@login_required
def benchmark_outcome(request: HttpRequest, slug: str, pk: int, oid: int) -> HttpResponse:
    membership, run = _run(request, slug, pk)
    outcome = RunOutcome.objects.filter(run=run, pk=oid).first()
    if outcome is None:
        raise Http404("This run has no such outcome.")
    cites = [int(i) for i in outcome.point.get("cites", []) if isinstance(i, int)]
    events = []
    if outcome.entity is not None and cites:
        events = [
            event_row(e) for e in evidence_events(entity=outcome.entity, ids=cites[:CITED_SHOWN])
        ]
    decision = outcome.decision
    regularities = []
    stored = {}
    if outcome.entity is not None:
        rids = [r.get("id") for r in decision.get("regularities", [])]
        stored = {r.rid: r for r in Regularity.objects.filter(entity=outcome.entity, rid__in=rids)}
    for r in decision.get("regularities", []):
        href = None
        if r.get("id") in stored and outcome.entity is not None:
            href = reverse("dashboard:memory_regularity", args=[slug, outcome.entity.key, r["id"]])
        regularities.append({**r, "href": href})
    label = outcome.label
    source = str(label.get("source") or "")
    context = {
        "team": membership.team,
        "run": run,
        "o": outcome,
        "words": describe(outcome.point.get("public") or {}, said_of(outcome.entity)),
        "public": sorted((outcome.point.get("public") or {}).items()),
        "events": events,
        "cited": len(cites),
        "cited_more": max(0, len(cites) - CITED_SHOWN),
        "decision": decision,
        "regularities": regularities,
        "label": label,
        "rule": rule_text(outcome.scope) if source.startswith("labeler:") else "",
        "back": reverse("dashboard:benchmark_outcomes", args=[slug, run.pk])
        + f"?method={outcome.method}&outcome={outcome.outcome}",
    }
    return render(request, "dashboard/benchmark_outcome.html", context)
