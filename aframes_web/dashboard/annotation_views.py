"""Dashboard pages of the annotation workbench (ProactMem §4.2): projects, the annotator's
page, cross-review, adjudication, agreement, export and import.

Who may do what: annotators label their queue, adjudicators adjudicate (and review), owners
manage (and adjudicate), viewers read projects, final labels and agreement; anyone outside
the team gets 404. Blindness is the selectors' (``aframes_web/annotation/selectors.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST
from markdown_it import MarkdownIt

from aframes_web.annotation import glance, services
from aframes_web.annotation import selectors as sel
from aframes_web.annotation.models import Label, LabelProject, ProjectStream, Task
from aframes_web.dashboard.base import membership_or_404, render_local
from aframes_web.dashboard.forms import (
    AdjudicateForm,
    LabelForm,
    LabelImportForm,
    LabelProjectForm,
    ReassignForm,
    ReviewForm,
    TaskFilterForm,
)
from aframes_web.streams.names import names_of, said
from aframes_web.teams.models import Membership, Role
from benchmark.labelers.numbers import numbers_for
from benchmark.streams.catalogue import service_ids
from benchmark.streams.words import describe
from memory import llm

TASKS_PER_PAGE = 50
MANAGE = (Role.OWNER,)
ADJUDICATE = (Role.OWNER, Role.ADJUDICATOR)
READ_RESULTS = (Role.OWNER, Role.ADJUDICATOR, Role.VIEWER)


def markdown(text: str) -> str:
    """Guidelines as HTML: CommonMark with raw HTML off (so nothing a member wrote runs), its
    headings two levels down so that they sit under the page's own."""

    parser = MarkdownIt("commonmark", {"html": False})
    tokens = parser.parse(text)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + 2)}"
    return mark_safe(parser.renderer.render(tokens, parser.options, {}))  # noqa: S308


def _project(request: HttpRequest, slug: str, pk: int) -> tuple[Membership, LabelProject]:
    membership = membership_or_404(request, slug)
    project = sel.project_get(team=membership.team, pk=pk)
    if project is None:
        raise Http404("No such labelling project in this team.")
    return membership, project


def _require(membership: Membership, roles: tuple[str, ...], doing: str) -> None:
    if membership.role not in roles:
        who = ", ".join(r + "s" for r in roles)
        raise PermissionDenied(f"Only {who} can {doing}; you are {membership.role} of this team.")


def _base(membership: Membership, project: LabelProject | None = None) -> dict[str, Any]:
    return {"team": membership.team, "membership": membership, "project": project}


