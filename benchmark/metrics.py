"""ProactiveStream's scoring: labels joined after the decisions, the paper's six metrics, and
confidence intervals by an entity-level cluster bootstrap (ProactMem §4.3, §5, D.2).

**Matching rule** (episode-aware, as the paper's references list the valid observations of an
opportunity). A positive label marks the first reliable actionable window of an opportunity and
names its service; it stays *valid* through ``valid_until`` (the labeler's timeliness span for
that kind of opportunity; a label without one is valid at its own point only). Per stream and
method, in point order:

* an intervention naming the service of an open, unmatched, still valid opportunity matches it
  (the earliest opened first): one true positive (TP), at that point. A label without a service
  (a person may leave it out) is matched by any intervention;
* any other intervention is a false positive (FP): at a point no opportunity is open, a second
  one for an opportunity already matched (redundant), or one naming another service than an
  open opportunity's (also counted as ``wrong_service``; that opportunity stays open);
* an opportunity no intervention matched by the end of its validity is one false negative
  (FN), at its labelled point;
* an abstention at a point labelled abstain is a true negative (TN); an ``invalid`` decision
  (the method failed there) is scored as an abstention and counted in ``invalid``; a point
  without any label is not scored and counted in ``unlabelled``.

So TP + FN is the number of labelled opportunities, and every intervention is a TP or an FP.

**Metrics**, exactly as the paper defines them, from pooled counts: relevance TP/(TP+FP),
coverage TP/(TP+FN), effectiveness 2TP/(2TP+FP+FN), intrusion FP/(FP+TN), balance
½·(TP/(TP+FN) + TN/(TN+FP)), frequency (TP+FP)/(TP+FN) (interventions per opportunity, shown
as ×). Each is None ("N/A") where its denominator is zero; coverage, effectiveness, balance and
frequency are N/A without positives. Other benchmarks' false-alarm rates are reported under
their own names, never as intrusion: ``fp_share_of_interventions`` FP/(TP+FP) (ProactiveBench)
and ``fp_share_of_points`` FP/N (ContextAgent, N the scored points).
**Timeliness** of what was caught: the share of true positives at the labelled point itself
and their mean delay after it in minutes (``timeliness``), beside ProactiveBench's outcome
names (``proactivebench``).

**Intervals.** 95% intervals resample whole streams (entities) with replacement, pooling their
counts, :data:`RESAMPLES` times with a fixed seed, and take the 2.5th and 97.5th percentiles of
each metric over the resamples where it is defined; a scope with one stream has no interval.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from benchmark.labelers.base import Label
from benchmark.replay import MethodDecision

RESAMPLES = 1000
SEED = 20261201
METRICS = ("relevance", "coverage", "effectiveness", "intrusion", "balance", "frequency")


@dataclass(frozen=True, slots=True)
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    invalid: int = 0
    wrong_service: int = 0
    unlabelled: int = 0
    points: int = 0  # scored (labelled) points
    # Timeliness of the true positives: how many came at the labelled point itself, and the
    # minutes from each labelled point to its matching intervention, summed.
    on_time: int = 0
    lag_min: float = 0.0

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @property
    def positives(self) -> int:
        return self.tp + self.fn  # each labelled opportunity is one TP or one FN


@dataclass(frozen=True, slots=True)
class Scored:
    """One counted outcome: where it is counted, the label it concerns, the decision there."""

    point: str
    outcome: str  # TP | FP | FN
    label: Label
    decision: MethodDecision


@dataclass
class _Open:
    label: Label
    until: datetime
    matched: bool = False


def score_stream(
    points: Sequence[tuple[str, datetime]],
    labels: Mapping[str, Label],
    decisions: Sequence[MethodDecision],
) -> tuple[Confusion, list[Scored]]:
    """One method's counts on one stream under the matching rule, and the outcomes counted.

    ``points`` are the stream's (key, time) in order; ``decisions`` the method's (one per
    point; a point without one counts as an abstention).
    """
    abstained = MethodDecision("", "abstain")
    by_point = {d.point: d for d in decisions}
    times = dict(points)
    counts = dict.fromkeys(("tp", "fp", "fn", "tn", "invalid", "wrong_service", "unlabelled"), 0)
    counts["points"] = counts["on_time"] = 0
    lag = 0.0
    found: list[Scored] = []
    opened: list[_Open] = []

    def expire(now: datetime | None) -> None:
        for o in [o for o in opened if now is None or o.until < now]:
            opened.remove(o)
            if not o.matched:
                counts["fn"] += 1
                found.append(
                    Scored(o.label.point, "FN", o.label, by_point.get(o.label.point, abstained))
                )

    for key, at in points:
        expire(at)
        label = labels.get(key)
        decision = by_point.get(key, abstained)
        if label is None:
            counts["unlabelled"] += 1
            continue
        counts["points"] += 1
        counts["invalid"] += decision.action == "invalid"
        if label.positive:
            until = label.valid_until if label.valid_until is not None else at
            opened.append(_Open(label, max(until, at)))
        if decision.action != "intervene":
            counts["tn"] += not label.positive
            continue
        match = next(
            (
                o
                for o in opened
                if not o.matched
                and (o.label.service is None or o.label.service == decision.service)
            ),
            None,
        )
        if match is not None:
            match.matched = True
            counts["tp"] += 1
            late = (at - times.get(match.label.point, at)).total_seconds() / 60
            counts["on_time"] += late <= 0
            lag += max(0.0, late)
            found.append(Scored(key, "TP", match.label, decision))
            continue
        counts["fp"] += 1
        counts["wrong_service"] += any(not o.matched for o in opened)
        found.append(Scored(key, "FP", label, decision))
    expire(None)
    return Confusion(**counts, lag_min=lag), found


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def relevance(c: Confusion) -> float | None:
    return _ratio(c.tp, c.tp + c.fp)


def coverage(c: Confusion) -> float | None:
    return _ratio(c.tp, c.tp + c.fn)


def effectiveness(c: Confusion) -> float | None:
    if c.tp + c.fn == 0:
        return None
    return _ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn)


def intrusion(c: Confusion) -> float | None:
    return _ratio(c.fp, c.fp + c.tn)


def balance(c: Confusion) -> float | None:
    tpr, tnr = coverage(c), _ratio(c.tn, c.tn + c.fp)
    if tpr is None or tnr is None:
        return None
    return (tpr + tnr) / 2


def frequency(c: Confusion) -> float | None:
    return _ratio(c.tp + c.fp, c.tp + c.fn)


def fp_share_of_interventions(c: Confusion) -> float | None:
    """ProactiveBench's false-alarm rate FP/(TP+FP); not ProactMem's intrusion."""
    return _ratio(c.fp, c.tp + c.fp)


def fp_share_of_points(c: Confusion) -> float | None:
    """ContextAgent's false-alarm rate FP/N over all scored points; not intrusion either."""
    return _ratio(c.fp, c.points)


