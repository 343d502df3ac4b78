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
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response

from aframes_web.annotation import present, services
from aframes_web.annotation import selectors as sel
from aframes_web.annotation.models import Assignment, LabelProject
from aframes_web.api.views import TeamAPIView, _int_param
from aframes_web.teams.auth import principal_for
from aframes_web.teams.models import Role, Scope


def _project(request: Request, pk: int) -> LabelProject:
    team = principal_for(request).team
    found = sel.project_get(team=team, pk=pk)
    if found is None:
        raise exceptions.NotFound(f"Team {team.slug!r} has no labelling project {pk}.")
    return found


def _annotator(request: Request) -> Any:
    """The person a label request acts for, who must be an annotator of the team."""
    principal = principal_for(request)
    user = principal.user
    if principal.token is not None:
        user = principal.token.created_by
        if user is None:
            raise exceptions.PermissionDenied(
                f"{principal.label} acts for nobody: create a label token for the annotator "
                "with `manage.py create_token TEAM NAME --scopes label --user USERNAME`."
            )
    if services.role_in(principal.team, user) != Role.ANNOTATOR:
        raise exceptions.PermissionDenied(
            f"{user} is not an annotator of team {principal.team.slug}; only annotators label."
        )
    return user


class LabelProjectsView(TeamAPIView):
    """``GET /labels/projects``: the team's labelling projects with their counts."""

    def get(self, request: Request) -> Response:
        rows = sel.projects_for_team(team=principal_for(request).team)
        return Response({"results": [present.project_record(p) for p in rows]})


class LabelProjectView(TeamAPIView):
    """``GET /labels/projects/{id}``: one project."""

    def get(self, request: Request, pk: int) -> Response:
        return Response(present.project_record(_project(request, pk)))


class LabelExportView(TeamAPIView):
    """``GET /labels/projects/{id}/export?as=jsonl|csv``: the final labels with their
    provenance (what ``proactivestream run --labels project:ID`` scores against)."""

    def get(self, request: Request, pk: int) -> StreamingHttpResponse:
        found = _project(request, pk)
        fmt = request.query_params.get("as", "jsonl")
        if fmt not in sel.EXPORTS:
            raise exceptions.ValidationError({"as": ["Use jsonl or csv."]})
        return sel.export_response(found, fmt)


class LabelAssignmentsView(TeamAPIView):
    """``GET /labels/assignments``: the annotator's streams, with progress and next point."""

    required_scopes = {"GET": Scope.LABEL, "HEAD": Scope.LABEL}

    def get(self, request: Request) -> Response:
        user = _annotator(request)
        places = (
            Assignment.objects.filter(
                stream__project__team=principal_for(request).team, annotator=user
            )
            .select_related("stream__entity")
            .order_by("stream__project_id", "stream__position", "stream_id")
        )
        return Response({"results": [present.assignment_record(p) for p in places]})


class LabelNextView(TeamAPIView):
    """``GET /labels/projects/{id}/next``: where the annotator resumes, with the history up to
    it (``page`` pages further back); 204 when their queue is done."""

    required_scopes = {"GET": Scope.LABEL, "HEAD": Scope.LABEL}

    def get(self, request: Request, pk: int) -> Response:
        user = _annotator(request)
        found = _project(request, pk)
        task = sel.current_task(found, user)
        if task is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        page = _int_param(request, "page", low=1, default=1) or 1
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

    def get(self, request: Request, pk: int, task: int) -> Response:
        user, found = self._task(request, pk, task)
        page = _int_param(request, "page", low=1, default=1) or 1
        return Response(present.task_record(found, user, page))

    def post(self, request: Request, pk: int, task: int) -> Response:
        user, found = self._task(request, pk, task)
        data = request.data
        if not isinstance(data, dict):
            raise exceptions.ValidationError(
                {
                    "detail": "Send a JSON object: decision, service, episode or new_episode, "
                    "reopens, rationale."
                }
            )
        episode = data.get("episode")
        if episode is not None and not isinstance(episode, int):
            raise exceptions.ValidationError({"episode": ["An episode id (integer) or null."]})
        texts = {}
        for name in ("decision", "service", "new_episode", "rationale"):
            value = data.get(name) or ""
            if not isinstance(value, str):
                raise exceptions.ValidationError({name: ["Must be a string."]})
            texts[name] = value
        try:
            services.label_submit(
                task=found,
                user=user,
                given=services.LabelInput(
                    decision=texts["decision"],
                    service=texts["service"],
                    episode=episode,
                    new_episode=texts["new_episode"],
                    reopens=bool(data.get("reopens")),
                    rationale=texts["rationale"],
                ),
            )
        except services.WorkbenchError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        following = sel.current_task(found.project, user)
        return Response(
            {
                **present.task_record(found, user),
                "next_task": following.pk if following else None,
            },
            status=status.HTTP_201_CREATED,
        )
