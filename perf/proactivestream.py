"""make bench-proactivestream: ProactiveStream on the bundled real data, every scope, every method.

    python -m perf.proactivestream [--desktop-days 14] [--methods all] [--fitbit-files all|hourly]

On its own scratch PostgreSQL database (``aframes_bench_ps``) and Redis database 12, through
the product's own commands: ``import_events`` of the real files in ``../shared/data`` (home:
Ordóñez A and B; sports: the Fitabase folder, hourly and wide minute files, one entity per
person, or with ``--fitbit-files hourly`` the period's hourly and daily files alone; code:
the kubernetes GH Archive events, one entity per repository, and the ants REST objects),
plus SYNTHETIC desktop days (``benchmark/synthetic/desktop.py``: no openly licensed real
capture exists; their results are marked as such), then ``proactivestream run --scope all``
with every method. It prints the results table per scope and, as its last line, one JSON
object: every metric of every method per scope with its 95% interval (with ProactiveBench's
outcome names and timeliness), ProactMem's threshold curve per scope, and the replay speed
(``replay_points_per_s`` per scope: decision points per second with all methods deciding at
each, memory built along the way; ``replay_events_per_s``: events and points per second).

The bundled homes are sparse (about 180 events a day), so their replay speed says little about
a month of a real CASAS apartment (thousands of lines a day). ``dense_home_replay`` is the
same replay on a SYNTHETIC month of such a home (``benchmark/synthetic/casas_month.py``, read
by the casas importer's own reader, no database): its speed only, no effectiveness.
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
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from aframes_web.streams.importers.casas import CasasReader
from benchmark.methods.registry import methods_named
from benchmark.replay import replay
from benchmark.streams.build import build_stream
from benchmark.synthetic import casas_month
from benchmark.synthetic.desktop import generate_days, write_jsonl
from perf.harness import RESULTS, ROOT, fail, finish, manage, scratch_instance
from perf.labels import STUDIES
from perf.real import DATA, events_of

PS_DB = "aframes_bench_ps"
PS_REDIS_DB = 12
DESKTOP_KEY = "desktop-synthetic"
IMPORTS = (
    # (format, path, entity key, time zone)
    ("ordonez", "ordonez-adl/OrdonezA_Sensors.txt", "ordonez-a", "Europe/Madrid"),
    ("ordonez", "ordonez-adl/OrdonezB_Sensors.txt", "ordonez-b", "Europe/Madrid"),
    ("fitbit", "fitbit-fitabase", "fitbit", "America/New_York"),
    ("github", "github-events-k8s-2017/events.ndjson.gz", "k8s", "UTC"),
    ("github", "github-rest-ants", "ants", "UTC"),
)
# --fitbit-files hourly: the Fitabase period's hourly and daily files alone, without the wide
# minute files (a Fitbit export often holds no minute data; a held-out period had none).
FITBIT_HOURLY = "fitbit-fitabase/period-2016-04-12"
TARGET_POINTS_PER_S = 2000.0  # replay with all methods, per scope
# ProactMem must beat the event-only baseline by a fifth on each scope with real data, at no
# higher intrusion, and each memory layer must earn its place in the ablations.
TARGET_RATIO = 1.2
ABLATIONS = ("no_trajectory", "no_replay_gate", "no_validation")


def _import(
    env: dict[str, str],
    fmt: str,
    path: Path,
    key: str,
    tz: str,
    scope: str | None = None,
    **extra: str,
) -> None:
    began = time.perf_counter()
    scoped = ["--scope", scope] if scope else []
    out = manage(
        {**env, **extra}, "import_events", fmt, str(path), "--team", "bench", "--entity", key,
        "--tz", tz, *scoped, "--json",
    )  # fmt: skip
    summary = json.loads(out)
    print(
        f"  {fmt} {path.name} -> {key}: {summary['imported']:,} events, "
        f"{len(summary.get('entities') or {key: 0}):,} entit"
        f"{'y' if len(summary.get('entities') or {key: 0}) == 1 else 'ies'} "
        f"({time.perf_counter() - began:.1f} s)"
    )


def imports(fitbit_files: str) -> tuple[tuple[str, str, str, str], ...]:
    """:data:`IMPORTS`, the Fitabase folder narrowed to its period's files for ``hourly``."""
    if fitbit_files == "all":
        return IMPORTS
    return tuple(
        (fmt, FITBIT_HOURLY if fmt == "fitbit" else relative, key, tz)
        for fmt, relative, key, tz in IMPORTS
    )


