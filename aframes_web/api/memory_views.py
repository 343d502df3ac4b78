"""REST views of ProactMem: decide on an event, read trajectories, regularities and decisions.

Thin: each validates its input and calls one service or selector of ``memory``.
"""

from __future__ import annotations

import json
from operator import attrgetter
from typing import Any

from django.conf import settings
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response

from aframes_web.api.body import BodyError, read_body
from aframes_web.api.views import (
    TeamAPIView,
    _after_cursor,
    _choice_param,
    _day_value,
    _keyset_page,
    _time_param,
)
from aframes_web.streams.services import BatchRejected
from aframes_web.teams.models import Scope
from memory import present, selectors
from memory.models import Decision, Regularity
from memory.services import DecideRejected, decide_batch, memory_decide, policy_named

POLICY_DEFAULT = "rules"


def _policy(request: Request) -> str:
    name = request.query_params.get("policy") or POLICY_DEFAULT
    try:
        policy_named(name)
    except ValueError as err:
        raise exceptions.ValidationError({"policy": [str(err)]}) from None
    return name


def _rejected(detail: str, errors: list[dict[str, Any]]) -> Response:
    return Response({"detail": detail, "errors": errors}, status=status.HTTP_400_BAD_REQUEST)


class EntityDecideView(TeamAPIView):
    """``POST …/decide``: one event in, its decision out; the event is committed after."""

    required_scopes = {"POST": Scope.WRITE}

    def post(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        policy = _policy(request)
        try:
            body = read_body(request._request, limit=settings.AFRAMES_MAX_BATCH_BYTES)
            item = json.loads(body) if body else None
        except BodyError as err:
            return Response({"detail": err.message}, status=err.status)
        except (ValueError, UnicodeDecodeError) as err:
            return _rejected(f"The body is not JSON: {err}.", [])
        if not isinstance(item, dict):
            return _rejected(
                "The body must be one event: a JSON object with occurred_at, kind, "
                "source_key and payload.",
                [],
            )
        try:
            result = memory_decide(entity=entity, item=item, policy=policy)
        except DecideRejected as rejected:
            return _rejected("The event is invalid; nothing was stored.", rejected.errors)
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(
            {**present.decision_record(result.decision), "duplicate": not result.created},
            status=code,
        )


def decide_events(entity: Any, items: list[Any], request: Request) -> Response:
    """Ingestion with ``decide=true``: every event decided in order, decisions returned."""
    policy = _policy(request)
    try:
        results = decide_batch(entity=entity, items=items, policy=policy)
    except BatchRejected as rejected:
        return _rejected(
            f"{len(rejected.errors)} of {len(items)} events are invalid; nothing was stored.",
            [e.as_dict() for e in rejected.errors],
        )
    except DecideRejected as rejected:
        return Response(
            {
                "detail": f"Event {rejected.errors[0]['index']} could not be decided; the "
                f"{len(rejected.done)} before it were (their decisions are below), the rest "
                "were not sent to memory.",
                "errors": rejected.errors,
                "decisions": [
                    {**present.decision_record(r.decision), "duplicate": not r.created}
                    for r in rejected.done
                ],
            },
            status=status.HTTP_400_BAD_REQUEST,
        )
    accepted = sum(r.created for r in results)
    return Response(
        {
            "accepted": accepted,
            "duplicates": len(results) - accepted,
            "decisions": [
                {**present.decision_record(r.decision), "duplicate": not r.created} for r in results
            ],
        },
        status=status.HTTP_201_CREATED if accepted else status.HTTP_200_OK,
    )


class EntityTrajectoriesView(TeamAPIView):
    def get(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        rows = selectors.trajectories_for(entity)
        start, end = request.query_params.get("from"), request.query_params.get("to")
        if start:
            rows = rows.filter(day__gte=_day_value(start, "from"))
        if end:
            rows = rows.filter(day__lte=_day_value(end, "to"))
        return Response({"results": [present.trajectory_summary(t) for t in rows]})


class EntityTrajectoryView(TeamAPIView):
    def get(self, request: Request, key: str, day: str) -> Response:
        entity = self.entity(request, key)
        found = selectors.trajectory_detail(entity, _day_value(day, "day"))
        if found is None:
            raise exceptions.NotFound(
                f"{day} of {key!r} is not closed: a day's trajectory is made once the day is "
                "complete (a later day has events, or the entity went quiet)."
            )
        return Response(present.trajectory_record(found))


class EntityRegularitiesView(TeamAPIView):
    def get(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        state = _choice_param(request, "state", Regularity.State.values)
        rows = selectors.regularities_for(entity, state)
        return Response({"results": [present.regularity_summary(r) for r in rows]})


class EntityRegularityView(TeamAPIView):
    def get(self, request: Request, key: str, rid: str) -> Response:
        entity = self.entity(request, key)
        found = selectors.regularity_detail(entity, rid)
        if found is None:
            raise exceptions.NotFound(f"Entity {key!r} has no regularity {rid!r}.")
        return Response(present.regularity_record(found))


class EntityDecisionsView(TeamAPIView):
    def get(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        rows = selectors.decisions_for(entity)
        start, end = _time_param(request, "from"), _time_param(request, "to")
        if start:
            rows = rows.filter(occurred_at__gte=start)
        if end:
            rows = rows.filter(occurred_at__lt=end)
        action = _choice_param(request, "action", Decision.Action.values)
        if action:
            rows = rows.filter(action=action)
        rows = _after_cursor(request, rows, "occurred_at")
        page, next_url = _keyset_page(request, rows, moment=attrgetter("occurred_at"))
        return Response({"results": [present.decision_record(d) for d in page], "next": next_url})


class EntityDecisionView(TeamAPIView):
    def get(self, request: Request, key: str, pk: int) -> Response:
        entity = self.entity(request, key)
        found = selectors.decision_detail(entity, pk)
        if found is None:
            raise exceptions.NotFound(f"Entity {key!r} has no decision {pk}.")
        return Response(present.decision_record(found))