@login_required
def projects(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_or_404(request, slug)
    team = membership.team
    form = LabelProjectForm(llm_configured=llm.configured())
    problem = ""
    if request.method == "POST":
        _require(membership, MANAGE, "create labelling projects")
        form = LabelProjectForm(request.POST, llm_configured=llm.configured())
        if form.is_valid():
            data = form.cleaned_data
            spec = services.ProjectSpec(
                name=data["name"],
                scope=data["scope"],
                entities=data["entities"],
                starts_at=data["starts"],
                ends_at=data["ends"],
                labels_per_point=data["labels_per_point"],
                guidelines=data["guidelines"],
                triage=data["triage"],
                review_percent=data["review_percent"],
            )
            try:
                project = services.project_create(team=team, spec=spec, user=request.user)
            except services.WorkbenchError as exc:
                problem = str(exc)
            else:
                return redirect("dashboard:label_project", slug=slug, pk=project.pk)
    rows = []
    for project in sel.projects_for_team(team=team):
        mine = sel.progress_of(project, request.user)
        rows.append({"p": project, "counts": sel.project_counts(project), "mine": mine})
    context = {
        **_base(membership),
        "rows": rows,
        "form": form,
        "problem": problem,
        "can_manage": membership.role in MANAGE,
        "annotators": [u.get_username() for u in services.annotators_of(team)],
    }
    return render(request, "dashboard/label_projects.html", context)


@login_required
def project(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership, found = _project(request, slug, pk)
    role = membership.role
    problem = request.GET.get("problem", "")[:300]
    streams = []
    sees_all = role in READ_RESULTS
    pool = [u.get_username() for u in services.annotators_of(found.team)]
    for stream in found.streams.select_related("entity").order_by("position", "id"):
        places = list(stream.assignments.select_related("annotator"))
        if not sees_all and not any(p.annotator_id == request.user.pk for p in places):
            continue
        done = {
            row["place"]: row["n"]
            for row in Label.objects.filter(place__in=places, submitted_at__isnull=False)
            .values("place")
            .annotate(n=Count("id"))
        }
        on_it = {p.annotator.get_username() for p in places}
        streams.append(
            {
                "s": stream,
                "places": [
                    {
                        "who": p.annotator.get_username(),
                        "done": done.get(p.pk, 0),
                        "percent": int(100 * done.get(p.pk, 0) / stream.points)
                        if stream.points
                        else 100,
                        "mine": p.annotator_id == request.user.pk,
                        "others": [u for u in pool if u not in on_it],
                    }
                    for p in places
                    if sees_all or p.annotator_id == request.user.pk
                ],
            }
        )
    context = {
        **_base(membership, found),
        "guidelines": markdown(found.guidelines),
        "numbers": numbers_for(found.scope, found.numbers),
        "counts": sel.project_counts(found),
        "streams": streams,
        "progress": sel.progress_of(found, request.user),
        "flags": list(sel.own_flags(found, request.user)[:50]),
        "can_manage": role in MANAGE,
        "can_adjudicate": role in ADJUDICATE,
        "can_read_results": sees_all,
        "can_review": role in (*ADJUDICATE, Role.ANNOTATOR),
        "show_triage": role in ADJUDICATE and found.triage != "none",
        "problem": problem,
        "import_form": LabelImportForm(),
    }
    return render(request, "dashboard/label_project.html", context)


@login_required
@require_POST
def reassign(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership, found = _project(request, slug, pk)
    _require(membership, MANAGE, "reassign streams")
    pool = [u.get_username() for u in services.annotators_of(found.team)]
    form = ReassignForm(request.POST, annotators=pool)
    target = reverse("dashboard:label_project", args=[slug, pk])
    if not form.is_valid():
        return redirect(
            f"{target}?problem={quote('Choose an annotator of this team to hand the stream to.')}"
        )
    stream = ProjectStream.objects.filter(project=found, pk=form.cleaned_data["stream"]).first()
    users = get_user_model().objects
    old = users.filter(username=form.cleaned_data["annotator"]).first()
    new = users.filter(username=form.cleaned_data["to"]).first()
    if stream is None or old is None or new is None:
        raise Http404("No such stream or annotator in this project.")
    try:
        services.reassign(stream=stream, annotator=old, to=new)
    except services.WorkbenchError as exc:
        return redirect(f"{target}?problem={quote(str(exc))}")
    return redirect(target)


@login_required
@require_POST
def numbers(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Owners set the number of each service's rule; empty fields keep the default."""
    membership, found = _project(request, slug, pk)
    _require(membership, MANAGE, "set the guidelines' numbers")
    target = reverse("dashboard:label_project", args=[slug, pk])
    given: dict[str, float] = {}
    for item in numbers_for(found.scope):
        raw = request.POST.get(item["service"], "").strip()
        if not raw:
            continue
        try:
            given[item["service"]] = float(raw)
        except ValueError:
            said = f"{item['service']}: {raw!r} is not a number of {item['unit']}."
            return redirect(f"{target}?problem={quote(said)}")
    try:
        services.numbers_set(project=found, given=given)
    except services.WorkbenchError as exc:
        return redirect(f"{target}?problem={quote(str(exc))}")
    return redirect(f"{target}#numbers-h")


# --- the annotator -----------------------------------------------------------------------------


@login_required
def annotate_next(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Resume where the annotator left off: the first unlabelled point of their queue."""
    membership, found = _project(request, slug, pk)
    _require(membership, (Role.ANNOTATOR,), "label points")
    task = sel.current_task(found, request.user)
    if task is None:
        context = {**_base(membership, found), "progress": sel.progress_of(found, request.user)}
        return render(request, "dashboard/annotate_done.html", context)
    return redirect("dashboard:annotate", slug=slug, pk=pk, task=task.pk)


def _own_task(
    request: HttpRequest, slug: str, pk: int, task: int
) -> tuple[Membership, LabelProject, Task]:
    """A point of the signed-in annotator's own queue; any other point is a 404."""
    membership, found = _project(request, slug, pk)
    _require(membership, (Role.ANNOTATOR,), "label points")
    point = sel.task_for_annotator(found, request.user, task)
    if point is None:
        raise Http404("This point is not in your queue.")
    return membership, found, point


@login_required
def annotate(request: HttpRequest, slug: str, pk: int, task: int) -> HttpResponse:
    membership, found, point = _own_task(request, slug, pk, task)
    page = _page(request.GET.get("hpage"))
    if request.htmx and request.GET.get("hpage"):
        return render(
            request, "dashboard/annotate.html#history", _history_context(request, point, page)
        )
    episodes = sel.own_episodes(point, request.user)
    services_here = list(service_ids(found.scope))
    problem = ""
    if request.method == "POST":
        form = LabelForm(request.POST, services=services_here, episodes=episodes)
        if form.is_valid():
            data = form.cleaned_data
            try:
                services.label_submit(
                    task=point,
                    user=request.user,
                    given=services.LabelInput(
                        decision=data["decision"],
                        service=data["service"] or "",
                        episode=data["episode"],
                        new_episode=data["new_episode"],
                        reopens=data["reopens"],
                        rationale=data["rationale"],
                        same_as_previous=data["same_as_previous"],
                        ends_episode=data["ends_episode"],
                    ),
                )
            except services.WorkbenchError as exc:
                problem = str(exc)
            else:
                return redirect("dashboard:annotate_next", slug=slug, pk=pk)
    else:
        mine = sel.own_label(point, request.user)
        form = LabelForm(initial=_initial(mine), services=services_here, episodes=episodes)
    progress = sel.progress_of(found, request.user)
    mine = sel.own_label(point, request.user)
    named = names_of(point.stream.entity)  # read once for the whole page
    context = {
        **_base(membership, found),
        **_history_context(request, point, page, named),
        "task": point,
        "words": describe(point.point.public or {}, said(named)),
        "close": glance.at_close(point, named),
        "baseline": glance.baseline(point, _baseline_days(request.GET.get("baseline")), named),
        "episodes": episodes,
        "previous_episode": sel.previous_episode(point, request.user),
        "form": form,
        "problem": problem,
        "progress": progress,
        "guidelines": markdown(found.guidelines),
        "numbers": numbers_for(found.scope, found.numbers),
        "submitted": mine is not None and mine.submitted_at is not None,
        "final": point.final_id is not None,
        "flags": [r for r in sel.own_flags(found, request.user) if r.label.task_id == point.pk],
    }
    return render(request, "dashboard/annotate.html", context, status=422 if problem else 200)


def _page(value: str | None) -> int:
    try:
        return max(1, int(value or 1))
    except ValueError:
        return 1


def _readable(
    events: list[Any], task: Task, named: Mapping[str, Any] | None = None
) -> list[glance.Row]:
    """History rows as a person reads them, sensors by the entity's names (read once)."""
    named = names_of(task.stream.entity) if named is None else named
    return [glance.readable(e, named) for e in events]


def _baseline_days(value: str | None) -> int:
    """``?baseline=`` as one of the offered spans, else the default."""
    return (
        int(value) if value in {str(n) for n in glance.BASELINE_DAYS} else glance.BASELINE_DAYS[0]
    )


def _local_moment(value: str | None, zone: ZoneInfo) -> datetime | None:
    """A ``datetime-local`` field (``2026-01-27T06:40``) read in the entity's zone; None when
    empty or unreadable (the form shows it empty again)."""
    try:
        return datetime.fromisoformat(value).replace(tzinfo=zone) if value else None
    except ValueError:
        return None


def _history_context(
    request: HttpRequest, task: Task, page: int, named: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The history panel: newest first a page at a time, or the events between ``hfrom`` and
    ``hto`` (local times) oldest first; either way nothing after the point."""
    zone = ZoneInfo(task.stream.entity.timezone)
    start = _local_moment(request.GET.get("hfrom"), zone)
    end = _local_moment(request.GET.get("hto"), zone)
    close = task.point.at.astimezone(zone)
    if start is not None or end is not None:
        offset = (page - 1) * sel.HISTORY_PAGE
        rows = list(glance.history_range(task, start, end)[offset : offset + sel.HISTORY_PAGE + 1])
        events, older = rows[: sel.HISTORY_PAGE], len(rows) > sel.HISTORY_PAGE
    else:
        events, older = sel.history(task, page)
    # The previous point: its page is linked, and the history can start from it.
    previous = (
        Task.objects.filter(stream_id=task.stream_id, seq=task.seq - 1)
        .values_list("pk", "point__at")
        .first()
    )
    form = "%Y-%m-%dT%H:%M"
    day_start = close.replace(hour=0, minute=0, second=0, microsecond=0)
    return {
        "history": _readable(events, task, named),
        "hpage": page,
        "older": older,
        "ranged": start is not None or end is not None,
        "hfrom": start.strftime(form) if start else "",
        "hto": end.strftime(form) if end else "",
        "close_field": close.strftime(form),
        "point_day": {"hfrom": day_start.strftime(form), "hto": close.strftime(form)},
        "previous": previous[0] if previous else None,
        "since_previous": (
            {"hfrom": previous[1].astimezone(zone).strftime(form), "hto": close.strftime(form)}
            if previous
            else None
        ),
        "history_url": request.path,
        "zone": task.stream.entity.timezone,
    }


def _initial(label: Label | None) -> dict[str, Any]:
    if label is None:
        return {}
    if label.draft:
        draft = dict(label.draft)
        for ticked in ("reopens", "same_as_previous", "ends_episode"):
            draft[ticked] = draft.get(ticked) in ("on", "true", "True", "1")
        return draft
    if label.submitted_at is None:
        return {}
    return {
        "decision": label.decision,
        "service": label.service,
        "episode": label.episode_id,
        "reopens": label.reopens,
        "ends_episode": label.ends_episode,
        "rationale": label.rationale,
    }


@login_required
def annotate_day(request: HttpRequest, slug: str, pk: int, task: int, day: str) -> HttpResponse:
    """One earlier day of the baseline summarised, as far as it is known at the point (a day
    after the point's is not found)."""
    _, _, point = _own_task(request, slug, pk, task)
    try:
        asked = date.fromisoformat(day)
    except ValueError:
        raise Http404("Not a day (YYYY-MM-DD).") from None
    entity = point.stream.entity
    if asked > point.point.at.astimezone(ZoneInfo(entity.timezone)).date():
        raise Http404("That day comes after the point.")
    context = {"summary": glance.day_summary(point, asked)}
    return render_local(request, "dashboard/_day_summary.html", context, entity)


@login_required
@require_POST
def annotate_draft(request: HttpRequest, slug: str, pk: int, task: int) -> HttpResponse:
    """Autosave: the form as it stands, kept until the label is submitted."""
    _, _, point = _own_task(request, slug, pk, task)
    try:
        label = services.draft_save(task=point, user=request.user, form=request.POST.dict())
    except services.WorkbenchError as exc:
        return HttpResponse(str(exc), status=422)
    return HttpResponse(f"Draft saved {label.updated_at:%H:%M:%S} UTC")


# --- review ------------------------------------------------------------------------------------


@login_required
def review(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership, found = _project(request, slug, pk)
    _require(membership, (*ADJUDICATE, Role.ANNOTATOR), "review labels")
    problem = ""
    if request.method == "POST":
        form = ReviewForm(request.POST)
        if form.is_valid():
            label = Label.objects.filter(task__project=found, pk=form.cleaned_data["label"]).first()
            if label is None:
                raise Http404("No such label in this project.")
            try:
                services.review_submit(
                    label=label,
                    user=request.user,
                    verdict=form.cleaned_data["verdict"],
                    comment=form.cleaned_data["comment"],
                )
            except services.WorkbenchError as exc:
                problem = str(exc)
            else:
                return redirect("dashboard:label_review", slug=slug, pk=pk)
    queue = sel.review_queue(found, request.user)
    label = queue.first()
    context = {
        **_base(membership, found),
        "label": label,
        "left": queue.count(),
        "problem": problem,
    }
    if label is not None:
        named = names_of(label.task.stream.entity)  # read once for the sentence and the rows
        context.update(
            {
                "words": describe(label.task.point.public or {}, said(named)),
                "history": _readable(sel.history(label.task, 1)[0], label.task, named),
                "form": ReviewForm(initial={"label": label.pk}),
            }
        )
    return render(request, "dashboard/label_review.html", context)


# --- adjudication ------------------------------------------------------------------------------


@login_required
def tasks(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The project's points with their state; the waiting ones are the adjudication queue."""
    membership, found = _project(request, slug, pk)
    _require(membership, READ_RESULTS, "list a project's points")
    form = TaskFilterForm(request.GET)
    data = form.cleaned_data if form.is_valid() else {}
    rows = Task.objects.filter(project=found).select_related("stream__entity", "final")
    status = data.get("status")
    need = found.labels_per_point
    if status == "final":
        rows = rows.filter(final__isnull=False)
    elif status == "waiting":
        rows = sel.adjudication_queue(found)
    elif status == "open":
        rows = rows.filter(submitted__lt=need, final__isnull=True)
    if data.get("entity"):
        rows = rows.filter(stream__entity__key=data["entity"])
    rows = rows.order_by("stream__position", "seq")
    page = Paginator(rows, TASKS_PER_PAGE).get_page(data.get("page") or 1)
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        **_base(membership, found),
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "need": need,
        "can_adjudicate": membership.role in ADJUDICATE,
    }
    return render(request, "dashboard/label_tasks.html", context)


@login_required
def adjudicate_next(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership, found = _project(request, slug, pk)
    _require(membership, ADJUDICATE, "adjudicate")
    task = sel.adjudication_queue(found).first()
    if task is None:
        return redirect(reverse("dashboard:label_tasks", args=[slug, pk]) + "?status=waiting")
    return redirect("dashboard:adjudicate", slug=slug, pk=pk, task=task.pk)


@login_required
def adjudicate(request: HttpRequest, slug: str, pk: int, task: int) -> HttpResponse:
    membership, found = _project(request, slug, pk)
    _require(membership, ADJUDICATE, "adjudicate")
    point = (
        Task.objects.filter(project=found, pk=task)
        .select_related("point", "stream__entity", "final")
        .first()
    )
    if point is None:
        raise Http404("No such point in this project.")
    services_here = list(service_ids(found.scope))
    served = sel.served_points(point)
    problem = ""
    if request.method == "POST":
        action = request.POST.get("action", "decide")
        try:
            if action == "reopen":
                services.reopen(task=point, user=request.user, note=request.POST.get("note", ""))
                return redirect("dashboard:adjudicate", slug=slug, pk=pk, task=point.pk)
            form = AdjudicateForm(request.POST, services=services_here, served=served)
            if form.is_valid():
                data = form.cleaned_data
                services.adjudicate(
                    task=point,
                    user=request.user,
                    decision=data["decision"],
                    service=data["service"] or "",
                    episode=data["episode"],
                    note=data["note"],
                    ends=data["ends"],
                )
                return redirect("dashboard:adjudicate_next", slug=slug, pk=pk)
            problem = "Choose intervene or abstain."
        except services.WorkbenchError as exc:
            problem = str(exc)
    labels = sel.submitted_labels(point)
    initial: dict[str, Any] = {}
    if point.final is not None:
        initial = {
            "decision": point.final.decision,
            "service": point.final.service,
            "episode": point.final.episode,
            "ends": point.final.ends_id,
        }
    named = names_of(point.stream.entity)  # read once for the sentence and the rows
    context = {
        **_base(membership, found),
        "task": point,
        "words": describe(point.point.public or {}, said(named)),
        "labels": labels,
        "verdicts": list(sel.verdicts_of(point)),
        "history": _readable(sel.history(point, 1)[0], point, named),
        "zone": point.stream.entity.timezone,
        "form": AdjudicateForm(initial=initial, services=services_here, served=served),
        "problem": problem,
        "left": sel.adjudication_queue(found).count(),
    }
    return render(request, "dashboard/adjudicate.html", context, status=422 if problem else 200)


# --- agreement, export, import -----------------------------------------------------------------


@login_required
def agreement(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership, found = _project(request, slug, pk)
    _require(membership, READ_RESULTS, "read agreement")
    found_report = sel.agreement(found)
    kappa = {(p.first, p.second): p for p in found_report.pairs}
    matrix = []
    for a in found_report.raters:
        cells = []
        for b in found_report.raters:
            pair = kappa.get((a, b)) or kappa.get((b, a))
            cells.append(
                {"self": a == b, "pair": pair, "tone": _tone(pair.kappa if pair else None)}
            )
        matrix.append({"rater": a, "cells": cells})
    top = max((n for row in found_report.confusion.values() for n in row.values()), default=0)
    confusion = [
        {
            "category": a,
            "cells": [
                {"n": row[b], "tone": _tone(row[b] / top if top else None)}
                for b in found_report.categories
            ],
        }
        for a, row in found_report.confusion.items()
    ]
    context = {
        **_base(membership, found),
        "r": found_report,
        "matrix": matrix,
        "confusion": confusion,
    }
    return render(request, "dashboard/label_agreement.html", context)


def _tone(value: float | None) -> str:
    """A heat-map cell's background: darker blue for higher values, grey for undefined."""
    if value is None:
        return "background:#eef1f4"
    share = max(0.0, min(1.0, value))
    light = int(96 - 58 * share)
    return f"background:hsl(210 60% {light}%);color:{'#fff' if light < 60 else '#1d232a'}"


@login_required
def export(request: HttpRequest, slug: str, pk: int, fmt: str) -> StreamingHttpResponse:
    membership, found = _project(request, slug, pk)
    _require(membership, READ_RESULTS, "export final labels")
    if fmt not in sel.EXPORTS:
        raise Http404("Export as jsonl or csv.")
    return sel.export_response(request, found, fmt)


@login_required
@require_POST
def import_labels(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership, found = _project(request, slug, pk)
    _require(membership, MANAGE, "import labels")
    form = LabelImportForm(request.POST, request.FILES)
    target = reverse("dashboard:label_project", args=[slug, pk])
    if not form.is_valid():
        return redirect(f"{target}?problem={quote('Choose a JSONL file of labels to import.')}")
    upload = form.cleaned_data["file"]
    try:
        lines = (line.decode("utf-8") for line in upload)
        n = services.labels_import(project=found, lines=lines, name=upload.name, user=request.user)
    except UnicodeDecodeError:
        return redirect(f"{target}?problem={quote(upload.name + ' is not UTF-8 text')}")
    except services.WorkbenchError as exc:
        return redirect(f"{target}?problem={quote(str(exc))}")
    return redirect(f"{target}?imported={n}")
