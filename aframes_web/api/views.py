"""REST views: each validates its input and calls one service or selector."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.http import HttpResponse, HttpResponseNotModified, StreamingHttpResponse
from django.utils import timezone
from django.utils.http import parse_etags
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, renderers, serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response

from aframes_web.activity.queries import (
    CONTEXT_HOURS_DEFAULT,
    CONTEXT_HOURS_MAX,
    CONTEXT_HOURS_MIN,
    ContextQuery,
)
from aframes_web.activity.renderings import (
    FORMATS,
    Rendering,
    context_rendering,
    day_rendering,
    days_listed,
    frames_listed,
    pending_days,
)
from aframes_web.activity.selectors import (
    compile_request,
    document_current,
    evidence_events,
    frames_for_entity,
)
from aframes_web.annotation.selectors import blind_entities
from aframes_web.api import schema as doc
from aframes_web.api.base import ActivityAPIView, TeamAPIView
from aframes_web.api.body import BodyError, decode_events, read_body
from aframes_web.api.memory_views import decide_events
from aframes_web.api.paging import Keyset, cursor_values, keyset_page
from aframes_web.api.params import (
    MIN_MINUTES_MAX,
    choice_param,
    day_param,
    day_value,
    flag_param,
    ids_param,
    int_param,
    min_minutes_param,
    policy_param,
    time_param,
)
from aframes_web.api.problems import Problem, parameter_problem
from aframes_web.api.serializers import (
    EntityCreateSerializer,
    EntitySerializer,
    day_summary,
    frame_record,
)
from aframes_web.streaming import streamed
from aframes_web.streams.records import KINDS, SCOPES, FieldInvalid
from aframes_web.streams.selectors import (
    entity_overview,
    event_record,
    events_for_entity,
)
from aframes_web.streams.services import (
    BatchRejected,
    EntityError,
    EntityExists,
    entity_create,
    events_ingest,
)
from aframes_web.teams.auth import principal_for
from aframes_web.teams.models import Scope
from memory.engine.decide import POLICIES

# The orders of the lists (aframes_web.api.paging); the last field of each is unique.
EVENTS_ORDER = Keyset("events", ("occurred_at", "id"))
FRAMES_ORDER = Keyset("frames", ("start", "id"))
ENTITIES_ORDER = Keyset("entities", ("key",))
DAYS_ORDER = Keyset("days", ("day",))


class NDJSONRenderer(renderers.BaseRenderer):
    media_type = "application/x-ndjson"
    format = "ndjson"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return (json.dumps(data) + "\n").encode()


def _include_text(request: Request) -> bool:
    """Whether typed text and clipboard content are asked for; only the admin scope may."""
    include_text = flag_param(request, "include_text")
    if include_text and Scope.ADMIN not in principal_for(request).scopes:
        raise exceptions.PermissionDenied("include_text needs the 'admin' scope.")
    return include_text


ENTITY_EXAMPLE = {
    "key": "alice-laptop",
    "name": "Alice's laptop",
    "scope": "desktop",
    "timezone": "Europe/Berlin",
    "created_at": "2026-03-01T12:00:00.000000Z",
    "days_captured": 12,
    "event_total": 48210,
    "last_activity": "2026-03-13T17:42:10.500000Z",
}


class EntityListView(TeamAPIView):
    required_scopes = {"GET": Scope.READ, "POST": Scope.WRITE}

    @extend_schema(
        operation_id="entities_list",
        summary="List the team's entities",
        description="The team's entities by key, with days captured, events and last activity.",
        parameters=[
            OpenApiParameter(
                "scope",
                OpenApiTypes.STR,
                enum=list(SCOPES),
                description="Only entities of this scope.",
            ),
            *doc.PAGED,
        ],
        responses={
            200: doc.page_of("EntityPage", EntitySerializer),
            **doc.problems(),
        },
        examples=[doc.page_example("A page of entities", ENTITY_EXAMPLE)],
        tags=["entities"],
    )
    def get(self, request: Request) -> Response:
        principal = principal_for(request)
        # Entities the caller labels blind are not listed (their last activity is later
        # than the point they are on).
        rows = entity_overview(team=principal.team).exclude(pk__in=blind_entities(principal.person))
        scope = choice_param(request, "scope", SCOPES)
        if scope:
            rows = rows.filter(scope=scope)
        page, next_url = keyset_page(request, rows, ENTITIES_ORDER)
        return Response({"results": EntitySerializer(page, many=True).data, "next": next_url})

    @extend_schema(
        operation_id="entities_create",
        summary="Create an entity",
        description="A new entity of the team (write scope). Its key is unique in the team.",
        request=EntityCreateSerializer,
        responses={
            201: EntitySerializer,
            **doc.problems(409, 415),
        },
        examples=[
            doc.example(
                "The new entity",
                {**ENTITY_EXAMPLE, "days_captured": 0, "event_total": 0, "last_activity": None},
            )
        ],
        tags=["entities"],
    )
    def post(self, request: Request) -> Response:
        team = principal_for(request).team
        form = EntityCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            entity = entity_create(
                team=team,
                key=data["key"],
                scope=data["scope"],
                name=data.get("name") or None,
                timezone_name=data["timezone"],
            )
        except EntityError as err:
            slug = "conflict" if isinstance(err, EntityExists) else "validation"
            raise Problem(slug, err.message, fields={err.field: [err.message]}) from None
        created = entity_overview(team=team).get(pk=entity.pk)
        return Response(EntitySerializer(created).data, status=status.HTTP_201_CREATED)


class EntityDetailView(TeamAPIView):
    @extend_schema(
        operation_id="entities_retrieve",
        summary="One entity",
        description="An entity of the team with its figures; another team's reads as missing.",
        parameters=[doc.KEY],
        responses={200: EntitySerializer, **doc.problems(404)},
        examples=[doc.example("An entity", ENTITY_EXAMPLE)],
        tags=["entities"],
    )
    def get(self, request: Request, key: str) -> Response:
        return Response(EntitySerializer(self.entity(request, key, overview=True)).data)


class EntityEventsView(TeamAPIView):
    required_scopes = {"GET": Scope.READ, "POST": Scope.WRITE}
    renderer_classes = [renderers.JSONRenderer, NDJSONRenderer]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        # ?format= picks the renderer (json or ndjson); DRF passes over a value it does not
        # know, an empty one included, where a caller should hear that it is wrong.
        if "format" in request.query_params:
            choice_param(request, "format", ("json", "ndjson"))

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # ?format= and Accept shape the events read back; what ingestion answers (counts and
        # decisions) is one JSON object, as documented, whatever the read format asked for.
        if request.method == "POST":
            json_renderer = renderers.JSONRenderer()
            return json_renderer, json_renderer.media_type
        return super().perform_content_negotiation(request, force)

    @extend_schema(
        operation_id="events_ingest",
        summary="Ingest a batch of events",
        description=(
            "A JSON array or NDJSON (`Content-Type: application/x-ndjson`), optionally gzip "
            "(`Content-Encoding: gzip`). The whole batch is validated first: one invalid item "
            "rejects it (400, one error per item) and nothing is stored. Events already stored "
            "(same `source_key`) count as duplicates. `decide=1` decides each event with "
            "ProactMem before committing it and answers the decisions."
        ),
        parameters=[
            doc.KEY,
            OpenApiParameter(
                "decide",
                OpenApiTypes.STR,
                enum=["1", "true", "0", "false"],
                description="`1`: decide every event in order (ProactMem) before storing it.",
            ),
            OpenApiParameter(
                "policy",
                OpenApiTypes.STR,
                enum=sorted(POLICIES),
                description="With decide=1: the decision policy (default rules).",
            ),
        ],
        request={
            "application/json": doc.EventInputShape(many=True),
            "application/x-ndjson": OpenApiTypes.STR,
        },
        responses={
            (201, "application/json"): OpenApiResponse(
                doc.IngestAnswerShape,
                description="Stored (accepted > 0), or with decide=1 the "
                "decisions (`accepted`, `duplicates`, `decisions`).",
            ),
            (200, "application/json"): OpenApiResponse(
                doc.IngestAnswerShape, description="Every event was a duplicate."
            ),
            **doc.problems(404, 413, 415),
        },
        examples=[
            doc.example("Stored", {"accepted": 2, "duplicates": 0, "dropped_text_fields": 0}),
        ],
        tags=["events"],
    )
    def post(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        if "policy" in request.query_params:  # checked even without decide: a typo says so
            policy_param(request, default="rules")
        try:
            body = read_body(request._request, limit=settings.AFRAMES_MAX_BATCH_BYTES)
            items = decode_events(
                request._request, body, max_events=settings.AFRAMES_MAX_BATCH_EVENTS
            )
        except BodyError as err:
            raise err.problem() from None
        if flag_param(request, "decide"):
            return decide_events(entity, items, request)
        try:
            result = events_ingest(entity=entity, items=items)
        except BatchRejected as rejected:
            raise Problem(
                "invalid-batch",
                f"{len(rejected.errors)} of {len(items)} events are invalid; nothing was stored.",
                errors=[e.as_dict() for e in rejected.errors],
            ) from None
        code = status.HTTP_201_CREATED if result.accepted else status.HTTP_200_OK
        return Response(result.as_dict(), status=code)

    @extend_schema(
        operation_id="events_list",
        summary="Read events in time order",
        description=(
            "The entity's events oldest first (ties by id), a page at a time; with "
            "`Accept: application/x-ndjson` all of them as one stream of lines (no paging). "
            "Typed text and clipboard content only with include_text=1 (admin scope)."
        ),
        parameters=[
            doc.KEY,
            doc.TIME_FROM,
            doc.TIME_TO,
            OpenApiParameter(
                "kind", OpenApiTypes.STR, enum=list(KINDS), description="Only events of this kind."
            ),
            doc.INCLUDE_TEXT,
            *doc.PAGED,
        ],
        responses={
            (200, "application/json"): doc.page_of("EventPage", doc.EventShape),
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR, description="One event record per line."
            ),
            **doc.problems(404),
        },
        examples=[doc.page_example("A page of events", doc.EVENT_EXAMPLE)],
        tags=["events"],
    )
    def get(self, request: Request, key: str) -> Response | StreamingHttpResponse:
        entity = self.entity(request, key)
        kind = choice_param(request, "kind", KINDS)
        include_text = _include_text(request)
        after = cursor_values(request, EVENTS_ORDER)
        events = events_for_entity(
            entity=entity,
            start=time_param(request, "from"),
            end=time_param(request, "to"),
            kind=kind,
            after=(after[0], after[1]) if after else None,
        )
        if request.accepted_renderer.format == "ndjson":

            def lines() -> Iterator[bytes]:
                for event in events.iterator(chunk_size=2000):
                    yield (
                        json.dumps(
                            event_record(event, include_text=include_text), ensure_ascii=False
                        )
                        + "\n"
                    ).encode()

            return streamed(request._request, lines(), content_type=NDJSONRenderer.media_type)
        page, next_url = keyset_page(request, events, EVENTS_ORDER, applied=True)
        return Response(
            {
                "results": [event_record(e, include_text=include_text) for e in page],
                "next": next_url,
            }
        )


# --- Compiled activity (desktop entities) -------------------------------------------------------


class FormatIsAParameter(DefaultContentNegotiation):
    """``?format=`` picks the document format here, not a DRF renderer; errors stay JSON."""

    def select_renderer(
        self, request: Request, renderers: list[Any], format_suffix: str | None = None
    ) -> tuple[Any, str]:
        return renderers[0], renderers[0].media_type


def _yaml_available() -> bool:
    return importlib.util.find_spec("yaml") is not None  # optional dependency of the compiler


def _conditional(request: Request, rendering: Rendering) -> HttpResponse:
    """304 when the client holds these bytes already (If-None-Match), else the bytes."""
    # private: one team's data is never stored by a shared cache; no-cache: revalidate each time.
    headers = {"ETag": rendering.etag, "Cache-Control": "private, no-cache"}
    # If-None-Match compares weakly (RFC 9110 §13.1.2): W/"x" matches "x".
    held = {
        tag.removeprefix("W/") for tag in parse_etags(request.META.get("HTTP_IF_NONE_MATCH", ""))
    }
    if "*" in held or rendering.etag in held:
        return HttpResponseNotModified(headers=headers)
    return HttpResponse(rendering.render(), content_type=rendering.content_type, headers=headers)


DAY_EXAMPLE = {
    "day": "2026-03-02",
    "version": 1,
    "sha256": "9f2c…",
    "frames": 41,
    "active_minutes": 312.5,
    "events": 5120,
    "compiled_at": "2026-03-02T18:00:01.250000Z",
    "compile_ms": 84.2,
    "pending": False,
}


class EntityDaysView(ActivityAPIView):
    @extend_schema(
        operation_id="days_list",
        summary="List compiled days",
        description=(
            "The desktop entity's current day documents by day (figures only), a page at a "
            "time. `pending_days` names the days whose first compile is still to come."
        ),
        parameters=[doc.KEY, doc.DAY_FROM, doc.DAY_TO, *doc.PAGED],
        responses={
            200: doc.page_of(
                "DayPage",
                doc.DaySummaryShape,
                pending_days=serializers.ListField(
                    child=serializers.DateField(), help_text="Days with events, no document yet."
                ),
            ),
            **doc.problems(404),
        },
        examples=[
            doc.example(
                "Days", {"results": [DAY_EXAMPLE], "next": None, "pending_days": ["2026-03-03"]}
            )
        ],
        tags=["activity"],
    )
    def get(self, request: Request, key: str) -> Response:
        entity = self.desktop(request, key)
        start, end = day_param(request, "from"), day_param(request, "to")
        documents = days_listed(entity=entity)
        if start:
            documents = documents.filter(day__gte=start)
        if end:
            documents = documents.filter(day__lte=end)
        page, next_url = keyset_page(request, documents, DAYS_ORDER)
        pending = {
            day
            for day in pending_days(entity=entity)
            if (start is None or day >= start) and (end is None or day <= end)
        }
        compiled = set(days_listed(entity=entity).values_list("day", flat=True))
        return Response(
            {
                "results": [day_summary(d, pending=d.day in pending) for d in page],
                "next": next_url,
                # Days whose first compile is still to come.
                "pending_days": [day.isoformat() for day in sorted(pending - compiled)],
            }
        )


CONTEXT_EXAMPLE = (
    "Activity 2026-03-02T09:00 to 2026-03-02T10:00 (Europe/Berlin): measured from capture, "
    "no interpretation.\n09:00-09:10 Code main.py (10 min, 120 keys)\n"
)
FRAME_DOC_EXAMPLE = {"id": "f-812", "app": "Code", "start": "2026-03-02T09:00:05+01:00"}
_DOCUMENT_TYPES = {
    "json": "application/json",
    "yaml": "application/yaml",
    "md": "text/markdown",
    "context": "text/plain",
}


class EntityDayView(ActivityAPIView):
    content_negotiation_class = FormatIsAParameter

    @extend_schema(
        operation_id="days_retrieve",
        summary="One day's document",
        description=(
            "The day's activity document as compiled (JSON, YAML, Markdown or the agent "
            "context block), with a strong ETag from its sha256; If-None-Match answers 304. "
            "min_minutes, include_text and budget_tokens recompile on request (nothing stored)."
        ),
        parameters=[
            doc.KEY,
            OpenApiParameter(
                "day",
                OpenApiTypes.DATE,
                OpenApiParameter.PATH,
                description="The local day, e.g. 2026-03-02.",
            ),
            OpenApiParameter(
                "format",
                OpenApiTypes.STR,
                enum=list(FORMATS),
                description="json (default), yaml, md or context.",
            ),
            OpenApiParameter(
                "min_minutes",
                doc.number(0, MIN_MINUTES_MAX),
                description="Omit frames shorter than this (0 to 1440).",
            ),
            OpenApiParameter(
                "budget_tokens",
                doc.integer(1),
                description="format=context only: fit the block in this many tokens.",
            ),
            doc.INCLUDE_TEXT,
        ],
        responses={
            **{
                (200, media): OpenApiResponse(
                    OpenApiTypes.OBJECT if fmt == "json" else OpenApiTypes.STR,
                    description=f"format={fmt}",
                )
                for fmt, media in _DOCUMENT_TYPES.items()
            },
            304: OpenApiResponse(description="The client's copy (If-None-Match) is current."),
            **doc.problems(404),
        },
        examples=[
            doc.example(
                "format=context",
                CONTEXT_EXAMPLE,
                media_type="text/plain",
                status_codes=["200"],
            ),
            doc.example(
                "format=json",
                {"day": "2026-03-02", "frames": [FRAME_DOC_EXAMPLE], "generated_at": "…"},
                media_type="application/json",
                status_codes=["200"],
            ),
        ],
        tags=["activity"],
    )
    def get(self, request: Request, key: str, day: str) -> HttpResponse:
        entity = self.desktop(request, key)
        when = day_value(day, "date")  # the name clients have always read
        fmt = choice_param(request, "format", FORMATS, default="json")
        min_minutes = min_minutes_param(request)
        budget = int_param(request, "budget_tokens", low=1)
        if budget is not None and fmt != "context":
            raise parameter_problem("budget_tokens", "applies only to format=context.")
        include_text = _include_text(request)
        if fmt == "yaml" and not _yaml_available():
            raise exceptions.NotAcceptable(
                "format=yaml needs PyYAML on the server (pip install PyYAML); "
                "ask for format=json, md or context instead."
            )
        document = document_current(entity=entity, day=when)
        if document is None:
            request_row = compile_request(entity=entity, day=when)
            if request_row is None or not request_row.pending:
                why = "no desktop activity was captured that day."
            elif request_row.last_error:
                why = (
                    f"its compile failed ({request_row.last_error}); it is retried by the "
                    "periodic sweep (manage.py compile_pending)."
                )
            else:
                why = "a compile is pending: try again shortly."
            raise exceptions.NotFound(f"Entity {key!r} has no document for {when}; {why}")
        rendering = day_rendering(
            entity=entity,
            document=document,
            fmt=fmt,
            min_minutes=min_minutes,
            include_text=include_text,
            budget_tokens=budget,
        )
        return _conditional(request, rendering)


FRAME_EXAMPLE = {
    "frame_id": "f-812",
    "day": "2026-03-02",
    "app": "Firefox",
    "site": "github.com",
    "monitor": "0",
    "start": "2026-03-02T09:00:05+01:00",
    "end": "2026-03-02T09:12:40+01:00",
    "active_s": 702.0,
    "wall_s": 755.0,
    "keys": 120,
    "clicks": 14,
    "copies": 1,
    "transit": False,
    "interruptions": 0,
    "evidence": {"rows": "812-820,824", "inputs": "821-823"},
    "document": {"version": 1, "sha256": "9f2c…"},
}


class EntityFramesView(ActivityAPIView):
    @extend_schema(
        operation_id="frames_list",
        summary="Read frames in time order",
        description=(
            "Frames of the current documents, by start (ties by id); `from`/`to` keep frames "
            "overlapping [from, to). Times are local with the entity's offset, to the second, "
            "as in the document."
        ),
        parameters=[
            doc.KEY,
            doc.TIME_FROM,
            doc.TIME_TO,
            OpenApiParameter(
                "app", OpenApiTypes.STR, description="Only this app (case-insensitive)."
            ),
            OpenApiParameter(
                "site", OpenApiTypes.STR, description="Only this site (case-insensitive)."
            ),
            OpenApiParameter("day", OpenApiTypes.DATE, description="Only this local day."),
            *doc.PAGED,
        ],
        responses={200: doc.page_of("FramePage", doc.FrameShape), **doc.problems(404)},
        examples=[doc.page_example("A page of frames", FRAME_EXAMPLE)],
        tags=["activity"],
    )
    def get(self, request: Request, key: str) -> Response:
        entity = self.desktop(request, key)
        params = request.query_params
        after = cursor_values(request, FRAMES_ORDER)
        frames = frames_for_entity(
            entity=entity,
            start=time_param(request, "from"),
            end=time_param(request, "to"),
            app=params.get("app") or None,
            site=params.get("site") or None,
            day=day_param(request, "day"),
            after=(after[0], after[1]) if after else None,
        )
        page, next_url = keyset_page(request, frames_listed(frames), FRAMES_ORDER, applied=True)
        zone = ZoneInfo(entity.timezone)
        return Response({"results": [frame_record(f, zone=zone) for f in page], "next": next_url})


class EntityContextView(ActivityAPIView):
    @extend_schema(
        operation_id="context_retrieve",
        summary="The context block of a rolling window",
        description=(
            "The agent context block of the `hours` before `at` (default now), compiled on "
            "request across days, with an ETag; If-None-Match answers 304."
        ),
        parameters=[
            doc.KEY,
            OpenApiParameter(
                "hours",
                doc.number(CONTEXT_HOURS_MIN, CONTEXT_HOURS_MAX),
                description=f"Window length in hours, {CONTEXT_HOURS_MIN:g} to "
                f"{CONTEXT_HOURS_MAX:g} (default {CONTEXT_HOURS_DEFAULT:g}).",
            ),
            OpenApiParameter(
                "at",
                OpenApiTypes.DATETIME,
                description="End of the window, with an offset (default now).",
            ),
            OpenApiParameter(
                "budget_tokens", doc.integer(1), description="Fit the block in this many tokens."
            ),
            doc.INCLUDE_TEXT,
        ],
        responses={
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="The block."),
            304: OpenApiResponse(description="The client's copy (If-None-Match) is current."),
            **doc.problems(404),
        },
        examples=[
            doc.example(
                "The last 2 hours (the default)",
                CONTEXT_EXAMPLE,
                media_type="text/plain",
                status_codes=["200"],
            )
        ],
        tags=["activity"],
    )
    def get(self, request: Request, key: str) -> HttpResponse:
        entity = self.desktop(request, key)
        try:
            query = ContextQuery.build(
                entity=entity,
                now=timezone.now(),
                hours=request.query_params.get("hours"),
                at=time_param(request, "at"),
                include_text=_include_text(request),
                budget_tokens=int_param(request, "budget_tokens", low=1),
            )
        except FieldInvalid as problem:
            raise parameter_problem(problem.path, problem.message) from None
        return _conditional(request, context_rendering(query))


class EntityEvidenceView(ActivityAPIView):
    @extend_schema(
        operation_id="evidence_retrieve",
        summary="Events by id (a frame's or a fact's evidence)",
        description=(
            "The entity's events with these ids, in id order; `missing` names the ids it has "
            "no event of (another team's id reads the same as one that never existed)."
        ),
        parameters=[
            doc.KEY,
            OpenApiParameter(
                "ids",
                OpenApiTypes.STR,
                required=True,
                description="Event ids and runs: 12,19 or 12-15,19 (at most 5,000).",
            ),
            doc.INCLUDE_TEXT,
        ],
        responses={200: doc.EvidenceShape, **doc.problems(404)},
        examples=[doc.example("Evidence", {"results": [doc.EVENT_EXAMPLE], "missing": [813]})],
        tags=["activity"],
    )
    def get(self, request: Request, key: str) -> Response:
        entity = self.desktop(request, key)
        ids = ids_param(request)
        include_text = _include_text(request)
        events = list(evidence_events(entity=entity, ids=ids))
        found = {i for event in events for i in (event.id, event.row_id)}
        return Response(
            {
                "results": [event_record(e, include_text=include_text) for e in events],
                # Another team's id and an id that never existed read the same (principle 7).
                "missing": [i for i in ids if i not in found],
            }
        )
