"""Team-scoped reads of the workbench, with its blindness rules in one place.

Blind (ProactMem §4.2, independent labelling): an annotator reads only their own labels,
episodes and flags, and of a stream only what came at or before the point they label — its
events without private fields, never a decision point's ground truth, never a system output
(decisions, memory) and never another person's label. Reviewers read the sampled label they
review; adjudicators and owners read every submitted label; viewers read final labels and
agreement.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest, StreamingHttpResponse

from aframes_web.annotation.agreement import Report, category, report
from aframes_web.annotation.models import (
    Assignment,
    Episode,
    Label,
    LabelProject,
    Review,
    Task,
    Verdict,
)
from aframes_web.proactivestream.services import RunConfigError
from aframes_web.streaming import streamed
from aframes_web.streams.models import Event
from aframes_web.teams.models import Membership, Role, Team
from benchmark.labelers.base import Label as ReferenceLabel
from benchmark.reference import LabelKey

HISTORY_PAGE = 50


def acting_annotator(principal: Any) -> Any:
    """The person a label request acts for (the signed-in user, or the member a token was
    created for), who must be an annotator of the team; PermissionError says why not. REST
    and MCP both ask this."""
    user = principal.user
    if principal.token is not None:
        user = principal.token.created_by
        if user is None:
            raise PermissionError(
                f"{principal.label} acts for nobody: create a label token for the annotator "
                "with `manage.py create_token TEAM NAME --scopes read,label --user USERNAME`."
            )
    if role_in(principal.team, user) != Role.ANNOTATOR:
        raise PermissionError(
            f"{user} is not an annotator of team {principal.team.slug}; only annotators label."
        )
    return user


def projects_for_team(*, team: Team) -> QuerySet[LabelProject]:
    return LabelProject.objects.filter(team=team).order_by("-created_at", "-id")


def project_get(*, team: Team, pk: int) -> LabelProject | None:
    return LabelProject.objects.filter(team=team, pk=pk).first()


# --- the annotator's queue -------------------------------------------------------------------


def assignment_for(task: Task, user: Any) -> Assignment | None:
    return Assignment.objects.filter(stream_id=task.stream_id, annotator=user).first()


def assignments_of(project: LabelProject, user: Any) -> QuerySet[Assignment]:
    return (
        Assignment.objects.filter(stream__project=project, annotator=user)
        .select_related("stream__entity")
        .order_by("stream__position", "stream_id")
    )


def next_task(place: Assignment) -> Task | None:
    """The first point of the place's stream that it has not labelled (a stream in order)."""
    done = Label.objects.filter(place=place, task=OuterRef("pk"), submitted_at__isnull=False)
    return (
        Task.objects.filter(stream_id=place.stream_id)
        .filter(~Exists(done))
        .order_by("seq")
        .select_related("point", "stream__entity", "project")
        .first()
    )


def current_task(project: LabelProject, user: Any) -> Task | None:
    """Where the annotator resumes: the first unlabelled point of their first unfinished
    stream, in queue order."""
    for place in assignments_of(project, user):
        found = next_task(place)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class Progress:
    done: int
    total: int

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 100


def progress_of(project: LabelProject, user: Any) -> Progress:
    places = list(assignments_of(project, user))
    total = sum(p.stream.points for p in places)
    done = Label.objects.filter(place__in=places, submitted_at__isnull=False).count()
    return Progress(done, total)


def task_for_annotator(project: LabelProject, user: Any, pk: int) -> Task | None:
    """A point of the annotator's own queue that they have reached: one they labelled, or the
    first they have not. A point further on is None, like any other (it would show the stream
    past the point they are on)."""
    found = (
        Task.objects.filter(project=project, pk=pk, stream__assignments__annotator=user)
        .select_related("point", "stream__entity", "project")
        .first()
    )
    if found is None or found.seq == 1:
        return found
    # A place's submitted labels are always a prefix of its stream (label_submit refuses a
    # point ahead of the queue), so a point is reached when the one before it is labelled:
    # two indexed lookups instead of finding the first unlabelled point of a long stream.
    before = Label.objects.filter(
        place__stream_id=found.stream_id,
        place__annotator=user,
        task__stream_id=found.stream_id,
        task__seq=found.seq - 1,
        submitted_at__isnull=False,
    )
    return found if before.exists() else None


