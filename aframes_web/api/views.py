"""REST views: each validates its input and calls one service or selector."""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable, Collection, Iterator
from datetime import date, datetime, timedelta
from operator import attrgetter
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpResponse, HttpResponseNotModified, StreamingHttpResponse
from django.utils import timezone
from django.utils.http import parse_etags
from rest_framework import exceptions, renderers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from aframes_web.activity.selectors import (
    compile_request,
    document_current,
    evidence_events,
    frames_for_entity,
)
from aframes_web.api.body import BodyError, decode_events, read_body
from aframes_web.api.permissions import HasScope
from aframes_web.api.selectors import (
    FORMATS,
    Rendering,
    day_rendering,
    days_listed,
    frames_listed,
    pending_days,
    window_rendering,
)
from aframes_web.api.serializers import (
    EntityCreateSerializer,
    EntitySerializer,
    day_summary,
    event_record,
    frame_record,
)
from aframes_web.streams.models import Entity
from aframes_web.streams.records import KINDS, FieldInvalid, parse_timestamp
from aframes_web.streams.selectors import entity_get, entity_overview, events_for_entity
from aframes_web.streams.services import (
    BatchRejected,
    EntityError,
    EntityExists,
    entity_create,
    events_ingest,
)
from aframes_web.teams.auth import principal_for
from aframes_web.teams.models import Scope
from compiler.document import expand_runs

# Pages of events and frames.
PAGE_DEFAULT = 500
PAGE_MAX = 5000


class NDJSONRenderer(renderers.BaseRenderer):
    media_type = "application/x-ndjson"
    format = "ndjson"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return (json.dumps(data) + "\n").encode()


class TeamAPIView(APIView):
    permission_classes = [HasScope]
    required_scopes: dict[str, str] = {"GET": Scope.READ, "HEAD": Scope.READ}

    def entity(self, request: Request, key: str, *, overview: bool = False) -> Entity:
        team = principal_for(request).team
        if overview:
            entity = entity_overview(team=team).filter(key=key).first()
        else:
            entity = entity_get(team=team, key=key)
        if entity is None:
            # Another team's entity is indistinguishable from a missing one (principle 7).
            raise exceptions.NotFound(f"Team {team.slug!r} has no entity {key!r}.")
        return entity


class EntityListView(TeamAPIView):
    required_scopes = {"GET": Scope.READ, "POST": Scope.WRITE}

    def get(self, request: Request) -> Response:
        team = principal_for(request).team
        return Response({"results": EntitySerializer(entity_overview(team=team), many=True).data})

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
            code = status.HTTP_409_CONFLICT if isinstance(err, EntityExists) else 400
            return Response(
                {"detail": err.message, "fields": {err.field: [err.message]}}, status=code
            )
        return Response(EntitySerializer(entity).data, status=status.HTTP_201_CREATED)


class EntityDetailView(TeamAPIView):
    def get(self, request: Request, key: str) -> Response:
        return Response(EntitySerializer(self.entity(request, key, overview=True)).data)


def _encode_cursor(moment: datetime, event_id: int) -> str:
    return base64.urlsafe_b64encode(f"{moment.isoformat()}|{event_id}".encode()).decode()


def _decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        moment, _, event_id = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        return datetime.fromisoformat(moment), int(event_id)
    except (ValueError, UnicodeDecodeError):
        raise exceptions.ValidationError({"cursor": ["is not a cursor this API issued."]}) from None


def _time_param(request: Request, name: str) -> datetime | None:
    raw = request.query_params.get(name)
    if not raw:
        return None
    try:
        return parse_timestamp(raw, name)
    except FieldInvalid as problem:
        raise exceptions.ValidationError({name: [problem.message]}) from None


def _cursor_param(request: Request) -> tuple[datetime, int] | None:
    cursor = request.query_params.get("cursor")
    return _decode_cursor(cursor) if cursor else None


def _choice_param(
    request: Request, name: str, choices: Collection[str], default: str | None = None
) -> str | None:
    """The query parameter ``name`` if it is one of ``choices``; ``default`` when absent."""
    value = request.query_params.get(name) or default
    if value is not None and value not in choices:
        raise exceptions.ValidationError({name: [f"must be one of {', '.join(choices)}."]})
    return value


def _after_cursor(request: Request, rows: QuerySet[Any], field: str) -> QuerySet[Any]:
    """``rows`` after the page cursor, if any, in (``field``, id) order."""
    after = _cursor_param(request)
    if after is None:
        return rows
    moment, last_id = after
    return rows.filter(**{f"{field}__gt": moment}) | rows.filter(
        **{field: moment, "id__gt": last_id}
    )


