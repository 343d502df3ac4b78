"""manage.py serve: the embedded web server and a Celery worker together, stopped together."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Run the web server and a Celery worker side by side (embedded default)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-worker", action="store_true", help="web server only")

    def handle(self, *args: Any, **options: Any) -> None:
        worker = None
        if not options["no_worker"]:
            # The solo pool keeps SQLite writes from the worker to one at a time.
            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "aframes_web",
                    "worker",
                    "--pool",
                    "solo",
                    "--loglevel",
                    "INFO",
                    # Embedded beat for the periodic sweep; production runs one beat container.
                    "--beat",
                    "--schedule",
                    str(settings.VAR_DIR / "celerybeat-schedule"),
                ],
            )
            broker = (
                "Redis" if settings.REDIS_URL else f"filesystem broker in {settings.BROKER_DIR}"
            )
            self.stdout.write(f"Worker started (pid {worker.pid}) on the {broker}.")
        url = f"http://{options['host']}:{options['port']}/"
        self.stdout.write(f"\nAframes is running at {url}  (Ctrl-C stops web server and worker)\n")
        try:
            call_command(
                "runserver",
                f"{options['host']}:{options['port']}",
                use_reloader=False,
                use_threading=True,
            )
        finally:
            if worker is not None:
                worker.terminate()
                try:
                    worker.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    worker.kill()
