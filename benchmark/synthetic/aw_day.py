"""SYNTHETIC ActivityWatch days with the quirks of real exports, and the recorder's own truth.

:mod:`benchmark.synthetic.native` turns capture rows into tidy, contiguous intervals. Real
exports are not tidy: consecutive window events leave gaps of a second or two, about a third of
events have zero duration (a title that flickered), AFK events overlap, private-browsing
windows have no web event while the extension keeps reporting a normal tab, and buckets of
other watchers sit beside the window bucket. This module writes days like that, in the exact
native export format (``{"buckets": {id: {id, type, client, hostname, created, data, events:
[{timestamp, duration, data}]}}}``, events newest first), and computes what ActivityWatch
itself reports for them: per app, the window events' time inside not-AFK periods, after
filling gaps under ``PULSETIME_S`` as its canonical query does (``flood``, then
``filter_period_intersect`` with the not-AFK events). Nothing here was captured from a
person.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

# ActivityWatch's canonical queries flood gaps shorter than this between events (aw-core).
PULSETIME_S = 5.0
HOST = "synthetic-host"

# (app, window titles, browser bucket or None, urls): what a working day switches between.
_APPS: tuple[tuple[str, tuple[str, ...], str | None, tuple[str, ...]], ...] = (
    ("Code", ("document.py — aframes", "segment.py — aframes", "README.md — aframes"), None, ()),
    ("Terminal", ("aframes — pytest — 120×36", "aframes — -zsh — 120×36"), None, ()),
    ("Slack", ("general (Channel) - Acme - Slack", "Ana (DM) - Acme - Slack"), None, ()),
    (
        "Firefox",
        ("Pull request #12 · acme/app", "sqlite3 — Python 3 documentation", "Inbox (3) - Gmail"),
        "firefox",
        (
            "https://github.com/acme/app/pull/12",
            "https://docs.python.org/3/library/sqlite3.html",
            "https://mail.google.com/mail/u/0/#inbox",
        ),
    ),
    (
        "Google Chrome",
        ("Standup notes - Google Docs", "Calendar - Week of 2 March"),
        "chrome",
        ("https://docs.google.com/document/d/abc/edit", "https://calendar.google.com/calendar/r"),
    ),
    ("zoom.us", ("Zoom Meeting",), None, ()),
)
_SUFFIX = {"firefox": " — Mozilla Firefox", "chrome": " - Google Chrome"}
PRIVATE_TITLE = "New Private Tab — Mozilla Firefox Private Browsing"


@dataclass
class Day:
    """One generated day: the export and what ActivityWatch reports for it."""

    export: dict[str, Any]
    truth_minutes: dict[str, float]  # per app, ActivityWatch's focused not-AFK minutes
    private_rows_s: float  # seconds of private-browsing windows (which carry no URL)
    events: dict[str, int] = field(default_factory=dict)  # per bucket

    @property
    def total_minutes(self) -> float:
        return sum(self.truth_minutes.values())


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="microseconds")


def _event(start: float, duration: float, data: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": _iso(start), "duration": round(duration, 6), "data": data}


def _bucket(bucket_id: str, kind: str, client: str, events: list[dict[str, Any]]) -> dict:
    events = sorted(events, key=lambda e: e["timestamp"], reverse=True)  # newest first
    return {
        "id": bucket_id,
        "created": events[-1]["timestamp"] if events else _iso(0),
        "name": None,
        "type": kind,
        "client": client,
        "hostname": HOST,
        "data": {},
        "events": events,
    }


def generate(
    day: date,
    tz: str = "Europe/Berlin",
    *,
    seed: int = 1,
    afk: bool = True,
    private: bool = True,
    extra_buckets: bool = True,
) -> Day:
    """A working day 08:30-18:00 local with the quirks above; ``afk=False`` drops the AFK
    bucket, ``extra_buckets`` adds buckets that sort before the window bucket."""
    rng = random.Random(f"{day.isoformat()}:{seed}")
    zone = ZoneInfo(tz)
    t = datetime.combine(day, time(8, 30), zone).timestamp()
    stop = datetime.combine(day, time(18, 0), zone).timestamp()
    window: list[tuple[float, float, dict[str, Any]]] = []  # start, duration, data
    web: dict[str, list[dict[str, Any]]] = {}
    private_s = 0.0
    last_tab: dict[str, tuple[str, str]] = {}
    while t < stop:
        app, titles, browser, urls = rng.choice(_APPS)
        length = min(max(rng.lognormvariate(3.6, 1.1), 2.0), 900.0)
        if private and browser == "firefox" and rng.random() < 0.12:
            # A private window: no web event of its own, while the extension's last normal tab
            # is reported through it (real exports show this).
            title = PRIVATE_TITLE
            window.append((t, length, {"app": app, "title": title}))
            private_s += length
            if browser in last_tab:
                url, page = last_tab[browser]
                web.setdefault(browser, []).append(
                    _event(t, length, {"url": url, "title": page, "audible": False,
                                       "incognito": False, "tabCount": 3})
                )  # fmt: skip
        else:
            k = rng.randrange(len(titles))
            title = titles[k] + _SUFFIX.get(browser or "", "")
            window.append((t, length, {"app": app, "title": title}))
            if browser is not None:
                last_tab[browser] = (urls[k], titles[k])
                web.setdefault(browser, []).append(
                    _event(t, length, {"url": urls[k], "title": titles[k], "audible": False,
                                       "incognito": False, "tabCount": 3})
                )  # fmt: skip
        t += length
        if rng.random() < 0.45:
            # A title that flickered: an event of zero duration at the switch.
            window.append((t, 0.0, {"app": app, "title": title + " (1)"}))
        roll = rng.random()
        if roll < 0.5:
            t += rng.uniform(0.2, 3.0)  # the watcher's poll: a short gap before the next
        elif roll < 0.55:
            t += rng.uniform(20.0, 120.0)  # the machine slept briefly
    afk_events: list[dict[str, Any]] = []
    not_afk: list[tuple[float, float]] = []
    start = window[0][0]
    end = max(s + d for s, d, _ in window)
    if afk:
        away = sorted(
            [
                (datetime.combine(day, time(12, 30), zone).timestamp(), 45 * 60.0),
                *((rng.uniform(start + 3600, end - 3600), rng.uniform(240, 900)) for _ in range(4)),
            ]
        )
        cursor = start
        for a, length in away:
            if a <= cursor:
                continue
            # not-afk events overlap the afk event that follows by a second, as real ones do.
            afk_events.append(_event(cursor, a - cursor + 1.0, {"status": "not-afk"}))
            not_afk.append((cursor, a + 1.0))
            afk_events.append(_event(a, length, {"status": "afk"}))
            cursor = a + length
        afk_events.append(_event(cursor, end - cursor, {"status": "not-afk"}))
        not_afk.append((cursor, end))
    else:
        not_afk.append((start, end))

    buckets: dict[str, dict[str, Any]] = {}
    window_id = f"aw-watcher-window_{HOST}"
    buckets[window_id] = _bucket(
        window_id, "currentwindow", "aw-watcher-window", [_event(*w) for w in window]
    )
    if afk:
        afk_id = f"aw-watcher-afk_{HOST}"
        buckets[afk_id] = _bucket(afk_id, "afkstatus", "aw-watcher-afk", afk_events)
    for browser, events in web.items():
        web_id = f"aw-watcher-web-{browser}_{HOST}"
        buckets[web_id] = _bucket(web_id, "web.tab.current", "aw-client-web", events)
    if extra_buckets:
        # Other watchers' buckets, sorting before the window bucket.
        for bucket_id, kind in (
            (f"aw-stopwatch_{HOST}", "general.stopwatch"),
            (f"aw-watcher-input_{HOST}", "os.hid.input"),
        ):
            buckets[bucket_id] = _bucket(
                bucket_id, kind, bucket_id.split("_")[0], [_event(start + 60, 30.0, {"n": 1})]
            )
    export = {"buckets": dict(sorted(buckets.items()))}
    return Day(
        export=export,
        truth_minutes=truth(window, not_afk),
        private_rows_s=private_s,
        events={k: len(b["events"]) for k, b in export["buckets"].items()},
    )


def _flood(events: list[tuple[float, float, dict[str, Any]]]) -> list[tuple[float, float, str]]:
    """(start, end, app) with each gap under PULSETIME_S given to the event before it."""
    ordered = sorted(events, key=lambda e: (e[0], e[1]))
    out: list[tuple[float, float, str]] = []
    for i, (s, d, data) in enumerate(ordered):
        e = s + d
        if i + 1 < len(ordered):
            following = ordered[i + 1][0]
            if e < following and following - e < PULSETIME_S:
                e = following
        out.append((s, e, str(data["app"])))
    return out


def _merge(periods: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for s, e in sorted(periods):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def truth(
    window: list[tuple[float, float, dict[str, Any]]], not_afk: list[tuple[float, float]]
) -> dict[str, float]:
    """Per app, minutes of (flooded) window events inside the not-AFK periods.

    Overlapping window events (a zero-length flicker inside a longer one never overlaps; a
    flood can meet the next event) are counted once, by the later event from its start on.
    """
    present = _merge(not_afk)
    flooded = _flood(window)
    seconds: dict[str, float] = {}
    for i, (s, e, app) in enumerate(flooded):
        if i + 1 < len(flooded):
            e = min(e, max(s, flooded[i + 1][0]))
        for a, b in present:
            overlap = min(e, b) - max(s, a)
            if overlap > 0:
                seconds[app] = seconds.get(app, 0.0) + overlap
    return {app: round(value / 60.0, 4) for app, value in sorted(seconds.items())}


def recorded_minutes(days: Iterable[Day]) -> float:
    return sum(d.total_minutes for d in days)


def local_day_bounds(day: date, tz: str) -> tuple[float, float]:
    zone = ZoneInfo(tz)
    start = datetime.combine(day, time(0), zone)
    return start.timestamp(), datetime.combine(day + timedelta(days=1), time(0), zone).timestamp()
