"""A decision point in one sentence a person reads (dashboards, annotators, reports).

Built from the point's public fields only, with units and correct plurals; never an internal
encoding. Unknown shapes fall back to naming the fields that are there.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any


def plural(count: float | int, one: str, many: str | None = None) -> str:
    shown = f"{count:,.0f}" if float(count).is_integer() else f"{count:,.1f}"
    return f"{shown} {one if count == 1 else (many or one + 's')}"


def _day(text: Any) -> str:
    try:
        return date.fromisoformat(str(text)).strftime("%a %-d %b %Y")
    except ValueError:
        return str(text)


def span_words(value: float) -> str:
    """Minutes in words: "45 min", "3 h 05 min"."""
    whole = int(round(value))
    hours, minutes = divmod(whole, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def describe(public: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """One sentence for a point's public fields (any scope); a home's sensors by ``names``
    (sensor id -> display name, the entity's names table) where it has them."""
    kind = public.get("type")
    if kind == "home_segment":
        return _home(public, names or {})
    if kind == "sports_slot":
        return _sports(public)
    if kind == "frame_end":
        return _desktop(public)
    return _code(public)


def _home(p: Mapping[str, Any], names: Mapping[str, str]) -> str:
    events = plural(p.get("events") or 0, "event")
    parts = [f"{_day(p.get('day'))}, {p.get('start')}–{p.get('end')}: {events}"]
    rooms = p.get("rooms") or {}
    if rooms:
        shown = ", ".join(f"{room} {n}×" for room, n in rooms.items())
        sequence = p.get("room_sequence") or []
        order = f" ({' → '.join(sequence)})" if len(sequence) > 1 else ""
        parts.append(f"activity in {shown}{order}")
    else:
        parts.append("no activity")
    for device in p.get("devices") or ():
        moves = [f"{w} {device.get(w)}×" for w in ("on", "off") if device.get(w)]
        sensor = str(device.get("device"))
        parts.append(f"{names.get(sensor, sensor)} {' and '.join(moves)}")
    still = [_still(d, names) for d in p.get("on_at_close") or ()]
    if still:
        parts.append("still on at the close: " + ", ".join(still))
    for sensor, figures in (p.get("numeric") or {}).items():
        parts.append(
            f"{names.get(sensor, sensor)} {figures.get('min')}–{figures.get('max')} "
            f"(mean {figures.get('mean')})"
        )
    quiet = p.get("quiet_min")
    if quiet is not None:
        parts.append(f"last event {span_words(quiet)} before the close")
    return "; ".join(parts) + "."


def _still(device: Mapping[str, Any], names: Mapping[str, str]) -> str:
    since = str(device.get("since") or "")[11:16]
    sensor = str(device.get("device"))
    if sensor in names:  # the display name says its room already
        return f"{names[sensor]} since {since}"
    room = device.get("room")
    return sensor + (f" ({room})" if room else "") + f" since {since}"


def _sports(p: Mapping[str, Any]) -> str:
    slot = p.get("slot")
    head = f"{_day(p.get('day'))}, "
    head += (
        f"slot {slot + 1} of 5 at {p.get('slot_time')}"
        if isinstance(slot, int)
        else f"{p.get('slot_time')}"
    )
    parts = []
    steps = p.get("steps_last_60")
    if steps is None:
        parts.append("no step data for the hour before")
    else:
        half = p.get("steps_last_30")
        parts.append(
            f"{plural(steps, 'step')} in the hour before"
            + (f" ({plural(half, 'step')} in the last 30 min)" if half is not None else "")
        )
    today = p.get("steps_today")
    if today is not None:
        parts.append(f"{plural(today, 'step')} today")
    active, sedentary = p.get("active_min_last_60"), p.get("sedentary_min_last_60")
    if active is not None and sedentary is not None:
        parts.append(
            f"{plural(active, 'active minute')} and {plural(sedentary, 'sedentary minute')}"
        )
    worn = p.get("worn_last_60")
    if worn is not None:
        parts.append("tracker worn" if worn else "tracker silent (off, or its wearer asleep)")
    if "available" in p and p.get("available") is not None:
        parts.append("available" if p.get("available") else "not available")
    sleep = p.get("last_sleep_min")
    if sleep is not None:
        parts.append(f"last logged sleep {span_words(sleep)}")
    return head + ": " + "; ".join(parts) + "."


def _desktop(p: Mapping[str, Any]) -> str:
    where = p.get("app") or "an app"
    if p.get("site"):
        where += f" on {p.get('site')}"
    minutes = float(p.get("minutes") or 0)
    inputs = [
        plural(p.get(k) or 0, one)
        for k, one in (("keys", "key"), ("clicks", "click"), ("copies", "copy"))
        if p.get(k)
    ]
    inputs = [i.replace("copys", "copies") for i in inputs]
    text = f"{_day(p.get('day'))}, {p.get('start')}–{p.get('end')}: {where} for {minutes:.1f} min"
    if inputs:
        text += f" ({', '.join(inputs)})"
    nxt = p.get("next_app")
    text += f", then {nxt}" if nxt else ", then nothing for a while"
    text += f"; {plural(p.get('switches_30') or 0, 'frame')} started in the last 30 minutes"
    text += f"; {float(p.get('active_min_today') or 0):.0f} active minutes today."
    return text


def _code(p: Mapping[str, Any]) -> str:
    kind = str(p.get("type") or "event")
    found = p.get("attributes")
    a: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    words = [kind]
    action = a.get("action") or a.get("event")
    if action:
        words.append(str(action))
    number = a.get("number")
    if number is not None:
        on_pull = a.get("pull_request") is True or "PullRequest" in kind or kind.startswith("pr_")
        noun = "pull request " if on_pull else "issue " if "issue" in kind.lower() else ""
        words.append(f"{noun}#{number}")
    if a.get("title"):
        words.append(f"“{a.get('title')}”")
    text = " ".join(words)
    if kind == "PushEvent" and p.get("value") is not None:
        ref = str(a.get("ref") or "").removeprefix("refs/heads/")
        text += f": {plural(p.get('value') or 0, 'commit')}" + (f" to {ref}" if ref else "")
    if a.get("conclusion"):
        text += f", concluded {a.get('conclusion')}"
    who = a.get("actor") or a.get("author")
    if who:
        text += f" by {who}"
    return text + "."
