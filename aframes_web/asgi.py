"""ASGI entry point: Django for every path, the MCP server at /mcp beside it.

uvicorn (``manage.py serve``) and gunicorn's uvicorn workers (``docker/``) serve this
``application``. Django's ASGI handler does not take lifespan events; the MCP app does (its
session manager runs for the process's lifetime), so they go there.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aframes_web.settings")
django_application = get_asgi_application()


def build_application() -> Any:
    """A fresh ASGI application (the MCP session manager runs once per instance)."""
    # stays: Django's app loading: the MCP tools import models
    from aframes_web.mcp.server import MCP_PATH, http_app

    mcp_application = http_app()
    prefix = MCP_PATH + "/"

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind == "lifespan" or (
            kind == "http" and (scope["path"] == MCP_PATH or scope["path"].startswith(prefix))
        ):
            await mcp_application(scope, receive, send)
        else:
            await django_application(scope, receive, send)

    return application


application = build_application()
