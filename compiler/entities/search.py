"""Web search engines: Google (every country domain), Bing, DuckDuckGo, Ecosia, Kagi, Brave,
Yahoo, Yandex, Baidu, Startpage. A results page becomes `search` with the query as entity.

All searches, engine or in-site (YouTube, GitHub, the generic `q=` layer), share the one kind
`search`: the frame already names the site, and a single kind lets patterns group queries.
"""

from __future__ import annotations

from .maps import google_maps
from .ref import PageRef
from .url import Parser, Url, search_text


def _query(url: Url, *names: str) -> PageRef | None:
    for name in names:
        text = search_text(url.param(name))
        if text:
            return PageRef("search", text)
    return None


def _google(url: Url) -> PageRef | None:
    first = url.seg(0)
    if first == "maps":
        return google_maps(url)
    if first in ("url", "imgres", "aclk"):
        # Redirect hops: `q` is the destination URL, not something the person typed.
        return PageRef("page", url.site)
    if first in ("search", "webhp", "") or first == "images":
        return _query(url, "q", "as_q")
    return None


def _google_brand(url: Url) -> PageRef | None:
    """`google.de`, `google.co.uk`, `google.com.au`: a country suffix of one or two short labels."""
    labels = url.site.split(".")[1:]
    if 1 <= len(labels) <= 2 and all(0 < len(label) <= 3 and label.isalpha() for label in labels):
        return _google(url)
    return None


def _q(url: Url) -> PageRef | None:
    return _query(url, "q")


def _yahoo(url: Url) -> PageRef | None:
    return _query(url, "p", "q")


def _yandex(url: Url) -> PageRef | None:
    return _query(url, "text")


def _baidu(url: Url) -> PageRef | None:
    return _query(url, "wd", "word")


def _startpage(url: Url) -> PageRef | None:
    return _query(url, "query", "q")


HOSTS: dict[str, Parser] = {
    "google.com": _google,
    "bing.com": _q,
    "cn.bing.com": _q,
    "duckduckgo.com": _q,
    "html.duckduckgo.com": _q,
    "ecosia.org": _q,
    "kagi.com": _q,
    "search.brave.com": _q,
    "search.yahoo.com": _yahoo,
    "yandex.com": _yandex,
    "yandex.ru": _yandex,
    "baidu.com": _baidu,
    "startpage.com": _startpage,
    "qwant.com": _q,
}
BRANDS: dict[str, Parser] = {"google": _google_brand}
