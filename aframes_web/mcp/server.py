"""The MCP server: Aframes' tools for agents over streamable HTTP (``/mcp``) and stdio.

Built on the official ``mcp`` SDK's ``MCPServer``. Every tool declared in
``aframes_web.mcp.tools`` is registered here behind one thin async shell: it checks nothing
itself, hops to a worker thread where Django's database access is safe, resolves the caller's
token to a :class:`~aframes_web.teams.auth.Principal` there, and calls the tool's function
(ARCHITECTURE.md, "Pure cores, thin shells"). Scopes are enforced per
tool; a tool that cannot answer returns a tool error the agent can read, never a protocol error.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http.request import split_domain_port, validate_host
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from pydantic.fields import FieldInfo
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from aframes_web.mcp import tools
from aframes_web.mcp.metadata import ResourceMetadataChallenge
from aframes_web.teams.auth import Principal
from aframes_web.teams.selectors import token_for_key
from aframes_web.teams.services import token_touch

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"

INSTRUCTIONS = (
    "Aframes compiles what people and systems actually did into measured, evidence-linked "
    "memory. Desktop tools ("
    + ", ".join(name for name, declared in tools.TOOLS.items() if declared.desktop)
    + ") read compiled activity frames; the others ("
    + ", ".join(name for name, declared in tools.TOOLS.items() if not declared.desktop)
    + ") work for every entity or for the team. Every figure cites the event ids it comes "
    "from; get_evidence returns those events. Uncovered time is unknown, not inactivity."
    + tools.UNTRUSTED
)


class TokenVerifier:
    """Bearer keys are Aframes API tokens (``afr_…``): unknown and revoked ones get 401."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return await sync_to_async(_verify, thread_sensitive=False)(token)


def _verify(key: str) -> AccessToken | None:
    close_old_connections()
    try:
        found = token_for_key(key=key)
        if found is None:
            return None
        token_touch(token=found)
        return AccessToken(
            token=key, client_id=f"token:{found.pk}", scopes=list(found.scopes), subject=found.name
        )
    finally:
        close_old_connections()


KeySource = Callable[[], str | None]
Runner = Callable[..., Awaitable[str]]


def _door(function: Callable[..., str], run: Runner) -> Callable[..., Awaitable[str]]:
    """The async shell the SDK calls for one tool: its signature is the tool function's
    without the principal (the SDK reads the input schema from it), and arguments arrive under
    their wire names (a ``Field`` alias such as ``from``), which become the function's names."""
    signature = inspect.signature(function, eval_str=True)
    parameters = [p for p in signature.parameters.values() if p.name != "principal"]
    wire = {
        meta.alias: p.name
        for p in parameters
        for meta in getattr(p.annotation, "__metadata__", ())
        if isinstance(meta, FieldInfo) and meta.alias
    }

    async def call(**arguments: Any) -> str:
        return await run(function, **{wire.get(k, k): v for k, v in arguments.items()})

    call.__name__ = function.__name__
    call.__doc__ = function.__doc__
    call.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return call


def _http_key() -> str | None:
    access = get_access_token()
    return access.token if access is not None else None


def _principal(key: str | None) -> Principal:
    token = token_for_key(key=key) if key else None
    if token is None:  # revoked between the handshake and this call
        raise tools.ToolFailure("The API token is unknown or has been revoked.")
    return Principal(team=token.team, scopes=frozenset(token.scopes), token=token)


def _call_sync(key: str | None, fn: Callable[..., str], kwargs: dict[str, Any]) -> str:
    # Django closes stale connections around each request (request_started/finished); a
    # tool call is our request, run on a pool thread, so it does the same itself.
    close_old_connections()
    try:
        return fn(_principal(key), **kwargs)
    finally:
        close_old_connections()


# What a wrong argument should have been, by pydantic's error type (the rest say it themselves).
_EXPECTED = {
    "int_parsing": "a whole number",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "float_parsing": "a number",
    "float_type": "a number",
    "bool_parsing": "true or false",
    "bool_type": "true or false",
    "string_type": "text",
    "list_type": "a list",
    "dict_type": "an object",
}


