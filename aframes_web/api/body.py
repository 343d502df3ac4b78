"""Reading an event batch off the wire: size limits, gzip, JSON array or NDJSON."""

from __future__ import annotations

import zlib
from typing import Any

from django.http import HttpRequest

from aframes_web.api.parsers import Unreadable, json_value, too_large
from aframes_web.api.problems import Problem
from aframes_web.streams.records import ItemError

NDJSON_TYPES = ("application/x-ndjson", "application/jsonl", "application/ndjson")
JSON_TYPES = ("application/json",)
_READ_CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"


class BodyError(Exception):
    """The body cannot be read as a batch; ``status`` is the HTTP answer."""

    def __init__(self, status: int, message: str, errors: list[ItemError] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors or []

    def problem(self) -> Problem:
        """This error as the API answers it."""
        if self.status == 413:
            return Problem("payload-too-large", self.message)
        if self.status == 415:
            return Problem("unsupported-media-type", self.message)
        if self.errors:
            return Problem("invalid-body", self.message, errors=[e.as_dict() for e in self.errors])
        return Problem("invalid-body", self.message)


def _too_large(limit: int, what: str) -> BodyError:
    return BodyError(413, too_large(limit, what))


def read_body(request: HttpRequest, *, limit: int) -> bytes:
    """The request body, decompressed when gzip-encoded, never more than ``limit`` bytes."""
    declared = request.META.get("CONTENT_LENGTH")
    if declared and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit, "request body")
    raw = request.read(limit + 1)
    if len(raw) > limit:
        raise _too_large(limit, "request body")
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "").strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding not in ("gzip", "x-gzip"):
        raise BodyError(415, f"Content-Encoding {encoding!r} is not supported; use gzip or none.")
    parts: list[bytes] = []
    size = 0
    rest = raw
    try:
        # A gzip body may hold several members one after another (RFC 1952 §2.2; `cat a.gz
        # b.gz` makes one): each is read, and anything after the last that is not a member
        # is refused rather than dropped in silence.
        while True:
            decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            # Bounded output guards against a small body that inflates without end.
            part = decompressor.decompress(rest, limit + 1 - size)
            size += len(part)
            if size > limit or decompressor.unconsumed_tail:
                raise _too_large(limit, "decompressed body")
            if not decompressor.eof:
                raise BodyError(400, "The gzip body is truncated.")
            parts.append(part)
            rest = decompressor.unused_data
            if not rest:
                break
            if not rest.startswith(GZIP_MAGIC):
                raise BodyError(
                    400,
                    f"The gzip body has {len(rest):,} bytes after its last member that are not "
                    "gzip; send only the compressed batch.",
                )
    except zlib.error as exc:
        raise BodyError(400, f"The body is not valid gzip ({exc}).") from None
    return b"".join(parts)


def _media_type(request: HttpRequest) -> str:
    return request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()


def decode_events(request: HttpRequest, body: bytes, *, max_events: int) -> list[Any]:
    """The items of a JSON array or NDJSON body, or a BodyError naming what is wrong."""
    media = _media_type(request)
    too_many = (
        "The batch has {n:,} events; the limit is {limit:,} per request "
        "(AFRAMES_MAX_BATCH_EVENTS): split it into smaller batches."
    )
    if media in NDJSON_TYPES:
        lines = body.split(b"\n")
        items: list[Any] = []
        errors: list[ItemError] = []
        index = 0
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            if index >= max_events:
                count = sum(1 for x in lines if x.strip())
                raise BodyError(413, too_many.format(n=count, limit=max_events))
            try:
                items.append(json_value(line, f"line {number}"))
            except Unreadable as exc:
                errors.append(ItemError(index, "", str(exc).removesuffix(".")))
            index += 1
        if errors:
            raise BodyError(
                400, f"{len(errors)} line(s) are not valid JSON; nothing was stored.", errors
            )
        return items
    if media in JSON_TYPES or media == "":
        try:
            data = json_value(body)
        except Unreadable as exc:
            raise BodyError(400, str(exc)) from None
        if not isinstance(data, list):
            raise BodyError(
                400,
                "The body must be a JSON array of events (or NDJSON with "
                "Content-Type: application/x-ndjson).",
            )
        if len(data) > max_events:
            raise BodyError(413, too_many.format(n=len(data), limit=max_events))
        return data
    raise BodyError(
        415,
        f"Content-Type {media!r} is not supported; send application/json (an array) "
        "or application/x-ndjson.",
    )
