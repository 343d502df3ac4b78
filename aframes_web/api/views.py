"""REST views: each validates its input and calls one service or selector."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import StreamingHttpResponse
from rest_framework import exceptions, renderers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from aframes_web.api.body import BodyError, decode_events, read_body
from aframes_web.api.permissions import HasScope
from aframes_web.api.serializers import EntityCreateSerializer, EntitySerializer, event_record
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

EVENTS_PAGE_DEFAULT = 500
EVENTS_PAGE_MAX = 5000


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
        params = request.query_params
        kind = params.get("kind")
        if kind and kind not in KINDS:
            raise exceptions.ValidationError({"kind": [f"must be one of {', '.join(KINDS)}."]})
        include_text = params.get("include_text") in ("1", "true")
        if include_text and Scope.ADMIN not in principal_for(request).scopes:
            raise exceptions.PermissionDenied("include_text needs the 'admin' scope.")
        events = events_for_entity(
            entity=entity,
            start=_time_param(request, "from"),
            end=_time_param(request, "to"),
            kind=kind,
            after=_decode_cursor(params["cursor"]) if params.get("cursor") else None,
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
        try:
            limit = min(int(params.get("limit", EVENTS_PAGE_DEFAULT)), EVENTS_PAGE_MAX)
        except ValueError:
            raise exceptions.ValidationError({"limit": ["must be a whole number."]}) from None
        if limit < 1:
            raise exceptions.ValidationError({"limit": ["must be at least 1."]})
        page = list(events[: limit + 1])
        more = len(page) > limit
        page = page[:limit]
        next_url = None
        if more:
            query = params.copy()
            query["cursor"] = _encode_cursor(page[-1].occurred_at, page[-1].id)
            next_url = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
        return Response(
            {
                "results": [event_record(e, include_text=include_text) for e in page],
                "next": next_url,
            }
        )
