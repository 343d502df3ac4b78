"""make bench-qa: the QA harness without an LLM on the bundled demo desktop days.

A scratch SQLite instance in a temporary folder, the demo's desktop days
(``load_demo``'s dates, seed and zone: SYNTHETIC, aframes_web.demo.desktop) imported and
compiled, then ``manage.py qa_benchmark`` with no answerer: the oracle, the compiler agreement
check and the token report (Activity Frames §6.2). Prints the report, then as its last line
one JSON object: ``{"days": …, "questions": …, "agreement_minutes_median_abs": …, …}``, also
written to ``bench-results/qa.json``; qa.json, qa.md and the plots go to ``bench-results/qa/``.

    python -m benchmark.qa [--days 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent.parent / "bench-results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark.qa", description=__doc__)
    parser.add_argument("--days", type=int, default=5, help="demo days to load and ask about")
    parser.add_argument(
        "--out", default=None, help="qa.json, qa.md and plots (default bench-results/qa)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="aframes-bench-qa-") as tmp:
        os.environ.update(AFRAMES_VAR_DIR=tmp, SECRET_KEY="benchmark-only", LOG_LEVEL="WARNING")
        for name in ("DATABASE_URL", "REDIS_URL", "LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY"):
            os.environ.pop(name, None)  # the scratch instance: SQLite in tmp, no model
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aframes_web.settings")
        import django

        django.setup()
        from django.core.management import call_command

        from aframes_web.celery import app
        from aframes_web.dashboard.management.commands.load_demo import (
            DEMO_SEED,
            DEMO_START,
            DEMO_TZ,
        )
        from aframes_web.demo.desktop import generate_days
        from aframes_web.streams.importers import SourceItem
        from aframes_web.streams.importing import import_items
        from aframes_web.streams.services import entity_create
        from aframes_web.teams.services import team_create
        from benchmark.qa import report

        call_command("migrate", "--noinput", verbosity=0)
        app.conf.task_always_eager = True  # the compiles run inline, as the worker would
        team = team_create(slug="bench", name="Bench")
        entity = entity_create(
            team=team, key="demo-desktop", scope="desktop", timezone_name=DEMO_TZ
        )
        print(f"importing {args.days} SYNTHETIC demo days ...", file=sys.stderr)
        records = generate_days(DEMO_START, args.days, seed=DEMO_SEED, tz=DEMO_TZ)
        import_items(
            entity=entity,
            items=(SourceItem(f"synthetic:{n}", item=r) for n, r in enumerate(records, 1)),
        )
        out = Path(args.out) if args.out else RESULTS / "qa"
        call_command(
            "qa_benchmark",
            "--team",
            "bench",
            "--entity",
            "demo-desktop",
            "--days",
            str(args.days),
            "--out",
            str(out),
        )
        line = json.dumps(report.summary_line(json.loads((out / "qa.json").read_text())))
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "qa.json").write_text(line + "\n")
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