def _open_places(user: Any) -> QuerySet[Assignment]:
    """The places ``user`` holds that still have points they have not labelled."""
    submitted = Label.objects.filter(
        task_id=OuterRef("pk"), annotator=user, submitted_at__isnull=False
    )
    unlabelled = Task.objects.filter(stream_id=OuterRef("stream_id")).filter(~Exists(submitted))
    return Assignment.objects.filter(annotator=user).filter(Exists(unlabelled))


def labelling_blind(user: Any, entity_id: int | None = None) -> LabelProject | None:
    """The project in which ``user`` labels ``entity_id``'s stream (any stream when None) and has
    points left to label, if any. While one is open, the stream is shown to them only in the
    workbench, up to the point they label (ARCHITECTURE.md, "How data flows", step 5: blind
    annotators never see what came after a point, nor any method's output)."""
    if user is None or getattr(user, "pk", None) is None:
        return None
    places = _open_places(user)
    if entity_id is not None:
        places = places.filter(stream__entity_id=entity_id)
    found = places.select_related("stream__project").first()
    return found.stream.project if found is not None else None


def blind_entities(user: Any) -> set[int]:
    """The entities ``user`` labels blind with points left: left out of every list they read
    (a list shows each entity's last activity, a time after the point they are on)."""
    if user is None or getattr(user, "pk", None) is None:
        return set()
    return set(_open_places(user).values_list("stream__entity_id", flat=True))


def blind_refusal(user: Any, entity: Any) -> str | None:
    """What a person labelling ``entity`` blind is told when they ask for it outside the
    workbench; None when they may read it."""
    project = labelling_blind(user, entity.pk)
    if project is None:
        return None
    return (
        f"You are labelling {entity.key!r} blind in project {project.name!r}: until you have "
        "labelled every point of it, its events, memory and decisions are shown to you only "
        "in the workbench, up to the point you are labelling."
    )


def runs_refusal(user: Any) -> str | None:
    """What a person labelling blind is told when they ask for benchmark runs (they hold the
    methods' decisions); None when they may read them."""
    project = labelling_blind(user)
    if project is None:
        return None
    return (
        f"You are labelling blind in project {project.name!r}: benchmark runs show the "
        "methods' decisions, so they are hidden from you until you have labelled every point."
    )


def known_at(task: Task) -> QuerySet[Event]:
    """The stream's events available at the point: none after it. A point that is a native
    event (code) comes right before its own event. Every page and answer an annotator reaches
    reads the stream through this."""
    point = task.point
    found = Event.objects.filter(entity_id=task.stream.entity_id)
    if point.event_id is not None:
        own = Event.objects.filter(pk=point.event_id).values_list("occurred_at", flat=True).first()
        moment = own or point.at
        return found.filter(
            Q(occurred_at__lt=moment) | Q(occurred_at=moment, id__lt=point.event_id)
        )
    return found.filter(occurred_at__lte=point.at)


def history(task: Task, page: int = 1) -> tuple[list[Event], bool]:
    """The stream's events available at the point, newest first, one page, and whether older
    ones remain."""
    found = known_at(task)
    start = (max(1, page) - 1) * HISTORY_PAGE
    rows = list(found.order_by("-occurred_at", "-id")[start : start + HISTORY_PAGE + 1])
    return rows[:HISTORY_PAGE], len(rows) > HISTORY_PAGE


def own_label(task: Task, user: Any) -> Label | None:
    return Label.objects.filter(task=task, annotator=user).select_related("episode").first()


