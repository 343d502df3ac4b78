"""ProactiveStream scoring: the matching rule, the paper's six metrics, the other benchmarks'
false-alarm rates and the entity-level cluster bootstrap (benchmark/metrics.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from benchmark.labelers.base import Label
from benchmark.metrics import (
    Confusion,
    balance,
    bootstrap_ci,
    coverage,
    effectiveness,
    fp_share_of_interventions,
    fp_share_of_points,
    frequency,
    intrusion,
    relevance,
    score_stream,
    summary,
)
from benchmark.replay import MethodDecision


def test_metrics_against_a_hand_computed_confusion_matrix() -> None:
    c = Confusion(tp=6, fp=4, fn=2, tn=88, points=100)
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


T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)


def _points(n: int) -> list[tuple[str, datetime]]:
    return [(f"p{i}", T0 + timedelta(minutes=50 * i)) for i in range(n)]


def _d(point: str, action: str, service: str | None = None) -> MethodDecision:
    return MethodDecision(point, action, service)


def _run(
    labels: dict[str, Label], decisions: list[MethodDecision], n: int = 6
) -> tuple[Confusion, list[tuple[str, str]]]:
    c, found = score_stream(_points(n), labels, decisions)
    return c, [(o.point, o.outcome) for o in found]


def _negative(n: int, **positive: Label) -> dict[str, Label]:
    labels = {f"p{i}": Label(f"p{i}", "abstain") for i in range(n)}
    labels.update(positive)
    return labels


def test_an_intervention_naming_the_labelled_service_at_its_window_is_a_true_positive() -> None:
    labels = _negative(6, p1=Label("p1", "intervene", "check_device"))
    c, found = _run(labels, [_d("p1", "intervene", "check_device")])
    assert (c.tp, c.fp, c.fn, c.tn, c.points, c.positives) == (1, 0, 0, 5, 6, 1)
    assert found == [("p1", "TP")]


def test_a_later_intervention_matches_while_the_label_is_valid_and_only_once() -> None:
    until = T0 + timedelta(minutes=100)  # valid at p1 and p2
    labels = _negative(6, p1=Label("p1", "intervene", "check_device", valid_until=until))
    late = [_d("p2", "intervene", "check_device"), _d("p3", "intervene", "check_device")]
    c, found = _run(labels, late)
    # p2 serves the opportunity; p3 repeats it (redundant): a false positive.
    assert (c.tp, c.fp, c.fn, c.tn) == (1, 1, 0, 3)
    assert found == [("p2", "TP"), ("p3", "FP")]
    too_late = [_d("p3", "intervene", "check_device")]
    c, found = _run(labels, too_late)
    assert (c.tp, c.fp, c.fn) == (0, 1, 1) and found == [("p1", "FN"), ("p3", "FP")]


def test_a_label_without_a_validity_span_matches_at_its_own_point_only() -> None:
    labels = _negative(4, p1=Label("p1", "intervene", "check_device"))
    c, found = _run(labels, [_d("p2", "intervene", "check_device")], 4)
    assert (c.tp, c.fp, c.fn) == (0, 1, 1) and found == [("p1", "FN"), ("p2", "FP")]


def test_the_wrong_service_is_a_false_alarm_and_the_opportunity_stays_open() -> None:
    until = T0 + timedelta(minutes=100)
    labels = _negative(6, p1=Label("p1", "intervene", "check_device", valid_until=until))
    c, found = _run(labels, [_d("p1", "intervene", "wellbeing_check")])
    assert (c.tp, c.fp, c.fn, c.wrong_service) == (0, 1, 1, 1)
    assert found == [("p1", "FP"), ("p1", "FN")]
    c, _ = _run(
        labels, [_d("p1", "intervene", "wellbeing_check"), _d("p2", "intervene", "check_device")]
    )
    assert (c.tp, c.fp, c.fn, c.wrong_service) == (1, 1, 0, 1)


def test_a_label_without_a_service_is_matched_by_any_intervention() -> None:
    labels = _negative(3, p1=Label("p1", "intervene"))
    c, _ = _run(labels, [_d("p1", "intervene", "wellbeing_check")], 3)
    assert (c.tp, c.fp, c.fn) == (1, 0, 0)


def test_invalid_and_unlabelled_points_are_counted_never_dropped() -> None:
    labels = {"p0": Label("p0", "intervene", "x"), "p1": Label("p1", "abstain")}
    decisions = [
        MethodDecision("p0", "invalid", error="ValueError: boom"),
        MethodDecision("p1", "invalid", error="ValueError: boom"),
        MethodDecision("p2", "abstain"),
    ]
    c, found = _run(labels, decisions, 3)
    assert c == Confusion(fn=1, tn=1, invalid=2, unlabelled=1, points=2)
    assert found == [("p0", "FN")]


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
    figures = summary(
        [Confusion(tp=2, fp=1, fn=1, tn=6, points=10), Confusion(tp=1, fp=0, fn=1, tn=8, points=10)]
    )
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
    # ProactiveBench's outcome names and rates beside ours (REFERENCE.md): FAR is FP/(TP+FP).
    assert figures["proactivebench"] == {
        "correct_detections": 3,
        "missed_needs": 2,
        "false_alarms": 1,
        "non_responses": 14,
        "precision": 0.75,
        "recall": 0.6,
        "f1": round(6 / 9, 4),
        "false_alarm_rate": 0.25,
    }


def test_timeliness_counts_catches_at_the_labelled_point_and_the_delay_of_the_others() -> None:
    until = T0 + timedelta(minutes=200)
    labels = _negative(
        6,
        p1=Label("p1", "intervene", "check_device", valid_until=until),
        p4=Label("p4", "intervene", "wellbeing_check"),
    )
    # p1's opportunity caught two points (100 minutes) late, p4's at its own point.
    decisions = [_d("p3", "intervene", "check_device"), _d("p4", "intervene", "wellbeing_check")]
    c, found = _run(labels, decisions)
    assert (c.tp, c.on_time, c.lag_min) == (2, 1, 100.0)
    assert summary([c])["timeliness"] == {"on_time_share": 0.5, "mean_lag_min": 50.0}
    assert summary([Confusion(fn=2, tn=3)])["timeliness"] == {
        "on_time_share": None,
        "mean_lag_min": None,
    }


def test_the_bench_compares_proactmem_with_event_only_and_names_the_ablations_that_earn() -> None:
    from perf.proactivestream import memory_against_baseline

    def m(eff: float | None, intr: float | None) -> dict[str, float | None]:
        return {"effectiveness": eff, "intrusion": intr}

    scopes = {
        "home": {
            "proactmem": m(0.12, 0.05),
            "event_only": m(0.06, 0.14),
            "no_trajectory": m(0.16, 0.13),  # more effective, but more intrusive: earns
            "no_replay_gate": m(0.10, 0.05),  # less effective: earns
            "no_validation": m(0.12, 0.05),  # identical: does not
        },
        "code": {"proactmem": m(0.0, 0.0), "event_only": m(0.0, 0.3)},
        "desktop": {"event_only": m(0.2, 0.1)},  # no proactmem run: left out
    }
    found = memory_against_baseline(scopes)
    assert set(found) == {"home", "code"}
    assert found["home"]["ratio_x"] == 2.0
    assert found["home"]["ablations_earning"] == ["no_trajectory", "no_replay_gate"]
    assert found["code"]["ratio_x"] is None  # no baseline effectiveness to divide by


def test_the_bench_can_read_the_fitbit_period_without_its_minute_files() -> None:
    from perf.proactivestream import IMPORTS, imports
    from perf.real import DATA

    assert imports("all") == IMPORTS
    hourly = {fmt: (relative, key) for fmt, relative, key, _ in imports("hourly")}
    assert hourly["fitbit"] == ("fitbit-fitabase/period-2016-04-12", "fitbit")
    assert [i for i in imports("hourly") if i[0] != "fitbit"] == [
        i for i in IMPORTS if i[0] != "fitbit"
    ]
    if DATA.is_dir():  # the folder holds the period's files and no minute file
        names = {p.name for p in (DATA / hourly["fitbit"][0]).iterdir()}
        assert "hourlySteps_merged.csv" in names
        assert not any("minute" in name for name in names)
