"""What a ProactiveStream run writes: results.json, results.md, streams.csv, outcomes.jsonl and
PNG plots (matplotlib, Agg backend: no display needed).

* ``results.json``: the figures (``run.Evaluation.results``), shaped like the benchmark's last
  JSON line: ``{"scopes": {scope: {method: {metric, metric_ci, counts...}}}, ...}``.
* ``results.md``: per scope, one row per method with the six metrics and their 95% intervals;
  then the labels (points, positives, base rate, opportunities per type) of every stream.
* ``streams.csv``: one row per stream and method with its counts and metrics.
* ``outcomes.jsonl``: every TP, FP and FN with the point, the label and the decision.
* ``metrics_<scope>.png``: the metrics per method with their intervals;
  ``timeline_<scope>.png``: the decisions of two methods against the labels on the stream of
  the scope with the most positives, TP, FP and FN marked;
  ``curve_<scope>.png`` (a run with a threshold curve): ProactMem's effectiveness and intrusion
  against its score threshold, the default marked, to choose an operating point by.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmark.metrics import METRIC_FUNCTIONS, METRICS, Confusion
from benchmark.run import Evaluation
from memory.engine.decide import DEFAULT_FALSE_ALARM_COST, DEFAULT_THRESHOLD

RATE_METRICS = ("relevance", "coverage", "effectiveness", "intrusion", "balance")
TIMELINE_METHODS = ("proactmem", "event_only")


def cell(figures: Mapping[str, Any], metric: str) -> str:
    """``0.412 [0.350, 0.470]``; ``1.20×`` for frequency; ``N/A`` where undefined."""
    value = figures.get(metric)
    if value is None:
        return "N/A"
    text = f"{value:.2f}×" if metric == "frequency" else f"{value:.3f}"
    ci = figures.get(f"{metric}_ci")
    if ci:
        low, high = ci
        text += (
            f" [{low:.2f}×, {high:.2f}×]" if metric == "frequency" else f" [{low:.3f}, {high:.3f}]"
        )
    return text


def markdown(results: Mapping[str, Any]) -> str:
    lines = ["# ProactiveStream results", ""]
    synthetic = set(results.get("synthetic_scopes") or ())
    lines.append(
        f"{results.get('decision_points', 0):,} decision points; methods: "
        f"{', '.join(results.get('methods', []))}; intervention control "
        f"{'on' if results.get('control', True) else 'off'}. Intervals: 95%, entity-level "
        "cluster bootstrap. Frequency is interventions per opportunity."
    )
    lines.append("")
    for scope, by_method in results.get("scopes", {}).items():
        note = " (SYNTHETIC data)" if scope in synthetic else ""
        speed = (results.get("replay_points_per_s") or {}).get(scope)
        lines += [f"## {scope}{note}", ""]
        if speed is not None:
            lines += [f"Replay with all methods: {speed:,.0f} decision points/s.", ""]
        lines.append("| method | " + " | ".join(METRICS) + " | TP | FP | FN | TN | invalid |")
        lines.append("|---" * (len(METRICS) + 6) + "|")
        for method, figures in by_method.items():
            cells = " | ".join(cell(figures, m) for m in METRICS)
            counts = " | ".join(str(figures[k]) for k in ("tp", "fp", "fn", "tn", "invalid"))
            lines.append(f"| {method} | {cells} | {counts} |")
        lines.append("")
        curve = (results.get("threshold_curve") or {}).get(scope)
        if curve:
            lines += curve_markdown(curve)
    overall = results.get("overall") or {}
    if overall:
        lines += ["## all scopes pooled", ""]
        lines.append("| method | " + " | ".join(METRICS) + " |")
        lines.append("|---" * (len(METRICS) + 1) + "|")
        for method, figures in overall.items():
            lines.append(f"| {method} | " + " | ".join(cell(figures, m) for m in METRICS) + " |")
        lines.append("")
    lines += ["## streams and their labels", ""]
    lines.append("| stream | scope | labels | points | positives | base rate | opportunities |")
    lines.append("|---|---|---|---|---|---|---|")
    for row in results.get("streams", []):
        kinds = ", ".join(f"{k} {n}" for k, n in row["opportunities"].items()) or "none"
        rate = "N/A" if row["base_rate"] is None else f"{row['base_rate']:.1%}"
        scope = row["scope"] + (" (synthetic)" if row["synthetic"] else "")
        lines.append(
            f"| {row['entity']} | {scope} | {row['labels']} | {row['points']} | "
            f"{row['positives']} | {rate} | {kinds} |"
        )
    return "\n".join(lines) + "\n"


def curve_markdown(curve: Sequence[Mapping[str, Any]]) -> list[str]:
    """The threshold curve of one scope as a table under its results."""
    lines = [
        "ProactMem against its score threshold (a false alarm costing c missed needs sets the "
        f"threshold c/(1+c); the default, c = {DEFAULT_FALSE_ALARM_COST:g}, is "
        f"{DEFAULT_THRESHOLD:.2f}):",
        "",
        "| threshold | false-alarm cost | effectiveness | intrusion | TP | FP | FN |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in curve:
        cost = "∞" if row["false_alarm_cost"] is None else f"{row['false_alarm_cost']:g}"
        eff, intr = row["effectiveness"], row["intrusion"]
        lines.append(
            f"| {row['threshold']:.2f} | {cost} | {'N/A' if eff is None else f'{eff:.3f}'} | "
            f"{'N/A' if intr is None else f'{intr:.3f}'} | {row['tp']} | {row['fp']} | "
            f"{row['fn']} |"
        )
    return [*lines, ""]


def write(evaluation: Evaluation, out: Path, *, plots: bool = True) -> list[Path]:
    """Write every file of the run into ``out`` (created); return the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    results = evaluation.results
    written = []
    path = out / "results.json"
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    written.append(path)
    path = out / "results.md"
    path.write_text(markdown(results))
    written.append(path)
    path = out / "streams.csv"
    path.write_text(streams_csv(results))
    written.append(path)
    path = out / "outcomes.jsonl"
    with path.open("w") as handle:
        for o in evaluation.outcomes:
            handle.write(json.dumps(outcome_json(o), ensure_ascii=False, sort_keys=True) + "\n")
    written.append(path)
    if plots:
        written += plot_files(evaluation, out)
    return written


