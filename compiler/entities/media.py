"""Video and audio: YouTube (watch, shorts, channels, playlists, search), Vimeo, Twitch, Spotify.

A video's entity is its id; the playback position (`t=`) and share trackers (`si=`) are dropped
so that every visit to one video is one entity.
"""

from __future__ import annotations

from .ref import PageRef
from .url import Parser, Url, is_number, search_text


def _youtube(url: Url) -> PageRef | None:
    first, second = url.seg(0), url.seg(1)
    if first == "watch":
        video = url.param("v")
        return PageRef("youtube_video", video) if video else None
    if first in ("shorts", "live", "embed") and second:
        return PageRef("youtube_short" if first == "shorts" else "youtube_video", second)
    if first.startswith("@") and len(first) > 1:
        return PageRef("youtube_channel", first)
    if first in ("channel", "c", "user") and second:
        return PageRef("youtube_channel", second)
    if first == "playlist":
        playlist = url.param("list")
        return PageRef("youtube_playlist", playlist) if playlist else None
    if first == "results":
        text = search_text(url.param("search_query") or url.param("q"))
        return PageRef("search", text) if text else None
    return None


def _youtu_be(url: Url) -> PageRef | None:
    video = url.seg(0)
    return PageRef("youtube_video", video) if video else None


def _vimeo(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg:
        return None
    if is_number(seg[0]):
        return PageRef("vimeo_video", seg[0])
    if seg[0] in ("channels", "groups", "showcase") and len(seg) >= 2:
        if len(seg) >= 3 and is_number(seg[-1]):
            return PageRef("vimeo_video", seg[-1])
        return PageRef("vimeo_channel", f"{seg[0]}/{seg[1]}")
    if seg[0] in ("search", "watch", "log_in", "join", "upgrade", "features", "manage"):
        return None
    return PageRef("vimeo_user", seg[0])


def _twitch(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg or seg[0] in ("directory", "search", "settings", "downloads", "p", "subscriptions"):
        return None
    if seg[0] == "videos" and len(seg) >= 2:
        return PageRef("twitch_video", seg[1])
    return PageRef("twitch_channel", seg[0].lower())


_SPOTIFY_TYPES = frozenset({"track", "album", "playlist", "artist", "episode", "show"})


def _spotify(url: Url) -> PageRef | None:
    seg = list(url.segments)
    if seg[:1] and seg[0].startswith("intl-"):
        seg = seg[1:]  # the locale prefix of `/intl-de/track/...`
    if len(seg) >= 2 and seg[0] in _SPOTIFY_TYPES:
        return PageRef(f"spotify_{seg[0]}", seg[1])
    return None


HOSTS: dict[str, Parser] = {
    "youtube.com": _youtube,
    "m.youtube.com": _youtube,
    "music.youtube.com": _youtube,
    "youtube-nocookie.com": _youtube,
    "youtu.be": _youtu_be,
    "vimeo.com": _vimeo,
    "twitch.tv": _twitch,
    "open.spotify.com": _spotify,
}
