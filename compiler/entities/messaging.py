"""Team chat and messengers: Slack, Discord, Microsoft Teams, WhatsApp Web, Telegram Web,
Messenger, Google Chat.

Channel entities are `workspace/channel id` (ids are what the URL carries; names live in window
titles). Where the URL names no conversation (WhatsApp Web never does) the page is the
`messaging` surface of the site. Teams meeting joins are the `meeting` surface.
"""

from __future__ import annotations

from .ref import PageRef
from .url import Parser, Url, short_id, tidy


def _surface(url: Url) -> PageRef:
    return PageRef("messaging", url.site)


def _slack_app(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] == ("client",) and len(seg) >= 2:
        if len(seg) >= 3:
            return PageRef("slack_channel", f"{seg[1]}/{seg[2]}")
        return PageRef("slack_workspace", seg[1])
    return _surface(url)


_SLACK_SERVICE_HOSTS = frozenset({"api", "files", "status", "slack-files", "edgeapi", "a", "docs"})


def _slack_workspace(url: Url) -> PageRef | None:
    workspace = url.site.partition(".")[0]
    if workspace in _SLACK_SERVICE_HOSTS:
        return None
    seg = url.segments
    if seg[:1] == ("archives",) and len(seg) >= 2:
        channel = f"{workspace}/{seg[1]}"
        if len(seg) >= 3 and seg[2].startswith("p") and seg[2][1:].isdigit():
            return PageRef("slack_message", f"{channel}/{seg[2]}")
        return PageRef("slack_channel", channel)
    if seg[:1] == ("messages",) and len(seg) >= 2:
        return PageRef("slack_channel", f"{workspace}/{seg[1]}")
    if seg[:1] in (("signin",), ("sso",), ("ssb",)):
        return PageRef("signin", url.site)
    return PageRef("slack_workspace", workspace)


def _discord(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] != ("channels",) or len(seg) < 2:
        return None
    guild = seg[1]
    if guild == "@me":
        return PageRef("discord_dm", seg[2]) if len(seg) >= 3 else _surface(url)
    if len(seg) >= 3:
        return PageRef("discord_channel", f"{guild}/{seg[2]}")
    return PageRef("discord_server", guild)


def _teams(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] == ("l",) and len(seg) >= 2:
        section = seg[1]
        if section == "meetup-join" or section == "meet":
            return PageRef("meeting", url.site)
        if section == "channel" and len(seg) >= 4:
            return PageRef("teams_channel", tidy(seg[3], 80))
        if section == "chat" and len(seg) >= 3:
            return PageRef("teams_chat", short_id(seg[2], keep=0))
        if section == "message" and len(seg) >= 3:
            return PageRef("teams_chat", short_id(seg[2], keep=0))
    if seg[:1] == ("meet",):
        return PageRef("meeting", url.site)
    return _surface(url)


def _whatsapp(url: Url) -> PageRef | None:
    return _surface(url)


def _telegram(url: Url) -> PageRef | None:
    # `/k/#@username`, `/a/#-1001234567`, `/z/#123456`: the open chat lives in the fragment.
    chat = url.fragment.strip()
    if chat and (chat.startswith("@") or chat.lstrip("-").isdigit()):
        return PageRef("telegram_chat", chat)
    return _surface(url)


def _messenger(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] in (("t",), ("e2ee",)) and len(seg) >= 2:
        thread = seg[2] if seg[0] == "e2ee" and len(seg) >= 3 else seg[1]
        return PageRef("messenger_chat", thread)
    return _surface(url)


def _google_chat(url: Url) -> PageRef | None:
    seg = url.segments
    for marker in ("room", "space", "dm"):
        if marker in seg:
            index = seg.index(marker)
            if index + 1 < len(seg):
                return PageRef("google_chat_space", seg[index + 1])
    return _surface(url)


HOSTS: dict[str, Parser] = {
    "app.slack.com": _slack_app,
    "discord.com": _discord,
    "discordapp.com": _discord,
    "ptb.discord.com": _discord,
    "canary.discord.com": _discord,
    "teams.microsoft.com": _teams,
    "teams.live.com": _teams,
    "teams.cloud.microsoft": _teams,
    "web.whatsapp.com": _whatsapp,
    "web.telegram.org": _telegram,
    "messenger.com": _messenger,
    "chat.google.com": _google_chat,
}
SUFFIXES: dict[str, Parser] = {"slack.com": _slack_workspace}