def argument_sentences(tool: str, error: ValidationError) -> str:
    """A wrong call's arguments as one plain sentence per wrong field (no pydantic wording or
    links: the agent reading it is told what to send instead)."""
    said = []
    for problem in error.errors(include_url=False):
        field = ".".join(str(part) for part in problem["loc"]) or "the arguments"
        kind, given = problem["type"], problem.get("input")
        if kind == "missing":
            said.append(f"{field} is required")
        elif kind == "extra_forbidden":
            said.append(f"{field} is not an argument of {tool}")
        elif kind in _EXPECTED:
            said.append(f"{field} must be {_EXPECTED[kind]}, not {given!r}")
        else:
            text = str(problem["msg"]).replace("Input should be", "should be")
            said.append(f"{field} {text[0].lower() + text[1:]}" if text else f"{field} is wrong")
    return f"{tool}: " + "; ".join(said) + "."


class AframesServer(MCPServer):
    """The SDK's server, with argument errors said as plain sentences (:func:`argument_sentences`)
    instead of pydantic's report."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as failure:
            if isinstance(failure.__cause__, ValidationError):
                raise ToolError(argument_sentences(name, failure.__cause__)) from None
            raise


def build_server(key_source: KeySource = _http_key, *, http: bool = True) -> MCPServer:
    """An MCPServer with every Aframes tool; ``key_source`` names the caller's token key."""
    auth = (
        AuthSettings(
            # Required by the SDK's model but unused: Aframes issues its own tokens
            # (manage.py create_token), so no OAuth routes or metadata are served.
            issuer_url="http://localhost",
            resource_server_url=None,
            required_scopes=None,  # per tool: tools.require
        )
        if http
        else None
    )
    server = AframesServer(
        name="aframes",
        title="Aframes",
        instructions=INSTRUCTIONS,
        version=_version(),
        token_verifier=TokenVerifier() if http else None,
        auth=auth,
    )

    async def run(fn: Callable[..., str], **kwargs: Any) -> str:
        key = key_source()
        try:
            return await sync_to_async(_call_sync, thread_sensitive=False)(key, fn, kwargs)
        except tools.ToolFailure as failure:
            raise ToolError(str(failure)) from None
        except Exception:
            logger.exception("MCP tool %s failed", getattr(fn, "__name__", fn))
            raise ToolError(
                "Aframes could not answer this call because of an error on the server; it has "
                "been logged. Try again later or ask the team's administrator."
            ) from None

    for name, declared in tools.TOOLS.items():
        server.tool(name=name, description=declared.description, annotations=declared.annotations)(
            _door(declared.function, run)
        )

    return server


def _version() -> str:
    try:
        return version("aframes")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout without install
        return "0"


def _allowed_hosts() -> list[str]:
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:  # Django's own fallback under DEBUG
        hosts = [".localhost", "127.0.0.1", "[::1]"]
    return hosts


def host_problem(host: str | None, origin: str | None) -> tuple[int, str] | None:
    """Why a request's Host or Origin is refused, held to ALLOWED_HOSTS as Django holds pages.

    The Origin check is the MCP transport's DNS-rebinding defence: a browser page on another
    site may reach a local server, but it cannot forge its own origin.
    """
    allowed = _allowed_hosts()
    domain, _ = split_domain_port(host or "")
    if not domain or not validate_host(domain, allowed):
        return 400, f"Host {host!r} is not served here (ALLOWED_HOSTS)."
    if origin and origin not in settings.CSRF_TRUSTED_ORIGINS:
        _, _, rest = origin.partition("://")
        origin_domain, _ = split_domain_port(rest)
        if not origin_domain or not validate_host(origin_domain, allowed):
            return 403, f"Origin {origin!r} may not call this server."
    return None


class AllowedHosts:
    """ASGI middleware refusing requests whose Host or Origin ALLOWED_HOSTS does not name."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            problem = host_problem(headers.get("host"), headers.get("origin"))
            if problem is not None:
                status, message = problem
                await PlainTextResponse(message, status_code=status)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app() -> Starlette:
    """The streamable HTTP app (stateless, JSON responses) serving ``MCP_PATH``.

    Its lifespan runs the SDK's session manager: the ASGI entry point hands it the server's
    lifespan events. Build one per server process; a session manager runs once.
    """
    server = build_server()
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        # Hosts and origins are checked by AllowedHosts, against the settings Django uses.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.add_middleware(ResourceMetadataChallenge, mcp_path=MCP_PATH)
    app.add_middleware(AllowedHosts)
    return app
