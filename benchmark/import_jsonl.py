"""make bench-import: ``import_events jsonl`` of a 1,000,000-line file into PostgreSQL.

The file is generated first (synthetic desktop capture); the import runs as its own process
so its peak resident memory is measured alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from itertools import islice
from pathlib import Path

from benchmark.harness import ROOT, finish, scratch_instance
from benchmark.synthetic.desktop import generate_days


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="aframes-import-") as tmp:
        path = Path(tmp) / "events.jsonl"
        with path.open("w") as out:
            for record in islice(generate_days(date(2026, 1, 5), 100_000, seed=7), args.lines):
                out.write(json.dumps(record) + "\n")
        size_mb = path.stat().st_size / 1e6
        print(
            f"Import benchmark: {args.lines:,} lines ({size_mb:,.0f} MB) of synthetic desktop "
            "events via manage.py import_events jsonl into PostgreSQL"
        )
        with scratch_instance() as (env, _key):
            command = [
                sys.executable,
                "manage.py",
                "import_events",
                "jsonl",
                str(path),
                "--team",
                "bench",
                "--entity",
                "import",
                "--scope",
                "desktop",
                "--tz",
                "Europe/Berlin",
                "--json",
            ]
            started = time.perf_counter()
            with (
                (Path(tmp) / "out.txt").open("w+") as out,
                (Path(tmp) / "err.txt").open("w+") as err,
            ):
                proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=err)
                # wait4 gives this child's own rusage; ru_maxrss is in KiB on Linux.
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
                wall = time.perf_counter() - started
                out.seek(0)
                err.seek(0)
                if proc.returncode != 0:
                    raise SystemExit(f"import failed:\n{err.read()}")
                summary = json.loads(out.read().strip().splitlines()[-1])
            peak_mb = usage.ru_maxrss / 1024
    if summary["imported"] != args.lines:
        raise SystemExit(f"expected {args.lines:,} imported, got {summary}")
    print(
        f"  imported {summary['imported']:,} in {wall:,.1f} s = {args.lines / wall:,.0f} "
        f"events/s; peak RSS of the import process {peak_mb:,.0f} MB (target: < 300 MB)"
    )
    finish(
        "import",
        {
            "lines": args.lines,
            "file_mb": round(size_mb, 1),
            "wall_s": round(wall, 1),
            "events_per_s": round(args.lines / wall),
            "peak_rss_mb": round(peak_mb, 1),
        },
    )


if __name__ == "__main__":
    main()
