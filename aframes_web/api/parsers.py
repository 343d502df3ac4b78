"""Reading JSON off the wire, one way for every body the API reads: DRF's parser
(``DEFAULT_PARSER_CLASSES``), event batches (``body.py``) and single events (``decide``).

Whatever a client sends, the answer is a 4xx with a sentence about the body, never a 500 and
never Python's own advice: a body over ``AFRAMES_MAX_BATCH_BYTES`` is a 413; JSON nested past
the recursion limit, a number longer than Python converts, bytes that are not UTF-8 and text
that is not JSON each get a 400 with their own message.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.settings import api_settings

from aframes_web.api.problems import Problem

# What JSON nested past the parser's recursion limit is told (no event needs such depth).
TOO_DEEP = "nests arrays or objects too deeply to read (hundreds of levels); flatten it."


def too_large(limit: int, what: str = "request body") -> str:
    """What a body over ``AFRAMES_MAX_BATCH_BYTES`` is told."""
    return (
        f"The {what} exceeds the limit of {limit:,} bytes (AFRAMES_MAX_BATCH_BYTES); "
        "split it into smaller batches."
    )


class Unreadable(ValueError):
    """A JSON text that cannot be read; the message is what the client is told."""


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def _too_long(what: str) -> str:
    """What a number longer than Python converts is told (not Python's own advice)."""
    digits = sys.get_int_max_str_digits()
    return f"{what} holds a number of more than {digits:,} digits; no field takes one."


def json_value(text: bytes | str, what: str = "The body", *, strict: bool = False) -> Any:
    """The value of a JSON ``text``, or :class:`Unreadable` saying what is wrong with it.
    ``strict``: NaN and Infinity are refused, as JSON itself does."""
    try:
        if strict:
            return json.loads(text, parse_constant=_refuse_constant)
        return json.loads(text)
    except RecursionError:
        raise Unreadable(f"{what} {TOO_DEEP}") from None
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{what} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise Unreadable(_too_long(what)) from None
        raise Unreadable(f"{what} is not JSON: {exc}.") from None


class JsonParser(JSONParser):
    """DRF's JSON parser reading through :func:`json_value`, so a body DRF's serializers read is
    refused in the same words as an event batch: nested past the recursion limit, a number past
    Python's digit limit, bytes that are not UTF-8 (RFC 8259 §8.1: JSON is UTF-8) or text that
    is not JSON, each a 400 of its own, never a 500 nor Python's advice."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        limit = settings.AFRAMES_MAX_BATCH_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise Problem("payload-too-large", too_large(limit))
        try:
            return json_value(raw, strict=api_settings.STRICT_JSON)
        except Unreadable as exc:
            raise ParseError(str(exc)) from None
