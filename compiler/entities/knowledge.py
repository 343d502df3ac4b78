"""Reference reading: Stack Overflow and the Stack Exchange network, Wikipedia, and developer
documentation sites (Python, Django, MDN, Read the Docs, docs.rs, ...), which all become `docs`
with entity `site/page path`.

A docs entity drops the language and version prefixes (`/en/5.0/`, `/3.12/`, `/en-US/docs/`,
`/en/latest/`) and the `.html` suffix, so one page read under two versions is one entity.
"""

from __future__ import annotations

import re

from .ref import PageRef
from .url import Parser, Url, is_number, slug_words, tidy

_LANGUAGE = re.compile(
    r"(?:en|de|fr|es|ja|zh|ko|pt|ru|it|nl|pl|tr|uk|sv|cs|id|vi)(?:[-_][a-z]{2,4})?",
    re.IGNORECASE,
)
# Version selectors, and the `docs` container segment of `/en-US/docs/...` (MDN) and
# `/docs/...` (Kubernetes, TypeScript): it names the section every page is in.
_SELECTOR = re.compile(
    r"v?\d+(?:\.\d+)*(?:\.x)?|latest|stable|dev|devel|main|master|current|nightly|docs"
)
_PAGE_SUFFIXES = (".html", ".htm", ".md", ".aspx", ".php")


def docs_page(url: Url) -> PageRef:
    """A documentation page as `docs` with entity `site/path`, prefixes dropped."""
    parts: list[str] = []
    for index, segment in enumerate(url.segments):
        # Language and version selectors only ever appear in the first few segments.
        if index < 3 and (_LANGUAGE.fullmatch(segment) or _SELECTOR.fullmatch(segment)):
            continue
        parts.append(segment)
    if parts:
        last = parts[-1]
        for suffix in _PAGE_SUFFIXES:
            if last.lower().endswith(suffix):
                last = last[: -len(suffix)]
                break
        if last in ("index", "default", "README"):
            parts.pop()
        else:
            parts[-1] = last
    path = tidy("/".join(part for part in parts if part), 100)
    return PageRef("docs", f"{url.site}/{path}" if path else url.site)


def _docs_under(*prefixes: str) -> Parser:
    """Docs only below `prefixes` (e.g. `kubernetes.io/docs/`); the rest of the site is generic."""

    def parse(url: Url) -> PageRef | None:
        return docs_page(url) if url.seg(0) in prefixes else None

    return parse


def _question(url: Url, kind: str, community: str) -> PageRef | None:
    seg = url.segments
    first = url.seg(0)
    prefix = f"{community}/" if community else ""
    if first in ("questions", "q") and len(seg) >= 2:
        if seg[1] == "tagged" and len(seg) >= 3:
            return PageRef(kind.replace("_question", "_tag"), f"{prefix}{seg[2]}")
        if is_number(seg[1]):
            title = tidy(slug_words(seg[2]), 90) if len(seg) >= 3 else ""
            label = f"{title} ({seg[1]})" if title else seg[1]
            return PageRef(kind, f"{prefix}{label}")
    if first == "a" and len(seg) >= 2 and is_number(seg[1]):
        return PageRef(kind.replace("_question", "_answer"), f"{prefix}{seg[1]}")
    if first == "users" and len(seg) >= 2 and is_number(seg[1]):
        name = seg[2] if len(seg) >= 3 else seg[1]
        return PageRef(kind.replace("_question", "_user"), f"{prefix}{name}")
    return None


def _stackoverflow(url: Url) -> PageRef | None:
    return _question(url, "stackoverflow_question", "")


def _stackexchange(url: Url) -> PageRef | None:
    """`unix.stackexchange.com`, `superuser.com`, `askubuntu.com`: the community leads."""
    community = url.site.partition(".")[0]
    return _question(url, "stackexchange_question", community)


def _wikipedia(url: Url) -> PageRef | None:
    language = url.site.partition(".")[0]
    if language in ("www", "m", "wikipedia"):
        language = "en"
    seg = url.segments
    title = ""
    if len(seg) >= 2 and seg[0] == "wiki":
        title = "/".join(seg[1:])
    elif seg[:2] == ("w", "index.php"):
        title = url.param("title") or ""
    if not title or title.startswith(("Special:", "Spécial:", "Spezial:")):
        return None
    return PageRef("wikipedia_article", f"{language}:{tidy(title.replace('_', ' '), 100)}")


_DOCS_HOSTS = (
    "docs.python.org",
    "docs.djangoproject.com",
    "developer.mozilla.org",
    "docs.rs",
    "doc.rust-lang.org",
    "pkg.go.dev",
    "docs.github.com",
    "learn.microsoft.com",
    "docs.aws.amazon.com",
    "cloud.google.com",
    "docs.docker.com",
    "react.dev",
    "docs.celeryq.dev",
    "docs.pytest.org",
    "docs.pydantic.dev",
    "fastapi.tiangolo.com",
    "en.cppreference.com",
    "devdocs.io",
    "man7.org",
    "sqlite.org",
)

HOSTS: dict[str, Parser] = {
    "stackoverflow.com": _stackoverflow,
    "superuser.com": _stackexchange,
    "serverfault.com": _stackexchange,
    "askubuntu.com": _stackexchange,
    "mathoverflow.net": _stackexchange,
    "stackapps.com": _stackexchange,
    "wikipedia.org": _wikipedia,  # the portal: `/wiki/<title>` there opens the English article
    **dict.fromkeys(_DOCS_HOSTS, docs_page),
    "kubernetes.io": _docs_under("docs"),
    "typescriptlang.org": _docs_under("docs"),
    "nodejs.org": _docs_under("api", "docs"),
    "go.dev": _docs_under("doc", "ref"),
    "postgresql.org": _docs_under("docs"),
}
SUFFIXES: dict[str, Parser] = {
    "stackoverflow.com": _stackoverflow,
    "stackexchange.com": _stackexchange,
    "wikipedia.org": _wikipedia,
    "readthedocs.io": docs_page,
    "readthedocs.org": docs_page,
    "readthedocs-hosted.com": docs_page,
}
