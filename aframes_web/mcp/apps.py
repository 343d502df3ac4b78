from __future__ import annotations

from django.apps import AppConfig


class McpConfig(AppConfig):
    name = "aframes_web.mcp"
    # "mcp" is the SDK's package name; the app label must not read as it.
    label = "aframes_mcp"
    verbose_name = "MCP server"