def _desktop(env: dict[str, str], days: int, folder: Path) -> None:

    path = folder / "desktop.jsonl"
    write_jsonl(path, generate_days(date(2026, 3, 2), days, seed=7))
    # Desktop points are frame ends of compiled days: the compiles run inline here.
    _import(
        env, "jsonl", path, DESKTOP_KEY, "Europe/Berlin", "desktop",
        CELERY_TASK_ALWAYS_EAGER="1", AFRAMES_COMPILE_INTERVAL_MS="0",
    )  # fmt: skip


def dense_home_replay(folder: Path, methods: str, days: int = 30) -> dict[str, Any]:
    """Replay speed with ``methods`` on a SYNTHETIC month of a dense CASAS home (module
    docstring): its lines, events, decision points, seconds and decision points per second."""
    path = casas_month.write(folder / "casas-month.txt", days)
    zone = ZoneInfo(casas_month.ZONE)
    reader = CasasReader(path, zone)
    items = [read.item for read in reader if read.item is not None]
    stream = build_stream("casas-month-synthetic", "home", events_of(items), zone, synthetic=True)
    run = replay(stream, methods_named(methods.split(",")))
    return {
        "days": days,
        "lines": len(items),
        "events": len(stream.events),
        "points": len(stream.points),
        "seconds": round(run.seconds, 2),
        "points_per_s": round(len(stream.points) / run.seconds, 1) if run.seconds else None,
        "synthetic": True,
    }


def memory_against_baseline(scopes: dict[str, Any]) -> dict[str, Any]:
    """Per scope: ProactMem's effectiveness as a multiple of event_only's, both intrusions, and
    which ablations earn their layer its place (lower effectiveness or higher intrusion)."""
    out: dict[str, Any] = {}
    for scope, methods in sorted(scopes.items()):
        mem, base = methods.get("proactmem"), methods.get("event_only")
        if mem is None or base is None:
            continue
        eff, base_eff = mem["effectiveness"], base["effectiveness"]
        earning = [
            name
            for name in ABLATIONS
            if name in methods
            and (
                (methods[name]["effectiveness"] or 0) < (eff or 0)
                or (methods[name]["intrusion"] or 0) > (mem["intrusion"] or 0)
            )
        ]
        out[scope] = {
            "effectiveness": eff,
            "baseline_effectiveness": base_eff,
            "ratio_x": round(eff / base_eff, 2) if eff is not None and base_eff else None,
            "intrusion": mem["intrusion"],
            "baseline_intrusion": base["intrusion"],
            "ablations_earning": earning,
        }
    return out


