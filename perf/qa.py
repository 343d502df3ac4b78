"""make bench-qa: the QA harness without an LLM on the bundled demo desktop days.

A scratch SQLite instance in a temporary folder, the demo's desktop days
(``load_demo``'s dates, seed and zone: SYNTHETIC, benchmark.synthetic.desktop) imported and
compiled, then ``manage.py qa_benchmark`` with no answerer: the oracle, the compiler agreement
check and the token report (Activity Frames §6.2). Prints the report, then as its last line
one JSON object: ``{"days": …, "questions": …, "agreement_minutes_median_abs": …, …}``, also
written to ``bench-results/qa.json``; qa.json, qa.md and the plots go to ``bench-results/qa/``.

    python -m perf.qa [--days 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from benchmark.qa import report
from perf.harness import ROOT, django_on

RESULTS = ROOT / "bench-results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.qa", description=__doc__)
    parser.add_argument("--days", type=int, default=5, help="demo days to load and ask about")
    parser.add_argument(
        "--out", default=None, help="qa.json, qa.md and plots (default bench-results/qa)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="aframes-bench-qa-") as tmp:
        os.environ.update(AFRAMES_VAR_DIR=tmp, SECRET_KEY="benchmark-only", LOG_LEVEL="WARNING")
        for name in ("DATABASE_URL", "REDIS_URL", "LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY"):
            os.environ.pop(name, None)  # the scratch instance: SQLite in tmp, no model
        django_on({})
        # After django_on: the run's models must read the scratch instance's settings.
        from perf import qa_run

        out = Path(args.out) if args.out else RESULTS / "qa"
        qa_run.run(args.days, out)
        line = json.dumps(report.summary_line(json.loads((out / "qa.json").read_text())))
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "qa.json").write_text(line + "\n")
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
