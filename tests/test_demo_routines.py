"""SYNTHETIC desktop days with recurring routines (``benchmark.synthetic.desktop``, routines)."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from benchmark.synthetic.desktop import generate_day, generate_days, main

MONDAY = date(2026, 3, 2)
ROUTINE_TARGETS = {
    "triage": ("Inbox", "Archive", "Older"),
    "expense": ("New expense", "Amount", "Merchant", "Category", "Save"),
    "review": ("Files changed", "Review changes", "Approve", "Submit review"),
}


def _named_inputs(records: list[dict]) -> list[tuple[str, str | None]]:
    return [
        (r["payload"]["type"], r["payload"]["element_name"])
        for r in records
        if r["kind"] == "input" and r["payload"]["type"] in ("click", "key", "text")
    ]


def test_routines_off_is_the_default_output() -> None:
    for n in range(3):
        day = MONDAY + timedelta(days=n)
        assert generate_day(day, seed=7) == generate_day(day, seed=7, routines=False)


def test_routine_days_are_deterministic() -> None:
    assert generate_day(MONDAY, seed=3, routines=True) == generate_day(
        MONDAY, seed=3, routines=True
    )


def test_each_routine_recurs_on_some_weekdays_but_not_all() -> None:
    days_with: dict[str, int] = dict.fromkeys(ROUTINE_TARGETS, 0)
    weekdays = 0
    for n in range(21):
        day = MONDAY + timedelta(days=n)
        records = generate_day(day, seed=11, routines=True)
        if day.weekday() >= 5:
            continue
        weekdays += 1
        names = {name for _, name in _named_inputs(records)}
        # "Submit review" and "New expense" exist only on the routines' own pages.
        days_with["review"] += "Submit review" in names
        days_with["expense"] += "New expense" in names
        days_with["triage"] += "Older" in names
    for name, count in days_with.items():
        assert 3 <= count < weekdays, (name, count, weekdays)


def test_an_expense_types_into_named_fields_in_order() -> None:
    for n in range(30):
        records = generate_day(MONDAY + timedelta(days=n), seed=11, routines=True)
        named = [name for kind, name in _named_inputs(records)]
        if "New expense" in named:
            break
    else:  # pragma: no cover - the chance makes this all but impossible
        pytest.fail("no expense in 30 days")
    start = named.index("New expense")
    steps = [name for name in named[start:] if name in ROUTINE_TARGETS["expense"]]
    collapsed = [s for i, s in enumerate(steps) if i == 0 or steps[i - 1] != s]
    assert collapsed[:5] == ["New expense", "Amount", "Merchant", "Category", "Save"]
    typed = [
        r
        for r in records
        if r["kind"] == "input"
        and r["payload"]["type"] == "text"
        and r["payload"]["element_name"] == "Amount"
    ]
    assert typed and typed[0]["payload"]["element_role"] == "AXTextField"


def test_weekends_have_no_routines() -> None:
    saturday = MONDAY + timedelta(days=5)
    names = {n for _, n in _named_inputs(generate_day(saturday, seed=11, routines=True))}
    assert not names & {"New expense", "Submit review", "Older"}


def test_generate_days_and_the_command_line_pass_routines_on(tmp_path, capsys) -> None:
    streamed = list(generate_days(MONDAY, 1, seed=5, routines=True))
    assert streamed == generate_day(MONDAY, seed=5, routines=True)
    out = tmp_path / "day.jsonl"
    assert main(["--start", "2026-03-02", "--seed", "5", "--routines", "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines == streamed
