"""Query and path parameters of the API, read once at the boundary.

Every reader answers a bad value with a 400 problem that names the parameter, so nothing a
client sends reaches the database in a shape it refuses (PostgreSQL rejects U+0000 in text
and integers beyond 64 bits with an error, which would otherwise be a 500).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from datetime import date, datetime
from typing import Any

from rest_framework.request import Request

from aframes_web.activity.selectors import id_runs
from aframes_web.api.problems import parameter_problem
from aframes_web.streams.records import FieldInvalid, check_storable_text, query_moment
from memory.services.deciding import policy_named

BIGINT_MAX = 2**63 - 1  # the largest id a bigint column holds
MIN_MINUTES_MAX = 1440.0  # a day; a larger floor would only ever omit everything
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# What ``ids`` looks like, for the schema: ids and runs, comma-separated.
IDS_PATTERN = r"^\s*[0-9]{1,18}(-[0-9]{1,18})?\s*(,\s*[0-9]{1,18}(-[0-9]{1,18})?\s*)*$"


def check_text_params(request: Request, kwargs: Mapping[str, Any]) -> None:
    """Refuse NUL characters and lone surrogates in any path or query parameter, and path
    integers beyond a bigint, before a view reads them."""
    for name, value in kwargs.items():
        if isinstance(value, int) and value > BIGINT_MAX:
            raise parameter_problem(name, f"must be at most {BIGINT_MAX}, got {value}.")
        if isinstance(value, str):
            _storable(name, value)
    for name, values in request.query_params.lists():
        _storable(name, name)
        for value in values:
            _storable(name, value)


def _storable(name: str, value: str) -> None:
    try:
        check_storable_text(value, name)
    except FieldInvalid as problem:
        raise parameter_problem(name, problem.message) from None


def _given(request: Request, name: str) -> str | None:
    """The raw value of a typed parameter, None when absent; an empty value is no number, date
    or choice, so it is refused rather than read as absent."""
    raw = request.query_params.get(name)
    if raw == "":
        raise parameter_problem(name, "is empty; leave it out or give a value.")
    return raw


def time_param(request: Request, name: str) -> datetime | None:
    """A moment with an offset (:func:`~aframes_web.streams.records.query_moment`)."""
    raw = _given(request, name)
    if raw is None:
        return None
    try:
        return query_moment(raw, name)
    except FieldInvalid as problem:
        raise parameter_problem(name, problem.message) from None


def choice_param(
    request: Request, name: str, choices: Collection[str], default: str | None = None
) -> str | None:
    """The query parameter ``name`` if it is one of ``choices``; ``default`` when absent."""
    value = _given(request, name) or default
    if value is not None and value not in choices:
        raise parameter_problem(name, f"must be one of {', '.join(choices)}.")
    return value


FLAGS = {"1": True, "true": True, "0": False, "false": False}


def flag_param(request: Request, name: str) -> bool:
    """A yes/no parameter: 1 or true, 0 or false; absent is no."""
    raw = _given(request, name)
    if raw is None:
        return False
    if raw not in FLAGS:
        raise parameter_problem(name, f"must be 1, true, 0 or false, got {raw!r}.")
    return FLAGS[raw]


def int_param(
    request: Request,
    name: str,
    *,
    low: int,
    high: int = BIGINT_MAX,
    default: int | None = None,
) -> int | None:
    raw = _given(request, name)
    if raw is None:
        return default
    bounds = f"from {low} to {high}" if high < BIGINT_MAX else f"at least {low}"
    if not re.fullmatch(r"\s*[+-]?[0-9]+\s*", raw):
        raise parameter_problem(name, f"must be a whole number {bounds}, got {raw!r}.")
    if len(raw.strip().lstrip("+-")) > 19:
        raise parameter_problem(name, f"must be at most {high}; {raw.strip()[:40]}… is larger.")
    value = int(raw)
    if value < low or value > high:
        shown = bounds if high < BIGINT_MAX or value < low else f"at most {high}"
        raise parameter_problem(name, f"must be {shown}, got {value}.")
    return value


def day_value(raw: str, name: str) -> date:
    try:
        if _DAY.fullmatch(raw):
            return date.fromisoformat(raw)
    except ValueError:
        pass
    raise parameter_problem(name, f"{raw!r} is not a date like 2026-03-02.")


def day_param(request: Request, name: str) -> date | None:
    raw = _given(request, name)
    return day_value(raw, name) if raw is not None else None


def min_minutes_param(request: Request) -> float | None:
    raw = _given(request, "min_minutes")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value <= MIN_MINUTES_MAX:  # also false for nan
        raise parameter_problem(
            "min_minutes", f"must be a number of minutes from 0 to 1440, got {raw!r}."
        )
    return value


def ids_param(request: Request) -> list[int]:
    """Event ids as ``12,15`` or runs ``12-15,19`` (:func:`id_runs`)."""
    raw = request.query_params.get("ids", "")
    parts = [part.strip() for part in raw.split(",") if part.strip()]
    if not parts:
        raise parameter_problem("ids", "is required: event ids like 12,19 or runs like 12-15,19.")
    try:
        return id_runs(parts)
    except ValueError as err:
        raise parameter_problem("ids", str(err)) from None


def policy_param(request: Request, *, default: str) -> str:
    """``policy``: a decision policy's name (memory.services.deciding.policy_named)."""

    name = request.query_params.get("policy", default)
    try:
        policy_named(name)
    except ValueError as err:
        raise parameter_problem("policy", str(err)) from None
    return name
