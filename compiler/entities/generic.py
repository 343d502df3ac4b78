"""The generic layers for hosts no bespoke parser claimed (activity frames §4.4).

Layer 2 reads a search query from the usual parameter names; layer 3 recognises sign-in,
dashboard, mail, calendar and meeting surfaces (plus documentation subdomains and
Mastodon-shaped status paths) from the subdomain and the path.
"""

from __future__ import annotations

from .knowledge import docs_page
from .ref import PageRef
from .social import mastodon
from .url import Url, is_number, search_text

SEARCH_PARAMS = ("q", "query", "search", "s", "k", "keywords", "term", "p")
"""Tried in this order; the first value that reads as text wins. `p` is also a page number or a
post id on many sites, so it must be a word (`_looks_like_text(strict=True)`)."""

_TOKEN_MIN_CHARS = 24  # one "word" this long without spaces is an id, a hash or a blob
_ID_MIN_CHARS = 12  # ...and from this length, one carrying digits too (`a1b2c3d4e5f6`)


def _looks_like_text(text: str, *, strict: bool) -> bool:
    if not any(char.isalpha() for char in text):
        return False  # page numbers, ids, `s=20` share markers
    if text.startswith(("http:", "https:", "www.", "/")):
        return False  # a redirect target or a path, not something typed
    if " " in text:
        return True
    digits = sum(char.isdigit() for char in text)
    if len(text) >= _TOKEN_MIN_CHARS or (len(text) >= _ID_MIN_CHARS and digits >= 2):
        return False
    if strict:
        return len(text) >= 3 and text.isalpha()
    return True


def search_query(url: Url) -> PageRef | None:
    """Layer 2: `?q=`, `?query=`, `?search=` ... on any host → `search` with the query text."""
    if not url.query:
        return None
    params = url.params()
    for name in SEARCH_PARAMS:
        text = search_text(params.get(name))
        if text and _looks_like_text(text, strict=name == "p"):
            return PageRef("search", text)
    return None


_SIGNIN_LABELS = frozenset({"accounts", "auth", "sso", "login", "signin", "idp"})
_SIGNIN_SEGMENTS = frozenset(
    {"login", "signin", "sign-in", "sign_in", "log-in", "logon", "authorize", "sso", "saml"}
)
_DASHBOARD_LABELS = frozenset({"dashboard", "console"})
_DASHBOARD_SEGMENTS = frozenset({"dashboard", "admin"})
_MAIL_LABELS = frozenset({"mail", "webmail"})
_DOCS_LABELS = frozenset({"docs", "developer", "developers"})


def surface(url: Url) -> PageRef | None:
    """Layer 3: the kind of surface, from the first subdomain label and the first path segments."""
    site = url.site
    label = site.partition(".")[0] if "." in site else ""
    head = tuple(segment.lower() for segment in url.segments[:3])

    first, second = url.seg(0), url.seg(1)
    if first.startswith("@") and is_number(second) and len(second) >= 6:
        return mastodon(url)
    if label in _SIGNIN_LABELS or any(
        segment in _SIGNIN_SEGMENTS or segment.startswith("oauth") for segment in head
    ):
        return PageRef("signin", site)
    if (
        label == "meet"
        or ((site == "zoom.us" or site.endswith(".zoom.us")) and head[:1] in (("j",), ("wc",)))
        or "meeting" in head[:2]
        or "meetup-join" in head[:2]
    ):
        return PageRef("meeting", site)
    if label in _MAIL_LABELS or head[:1] in (("mail",), ("webmail",)):
        return PageRef("email", site)
    if label == "calendar" or "calendar" in head[:2]:
        return PageRef("calendar", site)
    if label in _DASHBOARD_LABELS or any(segment in _DASHBOARD_SEGMENTS for segment in head[:2]):
        return PageRef("dashboard", site)
    if label in _DOCS_LABELS:
        return docs_page(url)
    return None