def own_episodes(task: Task, user: Any) -> list[dict[str, Any]]:
    """The annotator's episodes in this stream, with where each was last served before the
    point (what the episode rule needs)."""
    served = (
        Label.objects.filter(
            episode=OuterRef("pk"), decision="intervene", submitted_at__isnull=False
        )
        .order_by("-task__seq")
        .values("task__seq")[:1]
    )
    rows = (
        Episode.objects.filter(stream_id=task.stream_id, annotator=user)
        .annotate(labels_n=Count("labels", filter=Q(labels__submitted_at__isnull=False)))
        .order_by("created_at", "id")
    )
    rows = rows.annotate(last_served=Subquery(served))
    return [
        {"id": e.pk, "name": e.name, "labels": e.labels_n, "last_served": e.last_served}
        for e in rows
    ]


def previous_episode(task: Task, user: Any) -> Episode | None:
    """The episode the annotator's submitted label of the previous point names: what "same
    episode as the previous point" stands for, in the form and in the label; None when
    there is none."""
    found = (
        Label.objects.filter(
            task__stream_id=task.stream_id,
            task__seq=task.seq - 1,
            annotator=user,
            submitted_at__isnull=False,
            episode__isnull=False,
        )
        .select_related("episode")
        .first()
    )
    return found.episode if found is not None else None


def served_points(task: Task) -> list[tuple[int, str]]:
    """This point and the earlier points of its stream that someone labelled intervene, as
    (task id, words) choices for an adjudicator's "episode ended here", latest first."""
    rows = (
        Task.objects.filter(
            stream_id=task.stream_id,
            seq__lte=task.seq,
            labels__decision="intervene",
            labels__submitted_at__isnull=False,
        )
        .distinct()
        .order_by("-seq")
        .select_related("final")
    )
    choices = []
    for row in rows[:50]:
        final = row.final
        if final is None or not final.decision:
            said = "not final yet"
        else:
            said = " ".join(w for w in (final.decision, final.service) if w)
            said += f", episode “{final.episode}”" if final.episode else ""
        choices.append((row.pk, f"point {row.seq}: {said}"))
    return choices


def own_flags(project: LabelProject, user: Any) -> QuerySet[Review]:
    """Reviewers' flags on the annotator's own labels (comments included, reviewers named)."""
    return (
        Review.objects.filter(
            label__task__project=project, label__annotator=user, verdict=Review.Verdict.FLAG
        )
        .select_related("label__task__stream__entity", "reviewer")
        .order_by("-created_at", "-id")
    )


# --- who may see what ------------------------------------------------------------------------


def sees_labels(role: str | None) -> bool:
    """Every submitted label of a project: adjudicators and owners."""
    return role in (Role.OWNER, Role.ADJUDICATOR)


def may_review(label: Label, user: Any) -> bool:
    """A sampled, submitted label of someone else, by an adjudicator or owner, or by an
    annotator who does not label that stream (so nobody sees labels of points still ahead)."""
    if label.submitted_at is None or label.annotator_id == user.pk or not label.sampled:
        return False
    task = label.task
    role = role_in(task.project.team, user)
    if sees_labels(role):
        return True
    if role != Role.ANNOTATOR:
        return False
    return not Assignment.objects.filter(stream_id=task.stream_id, annotator=user).exists()


def review_queue(project: LabelProject, user: Any) -> QuerySet[Label]:
    """Sampled submitted labels this user may review and nobody has reviewed yet."""
    found = Label.objects.filter(
        task__project=project, submitted_at__isnull=False, sampled=True
    ).exclude(annotator=user)
    if not sees_labels(role_in(project.team, user)):
        mine = Assignment.objects.filter(stream__project=project, annotator=user)
        found = found.exclude(task__stream__in=mine.values("stream"))
    return (
        found.filter(~Exists(Review.objects.filter(label=OuterRef("pk"))))
        .select_related("task__stream__entity", "task__point", "episode", "annotator")
        .order_by("task__stream__position", "task__seq", "id")
    )


