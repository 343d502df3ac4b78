"""How well a set of URLs resolves to typed page references: the `python -m compiler urls` report.

Counted over distinct URLs, so a page visited a thousand times weighs as much as one seen once:
the report measures parser coverage, not time spent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TypedDict

from .parse import parse_url
from .ref import GENERIC_KINDS


class UrlReport(TypedDict):
    """`kinds` is ordered by count (descending), then kind name."""

    total: int
    not_web: int
    typed: int
    generic: int
    typed_fraction: float
    kinds: dict[str, int]


def url_report(urls: Iterable[str]) -> UrlReport:
    """Resolve each distinct URL once and count the outcome.

    Lines are stripped and blank ones skipped. `total` counts distinct URLs; `not_web` those that
    are no web page (`about:`, `file:`, garbage); `typed` those whose kind is not in
    `GENERIC_KINDS`; `typed_fraction` is `typed / total` (0.0 for no URLs), rounded to 4 places.
    """
    distinct = {url.strip() for url in urls if url and url.strip()}
    kinds: Counter[str] = Counter()
    not_web = 0
    for url in distinct:
        ref = parse_url(url)
        if ref is None:
            not_web += 1
        else:
            kinds[ref.kind] += 1
    typed = sum(count for kind, count in kinds.items() if kind not in GENERIC_KINDS)
    total = len(distinct)
    ordered = dict(sorted(kinds.items(), key=lambda item: (-item[1], item[0])))
    return UrlReport(
        total=total,
        not_web=not_web,
        typed=typed,
        generic=total - not_web - typed,
        typed_fraction=round(typed / total, 4) if total else 0.0,
        kinds=ordered,
    )
