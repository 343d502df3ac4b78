"""Shared plumbing of the ingestion benchmarks: a scratch PostgreSQL database, a real server.

Benchmarks never touch the database the tests or a deployment use: they create (and drop)
their own ``aframes_bench`` database on the PostgreSQL that DATABASE_URL points at, or on
127.0.0.1:5432 when it is unset.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import django
import psycopg
from redis import Redis

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench-results"
BENCH_DB = "aframes_bench"


def fail(message: str) -> None:
    print(f"benchmark cannot run: {message}", file=sys.stderr)
    raise SystemExit(2)


def bench_database_url(name: str = BENCH_DB) -> str:
    base = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    parts = urlsplit(base)
    if parts.scheme not in ("postgres", "postgresql"):
        fail(f"the ingestion benchmarks measure PostgreSQL; DATABASE_URL is {parts.scheme}://")
    return urlunsplit(parts._replace(path=f"/{name}"))


def recreate_database(url: str) -> None:

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        fail(f"PostgreSQL is not reachable at {admin} ({exc}).")


# Redis database for a benchmark's queued tasks, away from the database the service and the
# tests use (0 by default): tasks a benchmark queues but never runs must not reach their workers.
BENCH_REDIS_DB = 15


def redis_url(db: int | None = None) -> str | None:
    """The Redis at REDIS_URL (or 127.0.0.1:6379), on database ``db`` if given; None if down."""
    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), 1):
            pass
    except OSError:
        return None
    return url if db is None else urlunsplit(parts._replace(path=f"/{db}"))


def server_env(
    var_dir: Path, database: str = BENCH_DB, redis_db: int = BENCH_REDIS_DB
) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=bench_database_url(database),
        SECRET_KEY="benchmark-only",
        AFRAMES_VAR_DIR=str(var_dir),
        LOG_LEVEL="WARNING",
    )
    redis = redis_url(redis_db)
    if redis:
        env["REDIS_URL"] = redis
    else:
        env.pop("REDIS_URL", None)
    return env


# What the benchmark in this process runs on, said in its report and put in its JSON line.
SERVICES: dict[str, str] = {}


def services_of(env: Mapping[str, str]) -> str:
    """The database and broker ``env`` names, in words, without credentials."""
    db = urlsplit(env["DATABASE_URL"])
    where = f"{db.hostname or 'localhost'}:{db.port or 5432}"
    said = f"PostgreSQL database {db.path.lstrip('/')} at {where}"
    redis = env.get("REDIS_URL")
    if redis:
        r = urlsplit(redis)
        said += f"; Redis database {r.path.lstrip('/') or '0'} at {r.hostname}:{r.port or 6379}"
    else:
        said += "; no Redis reachable: tasks on the filesystem broker"
    return said


# A long SYNTHETIC upload: one event repeated, so the worker reads and checks every line and
# stores one; queued (UPLOAD_JOB, for `manage.py shell -c`, with the file's path, its name
# and the entity's key) as the dashboard queues an upload.
UPLOAD_LINE = json.dumps(
    {"occurred_at": "2026-03-01T08:00:00Z", "kind": "snapshot", "source_key": "same",
     "payload": {"app": "X"}}
)  # fmt: skip
UPLOAD_JOB = """
from django.core.files.uploadedfile import TemporaryUploadedFile
from aframes_web.streams.uploads import import_job_create
from aframes_web.teams.models import Team
upload = TemporaryUploadedFile({name!r}, "application/x-ndjson", 0, None)
upload.file.close()
upload.file = open({path!r}, "rb")
job = import_job_create(team=Team.objects.get(slug="bench"), user=None, format_name="jsonl",
                        entity_key={entity!r}, upload=upload, scope="desktop", tz="UTC")
print(job.pk)
"""


def write_upload(path: Path, lines: int) -> None:
    """The long upload of ``lines`` lines (UPLOAD_LINE repeated) at ``path``."""
    with path.open("w") as handle:
        for _ in range(lines):
            handle.write(UPLOAD_LINE + "\n")


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        fail(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


@contextmanager
def scratch_instance(
    database: str = BENCH_DB, redis_db: int = BENCH_REDIS_DB
) -> Iterator[tuple[dict[str, str], str]]:
    """A migrated scratch database with team ``bench``; yields (env, write token).

    A benchmark that may run beside another, or runs a worker, passes its own ``database`` and
    ``redis_db``; the Redis database is emptied first (it holds only benchmark tasks).
    """
    with tempfile.TemporaryDirectory(prefix="aframes-bench-") as tmp:
        env = server_env(Path(tmp), database, redis_db)
        SERVICES["services"] = used = services_of(env)
        print(f"Services: {used}", flush=True)
        if "REDIS_URL" in env:
            Redis.from_url(env["REDIS_URL"]).flushdb()
        recreate_database(env["DATABASE_URL"])
        manage(env, "migrate", "--noinput")
        manage(env, "create_team", "bench")
        key = manage(
            env, "create_token", "bench", "bench", "--scopes", "read,write", "--quiet"
        ).strip()
        yield env, key


@dataclass(frozen=True)
class Measured:
    """One child process, measured alone."""

    wall_s: float
    peak_rss_mb: float
    stdout: str
    stderr: str


def run_measured(command: list[str], env: dict[str, str], what: str) -> Measured:
    """Run a command in its own process; its wall time and its own peak RSS, or SystemExit."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=err)
        # wait4 gives this child's own rusage; ru_maxrss is in KiB on Linux.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{what} failed:\n{(stdout + stderr)[-2000:]}")
    return Measured(wall, usage.ru_maxrss / 1024, stdout, stderr)


