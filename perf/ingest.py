"""make bench-ingest: 200,000 synthetic desktop events through POST .../events into PostgreSQL.

Batches of 5,000 are sent by two client threads to gunicorn (two sync workers) on this
machine; the same data is then sent again to time the duplicate path. Reports events/s,
batch latency percentiles and the server's peak resident memory.
"""

from __future__ import annotations

import argparse
import http.client
import json
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from itertools import islice
from urllib.parse import urlsplit

from benchmark.synthetic.desktop import generate_days
from perf.harness import (
    finish,
    median,
    percentile,
    process_tree_peak_rss_mb,
    running_server,
    scratch_instance,
)

ENTITY = "bench-desktop"


def _post(base: str, key: str, body: bytes) -> tuple[float, dict]:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    started = time.perf_counter()
    conn.request(
        "POST",
        f"/api/v1/entities/{ENTITY}/events",
        body=body,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    response = conn.getresponse()
    payload = json.loads(response.read())
    elapsed = time.perf_counter() - started
    conn.close()
    if response.status not in (200, 201):
        raise SystemExit(f"batch rejected with {response.status}: {payload}")
    return elapsed, payload


def _run(base: str, key: str, bodies: list[bytes], clients: int) -> dict:
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda b: _post(base, key, b), bodies))
    wall = time.perf_counter() - started
    latencies = [r[0] * 1000 for r in results]
    return {
        "wall_s": wall,
        "accepted": sum(r[1]["accepted"] for r in results),
        "duplicates": sum(r[1]["duplicates"] for r in results),
        "p50_ms": median(latencies),
        "p95_ms": percentile(latencies, 0.95),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    records = list(islice(generate_days(date(2026, 1, 5), 10_000, seed=42), args.events))
    bodies = [
        json.dumps(records[i : i + args.batch]).encode() for i in range(0, len(records), args.batch)
    ]
    print(
        f"Ingest benchmark: {len(records):,} synthetic desktop events in {len(bodies)} batches "
        f"of {args.batch:,}, {args.clients} client(s), gunicorn with {args.workers} worker(s)"
    )
    with scratch_instance() as (env, key), running_server(env, args.workers) as (base, proc):
        conn = http.client.HTTPConnection(urlsplit(base).hostname, urlsplit(base).port)
        conn.request(
            "POST",
            "/api/v1/entities",
            body=json.dumps({"key": ENTITY, "scope": "desktop", "timezone": "Europe/Berlin"}),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        assert conn.getresponse().status == 201
        fresh = _run(base, key, bodies, args.clients)
        again = _run(base, key, bodies, args.clients)
        rss = process_tree_peak_rss_mb(proc.pid)
    if fresh["accepted"] != len(records) or again["duplicates"] != len(records):
        raise SystemExit(f"counts are off: {fresh} / {again}")
    for name, run in (("new events", fresh), ("duplicates", again)):
        print(
            f"  {name:<11} {len(records) / run['wall_s']:>10,.0f} events/s   "
            f"batch p50 {run['p50_ms']:7.1f} ms   p95 {run['p95_ms']:7.1f} ms"
        )
    print(
        f"  server peak RSS: largest worker {rss['max_worker']:.0f} MB, "
        f"master {rss['master']:.0f} MB (target: < 400 MB)"
    )
    finish(
        "ingest",
        {
            "events": len(records),
            "batch_events": args.batch,
            "events_per_s": round(len(records) / fresh["wall_s"]),
            "p50_batch_ms": round(fresh["p50_ms"], 1),
            "p95_batch_ms": round(fresh["p95_ms"], 1),
            "duplicate_events_per_s": round(len(records) / again["wall_s"]),
            "duplicate_p50_batch_ms": round(again["p50_ms"], 1),
            "duplicate_p95_batch_ms": round(again["p95_ms"], 1),
            "peak_rss_mb": round(rss["max_worker"], 1),
        },
    )


if __name__ == "__main__":
    main()
