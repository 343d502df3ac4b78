"""Dashboard pages for signed-in members; each view calls selectors (and the read-only
frame_verify) only."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import ExpressionWrapper, F, FloatField
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import dateformat, timezone
from django.views.decorators.http import require_POST

from aframes_web.activity.models import DayDocument, Frame
from aframes_web.activity.queries import (
    CONTEXT_HOURS_DEFAULT,
    CONTEXT_HOURS_MAX,
    CONTEXT_HOURS_MIN,
    ContextQuery,
)
from aframes_web.activity.renderings import context_rendering
from aframes_web.activity.selectors import (
    compile_queue_state,
    compile_request,
    document_current,
    document_version,
    document_versions,
    evidence_events,
    frame_get,
    frames_for_entity,
)
from aframes_web.activity.services import Verification, document_tokens, frame_verify
from aframes_web.annotation.selectors import blind_entities
from aframes_web.dashboard import present
from aframes_web.dashboard.base import entity_or_404, membership_or_404, render_local
from aframes_web.dashboard.forms import (
    EntityFilterForm,
    FalseAlarmCostForm,
    FrameFilterForm,
    ImportUploadForm,
    MonthForm,
    VersionsForm,
)
from aframes_web.dashboard.held_uploads import held_release, held_upload, upload_hold
from aframes_web.dashboard.memory_views import observed_day
from aframes_web.dashboard.selectors import (
    captured_months,
    closed_in_memory,
    day_neighbours,
    document_months,
    entity_overview_with_documents,
    entity_scope_counts,
    interruption_times,
    latest_day,
    memory_month_figures,
    month_figures,
)
from aframes_web.dashboard.words import not_closed_words
from aframes_web.streams.models import Entity
from aframes_web.streams.records import FieldInvalid
from aframes_web.streams.selectors import entities_for_team, import_jobs_for_team
from aframes_web.streams.uploads import handed_over_note, import_job_create
from aframes_web.teams.models import ROLE_SCOPES, Role, Scope
from aframes_web.teams.selectors import teams_for_user
from aframes_web.teams.services import team_set_false_alarm_cost
from compiler.document import expand_runs, runs
from compiler.emit import to_json
from compiler.tokens import cl100k
from memory.engine.decide import cost_or_default, threshold_for


@login_required
def home(request: HttpRequest) -> HttpResponse:
    teams = list(teams_for_user(user=request.user))
    if len(teams) == 1:
        return redirect("dashboard:team", slug=teams[0].slug)
    return render(request, "dashboard/home.html", {"teams": teams})


ENTITIES_PER_PAGE = 50  # a team with many homes or repositories reads a page at a time


@login_required
def team(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_or_404(request, slug)
    form = EntityFilterForm(request.GET)
    form.is_valid()  # what is invalid is reported; the valid filters still apply
    wanted = form.cleaned_data
    entities = entity_overview_with_documents(
        team=membership.team, query=wanted.get("q") or "", scope=wanted.get("scope") or ""
    )
    # Entities the member labels blind are not listed: a list shows their last activity.
    hidden = blind_entities(request.user)
    entities = entities.exclude(pk__in=hidden)
    page = Paginator(entities, ENTITIES_PER_PAGE).get_page(wanted.get("page") or 1)
    query = request.GET.copy()
    query.pop("page", None)
    scopes = entity_scope_counts(team=membership.team)
    context = {
        "team": membership.team,
        "membership": membership,
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "team_url": reverse("dashboard:team", args=[slug]),
        "scopes": sorted(scopes.items()),
        "entity_count": sum(scopes.values()),
        "hidden_blind": len(hidden),
        "filtered": bool(wanted.get("q") or wanted.get("scope")),
        "queue": compile_queue_state(team=membership.team),
        "cost_form": FalseAlarmCostForm(
            initial={"false_alarm_cost": membership.team.false_alarm_cost}
        ),
        "cost": cost_or_default(membership.team.false_alarm_cost),
        "threshold": threshold_for(cost_or_default(membership.team.false_alarm_cost)),
        "is_owner": membership.role == Role.OWNER,
    }
    if request.htmx:
        return render(request, "dashboard/team.html#entities", context)
    return render(request, "dashboard/team.html", context)


@login_required
@require_POST
def team_decisions(request: HttpRequest, slug: str) -> HttpResponse:
    """Set the team's cost of a false alarm (owners); the team page shows it and the form."""
    membership = membership_or_404(request, slug)
    if membership.role != Role.OWNER:
        raise PermissionDenied("Only team owners can set what a false alarm costs.")
    form = FalseAlarmCostForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(e for field in form.errors.values() for e in field)
        messages.error(request, f"Not saved: {errors}")
        return redirect(reverse("dashboard:team", args=[slug]) + "#decisions-h")
    cost = form.cleaned_data["false_alarm_cost"]
    team_set_false_alarm_cost(team=membership.team, cost=cost)
    shown = cost_or_default(cost)
    messages.success(
        request,
        f"Saved: a false alarm costs {shown:g} missed need{'s' if shown != 1 else ''}; "
        f"ProactMem now acts on moments scored {threshold_for(shown):.2f} or more.",
    )
    return redirect(reverse("dashboard:team", args=[slug]) + "#decisions-h")


