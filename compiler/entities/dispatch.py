"""The registry of bespoke parsers and the four-layer pipeline (activity frames §4.4).

Dispatch is by dictionary, never by scanning parsers: the exact site, then each proper suffix of
it longest first (`acme.atlassian.net` → `atlassian.net`), then the first label for brands with
many domains (`google.co.uk`, `gitlab.<company>`). Each family module contributes `HOSTS`,
`SUFFIXES` and `BRANDS`; a name claimed twice is a programming error caught at import.
"""

from __future__ import annotations

from types import ModuleType

from . import (
    ai,
    cloud,
    code,
    documents,
    events,
    generic,
    knowledge,
    local,
    mail,
    maps,
    media,
    messaging,
    professional,
    search,
    social,
    trackers,
)
from .ref import PAGE, PageRef
from .url import Parser, Url, split_url, tidy

FAMILIES: tuple[ModuleType, ...] = (
    ai,
    cloud,
    code,
    documents,
    events,
    knowledge,
    local,
    mail,
    maps,
    media,
    messaging,
    professional,
    search,
    social,
    trackers,
)

ENTITY_MAX_CHARS = 120


def _merge(table: str) -> dict[str, Parser]:
    merged: dict[str, Parser] = {}
    for family in FAMILIES:
        entries: dict[str, Parser] = getattr(family, table, {})
        for name, parser in entries.items():
            if name in merged:
                raise RuntimeError(
                    f"{family.__name__}.{table} registers {name!r}, which another site family "
                    "already claims; give each host to exactly one parser"
                )
            merged[name] = parser
    return merged


HOSTS = _merge("HOSTS")
SUFFIXES = _merge("SUFFIXES")
BRANDS = _merge("BRANDS")


def registered_sites() -> list[str]:
    """Every host, `*.suffix` family and `brand.*` family with a bespoke parser, sorted."""
    names = set(HOSTS)
    names.update(f"*.{suffix}" for suffix in SUFFIXES)
    names.update(f"{brand}.*" for brand in BRANDS)
    return sorted(names)


def bespoke_parser(site: str) -> Parser | None:
    parser = HOSTS.get(site)
    if parser is not None:
        return parser
    dot = site.find(".")
    while dot != -1:
        parser = SUFFIXES.get(site[dot + 1 :])
        if parser is not None:
            return parser
        dot = site.find(".", dot + 1)
    if "." in site:
        return BRANDS.get(site.partition(".")[0])
    return None


def resolve(url: Url) -> PageRef:
    """Layers 1-4 for one split URL: bespoke parser, search parameter, surface, plain page."""
    parser = bespoke_parser(url.site)
    if parser is not None:
        ref = parser(url)
        if ref is not None:
            entity = tidy(ref.entity, ENTITY_MAX_CHARS)
            if entity:
                return ref if entity == ref.entity else PageRef(ref.kind, entity)
    ref = generic.search_query(url) or generic.surface(url)
    if ref is not None:
        entity = tidy(ref.entity, ENTITY_MAX_CHARS)
        if entity:
            return ref if entity == ref.entity else PageRef(ref.kind, entity)
    return PageRef(PAGE, url.site)


def compute(text: str) -> PageRef | None:
    """`parse_url` without its cache and without its last-resort guard: the tests drive this
    one with random input, so a parser that raises fails them instead of hiding."""
    url = split_url(text)
    return None if url is None else resolve(url)
