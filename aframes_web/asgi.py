"""ASGI entry point; the MCP server is mounted beside Django here by the API issue."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aframes_web.settings")
application = get_asgi_application()
