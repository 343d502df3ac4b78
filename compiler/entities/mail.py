"""Web mail: Gmail (folder and thread from the `#inbox/<id>` fragment) and Outlook on the web.

Kinds: `gmail` (a folder or label), `gmail_thread` (`folder/<thread id>`), `outlook_mail` (a
folder), `outlook_message` (`folder/<digest>`: Outlook ids are long and share a mailbox prefix).
Without a folder the page is the `email` surface.
"""

from __future__ import annotations

from urllib.parse import unquote

from .ref import PageRef
from .url import Parser, Url, search_text, short_id, tidy

_GMAIL_SYSTEM = frozenset(
    {
        "all",
        "chats",
        "drafts",
        "imp",
        "inbox",
        "scheduled",
        "sent",
        "snoozed",
        "spam",
        "starred",
        "trash",
        "category",
        "label",
        "settings",
    }
)


def _gmail(url: Url) -> PageRef | None:
    fragment = url.fragment
    if not fragment or "=" in fragment:
        return PageRef("email", url.site)
    parts = [unquote(part) for part in fragment.split("/") if part]
    if not parts:
        return PageRef("email", url.site)
    folder = parts[0]
    if folder == "search" and len(parts) >= 2:
        text = search_text(parts[1].replace("+", " "))
        return PageRef("search", text) if text else PageRef("email", url.site)
    if folder in ("label", "category") and len(parts) >= 2:
        folder = f"{folder}/{tidy(parts[1].replace('+', ' '), 60)}"
        parts = [folder, *parts[2:]]
    elif folder not in _GMAIL_SYSTEM:
        return PageRef("email", url.site)
    # Thread ids are 16 hex digits (legacy) or ~32 letters (FMfcg...); shorter tails are views.
    if len(parts) >= 2 and len(parts[-1]) >= 16 and parts[-1].isalnum():
        return PageRef("gmail_thread", f"{folder}/{short_id(parts[-1], keep=40)}")
    return PageRef("gmail", folder)


_OUTLOOK_FOLDERS = frozenset(
    {"inbox", "sentitems", "drafts", "deleteditems", "archive", "junkemail", "search"}
)


def _outlook(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] == ("owa",):
        seg = seg[1:]
    if seg[:1] == ("calendar",):
        return PageRef("calendar", url.site)
    if seg[:1] != ("mail",):
        return None
    seg = seg[1:]
    if seg and seg[0].isdigit():
        seg = seg[1:]  # the account index of `/mail/0/inbox`
    if not seg:
        return PageRef("email", url.site)
    folder = seg[0] if seg[0] in _OUTLOOK_FOLDERS else "folder"
    if "id" in seg:
        index = seg.index("id")
        if index + 1 < len(seg):
            return PageRef("outlook_message", f"{folder}/{short_id(seg[index + 1], keep=0)}")
    if folder == "folder":
        return PageRef("email", url.site)
    return PageRef("outlook_mail", folder)


HOSTS: dict[str, Parser] = {
    "mail.google.com": _gmail,
    "outlook.office.com": _outlook,
    "outlook.office365.com": _outlook,
    "outlook.live.com": _outlook,
    "outlook.cloud.microsoft": _outlook,
}
