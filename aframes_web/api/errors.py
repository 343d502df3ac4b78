"""Every API error is an RFC 9457 problem: ``application/problem+json`` with ``type``,
``title``, ``status`` and ``detail``.

``PROBLEMS`` is the one table of problem types; docs/reference/rest.md lists it for clients.
The extension members clients already read stay where they were: ``fields`` (field or
parameter name to messages), ``errors`` (one per bad item of a batch) and ``decisions`` (what
was decided before a batch stopped).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, renderers
from rest_framework.response import Response

PROBLEM_MEDIA_TYPE = "application/problem+json"
# Tag URIs (RFC 4151) name a type for good without pretending to be a page one can fetch.
TYPE_PREFIX = "tag:aframes.dev,2026:problem/"


@dataclass(frozen=True, slots=True)
class ProblemType:
    slug: str
    status: int
    title: str

    @property
    def uri(self) -> str:
        return TYPE_PREFIX + self.slug


PROBLEMS: dict[str, ProblemType] = {
    p.slug: p
    for p in (
        ProblemType("validation", 400, "The request has invalid fields or parameters."),
        ProblemType("invalid-body", 400, "The request body cannot be read."),
        ProblemType("invalid-batch", 400, "Some events of the batch are invalid."),
        ProblemType("authentication", 401, "Authentication is missing or failed."),
        ProblemType("permission", 403, "The credentials do not allow this."),
        ProblemType("not-found", 404, "There is no such resource."),
        ProblemType("method-not-allowed", 405, "This resource does not answer this method."),
        ProblemType("not-acceptable", 406, "No representation matches what was asked for."),
        ProblemType("conflict", 409, "The resource exists already."),
        ProblemType("payload-too-large", 413, "The request is larger than the server accepts."),
        ProblemType("unsupported-media-type", 415, "The body's media type is not supported."),
        ProblemType("unprocessable", 422, "The request is well-formed but cannot be applied."),
        ProblemType("throttled", 429, "Too many requests for this token."),
    )
}
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


class Problem(exceptions.APIException):
    """An error of kind ``slug`` with its detail and extension members (``fields``, ``errors``,
    ``decisions``); views raise it and ``exception_handler`` writes it."""

    def __init__(self, slug: str, detail: str, **extensions: Any) -> None:
        kind = PROBLEMS[slug]
        self.slug = slug
        self.status_code = kind.status
        self.extensions = extensions
        super().__init__(detail)


def parameter_problem(name: str, message: str) -> Problem:
    """A 400 naming the parameter (query, path or body field) ``name``."""
    return Problem("validation", f"{name}: {message}", fields={name: [message]})


def problem_body(slug: str, detail: str, **extensions: Any) -> dict[str, Any]:
    kind = PROBLEMS[slug]
    return {
        "type": kind.uri,
        "title": kind.title,
        "status": kind.status,
        "detail": detail,
        **extensions,
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
    # stays: rest_framework.views reads DEFAULT_PARSER_CLASSES when it is imported, and our
    # parser imports this module for its problems: imported above, the two would be a cycle.
    from rest_framework.views import exception_handler as drf_exception_handler

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
