"""A small, total URL splitter and the text helpers the site parsers share.

`urllib.parse.urlsplit` raises on some inputs (bad IPv6 brackets, bad ports) and knows nothing
about address-bar text without a scheme; capture rows contain both, so this module splits URLs
itself and never raises. Query values whose names look like credentials are dropped here, so no
parser can ever put one into an entity.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from urllib.parse import unquote, unquote_plus

from .ref import PageRef

MAX_URL_CHARS = 8192
"""Only this prefix of a URL is read: bounds the work and the memory each cache entry holds.
Longer URLs are almost always data blobs or tracking payloads; their host and path still fit."""

WEB_SCHEMES = frozenset({"http", "https"})

SECRET_PARAMS = frozenset(
    {
        "access_token",
        "api_key",
        "apikey",
        "auth",
        "auth_token",
        "client_secret",
        "code",
        "id_token",
        "jwt",
        "key",
        "nonce",
        "otp",
        "pass",
        "passwd",
        "password",
        "pwd",
        "refresh_token",
        "rlkey",
        "secret",
        "session",
        "sessionid",
        "sid",
        "sig",
        "signature",
        "state",
        "ticket",
        "token",
        "x-amz-credential",
        "x-amz-security-token",
        "x-amz-signature",
        "x-goog-credential",
        "x-goog-signature",
    }
)
"""Query names whose values are credentials or one-time codes: never read, never emitted."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_FORBIDDEN_HOST_CHARS = frozenset(' \t\n\r\x0b\x0c<>"^`{|}\\\x00')
_SECRET_IN_FRAGMENT = re.compile(
    r"(?:^|[&?#/;])(?:" + "|".join(re.escape(name) for name in sorted(SECRET_PARAMS)) + r")=",
    re.IGNORECASE,
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


class Url:
    """A split web URL. `site` is the lowercase host without a leading `www.`; `segments` are
    the non-empty, percent-decoded path segments; `param` reads a decoded query value."""

    __slots__ = ("_params", "_segments", "fragment", "host", "path", "port", "query", "site")

    def __init__(self, host: str, port: int | None, path: str, query: str, fragment: str) -> None:
        self.host = host
        self.site = host[4:] if host.startswith("www.") and len(host) > 4 else host
        self.port = port
        self.path = path
        self.query = query
        # A fragment can carry an OAuth implicit-flow token; such a fragment is dropped whole.
        self.fragment = "" if _SECRET_IN_FRAGMENT.search(fragment) else fragment
        self._segments: tuple[str, ...] | None = None
        self._params: dict[str, str] | None = None

    @property
    def segments(self) -> tuple[str, ...]:
        if self._segments is None:
            self._segments = tuple(unquote(part) for part in self.path.split("/") if part)
        return self._segments

    def seg(self, index: int) -> str:
        """The path segment at `index`, or "" when the path is shorter."""
        segments = self.segments
        return segments[index] if -len(segments) <= index < len(segments) else ""

    def param(self, name: str) -> str | None:
        """The first value of query parameter `name` (give it lowercase: names are folded),
        decoded; None when absent or empty. Credential-like names are never returned."""
        if self._params is None:
            self._params = parse_query(self.query)
        return self._params.get(name)

    def params(self) -> dict[str, str]:
        if self._params is None:
            self._params = parse_query(self.query)
        return self._params


Parser = Callable[[Url], PageRef | None]
"""A bespoke site parser: a PageRef, or None to let the generic layers decide."""


def parse_query(query: str) -> dict[str, str]:
    """Decoded `name -> first non-empty value`, names lowercased, credential names dropped."""
    params: dict[str, str] = {}
    if not query:
        return params
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        if not value:
            continue
        name = unquote_plus(name).strip().lower()
        if not name or name in params or name in SECRET_PARAMS:
            continue
        params[name] = unquote_plus(value)
    return params


def split_url(text: str) -> Url | None:
    """Split a web URL (http, https, or address-bar text without a scheme); None otherwise."""
    text = text.strip()
    if not text:
        return None
    rest: str
    scheme_match = _SCHEME.match(text)
    if scheme_match is not None:
        scheme = scheme_match.group(1).lower()
        after = text[scheme_match.end() :]
        if scheme in WEB_SCHEMES:
            if not after.startswith("//"):
                return None
            rest = after[2:]
        elif after[:1].isdigit() and ("." in scheme or scheme == "localhost"):
            # "localhost:3000/x" or "example.com:8080/": a host and port, not a scheme.
            scheme, rest = "http", text
        else:
            return None  # about:, chrome://, moz-extension://, file:, data:, javascript: ...
    elif text.startswith("//"):
        scheme, rest = "https", text[2:]
    else:
        scheme, rest = "http", text
        if not _looks_like_bare_host(rest):
            return None

    end = len(rest)
    for stop in "/?#\\":
        index = rest.find(stop, 0, end)
        if index != -1:
            end = index
    authority, tail = rest[:end], rest[end:]
    host, port = _split_authority(authority, scheme)
    if host is None:
        return None

    tail = tail.replace("\\", "/") if "\\" in tail else tail
    path, _, fragment = tail.partition("#")
    path, _, query = path.partition("?")
    return Url(host, port, path, query, fragment)


def compute_site(text: str) -> str | None:
    """`site_of` without its cache and its guard (see `dispatch.compute`)."""
    url = split_url(text)
    return None if url is None else url.site


def _split_authority(authority: str, scheme: str) -> tuple[str | None, int | None]:
    hostport = authority.rpartition("@")[2]
    port_text = ""
    if hostport.startswith("["):
        close = hostport.find("]")
        if close == -1:
            return None, None
        host = hostport[: close + 1]
        if hostport[close + 1 : close + 2] == ":":
            port_text = hostport[close + 2 :]
    else:
        host, _, port_text = hostport.partition(":")
    host = host.lower().rstrip(".")
    if (
        not host
        or host == "[]"
        or not host.isprintable()
        or any(char in _FORBIDDEN_HOST_CHARS for char in host)
    ):
        return None, None
    port: int | None = None
    # An unreadable port is ignored rather than fatal: the host still names the site.
    if port_text.isascii() and port_text.isdigit() and len(port_text) <= 5:
        number = int(port_text)
        if 0 < number <= 65535 and number != _DEFAULT_PORTS.get(scheme):
            port = number
    return host, port


def _looks_like_bare_host(text: str) -> bool:
    """Address-bar text such as `github.com/acme` (browsers hide the scheme)."""
    end = len(text)
    for stop in "/?#:":
        index = text.find(stop, 0, end)
        if index != -1:
            end = index
    host = text[:end].lower().rstrip(".")
    if (
        not host
        or "@" in host
        or not host.isprintable()
        or any(char in _FORBIDDEN_HOST_CHARS for char in host)
    ):
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    tld = host.rpartition(".")[2]
    return "." in host and (tld.isdigit() or (len(tld) >= 2 and tld.isalpha()))


def tidy(text: str, limit: int = 120) -> str:
    """One line of text: control characters removed, whitespace collapsed, at most `limit`."""
    if not text.isprintable():
        # Controls, format characters, lone surrogates, unassigned code points: an entity
        # must survive JSON and a terminal.
        text = "".join(char if char.isprintable() else " " for char in text)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[:limit].rstrip()
    return text


def search_text(value: str | None, limit: int = 100) -> str | None:
    """A decoded search query as an entity: trimmed, whitespace collapsed, at most 100 chars."""
    if value is None:
        return None
    text = tidy(value, limit)
    return text or None


def short_id(value: str, keep: int = 24) -> str:
    """Opaque ids longer than `keep` (Outlook message ids run to 150 chars and share a
    per-mailbox prefix, so truncation collides) become a stable 12-hex digest."""
    if len(value) <= keep:
        return value
    return "h" + hashlib.blake2s(value.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def slug_words(slug: str) -> str:
    """`how-to-do-x` or `How_To+Do` as plain words."""
    return " ".join(slug.replace("-", " ").replace("_", " ").replace("+", " ").split())


def is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()
