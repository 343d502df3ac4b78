"""make bench-chaos: whether derived state heals when workers and services die mid-task.

    python -m perf.chaos [--events 40000] [--seed 7] [--kills-per-type 1] [--load-s 360]

The production shape of ARCHITECTURE.md ("Embedded default and scale-out"), all inside one
temporary folder and never touching the machine's own services: its own PostgreSQL (initdb,
trust auth, fsync off) and Redis (no persistence) on spare ports, gunicorn with uvicorn workers
as ``docker/entrypoint.sh`` serves the ASGI app, three Celery workers of two processes each and
one beat. While SYNTHETIC clients send a team's load (desktop agents and a home hub posting
batches to ``POST /api/v1/entities/{key}/events``, repeats, batches held back until their day
has closed in memory, dashboard-style import jobs), it injects faults:

* for each task type (summary ``streams.refresh_entity_days``, compile ``activity.compile_day``,
  memory close ``memory.close_due``, import ``streams.run_import_job``), ``--kills-per-type``
  times: a table the task writes is locked (``LOCK TABLE ... IN SHARE MODE``) until the task is
  blocked in its transaction, the whole worker running it is SIGKILLed (process group), the lock
  released, and after 1-5 s the worker started again under its name;
* Redis once (SIGKILL, started again on its port) and PostgreSQL once (``pg_ctl stop -m
  immediate``, started again);
* then, once the load has ended and the store has converged, a **quiet round**: each task type
  once more, the same way, but made to run by one thing sent under the lock (three late events
  for a day memory has closed: a home day for the summary, another for the memory rebuild, a
  desktop day for the compile; a new import job for the import) and then nothing more. Faults
  during the load may heal because later batches touch their days; a quiet fault can only be
  healed by the system itself (the retries, the beat's reconciliation pass every 15 s, an
  import resumed), and the next one starts once it has healed and the store agrees again.

**Which worker.** Each process connects with its own ``application_name`` (libpq's PGAPPNAME):
the backend that ``pg_blocking_pids`` says our lock blocks names its worker. The tasks that
worker holds (``inspect active`` and ``reserved``, through the scratch Redis) say which rows the
kill may have left stale: the fault's scope.

**Divergence**, computed by this module from the tables, trusting none of the product's own
reconciliation: per entity and local day (entity time zone) the ``EntityDay`` against a grouped
recount of ``Event``; a current ``DayDocument`` for every day with desktop events that has read
them all, and no compile pending; every closed ``Trajectory`` holding the events stored for its
day (a late event makes memory rebuild, ARCHITECTURE.md principle 5) and every day before an
entity's newest one closed; every ``ImportJob`` done or failed, its upload gone, a done one
having read its whole file. A fault has **healed** at the first poll (every 2 s) after its
worker or service came back at which no row of its scope diverges; after ``--timeout-s`` it
has not. When the load has ended, the same check waits for the whole store, the quiet round
runs, then the full checks run: ``manage.py certify --json`` (every desktop day's document
equals a compile from scratch) and memory against a rebuild: the workers stopped, the database
is copied (``CREATE DATABASE ... TEMPLATE``), ``manage.py memory_close --rebuild`` runs on the
copy, and every trajectory, segment, citation, fact, regularity, assessment and transition of
the two is compared row by row.

Targets: 0 divergent rows; healed within 60 s of the restart at p95 and 120 s at most, the
quiet faults included. The last line is one JSON object: ``kills`` (workers killed mid-task,
quiet round included), ``restarts`` (Redis and PostgreSQL restarts), ``divergent_rows``,
``convergence_s_p95``, ``convergence_s_max`` (over every fault; null when one never healed),
``quiet_convergence_s_max`` (the quiet round's alone; null when one of them never healed or
could not be injected), ``events`` (stored), ``unhealed``, ``not_injected``, ``targets_met``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
from celery import Celery
from celery.utils.nodenames import host_format

from benchmark.synthetic.desktop import generate_day, write_jsonl
from benchmark.synthetic.memory_streams import ZONES, generate, local_day
from perf.harness import RESULTS, ROOT, fail, finish, free_port, percentile

TEAM = "chaos"
DATABASE = "aframes_chaos"
REBUILD_DATABASE = "aframes_chaos_rebuild"
START = date(2026, 3, 2)  # a Monday: the desktop agents' days are working days
WORKERS = 3
CONCURRENCY = 2
POLL_S = 2.0
TARGET_P95_S = 60.0
TARGET_MAX_S = 120.0
LOCK_WAIT_S = 90.0  # how long a lock is held waiting for the task to block in it
APP_PREFIX = "chaos-"
WORKER_APP = f"{APP_PREFIX}worker-"  # a worker's application_name: WORKER_APP + its name

# Task type -> (task name, the table whose lock stops it inside its transaction). Read from the
# services: a summary writes streams_entityday (entity_days_refresh), a compile materialises
# activity_frame (_frames_replace), a day close inserts memory_trajectory (_store_trajectory)
# and a rebuild deletes from it, an import inserts streams_event (events_store_staged).
TASK_TYPES: dict[str, tuple[str, str]] = {
    "summary": ("streams.refresh_entity_days", "streams_entityday"),
    "compile": ("activity.compile_day", "activity_frame"),
    "memory": ("memory.close_due", "memory_trajectory"),
    "import": ("streams.run_import_job", "streams_event"),
}
SERVICES = ("redis", "postgres")
# Event kinds a desktop compile reads (compiler.sources.events.KINDS).
DESKTOP_KINDS = ("snapshot", "input", "elements", "absence")

# The team's streams: desktop agents (key, time zone, person), then one home hub.
DESKTOPS = (
    ("desk-ana", "Europe/Berlin", "ana"),
    ("desk-ben", "America/New_York", "ben"),
    ("desk-chen", "Asia/Tokyo", "chen"),
    ("desk-dana", "Europe/London", "dana"),
    ("desk-emil", "Europe/Berlin", "emil"),
    ("desk-fay", "America/Chicago", "fay"),
    ("desk-gus", "Australia/Sydney", "gus"),
)
HOME = ("home-flat", "America/Los_Angeles")
IMPORT_TZ = "Europe/Paris"
DESKTOP_DAYS = 3
DESKTOP_DAY_RECORDS = 3_500  # about what generate_day gives (two monitors), to size the imports
HOME_DAYS = 8
BATCHES_PER_DAY = {"desktop": 12, "home": 8}
DUPLICATE_SHARE = 0.1  # batches sent a second time a few batches later
LATE_SHARE = 0.08  # batches held back until their agent is on a later day
# Late events in the one batch of a quiet fault: enough to change its day's summary, compile
# and memory, few enough that the heal is the system's work, not the batch's.
QUIET_EVENTS = 3

Row = tuple[str, str, str]  # (kind, entity key or job id, local day or "")
ALL: frozenset[Row] = frozenset({("*", "", "")})


# --- Arguments ---------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m perf.chaos", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--events", type=int, default=40_000, help="events to send (~)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--kills-per-type", type=int, default=1)
    parser.add_argument("--clients", type=int, default=6, help="concurrent client threads")
    parser.add_argument("--load-s", type=float, default=360.0, help="how long the load runs")
    parser.add_argument(
        "--timeout-s", type=float, default=300.0, help="how long a fault may take to heal"
    )
    args = parser.parse_args(argv)
    problems = []
    if args.events < 500:
        problems.append("--events must be at least 500 (a few batches per day)")
    if args.kills_per_type < 1:
        problems.append("--kills-per-type must be at least 1")
    if not 2 <= args.clients <= len(DESKTOPS) + 1:
        problems.append(f"--clients must be from 2 to {len(DESKTOPS) + 1} (one per stream)")
    faults = len(TASK_TYPES) * args.kills_per_type + len(SERVICES)
    if args.load_s < 30 * faults:
        problems.append(
            f"--load-s must be at least {30 * faults} s: {faults} faults need ~30 s of load each"
        )
    if args.timeout_s < 10:
        problems.append("--timeout-s must be at least 10")
    if problems:
        parser.error("; ".join(problems))
    return args


# --- The load ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    entity: str
    day: str  # the local day it belongs to, for the report
    records: tuple[dict[str, Any], ...]
    kind: str = "live"  # live | duplicate | late


@dataclass
class Stream:
    key: str
    scope: str
    timezone: str
    days: list[list[dict[str, Any]]]  # each local day's records, in time order


def streams(clients: int, seed: int) -> list[Stream]:
    """The team's SYNTHETIC streams: ``clients - 1`` desktop agents and one home hub."""

    out = []
    for key, zone, person in DESKTOPS[: clients - 1]:
        days = [
            generate_day(START + timedelta(days=n), seed=seed, tz=zone, person=person)
            for n in range(DESKTOP_DAYS)
        ]
        out.append(Stream(key, "desktop", zone, days))
    items = generate("home", days=HOME_DAYS, seed=seed, start=START)
    by_day: dict[date, list[dict[str, Any]]] = {}
    for item in items:
        by_day.setdefault(local_day(item, "home"), []).append(item)
    out.append(Stream(HOME[0], "home", ZONES["home"], [by_day[d] for d in sorted(by_day)]))
    return out


