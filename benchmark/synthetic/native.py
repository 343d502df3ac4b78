"""SYNTHETIC captures in recorders' native formats, for tests and benchmarks of the readers.

Turns our own SYNTHETIC event records (``benchmark.synthetic.desktop``) into what a recorder
would have written: a screenpipe-style capture SQLite or an ActivityWatch export. Nothing here
was captured from a person. Standard library only; the same records always give the same file
contents.

    python -m benchmark.synthetic.native --format screenpipe --start 2026-03-02 --days 1 \\
        --seed 7 --out day.sqlite
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from benchmark.synthetic.desktop import generate_days

Record = Mapping[str, Any]

# ActivityWatch's AFK watcher calls a person away after 3 minutes without keyboard or mouse
# input (its default timeout) and dates the AFK event from the last input.
AFK_TIMEOUT_S = 180.0
# The window watcher polls while the screen is on, so an interval lasts until the next focus
# change; a gap this long between capture rows is taken as the machine sleeping instead.
WINDOW_GAP_CAP_S = 15 * 60.0
# After the last row before such a gap (or the day's end), credit one capture cadence.
WINDOW_TAIL_S = 30.0
# Browser app names of the generator and the web bucket each one's extension reports to.
WEB_BUCKETS = {
    "firefox": "firefox",
    "google chrome": "chrome",
    "chrome": "chrome",
    "chromium": "chrome",
    "brave browser": "chrome",
    "microsoft edge": "edge",
    "safari": "safari",
    "arc": "chrome",
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_SCREENPIPE_SCHEMA = """
CREATE TABLE frames (
    id INTEGER PRIMARY KEY,
    timestamp TEXT NOT NULL,
    app_name TEXT,
    window_name TEXT,
    browser_url TEXT,
    focused INTEGER,
    device_name TEXT
);
CREATE INDEX idx_frames_timestamp ON frames (timestamp);
CREATE TABLE ui_events (
    id INTEGER PRIMARY KEY,
    timestamp TEXT NOT NULL,
    event_type TEXT NOT NULL,
    x INTEGER,
    y INTEGER,
    text_content TEXT,
    app_name TEXT,
    window_title TEXT,
    browser_url TEXT,
    element_name TEXT,
    element_role TEXT,
    element_automation_id TEXT,
    frame_id INTEGER REFERENCES frames (id)
);
CREATE INDEX idx_ui_events_timestamp ON ui_events (timestamp);
CREATE TABLE elements (
    id INTEGER PRIMARY KEY,
    frame_id INTEGER NOT NULL REFERENCES frames (id),
    source TEXT NOT NULL,
    role TEXT,
    text TEXT,
    left_bound REAL,
    top_bound REAL,
    width_bound REAL,
    height_bound REAL,
    parent_id INTEGER REFERENCES elements (id)
);
CREATE INDEX idx_elements_frame_id ON elements (frame_id);
"""


def _micros(stamp: str) -> int:
    """UTC microseconds since the epoch of an ISO timestamp with an offset."""
    delta = datetime.fromisoformat(stamp) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _iso(micros: int) -> str:
    """The recorders' UTC form: 2026-03-02T08:06:32.193381+00:00."""
    return (_EPOCH + timedelta(microseconds=micros)).isoformat(timespec="microseconds")


def _replace(path: str | os.PathLike[str]) -> str:
    name = os.fspath(path)
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(name + suffix):
            os.remove(name + suffix)
    return name


