"""ASGI entry point: Django for every path, the MCP server at /mcp beside it.

uvicorn (``manage.py serve``) and gunicorn's uvicorn workers (``docker/``) serve this
``application``. Django's ASGI handler does not take lifespan events; the MCP app does (its
session manager runs for the process's lifetime), so they go there.

The agents' hot reads (:data:`LEAN_PATH`: an entity's context window and its day, asked for
again and again and answered from caches) go through Django's WSGI handler instead, on one
thread of their own (:class:`LeanDoor`). Django's ASGI handler runs each of its middleware's
request and response steps through a thread hop (``MiddlewareMixin.__acall__``): eighteen
round trips to the sync thread per request, measured, which made a cached context cost twice
the server CPU it costs through the WSGI handler, which calls them in place. Everything else
keeps the ASGI handler: a streamed export there yields the thread between chunks, where the
lean door holds its thread until the whole answer is made.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from a2wsgi.wsgi import build_environ
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aframes_web.settings")
django_application = get_asgi_application()
# One thread: these reads are CPU, and two threads of one process only take turns at the GIL
# (measured: 3.7 ms of CPU per cached context on one thread, 4.5 on two); workers add cores.
LEAN_THREADS = 1
LEAN_PATH = re.compile(r"^/api/v1/entities/[^/]+/(?:context|days/[^/]+)$")


def is_lean(scope: dict[str, Any]) -> bool:
    """A hot read: GET or HEAD of an entity's context window or day (module docstring)."""
    return (
        scope["type"] == "http"
        and scope.get("method") in ("GET", "HEAD")
        and LEAN_PATH.match(scope["path"]) is not None
    )


class LeanDoor:
    """An ASGI door to a WSGI application for small, unstreamed answers: one thread hop each.

    The thread makes the whole answer (status, headers, body) and hands it back once; the
    event loop then sends it. A general adapter (a2wsgi) goes back to the loop for the status
    line and again for every body chunk, each a round trip between threads that costs more
    CPU than a cached read itself (measured: a cached context took 6.0 ms of CPU in process
    through it, against 3.3 ms for the WSGI handler alone). The lean paths are reads of
    bounded size with no request body, so buffering the answer in the thread costs nothing
    the client would not wait for anyway.
    """

    def __init__(self, wsgi_application: Any, threads: int) -> None:
        self.wsgi_application = wsgi_application
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lean")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        environ = build_environ(scope, io.BytesIO())  # type: ignore[arg-type]  # GET/HEAD: no body
        # In the thread's own context, not a copy of this task's: Django keeps its cache
        # clients in context variables (asgiref's Local), so a fresh copy per request would
        # open a new Redis connection for every request, as a2wsgi's copy did (measured: one
        # connection per request, a third of a cached read's CPU).
        loop = asyncio.get_running_loop()
        status, headers, body = await loop.run_in_executor(self.executor, self.answer, environ)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def answer(self, environ: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Run the WSGI application to the end of its answer, in the door's thread."""
        started: list[Any] = []
        chunks: list[bytes] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            if started and exc_info is None:
                raise RuntimeError("start_response called twice without exc_info (PEP 3333)")
            started[:] = [status, headers]
            return chunks.append

        result = self.wsgi_application(environ, start_response)
        try:
            chunks.extend(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        status, headers = started
        encoded = [
            (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers
        ]
        return int(status.split(" ", 1)[0]), encoded, b"".join(chunks)


def build_application() -> Any:
    """A fresh ASGI application (the MCP session manager runs once per instance)."""
    # stays: Django's app loading: the MCP tools import models
    from aframes_web.mcp.server import MCP_PATH, http_app

    mcp_application = http_app()
    lean_application = LeanDoor(get_wsgi_application(), threads=LEAN_THREADS)
    prefix = MCP_PATH + "/"

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind == "lifespan" or (
            kind == "http" and (scope["path"] == MCP_PATH or scope["path"].startswith(prefix))
        ):
            await mcp_application(scope, receive, send)
        elif is_lean(scope):
            await lean_application(scope, receive, send)
        else:
            await django_application(scope, receive, send)

    application.lean = lean_application  # type: ignore[attr-defined]  # its thread: tests
    return application


application = build_application()
