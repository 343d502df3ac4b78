"""Episode controls in the workbench: "same episode as the previous point" and "episode ended
here", and that the export and the benchmark's scorer respect an episode's end (an
intervention after the opportunity stopped holding is not timely)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from aframes_web.annotation import selectors as sel
from aframes_web.annotation import services
from aframes_web.annotation.models import Label, Task
from aframes_web.annotation.services import LabelInput, ProjectSpec, WorkbenchError
from aframes_web.teams.services import token_create
from benchmark.metrics import score_stream
from benchmark.replay import MethodDecision
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

SERVE = LabelInput("intervene", "check_device", new_episode="front door")
ABSTAIN = LabelInput("abstain")
SAME = LabelInput("abstain", same_as_previous=True)
ENDED = LabelInput("abstain", same_as_previous=True, ends_episode=True)


def make(team: Any) -> Any:
    # A day-long span, so that the episode's end (not the span) is what limits it.
    spec = ProjectSpec(
        name="episodes", scope="home", entities=["home-1"], labels_per_point=2, timely_minutes=1440
    )
    return services.project_create(team=team, spec=spec, build=False)


def label(project: Any, user: Any, given: LabelInput) -> Task:
    task = sel.current_task(project, user)
    assert task is not None
    services.label_submit(task=task, user=user, given=given)
    return task


def test_same_episode_as_the_previous_point_names_it_and_says_when_there_is_none(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team)
    ana = people["ana"]
    t1 = sel.current_task(project, ana)
    assert t1 is not None
    with pytest.raises(WorkbenchError, match="previous point names no episode"):
        services.label_submit(task=t1, user=ana, given=SAME)
    label(project, ana, SERVE)
    t2 = sel.current_task(project, ana)
    assert sel.previous_episode(t2, ana).name == "front door"
    both = LabelInput("abstain", same_as_previous=True, new_episode="other")
    with pytest.raises(WorkbenchError, match="name the episode one way"):
        services.label_submit(task=t2, user=ana, given=both)
    label(project, ana, SAME)
    assert Label.objects.get(task=t2, annotator=ana).episode.name == "front door"
    # The previous point's episode, not an older one: point 3 follows point 2's label.
    label(project, ana, ABSTAIN)
    t4 = sel.current_task(project, ana)
    assert sel.previous_episode(t4, ana) is None


def test_an_episode_ends_only_once_it_was_served(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team)
    ana = people["ana"]
    t1 = sel.current_task(project, ana)
    with pytest.raises(WorkbenchError, match="say which episode ended here"):
        services.label_submit(task=t1, user=ana, given=LabelInput("abstain", ends_episode=True))
    never = LabelInput("abstain", new_episode="lamp", ends_episode=True)
    with pytest.raises(WorkbenchError, match="'lamp' was never served"):
        services.label_submit(task=t1, user=ana, given=never)
    assert not Label.objects.filter(submitted_at__isnull=False).exists()
    label(project, ana, SERVE)
    ended = label(project, ana, ENDED)
    assert Label.objects.get(task=ended, annotator=ana).ends_episode


def _served_and_ended(project: Any, people: dict[str, Any], enders: int) -> tuple[Task, Task]:
    """Both annotators serve the front door at point 1 and cover it at point 2; at point 3
    ``enders`` of them say it ended there (the others only cover it); the rest abstain."""
    first = ended = None
    for n, user in enumerate((people["ana"], people["ben"])):
        first = label(project, user, SERVE)
        label(project, user, SAME)
        ended = label(project, user, ENDED if n < enders else SAME)
        while sel.current_task(project, user) is not None:
            label(project, user, ABSTAIN)
    assert first is not None and ended is not None
    return first, ended


def _rows(project: Any) -> dict[str, dict[str, Any]]:
    return {row["point"]: row for row in map(json.loads, sel.export_jsonl(project))}


def test_the_export_and_the_scorer_respect_an_episode_that_ended(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team)
    first, ended = _served_and_ended(project, people, enders=2)
    ended.refresh_from_db()
    assert ended.final is not None and ended.final.ends_id == first.pk
    rows = _rows(project)
    served = rows[first.point.key]
    assert served["valid_until"] == ended.at.isoformat()
    assert served["provenance"]["ended_at"] == ended.point.key
    # The scorer: an intervention after the end matches nothing (a false positive, and the
    # opportunity a false negative); at the ending point itself it is still timely.
    tasks = list(Task.objects.filter(project=project).order_by("seq"))
    after = tasks[ended.seq]  # the point after the end
    points = [(t.point.key, t.at) for t in tasks]
    labels = sel.reference_labels(project)
    by_point = {p: labels[("home-1", p)] for p, _ in points}
    late, _ = score_stream(
        points, by_point, [MethodDecision(after.point.key, "intervene", "check_device")]
    )
    assert (late.tp, late.fp, late.fn) == (0, 1, 1)
    timely, _ = score_stream(
        points, by_point, [MethodDecision(ended.point.key, "intervene", "check_device")]
    )
    assert (timely.tp, timely.fp, timely.fn) == (1, 0, 0)


def test_one_annotator_of_two_is_no_majority_for_an_end(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team)
    first, ended = _served_and_ended(project, people, enders=1)
    ended.refresh_from_db()
    assert ended.final is not None and ended.final.ends_id is None
    served = _rows(project)[first.point.key]
    assert served["valid_until"] == (first.at + timedelta(minutes=1440)).isoformat()
    assert "ended_at" not in served["provenance"]


def test_an_adjudicator_ends_an_episode_at_a_point_of_the_same_stream(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team)
    first, ended = _served_and_ended(project, people, enders=1)
    choices = sel.served_points(ended)
    assert choices == [(first.pk, "point 1: intervene check_device, episode “front door”")]
    later = Task.objects.get(stream=ended.stream, seq=ended.seq + 1)  # not yet begun
    with pytest.raises(WorkbenchError, match="began at this point or an earlier one"):
        services.adjudicate(task=ended, user=people["adi"], decision="abstain", ends=later.pk)
    services.adjudicate(task=ended, user=people["adi"], decision="abstain", ends=first.pk)
    assert _rows(project)[first.point.key]["valid_until"] == ended.at.isoformat()


def test_an_imported_label_keeps_its_own_validity(
    team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team)
    task = project.tasks.order_by("seq").first()
    until = (task.at + timedelta(minutes=7)).isoformat()
    line = json.dumps(
        {
            "entity": "home-1",
            "point": task.point.key,
            "label": "intervene",
            "service": "check_device",
            "valid_until": until,
        }
    )
    services.labels_import(project=project, lines=[line], name="f", user=None)
    assert _rows(project)[task.point.key]["valid_until"] == until


def test_the_form_and_the_api_offer_both_controls(
    client: Client, team: Any, people: dict[str, Any], homes: list[Any]
) -> None:
    project = make(team)
    ana = people["ana"]
    label(project, ana, SERVE)
    task = sel.current_task(project, ana)
    client.force_login(ana)
    url = f"/t/{team.slug}/labels/{project.pk}/annotate/{task.pk}/"
    page = client.get(url).content.decode()
    assert "Same episode as the previous point" in page and "(front door)" in page
    assert "Episode ended here" in page
    answer = client.post(
        url, {"decision": "abstain", "same_as_previous": "on", "ends_episode": "on"}
    )
    assert answer.status_code == 302
    mine = Label.objects.get(task=task, annotator=ana)
    assert mine.episode.name == "front door" and mine.ends_episode
    # Over REST: the same controls, booleans only.
    ben = people["ben"]
    label(project, ben, SERVE)
    api = ApiClient(token_create(team=team, name="b", scopes=["label"], created_by=ben).key)
    following = sel.current_task(project, ben)
    path = f"/api/v1/labels/projects/{project.pk}/tasks/{following.pk}"
    loose = api.post(path, {"decision": "abstain", "same_as_previous": "yes"})
    assert loose.status_code == 400 and "true or false" in loose.content.decode()
    made = api.post(path, {"decision": "abstain", "same_as_previous": True, "ends_episode": True})
    assert made.status_code == 201, made.content
    assert made.json()["label"]["ends_episode"] is True
    assert Label.objects.get(task=following, annotator=ben).episode.name == "front door"
