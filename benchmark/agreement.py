"""Two raters over the same items, and a labeler held against adjudicated annotator labels.

Pure functions. :func:`cohen_kappa` and :func:`gwet_ac1` are chance-corrected agreement of two
raters; :func:`validity` is the labels issue's validity study in numbers: how a reference
labeler's labels agree with the adjudicated labels of blind annotators on the same decision
points (raw agreement, Cohen's κ, Gwet's AC1), its precision and recall against them, and each
disagreement in words.

Why AC1 beside κ: when almost every point is ``abstain`` (a proactive assistant is rarely
needed), chance agreement under κ's model is close to 1 and κ falls to 0 or below although the
raters agree on nearly everything (the prevalence paradox; Feinstein and Cicchetti, J Clin
Epidemiol 43(6), 1990). Gwet's AC1 (Gwet, Br J Math Stat Psychol 61(1), 2008) models chance
agreement as agreement on the items that are hard to rate, and stays interpretable at extreme
prevalence. Both are written out here (a dozen lines each, checked in the tests by hand):
the one PyPI package for AC1 (``irrCAC``) brings pandas for two formulas.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from benchmark.labelers.base import Label


def raw_agreement(first: Sequence[str], second: Sequence[str]) -> float | None:
    """The share of items on which two raters' labels (paired sequences) agree; None
    without items."""
    if len(first) != len(second):
        raise ValueError("agreement needs both raters' labels of the same items")
    return sum(a == b for a, b in zip(first, second, strict=True)) / len(first) if first else None


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's κ of two raters over the same items (paired sequences); None if undefined
    (no items, or chance agreement 1: every label in one category)."""
    if len(first) != len(second):
        raise ValueError("Cohen's kappa needs both raters' labels of the same items")
    observed = raw_agreement(first, second)
    if observed is None:
        return None
    n = len(first)
    left, right = Counter(first), Counter(second)
    expected = sum(left[c] * right[c] for c in left) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def gwet_ac1(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Gwet's AC1 of two raters over the same items; None without items. With ``Q`` the
    categories used, π_q the mean share of category q over both raters, chance agreement is
    Σ π_q (1 − π_q) / (Q − 1); one category used by both is perfect agreement (1)."""
    if len(first) != len(second):
        raise ValueError("Gwet's AC1 needs both raters' labels of the same items")
    observed = raw_agreement(first, second)
    if observed is None:
        return None
    n = len(first)
    counts = Counter(first) + Counter(second)
    if len(counts) < 2:
        return 1.0
    expected = sum((c / (2 * n)) * (1 - c / (2 * n)) for c in counts.values()) / (len(counts) - 1)
    return (observed - expected) / (1 - expected)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def validity(
    labeler: Mapping[str, Label], annotated: Mapping[str, Label], *, shown: int = 20
) -> dict[str, Any]:
    """A labeler's labels held against adjudicated annotator labels on the points both have.

    Agreement is on the decision (intervene or abstain); ``same_service`` counts the points
    both label intervene that name one service. Precision: the share of the labeler's
    interventions the annotators also flagged; recall: the share of the annotators' that the
    labeler flagged. ``annotators``: the fewest distinct annotators behind any point (from
    each label's provenance; 0 where it names none). The first ``shown`` disagreements are
    listed with both sides in words.
    """
    points = sorted(set(labeler) & set(annotated))
    ours = [labeler[p].action for p in points]
    theirs = [annotated[p].action for p in points]
    both = [p for p in points if labeler[p].positive and annotated[p].positive]
    flagged = sum(labeler[p].positive for p in points)
    wanted = sum(annotated[p].positive for p in points)
    differ = [p for p in points if labeler[p].positive != annotated[p].positive]
    return {
        "points": len(points),
        "annotators": min((_annotators(annotated[p]) for p in points), default=0),
        "labeler_positives": flagged,
        "annotator_positives": wanted,
        "both_positive": len(both),
        "same_service": sum(labeler[p].service == annotated[p].service for p in both),
        "raw_agreement": _rounded(raw_agreement(ours, theirs)),
        "cohen_kappa": _rounded(cohen_kappa(ours, theirs)),
        "gwet_ac1": _rounded(gwet_ac1(ours, theirs)),
        "labeler_precision_vs_annotators": _rounded(len(both) / flagged) if flagged else None,
        "labeler_recall_vs_annotators": _rounded(len(both) / wanted) if wanted else None,
        "disagreements": [
            {
                "point": p,
                "labeler": labeler[p].action,
                "labeler_reason": labeler[p].reason,
                "annotators": annotated[p].action,
                "annotators_service": annotated[p].service,
                "annotators_note": annotated[p].reason,
            }
            for p in differ[:shown]
        ],
        "disagreement_count": len(differ),
    }


def _annotators(label: Label) -> int:
    """How many distinct annotators a file label's provenance names (its ``reason`` holds
    the provenance as JSON: ``benchmark/reference.py``)."""
    try:
        provenance = json.loads(label.reason) if label.reason else {}
    except ValueError:
        return 0
    names = provenance.get("annotators") if isinstance(provenance, dict) else None
    return len(set(names)) if isinstance(names, list) else 0


def study_sample(
    labels: Mapping[str, Mapping[str, Label]],
    *,
    seed: int,
    positives_max: int | None = None,
    abstains: int | None = None,
) -> dict[str, set[str]]:
    """The points of a validity study, per entity: every point the labeler labels intervene
    (at most ``positives_max``, drawn at random if there are more) and as many of its abstains
    (or ``abstains`` of them), drawn uniformly at random over all the streams; seeded, so a
    study can be redrawn."""
    chance = random.Random(seed)
    flagged = sorted((e, p) for e, found in labels.items() for p, v in found.items() if v.positive)
    quiet = sorted(
        (e, p) for e, found in labels.items() for p, v in found.items() if not v.positive
    )
    if positives_max is not None and len(flagged) > positives_max:
        flagged = sorted(chance.sample(flagged, positives_max))
    wanted = len(flagged) if abstains is None else abstains
    chosen = flagged + chance.sample(quiet, min(wanted, len(quiet)))
    out: dict[str, set[str]] = {}
    for entity, point in chosen:
        out.setdefault(entity, set()).add(point)
    return out
