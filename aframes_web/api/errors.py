"""Every API error is an RFC 9457 problem: ``application/problem+json`` with ``type``,
``title``, ``status`` and ``detail`` (the types: ``aframes_web.api.problems``).
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, renderers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from aframes_web.api.problems import PROBLEM_MEDIA_TYPE, PROBLEMS, Problem, problem_body

_BY_STATUS = {
    400: "validation",
    401: "authentication",
    403: "permission",
    404: "not-found",
    405: "method-not-allowed",
    406: "not-acceptable",
    409: "conflict",
    413: "payload-too-large",
    415: "unsupported-media-type",
    422: "unprocessable",
    429: "throttled",
}


def _messages(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [m for item in value for m in _messages(item)]
    if isinstance(value, dict):
        return [f"{k}: {m}" for k, v in value.items() for m in _messages(v)]
    return [str(value)]


def _validation_body(data: Any) -> dict[str, Any]:
    """A serializer's or a view's ValidationError as a problem that names each field."""
    if isinstance(data, dict):
        fields = {
            name: [str(m) for m in (v if isinstance(v, list) else [v])]
            for name, v in data.items()
            if name != "detail"
        }
        lines = _messages(data.get("detail", [])) + [
            f"{name}: {message}" for name, messages in fields.items() for message in messages
        ]
        extensions = {"fields": fields} if fields else {}
        return problem_body(
            "validation", " ".join(lines) or "The request is invalid.", **extensions
        )
    return problem_body("validation", " ".join(_messages(data)) or "The request is invalid.")


def _as_problem(response: Response, exc: Exception) -> None:
    if isinstance(exc, Problem):
        response.data = problem_body(exc.slug, str(exc.detail), **exc.extensions)
    elif isinstance(exc, exceptions.ValidationError):
        response.data = _validation_body(exc.detail)
    elif isinstance(exc, exceptions.ParseError):  # the body itself could not be read
        response.data = problem_body("invalid-body", str(exc.detail))
    else:
        slug = _BY_STATUS.get(response.status_code, "validation")
        detail = response.data.get("detail") if isinstance(response.data, dict) else None
        body = problem_body(slug, str(detail or PROBLEMS[slug].title))
        body["status"] = response.status_code
        response.data = body
    response.content_type = PROBLEM_MEDIA_TYPE


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    _as_problem(response, exc)
    request = context.get("request")
    if request is not None:
        # A problem is JSON whatever the view renders otherwise (NDJSON, documents).
        request.accepted_renderer = renderers.JSONRenderer()
        request.accepted_media_type = PROBLEM_MEDIA_TYPE
    return response


@csrf_exempt  # it changes nothing, and a POST to a wrong path is a 404, not a CSRF page
def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """A path under the API that matches no endpoint: the same problem as a missing object."""
    body = problem_body("not-found", f"{request.path} is not an endpoint of this API.")
    return HttpResponse(json.dumps(body), status=404, content_type=PROBLEM_MEDIA_TYPE)
