"""make bench-sync: aframes-sync's throughput from a 30-day capture database to a live server.

A SYNTHETIC screenpipe-style database of 30 calendar days (its working days) is generated,
gunicorn serves Aframes on PostgreSQL, and ``aframes-sync --once`` sends everything as a
member's machine would; a second run shows the cost of a pass with nothing new.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from datetime import date
from pathlib import Path

from benchmark.synthetic.desktop import generate_days
from benchmark.synthetic.native import write_screenpipe
from perf.harness import finish, run_measured, running_server, scratch_instance


def run_agent(base: str, key: str, database: Path, checkpoint: Path) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB, output) of one ``aframes-sync --once`` process."""
    env = {**os.environ, "AFRAMES_URL": base, "AFRAMES_TOKEN": key}
    command = [
        sys.executable,
        "-m",
        "aframes_sync",
        "--source",
        f"screenpipe:{database}",
        "--entity",
        "synced",
        "--once",
        "--create",
        "--tz",
        "Europe/Berlin",
        "--checkpoint",
        str(checkpoint),
        "--batch-size",
        "2000",
    ]
    run = run_measured(command, env, "aframes-sync")
    return run.wall_s, run.peak_rss_mb, run.stdout + run.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=int, default=30, help="calendar days of capture")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aframes-sync-") as name:
        tmp = Path(name)
        database = tmp / "capture.sqlite"
        records = list(generate_days(date(2026, 2, 2), args.days, seed=30))
        written = write_screenpipe(database, records)
        rows = sum(written.values())
        print(
            f"Sync benchmark: {args.days} days of SYNTHETIC capture ({rows:,} rows: "
            f"{', '.join(f'{v:,} {k}' for k, v in written.items())}) through aframes-sync "
            "to gunicorn on PostgreSQL"
        )
        with scratch_instance() as (env, key), running_server(env, 2) as (base, _proc):
            first, rss, output = run_agent(base, key, database, tmp / "checkpoint.json")
            again, rss_again, _ = run_agent(base, key, database, tmp / "checkpoint.json")
        print(output.strip().splitlines()[-1] if output.strip() else "")
        sent = re.search(r"sent (\d+) records", output)
        records = int(sent.group(1)) if sent else 0
        print(
            f"  first pass     {rows / first:>9,.0f} rows/s  ({first:.1f} s), agent peak RSS "
            f"{rss:.0f} MB"
        )
        print(f"  nothing new    {again:>9.1f} s, agent peak RSS {rss_again:.0f} MB")
    finish(
        "sync",
        {
            "days": args.days,
            "rows": rows,
            "records_sent": records,
            "rows_per_s": round(rows / first),
            "records_per_s": round(records / first),
            "first_pass_s": round(first, 1),
            "idle_pass_s": round(again, 2),
            "agent_peak_rss_mb": round(rss, 1),
        },
    )


if __name__ == "__main__":
    main()