@login_required
def import_upload(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_or_404(request, slug)
    can_write = Scope.WRITE in ROLE_SCOPES[membership.role]
    form = ImportUploadForm()
    held_token = ""
    if request.method == "POST":
        if not can_write:
            raise PermissionDenied("Only team owners can import data.")
        who = {"owner_id": request.user.pk, "team_slug": slug}
        held_token = request.POST.get("held", "")
        held = None
        if held_token and not request.FILES.get("file"):
            held = held_upload(token=held_token, **who)
        form = ImportUploadForm(
            request.POST, request.FILES, held_name=held.name if held is not None else None
        )
        if form.is_valid():
            data = form.cleaned_data
            job = import_job_create(
                team=membership.team,
                user=request.user,
                format_name=data["format"],
                entity_key=data["entity"],
                upload=data["file"] or held,
                scope=data["scope"],
                tz=data["timezone"],
            )
            if held is not None:
                held_release(held)
            return redirect("dashboard:import_job", slug=slug, job_id=job.pk)
        chosen = form.cleaned_data.get("file")
        if chosen:
            # The rest of the form is wrong, not the file: keep it for the next try.
            held_token = upload_hold(upload=chosen, **who)
            form.held_name = chosen.name
        elif held is not None:
            held.close()
        else:
            held_token = ""
    jobs = list(import_jobs_for_team(team=membership.team)[:20])
    known = set(
        entities_for_team(team=membership.team)
        .filter(key__in=[job.entity_key for job in jobs])
        .values_list("key", flat=True)
    )
    context = {
        "team": membership.team,
        "form": form,
        "held_token": held_token,
        "can_write": can_write,
        "jobs": [
            {
                "job": job,
                "known": job.entity_key in known,
                "entities": len((job.summary or {}).get("entities") or {}),
            }
            for job in jobs
        ],
    }
    return render(request, "dashboard/import.html", context)


IMPORTED_ENTITIES_PER_PAGE = 50  # a multi-entity import (a home dataset) makes dozens


@login_required
def import_job(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    membership = membership_or_404(request, slug)
    job = import_jobs_for_team(team=membership.team).filter(pk=job_id).first()
    if job is None:
        raise Http404("No such import in this team.")
    counts = (job.summary or {}).get("entities") or {}
    page = Paginator(sorted(counts.items()), IMPORTED_ENTITIES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    known = set(
        entities_for_team(team=membership.team)
        .filter(key__in=[key for key, _ in page] + [job.entity_key])
        .values_list("key", flat=True)
    )
    context = {
        "team": membership.team,
        "job": job,
        "handed_over": handed_over_note(job),
        "entity_known": job.entity_key in known,
        "entities": [{"key": key, "events": events, "known": key in known} for key, events in page],
        "entities_page": page,
        "job_url": reverse("dashboard:import_job", args=[slug, job.pk]),
    }
    if request.htmx:
        return render(request, "dashboard/import_job.html#status", context)
    return render(request, "dashboard/import_job.html", context)


# --- Compiled activity: calendar, day, frame, history ------------------------------------------


def _month(form: MonthForm, newest: date | None, entity: Entity) -> date:
    """The month asked for, else the one of ``newest``, else the entity's current month."""
    if form.is_valid() and form.cleaned_data["month"]:
        year, number = map(int, form.cleaned_data["month"].split("-"))
        return date(year, number, 1)
    newest = newest or timezone.now().astimezone(ZoneInfo(entity.timezone)).date()
    return date(newest.year, newest.month, 1)


@login_required
def entity_calendar(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    """A month of the entity's days, each shaded and described by what its scope has.

    Desktop days are compiled into documents (active minutes, frames); the other scopes' days
    are closed into memory and decided on (events, facts, decisions), ARCHITECTURE.md "Data
    model".
    """
    membership, entity = entity_or_404(request, slug, key)
    desktop = entity.scope == Entity.Scope.DESKTOP
    form = MonthForm(request.GET)
    month = _month(form, latest_day(entity=entity), entity)
    following = date(month.year + month.month // 12, month.month % 12 + 1, 1)
    last = following - timedelta(days=1)
    previous = date(month.year - (month.month == 1), (month.month - 2) % 12 + 1, 1)
    if desktop:
        documents, captured = month_figures(entity=entity, first=month, last=last)
        weeks: Any = present.month_grid(month.year, month.month, documents, captured)
        months = document_months(entity=entity)
    else:
        figures = memory_month_figures(entity=entity, first=month, last=last)
        weeks = present.memory_month_grid(month.year, month.month, figures)
        months = captured_months(entity=entity)
    context = {
        "team": membership.team,
        "entity": entity,
        "desktop": desktop,
        "form": form,
        "month": month,
        "previous": previous,
        "following": following,
        "weeks": weeks,
        "months": months,
        "shades": range(1, present.SHADES + 1),
        "partial": "calendar",
    }
    return render_local(request, "dashboard/entity.html", context, entity)


def _document(entity: Entity, day: date) -> DayDocument:
    document = document_current(entity=entity, day=day)
    if document is None:
        request = compile_request(entity=entity, day=day)
        if request is not None and request.compiled < request.requested:
            raise Http404(
                f"{dateformat.format(day, 'l j F Y')} has events but no compiled document yet:"
                " a compile is queued. Reload this page in a minute; the team page shows the"
                " compile queue."
            )
        raise Http404(
            f"{dateformat.format(day, 'l j F Y')} has no compiled document: nothing was"
            " captured that day. The month calendar shows the days that have one."
        )
    return document


@login_required
def entity_day(request: HttpRequest, slug: str, key: str, day: date) -> HttpResponse:
    membership, entity = entity_or_404(request, slug, key)
    if entity.scope != Entity.Scope.DESKTOP:
        return observed_day(request, membership, entity, day)
    document = _document(entity, day)
    body = document.body
    form = FrameFilterForm(request.GET or None, frames=body["frames"])
    valid = form.is_valid()
    wanted = form.cleaned_data if valid else {}
    # app and site through the shared selector (as the API filters); the rest are page-only.
    frames = frames_for_entity(
        entity=entity, day=day, app=wanted.get("app"), site=wanted.get("site")
    ).annotate(
        active_min=ExpressionWrapper(F("active_s") / 60.0, output_field=FloatField()),
        wall_min=ExpressionWrapper(F("wall_s") / 60.0, output_field=FloatField()),
    )
    if wanted.get("monitor"):
        frames = frames.filter(monitor=wanted["monitor"])
    if wanted.get("min_minutes") is not None:
        frames = frames.filter(active_s__gte=wanted["min_minutes"] * 60)
    if form.is_bound and not valid:
        frames = frames.none()
    before, after = day_neighbours(entity=entity, day=day)
    times = interruption_times(entity=entity, frames=body["frames"])
    drawing = present.timeline(body, times)
    context = {
        "team": membership.team,
        "entity": entity,
        "day": day,
        "document": document,
        "document_tokens": document_tokens(document),
        "document_bytes": len(to_json(body).encode()),
        "monitor_minutes": present.monitor_minutes(body),
        "gap_minutes": sum(band.minutes for band in drawing.gaps),
        "away_minutes": sum(band.minutes for band in drawing.away),
        "coverage": body["coverage"],
        "omitted": body.get("omitted") or {},
        # What the reader emulated or could not see (e.g. ActivityWatch's 30 s rows).
        "disclosures": (body.get("source") or {}).get("disclosures") or [],
        "timeline": drawing,
        "ledger": present.ledger(body["frames"]),
        "form": form,
        "frames": list(frames),
        "frame_total": len(body["frames"]),
        "before": before,
        "after": after,
        "versions": document.version,
        "memory_closed": closed_in_memory(entity=entity, day=day),
        "not_closed": not_closed_words(entity, day),
        "partial": "frames",
    }
    return render_local(request, "dashboard/day.html", context, entity)


def _frame(entity: Entity, frame_id: str) -> Frame:
    frame = frame_get(entity=entity, frame_id=frame_id)
    if frame is None:
        raise Http404("No such frame in the current documents.")
    return frame


def _frame_page(
    request: HttpRequest, slug: str, key: str, frame_id: str, check: Verification | None
) -> HttpResponse:
    membership, entity = entity_or_404(request, slug, key)
    frame = _frame(entity, frame_id)
    stored = next(f for f in frame.document.body["frames"] if f["id"] == frame.frame_id)
    snapshots = expand_runs(stored["evidence"]["rows"])
    inputs = expand_runs(stored["evidence"].get("inputs", ""))
    interrupting = [i for item in stored["interruptions"] for i in expand_runs(item["evidence"])]
    events = list(evidence_events(entity=entity, ids=snapshots + inputs + interrupting))
    times = interruption_times(entity=entity, frames=[stored])
    tz = ZoneInfo(entity.timezone)
    colours = present.app_colours(frame.document.body["frames"])
    snapshot_ids, input_ids, interrupting_ids = set(snapshots), set(inputs), set(interrupting)
    interruptions = [
        {
            **item,
            "at": times.get(ids[0]) if (ids := expand_runs(item["evidence"])) else None,
            "colour": colours.get(item["app"], present.OTHER_COLOUR),
        }
        for item in stored["interruptions"]
    ]
    context = {
        "team": membership.team,
        "entity": entity,
        "frame": frame,
        "stored": stored,
        "start": present.parse_time(stored["start"]).astimezone(tz),
        "end": present.parse_time(stored["end"]).astimezone(tz),
        "colour": colours.get(stored["app"], present.OTHER_COLOUR),
        "interruptions": interruptions,
        "snapshots": [e for e in events if e.row_id in snapshot_ids],
        "interrupting": [e for e in events if e.row_id in interrupting_ids],
        "inputs": [e for e in events if e.row_id in input_ids],
        "check": check,
        "rows_read": runs(check.row_ids) if check else "",
        "differences": [
            (name, present.show(was), present.show(now))
            for name, was, now in (check.differences if check else [])
        ],
        "partial": "verify" if check is not None else None,
    }
    return render_local(request, "dashboard/frame.html", context, entity)


@login_required
def frame_detail(request: HttpRequest, slug: str, key: str, frame_id: str) -> HttpResponse:
    return _frame_page(request, slug, key, frame_id, None)


@login_required
@require_POST
def frame_verify_view(request: HttpRequest, slug: str, key: str, frame_id: str) -> HttpResponse:
    """Recompile the frame from exactly its evidence rows. A read: viewers may run it too.

    htmx swaps the result in; without JavaScript the whole frame page comes back with it.
    """
    _, entity = entity_or_404(request, slug, key)
    check = frame_verify(entity=entity, frame=_frame(entity, frame_id))
    return _frame_page(request, slug, key, frame_id, check)


@login_required
def day_history(request: HttpRequest, slug: str, key: str, day: date) -> HttpResponse:
    membership, entity = entity_or_404(request, slug, key)
    versions = list(document_versions(entity=entity, day=day).defer("body", "context", "params"))
    if not versions:
        raise Http404("No compiled document for this day.")
    numbers = [v.version for v in versions]
    newest = numbers[0]
    defaults = {"a": numbers[1] if len(numbers) > 1 else newest, "b": newest}
    form = VersionsForm(request.GET if "a" in request.GET else defaults, versions=numbers)
    before = after = None
    diff = None
    if form.is_valid():
        before = document_version(entity=entity, day=day, version=form.cleaned_data["a"])
        after = document_version(entity=entity, day=day, version=form.cleaned_data["b"])
        if before is not None and after is not None and before.pk != after.pk:
            diff = present.document_diff(before.body, after.body, before.context, after.context)
    context = {
        "team": membership.team,
        "entity": entity,
        "day": day,
        "versions": versions,
        "form": form,
        "before": before,
        "after": after,
        "diff": diff,
        "partial": "diff",
    }
    return render_local(request, "dashboard/history.html", context, entity)


def _local_at(raw: str | None, zone: ZoneInfo) -> datetime | str | None:
    """The form's ``at``: a browser's datetime-local value is the entity's local time; a value
    with an offset is taken as written; anything else goes on for the query to refuse."""
    if not raw:
        return None
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        return raw
    return parsed.replace(tzinfo=zone) if parsed.tzinfo is None else parsed


@login_required
def entity_context(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    """The context block an agent gets for a rolling window: the same query, defaults and
    answer as REST ``context`` and MCP ``get_context``."""
    membership, entity = entity_or_404(request, slug, key)
    if entity.scope != Entity.Scope.DESKTOP:
        raise Http404("Context blocks are compiled from desktop activity; this entity has none.")
    zone = ZoneInfo(entity.timezone)
    query, block, error = None, None, None
    try:
        query = ContextQuery.build(
            entity=entity,
            now=timezone.now(),
            hours=request.GET.get("hours") or None,
            at=_local_at(request.GET.get("at"), zone),
        )
        block = context_rendering(query).render()
    except FieldInvalid as problem:
        error = f"{problem.path} {problem.message}"
    context = {
        "team": membership.team,
        "entity": entity,
        "query": query,
        "context_text": block,
        "tokens": cl100k()(block) if block is not None else None,
        "error": error,
        "hours": request.GET.get("hours") or f"{CONTEXT_HOURS_DEFAULT:g}",
        "at": request.GET.get("at") or "",
        "hours_min": CONTEXT_HOURS_MIN,
        "hours_max": CONTEXT_HOURS_MAX,
    }
    return render_local(request, "dashboard/context.html", context, entity)
