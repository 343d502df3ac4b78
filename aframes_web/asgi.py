"""ASGI entry point: Django for every path, the MCP server at /mcp beside it.

uvicorn (``manage.py serve``) and gunicorn's uvicorn workers (``docker/``) serve this
``application``. Django's ASGI handler does not take lifespan events; the MCP app does (its
session manager runs for the process's lifetime), so they go there.

The agents' hot reads (:data:`LEAN_PATH`: an entity's context window and its day, asked for
again and again and answered from caches) go through Django's WSGI handler instead, adapted
by a2wsgi on one thread of their own. Django's ASGI handler runs each of its middleware's
request and response steps through a thread hop (``MiddlewareMixin.__acall__``): eighteen
round trips to the sync thread per request, measured, which made a cached context cost twice
the server CPU it costs through the WSGI handler, which calls them in place. Everything else
keeps the ASGI handler: a streamed export there yields the thread between chunks, where under
the WSGI adapter it would hold it.
"""

from __future__ import annotations

import os
import re
from typing import Any

from a2wsgi import WSGIMiddleware
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


def build_application() -> Any:
    """A fresh ASGI application (the MCP session manager runs once per instance)."""
    # stays: Django's app loading: the MCP tools import models
    from aframes_web.mcp.server import MCP_PATH, http_app

    mcp_application = http_app()
    lean_application = WSGIMiddleware(get_wsgi_application(), workers=LEAN_THREADS)
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
