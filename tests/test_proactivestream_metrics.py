"""ProactiveStream scoring: the matching rule, the paper's six metrics, the other benchmarks'
false-alarm rates and the entity-level cluster bootstrap (benchmark/metrics.py)."""

from __future__ import annotations

import pytest

from benchmark.labelers.base import Label
from benchmark.metrics import (
    Confusion,
    balance,
    bootstrap_ci,
    confusion,
    coverage,
    effectiveness,
    fp_share_of_interventions,
    fp_share_of_points,
    frequency,
    intrusion,
    relevance,
    score,
    summary,
)
from benchmark.replay import MethodDecision


def test_metrics_against_a_hand_computed_confusion_matrix() -> None:
    c = Confusion(tp=6, fp=4, fn=2, tn=88)
    assert relevance(c) == pytest.approx(6 / 10)
    assert coverage(c) == pytest.approx(6 / 8)
    assert effectiveness(c) == pytest.approx(12 / (12 + 4 + 2))
    assert intrusion(c) == pytest.approx(4 / 92)
    assert balance(c) == pytest.approx((6 / 8 + 88 / 92) / 2)
    assert frequency(c) == pytest.approx(10 / 8)
    # Other benchmarks' false-alarm rates, named apart from intrusion.
    assert fp_share_of_interventions(c) == pytest.approx(4 / 10)
    assert fp_share_of_points(c) == pytest.approx(4 / 100)


def test_zero_denominators_are_not_applicable_never_zero() -> None:
    nothing = Confusion()
    assert all(
        f(nothing) is None
        for f in (relevance, coverage, effectiveness, intrusion, balance, frequency)
    )
    no_positives = Confusion(fp=3, tn=7)
    assert coverage(no_positives) is None and effectiveness(no_positives) is None
    assert frequency(no_positives) is None and balance(no_positives) is None
    assert relevance(no_positives) == 0.0 and intrusion(no_positives) == pytest.approx(0.3)
    never_intervened = Confusion(fn=2, tn=8)
    assert relevance(never_intervened) is None
    assert coverage(never_intervened) == 0.0 and effectiveness(never_intervened) == 0.0
    assert frequency(never_intervened) == 0.0 and intrusion(never_intervened) == 0.0
    all_positive = Confusion(tp=2, fn=1)
    assert intrusion(all_positive) is None and balance(all_positive) is None


def _d(action: str, service: str | None = None) -> MethodDecision:
    return MethodDecision("p", action, service)


def test_matching_rule_needs_the_labelled_service() -> None:
    wanted = Label("p", "intervene", "check_device")
    assert score(wanted, _d("intervene", "check_device")) == Confusion(tp=1)
    wrong = score(wanted, _d("intervene", "wellbeing_check"))
    assert wrong == Confusion(fp=1, fn=1, wrong_service=1)
    assert wrong.points == 1 and wrong.positives == 1
    assert score(wanted, _d("abstain")) == Confusion(fn=1)
    # A label without a service (a person left it out) is matched by any intervention.
    assert score(Label("p", "intervene"), _d("intervene", "wellbeing_check")) == Confusion(tp=1)
    negative = Label("p", "abstain")
    assert score(negative, _d("intervene", "check_device")) == Confusion(fp=1)
    assert score(negative, _d("abstain")) == Confusion(tn=1)


def test_invalid_and_unlabelled_points_are_counted_never_dropped() -> None:
    labels = {"a": Label("a", "intervene", "x"), "b": Label("b", "abstain")}
    decisions = [
        MethodDecision("a", "invalid", error="ValueError: boom"),
        MethodDecision("b", "invalid", error="ValueError: boom"),
        MethodDecision("c", "abstain"),
    ]
    assert confusion(labels, decisions) == Confusion(fn=1, tn=1, invalid=2, unlabelled=1)


def test_bootstrap_resamples_entities_with_a_fixed_seed() -> None:
    streams = [Confusion(tp=5, fp=5, fn=0, tn=90), Confusion(tp=1, fp=9, fn=4, tn=86)]
    ci = bootstrap_ci(streams, effectiveness, resamples=500)
    assert ci == bootstrap_ci(streams, effectiveness, resamples=500)  # reproducible
    assert ci is not None
    low, high = ci
    # Resampling whole streams spans the two streams' own values (pooled in between).
    assert low == pytest.approx(effectiveness(streams[1]))
    assert high == pytest.approx(effectiveness(streams[0]))
    assert bootstrap_ci(streams[:1], effectiveness) is None  # one stream: no interval


def test_summary_reports_every_metric_its_interval_and_the_counts() -> None:
    figures = summary([Confusion(tp=2, fp=1, fn=1, tn=6), Confusion(tp=1, fp=0, fn=1, tn=8)])
    assert figures["effectiveness"] == round(6 / (6 + 1 + 2), 4)
    assert figures["effectiveness_ci"] is not None
    assert (figures["tp"], figures["fp"], figures["fn"], figures["tn"]) == (3, 1, 2, 14)
    assert figures["positives"] == 5 and figures["points"] == 20
    assert figures["interventions"] == 4
    assert set(figures) >= {
        "relevance",
        "coverage",
        "intrusion",
        "balance",
        "frequency",
        "fp_share_of_interventions",
        "fp_share_of_points",
    }