def streams_csv(results: Mapping[str, Any]) -> str:
    """One row per stream and method: its labels, counts and metrics."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(
        [
            "entity", "scope", "synthetic", "labels", "points", "positives", "base_rate",
            "method", "tp", "fp", "fn", "tn", "invalid", "wrong_service", *METRICS,
        ]
    )  # fmt: skip
    for row in results.get("streams", []):
        for method, counts in row["methods"].items():
            c = Confusion(**counts)
            figures = [METRIC_FUNCTIONS[m](c) for m in METRICS]
            writer.writerow(
                [
                    row["entity"], row["scope"], row["synthetic"], row["labels"], row["points"],
                    row["positives"], row["base_rate"], method,
                    *(counts[k] for k in ("tp", "fp", "fn", "tn", "invalid", "wrong_service")),
                    *("" if f is None else round(f, 4) for f in figures),
                ]
            )  # fmt: skip
    return buffer.getvalue()


def outcome_json(o: Any) -> dict[str, Any]:
    return {
        "entity": o.entity,
        "scope": o.scope,
        "method": o.method,
        "point": o.point,
        "at": o.at,
        "outcome": o.outcome,
        "label": {
            **asdict(o.label),
            "valid_until": o.label.valid_until.isoformat() if o.label.valid_until else None,
        },
        "decision": {
            **asdict(o.decision),
            "regularities": [dict(r) for r in o.decision.regularities],
        },
    }


def plot_files(evaluation: Evaluation, out: Path) -> list[Path]:
    written = []
    for name, content in plots(evaluation).items():
        path = out / name
        path.write_bytes(content)
        written.append(path)
    return written


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (files, no display). Imported on first use:
    matplotlib takes about half a second to import, and most users of this module never plot."""
    # stays: see the docstring
    import matplotlib

    matplotlib.use("Agg")
    # stays: pyplot only once the backend is chosen
    from matplotlib import pyplot as plt

    return plt


def plots(evaluation: Evaluation) -> dict[str, bytes]:
    """``metrics_<scope>.png`` and ``timeline_<scope>.png`` of every scope, as PNG bytes."""
    found: dict[str, bytes] = {}
    for scope, by_method in evaluation.results.get("scopes", {}).items():
        found[f"metrics_{scope}.png"] = metrics_png(scope, by_method)
        timeline = timeline_png(evaluation, scope)
        if timeline is not None:
            found[f"timeline_{scope}.png"] = timeline
    for scope, curve in (evaluation.results.get("threshold_curve") or {}).items():
        found[f"curve_{scope}.png"] = curve_png(scope, curve)
    return found


