"""make bench-annotation: the workbench at size, on PostgreSQL (ProactMem §4.2's process).

One home stream of 20,000 decision points (50-minute segments, about 2 years; 3 motion events
per segment, so 60,000 events of history), a project that wants 3 labels per point and 3
annotators. The first 19,700 points carry all three labels already (written directly, about
90 % abstain, with disagreements; agreeing points final). Then each annotator labels on through
the dashboard, in turns: the server time of the annotator page (GET, the point with its
history and episodes) and of a label submission (POST, the episode rule, auto-final) are
measured in process with Django's test client, 100 of each per annotator. Last, the
agreement of the whole project (60,000 labels) is computed 3 times.

The stream is synthetic (generated motion events, marked so): what is measured is the
service's time at this size, not anything about the data.

Last line: ``{"annotator_page_p95_ms": …, "label_submit_p95_ms": …, "agreement_s": …}``.
"""

from __future__ import annotations

import argparse
import json
import statistics

from perf.harness import django_on, scratch_instance

DB = "aframes_bench_annotation"
REDIS_DB = 13


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=100, help="labels per annotator measured")
    args = parser.parse_args(argv)
    prelabelled = args.points - args.rounds - 200
    with scratch_instance(DB, REDIS_DB) as (env, _key):
        django_on(env)
        # After django_on: the run's models must read the scratch database's settings.
        from perf import annotation_run

        page_ms, submit_ms, runs, report = annotation_run.run(args.points, prelabelled, args.rounds)
    o = report.overall
    figures = {
        "annotator_page_p95_ms": round(p95(page_ms), 1),
        "label_submit_p95_ms": round(p95(submit_ms), 1),
        "agreement_s": round(statistics.median(runs), 2),
    }
    print()
    print("# Annotation workbench at size (PostgreSQL; synthetic stream)")
    print(f"{args.points:,} decision points, 3 annotators, 3 labels per point")
    print(
        f"annotator page: {len(page_ms)} requests, median {statistics.median(page_ms):.1f} ms, "
        f"p95 {figures['annotator_page_p95_ms']} ms (target < 150)"
    )
    print(
        f"label submission: {len(submit_ms)} requests, median "
        f"{statistics.median(submit_ms):.1f} ms, p95 {figures['label_submit_p95_ms']} ms "
        "(target < 150)"
    )
    print(
        f"agreement of {o.labels:,} labels: median {figures['agreement_s']} s of 3 "
        f"(target < 2); Fleiss' kappa {o.fleiss:.3f}, alpha {o.alpha:.3f}, raw {o.raw:.3f}"
    )
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
