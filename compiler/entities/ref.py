"""The typed page reference every URL compiles to, and the kinds that count as untyped.

Activity frames §3.3: a frame lists the pages it touched as `kind:entity` pairs; the kind says
what sort of thing the page is, the entity which one, both derived from the URL alone.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PageRef:
    """One typed page reference, e.g. `PageRef("github_pr", "acme/app#12")`."""

    kind: str
    entity: str


PAGE = "page"
"""The total fallback (layer 4): the entity is only the site."""

SURFACE_KINDS = frozenset({"signin", "dashboard", "email", "calendar", "meeting", "messaging"})
"""Kinds that name what sort of surface a page is but not which item on it: the entity is the
site (or the service) only. Layer 3 produces them, and a few bespoke parsers fall back to them
when the URL carries no item (WhatsApp Web, Gmail without a folder)."""

GENERIC_KINDS: frozenset[str] = frozenset({PAGE}) | SURFACE_KINDS
"""Kinds that do not identify a specific thing. The surface kinds count as generic on purpose:
`email:mail.example.com` says the person was reading mail, not which mail, so a URL report's
"typed" fraction measures how often a page resolved to a specific entity. `search` is typed: its
entity is the query text."""
