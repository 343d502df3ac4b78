"""The ASGI application on uvicorn in a thread of the test process, as `manage.py serve` runs
it: a live server for tests that go through HTTP (MCP clients, the lean door)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from perf.harness import free_port


@contextmanager
def serving(application: Any) -> Iterator[str]:
    """Serve ``application`` on a free loopback port; yields its base URL."""
    port = free_port()
    config = uvicorn.Config(
        application, host="127.0.0.1", port=port, lifespan="on", log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
