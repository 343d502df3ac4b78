"""make bench-export: does a million-event NDJSON export stream, or is it held in memory?

    python -m perf.export [--events 1000000]

A scratch PostgreSQL database (``aframes_bench_export`` on the PostgreSQL at DATABASE_URL, or
127.0.0.1:5432) gets one desktop entity with ``--events`` SYNTHETIC snapshot events. The ASGI
application is served as production serves it (gunicorn with one uvicorn worker,
``perf.harness.running_server``), and ``GET /api/v1/entities/{key}/events`` with ``Accept:
application/x-ndjson`` is read to the end by this process while the worker's resident memory is
sampled. A streamed export keeps the worker near its idle size; one consumed whole first would
grow it by the size of the export (hundreds of MB).

The last line: ``export_peak_mb`` (the worker's peak resident memory during the export, VmHWM),
``export_idle_mb`` (before it), ``export_mb`` (the bytes sent), ``events``, ``lines``,
``first_byte_s``, ``export_s``, ``events_per_s``. Target: ``export_peak_mb`` under 200.
"""

from __future__ import annotations

import argparse
import threading
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from perf.harness import django_on, fail, finish, running_server, scratch_instance

DATABASE = "aframes_bench_export"
ENTITY = "export-desktop"
TARGET_PEAK_MB = 200
BATCH = 10_000
APPS = ("Firefox", "Code", "Slack", "Terminal", "Mail")


def _seed(events: int) -> None:
    """``events`` snapshot rows of one desktop entity, one a second from 2026-03-02 08:00 UTC,
    written in batches (this process's Django is set up on the scratch database)."""
    from aframes_web.streams.models import Entity, Event
    from aframes_web.teams.models import Team

    team = Team.objects.get(slug="bench")
    entity = Entity.objects.create(
        team=team, key=ENTITY, scope="desktop", timezone="Europe/Berlin", name="SYNTHETIC"
    )
    start = datetime(2026, 3, 2, 8, tzinfo=UTC)
    received = datetime.now(UTC)
    made = 0
    while made < events:
        rows = []
        for n in range(made, min(events, made + BATCH)):
            app = APPS[n % len(APPS)]
            rows.append(
                Event(
                    entity=entity,
                    occurred_at=start + timedelta(seconds=n),
                    kind="snapshot",
                    source_key=f"s{n}",
                    monitor="0",
                    payload={
                        "app": app,
                        "window": f"{app} window {n % 997} (SYNTHETIC)",
                        "url": f"https://example.org/{n % 4099}",
                    },
                    received_at=received,
                )
            )
        Event.objects.bulk_create(rows, batch_size=BATCH)
        made += len(rows)
        if made % 100_000 == 0 or made == events:
            print(f"  seeded {made:,} events", flush=True)


def _rss_mb(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _worker_pid(master: int) -> int:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    if len(children) != 1:
        fail(f"expected one gunicorn worker, found {len(children)}")
    return int(children[0])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m perf.export", description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.events < 1:
        parser.error("--events must be at least 1.")
    with scratch_instance(DATABASE) as (env, key):
        print(f"PostgreSQL scratch database {DATABASE}; seeding {args.events:,} SYNTHETIC events")
        django_on(env)
        started = time.perf_counter()
        _seed(args.events)
        print(f"  seeded in {time.perf_counter() - started:.1f} s")
        with running_server(env, workers=1, asgi=True) as (base, proc):
            worker = _worker_pid(proc.pid)
            request = urllib.request.Request(
                f"{base}/api/v1/entities/{ENTITY}/events",
                headers={"Authorization": f"Bearer {key}", "Accept": "application/x-ndjson"},
            )
            # Warm the worker (imports, connection) so idle means ready, not freshly forked.
            warm = urllib.request.Request(
                f"{base}/api/v1/entities/{ENTITY}/events?limit=1",
                headers={"Authorization": f"Bearer {key}"},
            )
            urllib.request.urlopen(warm, timeout=60).read()
            idle = _rss_mb(worker, "VmRSS")
            peak = [idle]
            done = threading.Event()

            def sample() -> None:
                while not done.is_set():
                    peak.append(_rss_mb(worker, "VmRSS"))
                    time.sleep(0.1)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            sent = lines = 0
            began = time.perf_counter()
            first_byte = None
            with urllib.request.urlopen(request, timeout=600) as answer:
                if answer.status != 200:
                    fail(f"the export answered {answer.status}")
                while chunk := answer.read(1 << 20):
                    if first_byte is None:
                        first_byte = time.perf_counter() - began
                    sent += len(chunk)
                    lines += chunk.count(b"\n")
            took = time.perf_counter() - began
            done.set()
            sampler.join()
            hwm = max(_rss_mb(worker, "VmHWM"), max(peak))
    if lines != args.events:
        fail(f"the export held {lines:,} lines for {args.events:,} events")
    figures = {
        "export_peak_mb": round(hwm, 1),
        "export_idle_mb": round(idle, 1),
        "export_mb": round(sent / 1e6, 1),
        "events": args.events,
        "lines": lines,
        "first_byte_s": round(first_byte or 0.0, 3),
        "export_s": round(took, 1),
        "events_per_s": round(lines / took),
        "target_peak_mb": TARGET_PEAK_MB,
        "met": hwm < TARGET_PEAK_MB,
    }
    print()
    print(f"NDJSON export of {lines:,} events ({sent / 1e6:,.0f} MB) under ASGI (uvicorn worker)")
    print(f"  worker resident memory: idle {idle:.0f} MB, peak {hwm:.0f} MB during the export")
    print(f"  first byte after {first_byte or 0:.2f} s; whole export {took:.1f} s")
    print(f"  ({lines / took:,.0f} events/s); target peak < {TARGET_PEAK_MB} MB: ", end="")
    print("met" if hwm < TARGET_PEAK_MB else "NOT met")
    finish("export", figures)


if __name__ == "__main__":
    main()