def submitted_labels(task: Task) -> list[Label]:
    """Every submitted label of a point, for adjudicators and owners only (callers check)."""
    return list(
        Label.objects.filter(task=task, submitted_at__isnull=False)
        .select_related("annotator", "episode")
        .prefetch_related("reviews__reviewer")
        .order_by("submitted_at", "id")
    )


def adjudication_queue(project: LabelProject) -> QuerySet[Task]:
    """Points with all their labels in and no final label: they disagree, were flagged or
    were reopened (agreeing unflagged ones finalise on their own)."""
    return (
        Task.objects.filter(
            project=project, final__isnull=True, submitted__gte=project.labels_per_point
        )
        .select_related("stream__entity", "point")
        .order_by("stream__position", "seq")
    )


def verdicts_of(task: Task) -> QuerySet[Verdict]:
    return Verdict.objects.filter(task=task).select_related("by").order_by("at", "id")


def project_counts(project: LabelProject) -> dict[str, int]:
    tasks = Task.objects.filter(project=project)
    need = project.labels_per_point
    return {
        "points": tasks.count(),
        "complete": tasks.filter(submitted__gte=need).count(),
        "final": tasks.filter(final__isnull=False).count(),
        "waiting": tasks.filter(final__isnull=True, submitted__gte=need).count(),
        "flagged": tasks.filter(flagged=True).count(),
        "labels": Label.objects.filter(task__project=project, submitted_at__isnull=False).count(),
    }


# --- agreement, export, scoring ----------------------------------------------------------------


def agreement(project: LabelProject) -> Report:
    """Agreement of the submitted labels (before adjudication), per project and stream."""
    rows = Label.objects.filter(task__project=project, submitted_at__isnull=False).values_list(
        "task_id", "task__stream__entity__key", "annotator__username", "decision", "service"
    )
    triples = []
    stream_of = {}
    for task, stream, who, decision, service in rows.iterator(chunk_size=5000):
        triples.append((task, who, category(decision, service)))
        stream_of[task] = stream
    finals = {
        task: category(decision, service)
        for task, decision, service in Task.objects.filter(
            project=project, final__isnull=False
        ).values_list("pk", "final__decision", "final__service")
    }
    return report(triples, complement=project.labels_per_point, stream_of=stream_of, finals=finals)


def final_rows(project: LabelProject) -> Iterator[dict[str, Any]]:
    """One record per point with a final label, in stream and time order, with provenance:
    who labelled it and when, and who settled it (nobody: the labels agreed).

    An intervention is timely for the project's span after its point (``valid_until``), or
    an imported label's own; an episode whose final label says it ended at a later point
    ("episode ended here") is timely only until that point, so the benchmark's matching rule
    (``benchmark/metrics.py``) no longer credits an intervention after the opportunity
    stopped holding. The ending point is named in the provenance (``ended_at``)."""
    tasks = (
        Task.objects.filter(project=project, final__isnull=False)
        .select_related("stream__entity", "point", "final__by")
        .order_by("stream__position", "seq")
    )
    ended: dict[int, tuple[datetime, str]] = {}  # task id -> when and where it ended
    for began, at, key in (
        Task.objects.filter(project=project, final__ends__isnull=False)
        .order_by("seq")
        .values_list("final__ends_id", "at", "point__key")
    ):
        ended.setdefault(began, (at, key))
    labelled: dict[int, list[tuple[str, str]]] = {}
    for task_id, who, when in (
        Label.objects.filter(task__project=project, submitted_at__isnull=False)
        .order_by("submitted_at", "id")
        .values_list("task_id", "annotator__username", "submitted_at")
        .iterator(chunk_size=5000)
    ):
        labelled.setdefault(task_id, []).append((who, when.isoformat()))
    for task in tasks.iterator(chunk_size=2000):
        final = task.final
        assert final is not None
        intervene = final.decision == "intervene"
        provenance: dict[str, Any] = {
            "project": project.pk,
            "annotators": [who for who, _ in labelled.get(task.pk, [])],
            "labelled_at": [when for _, when in labelled.get(task.pk, [])],
            "final": final.kind,
            "adjudicator": final.by.get_username() if final.by else None,
            "decided_at": final.at.isoformat(),
        }
        if final.note:
            provenance["note"] = final.note
        if final.kind == Verdict.Kind.IMPORTED:
            provenance["imported"] = final.provenance
        until = final.valid_until or valid_until(project, task.at)
        if task.pk in ended:
            provenance["ended_at"] = ended[task.pk][1]
            until = min(until, ended[task.pk][0])
        yield {
            "entity": task.stream.entity.key,
            "point": task.point.key,
            "at": task.at.isoformat(),
            "label": final.decision,
            "service": final.service if intervene else None,
            "episode": final.episode or None,
            "valid_until": until.isoformat() if intervene else None,
            "provenance": provenance,
        }


