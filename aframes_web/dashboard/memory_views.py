"""Dashboard pages that audit an entity's ProactMem memory: its closed days, regularities and
decisions, each with the evidence it names. Views call ``memory.selectors`` only."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import dateformat

from aframes_web.activity.selectors import evidence_events
from aframes_web.dashboard.base import entity_or_404, render_local
from aframes_web.dashboard.forms import DecisionFilterForm, RegularityFilterForm
from aframes_web.dashboard.selectors import captured_neighbours, segment_detail, stored_event_ids
from aframes_web.dashboard.words import not_closed_words
from aframes_web.proactivestream.models import DecisionPoint
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.names import said_of
from aframes_web.streams.selectors import events_for_entity
from aframes_web.teams.models import Membership
from benchmark.streams.words import describe
from compiler.document import runs
from memory.engine import regularities as rules
from memory.engine.llm_extract import LLM_SOURCE
from memory.engine.refs import parse_ref
from memory.engine.words import said
from memory.models import Assessment, Decision, Fact, Regularity, Segment
from memory.selectors import (
    STATE_RANK,
    allowed_decision_for,
    closed_days,
    day_bounds,
    decision_detail,
    decisions_for,
    engine_event,
    facts_by_ref,
    memory_summary,
    regularities_by_rid,
    regularities_for,
    regularity_detail,
    trajectories_for,
    trajectory_detail,
)

DECISIONS_SHOWN = 25  # the entity page lists the newest; each links to its full record
DECISIONS_PER_PAGE = 50  # the decisions list
# The memory page shows the newest closed days (a month: what a person looking at memory now
# checks); the list of every closed day is paged, as a year of history is 365 rows.
DAYS_SHOWN = 31
DAYS_PER_PAGE = 100
REGULARITIES_PER_PAGE = 50  # a person reads a page of sentences, not hundreds of rows
PAYLOAD_SHOWN = 300  # characters of an event's payload; element trees run to kilobytes
EVENTS_OPEN = 20  # a segment citing more events than this shows them folded
DAY_EVENTS_INLINE = 200  # a day citing more events than this shows every segment's folded
SEGMENTS_OPEN = 40  # a day with more segments than this shows accepted ones folded
EVENTS_PER_PAGE = 100  # a day's events on its day page; a busy home has thousands
SEGMENT_EVENTS_PER_PAGE = 200  # a segment's cited events, opened on demand

# The calendar's colours, one per assessment outcome, in legend order.
OUTCOME_COLOURS = {
    Assessment.Outcome.FULFILLED: "#2e9e5b",
    Assessment.Outcome.VIOLATED: "#d64545",
    Assessment.Outcome.CENSORED: "#8a939c",
    Assessment.Outcome.INAPPLICABLE: "#e3e7ec",
    Assessment.Outcome.NOT_TRIGGERED: "#a9cbea",
}
# The replay rules of memory.engine.regularities.assess_day, in words.
OUTCOME_WORDS = {
    Assessment.Outcome.FULFILLED: "fulfilled: the behaviour followed the trigger in the window",
    Assessment.Outcome.VIOLATED: "violated: triggered in the window, the behaviour did not follow",
    Assessment.Outcome.CENSORED: "censored: nothing observed that day (unknown, not absent)",
    Assessment.Outcome.INAPPLICABLE: "inapplicable: a weekday the regularity does not cover",
    Assessment.Outcome.NOT_TRIGGERED: "not triggered: observed, but no trigger in the window",
}
CELL = 14  # px, one day of the calendar
STEP = 16  # px, a cell and its gap
CAL_LEFT = 30  # px for the weekday labels
CAL_TOP = 16  # px for the month labels


# --- Presentation helpers (pure) ----------------------------------------------------------------


def compact(value: Any, limit: int | None = None) -> str:
    """A JSON value as one short line, cut at ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))
    if limit is not None and len(text) > limit:
        return text[:limit] + "…"
    return text


def event_row(event: Event) -> dict[str, Any]:
    """An event as the memory pages show it: the payload as the engine saw it, which never
    carries the source's private ground truth."""
    payload = engine_event(event).payload
    return {
        "id": event.pk,
        "at": event.occurred_at,
        "kind": event.kind,
        "monitor": event.monitor,
        "payload": compact(payload, PAYLOAD_SHOWN),
    }


