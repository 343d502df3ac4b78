"""A labeler held against blind annotators: κ, AC1, precision and recall, disagreements."""

from __future__ import annotations

import json

import pytest

from benchmark.agreement import cohen_kappa, gwet_ac1, validity
from benchmark.labelers.base import Label


def test_ac1_stays_readable_where_kappa_falls_to_zero_on_a_rare_category() -> None:
    # 10 points: one rater flags one, the other none. Raw agreement 0.9; under κ's model
    # chance agreement is also 0.9, so κ is 0 (the prevalence paradox).
    first, second = ["y"] + ["n"] * 9, ["n"] * 10
    assert cohen_kappa(first, second) == pytest.approx(0.0)
    # AC1: π_y = 1/20, π_n = 19/20; chance = 2·(0.05·0.95)/1 = 0.095.
    assert gwet_ac1(first, second) == pytest.approx((0.9 - 0.095) / (1 - 0.095))
    assert gwet_ac1(["n"] * 4, ["n"] * 4) == 1.0  # one category, both raters: perfect
    assert gwet_ac1([], []) is None
    assert gwet_ac1(["y", "n"], ["n", "y"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="same items"):
        gwet_ac1(["y"], ["y", "n"])


def _file_label(point: str, action: str, annotators: list[str], note: str = "") -> Label:
    provenance = {"annotators": annotators, "adjudicator": "cy"} | ({"note": note} if note else {})
    service = "check_device" if action == "intervene" else None
    return Label(point, action, service, reason=json.dumps(provenance), source="jsonl:study")


def test_validity_holds_a_labeler_against_adjudicated_labels_and_says_where_they_differ() -> None:
    labeler = {
        "p1": Label("p1", "intervene", "check_device", reason="door open 3 h; usually 5 min"),
        "p2": Label("p2", "intervene", "check_in_routine", reason="Dress not begun by 10:00"),
        "p3": Label("p3", "abstain"),
        "p4": Label("p4", "abstain"),
        "p5": Label("p5", "abstain"),  # the annotators never saw it: not compared
    }
    trio = ["ana", "ben", "cy"]
    annotated = {
        "p1": _file_label("p1", "intervene", trio),
        "p2": _file_label("p2", "abstain", trio, "up, in the kitchen and fed"),
        "p3": _file_label("p3", "intervene", ["ana", "ben", "cy", "ana"]),
        "p4": _file_label("p4", "abstain", trio),
    }
    found = validity(labeler, annotated)
    assert found["points"] == 4 and found["annotators"] == 3
    assert (found["labeler_positives"], found["annotator_positives"], found["both_positive"]) == (
        2,
        2,
        1,
    )
    assert found["same_service"] == 1
    assert found["labeler_precision_vs_annotators"] == 0.5
    assert found["labeler_recall_vs_annotators"] == 0.5
    assert found["raw_agreement"] == 0.5 and found["cohen_kappa"] == 0.0
    assert found["disagreement_count"] == 2
    [first, second] = found["disagreements"]
    assert first["point"] == "p2" and first["labeler_reason"] == "Dress not begun by 10:00"
    assert "up, in the kitchen and fed" in first["annotators_note"]
    assert second["point"] == "p3" and second["annotators"] == "intervene"
    # Nothing in common: every figure is undefined, never a made-up 0.
    empty = validity(labeler, {})
    assert empty["points"] == 0 and empty["annotators"] == 0
    assert empty["raw_agreement"] is None and empty["labeler_precision_vs_annotators"] is None
