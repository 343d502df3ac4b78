"""REST views of ProactiveStream runs: list them, read one with its results (read scope)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from aframes_web.annotation.selectors import runs_refusal
from aframes_web.api import schema as doc
from aframes_web.api.base import TeamAPIView
from aframes_web.api.paging import Keyset, keyset_page
from aframes_web.api.params import choice_param, time_param
from aframes_web.proactivestream import present
from aframes_web.proactivestream.models import BenchmarkRun
from aframes_web.proactivestream.selectors import run_file_names, run_get, runs_for_team
from aframes_web.teams.auth import principal_for

RUNS_ORDER = Keyset("benchmark-runs", ("created_at", "id"))
RUN_EXAMPLE = {
    "id": 3,
    "kind": "proactivestream",
    "status": "done",
    "scope": "home",
    "methods": ["proactmem", "event_only"],
    "labels": "project:1",
    "control": True,
    "streams": 4,
    "progress": {"done": 8, "total": 8, "percent": 100, "note": ""},
    "created_at": "2026-03-02T10:00:00.000000Z",
    "started_at": "2026-03-02T10:00:01.500000Z",
    "finished_at": "2026-03-02T10:04:12.000000Z",
    "error": "",
}
PK = OpenApiParameter("pk", doc.ID, OpenApiParameter.PATH, description="The run's id.")


def _unless_blind(request: Request) -> None:
    refused = runs_refusal(principal_for(request).person)
    if refused:
        raise exceptions.PermissionDenied(refused)


class BenchmarkRunsView(TeamAPIView):
    """``GET /benchmark/runs``: the team's runs, oldest first, paged; ``status`` filters."""

    @extend_schema(
        operation_id="benchmark_runs_list",
        summary="List benchmark runs",
        description="The team's ProactiveStream runs, oldest first, a page at a time.",
        parameters=[
            OpenApiParameter(
                "status",
                OpenApiTypes.STR,
                enum=list(BenchmarkRun.Status.values),
                description="Only runs in this state.",
            ),
            OpenApiParameter(
                "from",
                OpenApiTypes.DATETIME,
                description="Created at or after this moment, with an offset.",
            ),
            OpenApiParameter(
                "to",
                OpenApiTypes.DATETIME,
                description="Created before this moment, with an offset.",
            ),
            *doc.PAGED,
        ],
        responses={200: doc.page_of("RunPage", doc.RunSummaryShape), **doc.problems()},
        examples=[doc.page_example("Runs", RUN_EXAMPLE)],
        tags=["benchmark"],
    )
    def get(self, request: Request) -> Response:
        _unless_blind(request)
        rows = runs_for_team(team=principal_for(request).team)
        wanted = choice_param(request, "status", BenchmarkRun.Status.values)
        if wanted:
            rows = rows.filter(status=wanted)
        start, end = time_param(request, "from"), time_param(request, "to")
        if start:
            rows = rows.filter(created_at__gte=start)
        if end:
            rows = rows.filter(created_at__lt=end)
        page, next_url = keyset_page(request, rows, RUNS_ORDER)
        return Response({"results": [present.run_summary(r) for r in page], "next": next_url})


class BenchmarkRunView(TeamAPIView):
    """``GET /benchmark/runs/{id}``: a run with its configuration, progress and results."""

    @extend_schema(
        operation_id="benchmark_runs_retrieve",
        summary="One benchmark run with its results",
        description="A run's configuration, progress, metrics per method and artefact names.",
        parameters=[PK],
        responses={200: doc.RunShape, **doc.problems(404)},
        examples=[
            doc.example(
                "A run",
                {
                    **RUN_EXAMPLE,
                    "entities": ["home-1"],
                    "synthetic": [],
                    "code_version": "0.9.0",
                    "results": {"methods": {}},
                    "files": ["report.md"],
                },
            )
        ],
        tags=["benchmark"],
    )
    def get(self, request: Request, pk: int) -> Response:
        _unless_blind(request)
        team = principal_for(request).team
        run = run_get(team=team, pk=pk)
        if run is None:
            raise exceptions.NotFound(f"Team {team.slug!r} has no benchmark run {pk}.")
        return Response(present.run_record(run, run_file_names(run)))