def settings_on(database: str, redis_db: int | None = None) -> None:
    """Point this process's settings at a scratch instance before anything reads them.

    Django reads its settings once, at the first access (a reader's import limits, a model):
    a harness that reads files with the importers before it sets Django up calls this first,
    so that the settings it gets are the scratch instance's, whatever DATABASE_URL said (none:
    the embedded SQLite default, which has none of the scratch tables)."""
    os.environ["DATABASE_URL"] = bench_database_url(database)
    os.environ.setdefault("SECRET_KEY", "benchmark-only")
    redis = redis_url(redis_db)
    if redis:
        os.environ["REDIS_URL"] = redis
    else:
        os.environ.pop("REDIS_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "aframes_web.settings"


def django_on(env: Mapping[str, str]) -> None:
    """Set this process's Django up on ``env``'s instance (a scratch database). Settings are
    read once, at setup, so this comes before the first import of a model (a harness imports
    the module that uses the models only after calling it), or :func:`settings_on` came
    first; a process whose settings already name another database stops, saying so."""
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "aframes_web.settings"
    django.setup()
    from django.conf import settings  # stays: after setup, to read what it loaded

    named = settings.DATABASES["default"].get("NAME")
    url = env.get("DATABASE_URL")
    wanted = urlsplit(url).path.lstrip("/") if url and url.startswith("postgres") else named
    if named != wanted:
        fail(
            f"Django was set up on database {named!r} before the benchmark pointed it at its "
            f"scratch database {wanted!r}; call perf.harness.settings_on first"
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_server(
    env: dict[str, str], workers: int, *, asgi: bool = False
) -> Iterator[tuple[str, subprocess.Popen]]:
    """gunicorn on a free loopback port: the WSGI app on sync workers, or with ``asgi`` the
    ASGI app (Django and MCP) on uvicorn workers, as ``docker/entrypoint.sh`` serves it."""
    port = free_port()
    app = ["aframes_web.asgi:application", "--worker-class", "uvicorn_worker.UvicornWorker"]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            *(app if asgi else ["aframes_web.wsgi:application"]),
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--timeout",
            "120",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,  # stop() can end its workers with it
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, 30, "the gunicorn server")
        yield base, proc
    finally:
        stop(proc, grace=30)


def wait_healthy(base: str, proc: subprocess.Popen[Any], seconds: float, what: str) -> None:
    """Until ``base``'s health endpoint answers; the benchmark stops, saying so, if ``proc``
    exits or ``seconds`` pass first."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=2).read()
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                fail(f"{what} did not come up")
            time.sleep(0.2)


def stop(proc: subprocess.Popen[Any], grace: float = 60.0) -> None:
    """Stop a server or worker the harness started in its own session (``start_new_session``):
    SIGTERM (a Celery worker finishes its task, gunicorn its requests), then, past ``grace``
    seconds (a loaded machine), SIGKILL to the whole process group, children included; it
    always returns with nothing of it left running."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        print(f"  pid {proc.pid} did not stop within {grace:.0f} s of SIGTERM; killed", flush=True)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def process_tree_peak_rss_mb(pid: int) -> dict[str, float]:
    """Peak resident memory (VmHWM) of a process and its children, in MB."""

    def hwm(p: int) -> float:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    children = Path(f"/proc/{pid}/task/{pid}/children")
    kids = [int(c) for c in children.read_text().split()] if children.exists() else []
    return {"master": hwm(pid), "max_worker": max((hwm(k) for k in kids), default=0.0)}


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def finish(name: str, figures: dict[str, Any]) -> None:
    """Write the figures to bench-results/NAME.json and print them as the last line."""
    if SERVICES:
        figures = {**figures, **{k: v for k, v in SERVICES.items() if k not in figures}}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures))
