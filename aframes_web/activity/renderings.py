"""Reads the activity API needs beyond ``aframes_web.activity.selectors``: renderings with ETags.

A day is served from its stored document when the request asks for what was stored; other
options (``min_minutes``, ``include_text``, a token budget) recompile it on request and write
nothing. Every rendering carries a strong ETag built from the canonical sha256 of the document
its bytes come from, so a client can check one against the other.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date

from django.core.cache import cache
from django.db.models import F, QuerySet

from aframes_web.activity.models import CompileRequest, DayDocument, Frame
from aframes_web.activity.queries import ContextQuery
from aframes_web.activity.selectors import documents_current
from aframes_web.activity.services import (
    day_compile_read,
    stored_params,
    window_compile_read,
    window_watermark,
)
from aframes_web.streams.models import Entity
from aframes_web.streams.selectors import events_stored
from compiler.emit import context_block, render, to_json, to_markdown, to_yaml
from compiler.params import COMPILER_VERSION, Params

CONTENT_TYPES = {
    "json": "application/json; charset=utf-8",
    "yaml": "application/yaml; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
    "context": "text/plain; charset=utf-8",
}
FORMATS = tuple(CONTENT_TYPES)
# How long a rendered window is kept; a stale one can never be served (its key names the
# events it read), so this only bounds the cache's size.
WINDOW_CACHE_S = 3600


@dataclass(frozen=True, slots=True)
class Rendering:
    """What to answer, rendered only when the client's copy (If-None-Match) is stale."""

    etag: str  # quoted, strong
    content_type: str
    render: Callable[[], str]


def rendering_etag(sha256: str, fmt: str, budget_tokens: int | None = None) -> str:
    """``"<sha>"`` for the JSON document itself; other bytes of it name their format.

    min_minutes and include_text need no suffix: both are document parameters, so they are
    already in the sha256 (``source.parameters``).
    """
    if fmt == "json":
        return f'"{sha256}"'
    budget = f"-b{budget_tokens}" if budget_tokens is not None else ""
    return f'"{sha256}-{fmt}{budget}"'


def pending_days(*, entity: Entity) -> set[date]:
    """The local days with events that no finished compile has read yet."""
    return set(
        CompileRequest.objects.filter(entity=entity, compiled__lt=F("requested")).values_list(
            "day", flat=True
        )
    )


def day_rendering(
    *,
    entity: Entity,
    document: DayDocument,
    fmt: str,
    min_minutes: float | None = None,
    include_text: bool = False,
    budget_tokens: int | None = None,
) -> Rendering:
    """A day in ``fmt``: the stored document, or a recompile when the options differ from it."""
    stored = Params(**stored_params(document))
    params = replace(
        stored,
        min_minutes=stored.min_minutes if min_minutes is None else min_minutes,
        include_text=stored.include_text or include_text,
    )
    content_type = CONTENT_TYPES[fmt]
    if params == stored and budget_tokens is None:
        body = document.body
        stored_bytes: dict[str, Callable[[], str]] = {
            "json": lambda: to_json(body),
            "yaml": lambda: to_yaml(body),
            "md": lambda: to_markdown(body),
            "context": lambda: document.context,
        }
        return Rendering(rendering_etag(document.sha256, fmt), content_type, stored_bytes[fmt])
    # The recompile keeps the stored version's generated_at, so its bytes depend only on what
    # the ETag names (generated_at is the one field the sha256 leaves out).
    result = day_compile_read(
        entity=entity,
        day=document.day,
        params=params,
        generated_at=document.body.get("generated_at"),
    )
    compiled = result.compiled
    if compiled is None:  # pragma: no cover - events are append-only; a stored day keeps them
        raise LookupError(f"{document.day} has no events to recompile.")
    options = {"budget_tokens": budget_tokens} if fmt == "context" else {}
    return Rendering(
        rendering_etag(result.sha256, fmt, budget_tokens),
        content_type,
        lambda: render(compiled, fmt, **options),
    )


# Per process, the context blocks this worker served, by window, with the entity's tally of
# events read before the block was made. Events are append-only and every insert adds to the
# tally (``EventTally``), so while the tally stands no event of the entity has arrived and the
# block is current: a repeated request costs one indexed read, where the watermark costs two
# aggregates over the window and the shared cache a round trip. The least recently served
# window goes first; blocks are a few kilobytes.
_SERVED: OrderedDict[str, tuple[int, str, str]] = OrderedDict()
_SERVED_MAX = 256


def context_rendering(query: ContextQuery) -> Rendering:
    """The context block of a rolling window (the last N hours, across days): the one answer
    of REST ``context``, MCP ``get_context`` and the dashboard's context page.

    A window is compiled from its events on request and its rendering kept in the cache under
    the window's watermark (:func:`window_watermark`): agents ask for the same recent window
    again and again, and an event that would change the compile changes the key. The worker
    also keeps what it served while the entity's tally of events stands (``_SERVED``).
    """
    entity, start, end = query.entity, query.start, query.end
    budget_tokens = query.budget_tokens
    params = Params(include_text=query.include_text)
    window = "|".join(
        map(
            str,
            (
                COMPILER_VERSION,
                entity.pk,
                entity.created_at.timestamp(),  # a database may reuse a deleted entity's id
                entity.timezone,
                start.timestamp(),
                end.timestamp(),
                params.digest(),
                budget_tokens,
            ),
        )
    )
    stored = events_stored(entity.pk)  # read first: a block made after it is no older
    served = _SERVED.get(window)
    if served is not None and served[0] == stored:
        _SERVED.move_to_end(window)
        return Rendering(served[1], CONTENT_TYPES["context"], lambda: served[2])
    watermark = window_watermark(entity=entity, start=start, end=end)
    key = "aframes-window:" + hashlib.sha256(f"{window}|{watermark}".encode()).hexdigest()
    cached = cache.get(key)
    if cached is not None:
        etag, text = cached
    else:
        result = window_compile_read(entity=entity, start=start, end=end, params=params)
        compiled = result.compiled
        assert compiled is not None  # a window always compiles, empty or not
        etag = rendering_etag(result.sha256, "context", budget_tokens)
        text = context_block(compiled, budget_tokens=budget_tokens)
        cache.set(key, (etag, text), WINDOW_CACHE_S)
    _SERVED[window] = (stored, etag, text)
    _SERVED.move_to_end(window)
    while len(_SERVED) > _SERVED_MAX:
        _SERVED.popitem(last=False)
    return Rendering(etag, CONTENT_TYPES["context"], lambda: text)


def days_listed(*, entity: Entity) -> QuerySet[DayDocument]:
    """The current documents of an entity without their bodies (a list needs only the figures)."""
    return documents_current(entity=entity).defer("body", "context", "params")


def frames_listed(frames: QuerySet[Frame]) -> QuerySet[Frame]:
    """Frames with their document's version and sha256, without loading document bodies."""
    return frames.annotate(
        document_version=F("document__version"), document_sha256=F("document__sha256")
    )
