"""Agreement coefficients: hand-computed values, their undefined cases, and the written-out
κ checked against statsmodels' independent implementation; α is the krippendorff package's,
checked on Krippendorff's own worked example."""

from __future__ import annotations

import math
import random

import pytest
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from aframes_web.annotation import agreement


def test_cohen_kappa_by_hand() -> None:
    # 10 items: both say yes on 4, both no on 3, disagree on 3 (2 yes/no, 1 no/yes).
    a = ["y"] * 4 + ["n"] * 3 + ["y", "y", "n"]
    b = ["y"] * 4 + ["n"] * 3 + ["n", "n", "y"]
    # observed 0.7; a: 6 y 4 n; b: 5 y 5 n; expected 0.6*0.5 + 0.4*0.5 = 0.5
    assert agreement.cohen_kappa(a, b) == pytest.approx((0.7 - 0.5) / 0.5)


def test_kappa_is_undefined_when_every_label_is_one_category() -> None:
    assert agreement.cohen_kappa(["abstain"] * 5, ["abstain"] * 5) is None
    assert agreement.fleiss_kappa([["abstain"] * 3] * 4) is None
    assert agreement.krippendorff_alpha([(i, r, "abstain") for i in range(3) for r in "ab"]) is None
    assert agreement.cohen_kappa([], []) is None
    assert agreement.fleiss_kappa([]) is None


def test_kappa_is_negative_for_systematic_disagreement() -> None:
    assert agreement.cohen_kappa(["y", "n"] * 5, ["n", "y"] * 5) == pytest.approx(-1.0)


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="same items"):
        agreement.cohen_kappa(["y"], ["y", "n"])
    with pytest.raises(ValueError, match="same number"):
        agreement.fleiss_kappa([["y", "n"], ["y"]])


@pytest.mark.parametrize("seed", range(5))
def test_cohen_kappa_matches_statsmodels(seed: int) -> None:
    rng = random.Random(seed)
    cats = ["abstain", "intervene:a", "intervene:b"]
    a = [rng.choice(cats) for _ in range(60)]
    b = [x if rng.random() < 0.6 else rng.choice(cats) for x in a]
    table = [
        [sum(1 for x, y in zip(a, b, strict=True) if x == p and y == q) for q in cats] for p in cats
    ]
    expected = cohens_kappa(table, return_results=False)
    assert agreement.cohen_kappa(a, b) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_kappa_matches_statsmodels(seed: int) -> None:
    rng = random.Random(seed)
    cats = ["abstain", "intervene:a", "intervene:b"]
    items = []
    for _ in range(40):
        truth = rng.choice(cats)
        items.append([truth if rng.random() < 0.7 else rng.choice(cats) for _ in range(3)])
    codes = [[cats.index(c) for c in row] for row in items]
    table, _ = aggregate_raters(codes, n_cat=len(cats))
    assert agreement.fleiss_kappa(items) == pytest.approx(fleiss_kappa(table, method="fleiss"))


def test_alpha_on_krippendorffs_worked_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the nominal example
    # with missing values: alpha = 0.743.
    data = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    triples = [
        (item, rater, str(value))
        for rater, values in data.items()
        for item, value in enumerate(values)
        if value is not None
    ]
    assert agreement.krippendorff_alpha(triples) == pytest.approx(0.743, abs=5e-4)


def test_the_report_pairs_streams_finals_and_confusion() -> None:
    triples = [
        (1, "ana", "abstain"), (1, "ben", "abstain"), (1, "cy", "abstain"),
        (2, "ana", "intervene:x"), (2, "ben", "abstain"), (2, "cy", "intervene:x"),
        (3, "ana", "abstain"), (3, "ben", "abstain"),
        (4, "ana", "intervene:x"), (4, "ben", "intervene:x"), (4, "cy", "intervene:x"),
    ]  # fmt: skip
    stream_of = {1: "s1", 2: "s1", 3: "s2", 4: "s2"}
    found = agreement.report(
        triples, complement=3, stream_of=stream_of, finals={2: "intervene:x", 3: "abstain"}
    )
    assert found.overall.items == 4 and found.overall.raw == pytest.approx(3 / 4)
    assert found.overall.fleiss_items == 3
    assert found.raters == ["ana", "ben", "cy"]
    pairs = {(p.first, p.second): p for p in found.pairs}
    assert pairs[("ana", "cy")].items == 3 and pairs[("ana", "cy")].agreement == 1.0
    assert pairs[("ana", "cy")].kappa == pytest.approx(1.0)
    assert pairs[("ana", "ben")].agreement == pytest.approx(3 / 4)
    # AC1: categories 3:1 over both raters, chance 2 · 0.75 · 0.25 = 0.375, (0.5 - 0.375) / 0.625.
    assert found.against_final["ben"] == {"items": 2, "agreement": 0.5, "kappa": 0.0, "ac1": 0.2}
    assert set(found.streams) == {"s1", "s2"}
    assert found.streams["s2"].raw == 1.0
    # 3 + 3 + 1 + 3 = 10 pairs, counted in both orders; 2 disagreeing pairs (item 2).
    cells = found.confusion
    assert sum(n for row in cells.values() for n in row.values()) == 20
    assert cells["abstain"]["intervene:x"] == cells["intervene:x"]["abstain"] == 2
    assert not math.isnan(found.overall.alpha or 0.0)


def test_category_compares_the_service_of_an_intervention() -> None:
    assert agreement.category("abstain", "") == "abstain"
    assert agreement.category("intervene", "a") != agreement.category("intervene", "b")
