"""manage.py serve: the embedded ASGI web server (uvicorn) and its Celery workers, stopped
together: one for the live queue (summaries, compiles, memory closes, the periodic sweeps) and
one for the bulk queues (imports, benchmark runs), so a fresh day is never queued behind a long
import (settings.AFRAMES_QUEUE_GROUPS)."""

from __future__ import annotations

import signal
import subprocess
import sys
from types import FrameType
from typing import Any

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


def worker_argv(group: str = "live") -> list[str]:
    """One embedded worker for a group of queues: one prefork child each, so the task time
    limits hold (the prefork pool kills a child past CELERY_TASK_TIME_LIMIT; the solo pool
    cannot) and SQLite sees at most two writers, which its busy timeout serialises (WAL,
    settings.py). The live worker runs beat for the periodic sweeps (production runs a beat
    container)."""
    argv = [
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
        "--queues",
        ",".join(settings.AFRAMES_QUEUE_GROUPS[group]),
        "--hostname",
        f"{group}@%h",
    ]
    if group == "live":
        argv += ["--beat", "--schedule", str(settings.VAR_DIR / "celerybeat-schedule")]
    return argv


class Command(BaseCommand):
    help = "Run the web server (Django and MCP, over uvicorn) and a Celery worker side by side."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-worker", action="store_true", help="web server only")

    def handle(self, *args: Any, **options: Any) -> None:
        workers: list[subprocess.Popen[bytes]] = []
        if not options["no_worker"]:
            workers = [
                subprocess.Popen(worker_argv(group)) for group in settings.AFRAMES_QUEUE_GROUPS
            ]
            broker = (
                "Redis" if settings.REDIS_URL else f"filesystem broker in {settings.BROKER_DIR}"
            )
            pids = ", ".join(
                f"{group} pid {w.pid}"
                for group, w in zip(settings.AFRAMES_QUEUE_GROUPS, workers, strict=True)
            )
            self.stdout.write(f"Workers started ({pids}) on the {broker}.")
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
            for worker in workers:
                worker.terminate()
            for worker in workers:
                try:
                    worker.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    worker.kill()
