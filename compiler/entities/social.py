"""Social sites: X/Twitter, Reddit, Hacker News, Facebook, Instagram, Threads, Bluesky,
Mastodon (known instances here; other instances by path shape in the generic layer), Medium.

Profiles are `@handle` (Mastodon: `@user@instance`), posts `handle/id`, subreddits `r/name`.
"""

from __future__ import annotations

import re

from .ref import PageRef
from .url import Parser, Url, is_number, search_text

_X_RESERVED = frozenset(
    {
        "compose",
        "explore",
        "hashtag",
        "home",
        "i",
        "intent",
        "login",
        "logout",
        "messages",
        "notifications",
        "search",
        "settings",
        "share",
        "signup",
        "tos",
        "privacy",
    }
)
_HANDLE = re.compile(r"[A-Za-z0-9_]{1,15}")


def _x(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg:
        return None
    first = seg[0]
    if first == "hashtag" and len(seg) >= 2:
        return PageRef("search", f"#{seg[1]}")
    if first == "i" and len(seg) >= 3 and seg[1] in ("status", "web") and is_number(seg[-1]):
        return PageRef("x_post", seg[-1])
    if first.lower() in _X_RESERVED or not _HANDLE.fullmatch(first):
        return None
    if len(seg) >= 3 and seg[1] == "status" and is_number(seg[2]):
        return PageRef("x_post", f"{first}/{seg[2]}")
    return PageRef("x_profile", f"@{first}")


def _reddit(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] == "r":
        sub = f"r/{seg[1]}"
        if len(seg) >= 4 and seg[2] == "comments":
            return PageRef("reddit_post", f"{sub}/{seg[3]}")
        if len(seg) >= 4 and seg[2] == "s":
            return PageRef("reddit_post", f"{sub}/s/{seg[3]}")
        return PageRef("reddit_subreddit", sub)
    if len(seg) >= 2 and seg[0] in ("user", "u"):
        return PageRef("reddit_user", f"u/{seg[1]}")
    if len(seg) >= 2 and seg[0] == "comments":
        return PageRef("reddit_post", seg[1])
    return None


def _hacker_news(url: Url) -> PageRef | None:
    first = url.seg(0)
    item = url.param("id")
    if first == "item" and item and is_number(item):
        return PageRef("hn_item", item)
    if first == "user" and item:
        return PageRef("hn_user", item)
    return None


def _hn_search(url: Url) -> PageRef | None:
    text = search_text(url.param("q") or url.param("query"))
    return PageRef("search", text) if text else None


_FACEBOOK_RESERVED = frozenset(
    {
        "home.php",
        "login",
        "login.php",
        "messages",
        "notifications",
        "settings",
        "bookmarks",
        "events",
        "friends",
        "gaming",
        "groups",
        "help",
        "policies",
        "privacy",
        "reel",
        "search",
        "stories",
        "watch",
        "marketplace",
    }
)


def _facebook(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg:
        return None
    first = seg[0]
    if first == "groups" and len(seg) >= 2:
        if len(seg) >= 4 and seg[2] in ("posts", "permalink"):
            return PageRef("facebook_post", f"groups/{seg[1]}/{seg[3]}")
        return PageRef("facebook_group", seg[1])
    if first == "events" and len(seg) >= 2 and is_number(seg[1]):
        return PageRef("facebook_event", seg[1])
    if first == "profile.php":
        profile = url.param("id")
        return PageRef("facebook_profile", profile) if profile and is_number(profile) else None
    if first == "marketplace" and len(seg) >= 3 and seg[1] == "item":
        return PageRef("facebook_listing", seg[2])
    if first.lower() in _FACEBOOK_RESERVED:
        return None
    if len(seg) >= 3 and seg[1] in ("posts", "videos") and seg[2]:
        return PageRef("facebook_post", f"{first}/{seg[2]}")
    return PageRef("facebook_profile", first)


_INSTAGRAM_RESERVED = frozenset(
    {
        "accounts",
        "direct",
        "explore",
        "about",
        "developer",
        "legal",
        "p",
        "reel",
        "reels",
        "stories",
        "tv",
    }
)


def _instagram(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg:
        return None
    first = seg[0]
    if first in ("p", "reel", "tv") and len(seg) >= 2:
        return PageRef("instagram_reel" if first == "reel" else "instagram_post", seg[1])
    if first == "explore" and len(seg) >= 3 and seg[1] == "tags":
        return PageRef("search", f"#{seg[2]}")
    if first == "stories" and len(seg) >= 2:
        return PageRef("instagram_profile", f"@{seg[1]}")
    if first in _INSTAGRAM_RESERVED:
        return None
    if len(seg) >= 3 and seg[1] in ("p", "reel"):
        return PageRef("instagram_post", seg[2])
    return PageRef("instagram_profile", f"@{first}")


def _threads(url: Url) -> PageRef | None:
    first = url.seg(0)
    if not first.startswith("@"):
        return None
    if url.seg(1) == "post" and url.seg(2):
        return PageRef("threads_post", f"{first}/{url.seg(2)}")
    return PageRef("threads_profile", first)


def _bluesky(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] == "profile":
        if len(seg) >= 4 and seg[2] == "post":
            return PageRef("bluesky_post", f"{seg[1]}/{seg[3]}")
        return PageRef("bluesky_profile", f"@{seg[1]}")
    return None


def mastodon(url: Url) -> PageRef | None:
    """`/@user` and `/@user/<status id>` on a Mastodon-compatible instance."""
    first = url.seg(0)
    if len(first) < 2 or not first.startswith("@"):
        return None
    account = first if "@" in first[1:] else f"{first}@{url.site}"
    status = url.seg(1)
    if is_number(status):
        return PageRef("mastodon_post", f"{account}/{status}")
    return PageRef("mastodon_profile", account)


def _medium(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg:
        return None
    if seg[0].startswith("@"):
        if len(seg) >= 2:
            return PageRef("medium_article", seg[1])
        return PageRef("medium_profile", seg[0])
    if seg[0] == "p" and len(seg) >= 2:
        return PageRef("medium_article", seg[1])
    return None


_MASTODON_INSTANCES = (
    "mastodon.social",
    "mastodon.online",
    "mas.to",
    "mstdn.social",
    "fosstodon.org",
    "hachyderm.io",
    "infosec.exchange",
    "techhub.social",
    "mastodon.world",
)

HOSTS: dict[str, Parser] = {
    "twitter.com": _x,
    "mobile.twitter.com": _x,
    "x.com": _x,
    "mobile.x.com": _x,
    "reddit.com": _reddit,
    "old.reddit.com": _reddit,
    "new.reddit.com": _reddit,
    "np.reddit.com": _reddit,
    "m.reddit.com": _reddit,
    "news.ycombinator.com": _hacker_news,
    "hn.algolia.com": _hn_search,
    "facebook.com": _facebook,
    "m.facebook.com": _facebook,
    "web.facebook.com": _facebook,
    "instagram.com": _instagram,
    "threads.net": _threads,
    "threads.com": _threads,
    "bsky.app": _bluesky,
    "medium.com": _medium,
    **dict.fromkeys(_MASTODON_INSTANCES, mastodon),
}
