"""make bench-pipeline: how fast ingested events reach the compiled day document, on SYNTHETIC data.

    python -m perf.pipeline [--batches 40] [--history-days 60] [--seed 7]

PostgreSQL + Redis, gunicorn (2 workers) and ONE Celery worker process (prefork, concurrency 1),
as ``docker/compose.yaml`` runs them. Three parts:

1. **Freshness.** One generated working day (``benchmark.synthetic.desktop``) is sent in N
   batches in time order through ``POST /api/v1/entities/{key}/events``, twice: back to back
   (``burst``, the figures docs/development/benchmarks.md names) and one batch every
   ``--pace-ms`` (``paced``). For
   each batch: the time from its ingest response to the moment a compile that read it has
   finished (the day's ``CompileRequest.compiled`` reaches the request count that the batch's
   commit produced). p50/p95 over batches; target p95 < 2 s.
2. **Compile work.** The sum of the worker's run times of every compile task of that day
   (from the worker's own log) against one compile of the finished day from scratch in the same
   warm worker (median of 3: the day sent in one batch to a new entity each time, so nothing
   converted before is reused); target < 3x.
3. **Certify on a 60-day history.** A generated history of N calendar days (weekends lighter)
   is imported with ``import_events jsonl``, compiled by the worker, then ``manage.py certify
   --json`` runs on it: PASS/FAIL, median ms per day, first/second half means, wall time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import psycopg

from benchmark.synthetic.desktop import generate_day, generate_days, write_jsonl
from perf.harness import (
    ROOT,
    UPLOAD_JOB,
    fail,
    finish,
    manage,
    median,
    percentile,
    redis_url,
    run_measured,
    running_server,
    scratch_instance,
    stop,
    write_upload,
)

TZ = "Europe/Berlin"
DAY = date(2026, 3, 3)  # a Tuesday: a full working day
HISTORY_START = date(2026, 1, 5)
# Its own scratch database and Redis database: its worker must run only its own tasks.
PIPELINE_DB = "aframes_bench_pipeline"
PIPELINE_REDIS_DB = 14
TASK_DONE = re.compile(r"Task activity\.compile_day\[[^\]]+\] succeeded in ([0-9.]+)s")


def api(base: str, key: str, method: str, path: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{base}{path}",
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read() or b"null")


@contextmanager
def celery_worker(
    env: dict[str, str], log: Path, queues: str = "", name: str = "bench"
) -> Iterator[subprocess.Popen[bytes]]:
    """One worker process (concurrency 1) consuming ``queues`` (comma-separated; every queue
    when empty, as the image's worker role does), logging to ``log``."""
    chosen = ["--queues", queues] if queues else []
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "aframes_web", "worker", "--pool=prefork"]
            + ["--concurrency=1", "--without-gossip", "--without-mingle", "--loglevel=INFO"]
            + ["--hostname", f"{name}@%h", *chosen],
            cwd=ROOT,
            env={**env, "LOG_LEVEL": "INFO"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # stop() can end its pool children with it
        )
        try:
            deadline = time.monotonic() + 60
            while "ready." not in log.read_text():
                if time.monotonic() > deadline or proc.poll() is not None:
                    fail(f"the Celery worker did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.2)
            yield proc
        finally:
            stop(proc)


def compile_times(log: Path) -> list[float]:
    return [float(m) for m in TASK_DONE.findall(log.read_text())]


@contextmanager
def celery_workers(env: dict[str, str], folder: Path, count: int) -> Iterator[list[Path]]:
    """``count`` worker processes on every queue (more workers on one PostgreSQL and Redis, as
    ``WORKERS=N`` gives in compose); yields their logs."""
    logs = [folder / f"worker-{n}.log" for n in range(1, count + 1)]
    with contextlib.ExitStack() as stack:
        for n, log in enumerate(logs, start=1):
            stack.enter_context(celery_worker(env, log, name=f"w{n}"))
        yield logs


def wait_idle(db: psycopg.Connection, entity_id: int, timeout: float = 600) -> None:
    """Until no compile of the entity is pending or queued."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = db.execute(
            "SELECT count(*) FROM activity_compilerequest WHERE entity_id = %s "
            "AND (compiled < requested OR queued)",
            [entity_id],
        ).fetchone()
        if busy and busy[0] == 0:
            return
        time.sleep(0.05)
    fail(f"compiles of entity {entity_id} did not finish within {timeout:.0f} s")


def freshness(
    base: str,
    key: str,
    db: psycopg.Connection,
    batches: int,
    seed: int,
    *,
    entity: str,
    pace_s: float = 0.0,
) -> dict[str, Any]:
    """Send the day in batches (``pace_s`` apart, 0: back to back) and time each to its document."""
    api(base, key, "POST", "/api/v1/entities", {"key": entity, "scope": "desktop", "timezone": TZ})
    (entity_id,) = db.execute("SELECT id FROM streams_entity WHERE key = %s", [entity]).fetchone()
    records = generate_day(DAY, seed=seed, tz=TZ)
    size = -(-len(records) // batches)
    chunks = [records[i : i + size] for i in range(0, len(records), size)]
    wanted: list[tuple[float, int]] = []  # (response time, request count after the batch)
    done: dict[int, float] = {}
    stop = threading.Event()

    def watch() -> None:
        with psycopg.connect(db.info.dsn, autocommit=True) as own:
            while not stop.is_set() or len(done) < len(wanted):
                row = own.execute(
                    "SELECT compiled FROM activity_compilerequest "
                    "WHERE entity_id = %s AND day = %s",
                    [entity_id, DAY],
                ).fetchone()
                now = time.perf_counter()
                compiled = row[0] if row else 0
                for index, (_, count) in enumerate(list(wanted)):
                    if index not in done and compiled >= count:
                        done[index] = now
                time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    began = time.perf_counter()
    for chunk in chunks:
        if pace_s and wanted:
            time.sleep(max(0.0, wanted[-1][0] + pace_s - time.perf_counter()))
        api(base, key, "POST", f"/api/v1/entities/{entity}/events", chunk)
        answered = time.perf_counter()
        row = db.execute(
            "SELECT requested FROM activity_compilerequest WHERE entity_id = %s AND day = %s",
            [entity_id, DAY],
        ).fetchone()
        wanted.append((answered, row[0] if row else 0))
    ingest_s = time.perf_counter() - began
    stop.set()
    watcher.join(timeout=600)
    if len(done) < len(wanted):
        fail("some batches never reached a compiled document")
    latencies = [done[i] - answered for i, (answered, _) in enumerate(wanted)]
    wait_idle(db, entity_id)
    compiles = db.execute(
        "SELECT compiles, requested FROM activity_compilerequest WHERE entity_id = %s AND day = %s",
        [entity_id, DAY],
    ).fetchone()
    return {
        "entity_id": entity_id,
        "events": len(records),
        "batches": len(chunks),
        "ingest_s": ingest_s,
        "latencies_s": latencies,
        "compiles": compiles[0] if compiles else 0,
    }


def compile_once(base: str, key: str, log: Path, seed: int, number: int) -> float:
    """One compile of the whole day from scratch, timed by the same warm worker.

    The day is sent in one batch to a new entity, so its compile reuses nothing that an
    earlier compile converted; the worker process is the one that ran the runs before.
    """
    entity = f"once-{number}"
    api(base, key, "POST", "/api/v1/entities", {"key": entity, "scope": "desktop", "timezone": TZ})
    before = len(compile_times(log))
    api(base, key, "POST", f"/api/v1/entities/{entity}/events", generate_day(DAY, seed=seed, tz=TZ))
    deadline = time.monotonic() + 120
    while len(compile_times(log)) <= before:
        if time.monotonic() > deadline:
            fail("the from-scratch compile did not finish")
        time.sleep(0.05)
    return compile_times(log)[before]


def history(env: dict[str, str], db: psycopg.Connection, days: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="aframes-history-") as tmp:
        path = Path(tmp) / "history.jsonl"
        events = write_jsonl(
            path, generate_days(HISTORY_START, days, seed=seed, tz=TZ, include_weekends=True)
        )
        imported = run_measured(
            [sys.executable, "manage.py", "import_events", "jsonl", str(path), "--team", "bench"]
            + ["--entity", "history", "--scope", "desktop", "--tz", TZ, "--json"],
            env,
            "import_events",
        )
    (entity_id,) = db.execute("SELECT id FROM streams_entity WHERE key = 'history'").fetchone() or (
        0,
    )
    waited = time.perf_counter()
    wait_idle(db, entity_id, timeout=1800)
    drained_s = time.perf_counter() - waited
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "manage.py", "certify", "--entity", "history", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    certify_s = time.perf_counter() - started
    if done.returncode not in (0, 1):
        fail(f"certify failed to run:\n{done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    (entity,) = report["entities"]
    return {
        "days": len(entity["days"]),
        "events": events,
        "import_s": imported.wall_s,
        "drain_s": drained_s,
        "certify_s": certify_s,
        "passed": report["passed"],
        "entity": entity,
    }


def during_import(
    env: dict[str, str], base: str, key: str, db: psycopg.Connection, folder: Path, args: Any
) -> dict[str, Any]:
    """Freshness with the workers split as ``manage.py serve`` and a dedicated deployment run
    them (one on the live queue, one on imports and benchmark runs): quiet, then while a long
    upload (SYNTHETIC: ``--import-lines`` JSONL lines of one repeated event, every line read and
    checked) is imported on the imports queue."""
    big = folder / "bulk.jsonl"
    write_upload(big, args.import_lines)
    with (
        celery_worker(env, folder / "live.log", queues="live", name="live"),
        celery_worker(env, folder / "bulk.log", queues="imports,benchmark", name="bulk"),
    ):
        quiet = freshness(base, key, db, args.batches, args.seed, entity="split-quiet")
        queue_it = UPLOAD_JOB.format(path=str(big), name=big.name, entity="bulk")
        job = int(manage(env, "shell", "-c", queue_it).split()[-1])
        deadline = time.monotonic() + 60
        while _job_status(db, job) != "running":
            if time.monotonic() > deadline:
                fail(f"the import job {job} did not start on the bulk worker")
            time.sleep(0.1)
        busy = freshness(base, key, db, args.batches, args.seed, entity="split-busy")
        running = _job_status(db, job) == "running"
        deadline = time.monotonic() + 900
        while _job_status(db, job) not in ("done", "failed"):
            if time.monotonic() > deadline:
                fail(f"the import job {job} did not finish within 900 s")
            time.sleep(0.5)
        took = db.execute(
            "SELECT extract(epoch FROM finished_at - created_at) FROM streams_importjob "
            "WHERE id = %s",
            [job],
        ).fetchone()
    return {
        "quiet": quiet,
        "busy": busy,
        "import_running_throughout": running,
        "import_s": float(took[0]) if took and took[0] is not None else None,
        "lines": args.import_lines,
    }


def _job_status(db: psycopg.Connection, job: int) -> str:
    row = db.execute("SELECT status FROM streams_importjob WHERE id = %s", [job]).fetchone()
    return str(row[0]) if row else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--history-days", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--pace-ms", type=int, default=250, help="batch spacing of the paced run (default 250)"
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="worker processes for the history (default 1)"
    )
    parser.add_argument(
        "--import-lines", type=int, default=600_000, help="the long upload's lines (SYNTHETIC)"
    )
    args = parser.parse_args(argv)
    if args.workers < 1 or args.import_lines < 1 or args.batches < 1:
        fail("--workers, --import-lines and --batches must be at least 1")
    if redis_url() is None:
        fail("Redis is not reachable (REDIS_URL or 127.0.0.1:6379); the pipeline needs a broker.")
    with scratch_instance(PIPELINE_DB, PIPELINE_REDIS_DB) as (env, key):
        url = env["DATABASE_URL"]
        with (
            tempfile.TemporaryDirectory(prefix="aframes-worker-") as tmp,
            psycopg.connect(url, autocommit=True) as db,
            running_server(env, workers=2) as (base, _server),
        ):
            runs: dict[str, dict[str, Any]] = {}
            log = Path(tmp) / "worker.log"
            with celery_worker(env, log):
                for name, pace in (("burst", 0.0), ("paced", args.pace_ms / 1000.0)):
                    done_before = len(compile_times(log))
                    live = freshness(
                        base, key, db, args.batches, args.seed, entity=name, pace_s=pace
                    )
                    live["work_s"] = sum(compile_times(log)[done_before:])
                    runs[name] = live
                once = median([compile_once(base, key, log, args.seed, n) for n in (1, 2, 3)])
            split = during_import(env, base, key, db, Path(tmp), args)
            print(f"Freshness: one SYNTHETIC day ({DAY}) in {args.batches} batches")
            for name, live in runs.items():
                lat = live["latencies_s"]
                live["p50_s"], live["p95_s"] = percentile(lat, 0.5), percentile(lat, 0.95)
                live["ratio"] = live["work_s"] / once
                how = "back to back" if name == "burst" else f"one every {args.pace_ms} ms"
                print(
                    f"  {name} ({how}): {live['events']:,} events ingested in "
                    f"{live['ingest_s']:.2f} s"
                )
                print(
                    f"    ingest response -> document includes the batch: p50 "
                    f"{live['p50_s']:.3f} s, p95 {live['p95_s']:.3f} s, max {max(lat):.3f} s"
                    "  (target p95 < 2 s)"
                )
                print(
                    f"    compiles: {live['compiles']} for {live['batches']} batches; work "
                    f"{live['work_s']:.2f} s vs {once:.3f} s for one compile from scratch = "
                    f"{live['ratio']:.2f}x  (target < 3x)"
                )
            fresh = percentile(split["quiet"]["latencies_s"], 0.95)
            busy = percentile(split["busy"]["latencies_s"], 0.95)
            print(
                "During a long import (workers split as manage.py serve runs them: live, and "
                f"imports + benchmark): a SYNTHETIC upload of {split['lines']:,} lines"
            )
            print(f"  quiet: fresh day p95 {fresh:.3f} s")
            print(
                f"  during the import: fresh day p95 {busy:.3f} s ({busy / fresh:.2f}x quiet; "
                f"target <= 2x); the import "
                f"{'was still running' if split['import_running_throughout'] else 'had ended'}"
                f" when the day was compiled, and took {split['import_s'] or 0:.1f} s"
            )
            workers = f"{args.workers} worker process{'es' if args.workers > 1 else ''}"
            print(f"Certify: a SYNTHETIC {args.history_days}-day history, {workers}")
            with celery_workers(env, Path(tmp), args.workers):
                hist = history(env, db, args.history_days, args.seed)
            entity = hist["entity"]
            print(
                f"  {hist['events']:,} events imported in {hist['import_s']:.1f} s; compile "
                f"queue drained {hist['drain_s']:.1f} s after the import ended "
                f"({hist['import_s'] + hist['drain_s']:.1f} s from the import's start)"
            )
            print(
                f"  certify: {'PASS' if hist['passed'] else 'FAIL'} on {hist['days']} days in "
                f"{hist['certify_s']:.1f} s; median {entity['median_ms']} ms per day; "
                f"mean {entity['first_half_mean_ms']} ms (first half) vs "
                f"{entity['second_half_mean_ms']} ms (second half)"
            )
            for day in entity["days"]:
                for problem in day["problems"]:
                    print(f"    {day['day']}: {problem}")
    finish(
        "pipeline",
        {
            "events": runs["burst"]["events"],
            "batches": runs["burst"]["batches"],
            "p50_s": round(runs["burst"]["p50_s"], 3),
            "p95_s": round(runs["burst"]["p95_s"], 3),
            "compiles": runs["burst"]["compiles"],
            "compile_work_s": round(runs["burst"]["work_s"], 3),
            "compile_once_s": round(once, 3),
            "compile_work_ratio": round(runs["burst"]["ratio"], 2),
            "paced_interval_ms": args.pace_ms,
            "paced_p50_s": round(runs["paced"]["p50_s"], 3),
            "paced_p95_s": round(runs["paced"]["p95_s"], 3),
            "paced_compiles": runs["paced"]["compiles"],
            "fresh_day_p95_s": round(fresh, 3),
            "fresh_day_p95_s_during_import": round(busy, 3),
            "during_import_ratio": round(busy / fresh, 2),
            "import_running_throughout": split["import_running_throughout"],
            "import_lines": split["lines"],
            "upload_import_s": round(split["import_s"], 1) if split["import_s"] else None,
            "workers": args.workers,
            "history_total_s": round(hist["import_s"] + hist["drain_s"], 1),
            "history_drain_s": round(hist["drain_s"], 1),
            "paced_compile_work_ratio": round(runs["paced"]["ratio"], 2),
            "certify_days": hist["days"],
            "certify_passed": hist["passed"],
            "certify_s": round(hist["certify_s"], 1),
            "certify_median_ms_per_day": entity["median_ms"],
            "certify_first_half_ms": entity["first_half_mean_ms"],
            "certify_second_half_ms": entity["second_half_mean_ms"],
        },
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
