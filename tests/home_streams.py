"""Hand-made home streams (CASAS-shaped motion events) for the ProactMem service and API tests."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

ZONE = ZoneInfo("Europe/Paris")
START = date(2024, 5, 6)  # a Monday


def motion(day: date, hour: int, minute: int, room: str, n: int = 0) -> dict[str, Any]:
    moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=ZONE)
    return {
        "occurred_at": moment.isoformat(),
        "kind": "observation",
        "source_key": f"m:{day}:{hour:02d}{minute:02d}:{room}:{n}",
        "payload": {
            "type": "motion",
            "value": "ON",
            "attributes": {"sensor": f"M-{room}", "room": room},
            "private": {"activity": "secret-label"},
        },
    }


def routine_day(day: date, *, kitchen: bool = True) -> list[dict[str, Any]]:
    """Bedroom at 07:00, then the kitchen at 07:30 (unless skipped), the study at 08:10, the
    hall at 08:40 and the living room at 12:00."""
    items = [motion(day, 7, 0, "bedroom"), motion(day, 7, 5, "bedroom", 1)]
    if kitchen:
        items += [motion(day, 7, 30, "kitchen"), motion(day, 7, 35, "kitchen", 1)]
    items += [motion(day, 8, 10, "study"), motion(day, 8, 40, "hall"), motion(day, 12, 0, "living")]
    return items


def late_day(day: date) -> list[dict[str, Any]]:
    """A day up late: bedroom at 10:30, the kitchen at 11:00, the living room at 12:00. It is
    what tells the morning routine (the kitchen after getting up) from a fixed habit."""
    return [
        motion(day, 10, 30, "bedroom"),
        motion(day, 10, 35, "bedroom", 1),
        motion(day, 11, 0, "kitchen"),
        motion(day, 12, 0, "living"),
    ]


LATE = frozenset({1, 3})  # the days up late in every stream


def stream(days: int, skip: frozenset[int] = frozenset()) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i in range(days):
        day = START + timedelta(days=i)
        items += late_day(day) if i in LATE else routine_day(day, kitchen=i not in skip)
    return items
