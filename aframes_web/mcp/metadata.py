"""How an MCP client learns to authenticate (MCP authorization, spec 2025-06-18; RFC 9728).

An MCP server is an OAuth protected resource: a 401 names its Protected Resource Metadata in
``WWW-Authenticate`` (``resource_metadata=...``), and that document says how tokens are had.
Aframes issues no OAuth tokens: a team owner creates a bearer token with ``manage.py
create_token``, so the document lists no authorization server and says so in words, and a
client that reads it reports a bad or missing token instead of starting an OAuth flow.
URLs follow the host the request came to (``ALLOWED_HOSTS`` has vetted it).
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, JsonResponse
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from aframes_web.teams.models import Scope as TokenScope

METADATA_PATH = "/.well-known/oauth-protected-resource"
HOW = (
    "Aframes accepts bearer tokens only, in the Authorization header: a team owner creates one "
    "with `manage.py create_token TEAM NAME --scopes read` (read, write, label, admin) and "
    "hands the printed afr_... key to the agent. There is no OAuth authorization server."
)


# What a refused client is told, in the challenge (short, no quotes) and in the body (whole):
# the body is what a client prints, so it says what to do.
UNKNOWN_TOKEN = (
    "the bearer token is unknown or revoked",
    "The bearer token sent is unknown to this server or has been revoked. " + HOW,
)
NO_TOKEN = (
    "a bearer token is required",
    "This server needs a bearer token: send `Authorization: Bearer afr_...`. " + HOW,
)


def _base(scheme: str, host: str) -> str:
    return f"{scheme}://{host}"


def metadata(base: str, mcp_path: str) -> dict[str, Any]:
    """The RFC 9728 document for the MCP endpoint at ``base`` + ``mcp_path``."""
    return {
        "resource": base + mcp_path,
        "authorization_servers": [],
        "bearer_methods_supported": ["header"],
        "scopes_supported": [s.value for s in TokenScope],
        "resource_name": "Aframes MCP server",
        "resource_documentation": base + "/api/docs/",
        "aframes_authentication": HOW,
    }


def protected_resource(request: HttpRequest, resource: str = "") -> JsonResponse:
    """``GET /.well-known/oauth-protected-resource[/mcp]``: the metadata, open to all."""
    from_path = "/" + resource if resource else "/mcp"
    base = _base(request.scheme or "http", request.get_host())
    return JsonResponse(metadata(base, from_path))


class ResourceMetadataChallenge:
    """ASGI middleware: every 401 the MCP endpoint answers names the metadata document in its
    ``WWW-Authenticate: Bearer`` challenge, as MCP clients expect, and says in its body whether
    the token was missing or unknown and how to get one (the SDK's own body only says
    "Authentication required", which is what a client shows its user)."""

    def __init__(self, app: ASGIApp, mcp_path: str) -> None:
        self.app = app
        self.mcp_path = mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        base = _base(scope.get("scheme", "http"), headers.get("host", "localhost"))
        where = f'resource_metadata="{base}{METADATA_PATH}{self.mcp_path}"'
        short, sentence = UNKNOWN_TOKEN if headers.get("authorization") else NO_TOKEN
        body = json.dumps({"error": "invalid_token", "error_description": sentence}).encode()
        refused = False

        async def challenged(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 401:
                refused = True
                old = dict(message["headers"]).get(b"www-authenticate", b"Bearer").decode()
                parts = [p.strip() for p in old.removeprefix("Bearer").split(",") if p.strip()]
                parts = [p for p in parts if not p.startswith(("resource_metadata=", "error_"))]
                parts += [f'error_description="{short}"', where]
                challenge = "Bearer " + ", ".join(parts)
                dropped = (b"www-authenticate", b"content-length", b"content-type")
                kept = [(k, v) for k, v in message["headers"] if k.lower() not in dropped]
                message = {
                    **message,
                    "headers": [
                        *kept,
                        (b"www-authenticate", challenge.encode()),
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            elif message["type"] == "http.response.body" and refused:
                if message.get("more_body", False):
                    return  # the SDK's own words are replaced whole, once they end
                message = {"type": "http.response.body", "body": body, "more_body": False}
            await send(message)

        await self.app(scope, receive, challenged)
