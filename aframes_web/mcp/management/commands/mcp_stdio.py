"""manage.py mcp_stdio: the MCP tools over stdio, for a local client that starts the server."""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser

from aframes_web.mcp.server import build_server
from aframes_web.teams.selectors import token_for_key


class Command(BaseCommand):
    help = (
        "Serve Aframes' MCP tools over stdin/stdout (JSON-RPC lines) for a local MCP client. "
        "The token decides the team and the scopes, exactly as over HTTP."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--token",
            default=os.environ.get("AFRAMES_TOKEN"),
            help="an API token key (afr_...); default: the AFRAMES_TOKEN environment variable",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        key = (options["token"] or "").strip()
        if not key:
            raise CommandError(
                "Give --token KEY (or set AFRAMES_TOKEN): create one with "
                "`manage.py create_token TEAM NAME --scopes read`."
            )
        if token_for_key(key=key) is None:
            raise CommandError("The API token is unknown or has been revoked.")
        # Stdout is the protocol channel: nothing else may be written to it from here on.
        server = build_server(lambda: key, http=False)
        anyio.run(server.run_stdio_async)
