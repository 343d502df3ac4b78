"""Hand-built desktop days in which a person files an expense every morning (event records).

Each day, 09:00-09:04 local (Europe/Berlin, +01:00 in March): the expenses page in Chrome,
then New expense, typing into Amount and Merchant, Category, Save, each a named input (the
accessibility API named the element), a snapshot every 10 s. Then ten minutes in Code.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

FIRST = date(2026, 3, 2)  # a Monday
URL = "https://expenses.example.com/reports/2026-03"
STEPS = (  # seconds after 09:00, input type, element name, role
    (12, "click", "New expense", "AXButton"),
    (22, "key", "Amount", "AXTextField"),
    (32, "key", "Merchant", "AXTextField"),
    (42, "click", "Category", "AXPopUpButton"),
    (52, "click", "Save", "AXButton"),
)
EXPENSE_TARGETS = [name for _, _, name, _ in STEPS]


def _at(day: date, seconds: int) -> str:
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{day}T{9 + hour:02d}:{minute:02d}:{second:02d}+01:00"


def expense_day(day: date) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    window = "Expenses March 2026 - Acme Expenses"
    for s in range(0, 240, 10):
        url = URL if s < 20 else f"{URL}/new"
        records.append(
            {
                "occurred_at": _at(day, s),
                "kind": "snapshot",
                "source_key": f"{day}:s:{s}",
                "monitor": "0",
                "payload": {"app": "Google Chrome", "window": window, "url": url, "focused": True},
            }
        )
    for s, kind, name, role in STEPS:
        records.append(
            {
                "occurred_at": _at(day, s + 1),
                "kind": "input",
                "source_key": f"{day}:i:{s}",
                "monitor": "0",
                "payload": {
                    "type": kind,
                    "app": "Google Chrome",
                    "window": window,
                    "url": URL if s < 20 else f"{URL}/new",
                    "element_name": name,
                    "element_role": role,
                },
            }
        )
    for s in range(240, 840, 20):
        records.append(
            {
                "occurred_at": _at(day, s),
                "kind": "snapshot",
                "source_key": f"{day}:c:{s}",
                "monitor": "0",
                "payload": {"app": "Code", "window": "main.py", "focused": True},
            }
        )
    return records


def expense_days(count: int, first: date = FIRST) -> list[dict[str, Any]]:
    return [r for n in range(count) for r in expense_day(first + timedelta(days=n))]


TRIAGE = (  # seconds after 10:00: the inbox, then Archive and Older through the conversations
    (5, "click", "Inbox", "AXLink"),
    (15, "click", "Archive", "AXButton"),
    (25, "click", "Older", "AXButton"),
    (35, "click", "Archive", "AXButton"),
)


def triage_day(day: date) -> list[dict[str, Any]]:
    """A second routine on the same day, at 10:00 in Gmail (an hour after the expense)."""
    url = "https://mail.google.com/mail/u/0/#inbox"
    records: list[dict[str, Any]] = [
        {
            "occurred_at": _at(day, 3600 + s),
            "kind": "snapshot",
            "source_key": f"{day}:gs:{s}",
            "monitor": "0",
            "payload": {"app": "Google Chrome", "window": "Inbox - Gmail", "url": url},
        }
        for s in range(0, 120, 10)
    ]
    records += [
        {
            "occurred_at": _at(day, 3600 + s + 1),
            "kind": "input",
            "source_key": f"{day}:gi:{s}",
            "monitor": "0",
            "payload": {
                "type": kind,
                "app": "Google Chrome",
                "window": "Inbox - Gmail",
                "url": url,
                "element_name": name,
                "element_role": role,
            },
        }
        for s, kind, name, role in TRIAGE
    ]
    return records