def write_screenpipe(path: str | os.PathLike[str], records: Iterable[Record]) -> dict[str, int]:
    """Write SYNTHETIC records as a screenpipe-style capture SQLite; returns rows per table.

    Every table and column a screenpipe-style reader knows is present. A snapshot becomes a
    frame (``device_name`` "monitor_<n>", ``focused`` 1, or 0 where the record says
    ``focused: false``), an input a ``ui_events`` row linked to its frame, an element tree
    ``elements`` rows with bounds in 0-1 and ``parent_id`` links. An existing file is replaced.
    """
    name = _replace(path)
    frames: list[tuple[Any, ...]] = []
    events: list[tuple[Any, ...]] = []
    elements: list[tuple[Any, ...]] = []
    frame_ids: dict[str, int] = {}
    for record in records:
        kind = record["kind"]
        payload = record["payload"]
        stamp = _iso(_micros(record["occurred_at"]))
        if kind == "snapshot":
            frame_id = len(frames) + 1
            frame_ids[record["source_key"]] = frame_id
            frames.append(
                (
                    frame_id,
                    stamp,
                    payload["app"],
                    payload.get("window"),
                    payload.get("url"),
                    0 if payload.get("focused") is False else 1,
                    f"monitor_{record.get('monitor') or '0'}",
                )
            )
        elif kind == "input":
            events.append(
                (
                    len(events) + 1,
                    stamp,
                    payload["type"],
                    payload.get("x"),
                    payload.get("y"),
                    payload.get("text"),
                    payload.get("app"),
                    payload.get("window"),
                    payload.get("url"),
                    payload.get("element_name"),
                    payload.get("element_role"),
                    None,  # the generator names no automation ids
                    frame_ids.get(payload.get("snapshot") or ""),
                )
            )
        elif kind == "elements":
            owner = frame_ids.get(payload["snapshot"])
            if owner is None:
                continue
            first = len(elements) + 1
            for element in payload["elements"]:
                bounds = element.get("bounds") or (None, None, None, None)
                parent = element.get("parent")
                elements.append(
                    (
                        len(elements) + 1,
                        owner,
                        element.get("source") or "accessibility",
                        element["role"],
                        element.get("name"),
                        *bounds,
                        None if parent is None else first + parent,
                    )
                )
    connection = sqlite3.connect(name)
    try:
        with connection:
            connection.executescript(_SCREENPIPE_SCHEMA)
            connection.executemany(f"INSERT INTO frames VALUES ({', '.join('?' * 7)})", frames)
            connection.executemany(f"INSERT INTO ui_events VALUES ({', '.join('?' * 13)})", events)
            connection.executemany(f"INSERT INTO elements VALUES ({', '.join('?' * 10)})", elements)
    finally:
        connection.close()
    return {"frames": len(frames), "ui_events": len(events), "elements": len(elements)}


