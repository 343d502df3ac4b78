"""Local development servers: localhost, loopback addresses, `*.localhost`, Docker's host alias.

The entity is `host:port/first-segment` (`localhost:3000/admin`): the port tells which dev server
it was, the first path segment which part of the app, and deeper paths are usually ids.
"""

from __future__ import annotations

from .ref import PageRef
from .url import Parser, Url, tidy


def local_server(url: Url) -> PageRef | None:
    address = url.site if url.port is None else f"{url.site}:{url.port}"
    root = url.seg(0)
    return PageRef("localhost", f"{address}/{tidy(root, 60)}" if root else address)


HOSTS: dict[str, Parser] = {
    "localhost": local_server,
    "127.0.0.1": local_server,
    "0.0.0.0": local_server,
    "[::1]": local_server,
    "host.docker.internal": local_server,
}
SUFFIXES: dict[str, Parser] = {"localhost": local_server}
