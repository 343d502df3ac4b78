"""REST views of the annotation workbench for agents and scripts (ProactMem §4.2).

Reading projects needs the read scope; the annotator's own work (assignments, the next point
with its history, submitting a label) needs the label scope and acts for a person: the signed-in
user, or the member a token was created for (``create_token --user``), who must be an
annotator of the team. The blindness rules are the dashboard's: nothing here returns another
person's label, a point's ground truth or a system output.
"""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response

from aframes_web.annotation import present, services
from aframes_web.annotation import selectors as sel
from aframes_web.annotation.models import Assignment, LabelProject
from aframes_web.api import schema as doc
from aframes_web.api.base import TeamAPIView
from aframes_web.api.paging import Keyset, keyset_page
from aframes_web.api.params import choice_param, int_param
from aframes_web.api.problems import Problem, parameter_problem
from aframes_web.streams.records import FieldInvalid, check_storable_text
from aframes_web.teams.auth import principal_for
from aframes_web.teams.models import Scope

PROJECTS_ORDER = Keyset("label-projects", ("-created_at", "-id"))
ASSIGNMENTS_ORDER = Keyset(
    "label-assignments", ("stream__project_id", "stream__position", "stream_id", "id")
)
HISTORY_PAGES_MAX = 1_000_000  # pages of 50 events: far beyond any stream, inside a bigint
PROJECT = OpenApiParameter(
    "pk", doc.ID, OpenApiParameter.PATH, description="The labelling project's id."
)
TASK = OpenApiParameter("task", doc.ID, OpenApiParameter.PATH, description="The point's task id.")
HISTORY_PAGE = OpenApiParameter(
    "page",
    doc.integer(1, HISTORY_PAGES_MAX),
    description="Page of the stream's history before the point, newest first (default 1).",
)
PROJECT_EXAMPLE = {
    "id": 1,
    "name": "Home, May",
    "scope": "home",
    "labels_per_point": 3,
    "starts_at": None,
    "ends_at": None,
    "timely_minutes": 30,
    "triage": "none",
    "review_percent": 10,
    "guidelines": "# Intervene when …",
    "numbers": [
        {
            "service": "check_device",
            "number": 10.0,
            "unit": "minutes",
            "sentence": "Intervene when a door or appliance has been open or on for at least 10 "
            "minutes and for at least twice its usual longest (the 95th percentile of its "
            "earlier open times).",
            "default": 10.0,
        }
    ],
    "created_at": "2026-03-01T09:00:00.000000Z",
    "counts": {
        "points": 120,
        "complete": 40,
        "final": 35,
        "waiting": 5,
        "flagged": 2,
        "labels": 130,
    },
}
TASK_EXAMPLE = {
    "task": 913,
    "project": 1,
    "stream": "home-1",
    "seq": 12,
    "points": 60,
    "at": "2024-05-06T07:00:00.000000Z",
    "point": {
        "key": "home-1:5120",
        "words": "Motion in the bedroom at 07:00.",
        "public": {"room": "bedroom"},
    },
    "final": False,
    "history": {"page": 1, "older": False, "events": []},
    "episodes": [],
    "label": None,
    "progress": {"done": 11, "total": 60},
}
ASSIGNMENT_EXAMPLE = {
    "project": 1,
    "stream": "home-1",
    "points": 60,
    "labelled": 12,
    "next_task": 913,
}


def _project(request: Request, pk: int) -> LabelProject:
    team = principal_for(request).team
    found = sel.project_get(team=team, pk=pk)
    if found is None:
        raise exceptions.NotFound(f"Team {team.slug!r} has no labelling project {pk}.")
    return found


def _annotator(request: Request) -> Any:
    """The person a label request acts for, who must be an annotator of the team."""
    try:
        return sel.acting_annotator(principal_for(request))
    except PermissionError as err:
        raise exceptions.PermissionDenied(str(err)) from None


def _history_page(request: Request) -> int:
    page = int_param(request, "page", low=1, high=HISTORY_PAGES_MAX, default=1)
    assert page is not None  # it has a default
    return page


