"""REST views of ProactiveStream runs: list them, read one with its results (read scope)."""

from __future__ import annotations

from operator import attrgetter

from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from aframes_web.api.views import TeamAPIView, _after_cursor, _choice_param, _keyset_page
from aframes_web.proactivestream import present
from aframes_web.proactivestream.models import BenchmarkRun, RunArtefact
from aframes_web.proactivestream.selectors import run_get, runs_for_team
from aframes_web.teams.auth import principal_for


class BenchmarkRunsView(TeamAPIView):
    """``GET /benchmark/runs``: the team's runs, oldest first, paged; ``status`` filters."""

    def get(self, request: Request) -> Response:
        rows = runs_for_team(team=principal_for(request).team).order_by("created_at", "id")
        wanted = _choice_param(request, "status", BenchmarkRun.Status.values)
        if wanted:
            rows = rows.filter(status=wanted)
        rows = _after_cursor(request, rows, "created_at")
        page, next_url = _keyset_page(request, rows, moment=attrgetter("created_at"))
        return Response({"results": [present.run_summary(r) for r in page], "next": next_url})


class BenchmarkRunView(TeamAPIView):
    """``GET /benchmark/runs/{id}``: a run with its configuration, progress and results."""

    def get(self, request: Request, pk: int) -> Response:
        team = principal_for(request).team
        run = run_get(team=team, pk=pk)
        if run is None:
            raise exceptions.NotFound(f"Team {team.slug!r} has no benchmark run {pk}.")
        files = list(RunArtefact.objects.filter(run=run).values_list("name", flat=True))
        return Response(present.run_record(run, files))