def curve_png(scope: str, curve: Sequence[Mapping[str, Any]]) -> bytes:
    """Effectiveness and intrusion against the score threshold, the default marked."""
    plt = pyplot()

    figure, axis = plt.subplots(figsize=(7, 4))
    xs = [row["threshold"] for row in curve]
    for metric, color in (("effectiveness", "tab:blue"), ("intrusion", "tab:red")):
        axis.plot(xs, [row[metric] or 0.0 for row in curve], marker="o", color=color, label=metric)
    axis.axvline(DEFAULT_THRESHOLD, color="grey", linestyle="--", label="default threshold")
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1)
    axis.set_xlabel("score threshold (a false alarm costing c misses: c / (1 + c))")
    axis.set_title(f"ProactiveStream, {scope}: ProactMem against its threshold")
    axis.legend(fontsize=8)
    return _png(figure)


def _png(figure: Any) -> bytes:
    plt = pyplot()

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def metrics_png(scope: str, by_method: Mapping[str, Mapping[str, Any]]) -> bytes:
    """The five rate metrics per method with 95% intervals, and frequency beside them."""
    plt = pyplot()

    methods = list(by_method)
    figure, (rates, freq) = plt.subplots(
        1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [5, 1.4]}
    )
    width = 0.8 / max(1, len(methods))
    colors = plt.get_cmap("tab10")
    for i, method in enumerate(methods):
        figures = by_method[method]
        xs = [j + i * width for j in range(len(RATE_METRICS))]
        values = [figures.get(m) or 0.0 for m in RATE_METRICS]
        errors = _errors(figures, RATE_METRICS)
        rates.bar(xs, values, width, label=method, color=colors(i), yerr=errors, capsize=2)
        value = figures.get("frequency")
        freq.bar(
            [i],
            [value or 0.0],
            0.8,
            color=colors(i),
            yerr=_errors(figures, ("frequency",)),
            capsize=2,
        )
    rates.set_xticks([j + width * (len(methods) - 1) / 2 for j in range(len(RATE_METRICS))])
    rates.set_xticklabels(RATE_METRICS)
    rates.set_ylim(0, 1)
    rates.set_title(f"ProactiveStream, {scope}: metrics with 95% intervals")
    rates.legend(fontsize=7, ncols=2)
    freq.set_xticks(range(len(methods)))
    freq.set_xticklabels(methods, rotation=60, ha="right", fontsize=7)
    freq.set_title("frequency (×)")
    return _png(figure)


def _errors(figures: Mapping[str, Any], names: Sequence[str]) -> list[list[float]]:
    low, high = [], []
    for name in names:
        value, ci = figures.get(name), figures.get(f"{name}_ci")
        if value is None or not ci:
            low.append(0.0)
            high.append(0.0)
        else:
            low.append(max(0.0, value - ci[0]))
            high.append(max(0.0, ci[1] - value))
    return [low, high]


def timeline_png(evaluation: Evaluation, scope: str) -> bytes | None:
    """One stream's decisions of ``TIMELINE_METHODS`` against its labels, TP/FP/FN marked."""
    plt = pyplot()

    rows = [r for r in evaluation.results.get("streams", []) if r["scope"] == scope]
    if not rows:
        return None
    entity = max(rows, key=lambda r: (r["positives"], r["points"], r["entity"]))["entity"]
    shown = [m for m in TIMELINE_METHODS if m in evaluation.results.get("methods", [])]
    found = [o for o in evaluation.outcomes if o.entity == entity and o.method in shown]
    labels = evaluation.labels.get(entity, {})
    run = next(r for r in evaluation.runs if r.entity == entity)
    times = {p.key: p.at for p in run.points}
    figure, axis = plt.subplots(figsize=(12, 1.2 + 0.6 * (len(shown) + 1)))
    positives = [times[k] for k, label in labels.items() if label.positive and k in times]
    axis.scatter(
        positives, [0] * len(positives), marker="|", s=200, color="black", label="labelled"
    )
    styles = {"TP": ("o", "tab:green"), "FP": ("x", "tab:red"), "FN": ("v", "tab:orange")}
    for row, method in enumerate(shown, start=1):
        for kind, (marker, color) in styles.items():
            xs = [
                datetime.fromisoformat(o.at)
                for o in found
                if o.method == method and o.outcome == kind
            ]
            axis.scatter(
                xs,
                [row] * len(xs),
                marker=marker,
                color=color,
                label=kind if row == 1 else None,
                s=30,
            )
    axis.set_yticks(range(len(shown) + 1))
    axis.set_yticklabels(["labels", *shown])
    axis.set_ylim(-0.5, len(shown) + 0.5)
    axis.set_title(f"{entity} ({scope}): decisions against labels")
    axis.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    figure.autofmt_xdate()
    return _png(figure)
