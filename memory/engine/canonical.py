"""The one canonical form of a scalar that matching and grounding compare (ProactMem:
fact matching).

Replay matches a predicate against an observation, and validation grounds a fact leaf against an
event payload, by the same rule: an equal field path and an equal ``canonical`` value.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import UTC, datetime
from functools import lru_cache

from memory.engine.records import Scalar

# A canonical value: a tag keeps kinds apart (so True never meets 1, nor "1" meets 1).
Canonical = tuple[str, str | int | float | bool | datetime | None]

# A time string must carry a date and at least hours and minutes in extended ISO 8601 form;
# fromisoformat alone would also read "2024-05-01" (a date) as midnight.
_TIME_PREFIX = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


def canonical(value: Scalar) -> Canonical | None:
    """The comparable form of a scalar leaf, or None for a value that equals nothing.

    NaN and the infinities equal nothing (no measurement). Strings are NFC-normalised, trimmed
    and case-folded; a string holding an ISO 8601 date and time compares as
    a time to the minute (an aware one as its UTC instant, a naive one never equal to an aware
    one); numbers are normalised so 1 == 1.0 (exact at any magnitude); bools are their own kind,
    never numbers.
    """
    kind = type(value)  # the common exact types first; subclasses take the checks below
    if kind is int:
        return ("num", value)
    if kind is str:
        return _text(value)
    if value is None:
        return ("none", None)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("num", value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return ("num", int(value) if value.is_integer() else value)
    if not isinstance(value, str):
        return None  # not a scalar: equals nothing (callers are typed, data may not be)
    return _text(value)


@lru_cache(maxsize=65536)
def _text(value: str) -> Canonical:
    # A stream repeats a few thousand distinct strings (rooms, sensors, apps, event types)
    # millions of times; normalising each once is what replay throughput hinges on.
    text = unicodedata.normalize("NFC", value).strip()
    instant = _time(text)
    if instant is not None:
        return ("time", instant)
    return ("str", text.casefold())


def same(a: Scalar, b: Scalar) -> bool:
    """Whether two scalars are canonically equal (NaN and non-scalars equal nothing)."""
    ca = canonical(a)
    return ca is not None and ca == canonical(b)


def is_scalar(value: object) -> bool:
    """Whether ``value`` is a scalar leaf (records.Scalar): str, int, float, bool or None."""
    return value is None or isinstance(value, str | int | float | bool)


def _time(text: str) -> datetime | None:
    if not _TIME_PREFIX.match(text):
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is not None and parsed.utcoffset() is not None:
        return parsed.astimezone(UTC).replace(second=0, microsecond=0)
    # Naive: kept naive, so it can never equal an aware instant.
    return parsed.replace(second=0, microsecond=0)
