"""Writes of the annotation workbench: projects, assignment, labels, reviews, adjudication,
import (ProactMem §4.2: triage, independent labels with the complete prior history,
cross-review, adjudication).

Every rule a person meets is enforced here, not in a view, so the dashboard, the REST API and
the commands behave alike; a refused write raises :class:`WorkbenchError` with a sentence that
says what to do instead, and changes nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from aframes_web.annotation.agreement import category
from aframes_web.annotation.errors import WorkbenchError
from aframes_web.annotation.models import (
    Assignment,
    Episode,
    Label,
    LabelProject,
    ProjectStream,
    Review,
    Task,
    Verdict,
)
from aframes_web.annotation.selectors import (
    annotators_of,
    assignment_for,
    may_review,
    next_task,
    previous_episode,
    role_in,
)
from aframes_web.annotation.triage import screen_stream
from aframes_web.proactivestream.models import DecisionPoint
from aframes_web.proactivestream.selectors import stream_of
from aframes_web.proactivestream.services import points_build
from aframes_web.streams.models import Entity
from aframes_web.teams.models import Role, Team
from benchmark.agreement import study_sample
from benchmark.labelers import code, desktop, home, sports
from benchmark.labelers.base import label_stream
from benchmark.labelers.numbers import check_numbers, numbers_for
from benchmark.labelers.registry import reference_labeler
from benchmark.reference import LabelFileError, parse_labels
from benchmark.streams.catalogue import CATALOGUE, service_ids
from benchmark.streams.records import SCOPES
from memory import llm

MAX_LABELS_PER_POINT = 10
EPISODE_NAME_MAX = 120

# How long after its point an intervention still meets an opportunity, by default: the
# reference labelers' own spans (benchmark/labelers), so people's labels and the labelers'
# are scored by the same matching rule.
DEFAULT_TIMELY = {
    "home": home.TIMELY,
    "sports": sports.PACE_TIMELY,
    "code": code.WAITING_TIMELY,
    "desktop": desktop.TIMELY,
}

RULE = """\
## The labelling rule (ProactMem §4.2)

Label a decision point **intervene** when what has happened up to now — the current event or
the stream's history — supports a service opportunity that is

- **concrete**: you can say what the service would do and why now;
- **timely**: acting now still helps;
- **feasible** and **low-risk**: one of the services below can act on it without harm;
- **new**: no earlier point of this stream already served it.

Only the **first reliable actionable window** of an opportunity is *intervene*. Later windows
the same opportunity already covers are **abstain**, until the opportunity changes (say it
grows worse or needs another service) or reopens after it stopped holding: then tick
*reopens* and label it *intervene* again under the same episode.

An **episode** names the opportunity (create one the first time, reuse it after, or tick
*same episode as the previous point*). Every *intervene* names its episode and the service it
calls for; an *abstain* may name the episode that covers it. When the opportunity stops
holding (the door is closed, the routine has begun), tick *episode ended here* on that point:
an intervention after it is no longer timely. Write a rationale whenever the call is not
obvious.

