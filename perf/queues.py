"""make bench-queues: does a fresh day wait behind a long import? (the embedded default)

    python -m perf.queues [--lines 3000000]

On a bare machine, as ``make run`` runs: a scratch SQLite instance and ``manage.py serve`` (the
web server and its workers on the filesystem broker). An import of ``--lines`` SYNTHETIC JSONL
lines (one event repeated: the worker reads and checks every line, stores one) is queued as the
dashboard queues an upload; three seconds later a fresh desktop day (180 snapshots) is posted
to another entity, and the time until its day is compiled is measured, with the import's own
duration beside it. With imports on their own queue and worker (settings.AFRAMES_QUEUE_GROUPS)
the day compiles in seconds whatever the import; on one shared queue it waited for the import.

Right after the fresh day, a day's own file (180 lines) is uploaded to a third entity: it waits
on the same bulk worker as the long import, which hands the worker over once its turn
(``AFRAMES_IMPORT_TURN_S``, 20 s) is up (aframes_web/streams/uploads.py). ``small_import_s`` is
that upload's time from queued to done, and ``import_turns`` how many turns the long one took.
The last line: ``fresh_day_compile_s``, ``small_import_s``, ``import_s``, ``import_turns``,
``import_running_when_compiled``, ``lines``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from perf.harness import ROOT, UPLOAD_JOB, fail, finish, free_port, wait_healthy, write_upload

MANAGE = [sys.executable, str(ROOT / "manage.py")]
WAIT_S = 300  # longer than any import here: past it the day counts as starved


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([*MANAGE, *args], env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        fail(f"manage.py {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def _call(base: str, token: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path,
        data=data,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


STATUS = """
from aframes_web.streams.models import ImportJob
for job in ImportJob.objects.filter(pk__in={jobs}).order_by("pk"):
    took = (job.finished_at - job.created_at).total_seconds() if job.finished_at else None
    print(job.pk, job.status, took, job.summary.get("turns", 1))
"""
DAY_LINES = 180  # a desktop day of snapshots at 20 s


def _jobs(env: dict[str, str], *jobs: str) -> dict[str, list[str]]:
    """Each job's status, seconds from queued to finished ("None" until then) and turns."""
    out = _manage(env, "shell", "-c", STATUS.format(jobs=[int(job) for job in jobs]))
    rows = [line.split() for line in out.strip().splitlines()[-len(jobs) :]]
    return {row[0]: row[1:] for row in rows}


def _upload(env: dict[str, str], path: Path, entity: str) -> str:
    """Queue ``path`` as the dashboard queues an upload into ``entity``; the job's id."""
    queue_it = UPLOAD_JOB.format(path=str(path), name=path.name, entity=entity)
    return _manage(env, "shell", "-c", queue_it).strip().splitlines()[-1]


def _write_day(path: Path) -> None:
    with path.open("w") as handle:
        for n in range(DAY_LINES):
            row = {
                "occurred_at": f"2026-03-03T09:{n // 3:02d}:{n % 3 * 20:02d}Z",
                "kind": "snapshot",
                "source_key": f"day-{n}",
                "payload": {"app": "Code", "window": "w"},
            }
            handle.write(json.dumps(row) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=3_000_000)
    args = parser.parse_args(argv)
    if args.lines < 1:
        fail("--lines must be at least 1")
    with tempfile.TemporaryDirectory(prefix="aframes-queues-") as tmp:
        folder = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env.update(
            DATABASE_URL=f"sqlite:///{folder / 'aframes.sqlite3'}",
            AFRAMES_VAR_DIR=str(folder / "var"),
            SECRET_KEY="benchmark-only",
            AFRAMES_COMPILE_INTERVAL_MS="0",
            DJANGO_SETTINGS_MODULE="aframes_web.settings",
        )
        _manage(env, "migrate", "--noinput")
        _manage(env, "create_team", "bench")
        token = _manage(env, "create_token", "bench", "t", "--scopes", "read,write", "--quiet")
        token = token.strip()
        big = folder / "bulk.jsonl"
        write_upload(big, args.lines)
        print(f"SYNTHETIC import: {args.lines:,} lines ({big.stat().st_size / 1e6:.0f} MB)")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [*MANAGE, "serve", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdout is not None
            print(f"  manage.py serve: {server.stdout.readline().strip()}")
            wait_healthy(base, server, 60, "manage.py serve")
            _call(base, token, "/api/v1/entities", {"key": "desk", "scope": "desktop"})
            job = _upload(env, big, "bulk")
            time.sleep(3)  # the import is under way
            rows = [
                {
                    "occurred_at": f"2026-03-02T09:{m:02d}:{s:02d}Z",
                    "kind": "snapshot",
                    "source_key": f"d{m}-{s}",
                    "payload": {"app": "Code" if m % 7 else "Firefox", "window": "w"},
                }
                for m in range(60)
                for s in (0, 20, 40)
            ]
            began = time.monotonic()
            _call(base, token, "/api/v1/entities/desk/events", rows)
            day = folder / "day.jsonl"
            _write_day(day)
            small = _upload(env, day, "day")
            while True:
                days = _call(base, token, "/api/v1/entities/desk/days")
                if days["results"] and not days["pending_days"]:
                    break
                if time.monotonic() - began > WAIT_S:
                    break
                time.sleep(0.1)
            compiled = time.monotonic() - began
            status = _jobs(env, job, small)
            running = status[job][0] in ("queued", "running")
            while (
                any(s[0] in ("queued", "running") for s in status.values())
                and time.monotonic() - began < WAIT_S
            ):
                time.sleep(1)
                status = _jobs(env, job, small)
        finally:
            server.terminate()
            server.wait(timeout=30)
    took, small_took = (
        None if status[j][1] == "None" else float(status[j][1]) for j in (job, small)
    )
    turns = int(status[job][2])
    print(
        f"A fresh desktop day posted during the import compiled {compiled:.1f} s later "
        f"({'the import still running' if running else 'after the import had ended'}); the "
        f"import itself took {took if took is None else round(took, 1)} s ({status[job][0]}, "
        f"{turns} turn{'s' if turns > 1 else ''})."
    )
    print(
        f"A day's file ({DAY_LINES} lines) uploaded behind it was imported "
        f"{small_took if small_took is None else round(small_took, 1)} s after it was queued "
        f"({status[small][0]})."
    )
    finish(
        "queues",
        {
            "fresh_day_compile_s": round(compiled, 1),
            "small_import_s": None if small_took is None else round(small_took, 1),
            "import_s": None if took is None else round(took, 1),
            "import_turns": turns,
            "import_running_when_compiled": running,
            "lines": args.lines,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