def _against_annotators(env: dict[str, str], folder: Path, methods: str) -> dict[str, Any] | None:
    """The methods scored again, on the points of the committed validity studies only, against
    the annotators' adjudicated labels (``benchmark/studies``); None when none is committed."""
    files = sorted(STUDIES.glob("*/*.jsonl"))
    if not files:
        print(
            f"No annotator study is committed ({STUDIES}): the methods are scored against the "
            "reference labelers only (make bench-labels says how to run one)."
        )
        return None
    merged = folder / "studies.jsonl"
    merged.write_text("".join(path.read_text(encoding="utf-8") for path in files))
    out = RESULTS / "proactivestream-annotators"
    done = subprocess.run(
        [
            sys.executable, "manage.py", "proactivestream", "run", "--team", "bench",
            "--scope", "all", "--methods", methods, "--synthetic", DESKTOP_KEY,
            "--labels", f"jsonl:{merged}", "--out", str(out),
        ],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        fail(f"proactivestream run against the annotators failed:\n{done.stderr[-3000:]}")
    second: dict[str, Any] = json.loads((out / "results.json").read_text())
    print(f"Against the annotators' labels ({len(files)} study file(s)), per scope:")
    for scope, by_method in second["scopes"].items():
        cells = ", ".join(
            f"{name} {figures['effectiveness']} (intrusion {figures['intrusion']})"
            for name, figures in by_method.items()
            if name in ("proactmem", "event_only")
        )
        print(f"  {scope}: {cells}")
    return {"files": [p.name for p in files], "scopes": second["scopes"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--desktop-days", type=int, default=14, help="calendar days (weekdays kept)"
    )
    parser.add_argument("--methods", default="all")
    parser.add_argument(
        "--fitbit-files",
        choices=("all", "hourly"),
        default="all",
        help="sports from every Fitabase file (default) or the hourly and daily files only",
    )
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        fail(f"the shared data folder {DATA} is missing")
    # A run on the hourly files alone keeps its files apart from the default run's.
    report = "proactivestream" if args.fitbit_files == "all" else "proactivestream-hourly"
    out = RESULTS / report
    with scratch_instance(PS_DB, PS_REDIS_DB) as (env, _key), tempfile.TemporaryDirectory() as tmp:
        print("Importing the real files (and the SYNTHETIC desktop days) with import_events:")
        for fmt, relative, key, tz in imports(args.fitbit_files):
            _import(env, fmt, DATA / relative, key, tz)
        _desktop(env, args.desktop_days, Path(tmp))
        print("Running proactivestream run --scope all (progress per stream on stderr):")
        began = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable, "manage.py", "proactivestream", "run", "--team", "bench",
                "--scope", "all", "--methods", args.methods, "--synthetic", DESKTOP_KEY,
                "--curve", "--out", str(out),
            ],
            cwd=ROOT, env=env, capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            fail(f"proactivestream run failed:\n{done.stderr[-3000:]}")
        wall = time.perf_counter() - began
        against_annotators = _against_annotators(env, Path(tmp), args.methods)
        dense = dense_home_replay(Path(tmp), args.methods)
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    print((out / "results.md").read_text())
    speeds = results["replay_points_per_s"]
    for scope, speed in speeds.items():
        verdict = "meets" if speed >= TARGET_POINTS_PER_S else "misses"
        print(
            f"replay {scope}: {speed:,.0f} decision points/s with all methods ({verdict} >= 2,000)"
        )
    verdict = "meets" if (dense["points_per_s"] or 0) >= TARGET_POINTS_PER_S else "misses"
    print(
        f"replay home, a dense SYNTHETIC month ({dense['days']} days, {dense['lines']:,} CASAS "
        f"lines, {dense['points']:,} points): {dense['points_per_s']:,.0f} decision points/s "
        f"with all methods ({verdict} >= 2,000)"
    )
    ratios = memory_against_baseline(results["scopes"])
    for scope, r in ratios.items():
        print(
            f"{scope}: ProactMem effectiveness {r['effectiveness']} against event_only's "
            f"{r['baseline_effectiveness']} = {r['ratio_x']}x (target >= {TARGET_RATIO}x), "
            f"intrusion {r['intrusion']} against {r['baseline_intrusion']}; ablations that lower "
            f"effectiveness or raise intrusion: {', '.join(r['ablations_earning']) or 'none'}"
        )
    print("In ProactiveBench's terms (correct detections, missed needs, false alarms, FAR):")
    for scope, by_method in results["scopes"].items():
        for name in ("proactmem", "event_only"):
            pb = (by_method.get(name) or {}).get("proactivebench")
            if pb:
                print(
                    f"  {scope} {name}: {pb['correct_detections']} correct, {pb['missed_needs']} "
                    f"missed, {pb['false_alarms']} false alarms, precision {pb['precision']}, "
                    f"recall {pb['recall']}, F1 {pb['f1']}, false-alarm rate "
                    f"{pb['false_alarm_rate']}"
                )
    print("ProactMem against its score threshold (effectiveness / intrusion):")
    for scope, curve in (results.get("threshold_curve") or {}).items():
        cells = ", ".join(
            f"{row['threshold']:.2f}: {row['effectiveness']} / {row['intrusion']}" for row in curve
        )
        print(f"  {scope}: {cells}")
    print("Timeliness of ProactMem's catches (share at the labelled point, mean delay):")
    for scope, by_method in results["scopes"].items():
        t = (by_method.get("proactmem") or {}).get("timeliness") or {}
        print(f"  {scope}: {t.get('on_time_share')} on time, mean {t.get('mean_lag_min')} min late")
    print(f"The run took {wall:.0f} s in all (decision points built, replayed, scored, plotted).")
    print(f"Files: {out}")
    figures = {
        "scopes": results["scopes"],
        "proactmem_vs_event_only": ratios,
        "replay_points_per_s": speeds,
        "replay_events_per_s": results["replay_events_per_s"],
        "dense_home_replay": dense,
        "threshold_curve": results.get("threshold_curve"),
        "against_annotators": against_annotators,
        "decision_points": results["decision_points"],
        "synthetic_scopes": results["synthetic_scopes"],
        "run_s": round(wall, 1),
        "fitbit_files": args.fitbit_files,
    }
    finish(report, figures)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aframes_web.settings")
    raise SystemExit(main())