You see the stream up to this point and never after it: judge with what was known then.
"""


def default_guidelines(scope: str) -> str:
    """The guidelines a new project starts with: the rule and the scope's services."""
    services = "\n".join(f"- `{s.id}`: {s.opportunity}" for s in CATALOGUE[scope])
    minutes = int(DEFAULT_TIMELY[scope].total_seconds() // 60)
    return (
        f"# Labelling {scope} streams\n\n{RULE}\n## The {scope} services\n\n{services}\n\n"
        f"An intervention is still timely up to {minutes} minutes after the point you label "
        "intervene; the benchmark matches a method's intervention within that span.\n"
    )


def numbers_set(*, project: LabelProject, given: Mapping[str, Any]) -> LabelProject:
    """Set the numbers of the project's service rules (``benchmark/labelers/numbers.py``); a
    service set to its default is dropped, so the project follows the labeler's number."""
    try:
        kept = check_numbers(project.scope, given)
    except ValueError as exc:
        raise WorkbenchError(str(exc)) from None
    defaults = {n["service"]: n["default"] for n in numbers_for(project.scope)}
    project.numbers = {s: v for s, v in kept.items() if v != defaults[s]}
    project.save(update_fields=["numbers"])
    return project


# --- roles -------------------------------------------------------------------------------


# --- projects and assignment ---------------------------------------------------------------


@dataclass(frozen=True)
class ProjectSpec:
    name: str
    scope: str
    entities: Sequence[str] = ()  # keys; all of the scope when empty
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    labels_per_point: int = 3
    guidelines: str = ""
    triage: str = LabelProject.Triage.NONE
    review_percent: int = 10
    timely_minutes: int | None = None
    # Only these points (entity key -> point keys), e.g. a validity study's sample; None: all
    # the points of the time range. An entity with none sampled is left out.
    points: Mapping[str, frozenset[str]] | None = None


def project_create(
    *, team: Team, spec: ProjectSpec, user: Any = None, build: bool = True
) -> LabelProject:
    """Create a project: its streams and their decision points in the time range, screened
    when it asks for triage, and every stream handed to ``labels_per_point`` annotators.

    With ``build`` each entity's decision points are (re)built from its events first
    (``points_build``, idempotent).
    """
    if spec.scope not in SCOPES:
        raise WorkbenchError(f"unknown scope {spec.scope!r}; use one of {', '.join(SCOPES)}")
    name = spec.name.strip()
    if not name:
        raise WorkbenchError("name the project")
    if LabelProject.objects.filter(team=team, name=name).exists():
        raise WorkbenchError(f"team {team.slug} already has a project named {name!r}")
    if not 1 <= spec.labels_per_point <= MAX_LABELS_PER_POINT:
        raise WorkbenchError(f"labels per point must be 1 to {MAX_LABELS_PER_POINT}")
    if not 0 <= spec.review_percent <= 100:
        raise WorkbenchError("the review sample is a percentage, 0 to 100")
    if spec.triage not in LabelProject.Triage.values:
        raise WorkbenchError(f"triage is one of {', '.join(LabelProject.Triage.values)}")
    if spec.starts_at and spec.ends_at and spec.starts_at >= spec.ends_at:
        raise WorkbenchError("the time range ends before it starts")
    entities = _entities(team, spec.scope, spec.entities)
    pool = annotators_of(team)
    if len(pool) < spec.labels_per_point:
        raise WorkbenchError(
            f"{spec.labels_per_point} independent labels per point need {spec.labels_per_point} "
            f"annotators; team {team.slug} has {len(pool)}. Add members with the annotator role "
            "or ask for fewer labels per point."
        )
    if spec.triage == LabelProject.Triage.LLM and not llm.configured():
        raise WorkbenchError("LLM triage needs LLM_BASE_URL and LLM_MODEL; choose rule or none")
    if build:
        for entity in entities:
            points_build(entity=entity)
    timely = spec.timely_minutes
    if timely is None:
        timely = int(DEFAULT_TIMELY[spec.scope].total_seconds() // 60)
    with transaction.atomic():
        project = LabelProject.objects.create(
            team=team,
            name=name,
            scope=spec.scope,
            guidelines=spec.guidelines.strip() or default_guidelines(spec.scope),
            labels_per_point=spec.labels_per_point,
            starts_at=spec.starts_at,
            ends_at=spec.ends_at,
            timely_minutes=timely,
            triage=spec.triage,
            review_percent=spec.review_percent,
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        for entity in entities:
            if spec.points is None:
                _add_stream(project, entity)
            elif spec.points.get(entity.key):
                _add_stream(project, entity, spec.points[entity.key])
        if not Task.objects.filter(project=project).exists():
            raise WorkbenchError(
                "no decision points fall in this time range for these streams; build them with "
                "`manage.py proactivestream build` or widen the range"
            )
        if spec.triage != LabelProject.Triage.NONE:
            _screen(project)
        _order_streams(project)
        assign(project, pool)
    return project


def _entities(team: Team, scope: str, keys: Sequence[str]) -> list[Entity]:
    found = Entity.objects.filter(team=team, scope=scope).order_by("key")
    if keys:
        chosen = list(found.filter(key__in=list(keys)))
        missing = sorted(set(keys) - {e.key for e in chosen})
        if missing:
            raise WorkbenchError(f"no {scope} entity {', '.join(missing)} in team {team.slug}")
        return chosen
    entities = list(found)
    if not entities:
        raise WorkbenchError(f"team {team.slug} has no {scope} entities to label")
    return entities


def _add_stream(project: LabelProject, entity: Entity, only: frozenset[str] | None = None) -> None:
    points = DecisionPoint.objects.filter(entity=entity)
    if only is not None:
        points = points.filter(key__in=sorted(only))
    if project.starts_at:
        points = points.filter(at__gte=project.starts_at)
    if project.ends_at:
        points = points.filter(at__lt=project.ends_at)
    rows = list(points.order_by("at", "key").values_list("pk", "at"))
    stream = ProjectStream.objects.create(project=project, entity=entity, points=len(rows))
    Task.objects.bulk_create(
        [
            Task(project=project, stream=stream, point_id=pk, seq=n, at=at)
            for n, (pk, at) in enumerate(rows, start=1)
        ],
        batch_size=5000,
    )


def _screen(project: LabelProject) -> None:
    """Mark each point the screener finds a likely opportunity (stored on the task, shown to
    owners and adjudicators as counts, never to annotators and never as a label)."""
    for stream in project.streams.select_related("entity"):
        marks = screen_stream(project, stream)
        tasks = list(Task.objects.filter(stream=stream).select_related("point"))
        for task in tasks:
            task.screened = marks.get(task.point.key, False)
        Task.objects.bulk_update(tasks, ["screened"], batch_size=5000)
        stream.screened = sum(1 for t in tasks if t.screened)
        stream.save(update_fields=["screened"])


def _order_streams(project: LabelProject) -> None:
    """Queue order: with triage, streams with the larger share of likely points first."""
    streams = list(project.streams.select_related("entity"))
    streams.sort(key=lambda s: (-(s.screened / s.points) if s.points else 0.0, s.entity.key))
    for n, stream in enumerate(streams, start=1):
        stream.position = n
    ProjectStream.objects.bulk_update(streams, ["position"])


def assign(project: LabelProject, pool: Sequence[AbstractBaseUser]) -> int:
    """Hand every stream short of annotators to the least-loaded ones (points already assigned
    in this project, then name), so each point gets its labels; returns assignments made."""
    load = {u.pk: 0 for u in pool}
    for annotator_id, points in Assignment.objects.filter(stream__project=project).values_list(
        "annotator_id", "stream__points"
    ):
        if annotator_id in load:
            load[annotator_id] += points
    names = {u.pk: u.get_username() for u in pool}
    made = 0
    for stream in project.streams.order_by("position", "id"):
        have = set(stream.assignments.values_list("annotator_id", flat=True))
        for _ in range(project.labels_per_point - len(have)):
            free = [pk for pk in load if pk not in have]
            if not free:
                break
            chosen = min(free, key=lambda pk: (load[pk], names[pk]))
            Assignment.objects.create(stream=stream, annotator_id=chosen)
            have.add(chosen)
            load[chosen] += stream.points
            made += 1
    return made


def reassign(*, stream: ProjectStream, annotator: Any, to: Any) -> Assignment:
    """Hand ``annotator``'s place on a stream to ``to`` (an annotator of the team not on it).

    The labels already submitted stay and count; ``to`` continues from the first point this
    place has not labelled. Drafts of the previous annotator are dropped.
    """
    team = stream.project.team
    if role_in(team, to) != Role.ANNOTATOR:
        raise WorkbenchError(f"{to.get_username()} is not an annotator of team {team.slug}")
    with transaction.atomic():
        place = Assignment.objects.select_for_update().filter(stream=stream, annotator=annotator)
        found = place.first()
        if found is None:
            raise WorkbenchError(f"{annotator.get_username()} is not assigned to this stream")
        if Assignment.objects.filter(stream=stream, annotator=to).exists():
            raise WorkbenchError(f"{to.get_username()} already labels this stream")
        Label.objects.filter(
            task__stream=stream, annotator=annotator, submitted_at__isnull=True
        ).delete()
        # The place's submitted labels keep their annotator; the new one's queue skips the
        # points the place already covered (selectors.next_task reads labels by place).
        found.annotator = to
        found.save(update_fields=["annotator"])
    return found


# --- labels --------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelInput:
    decision: str
    service: str = ""
    episode: int | None = None  # an existing episode of the annotator in this stream
    new_episode: str = ""  # or a new one's name
    reopens: bool = False
    rationale: str = ""
    # The episode the annotator's label of the previous point names, instead of choosing it.
    same_as_previous: bool = False
    # The episode's opportunity stopped holding here: its intervention is timely until now.
    ends_episode: bool = False


def draft_save(*, task: Task, user: Any, form: dict[str, Any]) -> Label:
    """Autosave what the annotator has entered so far (kept until the label is submitted)."""
    place = assignment_for(task, user)
    if place is None:
        raise WorkbenchError("this point is not in your queue")
    keep = {k: str(v)[:2000] for k, v in form.items() if k in DRAFT_FIELDS}
    label, _ = Label.objects.get_or_create(task=task, annotator=user, defaults={"place": place})
    label.draft = keep
    label.save(update_fields=["draft", "updated_at"])
    return label


DRAFT_FIELDS = (
    "decision",
    "service",
    "episode",
    "new_episode",
    "reopens",
    "rationale",
    "same_as_previous",
    "ends_episode",
)


def label_submit(*, task: Task, user: Any, given: LabelInput) -> Label:
    """Submit (or revise) the annotator's label of ``task`` under the episode rule.

    Refused: a point outside the annotator's queue or ahead of it (a stream is labelled in
    order), a point already final, an intervene without service or episode, a service of
    another scope, another annotator's or stream's episode, and a second intervene on an
    episode an earlier point already served unless it ``reopens``. ``same_as_previous`` names
    the episode of the annotator's label of the previous point; ``ends_episode`` says the
    episode's opportunity stopped holding here, and is refused for an episode no intervene
    served at or before this point.
    """
    project = task.project
    place = assignment_for(task, user)
    if place is None:
        raise WorkbenchError("this point is not in your queue")
    if given.decision not in ("intervene", "abstain"):
        raise WorkbenchError("choose intervene or abstain")
    service = given.service.strip()
    if given.decision == "intervene":
        if not service:
            raise WorkbenchError("an intervene label names the service it calls for")
        if service not in service_ids(project.scope):
            raise WorkbenchError(
                f"{service!r} is not a {project.scope} service; use one of "
                f"{', '.join(service_ids(project.scope))}"
            )
    elif service:
        raise WorkbenchError("an abstain label names no service")
    named_ways = (given.episode is not None) + bool(given.new_episode.strip())
    if given.same_as_previous and named_ways:
        raise WorkbenchError(
            "name the episode one way: the previous point's, one of yours, or a new one"
        )
    if not named_ways and not given.same_as_previous and given.decision == "intervene":
        raise WorkbenchError("an intervene label names its episode: choose one or create one")
    if given.ends_episode and not named_ways and not given.same_as_previous:
        raise WorkbenchError("say which episode ended here: choose it or tick the previous one")
    if len(given.new_episode.strip()) > EPISODE_NAME_MAX:
        raise WorkbenchError(f"an episode name is at most {EPISODE_NAME_MAX} characters")
    with transaction.atomic():
        task = Task.objects.select_for_update().get(pk=task.pk)
        if task.final_id is not None:
            raise WorkbenchError(
                "this point has its final label already; an adjudicator can reopen it"
            )
        ahead = next_task(place)
        existing = Label.objects.filter(task=task, annotator=user).first()
        submitted_before = existing is not None and existing.submitted_at is not None
        if not submitted_before and ahead is not None and task.seq > ahead.seq:
            raise WorkbenchError(
                f"label this stream in order: point {ahead.seq} of {task.stream.points} comes first"
            )
        episode = _episode(task, user, given)
        if given.ends_episode:
            assert episode is not None
            if given.decision != "intervene" and _served(episode, user, task) is None:
                raise WorkbenchError(
                    f"episode {episode.name!r} was never served (no intervene of yours names it "
                    "at or before this point), so it has nothing to end"
                )
        if given.decision == "intervene":
            assert episode is not None
            served = _served(episode, user, task)
            if served is not None and not given.reopens:
                raise WorkbenchError(
                    f"episode {episode.name!r} was served at point {served.task.seq}; a later "
                    "window it covers is abstain, unless the opportunity changed or reopened "
                    "(tick reopens)"
                )
        now = timezone.now()
        label = existing or Label(task=task, annotator=user)
        label.place = place
        label.decision = given.decision
        label.service = service
        label.episode = episode
        label.reopens = bool(given.reopens) and given.decision == "intervene"
        label.ends_episode = bool(given.ends_episode)
        label.rationale = given.rationale.strip()
        label.draft = {}
        label.submitted_at = now
        label.sampled = _sampled(project, task, place.pk)
        label.save()
        if not submitted_before:
            Task.objects.filter(pk=task.pk).update(submitted=F("submitted") + 1)
            task.submitted += 1
        _settle(task, now)
    return label


def _episode(task: Task, user: Any, given: LabelInput) -> Episode | None:
    if given.same_as_previous:
        previous = previous_episode(task, user)
        if previous is None:
            raise WorkbenchError(
                "your label of the previous point names no episode; choose one or create one"
            )
        return previous
    if given.episode is not None:
        found = Episode.objects.filter(pk=given.episode, stream=task.stream, annotator=user).first()
        if found is None:
            raise WorkbenchError("that episode is not one of yours in this stream")
        return found
    name = given.new_episode.strip()
    if not name:
        return None
    found, _ = Episode.objects.get_or_create(stream=task.stream, annotator=user, name=name)
    return found


def _served(episode: Episode, user: Any, task: Task) -> Label | None:
    """The annotator's latest submitted intervene on ``episode`` before ``task``."""
    return (
        Label.objects.filter(
            annotator=user,
            episode=episode,
            decision="intervene",
            submitted_at__isnull=False,
            task__seq__lt=task.seq,
        )
        .order_by("-task__seq")
        .select_related("task")
        .first()
    )


def _ended(task: Task, labels: Sequence[Label]) -> int | None:
    """The point whose opportunity the labels say ended at ``task``: when more than half of
    them tick "episode ended here", the point each one's episode was last served at (this one
    for an intervene), the most named; a tie goes to the latest point."""
    served: list[tuple[int, int]] = []  # (seq, task id)
    for label in labels:
        if not label.ends_episode or label.episode is None:
            continue
        if label.decision == "intervene":
            served.append((task.seq, task.pk))
            continue
        found = _served(label.episode, label.annotator, task)
        if found is not None:
            served.append((found.task.seq, found.task_id))
    if 2 * len(served) <= len(labels):
        return None
    counts = Counter(served)
    return max(counts, key=lambda s: (counts[s], s[0]))[1]


def _sampled(project: LabelProject, task: Task, place: int) -> bool:
    """Deterministic: the same label is in the cross-review sample on every run."""
    digest = hashlib.sha256(f"{project.pk}:{task.pk}:{place}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100 < project.review_percent


def _settle(task: Task, now: datetime) -> None:
    """Finalise a point whose labels are all in, unflagged and in agreement."""
    need = task.project.labels_per_point
    if task.final_id is not None or task.flagged or task.submitted < need:
        return
    labels = list(
        Label.objects.filter(task=task, submitted_at__isnull=False)
        .select_related("episode", "annotator")
        .order_by("submitted_at", "id")
    )
    if len({category(la.decision, la.service) for la in labels}) != 1:
        return
    first = labels[0]
    verdict = Verdict.objects.create(
        task=task,
        kind=Verdict.Kind.AUTO,
        decision=first.decision,
        service=first.service,
        episode=first.episode.name if first.episode else "",
        note=f"the {len(labels)} labels agree",
        ends_id=_ended(task, labels),
        at=now,
    )
    Task.objects.filter(pk=task.pk).update(final=verdict)
    task.final = verdict


# --- review and adjudication ---------------------------------------------------------------


def review_submit(*, label: Label, user: Any, verdict: str, comment: str = "") -> Review:
    """Agree with or flag a submitted label of someone else. A flag sends the point to
    adjudication (reopening it if its labels had agreed)."""
    if verdict not in Review.Verdict.values:
        raise WorkbenchError("a review agrees or flags")
    if verdict == Review.Verdict.FLAG and not comment.strip():
        raise WorkbenchError("say in a comment what is wrong with the label you flag")
    if not may_review(label, user):
        raise WorkbenchError(
            "you cannot review this label (your own, not submitted, or on a stream you label)"
        )
    with transaction.atomic():
        review, _ = Review.objects.update_or_create(
            label=label, reviewer=user, defaults={"verdict": verdict, "comment": comment.strip()}
        )
        if verdict == Review.Verdict.FLAG:
            task = Task.objects.select_for_update().get(pk=label.task_id)
            Task.objects.filter(pk=task.pk).update(flagged=True)
            final = Verdict.objects.filter(pk=task.final_id).first()
            if final is not None and final.kind == Verdict.Kind.AUTO:
                _reopen(task, user, f"flagged in review: {comment.strip()}")
    return review


def adjudicate(
    *,
    task: Task,
    user: Any,
    decision: str,
    service: str = "",
    episode: str = "",
    note: str = "",
    ends: int | None = None,
) -> Verdict:
    """An adjudicator's final label of a point (the labels stay as they were); ``ends``, the
    id of this point or an earlier one of its stream whose opportunity ended here."""
    scope = task.project.scope
    service = service.strip()
    if decision not in ("intervene", "abstain"):
        raise WorkbenchError("choose intervene or abstain")
    if decision == "intervene" and service not in service_ids(scope):
        raise WorkbenchError(
            f"an intervene label names a {scope} service: {', '.join(service_ids(scope))}"
        )
    if decision == "abstain":
        service = ""
    if len(episode.strip()) > EPISODE_NAME_MAX:
        raise WorkbenchError(f"an episode name is at most {EPISODE_NAME_MAX} characters")
    with transaction.atomic():
        task = Task.objects.select_for_update().get(pk=task.pk)
        if task.submitted == 0:
            raise WorkbenchError("nobody has labelled this point yet")
        if (
            ends is not None
            and not Task.objects.filter(pk=ends, stream=task.stream, seq__lte=task.seq).exists()
        ):
            raise WorkbenchError(
                "an episode that ends here began at this point or an earlier one of its stream"
            )
        verdict = Verdict.objects.create(
            task=task,
            kind=Verdict.Kind.ADJUDICATED,
            decision=decision,
            service=service,
            episode=episode.strip(),
            note=note.strip(),
            ends_id=ends,
            by=user,
            at=timezone.now(),
        )
        Task.objects.filter(pk=task.pk).update(final=verdict)
    return verdict


def reopen(*, task: Task, user: Any, note: str = "") -> Verdict:
    with transaction.atomic():
        task = Task.objects.select_for_update().get(pk=task.pk)
        if task.final_id is None:
            raise WorkbenchError("this point has no final label to reopen")
        return _reopen(task, user, note.strip())


def _reopen(task: Task, user: Any, note: str) -> Verdict:
    verdict = Verdict.objects.create(
        task=task, kind=Verdict.Kind.REOPENED, note=note, by=user, at=timezone.now()
    )
    Task.objects.filter(pk=task.pk).update(final=None)
    return verdict


# --- import --------------------------------------------------------------------------------


def labels_import(*, project: LabelProject, lines: Iterable[str], name: str, user: Any) -> int:
    """Final labels from reference-label JSONL (the export's format), each kept with its
    provenance as an imported verdict. All or nothing: a bad line, or a line for a point that
    is not in this project, refuses the whole file."""
    try:
        given = parse_labels(lines, name, f"project:{project.pk}")
    except LabelFileError as exc:
        raise WorkbenchError(str(exc)) from None
    if not given:
        raise WorkbenchError(f"{name} holds no labels")
    tasks = {
        (key, point): pk
        for pk, key, point in Task.objects.filter(project=project).values_list(
            "pk", "stream__entity__key", "point__key"
        )
    }
    strangers = [k for k in given if k not in tasks]
    if strangers:
        entity, point = strangers[0]
        raise WorkbenchError(
            f"{len(strangers)} label(s) in {name} are for points outside this project, "
            f"the first {entity} {point}; nothing was imported"
        )
    now = timezone.now()
    with transaction.atomic():
        for key, label in given.items():
            verdict = Verdict.objects.create(
                task_id=tasks[key],
                kind=Verdict.Kind.IMPORTED,
                decision=label.action,
                service=label.service or "",
                episode=label.episode or "",
                note=f"imported from {name}",
                provenance=json.loads(label.reason) if label.reason else {},
                valid_until=label.valid_until,
                by=user if getattr(user, "is_authenticated", False) else None,
                at=now,
            )
            Task.objects.filter(pk=tasks[key]).update(final=verdict)
    return len(given)


@dataclass(frozen=True)
class Study:
    project: LabelProject
    positives: int  # points the labeler labels intervene
    abstains: int  # drawn at random from its abstains


def study_create(
    *,
    team: Team,
    name: str,
    scope: str,
    entities: Sequence[str] = (),
    seed: int = 1,
    positives_max: int | None = None,
    labels_per_point: int = 3,
    labeler_version: int | None = None,
    abstains: int | None = None,
    user: Any = None,
) -> Study:
    """A blind labelling project for a labeler's validity study (``benchmark/agreement.py``):
    every point the scope's reference labeler labels intervene and as many random abstains,
    each handed to ``labels_per_point`` annotators (``abstains``: that many random abstains
    instead, to look for what the labeler misses). Annotators see the points and the scope's
    guidelines only: never the labeler, its reasons or which points it flagged."""
    chosen = _entities(team, scope, entities)
    labels: dict[str, Mapping[str, Any]] = {}
    for entity in chosen:
        points_build(entity=entity)
        stream = stream_of(entity)
        labeler = reference_labeler(scope, stream.zone, labeler_version)
        labels[entity.key] = label_stream(stream, labeler)
    picked = study_sample(labels, seed=seed, positives_max=positives_max, abstains=abstains)
    if not picked:
        raise WorkbenchError(
            f"the {scope} labeler flags no point on these streams, so a study of its flags is "
            "empty; draw random points to look for what it misses with --abstains N"
        )
    spec = ProjectSpec(
        name=name,
        scope=scope,
        entities=[e.key for e in chosen],
        labels_per_point=labels_per_point,
        review_percent=0,
        points={key: frozenset(found) for key, found in picked.items()},
    )
    project = project_create(team=team, spec=spec, user=user, build=False)
    positives = sum(labels[e][p].positive for e, found in picked.items() for p in found)
    total = sum(len(found) for found in picked.values())
    return Study(project, positives, total - positives)
