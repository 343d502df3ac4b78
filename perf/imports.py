"""make bench-import: import speed and peak memory of every format, into PostgreSQL.

Three parts, each import run as its own ``manage.py import_events`` process so its peak
resident memory (``wait4``'s ru_maxrss) is its own:
1. a 1,000,000-line JSONL file of our own records (SYNTHETIC desktop capture);
2. each format on the real files in ``../shared/data`` (skipped, and said, where absent);
3. a generated (SYNTHETIC) 1,000,000-event GH Archive file.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import date
from itertools import islice
from pathlib import Path

from benchmark.synthetic.desktop import generate_days
from benchmark.synthetic.gharchive import write_file
from perf.harness import ROOT, finish, run_measured, scratch_instance

DATA = ROOT.parent / "shared" / "data"
REAL = [  # (label, format, path under shared/data, extra arguments)
    (
        "fitbit_fitabase",
        "fitbit",
        "fitbit-fitabase/period-2016-04-12",
        ["--tz", "America/New_York"],
    ),
    ("ordonez_a", "ordonez", "ordonez-adl/OrdonezA_Sensors.txt", ["--tz", "Europe/Madrid"]),
    ("ordonez_b", "ordonez", "ordonez-adl/OrdonezB_Sensors.txt", ["--tz", "Europe/Madrid"]),
    ("heartsteps_users", "heartsteps", "heartsteps-v1/users.csv", []),
    ("github_k8s_gharchive", "github", "github-events-k8s-2017/events.ndjson.gz", []),
    ("github_ants_rest", "github", "github-rest-ants", []),
]


def timed_import(
    env: dict[str, str], fmt: str, path: Path, entity: str, extra: list[str]
) -> tuple[dict, float, float]:
    """(summary, wall seconds, peak RSS MB) of one import process."""
    command = [
        sys.executable,
        "manage.py",
        "import_events",
        fmt,
        str(path),
        "--team",
        "bench",
        "--entity",
        entity,
        "--json",
        *extra,
    ]
    run = run_measured(command, env, f"import of {path}")
    return json.loads(run.stdout.strip().splitlines()[-1]), run.wall_s, run.peak_rss_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000_000, help="JSONL lines")
    parser.add_argument("--gh-events", type=int, default=1_000_000, help="GH Archive events")
    args = parser.parse_args()
    figures: dict[str, object] = {}
    with (
        tempfile.TemporaryDirectory(prefix="aframes-import-") as name,
        scratch_instance() as (env, _key),
    ):
        tmp = Path(name)
        jsonl = tmp / "events.jsonl"
        with jsonl.open("w") as out:
            for record in islice(generate_days(date(2026, 1, 5), 100_000, seed=7), args.lines):
                out.write(json.dumps(record) + "\n")
        print(
            f"Import benchmark into PostgreSQL ({args.lines:,}-line JSONL, real files, "
            f"{args.gh_events:,} GH Archive events); each import is its own process"
        )
        summary, wall, rss = timed_import(
            env, "jsonl", jsonl, "jsonl", ["--scope", "desktop", "--tz", "Europe/Berlin"]
        )
        if summary["imported"] != args.lines:
            raise SystemExit(f"expected {args.lines:,} imported, got {summary}")
        print(
            f"  jsonl (SYNTHETIC)        {args.lines:>9,} events {args.lines / wall:>8,.0f}/s "
            f"peak RSS {rss:5.0f} MB"
        )
        figures.update(jsonl_events_per_s=round(args.lines / wall), jsonl_peak_rss_mb=round(rss, 1))
        jsonl.unlink()
        for label, fmt, relative, extra in REAL:
            path = DATA / relative
            if not path.exists():
                print(f"  {label:<24} skipped: {path} is not here")
                continue
            summary, wall, rss = timed_import(env, fmt, path, label.replace("_", "-"), extra)
            count = summary["imported"] + summary["duplicates"]
            print(
                f"  {label:<24} {count:>9,} events {count / wall:>8,.0f}/s peak RSS {rss:5.0f} MB"
                f"  ({summary['imported']:,} new, {sum(summary['rejected'].values()):,} rejected)"
            )
            figures[f"{label}_events"] = count
            figures[f"{label}_events_per_s"] = round(count / wall)
            figures[f"{label}_peak_rss_mb"] = round(rss, 1)
        archive = write_file(tmp / "gharchive.json.gz", args.gh_events)
        summary, wall, rss = timed_import(env, "github", archive, "gh", [])
        count = summary["imported"] + summary["duplicates"]
        print(
            f"  gharchive (SYNTHETIC)    {count:>9,} events {count / wall:>8,.0f}/s "
            f"peak RSS {rss:5.0f} MB  (targets: >= 30,000/s, < 300 MB)"
        )
        figures.update(
            gharchive_events=count,
            gharchive_events_per_s=round(count / wall),
            gharchive_peak_rss_mb=round(rss, 1),
        )
    finish("import", figures)


if __name__ == "__main__":
    main()
