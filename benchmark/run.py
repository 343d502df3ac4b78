"""A whole ProactiveStream run: replay every stream, join the labels, score, summarise.

Pure (no Django): ``manage.py proactivestream run`` loads the streams from the database and
calls :func:`evaluate`; ``benchmark/report.py`` writes what it returns.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmark.labelers.base import Label, label_stream
from benchmark.labelers.registry import reference_labeler
from benchmark.methods.registry import MethodSpec, at_threshold
from benchmark.metrics import METRIC_FUNCTIONS, Confusion, score_stream, summary
from benchmark.reference import LabelKey, for_entity
from benchmark.replay import MethodDecision, StreamRun, replay
from benchmark.streams.records import Stream

Progress = Callable[[str, int, int], None]  # (stream, points done, points in stream)
# The threshold curve's points: scores from 0 (every candidate) to 1 (only what goes beyond all
# of history), finer where the costs teams pick fall (a false alarm worth 1 to 9 misses).
CURVE_THRESHOLDS = (0.0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)


@dataclass(frozen=True)
class Outcome:
    """A scored point worth a look: a TP, FP or FN of one method, with both sides."""

    entity: str
    scope: str
    method: str
    point: str
    at: str
    outcome: str  # TP | FP | FN
    label: Label
    decision: MethodDecision


@dataclass
class Evaluation:
    """Everything a run produced: figures for the report, decisions and labels for drill-down."""

    results: dict[str, Any]
    runs: list[StreamRun] = field(default_factory=list)
    labels: dict[str, dict[str, Label]] = field(default_factory=dict)  # entity -> point -> label
    outcomes: list[Outcome] = field(default_factory=list)


def stream_labels(
    stream: Stream, given: Mapping[LabelKey, Label] | None, labeler_version: int | None = None
) -> tuple[dict[str, Label], str]:
    """The labels a stream is scored against, and their source: a label file's where it has
    this stream, else the scope's reference labeler (its newest version, or the newest at or
    below ``labeler_version``), named with its version (``labeler:home/2``)."""
    if given:
        found = for_entity(given, stream.entity)
        if found:
            return found, next(iter(found.values())).source
    labeler = reference_labeler(stream.scope, stream.zone, labeler_version)
    return label_stream(stream, labeler), f"labeler:{labeler.name}/{labeler.version}"


def evaluate(
    streams: Sequence[Stream],
    methods: Sequence[MethodSpec],
    *,
    labels_file: Mapping[LabelKey, Label] | None = None,
    complete: Callable[[str], str] | None = None,
    control: bool = True,
    progress: Progress | None = None,
    resamples: int | None = None,
    curve: Sequence[float] = (),
    labeler_version: int | None = None,
) -> Evaluation:
    """Replay, label, score and summarise ``streams`` (each an entity) for ``methods``.

    ``curve``: thresholds at which ProactMem is also replayed (a pass of its own, not counted
    in the replay speed), for ``results["threshold_curve"]``: per scope, effectiveness and
    intrusion against the threshold, so a team can choose its operating point.
    """
    evaluation = Evaluation(results={})
    per_stream: list[dict[str, Any]] = []
    clusters: dict[str, dict[str, list[Confusion]]] = {}
    curves: dict[str, dict[float, list[Confusion]]] = {}
    speed: dict[str, dict[str, float]] = {}
    at_curve = [at_threshold(t) for t in curve]
    for stream in streams:
        tick = None
        if progress is not None:
            tick = (lambda s: lambda done, total: progress(s, done, total))(stream.entity)
        run = replay(stream, methods, complete=complete, control=control, progress=tick)
        # Labels are joined only now, after every decision of the stream is final.
        labels, source = stream_labels(stream, labels_file, labeler_version)
        evaluation.runs.append(run)
        evaluation.labels[stream.entity] = labels
        at = {p.key: p.at.isoformat() for p in stream.points}
        row = _stream_row(stream, labels, source)
        times = [(p.key, p.at) for p in stream.points]
        for method in methods:
            c, counted = score_stream(times, labels, run.decisions[method.name])
            clusters.setdefault(stream.scope, {}).setdefault(method.name, []).append(c)
            row["methods"][method.name] = {
                "tp": c.tp,
                "fp": c.fp,
                "fn": c.fn,
                "tn": c.tn,
                "invalid": c.invalid,
                "wrong_service": c.wrong_service,
                "points": c.points,
            }
            evaluation.outcomes += [
                Outcome(
                    stream.entity,
                    stream.scope,
                    method.name,
                    o.point,
                    at[o.point],
                    o.outcome,
                    o.label,
                    o.decision,
                )
                for o in counted
            ]
        if at_curve:
            swept = replay(stream, at_curve, complete=complete, control=control)
            for threshold, spec in zip(curve, at_curve, strict=True):
                c, _ = score_stream(times, labels, swept.decisions[spec.name])
                curves.setdefault(stream.scope, {}).setdefault(threshold, []).append(c)
        per_stream.append(row)
        held = speed.setdefault(stream.scope, {"points": 0, "events": 0, "seconds": 0.0})
        held["points"] += len(stream.points)
        held["events"] += run.events
        held["seconds"] += run.seconds
    scopes: dict[str, Any] = {}
    for scope, by_method in clusters.items():
        options = {} if resamples is None else {"resamples": resamples}
        scopes[scope] = {name: summary(cs, **options) for name, cs in by_method.items()}
    overall_clusters: dict[str, list[Confusion]] = {}
    for by_method in clusters.values():
        for name, cs in by_method.items():
            overall_clusters.setdefault(name, []).extend(cs)
    options = {} if resamples is None else {"resamples": resamples}
    total_points = sum(v["points"] for v in speed.values())
    total_events = sum(v["events"] for v in speed.values())
    total_seconds = sum(v["seconds"] for v in speed.values())
    evaluation.results = {
        "scopes": scopes,
        "overall": {name: summary(cs, **options) for name, cs in overall_clusters.items()},
        "streams": per_stream,
        "methods": [m.name for m in methods],
        "control": control,
        "replay_points_per_s": {
            scope: round(v["points"] / v["seconds"], 1) if v["seconds"] else None
            for scope, v in speed.items()
        },
        "replay_events_per_s": round((total_points + total_events) / total_seconds, 1)
        if total_seconds
        else None,
        "replay_seconds": round(total_seconds, 3),
        "decision_points": total_points,
        "synthetic_scopes": sorted({s.scope for s in streams if s.synthetic}),
    }
    if curves:
        evaluation.results["threshold_curve"] = {
            scope: [curve_point(t, cs) for t, cs in sorted(by_threshold.items())]
            for scope, by_threshold in curves.items()
        }
    return evaluation


def curve_point(threshold: float, clusters: Sequence[Confusion]) -> dict[str, Any]:
    """One point of the threshold curve: the threshold, the false-alarm cost (in misses) that
    sets it, and the pooled counts and figures there."""
    pooled = Confusion()
    for c in clusters:
        pooled += c
    cost = None if threshold >= 1.0 else round(threshold / (1.0 - threshold), 3)
    figures = {name: METRIC_FUNCTIONS[name](pooled) for name in ("effectiveness", "intrusion")}
    return {
        "threshold": threshold,
        "false_alarm_cost": cost,
        **{k: None if v is None else round(v, 4) for k, v in figures.items()},
        "tp": pooled.tp,
        "fp": pooled.fp,
        "fn": pooled.fn,
    }


def _stream_row(stream: Stream, labels: Mapping[str, Label], source: str) -> dict[str, Any]:
    positives = [label for label in labels.values() if label.positive]
    kinds = Counter(label.type or label.service or "unspecified" for label in positives)
    points = len(stream.points)
    return {
        "entity": stream.entity,
        "scope": stream.scope,
        "synthetic": stream.synthetic,
        "labels": source,
        "points": points,
        "events": len(stream.events),
        "positives": len(positives),
        "base_rate": round(len(positives) / points, 4) if points else None,
        "opportunities": dict(sorted(kinds.items())),
        "methods": {},
    }


def timed(function: Callable[[], Any]) -> tuple[Any, float]:
    began = time.perf_counter()
    return function(), time.perf_counter() - began