def _event(start: int, end: int, data: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": _iso(start), "duration": (end - start) / 1_000_000, "data": data}


def _bucket(
    bucket_id: str, kind: str, client: str, host: str, events: list[dict[str, Any]]
) -> dict[str, Any]:
    events = sorted(events, key=lambda event: event["timestamp"], reverse=True)  # newest first
    return {
        "id": bucket_id,
        "created": events[-1]["timestamp"] if events else _iso(0),
        "name": None,
        "type": kind,
        "client": client,
        "hostname": host,
        "data": {},
        "events": events,
    }


def _web_bucket(app: str) -> str | None:
    return WEB_BUCKETS.get(app.lower())


def activitywatch_export(records: Iterable[Record], hostname: str = "demo-host") -> dict[str, Any]:
    """A SYNTHETIC ActivityWatch export of the records (see :func:`write_activitywatch`)."""
    if not re.fullmatch(r"[A-Za-z0-9._-]+", hostname):
        raise ValueError(f"hostname {hostname!r} must be letters, digits, '.', '_' or '-'.")
    focus: list[tuple[int, str, str, str | None]] = []  # time, app, title, url
    typing: list[int] = []
    for record in records:
        payload = record["payload"]
        if record["kind"] == "snapshot" and payload.get("focused") is not False:
            micros = _micros(record["occurred_at"])
            focus.append((micros, payload["app"], payload.get("window") or "", payload.get("url")))
        elif record["kind"] == "input":
            typing.append(_micros(record["occurred_at"]))
    focus.sort(key=lambda row: row[0])
    typing.sort()

    cap = round(WINDOW_GAP_CAP_S * 1_000_000)
    tail = round(WINDOW_TAIL_S * 1_000_000)
    # Each focused row lasts until the next one, unless the machine seems to have slept.
    ends = [
        after[0] if after[0] - row[0] <= cap else row[0] + tail
        for row, after in zip(focus, focus[1:], strict=False)
    ]
    if focus:
        ends.append(focus[-1][0] + tail)

    window: list[dict[str, Any]] = []
    web: dict[str, list[dict[str, Any]]] = {}
    tabs: dict[str, set[str]] = {}
    run_start = web_start = -1
    for i, (micros, app, title, url) in enumerate(focus):
        joined = i > 0 and ends[i - 1] == micros
        previous = focus[i - 1] if i > 0 else None
        if not (joined and previous is not None and previous[1:3] == (app, title)):
            run_start = micros
        if i + 1 == len(focus) or ends[i] != focus[i + 1][0] or focus[i + 1][1:3] != (app, title):
            window.append(_event(run_start, ends[i], {"app": app, "title": title}))
        browser = _web_bucket(app)
        if browser is None or url is None:
            continue
        same = joined and previous is not None and previous[1:] == (app, title, url)
        if not same:
            web_start = micros
            tabs.setdefault(browser, set()).add(url)
        following = focus[i + 1] if i + 1 < len(focus) else None
        if following is None or ends[i] != following[0] or following[1:] != (app, title, url):
            data = {
                "url": url,
                "title": title,
                "audible": False,
                "incognito": False,
                # Invented but plausible: the pages opened so far in that browser, at most 30.
                "tabCount": min(len(tabs[browser]), 30),
            }
            web.setdefault(browser, []).append(_event(web_start, ends[i], data))

    afk: list[dict[str, Any]] = []
    timeout = round(AFK_TIMEOUT_S * 1_000_000)
    if typing:
        span = typing[0]
        for last, resumed in zip(typing, typing[1:], strict=False):
            if resumed - last > timeout:
                afk.append(_event(span, last, {"status": "not-afk"}))
                afk.append(_event(last, resumed, {"status": "afk"}))
                span = resumed
        afk.append(_event(span, typing[-1], {"status": "not-afk"}))

    buckets = {
        f"aw-watcher-window_{hostname}": _bucket(
            f"aw-watcher-window_{hostname}", "currentwindow", "aw-watcher-window", hostname, window
        ),
        f"aw-watcher-afk_{hostname}": _bucket(
            f"aw-watcher-afk_{hostname}", "afkstatus", "aw-watcher-afk", hostname, afk
        ),
    }
    for browser in sorted(web):
        bucket_id = f"aw-watcher-web-{browser}_{hostname}"
        buckets[bucket_id] = _bucket(
            bucket_id, "web.tab.current", "aw-client-web", hostname, web[browser]
        )
    return {"buckets": dict(sorted(buckets.items()))}


def write_activitywatch(
    path: str | os.PathLike[str], records: Iterable[Record], hostname: str = "demo-host"
) -> dict[str, int]:
    """Write SYNTHETIC records as a full ActivityWatch export; returns events per bucket.

    Window intervals come from the focused snapshot rows (what the window watcher sees),
    merged while (app, title) stays the same, each lasting until the next change (capped by
    ``WINDOW_GAP_CAP_S``). One web bucket per browser extension holds the browser rows'
    (url, title) intervals. The AFK bucket holds not-afk spans of input and afk spans for
    input gaps over ``AFK_TIMEOUT_S``. Events are stored newest first, without ids.
    """
    export = activitywatch_export(records, hostname)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        json.dump(export, handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")
    return {bucket_id: len(bucket["events"]) for bucket_id, bucket in export["buckets"].items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmark.synthetic.native",
        description="Write SYNTHETIC desktop capture as a screenpipe SQLite or an "
        "ActivityWatch export.",
    )
    parser.add_argument("--format", required=True, choices=("screenpipe", "activitywatch"))
    parser.add_argument(
        "--start",
        type=date.fromisoformat,
        default=date(2026, 3, 2),
        help="first local day, YYYY-MM-DD (default 2026-03-02)",
    )
    parser.add_argument("--days", type=int, default=1, help="calendar days (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tz", default="Europe/Berlin", help="IANA time zone of the person")
    parser.add_argument("--monitors", type=int, default=2)
    parser.add_argument("--person", default="demo")
    parser.add_argument("--include-weekends", action="store_true")
    parser.add_argument("--hostname", default="demo-host", help="ActivityWatch host name")
    parser.add_argument("--out", required=True, help="output file (replaced if it exists)")
    args = parser.parse_args(argv)
    if args.days < 1:
        parser.error("--days must be at least 1.")
    if args.monitors < 1:
        parser.error("--monitors must be at least 1.")
    records = generate_days(
        args.start,
        args.days,
        seed=args.seed,
        tz=args.tz,
        monitors=args.monitors,
        person=args.person,
        include_weekends=args.include_weekends,
    )
    try:
        if args.format == "screenpipe":
            counts = write_screenpipe(args.out, records)
        else:
            counts = write_activitywatch(args.out, records, args.hostname)
    except (ValueError, KeyError) as exc:  # a bad --tz or --hostname
        parser.error(str(exc))
    summary = ", ".join(f"{count} {table}" for table, count in counts.items())
    print(f"wrote SYNTHETIC {args.format} capture to {args.out}: {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
