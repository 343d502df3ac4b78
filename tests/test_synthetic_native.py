"""The SYNTHETIC native-format writers: screenpipe-style SQLite and ActivityWatch export."""

from __future__ import annotations

import ast
import json
import sqlite3
import subprocess
import sys
from collections import Counter
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from benchmark.synthetic import native
from benchmark.synthetic.desktop import generate_day
from benchmark.synthetic.native import (
    AFK_TIMEOUT_S,
    write_activitywatch,
    write_screenpipe,
)

ROOT = Path(__file__).resolve().parent.parent
DAY = date(2026, 3, 2)


@cache
def _day() -> tuple[dict[str, Any], ...]:
    return tuple(generate_day(DAY, seed=7))


def day() -> list[dict[str, Any]]:
    return [json.loads(json.dumps(r)) for r in _day()]


def epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def columns(connection: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]


def test_module_uses_only_the_standard_library() -> None:
    tree = ast.parse(Path(native.__file__).read_text())
    imported = {n.names[0].name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)}
    imported |= {
        n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    }
    # Of the project, only the other synthetic generators beside it (plain Python, no Django).
    assert imported <= set(sys.stdlib_module_names) | {"__future__", "benchmark"}
    project = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert all(m.startswith("benchmark.synthetic") for m in project if m.startswith("benchmark"))
    assert "SYNTHETIC" in (native.__doc__ or "")
    assert "SYNTHETIC" in (native.write_screenpipe.__doc__ or "")
    assert "SYNTHETIC" in (native.write_activitywatch.__doc__ or "")


def test_screenpipe_database_has_every_table_and_column(tmp_path: Path) -> None:
    records = day()
    path = tmp_path / "capture.sqlite"
    counts = write_screenpipe(path, records)
    kinds = Counter(r["kind"] for r in records)
    trees = sum(len(r["payload"]["elements"]) for r in records if r["kind"] == "elements")
    assert counts == {"frames": kinds["snapshot"], "ui_events": kinds["input"], "elements": trees}
    connection = sqlite3.connect(path)
    try:
        assert columns(connection, "frames") == [
            "id", "timestamp", "app_name", "window_name", "browser_url", "focused", "device_name",
        ]  # fmt: skip
        assert columns(connection, "ui_events") == [
            "id", "timestamp", "event_type", "x", "y", "text_content", "app_name",
            "window_title", "browser_url", "element_name", "element_role",
            "element_automation_id", "frame_id",
        ]  # fmt: skip
        assert columns(connection, "elements") == [
            "id", "frame_id", "source", "role", "text", "left_bound", "top_bound",
            "width_bound", "height_bound", "parent_id",
        ]  # fmt: skip
        devices = {row[0] for row in connection.execute("SELECT DISTINCT device_name FROM frames")}
        assert devices == {"monitor_0", "monitor_1"}
        focused = dict(connection.execute("SELECT focused, count(*) FROM frames GROUP BY 1"))
        unfocused = sum(
            1 for r in records if r["kind"] == "snapshot" and r["payload"]["focused"] is False
        )
        assert focused == {0: unfocused, 1: kinds["snapshot"] - unfocused}
        stamp = connection.execute("SELECT timestamp FROM frames WHERE id = 1").fetchone()[0]
        assert stamp.endswith("+00:00") and epoch(stamp) == epoch(records[0]["occurred_at"])
        # Every link points at a row that exists.
        assert connection.execute(
            "SELECT count(*) FROM ui_events u LEFT JOIN frames f ON f.id = u.frame_id "
            "WHERE f.id IS NULL"
        ).fetchone() == (0,)
        assert connection.execute(
            "SELECT count(*) FROM elements e JOIN elements p ON p.id = e.parent_id "
            "WHERE p.frame_id != e.frame_id"
        ).fetchone() == (0,)
        assert (
            connection.execute(
                "SELECT min(left_bound), max(left_bound + width_bound) FROM elements"
            ).fetchone()[1]
            <= 1.01
        )
        assert connection.execute(
            "SELECT count(*) FROM ui_events WHERE text_content IS NOT NULL"
        ).fetchone()[0] == sum(
            1 for r in records if r["kind"] == "input" and r["payload"].get("text") is not None
        )
    finally:
        connection.close()


def test_screenpipe_writer_replaces_and_repeats_byte_for_byte(tmp_path: Path) -> None:
    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    write_screenpipe(first, day())
    write_screenpipe(second, day())
    assert first.read_bytes() == second.read_bytes()
    write_screenpipe(first, day()[:10])
    connection = sqlite3.connect(first)
    try:
        total = sum(
            connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("frames", "ui_events")
        )
    finally:
        connection.close()
    assert total <= 10


