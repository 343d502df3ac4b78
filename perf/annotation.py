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
from typing import Any

from perf.harness import django_on, scratch_instance

REAL_KEYS = (
    "point_page_p95_ms",
    "point_page_28_p95_ms",
    "history_range_p95_ms",
    "requests_to_judge",
    "lookahead_leaks",
    "real_home_days",
    "real_home_points",
)

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

        page_ms, submit_ms, runs, report, project, users = annotation_run.run(
            args.points, prelabelled, args.rounds
        )
        real = annotation_run.real_home(project.team, users)
    o = report.overall
    figures = {
        "annotator_page_p95_ms": round(p95(page_ms), 1),
        "label_submit_p95_ms": round(p95(submit_ms), 1),
        "agreement_s": round(statistics.median(runs), 2),
        **_real_figures(real),
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
    _print_real(real, figures)
    print(json.dumps(figures))
    return 0


def _real_figures(real: dict[str, Any] | None) -> dict[str, Any]:
    if real is None:
        return dict.fromkeys(REAL_KEYS)
    return {
        "point_page_p95_ms": round(p95(real["page_ms"]), 1),
        "point_page_28_p95_ms": round(p95(real["page28_ms"]), 1),
        "history_range_p95_ms": round(p95(real["range_ms"]), 1),
        "requests_to_judge": real["requests_to_judge"],
        "lookahead_leaks": real["lookahead_leaks"],
        "real_home_days": real["days"],
        "real_home_points": real["points"],
    }


def _print_real(real: dict[str, Any] | None, figures: dict[str, Any]) -> None:
    print()
    print("# The workbench on a real home (Ordonez B, ../shared/data)")
    if real is None:
        print("skipped: ../shared/data/ordonez-adl is not here; the figures are null")
        return
    print(
        f"{real['points']} points over {real['days']} days, labelled in order by one annotator; "
        f"every {real['step']}th page timed ({len(real['page_ms'])} points)"
    )
    print(
        f"point page with its 14-day baseline: median {statistics.median(real['page_ms']):.1f} "
        f"ms, p95 {figures['point_page_p95_ms']} ms (target <= 150); with 28 days: p95 "
        f"{figures['point_page_28_p95_ms']} ms"
    )
    print(
        f"history of the point's day as a range: p95 {figures['history_range_p95_ms']} ms "
        "(target <= 150)"
    )
    print(
        f"page loads to see the point, what is on at its close and a 28-day baseline: "
        f"{figures['requests_to_judge']} (target <= 3)"
    )
    print(f"look-ahead leaks over every annotator route: {figures['lookahead_leaks']} (target 0)")
    for route, what in real["leaks"].items():
        print(f"  {route}: {', '.join(what)}")


if __name__ == "__main__":
    raise SystemExit(main())
