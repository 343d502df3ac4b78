"""manage.py serve: the embedded ASGI web server (uvicorn) and a Celery worker, stopped together."""

from __future__ import annotations

import signal
import subprocess
import sys
from types import FrameType
from typing import Any

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


def worker_argv() -> list[str]:
    """The embedded worker: one prefork child, so SQLite sees one writer at a time and the
    task time limits hold (the prefork pool kills a child past CELERY_TASK_TIME_LIMIT; the
    solo pool cannot), with beat for the periodic sweeps (production runs a beat container)."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "aframes_web",
        "worker",
        "--pool",
        "prefork",
        "--concurrency",
        "1",
        "--loglevel",
        "INFO",
        "--beat",
        "--schedule",
        str(settings.VAR_DIR / "celerybeat-schedule"),
    ]


class Command(BaseCommand):
    help = "Run the web server (Django and MCP, over uvicorn) and a Celery worker side by side."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-worker", action="store_true", help="web server only")

    def handle(self, *args: Any, **options: Any) -> None:
        worker = None
        if not options["no_worker"]:
            worker = subprocess.Popen(worker_argv())
            broker = (
                "Redis" if settings.REDIS_URL else f"filesystem broker in {settings.BROKER_DIR}"
            )
            self.stdout.write(f"Worker started (pid {worker.pid}) on the {broker}.")
        url = f"http://{options['host']}:{options['port']}/"
        self.stdout.write(
            f"\nAframes is running at {url}  (MCP at {url}mcp; Ctrl-C stops web server and "
            "worker)\n"
        )
        server = uvicorn.Server(
            uvicorn.Config(
                "aframes_web.asgi:application",
                host=options["host"],
                port=options["port"],
                lifespan="on",
                log_level="info",
            )
        )

        def stop(signum: int, frame: FrameType | None) -> None:
            server.should_exit = True

        # uvicorn handles SIGINT and SIGTERM while it serves, then restores the handlers it
        # found and raises the signal again: with the default SIGTERM action the process would
        # die there, before the finally below stops the worker. A closed terminal (SIGHUP)
        # stops the server the same way.
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGHUP, stop)
        try:
            server.run()
        finally:
            if worker is not None:
                worker.terminate()
                try:
                    worker.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    worker.kill()
