"""The cached entry points: `parse_url` (URL → PageRef) and `site_of` (URL → site).

Both run for every browser row of every compile, so each memoises its str → result function;
a cache hit costs a dictionary lookup. Neither ever raises: capture rows hold arbitrary text.
"""

from __future__ import annotations

from functools import lru_cache

from .ref import PAGE, PageRef
from .url import MAX_URL_CHARS, compute_site

CACHE_SIZE = 65536  # distinct URLs of a busy week fit; an entry is a short str and a PageRef


def parse_url(url: str | None) -> PageRef | None:
    """The typed page reference of a web URL; None for None, blank text and non-web schemes
    (`about:`, `chrome://`, `moz-extension://`, `file:`, `data:`, `javascript:` ...)."""
    if not isinstance(url, str) or not url:
        return None
    return _parse(url if len(url) <= MAX_URL_CHARS else url[:MAX_URL_CHARS])


def site_of(url: str | None) -> str | None:
    """The lowercase host without a leading `www.` and without the port; None for non-web."""
    if not isinstance(url, str) or not url:
        return None
    return _site(url if len(url) <= MAX_URL_CHARS else url[:MAX_URL_CHARS])


@lru_cache(maxsize=CACHE_SIZE)
def _parse(url: str) -> PageRef | None:
    # The site families are imported with the first URL to type, not with the compiler: a
    # day without URLs, and every command that types none, never loads them. This runs once
    # per distinct URL (the cache above), so the import statement costs under a microsecond.
    # stays: see above
    from .dispatch import compute

    try:
        return compute(url)
    except Exception:
        # Last resort only: the property tests drive `compute` unguarded and find no raise. A
        # parser bug on one odd URL must still cost that row its entity, not the whole compile.
        site = _site(url)
        return None if site is None else PageRef(PAGE, site)


@lru_cache(maxsize=CACHE_SIZE)
def _site(url: str) -> str | None:
    try:
        return compute_site(url)
    except Exception:
        return None


def clear_caches() -> None:
    _parse.cache_clear()
    _site.cache_clear()