def test_activitywatch_export_has_three_kinds_of_buckets_newest_first(tmp_path: Path) -> None:
    records = day()
    path = tmp_path / "export.json"
    counts = write_activitywatch(path, records, hostname="lab-7")
    export = json.loads(path.read_text())
    buckets = export["buckets"]
    assert sorted(buckets) == [
        "aw-watcher-afk_lab-7",
        "aw-watcher-web-chrome_lab-7",
        "aw-watcher-web-firefox_lab-7",
        "aw-watcher-window_lab-7",
    ]
    assert counts == {key: len(bucket["events"]) for key, bucket in buckets.items()}
    types = {key.split("_")[0]: bucket["type"] for key, bucket in buckets.items()}
    assert types == {
        "aw-watcher-afk": "afkstatus",
        "aw-watcher-web-chrome": "web.tab.current",
        "aw-watcher-web-firefox": "web.tab.current",
        "aw-watcher-window": "currentwindow",
    }
    for key, bucket in buckets.items():
        assert bucket["id"] == key and bucket["hostname"] == "lab-7"
        events = bucket["events"]
        assert events, key
        times = [epoch(e["timestamp"]) for e in events]
        assert times == sorted(times, reverse=True), f"{key} is not newest first"
        assert all("id" not in e and e["duration"] >= 0 for e in events)
        assert bucket["created"] == events[-1]["timestamp"]

    window = sorted(
        (epoch(e["timestamp"]), e["duration"], e["data"])
        for e in buckets["aw-watcher-window_lab-7"]["events"]
    )
    assert all(set(data) == {"app", "title"} for _, _, data in window)
    # Intervals do not overlap and consecutive ones differ: they were merged by (app, title).
    for (a, d, data), (b, _, following) in zip(window, window[1:], strict=False):
        assert a + d <= b + 1e-6
        assert a + d < b - 1e-6 or data != following
    first = next(r for r in records if r["kind"] == "snapshot")
    assert window[0][0] == epoch(first["occurred_at"])
    web = buckets["aw-watcher-web-firefox_lab-7"]["events"]
    assert set(web[0]["data"]) == {"url", "title", "audible", "incognito", "tabCount"}
    assert all(e["data"]["url"].startswith("https://") for e in web)


def test_activitywatch_afk_bucket_follows_input_gaps(tmp_path: Path) -> None:
    records = day()
    path = tmp_path / "export.json"
    write_activitywatch(path, records)
    events = json.loads(path.read_text())["buckets"]["aw-watcher-afk_demo-host"]["events"]
    spans = sorted((epoch(e["timestamp"]), e["duration"], e["data"]["status"]) for e in events)
    inputs = sorted(epoch(r["occurred_at"]) for r in records if r["kind"] == "input")
    gaps = [(a, b) for a, b in zip(inputs, inputs[1:], strict=False) if b - a > AFK_TIMEOUT_S]
    afk = [(a, a + d) for a, d, status in spans if status == "afk"]
    assert [t for span in afk for t in span] == pytest.approx(
        [t for gap in gaps for t in gap], abs=1e-6
    )
    assert [status for *_, status in spans][:1] == ["not-afk"]
    assert spans[0][0] == pytest.approx(inputs[0], abs=1e-6)
    assert spans[-1][0] + spans[-1][1] == pytest.approx(inputs[-1], abs=1e-6)
    # Statuses alternate, and the spans tile the time from the first input to the last.
    statuses = [status for *_, status in spans]
    assert all(a != b for a, b in zip(statuses, statuses[1:], strict=False))
    for (a, d, _), (b, _, _) in zip(spans, spans[1:], strict=False):
        assert a + d == pytest.approx(b, abs=1e-6)


def test_activitywatch_writer_rejects_odd_host_names(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="hostname"):
        write_activitywatch(tmp_path / "x.json", day(), hostname="bad host/")


@pytest.mark.parametrize("kind", ["screenpipe", "activitywatch"])
def test_cli_writes_the_format(tmp_path: Path, kind: str) -> None:
    out = tmp_path / f"day.{kind}"
    result = subprocess.run(
        [
            sys.executable, "-m", "benchmark.synthetic.native", "--format", kind,
            "--start", "2026-03-02", "--days", "1", "--seed", "7", "--out", str(out),
        ],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote SYNTHETIC {kind} capture to {out}")
    if kind == "screenpipe":
        reference = tmp_path / "reference.sqlite"
        write_screenpipe(reference, day())
        assert out.read_bytes() == reference.read_bytes()
    else:
        reference = tmp_path / "reference.json"
        write_activitywatch(reference, day())
        assert out.read_bytes() == reference.read_bytes()


def test_cli_rejects_bad_arguments(tmp_path: Path) -> None:
    for args in (
        ["--format", "csv", "--out", str(tmp_path / "x")],
        ["--format", "screenpipe"],
        ["--format", "screenpipe", "--days", "0", "--out", str(tmp_path / "x")],
        ["--format", "activitywatch", "--tz", "Mars/Base", "--out", str(tmp_path / "x")],
    ):
        with pytest.raises(SystemExit) as caught:
            native.main(args)
        assert caught.value.code == 2
    assert not (tmp_path / "x").exists()
