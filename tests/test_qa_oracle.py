"""The QA oracle's figures on hand-built events (Activity Frames §6.2): the gap to the next row,
the 60 s cap, interleaved monitors, the local day, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import ast
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from aframes_web.qa import oracle
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.services import entity_create

DAY = date(2026, 3, 2)
# 09:00 local in Berlin (UTC+01:00 in March before the DST change).
NINE = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


class Rows:
    """Stores snapshot events at seconds after 09:00 local, ids in the order they are added."""

    def __init__(self, entity: Entity) -> None:
        self.entity = entity
        self.n = 0

    def add(
        self,
        s: float,
        app: str,
        *,
        monitor: str = "0",
        url: str | None = None,
        kind: str = "snapshot",
        at: datetime | None = None,
    ) -> Event:
        self.n += 1
        payload: dict[str, Any] = {"app": app, "window": f"{app} window"}
        if url is not None:
            payload["url"] = url
        if kind == "input":
            payload = {"type": "click", "app": app}
        return Event.objects.create(
            entity=self.entity,
            occurred_at=at or NINE + timedelta(seconds=s),
            kind=kind,
            source_key=f"t:{self.n}",
            monitor=monitor,
            payload=payload,
            received_at=timezone.now(),
        )


@pytest.fixture
def rows(desktop: Entity) -> Rows:
    return Rows(desktop)


def test_each_row_is_credited_the_gap_to_the_next_and_the_last_row_nothing(rows: Rows) -> None:
    rows.add(0, "Code")
    rows.add(10, "Code")
    rows.add(40, "Slack")
    rows.add(70, "Code")
    rows.add(100, "Firefox")
    assert oracle.ranked_app_seconds(rows.entity, DAY) == [
        ("Code", 70.0),
        ("Slack", 30.0),
        ("Firefox", 0.0),
    ]
    assert oracle.active_seconds(rows.entity, DAY) == 100.0


def test_a_gap_is_capped_at_60_seconds_exactly_at_and_beyond_the_cap(rows: Rows) -> None:
    rows.add(0, "Code")  # 60 s to the next: credited 60
    rows.add(60, "Slack")  # 61 s: capped at 60
    rows.add(121, "Terminal")  # 3 hours: capped at 60
    rows.add(121 + 3 * 3600, "Code")
    assert dict(oracle.ranked_app_seconds(rows.entity, DAY)) == {
        "Code": 60.0,
        "Slack": 60.0,
        "Terminal": 60.0,
    }
    assert oracle.ORACLE_DWELL_CAP_S == 60.0


def test_monitors_interleave_into_one_stream(rows: Rows) -> None:
    for s in (0, 30, 60):
        rows.add(s, "Code", monitor="0")
    for s in (15, 45):
        rows.add(s, "Firefox", monitor="1")
    # 0 (Code) 15 (Firefox) 30 (Code) 45 (Firefox) 60 (Code): each gap is 15 s.
    assert oracle.ranked_app_seconds(rows.entity, DAY) == [("Code", 30.0), ("Firefox", 30.0)]
    assert oracle.active_seconds(rows.entity, DAY) == 60.0


def test_sub_second_gaps_keep_their_microseconds(rows: Rows) -> None:
    rows.add(0, "Code")
    rows.add(0.25, "Slack")
    rows.add(1.75, "Code")
    assert oracle.ranked_app_seconds(rows.entity, DAY) == [("Slack", 1.5), ("Code", 0.25)]


def test_rows_at_the_same_instant_are_ordered_by_id(rows: Rows) -> None:
    rows.add(0, "Code")
    rows.add(0, "Slack")  # same instant: Code's gap is 0, Slack's runs to the next row
    rows.add(20, "Code")
    assert dict(oracle.ranked_app_seconds(rows.entity, DAY)) == {"Slack": 20.0, "Code": 0.0}


def test_only_the_entitys_local_day_and_only_snapshots_count(rows: Rows, team: Any) -> None:
    # 23:59:59 local the day before, and 00:00 local of the next day: outside.
    rows.add(0, "Before", at=datetime(2026, 3, 1, 22, 59, 59, tzinfo=UTC))
    rows.add(0, "Midnight", at=datetime(2026, 3, 1, 23, 0, tzinfo=UTC))  # 00:00 local: inside
    rows.add(0, "Code")
    rows.add(30, "Code")
    rows.add(0, "After", at=datetime(2026, 3, 2, 23, 0, tzinfo=UTC))
    rows.add(10, "Clicked", kind="input")
    other = entity_create(team=team, key="other-laptop", scope="desktop", timezone_name="UTC")
    Rows(other).add(5, "Elsewhere")
    seconds = dict(oracle.ranked_app_seconds(rows.entity, DAY))
    # Midnight's gap to 09:00 is capped; the day's last row gets nothing, though the next
    # day has rows: the day is read alone.
    assert seconds == {"Midnight": 60.0, "Code": 30.0}
    assert oracle.distinct_apps(rows.entity, DAY) == ["Code", "Midnight"]
    assert oracle.row_count(rows.entity, DAY) == 3
    first, last = oracle.activity_span(rows.entity, DAY)
    assert first is not None and last is not None
    assert first.isoformat() == "2026-03-02T00:00:00+01:00"
    assert last.isoformat() == "2026-03-02T09:00:30+01:00"
    assert oracle.snapshot_days(rows.entity) == [
        (date(2026, 3, 1), 1),
        (date(2026, 3, 2), 3),
        (date(2026, 3, 3), 1),
    ]
    assert oracle.distinct_apps(rows.entity) == ["After", "Before", "Code", "Midnight"]


def test_a_local_day_across_the_dst_change_has_23_hours(team: Any) -> None:
    entity = entity_create(team=team, key="dst", scope="desktop", timezone_name="Europe/Berlin")
    start, end = oracle.local_day_bounds(entity, date(2026, 3, 29))
    assert end - start == timedelta(hours=23)
    assert start == datetime(2026, 3, 28, 23, 0, tzinfo=UTC)


def test_domains_are_distinct_lower_case_hosts_without_www(rows: Rows) -> None:
    rows.add(0, "Firefox", url="https://WWW.GitHub.com/acme/app/pull/1")
    rows.add(10, "Firefox", url="https://github.com/acme/app")
    rows.add(20, "Firefox", url="http://localhost:8000/admin")
    rows.add(30, "Firefox", url="about:blank")
    rows.add(40, "Firefox", url="http://[not a url")
    rows.add(50, "Code")
    assert oracle.distinct_domains(rows.entity, DAY) == ["github.com", "localhost"]
    assert oracle.hostname(None) is None and oracle.hostname("") is None


def test_day_figures_gather_every_figure(rows: Rows) -> None:
    rows.add(0, "Code")
    rows.add(40, "Firefox", url="https://docs.python.org/3/")
    rows.add(100, "Code")
    figures = oracle.day_figures(rows.entity, DAY)
    assert figures.rows == 3
    assert figures.active_s == 100.0
    assert figures.ranked_apps == ("Firefox", "Code")
    assert figures.apps == ("Code", "Firefox")
    assert figures.app_minutes("Firefox") == 1.0
    assert figures.domains == ("docs.python.org",)
    assert figures.first_activity is not None
    assert figures.first_activity.strftime("%H:%M") == "09:00"
    assert figures.apps_ever == frozenset({"Code", "Firefox"})
    assert figures.domains_ever == frozenset({"docs.python.org"})


def test_the_history_wide_sets_are_queried_once_when_given(
    rows: Rows, django_assert_num_queries: Any
) -> None:
    rows.add(0, "Code")
    rows.add(40, "Firefox", url="https://docs.python.org/3/")
    ever = {"apps_ever": frozenset({"Code", "Slack"}), "domains_ever": frozenset({"a.org"})}
    oracle.day_figures(rows.entity, DAY)
    with django_assert_num_queries(6):  # the day's own figures only (8 without the sets)
        given = oracle.day_figures(rows.entity, DAY, **ever)
    assert (given.apps_ever, given.domains_ever) == (ever["apps_ever"], ever["domains_ever"])


def test_an_empty_day_has_no_credit_and_no_span(desktop: Entity) -> None:
    assert oracle.active_seconds(desktop, DAY) == 0.0
    assert oracle.ranked_app_seconds(desktop, DAY) == []
    assert oracle.activity_span(desktop, DAY) == (None, None)


def test_the_oracle_shares_no_code_with_the_compiler() -> None:
    source = Path(oracle.__file__).read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert imported, "the oracle imports something"
    assert not any(name == "compiler" or name.startswith("compiler.") for name in imported)
    assert not any(name.startswith("aframes_web.activity") for name in imported)
