"""`manage.py serve` (what `make run` starts): uvicorn with Django and MCP, and its worker.

Each test starts the real command in its own process on its own SQLite database and filesystem
broker, then stops it the way a person or a process manager would.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from perf.harness import free_port

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    folder = tmp_path_factory.mktemp("serve")
    environment = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{folder / 'serve.sqlite3'}",
        "AFRAMES_VAR_DIR": str(folder / "var"),
        "SECRET_KEY": "serve-test",
    }
    environment.pop("REDIS_URL", None)
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "--noinput"],
        env=environment,
        check=True,
        capture_output=True,
        timeout=180,
    )
    yield environment


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as err:
        return err.code


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _start(env: dict[str, str]) -> tuple[subprocess.Popen[str], str, list[int]]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    # One worker for the live queue, one for the bulk ones (settings.AFRAMES_QUEUE_GROUPS).
    workers = [int(pid) for pid in re.findall(r"(?:live|bulk) pid (\d+)", first)]
    assert first.startswith("Workers started") and len(workers) == 2, first
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if _status(f"{base}/healthz") == 200:
                break
        except OSError:
            pass
        assert time.monotonic() < deadline and proc.poll() is None, "serve did not come up"
        time.sleep(0.2)
    return proc, base, workers


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_serve_answers_pages_and_mcp_and_every_signal_stops_its_worker(env, signum) -> None:
    proc, base, workers = _start(env)
    try:
        assert _status(f"{base}/login/") == 200
        assert _status(f"{base}/static/vendor/htmx-2.0.11/htmx.min.js") == 200
        # MCP is mounted beside Django: without a token it asks for one.
        assert _status(f"{base}/mcp") == 401
        assert not any(_gone(worker) for worker in workers)
        proc.send_signal(signum)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while not all(_gone(worker) for worker in workers):
            assert time.monotonic() < deadline, f"a worker outlived serve after {signum!r}"
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_embedded_worker_runs_a_pool_that_enforces_the_task_time_limits() -> None:
    """The solo pool runs a task in the worker's own process and cannot stop it; a prefork
    child past CELERY_TASK_TIME_LIMIT is killed and replaced. One child: SQLite sees one
    writer at a time."""
    from aframes_web.dashboard.management.commands.serve import worker_argv

    argv = worker_argv()
    assert argv[argv.index("--pool") + 1] == "prefork"
    assert argv[argv.index("--concurrency") + 1] == "1"
    assert "--beat" in argv


def test_a_fresh_day_never_queues_behind_an_import_or_a_benchmark_run() -> None:
    from django.conf import settings

    from aframes_web.celery import app
    from aframes_web.dashboard.management.commands.serve import worker_argv

    def queue_of(task: str) -> str:
        return str(app.amqp.router.route({}, task)["queue"].name)

    bulk = {"streams.run_import_job", "proactivestream.execute_run"}
    live = {
        "streams.refresh_entity_days",
        "activity.compile_day",
        "memory.close_due",
        "aframes.reconcile",
        "activity.compile_pending",
        "memory.close_idle",
    }
    assert {queue_of(t) for t in bulk} <= set(settings.AFRAMES_QUEUE_GROUPS["bulk"])
    assert {queue_of(t) for t in live} == {"live"}
    # The embedded workers: one per group, between them every queue, beat with the live one.
    consumed = {}
    for group in settings.AFRAMES_QUEUE_GROUPS:
        argv = worker_argv(group)
        consumed[group] = set(argv[argv.index("--queues") + 1].split(","))
        assert ("--beat" in argv) == (group == "live")
    assert consumed == {g: set(q) for g, q in settings.AFRAMES_QUEUE_GROUPS.items()}
    # A worker told nothing consumes every queue (a deployment's default worker).
    assert {q.name for q in app.conf.task_queues} == consumed["live"] | consumed["bulk"]
