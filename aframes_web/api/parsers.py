"""The request-body parser DRF uses for every JSON body the API reads (settings:
``DEFAULT_PARSER_CLASSES``)."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# What JSON nested past the parser's recursion limit is told (no event needs such depth).
TOO_DEEP = "nests arrays or objects too deeply to read (hundreds of levels); flatten it."


class JsonParser(JSONParser):
    """DRF's JSON parser, with JSON nested past Python's recursion limit a 400 like any other
    unreadable body instead of a 500."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"The body {TOO_DEEP}") from None