def scaled(groups: list[list[dict[str, Any]]], share: float) -> list[list[dict[str, Any]]]:
    """Each day cut to its first ``share`` of records (a day captured until mid-day)."""
    return [day[: max(1, round(len(day) * share))] for day in groups]


def schedule(stream: Stream, rng: random.Random) -> list[Batch]:
    """The batches one client sends, in order: each day in BATCHES_PER_DAY batches, some sent
    twice a few batches later, some held back until the client is half-way through a later
    day (by then memory has closed their day, so they arrive late)."""
    per_day = BATCHES_PER_DAY[stream.scope]
    days: list[list[Batch]] = []
    for records in stream.days:
        size = -(-len(records) // per_day)
        day = _day_of(records[0], stream.timezone)
        days.append(
            [
                Batch(stream.key, day, tuple(records[i : i + size]))
                for i in range(0, len(records), size)
            ]
        )
    held: dict[int, list[Batch]] = {}
    for number, batches in enumerate(days[:-1]):
        for batch in list(batches):
            # Never the day's first or last batch: the day must exist and be complete in time
            # order, so what is held back really comes after the day closed.
            if batch is batches[0] or batch is batches[-1] or rng.random() >= LATE_SHARE:
                continue
            batches.remove(batch)
            target = min(len(days) - 1, number + 1 + rng.randint(0, 1))
            held.setdefault(target, []).append(
                Batch(batch.entity, batch.day, batch.records, "late")
            )
    ordered: list[Batch] = []
    for number, batches in enumerate(days):
        late = held.get(number, [])
        middle = len(batches) // 2
        ordered += batches[:middle] + late + batches[middle:]
    out: list[Batch] = []
    repeats: dict[int, list[Batch]] = {}
    for index, batch in enumerate(ordered):
        out.append(batch)
        out += repeats.pop(index, [])
        if rng.random() < DUPLICATE_SHARE:
            again = Batch(batch.entity, batch.day, batch.records, "duplicate")
            repeats.setdefault(index + rng.randint(1, 4), []).append(again)
    for rest in repeats.values():
        out += rest
    return out


def _day_of(record: dict[str, Any], zone: str) -> str:

    moment = datetime.fromisoformat(record["occurred_at"].replace("Z", "+00:00"))
    return moment.astimezone(ZoneInfo(zone)).date().isoformat()


@dataclass
class LoadTally:
    batches: int = 0
    sent: int = 0
    accepted: int = 0
    duplicates: int = 0
    retries: int = 0
    refused: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def api(base: str, key: str, method: str, path: str, body: Any = None, timeout: float = 120) -> Any:
    request = urllib.request.Request(
        f"{base}{path}",
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.loads(answer.read() or b"null")


def send(base: str, key: str, batch: Batch, tally: LoadTally, stop: threading.Event) -> None:
    """Post one batch as an agent does: again after a pause until it is taken (ingestion is
    idempotent), through a server error, a refused connection or a restart of a service."""
    pause = 0.5
    deadline = time.monotonic() + 300
    while not stop.is_set():
        try:
            answer = api(
                base, key, "POST", f"/api/v1/entities/{batch.entity}/events", batch.records
            )
        except urllib.error.HTTPError as err:
            if err.code < 500 and err.code != 429:
                with tally.lock:
                    tally.refused.append(f"{batch.entity} {batch.day}: HTTP {err.code}")
                return
        except (OSError, ValueError):
            pass
        else:
            with tally.lock:
                tally.batches += 1
                tally.sent += len(batch.records)
                tally.accepted += answer["accepted"]
                tally.duplicates += answer["duplicates"]
            return
        if time.monotonic() > deadline:
            with tally.lock:
                tally.refused.append(f"{batch.entity} {batch.day}: not taken within 300 s")
            return
        with tally.lock:
            tally.retries += 1
        stop.wait(pause)
        pause = min(5.0, pause * 2)


def client(
    base: str,
    key: str,
    batches: list[Batch],
    began: float,
    load_s: float,
    tally: LoadTally,
    stop: threading.Event,
) -> None:
    """One agent: its batches evenly over the load, or back to back when the server lags."""
    step = load_s / max(1, len(batches))
    for index, batch in enumerate(batches):
        if stop.wait(max(0.0, began + index * step - time.monotonic())):
            return
        send(base, key, batch, tally, stop)


# --- Processes -----------------------------------------------------------------------------------


def _wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.2)


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), 0.5):
            return True
    except OSError:
        return False


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), 0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class Stack:
    """PostgreSQL, Redis, gunicorn, three workers and beat, all under one temporary folder.

    Every process runs in its own session (``start_new_session``), so a worker dies whole (its
    pool children too) by ``os.killpg`` and Ctrl-C reaches only this process, whose teardown
    stops everything.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pg_port = free_port()
        self.redis_port = free_port()
        self.web_port = free_port()
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Path] = {}
        self.pg_bin = self._pg_bin()
        # initdb and postgres refuse to run as root; the folder is then the postgres user's.
        self.pg_user = "postgres" if os.geteuid() == 0 else None
        self.url = f"postgres://postgres@127.0.0.1:{self.pg_port}/{DATABASE}"
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.base = f"http://127.0.0.1:{self.web_port}"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "AFRAMES_COMPILE_INTERVAL_MS", "PGAPPNAME")
            and not k.startswith("CELERY_")
        }
        self.env.update(
            DATABASE_URL=self.url,
            REDIS_URL=self.redis_url,
            SECRET_KEY="chaos-benchmark-only",
            DEBUG="0",
            ALLOWED_HOSTS="127.0.0.1,localhost",
            AFRAMES_VAR_DIR=str(root / "var"),
            # The reconciliation pass on the beat (harmless where settings do not know it).
            AFRAMES_RECONCILE_INTERVAL_S="15",
            # The clients are one team; the throttle is not what is measured here.
            AFRAMES_API_RATE="100000/minute",
            LOG_LEVEL="INFO",
            PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        )

    @staticmethod
    def _pg_bin() -> Path:
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
        if not found:
            fail("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
        return found[-1].parent

    # -- PostgreSQL and Redis

    def _pg(self, *args: str) -> None:
        done = subprocess.run(
            [str(self.pg_bin / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            user=self.pg_user,
            cwd=self.root,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed:\n{done.stdout}{done.stderr}")

    def init_postgres(self) -> None:
        data, sockets = self.root / "pg", self.root / "pgrun"
        for folder in (data, sockets):
            folder.mkdir()
            if self.pg_user:
                shutil.chown(folder, self.pg_user, self.pg_user)
        self._pg(
            "initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"
        )
        self.start_postgres()

        admin = f"postgres://postgres@127.0.0.1:{self.pg_port}/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')

    def start_postgres(self) -> None:
        options = (
            f"-p {self.pg_port} -k {self.root / 'pgrun'} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        self._pg(
            "pg_ctl", "-D", str(self.root / "pg"), "-l", str(self.root / "pgrun" / "postgres.log"),
            "-w", "-t", "60", "-o", options, "start",
        )  # fmt: skip

    def stop_postgres(self, mode: str = "fast") -> None:
        self._pg("pg_ctl", "-D", str(self.root / "pg"), "-m", mode, "-w", "stop")

    def start_redis(self) -> None:
        (self.root / "redis").mkdir(exist_ok=True)
        self._spawn(
            "redis",
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1"]
            + ["--save", "", "--appendonly", "no", "--daemonize", "no"]
            + ["--dir", str(self.root / "redis")],
        )
        _wait_for(lambda: _redis_ping(self.redis_port), 30, "Redis answering PING")

    # -- Aframes

    def _spawn(self, name: str, command: list[str], env: dict[str, str] | None = None) -> int:
        """Start a process in its own session, appending to its log; returns the log's size
        before it started (where this run's lines begin)."""
        log = self.logs.setdefault(name, self.root / f"{name}.log")
        offset = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            self.procs[name] = subprocess.Popen(
                command,
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return offset

    def manage(self, *args: str, database_url: str | None = None, check: bool = True) -> str:
        env = dict(self.env, PGAPPNAME=f"{APP_PREFIX}manage")
        if database_url:
            env["DATABASE_URL"] = database_url
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def start_web(self) -> None:
        env = dict(self.env, PGAPPNAME=f"{APP_PREFIX}web", AFRAMES_DB_POOL="1")
        self._spawn(
            "web",
            [sys.executable, "-m", "gunicorn", "aframes_web.asgi:application"]
            + ["--worker-class", "uvicorn_worker.UvicornWorker"]
            + ["--bind", f"127.0.0.1:{self.web_port}", "--workers", "2", "--timeout", "120"],
            env,
        )

        def up() -> bool:
            if self.procs["web"].poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{self.tail('web')}")
            try:
                urllib.request.urlopen(f"{self.base}/healthz", timeout=2).read()
                return True
            except OSError:
                return False

        _wait_for(up, 60, "gunicorn answering /healthz")

    def start_worker(self, number: int) -> None:
        name = f"w{number}"
        env = dict(self.env, PGAPPNAME=f"{WORKER_APP}{name}")
        offset = self._spawn(
            name,
            [sys.executable, "-m", "celery", "-A", "aframes_web", "worker", "-n", f"{name}@%h"]
            + ["--concurrency", str(CONCURRENCY), "--loglevel", "INFO"],
            env,
        )

        def ready() -> bool:
            if self.procs[name].poll() is not None:
                raise RuntimeError(f"worker {name} exited:\n{self.tail(name)}")
            with self.logs[name].open("rb") as log:
                log.seek(offset)
                return b" ready." in log.read()

        _wait_for(ready, 120, f"worker {name} ready")

    def start_beat(self) -> None:
        env = dict(self.env, PGAPPNAME=f"{APP_PREFIX}beat")
        self._spawn(
            "beat",
            [sys.executable, "-m", "celery", "-A", "aframes_web", "beat", "--loglevel", "INFO"]
            + ["--schedule", str(self.root / "var" / "celerybeat-schedule")],
            env,
        )

    def kill(self, name: str) -> None:
        proc = self.procs.get(name)
        if proc is None or proc.poll() is not None:
            return
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def stop(self, name: str) -> None:
        proc = self.procs.get(name)
        if proc is None or proc.poll() is not None:
            return
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill(name)

    def tail(self, name: str, size: int = 3000) -> str:
        log = self.logs.get(name)
        return log.read_text(errors="replace")[-size:] if log and log.exists() else ""

    def teardown(self) -> None:
        for name in list(self.procs):
            if name != "redis":
                with suppress(Exception):
                    self.stop(name)
        with suppress(Exception):
            self.kill("redis")
        if (self.root / "pg" / "postmaster.pid").exists():
            try:
                self.stop_postgres("immediate")
            except Exception:
                with suppress(Exception):
                    pid = int((self.root / "pg" / "postmaster.pid").read_text().split()[0])
                    os.kill(pid, signal.SIGKILL)


@contextmanager
def stack() -> Iterator[Stack]:
    """A running stack, stopped and its folder removed however the block ends (Ctrl-C, an
    error, SIGTERM: that one is turned into SystemExit so the teardown runs)."""
    root = Path(tempfile.mkdtemp(prefix="aframes-chaos-"))
    root.chmod(0o755)  # the postgres user must reach its folders inside
    (root / "var").mkdir()
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    running = Stack(root)
    try:
        running.init_postgres()
        running.start_redis()
        running.manage("migrate", "--noinput")
        yield running
    finally:
        running.teardown()
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(root, ignore_errors=True)


# --- Faults ----------------------------------------------------------------------------------


@dataclass
class Fault:
    number: int
    kind: str  # a task type of TASK_TYPES, or a service of SERVICES
    task: str = ""
    worker: str = ""
    blocked: str = ""  # the blocked statement, shortened
    held: list[str] = field(default_factory=list)  # the tasks the killed worker held
    scope: frozenset[Row] = ALL
    injected_at: float | None = None  # lock taken / service killed
    killed_at: float | None = None
    restarted_at: float | None = None  # the worker started again / the service answering
    converged_at: float | None = None
    gave_up: bool = False
    note: str = ""
    # Events stored in the days of its scope when it was injected (the last poll before), and
    # when it healed: whether later traffic reached its rows, so a heal may owe to new batches.
    events_before: dict[tuple[str, str], int] | None = None
    new_events: int | None = None
    # The quiet round (after the load): one batch or import job made the task run, and nothing
    # was sent after the kill. ``traffic_after`` counts what was sent between kill and heal
    # anyway (batches and import jobs), so "quiet" is measured, not assumed.
    quiet: bool = False
    trigger: str = ""  # what was sent under the lock to make the task run
    traffic_before: int | None = None
    traffic_after: int | None = None

    @property
    def convergence_s(self) -> float | None:
        if self.restarted_at is None or self.converged_at is None:
            return None
        return self.converged_at - self.restarted_at


def fault_plan(kills_per_type: int) -> list[str]:
    """The order faults are injected in: task types in turn, the two services spread in."""
    kinds = [kind for _ in range(kills_per_type) for kind in TASK_TYPES]
    # Import last in each round of kills: it makes its own work; the others need the load.
    plan = kinds[:2] + ["redis"] + kinds[2:3] + ["postgres"] + kinds[3:]
    return plan


def late_copies(stream: Stream, day: int, tag: str, count: int = QUIET_EVENTS) -> Batch:
    """``count`` new events for one of a stream's days: copies of records from the middle of
    the day (as sent) under new source keys, so ingestion stores them, at the same moments, so
    they belong to that day. Sent after the day closed in memory, they arrive late."""
    records = stream.days[day]
    middle = max(0, len(records) // 2 - count // 2)
    chosen = records[middle : middle + count]
    copies = tuple({**r, "source_key": f"{r['source_key']}:{tag}"} for r in chosen)
    return Batch(stream.key, _day_of(chosen[0], stream.timezone), copies, "late")


def quiet_batches(plan: Sequence[Stream]) -> dict[str, Batch | None]:
    """The one thing sent per task type in the quiet round (None: an import job).

    Late events for a day memory has closed set off each task in turn (ARCHITECTURE.md
    principle 5): ingestion queues the day's summary (``streams.refresh_entity_days``), which
    queues ``memory.close_due``, which finds the late events and rebuilds the entity's memory;
    a desktop day's events also queue its compile (``activity.compile_day``). The home hub has
    no compile, so its refresh and its memory rebuild are the only tasks that batch makes: one
    of its days for the summary, another for memory, the first desktop's first day for the
    compile. Every day before an entity's newest is closed once the store has converged.
    """
    home = next(s for s in plan if s.scope == "home")
    desktop = next(s for s in plan if s.scope == "desktop")
    return {
        "summary": late_copies(home, 0, "quiet-summary"),
        "compile": late_copies(desktop, 0, "quiet-compile"),
        "memory": late_copies(home, 1, "quiet-memory"),
        "import": None,
    }


def in_scope(row: Row, scope: frozenset[Row]) -> bool:
    """Whether a divergent row belongs to a fault's scope: the rows it names, ``(kind, entity,
    "")`` for every day of that kind and entity, and ALL for everything."""
    return scope is ALL or row in scope or (row[0], row[1], "") in scope


DAY_KINDS = ("entityday", "document", "compile", "memory")


def scope_events(
    events: dict[tuple[str, str], tuple[int, datetime, datetime]], scope: frozenset[Row]
) -> dict[tuple[str, str], int]:
    """Events stored per (entity, day) of a scope's days (an import job's rows have none)."""
    return {
        key: value[0]
        for key, value in events.items()
        if any(in_scope((kind, *key), scope) for kind in DAY_KINDS)
    }


def _task_args(request: dict[str, Any]) -> list[Any]:
    args = request.get("args", [])
    if isinstance(args, str):  # older Celery reported a repr
        try:
            args = ast.literal_eval(args)
        except (ValueError, SyntaxError):
            return []
    return list(args) if isinstance(args, list | tuple) else []


def task_scope(
    requests: Iterable[dict[str, Any]], entities: dict[int, str], jobs: dict[int, str]
) -> frozenset[Row]:
    """The rows the tasks a killed worker held may have left stale (ALL for one not known)."""
    rows: set[Row] = set()
    for request in requests:
        name, args = request.get("name", ""), _task_args(request)
        key = entities.get(args[0], "") if args and isinstance(args[0], int) else ""
        if name == "streams.refresh_entity_days" and key and len(args) > 1:
            rows |= {("entityday", key, day) for day in args[1]} | {("memory", key, "")}
        elif name == "activity.compile_day" and key and len(args) > 1:
            rows |= {("document", key, args[1]), ("compile", key, args[1]), ("memory", key, "")}
        elif name == "memory.close_due" and key:
            rows.add(("memory", key, ""))
        elif name == "streams.run_import_job" and args:
            rows.add(("import", str(args[0]), ""))
            entity = jobs.get(args[0], "")
            rows |= {(kind, entity, "") for kind in DAY_KINDS}
        else:
            return ALL
    return frozenset(rows)


# --- The divergence check --------------------------------------------------------------------


@dataclass
class Snapshot:
    """What the check reads, as plain data (so the comparison is testable without a database).

    Keys are (entity key, local day ISO). ``events``: (count, first, last) of all events;
    ``desktop``: (desktop events of the day, absences that start in the day) for desktop
    entities; ``jobs``: id -> (status, upload still on disk, entity key, read, records in file
    or None when not known).
    """

    events: dict[tuple[str, str], tuple[int, datetime, datetime]]
    entity_days: dict[tuple[str, str], tuple[int, datetime, datetime]]
    desktop: dict[tuple[str, str], tuple[int, int]]
    documents: dict[tuple[str, str], int]
    pending: dict[tuple[str, str], tuple[int, int]]
    trajectories: dict[tuple[str, str], int]
    jobs: dict[int, tuple[str, bool, str, int, int | None]]
    scopes: dict[str, str]


def _span(count: int, first: datetime, last: datetime) -> str:
    return (
        f"{count} event{'s' if count != 1 else ''} from {first.isoformat()} to {last.isoformat()}"
    )


def divergences(snap: Snapshot) -> dict[Row, str]:
    """Every derived row that disagrees with the events, with a sentence saying how."""
    out: dict[Row, str] = {}
    for key in sorted(set(snap.events) | set(snap.entity_days)):
        row: Row = ("entityday", *key)
        truth, held = snap.events.get(key), snap.entity_days.get(key)
        if held is None and truth is not None:
            out[row] = f"no day summary; the events hold {_span(*truth)}"
        elif truth is None and held is not None:
            out[row] = f"summary of {_span(*held)}, but the day holds no events"
        elif truth != held and truth is not None and held is not None:
            out[row] = f"summary says {_span(*held)}; the events hold {_span(*truth)}"
    for key in sorted(set(snap.desktop) | set(snap.documents)):
        row = ("document", *key)
        count, _ = snap.desktop.get(key, (0, 0))
        read = snap.documents.get(key)
        prior = snap.desktop.get((key[0], _day_before(key[1])), (0, 0))[1]
        if count and read is None:
            out[row] = f"no current document for the day's {count} desktop events"
        elif not count and read is not None:
            out[row] = f"a current document ({read} events read) for a day without desktop events"
        elif read is not None and not count <= read <= count + prior:
            # A document also reads the absences of the day before that reach into its day.
            out[row] = f"the current document read {read} events; the day holds {count}"
    for key, (requested, compiled) in sorted(snap.pending.items()):
        out[("compile", *key)] = f"compile pending: {requested} requests, {compiled} compiled"
    newest: dict[str, str] = {}
    for entity, day in snap.events:
        newest[entity] = max(newest.get(entity, day), day)
    for key in sorted(set(snap.trajectories) | {k for k in snap.events if k[1] < newest[k[0]]}):
        row = ("memory", *key)
        closed = snap.trajectories.get(key)
        stored = snap.events.get(key, (0, None, None))[0]
        if closed is None:
            out[row] = f"not closed in memory, though later days have events ({stored} events)"
        elif closed != stored:
            out[row] = f"closed in memory with {closed} events; {stored} are stored for the day"
    for job, (status, on_disk, entity, read, expected) in sorted(snap.jobs.items()):
        problems = []
        if status not in ("done", "failed"):
            problems.append(f"still {status}")
        if on_disk:
            problems.append("its upload is still on disk")
        if status == "done" and expected is not None and read != expected:
            problems.append(f"done having read {read} of the file's {expected} records")
        if problems:
            out[("import", str(job), "")] = f"import job for {entity}: " + ", ".join(problems)
    return out


def _day_before(day: str) -> str:
    return (date.fromisoformat(day) - timedelta(days=1)).isoformat()


def describe_row(row: Row, why: str) -> str:
    kind, who, day = row
    if kind == "import":
        return f"import job {who}: {why}"
    return f"{kind} {who} {day}: {why}" if day else f"{kind} {who}: {why}"


def read_snapshot(conn: Any, expected: dict[int, int]) -> Snapshot:
    """The tables, read in one repeatable-read transaction so every part is of one moment."""
    events: dict[tuple[str, str], tuple[int, datetime, datetime]] = {}
    desktop: dict[tuple[str, str], tuple[int, int]] = {}
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        scopes = dict(conn.execute("SELECT key, scope FROM streams_entity").fetchall())
        for key, day, count, first, last, kinds, absences in conn.execute(
            "SELECT e.key, ((v.occurred_at AT TIME ZONE e.timezone)::date)::text, count(*), "
            "min(v.occurred_at), max(v.occurred_at), "
            "count(*) FILTER (WHERE v.kind = ANY(%s)), count(*) FILTER (WHERE v.kind = 'absence') "
            "FROM streams_event v JOIN streams_entity e ON e.id = v.entity_id GROUP BY 1, 2",
            [list(DESKTOP_KINDS)],
        ).fetchall():
            events[(key, day)] = (count, first, last)
            if scopes[key] == "desktop" and kinds:
                desktop[(key, day)] = (kinds, absences)

        def keyed(sql: str) -> dict[tuple[str, str], Any]:
            return {
                (r[0], r[1].isoformat()): r[2] if len(r) == 3 else tuple(r[2:])
                for r in conn.execute(sql).fetchall()
            }

        entity_days = keyed(
            "SELECT e.key, d.day, d.event_count, d.first_at, d.last_at FROM streams_entityday d "
            "JOIN streams_entity e ON e.id = d.entity_id"
        )
        documents = keyed(
            "SELECT e.key, d.day, d.event_count FROM activity_daydocument d "
            "JOIN streams_entity e ON e.id = d.entity_id WHERE d.current"
        )
        pending = keyed(
            "SELECT e.key, c.day, c.requested, c.compiled FROM activity_compilerequest c "
            "JOIN streams_entity e ON e.id = c.entity_id WHERE c.requested > c.compiled"
        )
        trajectories = keyed(
            "SELECT e.key, t.day, t.event_count FROM memory_trajectory t "
            "JOIN streams_entity e ON e.id = t.entity_id"
        )
        jobs = {
            pk: (status, Path(path).exists(), entity, read, expected.get(pk))
            for pk, status, path, entity, read in conn.execute(
                "SELECT id, status, stored_path, entity_key, read FROM streams_importjob"
            ).fetchall()
        }
    return Snapshot(events, entity_days, desktop, documents, pending, trajectories, jobs, scopes)


# --- The full checks -------------------------------------------------------------------------


def certify_divergences(report: dict[str, Any]) -> dict[Row, str]:
    """The days ``manage.py certify --json`` failed (its cost trend is not a divergence)."""
    out: dict[Row, str] = {}
    for entity in report.get("entities", []):
        key = entity["entity"].split("/", 1)[-1]
        for day in entity["days"]:
            if not (day["recompile"] and day["rebuild"] and day["append_only"]):
                why = "; ".join(day["problems"]) or "certify failed the day"
                out[("certify", key, day["day"])] = why
    return out


def merged(found: dict[Row, str], certified: dict[Row, str]) -> dict[Row, str]:
    """The check's rows with certify's: a day both found stale is one row saying both."""
    out = dict(found)
    for (_, entity, day), why in certified.items():
        row: Row = ("document", entity, day)
        if row in out:
            out[row] = f"{out[row]}; certify: {why}"
        else:
            out[("certify", entity, day)] = why
    return out


# Memory tables as compared: (name, identity columns, the other columns), each SELECT giving the
# entity key first. Ids and write times are left out: a rebuild gives new ones.
MEMORY_TABLES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str], ...] = (
    (
        "trajectory",
        ("entity", "day"),
        ("event_count", "segment_count", "rejected_count", "fact_count", "late_events")
        + ("extractor",),
        "SELECT e.key, t.day::text, t.event_count, t.segment_count, t.rejected_count, "
        "t.fact_count, t.late_events, t.extractor FROM memory_trajectory t "
        "JOIN streams_entity e ON e.id = t.entity_id",
    ),
    (
        "segment",
        ("entity", "day", "index"),
        ("kind", "source", "start", "end", "accepted", "reason", "cited_ids"),
        "SELECT e.key, t.day::text, s.index, s.kind, s.source, s.start::text, s.end::text, "
        "s.accepted, s.reason, s.cited_ids::text FROM memory_segment s "
        "JOIN memory_trajectory t ON t.id = s.trajectory_id "
        "JOIN streams_entity e ON e.id = t.entity_id",
    ),
    (
        "citation",
        ("entity", "day", "index", "event"),
        (),
        "SELECT e.key, t.day::text, s.index, c.event_id FROM memory_citation c "
        "JOIN memory_segment s ON s.id = c.segment_id "
        "JOIN memory_trajectory t ON t.id = s.trajectory_id "
        "JOIN streams_entity e ON e.id = t.entity_id",
    ),
    (
        "fact",
        ("entity", "ref"),
        ("type", "path", "value", "at", "grounded_event", "grounded_path"),
        "SELECT e.key, f.ref, f.type, f.path::text, f.value::text, f.at::text, "
        "f.grounded_event_id, f.grounded_path::text FROM memory_fact f "
        "JOIN streams_entity e ON e.id = f.entity_id",
    ),
    (
        "regularity",
        ("entity", "rid"),
        (
            "proposal", "summary", "state", "confidence", "replay_confidence", "lift", "n_f",
            "n_v", "observable", "behavior_days", "untriggered_behavior", "base", "margin",
            "violation_run", "violation_facts", "last_day", "rejected", "proposed_on",
        ),
        "SELECT e.key, r.rid, r.proposal::text, r.summary, r.state, r.confidence, "
        "r.replay_confidence, r.lift, r.n_f, r.n_v, r.observable, r.behavior_days, "
        "r.untriggered_behavior, r.base, r.margin, r.violation_run, r.violation_facts::text, "
        "r.last_day::text, r.rejected, r.proposed_on::text FROM memory_regularity r "
        "JOIN streams_entity e ON e.id = r.entity_id",
    ),
    (
        "assessment",
        ("entity", "rid", "day"),
        ("outcome", "fact_refs", "behavior_in_window"),
        "SELECT e.key, r.rid, a.day::text, a.outcome, a.fact_refs::text, a.behavior_in_window "
        "FROM memory_assessment a JOIN memory_regularity r ON r.id = a.regularity_id "
        "JOIN streams_entity e ON e.id = r.entity_id",
    ),
    (
        "transition",
        ("entity", "rid", "seq"),
        ("day", "from_state", "to_state", "reason", "fact_refs"),
        "SELECT e.key, r.rid, t.seq, t.day::text, t.from_state, t.to_state, t.reason, "
        "t.fact_refs::text FROM memory_transition t "
        "JOIN memory_regularity r ON r.id = t.regularity_id "
        "JOIN streams_entity e ON e.id = r.entity_id",
    ),
)  # fmt: skip

MemoryDump = dict[str, list[tuple[Any, ...]]]


def dump_memory(conn: Any) -> MemoryDump:
    return {name: conn.execute(sql).fetchall() for name, _, _, sql in MEMORY_TABLES}


def _short(value: Any, size: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= size else text[: size - 3] + "..."


def memory_diff(incremental: MemoryDump, rebuilt: MemoryDump) -> dict[Row, str]:
    """Every memory row that differs between what the workers kept and a rebuild, keyed by
    entity and (where the row has one) day or regularity."""
    out: dict[Row, str] = {}
    for name, ident, rest, _ in MEMORY_TABLES:
        width = len(ident)
        kept = {tuple(r[:width]): tuple(r[width:]) for r in incremental.get(name, [])}
        again = {tuple(r[:width]): tuple(r[width:]) for r in rebuilt.get(name, [])}
        for key in sorted(set(kept) | set(again), key=repr):
            where = ", ".join(f"{c} {v}" for c, v in zip(ident[1:], key[1:], strict=True))
            if key not in again:
                why = f"{name} ({where}) kept by the workers, absent from the rebuild"
            elif key not in kept:
                why = f"{name} ({where}) in the rebuild, missing from what the workers kept"
            elif kept[key] != again[key]:
                fields = [
                    f"{column} {_short(a)} vs rebuild {_short(b)}"
                    for column, a, b in zip(rest, kept[key], again[key], strict=True)
                    if a != b
                ]
                why = f"{name} ({where}) differs: " + "; ".join(fields)
            else:
                continue
            label = str(key[1]) if len(key) > 1 else ""
            row: Row = ("memory-rebuild", str(key[0]), f"{name}:{label}")
            out[row] = out[row] + " | " + why if row in out else why
    return out


# --- Figures and report ----------------------------------------------------------------------


def figures(faults: list[Fault], divergent: int, events: int) -> dict[str, Any]:
    """The last line's figures; a fault that never healed leaves p95 and max unknown (null).

    The quiet round's faults count in every figure, and ``quiet_convergence_s_max`` is theirs
    alone (null when one never healed, could not be injected, or there was none)."""
    kills = [f for f in faults if f.kind in TASK_TYPES and f.killed_at is not None]
    restarts = [f for f in faults if f.kind in SERVICES and f.restarted_at is not None]
    done = [f for f in faults if f.restarted_at is not None]
    healed = [s for s in (f.convergence_s for f in done) if s is not None]
    unhealed = len(done) - len(healed)
    p95 = round(percentile(healed, 0.95), 1) if healed and not unhealed else None
    worst = round(max(healed), 1) if healed and not unhealed else None
    quiet = [f.convergence_s for f in faults if f.quiet]
    quiet_healed = [s for s in quiet if s is not None]
    quiet_worst = round(max(quiet_healed), 1) if quiet and len(quiet_healed) == len(quiet) else None
    not_injected = len(faults) - len(done)
    met = (
        divergent == 0
        and not unhealed
        and not not_injected
        and p95 is not None
        and worst is not None
        and p95 <= TARGET_P95_S
        and worst <= TARGET_MAX_S
    )
    return {
        "kills": len(kills),
        "restarts": len(restarts),
        "divergent_rows": divergent,
        "convergence_s_p95": p95,
        "convergence_s_max": worst,
        "quiet_convergence_s_max": quiet_worst,
        "events": events,
        "unhealed": unhealed,
        "not_injected": not_injected,
        "targets_met": met,
    }


def fault_line(fault: Fault, origin: float) -> str:
    def at(moment: float | None) -> str:
        return f"+{moment - origin:.1f} s" if moment is not None else "never"

    if fault.kind in SERVICES:
        what = (
            f"#{fault.number} {fault.kind} restart: killed {at(fault.killed_at)}, "
            f"back {at(fault.restarted_at)}"
        )
    else:
        what = (
            f"#{fault.number} {fault.kind} ({fault.task}): worker {fault.worker or '?'} killed "
            f"{at(fault.killed_at)} while blocked in {fault.blocked or '?'}, restarted "
            f"{at(fault.restarted_at)}"
        )
    if fault.restarted_at is None:
        return f"{what}: NOT INJECTED ({fault.note})"
    healed = fault.convergence_s
    if healed is not None and fault.quiet:
        sent = fault.traffic_after
        if not sent:
            return f"{what}: healed in {healed:.1f} s (quiet: no traffic after the fault)"
        were = "1 batch or import job was" if sent == 1 else f"{sent} batches or import jobs were"
        return f"{what}: healed in {healed:.1f} s (NOT quiet: {were} sent after the fault)"
    if healed is not None:
        if fault.new_events is None:
            return f"{what}: healed in {healed:.1f} s"
        traffic = (
            f"{fault.new_events} new events reached its days meanwhile"
            if fault.new_events
            else "no new event reached its days"
        )
        return f"{what}: healed in {healed:.1f} s ({traffic})"
    if not fault.gave_up:
        return f"{what}: not healed yet"
    return f"{what}: NOT healed ({fault.note})"


def report_lines(
    faults: list[Fault], divergent: dict[Row, str], figures_: dict[str, Any], origin: float
) -> list[str]:
    lines = []
    loaded = [f for f in faults if not f.quiet]
    quiet = [f for f in faults if f.quiet]
    for title, group in (
        ("Faults during the load (clients still sending):", loaded),
        (
            "Quiet round, after the load (one batch or import job makes the task run; "
            "quiet: no traffic after the fault):",
            quiet,
        ),
    ):
        if not group:
            continue
        lines.append(title)
        for fault in group:
            lines.append("  " + fault_line(fault, origin))
            if fault.trigger:
                lines.append(f"      sent under the lock: {fault.trigger}")
            if fault.held:
                lines.append(f"      the worker held: {', '.join(fault.held)}")
    p95, worst = figures_["convergence_s_p95"], figures_["convergence_s_max"]

    def verdict(value: float | None, target: float) -> str:
        if value is None:
            return f"unknown, a fault never healed: target <= {target:.0f} s MISSED"
        return f"{value:.1f} s (target <= {target:.0f} s: {'met' if value <= target else 'MISSED'})"

    lines.append(f"Healing after the restart: p95 {verdict(p95, TARGET_P95_S)}")
    lines.append(f"                           max {verdict(worst, TARGET_MAX_S)}")
    if quiet:
        quiet_worst = figures_["quiet_convergence_s_max"]
        lines.append(
            f"  of which the quiet round: max {verdict(quiet_worst, TARGET_MAX_S)}"
            if quiet_worst is not None
            else "  of which the quiet round: max unknown, a quiet fault never healed or was "
            "not injected (MISSED)"
        )
    if figures_["not_injected"]:
        lines.append(f"Faults that could not be injected: {figures_['not_injected']} (MISSED)")
    lines.append(
        f"Divergent rows at the end: {len(divergent)} (target 0: "
        f"{'met' if not divergent else 'MISSED'})"
    )
    for row, why in sorted(divergent.items())[:100]:
        lines.append("  " + describe_row(row, why))
    if len(divergent) > 100:
        lines.append(f"  ... and {len(divergent) - 100} more (bench-results/chaos-divergent.txt)")
    return lines


# --- The run ---------------------------------------------------------------------------------


class Chaos:
    """The run: stack, load, faults, polling, and the final checks."""

    def __init__(self, args: argparse.Namespace, env: Stack) -> None:
        self.args = args
        self.stack = env
        self.rng = random.Random(args.seed)
        self.token = ""
        self.faults: list[Fault] = []
        self.stop = threading.Event()
        self.load_done = threading.Event()
        self.tally = LoadTally()
        self.expected: dict[int, int] = {}  # import job id -> records in its file
        self.job_entity: dict[int, str] = {}
        self.latest: dict[Row, str] = {}
        self.latest_events: dict[tuple[str, str], tuple[int, datetime, datetime]] = {}
        self.latest_at = 0.0
        self.polls = 0
        self.origin = time.monotonic()
        self.import_number = 0
        self.quiet_sent = 0  # batches the quiet round sent (the tally counts them too)
        self.share = 1.0  # of each generated day that is sent (--events)
        self.lock = threading.Lock()

    # -- helpers

    def connect(self, database_url: str | None = None) -> Any:

        return psycopg.connect(
            database_url or self.stack.url,
            autocommit=True,
            connect_timeout=5,
            application_name=f"{APP_PREFIX}harness",
        )

    def log(self, text: str) -> None:
        print(f"[{time.monotonic() - self.origin:7.1f} s] {text}", flush=True)

    def traffic(self) -> int:
        """Batches and import jobs sent so far (taken, refused or given up on)."""
        with self.tally.lock:
            return self.tally.batches + len(self.tally.refused) + self.import_number

    def entity_ids(self) -> dict[int, str]:
        with self.connect() as conn:
            return dict(conn.execute("SELECT id, key FROM streams_entity").fetchall())

    # -- set-up

    def start(self, plan: list[Stream]) -> None:
        stack = self.stack
        stack.manage("create_team", TEAM)
        self.token = stack.manage(
            "create_token", TEAM, TEAM, "--scopes", "read,write", "--quiet"
        ).strip()
        stack.start_web()
        for stream in plan:
            api(
                stack.base,
                self.token,
                "POST",
                "/api/v1/entities",
                {"key": stream.key, "scope": stream.scope, "timezone": stream.timezone},
            )
        for number in range(1, WORKERS + 1):
            stack.start_worker(number)
        stack.start_beat()

    def create_import(self, share: float) -> int:
        """An import job as the dashboard makes one (``import_job_create``), of one generated
        desktop day as JSONL into a new entity; returns its id."""

        self.import_number += 1
        key = f"import-{self.import_number}"
        day = START + timedelta(days=self.import_number % 3)
        records = generate_day(day, seed=self.args.seed, tz=IMPORT_TZ, person=key)
        records = records[: max(1, round(len(records) * share))]
        path = self.stack.root / f"{key}.jsonl"
        count = write_jsonl(path, records)
        code = (
            "from pathlib import Path\n"
            "from django.core.files.uploadedfile import SimpleUploadedFile\n"
            "from aframes_web.streams.uploads import import_job_create\n"
            "from aframes_web.teams.models import Team\n"
            f"path = Path({str(path)!r})\n"
            "job = import_job_create(team=Team.objects.get(slug=%r), user=None, "
            "format_name='jsonl', entity_key=%r, scope='desktop', tz=%r, "
            "upload=SimpleUploadedFile(path.name, path.read_bytes()))\n"
            "print(job.pk)\n"
        ) % (TEAM, key, IMPORT_TZ)
        job = int(self.stack.manage("shell", "-c", code).strip().splitlines()[-1])
        self.expected[job] = count
        self.job_entity[job] = key
        path.unlink()
        return job

    # -- polling

    def poll(self) -> None:
        """Every POLL_S: the check, and the faults whose scope it finds clean."""
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                with self.connect() as conn:
                    snap = read_snapshot(conn, self.expected)
                    found = divergences(snap)
            except Exception as err:  # PostgreSQL restarting: the next poll reads again
                self.log(f"check skipped: {type(err).__name__}: {str(err).strip()[:120]}")
                self.stop.wait(POLL_S)
                continue
            with self.lock:
                self.latest, self.latest_at, self.latest_events = found, began, snap.events
                self.polls += 1
                for fault in self.faults:
                    if fault.restarted_at is None or fault.converged_at or fault.gave_up:
                        continue
                    if began < fault.restarted_at:
                        continue
                    if not any(in_scope(row, fault.scope) for row in found):
                        fault.converged_at = began
                        if fault.events_before is not None:
                            now = scope_events(snap.events, fault.scope)
                            fault.new_events = sum(now.values()) - sum(fault.events_before.values())
                        if fault.traffic_before is not None:
                            fault.traffic_after = self.traffic() - fault.traffic_before
                        self.log(f"fault #{fault.number} ({fault.kind}) healed")
                    elif began - fault.restarted_at > self.args.timeout_s:
                        fault.gave_up = True
                        left = [r for r in found if in_scope(r, fault.scope)]
                        fault.note = (
                            f"{len(left)} rows of its scope still divergent "
                            f"{self.args.timeout_s:.0f} s after the restart"
                        )
                        self.log(f"fault #{fault.number} ({fault.kind}) NOT healed: {fault.note}")
            self.stop.wait(max(0.0, began + POLL_S - time.monotonic()))

    # -- faults

    def inject(self, plan: list[str], started: float) -> None:
        spacing = self.args.load_s / (len(plan) + 1)
        for index, kind in enumerate(plan):
            if self.stop.wait(max(0.0, started + (index + 1) * spacing - time.monotonic())):
                return
            fault = Fault(len(self.faults) + 1, kind)
            with self.lock:
                self.faults.append(fault)
            try:
                if kind in SERVICES:
                    self.restart_service(fault)
                elif kind == "import":
                    self.kill_task(fault, self.queue_import)
                else:
                    self.kill_task(fault)
            except Exception as err:
                fault.note = f"{type(err).__name__}: {err}"
                self.log(f"fault #{fault.number} ({kind}) failed: {fault.note}")
            self.log(fault_line(fault, self.origin))

    def restart_service(self, fault: Fault) -> None:
        stack = self.stack
        fault.injected_at = fault.killed_at = time.monotonic()
        with self.lock:
            fault.events_before = scope_events(self.latest_events, ALL)
        if fault.kind == "redis":
            stack.kill("redis")
            time.sleep(self.rng.uniform(1, 5))
            stack.start_redis()
        else:
            stack.stop_postgres("immediate")
            time.sleep(self.rng.uniform(1, 5))
            stack.start_postgres()
        fault.restarted_at = time.monotonic()
        fault.scope = ALL

    def queue_import(self) -> str:
        job = self.create_import(self.share)
        return f"import job {job} of {self.expected[job]:,} records into {self.job_entity[job]}"

    def send_late(self, batch: Batch) -> str:
        """Send one quiet fault's batch; raises when it was not stored whole."""
        with self.tally.lock:
            refused, accepted = len(self.tally.refused), self.tally.accepted
        send(self.stack.base, self.token, batch, self.tally, self.stop)
        self.quiet_sent += 1
        with self.tally.lock:
            if len(self.tally.refused) > refused:
                raise RuntimeError(f"the batch was not taken: {self.tally.refused[-1]}")
            stored = self.tally.accepted - accepted
        if stored != len(batch.records):
            raise RuntimeError(f"{stored} of the batch's {len(batch.records)} events were stored")
        events = f"{stored} late event{'s' if stored != 1 else ''}"
        return f"{events} for {batch.entity} {batch.day}, a day memory had closed"

    def kill_task(self, fault: Fault, trigger: Callable[[], str] | None = None) -> None:
        """Block the fault's task in its table, kill the whole worker running it, release the
        lock, start the worker again 1-5 s later. ``trigger``, run under the lock, sends what
        makes the task run (and says what it sent); without one the load does."""
        task, table = TASK_TYPES[fault.kind]
        fault.task = task
        with self.connect() as watch, self.connect() as locker:
            locker.autocommit = False
            locker.execute(f"LOCK TABLE {table} IN SHARE MODE")
            fault.injected_at = time.monotonic()
            if trigger is not None:
                fault.trigger = trigger()
                self.log(f"sent under the lock on {table}: {fault.trigger}")
            deadline = time.monotonic() + LOCK_WAIT_S
            blocked = None
            while blocked is None and time.monotonic() < deadline and not self.stop.is_set():
                blocked = watch.execute(
                    "SELECT application_name, left(query, 60) FROM pg_stat_activity "
                    "WHERE %s = ANY(pg_blocking_pids(pid)) AND application_name LIKE %s "
                    "ORDER BY query_start LIMIT 1",
                    [locker.info.backend_pid, f"{WORKER_APP}%"],
                ).fetchone()
                if blocked is None:
                    time.sleep(0.2)
            if blocked is None:
                locker.rollback()
                fault.note = f"no {task} blocked on {table} within {LOCK_WAIT_S:.0f} s"
                return
            fault.worker = blocked[0].removeprefix(WORKER_APP)
            if fault.worker not in self.stack.procs:
                locker.rollback()
                fault.note = f"the blocked backend names no worker of ours ({blocked[0]})"
                return
            fault.blocked = " ".join(blocked[1].split())
            held, why = self.held_tasks(fault.worker)
            self.stack.kill(fault.worker)
            fault.killed_at = time.monotonic()
            fault.traffic_before = self.traffic()
            with self.lock:
                before = dict(self.latest_events)
            locker.rollback()  # the killed task's transaction rolls back with its connection
        if held is None:
            fault.held = [f"unknown ({why}); the whole store is its scope"]
            fault.scope = ALL
        else:
            fault.held = [f"{r.get('name')}{tuple(_task_args(r))}" for r in held]
            fault.scope = task_scope(held, self.entity_ids(), self.job_entity)
        fault.events_before = scope_events(before, fault.scope)
        time.sleep(self.rng.uniform(1, 5))
        spawned = time.monotonic()
        self.stack.start_worker(int(fault.worker.removeprefix("w")))
        # Healing is timed from the moment the worker was started again, not from when it
        # said it was ready: its start-up is part of what the team waits for.
        fault.restarted_at = spawned

    def quiet_round(self, plan: list[Stream]) -> None:
        """After the load, each task type once more with nothing else sent: its one batch (or
        import job) sent under the lock, the worker killed, then nothing until it has healed
        and the store agrees again, so the next fault starts from a quiet, converged store."""
        self.log("quiet round: one fault per task type, no traffic after each")
        for kind, batch in quiet_batches(plan).items():
            fault = Fault(len(self.faults) + 1, kind, quiet=True)
            with self.lock:
                self.faults.append(fault)
            trigger = self.queue_import if batch is None else partial(self.send_late, batch)
            try:
                self.kill_task(fault, trigger)
            except Exception as err:
                fault.note = f"{type(err).__name__}: {err}"
                self.log(f"fault #{fault.number} ({kind}, quiet) failed: {fault.note}")
            self.log(fault_line(fault, self.origin))
            self.settle(fault)

    def settle(self, fault: Fault) -> None:
        """Wait for the fault's verdict, then for a poll begun after it that finds the store
        clean (at most ``--timeout-s`` each)."""
        deadline = time.monotonic() + self.args.timeout_s + 2 * POLL_S
        while time.monotonic() < deadline:
            with self.lock:
                if fault.restarted_at is None or fault.converged_at or fault.gave_up:
                    break
            time.sleep(0.5)
        verdict = time.monotonic()
        while time.monotonic() < verdict + self.args.timeout_s:
            with self.lock:
                if self.latest_at > verdict and not self.latest:
                    return
            time.sleep(0.5)
        self.log(
            f"the store did not agree within {self.args.timeout_s:.0f} s of fault "
            f"#{fault.number}'s verdict; the quiet round goes on"
        )

    def held_tasks(self, worker: str) -> tuple[list[dict[str, Any]] | None, str]:
        """The tasks the worker runs or has reserved, from its control channel; None and why
        when it did not say."""

        node = host_format(f"{worker}@%h")
        why = f"{node} did not answer inspect active in 5 s, three times"
        # Three tries, each on a fresh app: a worker busy starting its pool children can miss
        # one round, and after the Redis restart the first command meets a closed connection.
        for _ in range(3):
            app = Celery("chaos-inspect", broker=self.stack.redis_url)
            try:
                inspect = app.control.inspect(destination=[node], timeout=5.0)
                active = inspect.active() or {}
                if active:
                    reserved = inspect.reserved() or {}
                    return [r for got in (active, reserved) for rs in got.values() for r in rs], ""
            except Exception as err:
                why = f"inspect failed: {type(err).__name__}: {err}"
            finally:
                app.close()
        return None, why

    # -- the whole run

    def run(self) -> tuple[dict[Row, str], int]:
        args = self.args
        plan = streams(args.clients, args.seed)
        # One import without a fault, one per import kill, one in the quiet round.
        import_days = 2 + args.kills_per_type
        raw = sum(len(d) for s in plan for d in s.days) + import_days * DESKTOP_DAY_RECORDS
        self.share = min(1.0, args.events / raw)
        for stream in plan:
            stream.days = scaled(stream.days, self.share)
        batches = {s.key: schedule(s, random.Random(f"{args.seed}:{s.key}")) for s in plan}
        self.start(plan)
        self.log(
            f"stack up: PostgreSQL {self.stack.pg_bin.parent.name} :{self.stack.pg_port}, "
            f"Redis :{self.stack.redis_port}, gunicorn {self.stack.base}, {WORKERS} workers, beat"
        )
        poller = threading.Thread(target=self.poll, daemon=True)
        poller.start()
        began = time.monotonic()
        self.origin = began
        clients = [
            threading.Thread(
                target=client,
                args=(self.stack.base, self.token, b, began, args.load_s, self.tally, self.stop),
                daemon=True,
            )
            for b in batches.values()
        ]
        for thread in clients:
            thread.start()
        total = sum(len(b) for b in batches.values())
        self.log(f"load: {total} batches from {len(clients)} clients over {args.load_s:.0f} s")
        clean = self.create_import(self.share)
        self.log(f"import job {clean} queued (no fault)")
        injector = threading.Thread(
            target=self.inject, args=(fault_plan(args.kills_per_type), began), daemon=True
        )
        injector.start()
        for thread in clients:
            thread.join()
        injector.join()
        self.load_done.set()
        self.log(
            f"load done: {self.tally.batches} batches, {self.tally.sent:,} events sent, "
            f"{self.tally.accepted:,} accepted, {self.tally.duplicates:,} duplicates, "
            f"{self.tally.retries} retries"
        )
        # Every fault has its verdict, and the whole store its chance to settle.
        settled = time.monotonic()
        while True:
            with self.lock:
                open_faults = [
                    f
                    for f in self.faults
                    if f.restarted_at is not None and f.converged_at is None and not f.gave_up
                ]
                fresh = self.latest_at > settled
                clean_now = fresh and not self.latest
            if not open_faults and (clean_now or time.monotonic() - settled > args.timeout_s):
                break
            time.sleep(1)
        self.quiet_round(plan)
        self.stop.set()
        poller.join(timeout=60)
        with self.connect() as conn:
            final = divergences(read_snapshot(conn, self.expected))
            (stored,) = conn.execute("SELECT count(*) FROM streams_event").fetchone()
        self.log(f"store: {len(final)} divergent rows by the check, {stored:,} events stored")
        final = merged(final, self.certify())
        final.update(self.memory_against_rebuild())
        return final, stored

    def certify(self) -> dict[Row, str]:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "manage.py", "certify", "--team", TEAM, "--json"],
            cwd=ROOT,
            env=dict(self.stack.env, PGAPPNAME=f"{APP_PREFIX}certify"),
            capture_output=True,
            text=True,
        )
        if done.returncode not in (0, 1):
            return {("certify", "*", ""): f"certify could not run: {done.stderr.strip()[-300:]}"}
        report = json.loads(done.stdout)
        found = certify_divergences(report)
        days = sum(len(entity["days"]) for entity in report["entities"])
        self.log(
            f"certify: {len(found)} of {days} desktop days failed, "
            f"{len(report['entities'])} entities, in {time.monotonic() - started:.1f} s"
        )
        return found

    def memory_against_rebuild(self) -> dict[Row, str]:
        """Stop what writes, copy the database, rebuild memory on the copy, compare."""
        started = time.monotonic()
        for name in ["beat", "web", *(f"w{n}" for n in range(1, WORKERS + 1))]:
            self.stack.stop(name)
        admin = self.stack.url.rsplit("/", 1)[0] + "/postgres"
        copy_url = self.stack.url.rsplit("/", 1)[0] + f"/{REBUILD_DATABASE}"
        with self.connect(admin) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                [DATABASE],
            )
            conn.execute(f'CREATE DATABASE "{REBUILD_DATABASE}" TEMPLATE "{DATABASE}"')
        self.stack.manage("memory_close", "--team", TEAM, "--rebuild", database_url=copy_url)
        with self.connect() as kept, self.connect(copy_url) as again:
            incremental, rebuilt = dump_memory(kept), dump_memory(again)
        found = memory_diff(incremental, rebuilt)
        sizes = ", ".join(f"{len(rows):,} {name}" for name, rows in incremental.items())
        self.log(
            f"memory against a rebuild: {len(found)} differing rows; the workers kept {sizes} "
            f"({time.monotonic() - started:.1f} s)"
        )
        return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for tool in ("redis-server",):
        if shutil.which(tool) is None:
            fail(f"{tool} is not installed; the chaos benchmark runs its own Redis")
    with stack() as running:
        chaos = Chaos(args, running)
        try:
            divergent, stored = chaos.run()
        except BaseException:
            chaos.stop.set()
            for name in ("web", "w1", "w2", "w3", "beat"):
                if name in running.procs and running.procs[name].poll() is not None:
                    print(f"--- {name} log (tail) ---\n{running.tail(name)}", file=sys.stderr)
            raise
    tally = chaos.tally
    print(
        f"Chaos: {stored:,} events stored ({tally.sent:,} sent in {tally.batches} batches, "
        f"{tally.duplicates:,} of them duplicates, {tally.retries} retries) by "
        f"{args.clients} clients over {args.load_s:.0f} s and the quiet round's "
        f"{chaos.quiet_sent} batches after it, seed {args.seed}; {WORKERS} workers x "
        f"{CONCURRENCY} processes, beat, gunicorn; own PostgreSQL and Redis"
    )
    if tally.refused:
        print(f"  batches the server refused: {len(tally.refused)}")
        for line in tally.refused[:20]:
            print(f"    {line}")
    result = figures(chaos.faults, len(divergent), stored)
    for line in report_lines(chaos.faults, divergent, result, chaos.origin):
        print(line)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "chaos-divergent.txt").write_text(
        "".join(describe_row(r, w) + "\n" for r, w in sorted(divergent.items()))
    )
    print(f"Targets: {'all met' if result['targets_met'] else 'MISSED'}")
    finish("chaos", result)
    return 0 if result["targets_met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
