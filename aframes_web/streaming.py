"""Streamed downloads that stay streamed under both servers Aframes runs on.

Django serves a ``StreamingHttpResponse`` whole-iterator-at-once when the iterator's kind does
not match the handler: under ASGI (uvicorn, ``make run`` and production) it reads a synchronous
iterator entirely into memory first, and under WSGI it does the same with an asynchronous one.
An export of a million events must not be held in memory, so the response is built for the
handler that asked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from itertools import islice
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse

# Chunks read per hop to the request's sync thread: few hops, bounded memory.
CHUNKS_PER_STEP = 256


async def _asynchronous(chunks: Iterable[Any]) -> AsyncIterator[Any]:
    iterator: Iterator[Any] = iter(chunks)

    def step() -> list[Any]:
        return list(islice(iterator, CHUNKS_PER_STEP))

    # thread_sensitive: a database cursor behind the iterator stays on the request's thread,
    # where Django opened its connection and closes it when the response is done.
    read = sync_to_async(step, thread_sensitive=True)
    while batch := await read():
        for chunk in batch:
            yield chunk


def streamed(
    request: HttpRequest, chunks: Iterable[Any], *, content_type: str
) -> StreamingHttpResponse:
    """``chunks`` streamed to the client, asynchronously when ``request`` came over ASGI."""
    body = _asynchronous(chunks) if isinstance(request, ASGIRequest) else chunks
    return StreamingHttpResponse(body, content_type=content_type)
