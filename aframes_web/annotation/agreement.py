"""Agreement between annotators before adjudication: Cohen's κ per pair, Fleiss' κ,
Krippendorff's α (nominal), raw agreement, each annotator against the final labels, and the
confusion between annotators.

Pure functions over ``(item, rater, category)`` triples; nothing here reads the database. A
category is what adjudication compares: ``abstain``, or ``intervene`` with its service
(``intervene:check_device``), so two interventions for different services disagree.

Coefficients are ``None`` where they are undefined, never a made-up 0 or 1: Cohen's and
Fleiss' κ when chance agreement is 1 (every label in one category: there is nothing to agree
beyond chance), Fleiss' κ without an item that has the full complement of raters, α without an
item labelled twice. Cohen's κ and Gwet's AC1 live with the benchmark (``benchmark/agreement.py``,
which holds a labeler against annotators with them); Fleiss' κ is written out (checked in the
tests against statsmodels); α is the ``krippendorff`` package's.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import krippendorff
import numpy as np

from benchmark.agreement import cohen_kappa, gwet_ac1, raw_agreement

__all__ = ["cohen_kappa", "fleiss_kappa", "gwet_ac1", "krippendorff_alpha", "report", "scores"]

Triple = tuple[Hashable, str, str]  # (item, rater, category)


def fleiss_kappa(items: Iterable[Sequence[str]]) -> float | None:
    """Fleiss' κ over items that each carry the same number (≥ 2) of labels; None if
    undefined (no items, or every label in one category)."""
    rows = [list(labels) for labels in items]
    if not rows:
        return None
    raters = len(rows[0])
    if raters < 2 or any(len(r) != raters for r in rows):
        raise ValueError("Fleiss' kappa needs the same number (at least 2) of labels per item")
    total = Counter()
    agreement = 0.0
    for labels in rows:
        counts = Counter(labels)
        total.update(counts)
        agreement += (sum(c * c for c in counts.values()) - raters) / (raters * (raters - 1))
    observed = agreement / len(rows)
    expected = sum((c / (len(rows) * raters)) ** 2 for c in total.values())
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def krippendorff_alpha(triples: Iterable[Triple]) -> float | None:
    """Krippendorff's α (nominal) with missing labels allowed; None if undefined."""

    rows = list(triples)
    items = sorted({i for i, _, _ in rows}, key=repr)
    raters = sorted({r for _, r, _ in rows})
    categories = sorted({c for _, _, c in rows})
    per_item = Counter(i for i, _, _ in rows)
    if len(categories) < 2 or not any(n >= 2 for n in per_item.values()):
        return None
    column = {item: n for n, item in enumerate(items)}
    line = {rater: n for n, rater in enumerate(raters)}
    code = {c: float(n) for n, c in enumerate(categories)}
    data = np.full((len(raters), len(items)), np.nan)
    for item, rater, category in rows:
        data[line[rater], column[item]] = code[category]
    value = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    items: int  # labelled by both
    agreement: float | None  # share of those with the same category
    kappa: float | None
    ac1: float | None = None  # Gwet's AC1: chance-corrected, stable when one category dominates


@dataclass(frozen=True)
class Scores:
    """The agreement of one set of labels (a project or one stream)."""

    items: int  # items with at least two labels
    labels: int
    raw: float | None  # share of those items on which every label agrees
    fleiss: float | None
    fleiss_items: int  # items with the full complement of labels (what Fleiss' κ reads)
    alpha: float | None


@dataclass(frozen=True)
class Report:
    overall: Scores
    streams: dict[str, Scores]
    pairs: list[Pair]
    raters: list[str]
    against_final: dict[str, dict[str, Any]]  # rater -> {items, agreement, kappa}
    categories: list[str]
    # Pairs of labels on one item, both orders counted (cells sum to twice the pairs).
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)


def scores(triples: Sequence[Triple], complement: int) -> Scores:
    by_item: dict[Hashable, list[str]] = defaultdict(list)
    for item, _, category in triples:
        by_item[item].append(category)
    multiple = [labels for labels in by_item.values() if len(labels) >= 2]
    full = [labels for labels in by_item.values() if len(labels) == complement]
    raw = sum(len(set(labels)) == 1 for labels in multiple) / len(multiple) if multiple else None
    return Scores(
        items=len(multiple),
        labels=len(triples),
        raw=raw,
        fleiss=fleiss_kappa(full) if complement >= 2 else None,
        fleiss_items=len(full),
        alpha=krippendorff_alpha(triples),
    )


def report(
    triples: Sequence[Triple],
    *,
    complement: int,
    stream_of: Mapping[Hashable, str],
    finals: Mapping[Hashable, str],
) -> Report:
    """Every figure of the agreement page for ``triples``; ``stream_of`` names each item's
    stream, ``finals`` holds the final category of items that have one."""
    by_stream: dict[str, list[Triple]] = defaultdict(list)
    by_rater: dict[str, dict[Hashable, str]] = defaultdict(dict)
    for item, rater, category in triples:
        by_stream[stream_of[item]].append((item, rater, category))
        by_rater[rater][item] = category
    raters = sorted(by_rater)
    categories = sorted({c for _, _, c in triples})
    pairs = []
    confusion: dict[str, dict[str, int]] = {a: dict.fromkeys(categories, 0) for a in categories}
    for first, second in combinations(raters, 2):
        shared = sorted(set(by_rater[first]) & set(by_rater[second]), key=repr)
        a = [by_rater[first][i] for i in shared]
        b = [by_rater[second][i] for i in shared]
        for x, y in zip(a, b, strict=True):
            # Both orders (Krippendorff's coincidence matrix): a pair's order means nothing.
            confusion[x][y] += 1
            confusion[y][x] += 1
        pairs.append(
            Pair(
                first,
                second,
                len(shared),
                raw_agreement(a, b),
                cohen_kappa(a, b),
                gwet_ac1(a, b),
            )
        )
    against_final = {}
    for rater in raters:
        shared = sorted(set(by_rater[rater]) & set(finals), key=repr)
        mine = [by_rater[rater][i] for i in shared]
        final = [finals[i] for i in shared]
        against_final[rater] = {
            "items": len(shared),
            "agreement": raw_agreement(mine, final),
            "kappa": cohen_kappa(mine, final),
            "ac1": gwet_ac1(mine, final),
        }
    return Report(
        overall=scores(triples, complement),
        streams={s: scores(rows, complement) for s, rows in sorted(by_stream.items())},
        pairs=pairs,
        raters=raters,
        against_final=against_final,
        categories=categories,
        confusion=confusion,
    )


def category(decision: str, service: str) -> str:
    """What two labels are compared on: the decision, and an intervention's service."""
    return f"intervene:{service}" if decision == "intervene" else decision
