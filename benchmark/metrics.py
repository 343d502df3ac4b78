"""ProactiveStream's scoring: labels joined after the decisions, the paper's six metrics, and
confidence intervals by an entity-level cluster bootstrap (ProactMem §4.3, §5).

**Matching rule.** Every decision point is scored once per method against its reference label:

* label *intervene* with service ``s``: an intervention naming ``s`` is a true positive (TP);
  an intervention naming another service is a miss *and* a false alarm (one FN, one FP, and
  counted as ``wrong_service``); an abstention is a false negative (FN). A label without a
  service (a person may leave it out) is matched by any intervention at that point.
* label *abstain*: an intervention is a false positive (FP), an abstention a true negative
  (TN).
* an ``invalid`` decision (the method failed at that point) is scored as an abstention and
  counted in ``invalid``; a point without a label is not scored and counted in ``unlabelled``.

**Metrics**, exactly as the paper defines them, from pooled counts: relevance TP/(TP+FP),
coverage TP/(TP+FN), effectiveness 2TP/(2TP+FP+FN), intrusion FP/(FP+TN), balance
½·(TP/(TP+FN) + TN/(TN+FP)), frequency (TP+FP)/(TP+FN) (interventions per opportunity, shown
as ×). Each is None ("N/A") where its denominator is zero; coverage, effectiveness, balance and
frequency are N/A without positives. Other benchmarks' false-alarm rates are reported under
their own names, never as intrusion: ``fp_share_of_interventions`` FP/(TP+FP) (ProactiveBench)
and ``fp_share_of_points`` FP/N (ContextAgent).

**Intervals.** 95% intervals resample whole streams (entities) with replacement, pooling their
counts, :data:`RESAMPLES` times with a fixed seed, and take the 2.5th and 97.5th percentiles of
each metric over the resamples where it is defined; a scope with one stream has no interval.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
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

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @property
    def positives(self) -> int:
        return self.tp + self.fn  # each positive point is one TP or one FN

    @property
    def points(self) -> int:
        # A wrong-service point counts as one FP and one FN.
        return self.tp + self.fp + self.fn + self.tn - self.wrong_service


def score(label: Label | None, decision: MethodDecision) -> Confusion:
    """One point's contribution under the matching rule (module docstring)."""
    if label is None:
        return Confusion(unlabelled=1)
    invalid = int(decision.action == "invalid")
    intervened = decision.action == "intervene"
    if label.positive:
        if not intervened:
            return Confusion(fn=1, invalid=invalid)
        if label.service is None or decision.service == label.service:
            return Confusion(tp=1)
        return Confusion(fp=1, fn=1, wrong_service=1)
    return Confusion(fp=1) if intervened else Confusion(tn=1, invalid=invalid)


def confusion(labels: Mapping[str, Label], decisions: Sequence[MethodDecision]) -> Confusion:
    total = Confusion()
    for decision in decisions:
        total += score(labels.get(decision.point), decision)
    return total


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
    out.update(
        tp=pooled.tp,
        fp=pooled.fp,
        fn=pooled.fn,
        tn=pooled.tn,
        invalid=pooled.invalid,
        wrong_service=pooled.wrong_service,
        unlabelled=pooled.unlabelled,
        interventions=pooled.tp + pooled.fp,
        positives=pooled.positives,
        points=pooled.points,
    )
    return out
