"""REST views of ProactMem: decide on an event, read trajectories, regularities and decisions.

Thin: each validates its input and calls one service or selector of ``memory``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response

from aframes_web.api import schema as doc
from aframes_web.api.base import TeamAPIView
from aframes_web.api.body import BodyError, read_body
from aframes_web.api.paging import Keyset, keyset_page
from aframes_web.api.params import choice_param, day_param, day_value, policy_param, time_param
from aframes_web.api.parsers import Unreadable, json_value
from aframes_web.api.problems import Problem
from aframes_web.streams.services import BatchRejected
from aframes_web.teams.models import Scope
from memory import present, selectors
from memory.engine.decide import POLICIES
from memory.models import Decision, Regularity
from memory.services.deciding import DecideRejected, decide_batch, memory_decide

TRAJECTORIES_ORDER = Keyset("trajectories", ("day",))
DECISIONS_ORDER = Keyset("decisions", ("occurred_at", "id"))
# The regularity orders a client may page through (memory.selectors.REGULARITY_ORDERS); each
# ends on the unique rid, and none sorts on a column that may be null.
REGULARITY_ORDERS = {
    name: Keyset(f"regularities-{name}", selectors.REGULARITY_ORDERS[name])
    for name in ("rank", "confidence", "lift", "support")
}
REGULARITY_PAGE_DEFAULT = 100  # a regularity summary is ~0.5 KB; 594 of them were 332 KB
REGULARITY_PAGE_MAX = 1000

POLICY_DEFAULT = "rules"


def _policy(request: Request) -> str:
    return policy_param(request, default=POLICY_DEFAULT)


def _rejected(detail: str, errors: list[dict[str, Any]], **extensions: Any) -> Problem:
    return Problem(
        "invalid-batch" if errors else "invalid-body", detail, errors=errors, **extensions
    )


DECISION_EXAMPLE = {
    "id": 17,
    "event_id": 5120,
    "point_id": None,
    "occurred_at": "2024-05-06T07:00:00.000000Z",
    "day": "2024-05-06",
    "policy": "rules",
    "action": "intervene",
    "proposed_action": "intervene",
    "intent": "remind",
    "message": "You usually make coffee within 20 minutes of getting up; the kettle is off.",
    "evidence": ["event:5120", "reg:3fa9c2d1"],
    "regularities": ["3fa9c2d1"],
    "facts_seen": [],
    "episode": "",
    "control": {
        "reason": "new",
        "suppressed": False,
        "identity": {"intent": "remind"},
        "suppressed_by": None,
        "instead_of": None,
        "signature": {"intent": "remind"},
    },
    "latency_ms": 3.2,
}
TRAJECTORY_EXAMPLE = {
    "day": "2024-05-06",
    "events": 212,
    "segments": 9,
    "rejected": 1,
    "facts": 40,
    "late_events": 0,
    "closed_at": "2024-05-07T01:00:00.000000Z",
}
REGULARITY_EXAMPLE = {
    "id": "3fa9c2d1",
    "summary": "On weekdays, after motion in the bedroom, the kettle is on within 20 minutes.",
    "proposal": {"trigger": {}, "behavior": {}, "window": ["06:00", "09:00"], "weekdays": None},
    "state": "active",
    "confidence": 0.82,
    "replay": {
        "fulfilled": 14,
        "violated": 2,
        "confidence": 0.875,
        "lift": 2.1,
        "observable_days": 20,
        "behavior_days": 15,
        "base_rate": 0.75,
        "contrast_days": 4,
        "untriggered_behavior_days": 1,
        "margin": 0.4,
    },
    "consecutive_violations": 0,
    "last_day": "2024-05-06",
    "proposed_on": "2024-04-20",
    "rejected": None,
}
DAY_PATH = OpenApiParameter(
    "day", OpenApiTypes.DATE, OpenApiParameter.PATH, description="The local day, e.g. 2024-05-06."
)
POLICY = OpenApiParameter(
    "policy",
    OpenApiTypes.STR,
    enum=sorted(POLICIES),
    description=f"The decision policy (default {POLICY_DEFAULT}); `llm` too when a model is "
    "configured (LLM_BASE_URL, LLM_MODEL).",
)


class EntityDecideView(TeamAPIView):
    """``POST …/decide``: one event in, its decision out; the event is committed after."""

    required_scopes = {"POST": Scope.WRITE}

    @extend_schema(
        operation_id="decide",
        summary="Decide on one event",
        description=(
            "Runs the policy on memory as it stood before the event, applies intervention "
            "control, stores and returns the decision with its evidence, then commits the "
            "event (write scope). An event stored already answers its stored decision (200)."
        ),
        parameters=[doc.KEY, POLICY],
        request=doc.EventInputShape,
        responses={
            201: doc.DecidedShape,
            200: OpenApiResponse(doc.DecidedShape, description="The event was stored already."),
            **doc.problems(404, 413, 415),
        },
        examples=[doc.example("A decision", {**DECISION_EXAMPLE, "duplicate": False})],
        tags=["memory"],
    )
    def post(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        policy = _policy(request)
        try:
            body = read_body(request._request, limit=settings.AFRAMES_MAX_BATCH_BYTES)
            item = json_value(body) if body else None
        except BodyError as err:
            raise err.problem() from None
        except Unreadable as err:
            raise _rejected(str(err), []) from None
        if not isinstance(item, dict):
            raise _rejected(
                "The body must be one event: a JSON object with occurred_at, kind, "
                "source_key and payload.",
                [],
            )
        try:
            result = memory_decide(entity=entity, item=item, policy=policy)
        except DecideRejected as rejected:
            raise _rejected("The event is invalid; nothing was stored.", rejected.errors) from None
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
        raise _rejected(
            f"{len(rejected.errors)} of {len(items)} events are invalid; nothing was stored.",
            [e.as_dict() for e in rejected.errors],
        ) from None
    except DecideRejected as rejected:
        raise _rejected(
            f"Event {rejected.errors[0]['index']} could not be decided; the "
            f"{len(rejected.done)} before it were (their decisions are below), the rest "
            "were not sent to memory.",
            rejected.errors,
            decisions=[
                {**present.decision_record(r.decision), "duplicate": not r.created}
                for r in rejected.done
            ],
        ) from None
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
    @extend_schema(
        operation_id="trajectories_list",
        summary="List closed days (trajectories)",
        description="The entity's closed days with their figures, by day, a page at a time.",
        parameters=[doc.KEY, doc.DAY_FROM, doc.DAY_TO, *doc.PAGED],
        responses={
            200: doc.page_of("TrajectoryPage", doc.TrajectorySummaryShape),
            **doc.problems(404),
        },
        examples=[doc.page_example("Closed days", TRAJECTORY_EXAMPLE)],
        tags=["memory"],
    )
    def get(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        rows = selectors.trajectories_for(entity)
        start, end = day_param(request, "from"), day_param(request, "to")
        if start:
            rows = rows.filter(day__gte=start)
        if end:
            rows = rows.filter(day__lte=end)
        page, next_url = keyset_page(request, rows, TRAJECTORIES_ORDER)
        return Response(
            {"results": [present.trajectory_summary(t) for t in page], "next": next_url}
        )


class EntityTrajectoryView(TeamAPIView):
    @extend_schema(
        operation_id="trajectories_retrieve",
        summary="One closed day with its segments, facts and citations",
        description="A day's trajectory; a day that is not closed yet answers 404.",
        parameters=[doc.KEY, DAY_PATH],
        responses={200: doc.TrajectoryShape, **doc.problems(404)},
        examples=[doc.example("A closed day", {**TRAJECTORY_EXAMPLE, "segments": []})],
        tags=["memory"],
    )
    def get(self, request: Request, key: str, day: str) -> Response:
        entity = self.entity(request, key)
        found = selectors.trajectory_detail(entity, day_value(day, "day"))
        if found is None:
            raise exceptions.NotFound(
                f"{day} of {key!r} is not closed: a day's trajectory is made once the day is "
                "complete (a later day has events, or the entity went quiet)."
            )
        return Response(present.trajectory_record(found))


class EntityRegularitiesView(TeamAPIView):
    @extend_schema(
        operation_id="regularities_list",
        summary="List regularities",
        description=(
            "The entity's regularities in memory's rank (state, then how much the trigger "
            "predicts), or by confidence, lift or support; a page at a time "
            f"(default {REGULARITY_PAGE_DEFAULT}, at most {REGULARITY_PAGE_MAX})."
        ),
        parameters=[
            doc.KEY,
            OpenApiParameter(
                "state",
                OpenApiTypes.STR,
                enum=list(Regularity.State.values),
                description="Only regularities in this state.",
            ),
            OpenApiParameter(
                "order",
                OpenApiTypes.STR,
                enum=list(REGULARITY_ORDERS),
                description="rank (default), confidence, lift or support.",
            ),
            doc.LIMIT,
            doc.CURSOR,
        ],
        responses={
            200: doc.page_of("RegularityPage", doc.RegularitySummaryShape),
            **doc.problems(404),
        },
        examples=[doc.page_example("Regularities", REGULARITY_EXAMPLE)],
        tags=["memory"],
    )
    def get(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        state = choice_param(request, "state", Regularity.State.values)
        order = choice_param(request, "order", REGULARITY_ORDERS, default="rank")
        assert order is not None  # it has a default
        rows = selectors.regularities_for(entity, state, order=order)
        page, next_url = keyset_page(
            request,
            rows,
            REGULARITY_ORDERS[order],
            default=REGULARITY_PAGE_DEFAULT,
            maximum=REGULARITY_PAGE_MAX,
        )
        return Response(
            {"results": [present.regularity_summary(r) for r in page], "next": next_url}
        )


class EntityRegularityView(TeamAPIView):
    @extend_schema(
        operation_id="regularities_retrieve",
        summary="One regularity with its assessments and transitions",
        description="A regularity by id, with each day's replay outcome and state changes.",
        parameters=[
            doc.KEY,
            OpenApiParameter(
                "rid", OpenApiTypes.STR, OpenApiParameter.PATH, description="The regularity's id."
            ),
        ],
        responses={200: doc.RegularityShape, **doc.problems(404)},
        examples=[
            doc.example(
                "A regularity",
                {
                    **REGULARITY_EXAMPLE,
                    "assessments": [
                        {
                            "day": "2024-05-06",
                            "outcome": "fulfilled",
                            "facts": ["fact:2024-05-06/2/f1"],
                        }
                    ],
                    "transitions": [],
                },
            )
        ],
        tags=["memory"],
    )
    def get(self, request: Request, key: str, rid: str) -> Response:
        entity = self.entity(request, key)
        found = selectors.regularity_detail(entity, rid)
        if found is None:
            raise exceptions.NotFound(f"Entity {key!r} has no regularity {rid!r}.")
        return Response(present.regularity_record(found))


class EntityDecisionsView(TeamAPIView):
    @extend_schema(
        operation_id="decisions_list",
        summary="List decisions in time order",
        description="The entity's decisions oldest first (ties by id), a page at a time.",
        parameters=[
            doc.KEY,
            doc.TIME_FROM,
            doc.TIME_TO,
            OpenApiParameter(
                "action",
                OpenApiTypes.STR,
                enum=list(Decision.Action.values),
                description="Only decisions with this action.",
            ),
            *doc.PAGED,
        ],
        responses={200: doc.page_of("DecisionPage", doc.DecisionShape), **doc.problems(404)},
        examples=[doc.page_example("Decisions", DECISION_EXAMPLE)],
        tags=["memory"],
    )
    def get(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        rows = selectors.decisions_for(entity)
        start, end = time_param(request, "from"), time_param(request, "to")
        if start:
            rows = rows.filter(occurred_at__gte=start)
        if end:
            rows = rows.filter(occurred_at__lt=end)
        action = choice_param(request, "action", Decision.Action.values)
        if action:
            rows = rows.filter(action=action)
        page, next_url = keyset_page(request, rows, DECISIONS_ORDER)
        return Response({"results": [present.decision_record(d) for d in page], "next": next_url})


class EntityDecisionView(TeamAPIView):
    @extend_schema(
        operation_id="decisions_retrieve",
        summary="One decision",
        description="A decision by id, with its evidence and intervention control.",
        parameters=[
            doc.KEY,
            OpenApiParameter("pk", doc.ID, OpenApiParameter.PATH, description="The decision's id."),
        ],
        responses={200: doc.DecisionShape, **doc.problems(404)},
        examples=[doc.example("A decision", DECISION_EXAMPLE)],
        tags=["memory"],
    )
    def get(self, request: Request, key: str, pk: int) -> Response:
        entity = self.entity(request, key)
        found = selectors.decision_detail(entity, pk)
        if found is None:
            raise exceptions.NotFound(f"Entity {key!r} has no decision {pk}.")
        return Response(present.decision_record(found))
