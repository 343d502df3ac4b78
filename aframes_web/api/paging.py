"""Keyset pages for every list of the API: ``{"results": [...], "next": URL | null}``.

A list names its order as a ``Keyset`` (fields, ``-`` for descending, the last one unique);
the cursor carries the last row's values of those fields, so the next page starts exactly
after it however rows are inserted meanwhile (no offsets). Cursors are signed: a client can
only hand back one this API issued, for the list that issued it.
"""

from __future__ import annotations

import base64
import functools
import operator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.core import signing
from django.db.models import Q, QuerySet
from rest_framework.request import Request

from aframes_web.api.params import int_param
from aframes_web.api.problems import parameter_problem

PAGE_DEFAULT = 500
PAGE_MAX = 5000
_SALT = "aframes.api.cursor"
_NOT_OURS = "is not a cursor this API issued for this list; start again without one."


@dataclass(frozen=True, slots=True)
class Keyset:
    """The order of one list: ``name`` ties a cursor to it, ``fields`` are its ORDER BY."""

    name: str
    fields: tuple[str, ...]

    def order(self) -> tuple[str, ...]:
        return self.fields

    def values(self, row: Any) -> list[Any]:
        return [_value(row, f.removeprefix("-")) for f in self.fields]

    def after(self, rows: QuerySet[Any], values: list[Any]) -> QuerySet[Any]:
        """Rows strictly after ``values`` in this order (a lexicographic comparison)."""
        clauses = []
        for i, spec in enumerate(self.fields):
            name = spec.removeprefix("-")
            beyond = "lt" if spec.startswith("-") else "gt"
            equal = {f.removeprefix("-"): v for f, v in zip(self.fields[:i], values, strict=False)}
            clauses.append(Q(**equal, **{f"{name}__{beyond}": values[i]}))
        return rows.filter(functools.reduce(operator.or_, clauses))


def _value(row: Any, path: str) -> Any:
    for part in path.split("__"):
        row = getattr(row, part)
    return row


def _pack(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"t": value.isoformat()}
    if isinstance(value, date):
        return {"d": value.isoformat()}
    return value


def _unpack(value: Any) -> Any:
    if isinstance(value, dict):
        if "t" in value:
            return datetime.fromisoformat(value["t"])
        return date.fromisoformat(value["d"])
    return value


def cursor_encode(keyset: Keyset, values: list[Any]) -> str:
    signed = signing.dumps({"k": keyset.name, "v": [_pack(v) for v in values]}, salt=_SALT)
    # Base64 again so the cursor is one opaque token (a signed value shows its payload).
    return base64.urlsafe_b64encode(signed.encode()).decode().rstrip("=")


def cursor_decode(keyset: Keyset, raw: str) -> list[Any]:
    try:
        padded = raw + "=" * (-len(raw) % 4)
        data = signing.loads(base64.urlsafe_b64decode(padded.encode()).decode(), salt=_SALT)
        if data["k"] != keyset.name or len(data["v"]) != len(keyset.fields):
            raise ValueError("another list's cursor")
        return [_unpack(v) for v in data["v"]]
    except (signing.BadSignature, ValueError, KeyError, TypeError, UnicodeError):
        raise parameter_problem("cursor", _NOT_OURS) from None


def cursor_values(request: Request, keyset: Keyset) -> list[Any] | None:
    """The decoded ``cursor`` parameter, for selectors that apply it themselves."""
    raw = request.query_params.get("cursor")
    return cursor_decode(keyset, raw) if raw else None


def limit_param(request: Request, *, default: int = PAGE_DEFAULT, maximum: int = PAGE_MAX) -> int:
    """``limit``: at least 1; more than ``maximum`` is served as ``maximum``."""
    value = int_param(request, "limit", low=1, default=default)
    assert value is not None  # it has a default
    return min(value, maximum)


def keyset_page(
    request: Request,
    rows: QuerySet[Any],
    keyset: Keyset,
    *,
    applied: bool = False,
    default: int = PAGE_DEFAULT,
    maximum: int = PAGE_MAX,
) -> tuple[list[Any], str | None]:
    """One page of ``rows`` in ``keyset`` order after the request's cursor, and the absolute
    URL of the next page (None on the last). ``applied``: the selector filtered by the cursor
    already (``cursor_values``), as an index-friendly query of its own."""
    limit = limit_param(request, default=default, maximum=maximum)
    if not applied:
        after = cursor_values(request, keyset)
        if after is not None:
            rows = keyset.after(rows, after)
    page = list(rows.order_by(*keyset.order())[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    next_url = None
    if more:
        query = request.query_params.copy()
        query["cursor"] = cursor_encode(keyset, keyset.values(page[-1]))
        next_url = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
    return page, next_url