class LabelProjectsView(TeamAPIView):
    """``GET /labels/projects``: the team's labelling projects with their counts."""

    @extend_schema(
        operation_id="label_projects_list",
        summary="List labelling projects",
        description="The team's labelling projects, newest first, with their counts.",
        parameters=[*doc.PAGED],
        responses={200: doc.page_of("ProjectPage", doc.ProjectShape), **doc.problems()},
        examples=[doc.page_example("Projects", PROJECT_EXAMPLE)],
        tags=["labels"],
    )
    def get(self, request: Request) -> Response:
        rows = sel.projects_for_team(team=principal_for(request).team)
        page, next_url = keyset_page(request, rows, PROJECTS_ORDER)
        return Response({"results": [present.project_record(p) for p in page], "next": next_url})


class LabelProjectView(TeamAPIView):
    """``GET /labels/projects/{id}``: one project."""

    @extend_schema(
        operation_id="label_projects_retrieve",
        summary="One labelling project",
        description="A project of the team with its counts.",
        parameters=[PROJECT],
        responses={200: doc.ProjectShape, **doc.problems(404)},
        examples=[doc.example("A project", PROJECT_EXAMPLE)],
        tags=["labels"],
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(present.project_record(_project(request, pk)))


class LabelExportView(TeamAPIView):
    """``GET /labels/projects/{id}/export?as=jsonl|csv``: the final labels with their
    provenance (what ``proactivestream run --labels project:ID`` scores against)."""

    @extend_schema(
        operation_id="label_projects_export",
        summary="Export the final labels",
        description="The adjudicated labels with their provenance, as JSON lines or CSV.",
        parameters=[
            PROJECT,
            OpenApiParameter(
                "as",
                OpenApiTypes.STR,
                enum=list(sel.EXPORTS),
                description="jsonl (default) or csv.",
            ),
        ],
        responses={
            (200, "application/jsonl"): OpenApiResponse(OpenApiTypes.STR, description="JSONL"),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV"),
            **doc.problems(404),
        },
        examples=[
            doc.example(
                "JSON lines",
                '{"stream": "home-1", "point": "home-1:5120", "decision": "abstain", ...}\n',
                media_type="application/jsonl",
                status_codes=["200"],
            )
        ],
        tags=["labels"],
    )
    def get(self, request: Request, pk: int) -> StreamingHttpResponse:
        found = _project(request, pk)
        fmt = choice_param(request, "as", sel.EXPORTS, default="jsonl")
        assert fmt is not None  # it has a default
        return sel.export_response(request._request, found, fmt)


class LabelAssignmentsView(TeamAPIView):
    """``GET /labels/assignments``: the annotator's streams, with progress and next point."""

    required_scopes = {"GET": Scope.LABEL, "HEAD": Scope.LABEL}

    @extend_schema(
        operation_id="label_assignments_list",
        summary="The annotator's assignments",
        description="The streams the token's annotator labels, with progress and next point "
        "(label scope).",
        parameters=[*doc.PAGED],
        responses={200: doc.page_of("AssignmentPage", doc.AssignmentShape), **doc.problems()},
        examples=[doc.page_example("Assignments", ASSIGNMENT_EXAMPLE)],
        tags=["labels"],
    )
    def get(self, request: Request) -> Response:
        user = _annotator(request)
        places = Assignment.objects.filter(
            stream__project__team=principal_for(request).team, annotator=user
        ).select_related("stream__entity")
        page, next_url = keyset_page(request, places, ASSIGNMENTS_ORDER)
        return Response({"results": [present.assignment_record(p) for p in page], "next": next_url})


class LabelNextView(TeamAPIView):
    """``GET /labels/projects/{id}/next``: where the annotator resumes, with the history up to
    it (``page`` pages further back); 204 when their queue is done."""

    required_scopes = {"GET": Scope.LABEL, "HEAD": Scope.LABEL}

    @extend_schema(
        operation_id="label_next",
        summary="Where the annotator resumes",
        description="The next point of the annotator's queue with its history; 204 when done.",
        parameters=[PROJECT, HISTORY_PAGE],
        responses={
            200: doc.TaskShape,
            204: OpenApiResponse(description="The annotator's queue is done."),
            **doc.problems(404),
        },
        examples=[doc.example("The next point", TASK_EXAMPLE)],
        tags=["labels"],
    )
    def get(self, request: Request, pk: int) -> Response:
        user = _annotator(request)
        found = _project(request, pk)
        page = _history_page(request)
        task = sel.current_task(found, user)
        if task is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(present.task_record(task, user, page))


class LabelTaskView(TeamAPIView):
    """``GET /labels/projects/{id}/tasks/{task}``: one point of the annotator's queue;
    ``POST``: submit (or revise) their label of it."""

    required_scopes = {"GET": Scope.LABEL, "HEAD": Scope.LABEL, "POST": Scope.LABEL}

    def _task(self, request: Request, pk: int, task: int) -> tuple[Any, Any]:
        user = _annotator(request)
        found = sel.task_for_annotator(_project(request, pk), user, task)
        if found is None:
            raise exceptions.NotFound(f"Point {task} is not in your queue of project {pk}.")
        return user, found

    @extend_schema(
        operation_id="label_tasks_retrieve",
        summary="One point of the annotator's queue",
        description="The point in words, its public fields, the history before it, the "
        "annotator's own episodes and label.",
        parameters=[PROJECT, TASK, HISTORY_PAGE],
        responses={200: doc.TaskShape, **doc.problems(404)},
        examples=[doc.example("A point", TASK_EXAMPLE)],
        tags=["labels"],
    )
    def get(self, request: Request, pk: int, task: int) -> Response:
        user, found = self._task(request, pk, task)
        page = _history_page(request)
        return Response(present.task_record(found, user, page))

    @extend_schema(
        operation_id="label_tasks_submit",
        summary="Submit (or revise) the annotator's label",
        description="Intervene or abstain, the service and episode when intervening; 422 when "
        "the workbench's rules refuse it (e.g. a revision without reopens).",
        parameters=[PROJECT, TASK],
        request=doc.LabelInputShape,
        responses={201: doc.TaskSubmittedShape, **doc.problems(404, 415, 422)},
        examples=[
            OpenApiExample(
                "Abstain",
                value={"decision": "abstain", "rationale": "Nothing is due."},
                request_only=True,
            ),
            doc.example("Submitted", {**TASK_EXAMPLE, "next_task": 914}),
        ],
        tags=["labels"],
    )
    def post(self, request: Request, pk: int, task: int) -> Response:
        user, found = self._task(request, pk, task)
        data = request.data
        if not isinstance(data, dict):
            raise Problem(
                "validation",
                "Send a JSON object: decision, service, episode or new_episode or "
                "same_as_previous, reopens, ends_episode, rationale.",
            )
        episode = data.get("episode")
        if episode is not None and (
            not isinstance(episode, int) or isinstance(episode, bool) or abs(episode) > 2**63 - 1
        ):
            raise parameter_problem("episode", "An episode id (integer) or null.")
        texts = {}
        for name in ("decision", "service", "new_episode", "rationale"):
            value = data.get(name) or ""
            if not isinstance(value, str):
                raise parameter_problem(name, "Must be a string.")
            try:
                check_storable_text(value, name)
            except FieldInvalid as problem:
                raise parameter_problem(name, problem.message) from None
            texts[name] = value
        ticks = {}
        for name in ("reopens", "same_as_previous", "ends_episode"):
            value = data.get(name, False)
            if not isinstance(value, bool):
                raise parameter_problem(name, "Must be true or false.")
            ticks[name] = value
        try:
            services.label_submit(
                task=found,
                user=user,
                given=services.LabelInput(
                    decision=texts["decision"],
                    service=texts["service"],
                    episode=episode,
                    new_episode=texts["new_episode"],
                    reopens=ticks["reopens"],
                    rationale=texts["rationale"],
                    same_as_previous=ticks["same_as_previous"],
                    ends_episode=ticks["ends_episode"],
                ),
            )
        except services.WorkbenchError as exc:
            raise Problem("unprocessable", str(exc)) from None
        following = sel.current_task(found.project, user)
        return Response(
            {
                **present.task_record(found, user),
                "next_task": following.pk if following else None,
            },
            status=status.HTTP_201_CREATED,
        )