METRIC_FUNCTIONS: Mapping[str, Callable[[Confusion], float | None]] = {
    "relevance": relevance,
    "coverage": coverage,
    "effectiveness": effectiveness,
    "intrusion": intrusion,
    "balance": balance,
    "frequency": frequency,
}


def bootstrap_ci(
    clusters: Sequence[Confusion],
    metric: Callable[[Confusion], float | None],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[float, float] | None:
    """The 95% interval of ``metric`` over entity-level resamples (module docstring)."""
    if len(clusters) < 2:
        return None
    rng = random.Random(seed)
    values = []
    n = len(clusters)
    for _ in range(resamples):
        pooled = Confusion()
        for _ in range(n):
            pooled += clusters[rng.randrange(n)]
        value = metric(pooled)
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    low = values[int(0.025 * (len(values) - 1))]
    high = values[int(round(0.975 * (len(values) - 1)))]
    return (low, high)


def summary(clusters: Sequence[Confusion], *, resamples: int = RESAMPLES) -> dict[str, Any]:
    """Pooled counts, every metric with its interval, and the other benchmarks' rates."""
    pooled = Confusion()
    for c in clusters:
        pooled += c
    out: dict[str, Any] = {}
    for name, function in METRIC_FUNCTIONS.items():
        value = function(pooled)
        out[name] = None if value is None else round(value, 4)
        ci = bootstrap_ci(clusters, function, resamples=resamples) if value is not None else None
        out[f"{name}_ci"] = None if ci is None else [round(ci[0], 4), round(ci[1], 4)]
    for name, function in (
        ("fp_share_of_interventions", fp_share_of_interventions),
        ("fp_share_of_points", fp_share_of_points),
    ):
        value = function(pooled)
        out[name] = None if value is None else round(value, 4)
    out.update({f.name: getattr(pooled, f.name) for f in fields(pooled)})
    out["lag_min"] = round(pooled.lag_min, 1)
    out.update(interventions=pooled.tp + pooled.fp, positives=pooled.positives)
    out["proactivebench"] = proactivebench(pooled)
    out["timeliness"] = timeliness(pooled)
    return out


def timeliness(c: Confusion) -> dict[str, Any]:
    """When the caught opportunities were caught: the share of true positives at the labelled
    point itself (its first actionable window) and their mean delay after it in minutes; None
    without a true positive. A match is never early: an opportunity opens at its label."""
    if not c.tp:
        return {"on_time_share": None, "mean_lag_min": None}
    return {"on_time_share": round(c.on_time / c.tp, 4), "mean_lag_min": round(c.lag_min / c.tp, 1)}


def proactivebench(c: Confusion) -> dict[str, Any]:
    """The same outcomes in ProactiveBench's terms (Lu et al., ICLR 2025; REFERENCE.md):
    correct detections, missed needs, false alarms and non-responses, with its precision,
    recall, F1 and false-alarm rate FP/(TP+FP) (ProactMem's intrusion is FP/(FP+TN))."""

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return {
        "correct_detections": c.tp,
        "missed_needs": c.fn,
        "false_alarms": c.fp,
        "non_responses": c.tn,
        "precision": rounded(relevance(c)),
        "recall": rounded(coverage(c)),
        "f1": rounded(effectiveness(c)),
        "false_alarm_rate": rounded(fp_share_of_interventions(c)),
    }
