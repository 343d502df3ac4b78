"""The API's problem types (RFC 9457) and the exception views raise for one.

``PROBLEMS`` is the one table of problem types; docs/reference/rest.md lists it for clients.
The extension members clients already read stay where they were: ``fields`` (field or
parameter name to messages), ``errors`` (one per bad item of a batch) and ``decisions`` (what
was decided before a batch stopped). ``aframes_web.api.errors`` writes every error as one.

Apart from the handler, so that what views, parsers and the schema import does not import
DRF's views: those read the parser setting when imported, and the parser raises a problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rest_framework import exceptions

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