def outcome_calendar(
    outcomes: Sequence[tuple[date, str]], hrefs: Mapping[date, str]
) -> dict[str, Any]:
    """Weeks as columns, Monday on top, from the first assessed day's week to the last's.

    Days in the range without an assessment are drawn blank; assessed days carry their
    outcome's colour and, when the day is closed, a link to its trajectory.
    """
    if not outcomes:
        return {"cells": [], "months": [], "weekdays": [], "width": 0, "height": 0}
    first = min(d for d, _ in outcomes)
    last = max(d for d, _ in outcomes)
    start = first - timedelta(days=first.weekday())
    weeks = (last - start).days // 7 + 1
    by_day = dict(outcomes)
    cells = []
    months = []
    for n in range((last - start).days + 1):
        day = start + timedelta(days=n)
        x = CAL_LEFT + (n // 7) * STEP
        y = CAL_TOP + day.weekday() * STEP
        if day.day == 1 or n == 0:
            months.append((x, day.strftime("%b %Y") if day.month == 1 or n == 0 else f"{day:%b}"))
        outcome = by_day.get(day)
        cells.append(
            {
                "day": day,
                "x": x,
                "y": y,
                "outcome": outcome,
                "colour": OUTCOME_COLOURS.get(outcome, "#ffffff") if outcome else "#ffffff",
                "href": hrefs.get(day) if outcome else None,
            }
        )
    weekdays = [
        (CAL_TOP + i * STEP + CELL - 3, name) for i, name in ((0, "Mon"), (2, "Wed"), (4, "Fri"))
    ]
    return {
        "cells": cells,
        "months": months,
        "weekdays": weekdays,
        "cell": CELL,
        "width": CAL_LEFT + weeks * STEP,
        "height": CAL_TOP + 7 * STEP,
    }


# --- Links between memory items -----------------------------------------------------------------


def _day_url(slug: str, key: str, day: date) -> str:
    return reverse("dashboard:memory_day", args=[slug, key, day])


def _fact_link(
    slug: str, key: str, ref: str, facts: Mapping[str, Fact], closed: Container[date]
) -> dict[str, Any]:
    """A fact reference as a link to its trajectory day, anchored on the fact.

    A fact of a day not closed yet (what a decision sees of today) has no row until the day
    closes; the note says so rather than calling it unknown.
    """
    fact = facts.get(ref)
    if fact is None:
        try:
            day: date | None = date.fromisoformat(_kind(ref)[1].split("/")[0])
        except ValueError:
            day = None
        if day is not None and day not in closed:
            note = f"{day.isoformat()} is not closed yet; its facts are stored when it closes"
        else:
            note = "no such fact stored"
        return {"ref": ref, "href": None, "fact": None, "note": note}
    day = fact.segment.trajectory.day
    return {
        "ref": ref,
        "href": f"{_day_url(slug, key, day)}#{ref}",
        "fact": fact,
        "path": ".".join(str(p) for p in fact.path),
        "value": compact(fact.value),
    }


def _reg_link(slug: str, key: str, rid: str, regs: Mapping[str, Regularity]) -> dict[str, Any]:
    reg = regs.get(rid)
    href = reverse("dashboard:memory_regularity", args=[slug, key, rid]) if reg else None
    return {"ref": rid, "href": href, "regularity": reg}


def _event_ids(refs: Iterable[str]) -> list[int]:
    ids = []
    for ref in refs:
        kind, rest = _kind(ref)
        if kind == "event" and rest.isdigit():
            ids.append(int(rest))
    return ids


def _kind(ref: str) -> tuple[str, str]:
    try:
        return parse_ref(ref)
    except ValueError:
        return "unknown", ref


def _identity(slug: str, key: str, data: Any, regs: Mapping[str, Regularity]) -> dict[str, Any]:
    """A stored identity ``[episode, intent, [regularity ids]]`` with the ids linked."""
    episode, intent, ids = data
    return {
        "episode": episode,
        "intent": intent,
        "regularities": [_reg_link(slug, key, rid, regs) for rid in ids],
    }


# --- Pages -------------------------------------------------------------------------------------


def _pager(
    request: HttpRequest, rows: Any, per_page: int, number: int | str | None
) -> dict[str, Any]:
    """A page of ``rows`` and the query string of the other filters, for the pager's links."""
    page = Paginator(rows, per_page).get_page(number or 1)
    query = request.GET.copy()
    query.pop("page", None)
    return {"page": page, "query": query.urlencode()}


@login_required
def entity_memory(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    membership, entity = entity_or_404(request, slug, key)
    states = list(STATE_RANK)
    form = RegularityFilterForm(request.GET, states=states)
    form.is_valid()  # what is invalid is reported; the valid filters still apply
    data = form.cleaned_data
    summary = memory_summary(entity)
    rows = regularities_for(
        entity,
        data.get("state") or None,
        query=data.get("q") or "",
        order=data.get("sort") or "rank",
        live=True,
    )
    context = {
        "team": membership.team,
        "entity": entity,
        "summary": summary,
        "by_state": [(s, summary["regularities"].get(s, 0)) for s in states],
        "form": form,
        "memory_url": reverse("dashboard:memory", args=[slug, key]),
        "state": data.get("state") or "",
        **_pager(request, rows, REGULARITIES_PER_PAGE, data.get("page")),
        "days": trajectories_for(entity).order_by("-day")[:DAYS_SHOWN],
        "days_shown": DAYS_SHOWN,
        "decisions": decisions_for(entity).order_by("-occurred_at", "-id")[:DECISIONS_SHOWN],
        "decisions_shown": DECISIONS_SHOWN,
        "partial": "regularities",
    }
    return render_local(request, "dashboard/memory.html", context, entity)


@login_required
def memory_decisions(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    membership, entity = entity_or_404(request, slug, key)
    form = DecisionFilterForm(request.GET)
    form.is_valid()
    data = form.cleaned_data
    rows = decisions_for(
        entity,
        action=data.get("action") or None,
        since=data.get("since"),
        until=data.get("until"),
    ).order_by("-occurred_at", "-id")
    context = {
        "team": membership.team,
        "entity": entity,
        "form": form,
        "decisions_url": reverse("dashboard:memory_decisions", args=[slug, key]),
        **_pager(request, rows, DECISIONS_PER_PAGE, data.get("page")),
        "partial": "decisions",
    }
    return render_local(request, "dashboard/memory_decisions.html", context, entity)


@login_required
def memory_days(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    """Every closed day of the entity's memory, newest first, a page at a time."""
    membership, entity = entity_or_404(request, slug, key)
    page = request.GET.get("page")
    context = {
        "team": membership.team,
        "entity": entity,
        "days_url": reverse("dashboard:memory_days", args=[slug, key]),
        **_pager(request, trajectories_for(entity).order_by("-day"), DAYS_PER_PAGE, page),
        "partial": "days",
    }
    return render_local(request, "dashboard/memory_days.html", context, entity)


@login_required
def memory_day(request: HttpRequest, slug: str, key: str, day: date) -> HttpResponse:
    membership, entity = entity_or_404(request, slug, key)
    trajectory = trajectory_detail(entity, day)
    if trajectory is None:
        start, end = day_bounds(ZoneInfo(entity.timezone), day)
        if not events_for_entity(entity=entity, start=start, end=end).exists():
            raise Http404(
                f"{dateformat.format(day, 'l j F Y')} has no events, so memory has no"
                " trajectory for it. The memory page lists the closed days."
            )
        raise Http404(not_closed_words(entity, day))
    segments = list(trajectory.segments.all())
    cited = {s.pk: _segment_ids(s) for s in segments}
    stored = stored_event_ids(entity=entity, ids=sorted({i for ids in cited.values() for i in ids}))
    # Events are shown inline only on a quiet day, and only for segments citing a few; a busy
    # desktop day cites thousands, which made its page a megabyte and 70,000 px tall. The
    # rest are cited as id runs and open on demand (in place with htmx, or their own page).
    quiet = len(stored) <= DAY_EVENTS_INLINE
    fold = {s.pk for s in segments if not quiet or len(cited[s.pk]) > EVENTS_OPEN}
    inline = sorted({i for s in segments if s.pk not in fold for i in cited[s.pk]})
    events = {e.pk: e for e in evidence_events(entity=entity, ids=inline)}
    rows = []
    for s in segments:
        facts = list(s.facts.all())
        ids = cited[s.pk]
        folded = s.pk in fold
        events_url = reverse("dashboard:memory_segment", args=[slug, key, day, s.index])
        anchor = f"s{s.index}-"
        frame = (
            reverse("dashboard:frame", args=[slug, key, s.source])
            if entity.scope == Entity.Scope.DESKTOP and s.source and s.source != LLM_SOURCE
            else None
        )
        rows.append(
            {
                "segment": s,
                "frame_href": frame,
                "anchor": anchor,
                "facts": [
                    {
                        "fact": f,
                        "path": ".".join(str(p) for p in f.path),
                        "value": compact(f.value),
                        "grounded": f.grounded_event_id if f.grounded_event_id in stored else None,
                        "grounded_href": _grounded_href(
                            events_url if folded else "", ids, f.grounded_event_id, anchor
                        ),
                        "grounded_path": ".".join(str(p) for p in f.grounded_path or ()),
                    }
                    for f in facts
                ],
                "cited_count": len([i for i in ids if i in stored]),
                "cited_runs": runs([i for i in ids if i in stored]),
                "events": (
                    []
                    if folded
                    else [
                        event_row(e)
                        for e in sorted(
                            (events[i] for i in ids if i in events),
                            key=lambda e: (e.occurred_at, e.pk),
                        )
                    ]
                ),
                "folded": folded,
                "events_url": events_url,
                "unresolved": [i for i in s.cited_ids if i not in stored],
            }
        )
    days = trajectories_for(entity).values_list("day", flat=True)
    context = {
        "team": membership.team,
        "entity": entity,
        "day": day,
        "trajectory": trajectory,
        "segments": rows,
        "before": days.filter(day__lt=day).order_by("-day").first(),
        "after": days.filter(day__gt=day).order_by("day").first(),
        "segment_page": SEGMENT_EVENTS_PER_PAGE,
        # A busy day's accepted segments open one at a time: 160 of them made the page
        # tens of thousands of pixels tall. Rejected ones, what an auditor looks for, stay open.
        "fold_segments": len(segments) > SEGMENTS_OPEN,
    }
    return render_local(request, "dashboard/memory_day.html", context, entity)


def observed_day(
    request: HttpRequest, membership: Membership, entity: Entity, day: date
) -> HttpResponse:
    """A day of a home, sports or code entity: its events, its decisions and its memory.

    These scopes have no compiled document; their day is the events as the engine reads
    them, closed into a trajectory once the day is over (ARCHITECTURE.md "How data flows", 3).
    """
    slug, key = membership.team.slug, entity.key
    start, end = day_bounds(ZoneInfo(entity.timezone), day)
    events = events_for_entity(entity=entity, start=start, end=end)
    decisions = decisions_for(entity, since=day, until=day)
    trajectory = trajectories_for(entity).filter(day=day).first()
    # Counted from the events, not the per-day summary rows, which a task refreshes later.
    total = events.count()
    if not total and trajectory is None and not decisions.exists():
        raise Http404(
            f"{dateformat.format(day, 'l j F Y')} has no events for {key}. The calendar"
            " shows the days that have some."
        )
    # get_page reads the raw parameter: a bad or out-of-range one shows the nearest page.
    pager = _pager(request, events, EVENTS_PER_PAGE, request.GET.get("page"))
    before, after = captured_neighbours(entity=entity, day=day)
    context = {
        "team": membership.team,
        "entity": entity,
        "day": day,
        "trajectory": trajectory,
        "not_closed": None if trajectory else not_closed_words(entity, day),
        "event_total": total,
        "events": [event_row(e) for e in pager["page"]],
        "page": pager["page"],
        "query": pager["query"],
        "day_url": reverse("dashboard:day", args=[slug, key, day]),
        "decision_total": decisions.count(),
        "interventions": list(decisions.filter(action=Decision.Action.INTERVENE)),
        "decisions_url": (
            reverse("dashboard:memory_decisions", args=[slug, key])
            + f"?since={day.isoformat()}&until={day.isoformat()}"
        ),
        "before": before,
        "after": after,
        "partial": "events",
    }
    return render_local(request, "dashboard/day_observed.html", context, entity)


def _grounded_href(events_url: str, ids: list[int], event_id: int | None, anchor: str) -> str:
    """Where a fact's grounding event is shown: on this page, or on the page of its segment's
    events that holds it (``ids`` in the order that page lists them)."""
    if not events_url or event_id not in ids:
        return f"#{anchor}event-{event_id}"
    page = ids.index(event_id) // SEGMENT_EVENTS_PER_PAGE + 1
    query = f"?page={page}" if page > 1 else ""
    return f"{events_url}{query}#{anchor}event-{event_id}"


def _segment_ids(segment: Segment) -> list[int]:
    """The events a segment shows: its citations and the events its facts are grounded in."""
    return sorted(
        {c.event_id for c in segment.citations.all()}
        | {f.grounded_event_id for f in segment.facts.all() if f.grounded_event_id}
    )


@login_required
def memory_segment(
    request: HttpRequest, slug: str, key: str, day: date, index: int
) -> HttpResponse:
    """The events one segment of a closed day cites, a page at a time; htmx asks for the
    list alone, to open it in place on the day's page."""
    membership, entity = entity_or_404(request, slug, key)
    segment = segment_detail(entity=entity, day=day, index=index)
    if segment is None:
        raise Http404(
            f"{dateformat.format(day, 'l j F Y')} has no segment #{index} in memory. The"
            " day's page lists its segments."
        )
    ids = _segment_ids(segment)
    page = Paginator(ids, SEGMENT_EVENTS_PER_PAGE).get_page(request.GET.get("page"))
    shown = evidence_events(entity=entity, ids=list(page))
    url = reverse("dashboard:memory_segment", args=[slug, key, day, index])
    context = {
        "team": membership.team,
        "entity": entity,
        "day": day,
        "segment": segment,
        "events": [event_row(e) for e in shown],
        "anchor": f"s{index}-",
        "page": page,
        "query": "",
        "url": url,
        "partial": "events",
    }
    return render_local(request, "dashboard/memory_segment.html", context, entity)


@login_required
def memory_regularity(request: HttpRequest, slug: str, key: str, rid: str) -> HttpResponse:
    membership, entity = entity_or_404(request, slug, key)
    regularity = regularity_detail(entity, rid)
    if regularity is None:
        raise Http404("No such regularity for this entity.")
    assessments = list(regularity.assessments.all())
    transitions = list(regularity.transitions.all())
    refs = [
        *regularity.violation_facts,
        *(r for a in assessments for r in a.fact_refs),
        *(r for t in transitions for r in t.fact_refs),
    ]
    facts = facts_by_ref(entity, refs)
    closed = closed_days(entity)
    hrefs = {a.day: _day_url(slug, key, a.day) for a in assessments if a.day in closed}
    counts = Counter(a.outcome for a in assessments)
    contrast = regularity.observable - regularity.n_f - regularity.n_v
    context = {
        "team": membership.team,
        "entity": entity,
        "regularity": regularity,
        "proposal": compact(regularity.proposal),
        "triggered": regularity.n_f + regularity.n_v,
        "contrast": contrast,
        "untriggered_rate": regularity.untriggered_behavior / contrast if contrast else 0.0,
        "rules": {
            "min_fulfilled": rules.MIN_FULFILLED,
            "min_contrast": rules.MIN_CONTRAST,
            "min_lift": rules.MIN_LIFT,
            "habit_percent": round(rules.HABIT_SHARE * 100),
        },
        "calendar": outcome_calendar([(a.day, a.outcome) for a in assessments], hrefs),
        "legend": [
            {"outcome": o, "colour": c, "words": OUTCOME_WORDS[o], "count": counts[o]}
            for o, c in OUTCOME_COLOURS.items()
        ],
        "assessments": [
            {
                "assessment": a,
                "href": hrefs.get(a.day),
                "colour": OUTCOME_COLOURS.get(a.outcome, "#ffffff"),
                "facts": [_fact_link(slug, key, r, facts, closed) for r in a.fact_refs],
            }
            for a in assessments
        ],
        "transitions": [
            {
                "transition": t,
                "href": _day_url(slug, key, t.day) if t.day in closed else None,
                "facts": [_fact_link(slug, key, r, facts, closed) for r in t.fact_refs],
            }
            for t in transitions
        ],
        "violation_facts": [
            _fact_link(slug, key, r, facts, closed) for r in regularity.violation_facts
        ],
    }
    return render_local(request, "dashboard/memory_regularity.html", context, entity)


@login_required
def memory_decision(request: HttpRequest, slug: str, key: str, pk: int) -> HttpResponse:
    membership, entity = entity_or_404(request, slug, key)
    decision = decision_detail(entity, pk)
    if decision is None:
        raise Http404("No such decision for this entity.")
    retrieved = [r for r in decision.retrieved if isinstance(r, dict)]
    instead_of = decision.instead_of if isinstance(decision.instead_of, dict) else None
    identities = [
        decision.identity,
        *([decision.suppressed_by] if decision.suppressed_by else []),
        *([instead_of["identity"]] if instead_of and instead_of.get("identity") else []),
    ]
    rids = [
        *decision.evidence,
        *decision.regularity_ids,
        *(r.get("id", "") for r in retrieved),
        *(rid for ident in identities for rid in ident[2]),
    ]
    regs = regularities_by_rid(entity, rids)
    fact_refs = [*decision.evidence, *(f for r in retrieved for f in r.get("facts", []))]
    facts = facts_by_ref(entity, fact_refs)
    closed = closed_days(entity)
    spoken = said_of(entity)
    events = {e.pk: e for e in evidence_events(entity=entity, ids=_event_ids(decision.evidence))}
    seen = {
        f["ref"]: {
            "path": ".".join(str(p) for p in f.get("path", [])),
            "value": compact(f.get("value")),
            "at": f.get("at", ""),
        }
        for f in decision.facts_seen
        if isinstance(f, dict) and "ref" in f
    }
    point_ids = [
        int(r[6:]) for r in decision.evidence if r.startswith("point:") and r[6:].isdigit()
    ]
    points = {p.pk: p for p in DecisionPoint.objects.filter(entity=entity, pk__in=point_ids)}
    evidence = []
    for ref in decision.evidence:
        kind, rest = _kind(ref)
        item: dict[str, Any] = {"ref": ref, "kind": kind, "href": None}
        if kind == "event":
            found = events.get(int(rest)) if rest.isdigit() else None
            item["event"] = [event_row(found)] if found else None
        elif kind == "fact":
            item.update(_fact_link(slug, key, ref, facts, closed))
            item["seen"] = seen.get(ref)
        elif kind == "reg":
            item.update(_reg_link(slug, key, ref, regs))
        elif kind == "point":
            found_point = points.get(int(rest)) if rest.isdigit() else None
            item["point"] = found_point
            item["words"] = describe(found_point.public, spoken) if found_point is not None else ""
        evidence.append(item)
    signature = decision.signature or {}
    context = {
        "team": membership.team,
        "entity": entity,
        "decision": decision,
        "event": [event_row(decision.event)] if decision.event is not None else [],
        "point": decision.point,
        "point_words": (
            describe(decision.point.public, spoken) if decision.point is not None else ""
        ),
        "evidence": evidence,
        "retrieved": [
            {
                **r,
                "link": _reg_link(slug, key, r.get("id", ""), regs),
                "fact_links": [_fact_link(slug, key, f, facts, closed) for f in r.get("facts", [])],
            }
            for r in retrieved
        ],
        "identity": _identity(slug, key, decision.identity, regs),
        "suppressed_by": (
            _identity(slug, key, decision.suppressed_by, regs) if decision.suppressed_by else None
        ),
        "allowed": allowed_decision_for(entity, decision) if decision.suppressed else None,
        "instead_of": (
            {
                "intent": instead_of.get("intent", ""),
                "message": instead_of.get("message", ""),
                "identity": (
                    _identity(slug, key, instead_of["identity"], regs)
                    if instead_of.get("identity")
                    else None
                ),
                "allowed": (
                    allowed_decision_for(entity, decision, str(instead_of["identity_key"]))
                    if instead_of.get("identity_key")
                    else None
                ),
            }
            if instead_of
            else None
        ),
        "signature": signature,
        "signature_fields": [
            (name.replace("_", " "), said(value)) for name, value in signature.get("fields", [])
        ],
        "day_href": (_day_url(slug, key, decision.day) if decision.day in closed else None),
    }
    return render_local(request, "dashboard/memory_decision.html", context, entity)