def _int_param(
    request: Request, name: str, *, low: int, high: int | None = None, default: int | None = None
) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise exceptions.ValidationError({name: ["must be a whole number."]}) from None
    if value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise exceptions.ValidationError({name: [f"must be {bounds}, got {value}."]})
    return value


def _keyset_page(
    request: Request, rows: QuerySet[Any], *, moment: Callable[[Any], datetime]
) -> tuple[list[Any], str | None]:
    """One page of rows in (moment, id) order and the URL of the next page, if any."""
    limit = min(_int_param(request, "limit", low=1, default=PAGE_DEFAULT) or 1, PAGE_MAX)
    page = list(rows[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    next_url = None
    if more:
        query = request.query_params.copy()
        query["cursor"] = _encode_cursor(moment(page[-1]), page[-1].id)
        next_url = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
    return page, next_url


def _include_text(request: Request) -> bool:
    """Whether typed text and clipboard content are asked for; only the admin scope may."""
    include_text = request.query_params.get("include_text") in ("1", "true")
    if include_text and Scope.ADMIN not in principal_for(request).scopes:
        raise exceptions.PermissionDenied("include_text needs the 'admin' scope.")
    return include_text


class EntityEventsView(TeamAPIView):
    required_scopes = {"GET": Scope.READ, "POST": Scope.WRITE}
    renderer_classes = [renderers.JSONRenderer, NDJSONRenderer]

    def post(self, request: Request, key: str) -> Response:
        entity = self.entity(request, key)
        try:
            body = read_body(request._request, limit=settings.AFRAMES_MAX_BATCH_BYTES)
            items = decode_events(
                request._request, body, max_events=settings.AFRAMES_MAX_BATCH_EVENTS
            )
        except BodyError as err:
            data: dict[str, Any] = {"detail": err.message}
            if err.errors:
                data["errors"] = [e.as_dict() for e in err.errors]
            return Response(data, status=err.status)
        if request.query_params.get("decide") in ("1", "true"):
            from aframes_web.api.memory_views import decide_events

            return decide_events(entity, items, request)
        try:
            result = events_ingest(entity=entity, items=items)
        except BatchRejected as rejected:
            return Response(
                {
                    "detail": f"{len(rejected.errors)} of {len(items)} events are invalid; "
                    "nothing was stored.",
                    "errors": [e.as_dict() for e in rejected.errors],
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        code = status.HTTP_201_CREATED if result.accepted else status.HTTP_200_OK
        return Response(result.as_dict(), status=code)

    def get(self, request: Request, key: str) -> Response | StreamingHttpResponse:
        entity = self.entity(request, key)
        kind = _choice_param(request, "kind", KINDS)
        include_text = _include_text(request)
        events = events_for_entity(
            entity=entity,
            start=_time_param(request, "from"),
            end=_time_param(request, "to"),
            kind=kind,
            after=_cursor_param(request),
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

            return StreamingHttpResponse(lines(), content_type=NDJSONRenderer.media_type)
        page, next_url = _keyset_page(request, events, moment=attrgetter("occurred_at"))
        return Response(
            {
                "results": [event_record(e, include_text=include_text) for e in page],
                "next": next_url,
            }
        )


# --- Compiled activity (desktop entities) -------------------------------------------------------

CONTEXT_HOURS_DEFAULT = 24
CONTEXT_HOURS_MAX = 168  # a week: a window is compiled on request, so its cost is bounded
EVIDENCE_IDS_MAX = 5000
MIN_MINUTES_MAX = 1440.0  # a day; a larger floor would only ever omit everything
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_ID_RUN = re.compile(r"(\d{1,18})(?:-(\d{1,18}))?")  # 18 digits stay inside a bigint


class FormatIsAParameter(DefaultContentNegotiation):
    """``?format=`` picks the document format here, not a DRF renderer; errors stay JSON."""

    def select_renderer(
        self, request: Request, renderers: list[Any], format_suffix: str | None = None
    ) -> tuple[Any, str]:
        return renderers[0], renderers[0].media_type


def _day_value(raw: str, name: str) -> date:
    try:
        if _DAY.fullmatch(raw):
            return date.fromisoformat(raw)
    except ValueError:
        pass
    raise exceptions.ValidationError({name: [f"{raw!r} is not a date like 2026-03-02."]})


def _min_minutes_param(request: Request) -> float | None:
    raw = request.query_params.get("min_minutes")
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value <= MIN_MINUTES_MAX:  # also false for nan
        raise exceptions.ValidationError(
            {"min_minutes": [f"must be a number of minutes from 0 to 1440, got {raw!r}."]}
        )
    return value


def _ids_param(request: Request) -> list[int]:
    """Event ids as ``12,15`` or runs ``12-15,19``; counted before expanding, then capped."""
    raw = request.query_params.get("ids", "")
    parts = [part.strip() for part in raw.split(",") if part.strip()]
    if not parts:
        raise exceptions.ValidationError(
            {"ids": ["is required: event ids like 12,19 or runs like 12-15,19."]}
        )
    total = 0
    for part in parts:
        match = _ID_RUN.fullmatch(part)
        if match is None:
            raise exceptions.ValidationError(
                {"ids": [f"{part!r} is not an event id or a run like 12-15."]}
            )
        low, high = int(match[1]), int(match[2] or match[1])
        if high < low:
            raise exceptions.ValidationError(
                {"ids": [f"the run {part!r} runs backwards; write {high}-{low}."]}
            )
        total += high - low + 1
        if total > EVIDENCE_IDS_MAX:
            raise exceptions.ValidationError(
                {"ids": [f"names more than {EVIDENCE_IDS_MAX:,} ids; ask in smaller pieces."]}
            )
    return sorted(set(expand_runs(",".join(parts))))


def _yaml_available() -> bool:
    try:
        import yaml  # noqa: F401  # optional dependency of the compiler
    except ImportError:
        return False
    return True


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


class ActivityAPIView(TeamAPIView):
    def desktop(self, request: Request, key: str) -> Entity:
        entity = self.entity(request, key)
        if entity.scope != Entity.Scope.DESKTOP:
            raise exceptions.NotFound(
                f"Entity {key!r} is a {entity.scope} entity; only desktop entities have "
                "compiled days, frames, context and evidence."
            )
        return entity


class EntityDaysView(ActivityAPIView):
    def get(self, request: Request, key: str) -> Response:
        entity = self.desktop(request, key)
        pending = pending_days(entity=entity)
        documents = list(days_listed(entity=entity))
        compiled = {document.day for document in documents}
        return Response(
            {
                "results": [day_summary(d, pending=d.day in pending) for d in documents],
                # Days whose first compile is still to come.
                "pending_days": [day.isoformat() for day in sorted(pending - compiled)],
            }
        )


class EntityDayView(ActivityAPIView):
    content_negotiation_class = FormatIsAParameter

    def get(self, request: Request, key: str, day: str) -> HttpResponse:
        entity = self.desktop(request, key)
        when = _day_value(day, "date")
        fmt = _choice_param(request, "format", FORMATS, default="json")
        min_minutes = _min_minutes_param(request)
        budget = _int_param(request, "budget_tokens", low=1)
        if budget is not None and fmt != "context":
            raise exceptions.ValidationError({"budget_tokens": ["applies only to format=context."]})
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


class EntityFramesView(ActivityAPIView):
    def get(self, request: Request, key: str) -> Response:
        entity = self.desktop(request, key)
        params = request.query_params
        frames = frames_for_entity(
            entity=entity,
            start=_time_param(request, "from"),
            end=_time_param(request, "to"),
            app=params.get("app") or None,
            site=params.get("site") or None,
            day=_day_value(params["day"], "day") if params.get("day") else None,
            after=_cursor_param(request),
        )
        page, next_url = _keyset_page(request, frames_listed(frames), moment=attrgetter("start"))
        zone = ZoneInfo(entity.timezone)
        return Response({"results": [frame_record(f, zone=zone) for f in page], "next": next_url})


class EntityContextView(ActivityAPIView):
    def get(self, request: Request, key: str) -> HttpResponse:
        entity = self.desktop(request, key)
        hours = _int_param(
            request, "hours", low=1, high=CONTEXT_HOURS_MAX, default=CONTEXT_HOURS_DEFAULT
        )
        assert hours is not None  # it has a default
        # Whole seconds: the document states its window to the second.
        end = (_time_param(request, "at") or timezone.now()).replace(microsecond=0)
        budget = _int_param(request, "budget_tokens", low=1)
        rendering = window_rendering(
            entity=entity,
            start=end - timedelta(hours=hours),
            end=end,
            include_text=_include_text(request),
            budget_tokens=budget,
        )
        return _conditional(request, rendering)


class EntityEvidenceView(ActivityAPIView):
    def get(self, request: Request, key: str) -> Response:
        entity = self.desktop(request, key)
        ids = _ids_param(request)
        include_text = _include_text(request)
        events = list(evidence_events(entity=entity, ids=ids))
        found = {event.id for event in events}
        return Response(
            {
                "results": [event_record(e, include_text=include_text) for e in events],
                # Another team's id and an id that never existed read the same (principle 7).
                "missing": [i for i in ids if i not in found],
            }
        )