def export_jsonl(project: LabelProject) -> Iterator[str]:
    for row in final_rows(project):
        yield json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"


CSV_COLUMNS = (
    "entity",
    "point",
    "at",
    "label",
    "service",
    "episode",
    "valid_until",
    "annotators",
    "adjudicator",
    "final",
    "decided_at",
)


def export_csv(project: LabelProject) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for row in final_rows(project):
        p = row["provenance"]
        writer.writerow(
            [
                row["entity"],
                row["point"],
                row["at"],
                row["label"],
                row["service"] or "",
                row["episode"] or "",
                row["valid_until"] or "",
                " ".join(p["annotators"]),
                p["adjudicator"] or "",
                p["final"],
                p["decided_at"],
            ]
        )
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.getvalue():
        yield buffer.getvalue()


EXPORTS = {"jsonl": "application/jsonl; charset=utf-8", "csv": "text/csv; charset=utf-8"}


def export_response(request: HttpRequest, project: LabelProject, fmt: str) -> StreamingHttpResponse:
    """The final labels as a download, ``fmt`` one of :data:`EXPORTS`."""
    body = export_jsonl(project) if fmt == "jsonl" else export_csv(project)
    response = streamed(request, body, content_type=EXPORTS[fmt])
    response["Content-Disposition"] = f'attachment; filename="labels-{project.pk}.{fmt}"'
    return response


def reference_labels(project: LabelProject) -> dict[LabelKey, ReferenceLabel]:
    """The project's final labels as the benchmark scores against them
    (``proactivestream run --labels project:ID``); points without one are not scored."""
    source = f"project:{project.pk}"
    found = {}
    for row in final_rows(project):
        until = row["valid_until"]
        found[(row["entity"], row["point"])] = ReferenceLabel(
            row["point"],
            row["label"],
            row["service"],
            row["episode"],
            None,
            json.dumps(row["provenance"], sort_keys=True),
            source,
            datetime.fromisoformat(until) if until else None,
        )
    return found


def run_labels(team: Team, labels: str) -> dict[LabelKey, ReferenceLabel]:
    """The final labels of the labelling project ``project:ID`` names, as a benchmark run scores
    against them; RunConfigError says what is missing."""
    raw = labels.removeprefix("project:")
    found = project_get(team=team, pk=int(raw)) if raw.isdigit() else None
    if found is None:
        raise RunConfigError(f"labels {labels!r}: team {team.slug} has no labelling project {raw}")
    if not Task.objects.filter(project=found, final__isnull=False).exists():
        raise RunConfigError(
            f"labelling project {found.pk} ({found.name}) has no final labels yet: adjudicate "
            "or wait for agreeing labels first"
        )
    return reference_labels(found)


def role_in(team: Team, user: AbstractBaseUser) -> str | None:
    found = Membership.objects.filter(team=team, user=user).values_list("role", flat=True).first()
    return found


def annotators_of(team: Team) -> list[AbstractBaseUser]:
    members = Membership.objects.filter(team=team, role=Role.ANNOTATOR).select_related("user")
    return sorted((m.user for m in members), key=lambda u: u.get_username())


def valid_until(project: LabelProject, at: datetime) -> datetime:
    return at + timedelta(minutes=project.timely_minutes)
