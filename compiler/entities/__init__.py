"""URL → typed page reference (activity frames §3.3, §4.4).

`parse_url` resolves a browser URL in four layers: a bespoke parser for the site family (one
module each: `code`, `search`, `documents`, `mail`, `maps`, `media`, `social`, `professional`,
`messaging`, `events`, `trackers`, `cloud`, `ai`, `local`, `knowledge`), then a search-parameter
detector, then a subdomain-and-path surface heuristic (`generic`), then `page` with the site.
Pure and deterministic: the same URL always yields the same reference, with no credential from
the query or fragment in it.
"""

from __future__ import annotations

from .parse import parse_url, site_of
from .ref import GENERIC_KINDS, PageRef
from .report import UrlReport, url_report

__all__ = [
    "GENERIC_KINDS",
    "PageRef",
    "UrlReport",
    "parse_url",
    "registered_sites",
    "site_of",
    "url_report",
]


def registered_sites() -> list[str]:
    """Every host, `*.suffix` family and `brand.*` family with a bespoke parser, sorted.

    Importing this package loads no site family (`parse_url` does, on its first URL); this
    lists them all, so it imports them.
    """
    # stays: importing this package loads no site family (see parse_url)
    from .dispatch import registered_sites as every_site

    return every_site()
