"""The capture readers: screenpipe SQLite, ActivityWatch export, JSONL and our event records.

Round trips go through SYNTHETIC days written in each recorder's native format
(``benchmark.synthetic.native``) and compare what the readers return with the records.
"""

from __future__ import annotations

import ast
import copy
import gzip
import hashlib
import json
import math
import sqlite3
import sys
from collections.abc import Callable, Iterator
from dataclasses import astuple, replace
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler.sources
from benchmark.synthetic.aw_day import generate as generate_aw
from benchmark.synthetic.desktop import generate_day, write_jsonl
from benchmark.synthetic.native import (
    activitywatch_export,
    write_activitywatch,
    write_screenpipe,
)
from compiler.capture import Absence, Capture, Element, InputEvent, Snapshot
from compiler.sources import SourceError, activitywatch, jsonl, open_source, screenpipe
from compiler.sources.activitywatch import EMULATION, EVENT_STRIDE, HEARTBEAT_S, ID_FLOOR
from compiler.sources.events import capture_from_records
from compiler.sources.screenpipe import INPUT_ID_BASE

DAY = date(2026, 3, 2)
SOURCES = Path(compiler.sources.__file__).resolve().parent


@cache
def _row(start: float) -> int:
    """The id of the first row of an ActivityWatch event starting at ``start`` (Unix time), the
    only one in its second: its start in whole seconds, then the row number."""
    return math.floor(start) * EVENT_STRIDE


def _day() -> tuple[dict[str, Any], ...]:
    return tuple(generate_day(DAY, seed=7))


def day() -> list[dict[str, Any]]:
    return [json.loads(json.dumps(r)) for r in _day()]  # a private copy per test


def epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def at(hour: int, minute: int = 0, second: float = 0.0) -> float:
    return datetime(2026, 3, 2, hour, minute, tzinfo=UTC).timestamp() + second


def is_sorted(capture: Capture) -> bool:
    keys = [(s.t, s.id) for s in capture.snapshots], [(e.t, e.id) for e in capture.inputs]
    return all(a < b for rows in keys for a, b in zip(rows, rows[1:], strict=False))


def focused_snapshots(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows ActivityWatch's window watcher would see (the AW writer exports only these)."""
    return [
        r for r in records if r["kind"] == "snapshot" and r["payload"].get("focused") is not False
    ]


def all_trees(capture: Capture) -> dict[int, list[Element]]:
    """Every element tree of the capture, loaded the way the compiler loads them."""
    return capture.elements_for([s.id for s in capture.snapshots])


def contents(capture: Capture) -> tuple[object, ...]:
    """Everything a read returned, with element trees loaded (two loaders never compare equal)."""
    return (
        capture.snapshots,
        capture.inputs,
        capture.elements,
        all_trees(capture),
        capture.absences,
        capture.recorder,
        capture.reader,
        capture.disclosures,
        capture.screen,
    )


def written_trees(
    records: list[dict[str, Any]], frame_id: dict[str, int]
) -> dict[int, list[Element]]:
    """The element trees of ``records`` as the screenpipe writer stored them, by frame id."""
    trees: dict[int, list[Element]] = {}
    for r in records:
        if r["kind"] == "elements" and r["payload"]["snapshot"] in frame_id:
            trees.setdefault(frame_id[r["payload"]["snapshot"]], []).extend(
                Element(
                    frame_id[r["payload"]["snapshot"]],
                    node["role"],
                    node["name"],
                    None if node["bounds"] is None else tuple(node["bounds"]),
                )
                for node in r["payload"]["elements"]
            )
    return {k: v for k, v in trees.items() if v}


@pytest.fixture
def sp_day(tmp_path: Path) -> Path:
    path = tmp_path / "capture.sqlite"
    write_screenpipe(path, day())
    return path


@pytest.fixture
def aw_day(tmp_path: Path) -> Path:
    path = tmp_path / "aw-export.json"
    write_activitywatch(path, day())
    return path


def make_db(path: Path, script: str, rows: dict[str, list[tuple[Any, ...]]]) -> Path:
    connection = sqlite3.connect(path)
    with connection:
        connection.executescript(script)
        for table, values in rows.items():
            if values:
                marks = ", ".join("?" * len(values[0]))
                connection.executemany(f"INSERT INTO {table} VALUES ({marks})", values)
    connection.close()
    return path


# --------------------------------------------------------------------------------------------
# screenpipe
# --------------------------------------------------------------------------------------------


def test_screenpipe_round_trip_keeps_every_row_and_field(sp_day: Path) -> None:
    records = day()
    capture = screenpipe.read(sp_day)
    assert (capture.recorder, capture.reader) == ("screenpipe", "screenpipe")
    assert is_sorted(capture)

    snapshot_records = [r for r in records if r["kind"] == "snapshot"]
    frame_id = {r["source_key"]: n for n, r in enumerate(snapshot_records, start=1)}
    expected = [
        Snapshot(
            frame_id[r["source_key"]],
            epoch(r["occurred_at"]),
            f"monitor_{r['monitor']}",
            r["payload"]["app"],
            r["payload"]["window"],
            r["payload"]["url"],
        )
        for r in snapshot_records
    ]
    assert capture.snapshots == sorted(expected, key=lambda s: (s.t, s.id))
    # Unfocused frames are kept: each monitor is its own stream (§4.2).
    unfocused = {frame_id[r["source_key"]] for r in snapshot_records} - {
        frame_id[r["source_key"]] for r in focused_snapshots(records)
    }
    assert unfocused and unfocused <= {s.id for s in capture.snapshots}

    input_records = [r for r in records if r["kind"] == "input"]
    expected_inputs = [
        InputEvent(
            INPUT_ID_BASE + n,
            epoch(r["occurred_at"]),
            r["payload"]["type"],
            f"monitor_{r['monitor']}",
            r["payload"]["x"],
            r["payload"]["y"],
            r["payload"]["app"],
            r["payload"]["window"],
            r["payload"]["url"],
            r["payload"]["element_name"],
            r["payload"]["element_role"],
            r["payload"].get("text"),
        )
        for n, r in enumerate(input_records, start=1)
    ]
    assert capture.inputs == expected_inputs
    assert any(e.text for e in capture.inputs)  # typed text stays; the compiler decides

    # Element trees are loaded on demand; every tree written comes back, every field of it.
    assert capture.elements == [] and capture.element_loader is not None
    trees = all_trees(capture)
    assert trees == written_trees(records, frame_id)
    assert sum(len(tree) for tree in trees.values()) == sum(
        len(r["payload"]["elements"]) for r in records if r["kind"] == "elements"
    )
    assert unfocused & set(trees)  # unfocused frames keep their trees too
    assert all(type(v) is float for tree in trees.values() for e in tree for v in e.bounds or ())
    assert capture.disclosures == []


def test_screenpipe_and_jsonl_readers_agree_on_the_same_day(sp_day: Path, tmp_path: Path) -> None:
    path = tmp_path / "day.jsonl"
    write_jsonl(path, day())
    from_db = screenpipe.read(sp_day)
    from_jsonl = jsonl.read(path)

    def rows(capture: Capture) -> list[tuple[object, ...]]:
        return [(s.t, s.monitor[-1], s.app, s.window, s.url) for s in capture.snapshots]

    assert rows(from_db) == rows(from_jsonl)
    assert [(e.t, e.type, e.text) for e in from_db.inputs] == [
        (e.t, e.type, e.text) for e in from_jsonl.inputs
    ]
    assert len(from_db.snapshots) == sum(1 for r in day() if r["kind"] == "snapshot")


def _key(snapshot: Snapshot) -> tuple[float, str]:
    """A snapshot's time and monitor: ids differ between readers, these do not."""
    return snapshot.t, snapshot.monitor.removeprefix("monitor_")


def test_screenpipe_and_jsonl_give_the_same_element_trees_for_the_same_snapshots(
    sp_day: Path, tmp_path: Path
) -> None:
    path = tmp_path / "day.jsonl"
    write_jsonl(path, day())
    from_db = screenpipe.read(sp_day)
    from_jsonl = jsonl.read(path)
    assert from_db.elements == [] and from_jsonl.element_loader is None  # lazy vs in memory

    def trees(capture: Capture) -> dict[tuple[float, str], list[tuple[object, ...]]]:
        where = {s.id: _key(s) for s in capture.snapshots}
        assert len(set(where.values())) == len(where)
        return {
            where[snapshot_id]: [(e.role, e.name, e.bounds) for e in tree]
            for snapshot_id, tree in all_trees(capture).items()
        }

    db_trees, jsonl_trees = trees(from_db), trees(from_jsonl)
    assert db_trees == jsonl_trees
    assert len(db_trees) == sum(1 for r in day() if r["kind"] == "elements")
    # Asking for a few snapshots, as the compiler does, gives the same trees as well.
    db_id = {key: s.id for s in from_db.snapshots if (key := _key(s)) in db_trees}
    jsonl_id = {_key(s): s.id for s in from_jsonl.snapshots}
    some = sorted(db_id)[::9]
    asked_db = from_db.elements_for([db_id[k] for k in some])
    asked_jsonl = from_jsonl.elements_for([jsonl_id[k] for k in some])
    assert len(asked_db) == len(asked_jsonl) == len(some) > 1
    for k in some:
        assert [(e.role, e.name, e.bounds) for e in asked_db[db_id[k]]] == db_trees[k]
        assert [(e.role, e.name, e.bounds) for e in asked_jsonl[jsonl_id[k]]] == db_trees[k]


def test_screenpipe_window_is_half_open_and_ids_are_stable(sp_day: Path) -> None:
    whole = screenpipe.read(sp_day)
    again = screenpipe.read(sp_day)
    assert contents(whole) == contents(again)
    start, end = whole.snapshots[100].t, whole.snapshots[400].t
    part = screenpipe.read(sp_day, start, end)
    assert part.snapshots == [s for s in whole.snapshots if start <= s.t < end]
    assert part.snapshots[0] == whole.snapshots[100]  # start is included, end is not
    assert part.inputs == [e for e in whole.inputs if start <= e.t < end]
    kept = {s.id for s in part.snapshots}
    trees = {k: v for k, v in all_trees(whole).items() if k in kept}
    assert trees and all_trees(part) == trees
    # A window's loader serves only its own snapshots, even when asked for others.
    assert part.elements_for({s.id for s in whole.snapshots}) == trees
    assert screenpipe.read(sp_day, None, start).snapshots == whole.snapshots[:100]
    assert screenpipe.read(sp_day, end, None).snapshots == whole.snapshots[400:]
    assert screenpipe.read(sp_day, end, start).snapshots == []


def test_screenpipe_elements_for_returns_the_trees_of_reading_everything(sp_day: Path) -> None:
    records = day()
    capture = screenpipe.read(sp_day)
    snapshot_records = [r for r in records if r["kind"] == "snapshot"]
    frame_id = {r["source_key"]: n for n, r in enumerate(snapshot_records, start=1)}
    everything = written_trees(records, frame_id)
    ids = [s.id for s in capture.snapshots]
    assert capture.elements_for(ids) == everything  # past 500 ids: one range scan
    with_trees = sorted(everything)
    for subset in (with_trees[::7], with_trees[3::50], ids[::11], with_trees[:1]):
        # Under 500 ids: fetched by frame id; snapshots without a tree get no entry.
        assert len(subset) <= 500
        assert capture.elements_for(subset) == {
            k: v for k, v in everything.items() if k in set(subset)
        }
    assert capture.elements_for([]) == {}
    assert capture.elements_for([0, 10**9, INPUT_ID_BASE + 1]) == {}  # not snapshots
    assert capture.elements == []  # loading never fills the eager list
    assert capture.disclosures == []  # the synthetic trees have no OCR rows


def test_screenpipe_input_ids_cannot_meet_snapshot_ids(sp_day: Path) -> None:
    capture = screenpipe.read(sp_day)
    assert max(s.id for s in capture.snapshots) < INPUT_ID_BASE
    assert min(e.id for e in capture.inputs) > INPUT_ID_BASE


def test_screenpipe_opens_the_database_read_only(sp_day: Path) -> None:
    before = (sp_day.stat().st_mtime_ns, hashlib.sha256(sp_day.read_bytes()).hexdigest())
    screenpipe.read(sp_day, at(9), at(10))
    after = (sp_day.stat().st_mtime_ns, hashlib.sha256(sp_day.read_bytes()).hexdigest())
    assert before == after
    assert sorted(p.name for p in sp_day.parent.iterdir()) == [sp_day.name]  # no journal left
    connection = screenpipe.connect(sp_day)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly|read-only|query_only"):
            connection.execute("DELETE FROM frames")
        with pytest.raises(sqlite3.OperationalError):
            connection.execute("CREATE TABLE sneaky (x)")
    finally:
        connection.close()
    assert hashlib.sha256(sp_day.read_bytes()).hexdigest() == before[1]


def test_an_open_capture_database_reads_as_one_shot_reads_do(sp_day: Path) -> None:
    with screenpipe.CaptureDatabase(sp_day) as database:
        assert database.time_span() == screenpipe.time_span(sp_day)
        for low, high in ((at(9), at(10)), (at(10), at(12)), (None, None)):
            assert contents(database.read(low, high)) == contents(
                screenpipe.read(sp_day, low, high)
            )
        kept = database.read(at(9), at(12))
    # A capture read through a database closed since then loads its trees on its own connection.
    assert all_trees(kept) == all_trees(screenpipe.read(sp_day, at(9), at(12)))
    assert sorted(p.name for p in sp_day.parent.iterdir()) == [sp_day.name]
    with pytest.raises(SourceError, match="capture.sqlite: the capture database was closed"):
        database.read()


def test_an_open_capture_database_sees_rows_and_columns_added_while_it_is_open(
    tmp_path: Path,
) -> None:
    path = make_db(
        tmp_path / "live.sqlite",
        OLD_FRAMES,
        {"frames": [(1, "2026-03-02T09:00:00Z", "Code", "a.py", None)]},
    )
    with screenpipe.CaptureDatabase(path) as database:
        first = database.read()
        assert [s.id for s in first.snapshots] == [1]
        assert "The frames table has no device_name column" in first.disclosures[0]
        # The recorder goes on writing, and a newer version of it adds a column.
        recorder = sqlite3.connect(path)
        with recorder:
            recorder.execute("ALTER TABLE frames ADD COLUMN device_name TEXT")
            recorder.execute(
                "INSERT INTO frames VALUES (2, '2026-03-02T09:00:05Z', 'Slack', NULL, NULL, 'm1')"
            )
        recorder.close()
        again = database.read()
    assert [(s.id, s.monitor) for s in again.snapshots] == [(1, "0"), (2, "m1")]
    assert not any("device_name" in sentence for sentence in again.disclosures)


def test_a_compile_only_read_leaves_out_each_input_events_own_app_window_and_url(
    sp_day: Path,
) -> None:
    full = screenpipe.read(sp_day, at(9), at(12))
    lean = screenpipe.read(sp_day, at(9), at(12), input_context=False)
    assert any(e.app for e in full.inputs) and any(e.window for e in full.inputs)
    assert lean.inputs == [replace(e, app=None, window=None, url=None) for e in full.inputs]
    assert contents(lean)[2:] == contents(full)[2:] and lean.snapshots == full.snapshots
    via_spec = open_source(f"screenpipe:{sp_day}", at(9), at(12), input_context=False)
    assert via_spec.inputs == lean.inputs


def test_a_missing_capture_database_cannot_be_opened(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="nothing.sqlite: no such file"):
        screenpipe.CaptureDatabase(tmp_path / "nothing.sqlite")


OLD_FRAMES = """
CREATE TABLE frames (id INTEGER PRIMARY KEY, timestamp TEXT, app_name TEXT,
                     window_name TEXT, browser_url TEXT);
"""


def test_screenpipe_older_schema_reads_with_disclosures(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "old.sqlite",
        OLD_FRAMES,
        {
            "frames": [
                (1, "2026-03-02T09:00:00.250000", "Code", "a.py", None),
                (2, "2026-03-02T09:00:10Z", "Firefox", "Docs", "https://example.org/"),
                (3, "2026-03-02 09:00:20.5", "Slack", None, None),
                (4, "2026-03-02T09:00:30+00:00", "", None, None),
            ]
        },
    )
    capture = screenpipe.read(path)
    assert [(s.id, s.t, s.monitor, s.app) for s in capture.snapshots] == [
        (1, at(9, 0, 0.25), "0", "Code"),
        (2, at(9, 0, 10), "0", "Firefox"),
        (3, at(9, 0, 20.5), "0", "Slack"),
    ]
    assert capture.inputs == [] and capture.elements == []
    assert capture.element_loader is None and all_trees(capture) == {}
    assert capture.disclosures == [
        "The frames table has no device_name column (an older schema); every snapshot is on "
        "monitor 0.",
        "1 frame without an app name was left out.",
        "The database has no ui_events table (an older schema); no input events were read.",
        "The database has no elements table (an older schema); no element trees were read.",
        "2 timestamps had no UTC offset and were read as UTC.",
    ]


def test_screenpipe_tolerates_missing_optional_columns_of_ui_events_and_elements(
    tmp_path: Path,
) -> None:
    path = make_db(
        tmp_path / "mixed.sqlite",
        OLD_FRAMES
        + """
        CREATE TABLE ui_events (timestamp TEXT, event_type TEXT, x INTEGER, y INTEGER,
                                text_content TEXT, app_name TEXT, window_title TEXT,
                                browser_url TEXT, element_name TEXT, element_role TEXT);
        CREATE TABLE elements (frame_id INTEGER, source TEXT, role TEXT, text TEXT,
                               "left" REAL, "top" REAL, width REAL, height REAL);
        """,
        {
            "frames": [(7, "2026-03-02T09:00:00Z", "Code", "a.py", None)],
            "ui_events": [
                ("2026-03-02T09:00:01Z", "click", 10, 20, None, "Code", "a.py", None, "Run", "B"),
                (
                    "2026-03-02T09:00:02Z",
                    "mouse_move",
                    11,
                    21,
                    None,
                    "Code",
                    None,
                    None,
                    None,
                    None,
                ),
                ("2026-03-02T09:00:03Z", "KEY", None, None, "x", "Code", None, None, None, None),
            ],
            "elements": [
                (7, "accessibility", "AXButton", "Run", 0.5, 0.25, 0.125, 0.0625),
                (7, "ocr", None, "hello", None, None, None, None),
            ],
        },
    )
    capture = screenpipe.read(path)
    assert capture.inputs == [
        InputEvent(INPUT_ID_BASE + 1, at(9, 0, 1), "click", "0", 10.0, 20.0, "Code", "a.py",
                   None, "Run", "B", None),
        InputEvent(INPUT_ID_BASE + 3, at(9, 0, 3), "key", "0", None, None, "Code", None,
                   None, None, None, "x"),
    ]  # fmt: skip
    ocr = (
        "1 element came from OCR rather than the accessibility tree; element records do not "
        "mark which."
    )
    assert ocr not in capture.disclosures  # counted when the trees are loaded
    assert capture.elements == []
    assert capture.elements_for([7]) == {
        7: [
            Element(7, "AXButton", "Run", (0.5, 0.25, 0.125, 0.0625)),
            Element(7, "", "hello", None),
        ]
    }
    assert ocr in capture.disclosures
    assert (
        "The ui_events table has no id column; input ids come from SQLite rowids, which a "
        "VACUUM may renumber." in capture.disclosures
    )
    assert "1 ui_events row of other types (mouse_move) was left out." in capture.disclosures


def test_screenpipe_input_monitor_comes_from_its_frame(tmp_path: Path) -> None:
    script = """
        CREATE TABLE frames (id INTEGER PRIMARY KEY, timestamp TEXT, app_name TEXT,
                             window_name TEXT, browser_url TEXT, focused INTEGER,
                             device_name TEXT);
        CREATE TABLE ui_events (id INTEGER PRIMARY KEY, timestamp TEXT, event_type TEXT);
    """
    path = make_db(
        tmp_path / "noframe.sqlite",
        script,
        {
            "frames": [(1, "2026-03-02T09:00:00Z", "Code", None, None, None, "monitor_2")],
            "ui_events": [(1, "2026-03-02T09:00:01Z", "key")],
        },
    )
    capture = screenpipe.read(path)
    assert capture.snapshots[0].monitor == "monitor_2"  # focused is NULL: read all the same
    assert capture.inputs[0].monitor == "0"
    assert (
        "The ui_events table has no frame_id column (an older schema); every input event is "
        "on monitor 0." in capture.disclosures
    )
    assert any("no x, y, text_content" in d for d in capture.disclosures)


def test_screenpipe_selects_the_window_whatever_the_timestamp_spelling(tmp_path: Path) -> None:
    stamps = [
        "2026-03-02T08:59:59.999999Z",  # just before
        "2026-03-02T09:00:00Z",  # exactly the start: in
        "2026-03-02T09:00:00.000001+00:00",
        "2026-03-02 09:30:00",  # naive, space separator
        "2026-03-02T09:45:00.5+00:30",  # 09:15:00.5 UTC: in
        "2026-03-02T09:59:30-00:30",  # 10:29:30 UTC: out
        "2026-03-02T10:00:00+00:00",  # exactly the end: out
        "2026-03-03T09:30:00Z",  # next day
        "yesterday",  # unreadable
    ]
    path = make_db(
        tmp_path / "stamps.sqlite",
        OLD_FRAMES,
        {"frames": [(n, s, "Code", None, None) for n, s in enumerate(stamps, start=1)]},
    )
    capture = screenpipe.read(path, at(9), at(10))
    assert [s.id for s in capture.snapshots] == [2, 3, 5, 4]
    assert capture.snapshots[2].t == at(9, 15, 0.5)
    assert capture.snapshots[1].t == at(9, 0, 0.000001)
    assert "1 timestamp had no UTC offset and was read as UTC." in capture.disclosures
    assert any(d.startswith("1 timestamp carried a non-UTC offset") for d in capture.disclosures)
    everything = screenpipe.read(path)
    assert len(everything.snapshots) == 8
    assert "1 row with an unreadable timestamp was left out." in everything.disclosures


def test_screenpipe_frames_sharing_an_element_tree_each_get_it(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "refs.sqlite",
        """
        CREATE TABLE frames (id INTEGER PRIMARY KEY, timestamp TEXT, app_name TEXT,
                             window_name TEXT, browser_url TEXT, elements_ref_frame_id INTEGER);
        CREATE TABLE elements (id INTEGER PRIMARY KEY, frame_id INTEGER, source TEXT,
                               role TEXT, text TEXT, left_bound REAL, top_bound REAL,
                               width_bound REAL, height_bound REAL, parent_id INTEGER);
        """,
        {
            "frames": [
                (1, "2026-03-02T09:00:00Z", "Code", None, None, None),
                (2, "2026-03-02T09:00:05Z", "Code", None, None, 1),
                (3, "2026-03-02T09:00:09Z", "Code", None, None, 3),
                (4, "2026-03-02T09:00:10Z", "Code", None, None, None),  # no tree at all
            ],
            "elements": [
                (1, 1, "accessibility", "AXWindow", "a.py", 0, 0, 1, 1, None),
                (2, 1, "accessibility", "AXButton", "Run", 0.5, 0.5, 0.1, 0.1, 1),
                (3, 3, "accessibility", "AXWindow", "b.py", 0, 0, 1, 1, None),
            ],
        },
    )
    capture = screenpipe.read(path)

    def names(trees: dict[int, list[Element]]) -> list[tuple[int, str | None]]:
        return [(e.snapshot_id, e.name) for k in sorted(trees) for e in trees[k]]

    trees = capture.elements_for([1, 2, 3, 4])
    assert trees[2] == [
        Element(2, "AXWindow", "a.py", (0.0, 0.0, 1.0, 1.0)),
        Element(2, "AXButton", "Run", (0.5, 0.5, 0.1, 0.1)),
    ]
    assert names(trees) == [
        (1, "a.py"), (1, "Run"), (2, "a.py"), (2, "Run"), (3, "b.py"),
    ]  # fmt: skip
    assert trees[1][0].bounds == (0.0, 0.0, 1.0, 1.0)
    assert all(type(v) is float for tree in trees.values() for e in tree for v in e.bounds or ())
    # Asked for frame 2 alone, the loader still reads frame 1's rows and gives them to 2.
    assert names(capture.elements_for([2])) == [(2, "a.py"), (2, "Run")]
    # From the window on, frame 1 is outside but frame 2 still shows its tree.
    later = screenpipe.read(path, at(9, 0, 1))
    assert names(later.elements_for([1, 2, 3])) == [
        (2, "a.py"), (2, "Run"), (3, "b.py"),
    ]  # fmt: skip


def test_screenpipe_rejects_files_that_are_not_capture_databases(tmp_path: Path) -> None:
    text = tmp_path / "notes.sqlite"
    text.write_text("hello, not a database\n" * 100)
    with pytest.raises(SourceError, match="not a readable capture database"):
        screenpipe.read(text)
    empty = make_db(tmp_path / "other.sqlite", "CREATE TABLE t (x);", {})
    with pytest.raises(SourceError, match="needs a frames table"):
        screenpipe.read(empty)
    with pytest.raises(SourceError, match="no such file"):
        screenpipe.read(tmp_path / "missing.sqlite")


# --------------------------------------------------------------------------------------------
# ActivityWatch
# --------------------------------------------------------------------------------------------


def _events(export: dict[str, Any], prefix: str) -> list[tuple[float, float, dict[str, Any]]]:
    return sorted(
        (epoch(e["timestamp"]), e["duration"], e["data"])
        for bucket_id, bucket in export["buckets"].items()
        if bucket_id.startswith(prefix)
        for e in bucket["events"]
    )


def test_activitywatch_round_trip_emulates_heartbeats(aw_day: Path) -> None:
    export = json.loads(aw_day.read_text())
    capture = activitywatch.read(aw_day)
    assert (capture.recorder, capture.reader) == ("ActivityWatch", "activitywatch")
    assert capture.inputs == [] and capture.elements == []
    assert capture.disclosures[:2] == [
        EMULATION,
        "ActivityWatch has no monitors; every row is on monitor 0.",
    ]
    assert EMULATION == (
        "ActivityWatch intervals were emulated as snapshot rows every 30 s; AFK intervals are "
        "absences; ActivityWatch records no input events or element trees."
    )
    assert is_sorted(capture)
    windows = _events(export, "aw-watcher-window")
    expected = []
    for start, duration, data in windows:
        count = max(1, math.ceil(duration / HEARTBEAT_S))
        title = data["title"] or None
        expected += [(start + k * HEARTBEAT_S, data["app"], title) for k in range(count)]
    assert [(s.t, s.app, s.window) for s in capture.snapshots] == sorted(expected)
    assert {s.monitor for s in capture.snapshots} == {"0"}
    # A row's id is its event's start in tenths of a second (plus ID_EPOCH), then k.
    first, second = capture.snapshots[0], capture.snapshots[1]
    assert first.id == _row(first.t)
    long_start = min(start for start, d, _ in windows if d > 2 * HEARTBEAT_S)
    rows = [
        s for s in capture.snapshots if s.id // EVENT_STRIDE == _row(long_start) // EVENT_STRIDE
    ]
    assert [s.id % EVENT_STRIDE for s in rows] == list(range(len(rows)))
    assert all(
        b.t - a.t == pytest.approx(HEARTBEAT_S) for a, b in zip(rows, rows[1:], strict=False)
    )
    assert second.t > first.t


def test_activitywatch_browser_rows_carry_the_url_of_their_web_event(aw_day: Path) -> None:
    export = json.loads(aw_day.read_text())
    capture = activitywatch.read(aw_day)
    pages = _events(export, "aw-watcher-web")
    browser_rows = [s for s in capture.snapshots if s.app in ("Firefox", "Google Chrome")]
    assert browser_rows and all(s.url for s in browser_rows)
    assert all(s.url is None for s in capture.snapshots if s not in browser_rows)
    for row in browser_rows[::7]:
        covering = [d["url"] for a, length, d in pages if a <= row.t < a + max(length, 1e-6)]
        assert row.url in covering
    # The URLs are the ones the person visited in that browser.
    records = focused_snapshots(day())
    visited = {(r["payload"]["app"], r["payload"]["url"]) for r in records}
    assert {(s.app, s.url) for s in browser_rows} <= visited


def test_activitywatch_afk_events_become_merged_absences(aw_day: Path) -> None:
    export = json.loads(aw_day.read_text())
    afk = [
        (a, a + d) for a, d, data in _events(export, "aw-watcher-afk") if data["status"] == "afk"
    ]
    capture = activitywatch.read(aw_day)
    assert [(x.start, x.end) for x in capture.absences] == afk
    assert all(x.reason == "afk" and x.monitor is None for x in capture.absences)
    inputs = sorted(epoch(r["occurred_at"]) for r in day() if r["kind"] == "input")
    gaps = [(a, b) for a, b in zip(inputs, inputs[1:], strict=False) if b - a > 180]
    assert len(capture.absences) == len(gaps)
    assert [x.start for x in capture.absences] == pytest.approx([a for a, _ in gaps], abs=1e-6)


def _bucket(bucket_id: str, kind: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    meta = {"client": "test", "hostname": "h", "created": "", "data": {}}
    return {"id": bucket_id, "type": kind, **meta, "events": events}


def _ev(stamp: str, duration: float, **data: Any) -> dict[str, Any]:
    return {"timestamp": stamp, "duration": duration, "data": data}


def _export(afk_events: list[dict[str, Any]]) -> dict[str, Any]:
    window = [
        _ev("2026-03-02T09:00:00+00:00", 95.0, app="Code", title="a.py"),
        _ev("2026-03-02T09:01:35+00:00", 0.0, app="Firefox", title="Docs"),
        _ev("2026-03-02T09:01:35.5+00:00", 40.0, app="Safari", title="Blog"),
    ]
    return {
        "buckets": {
            "aw-watcher-window_h": _bucket("aw-watcher-window_h", "currentwindow", window[::-1]),
            "aw-watcher-afk_h": _bucket("aw-watcher-afk_h", "afkstatus", afk_events),
        }
    }


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_activitywatch_overlapping_afk_stored_newest_first_merge(tmp_path: Path) -> None:
    afk = [
        _ev("2026-03-02T12:10:00+00:00", 60.0, status="afk"),  # touches: an input at 12:10
        _ev("2026-03-02T12:05:00+00:00", 300.0, status="afk"),
        _ev("2026-03-02T12:00:00+00:00", 400.0, status="afk"),  # overlaps the next
        _ev("2026-03-02T11:00:00+00:00", 3600.0, status="not-afk"),
        _ev("2026-03-02T10:00:00+00:00", 600.0, status="afk"),
        _ev("2026-03-02T09:59:59+00:00", 30.0, status="afk"),
        _ev("2026-03-02T09:00:00+00:00", 0.0, status="afk"),  # one heartbeat: no length
    ]
    newest_first = activitywatch.read(write(tmp_path / "a.json", _export(afk)))
    oldest_first = activitywatch.read(write(tmp_path / "b.json", _export(afk[::-1])))
    assert newest_first == oldest_first
    assert [(a.start, a.end) for a in newest_first.absences] == [
        (at(9, 59, 59), at(10, 10)),
        (at(12), at(12, 10)),
        (at(12, 10), at(12, 11)),
    ]
    ids = [a.id for a in newest_first.absences]
    assert ids == [_row(at(9, 59, 59)), _row(at(12)), _row(at(12, 10))]
    clipped = activitywatch.read(tmp_path / "a.json", at(12, 5), at(13))
    assert [(a.id, a.start, a.end) for a in clipped.absences] == [
        (ids[1], at(12, 5), at(12, 10)),
        (ids[2], at(12, 10), at(12, 11)),
    ]


def test_activitywatch_ids_do_not_depend_on_the_stored_order_of_ties(tmp_path: Path) -> None:
    twins = [
        _ev("2026-03-02T09:00:00+00:00", 10.0, app="B", title="b"),
        _ev("2026-03-02T09:00:00+00:00", 10.0, app="A", title="a"),
    ]
    reads = [
        activitywatch.read(
            write(
                tmp_path / f"{n}.json",
                {"buckets": {"w": _bucket("aw-watcher-window_h", "currentwindow", order)}},
            )
        )
        for n, order in enumerate((twins, twins[::-1]))
    ]
    assert reads[0] == reads[1]
    # Both start at the same instant: the second in data order takes the next number.
    assert [(s.id, s.app) for s in reads[0].snapshots] == [
        (_row(at(9)), "A"),
        (_row(at(9)) + EVENT_STRIDE, "B"),
    ]


def test_activitywatch_ids_come_from_the_event_not_from_the_rest_of_the_export(
    tmp_path: Path,
) -> None:
    day = generate_aw(date(2026, 3, 2), "Europe/Berlin", seed=3, extra_buckets=False).export
    whole = activitywatch.read(write(tmp_path / "whole.json", day))
    ids = {(s.t, s.app, s.window): s.id for s in whole.snapshots}
    # Buckets that sort before the window bucket are added: nothing is renumbered.
    more = copy.deepcopy(day)
    more["buckets"]["aa-first"] = _bucket("aa-first", "general.stopwatch", [])
    more["buckets"]["aw-watcher-afk_a"] = _bucket(
        "aw-watcher-afk_a", "afkstatus", [_ev("2026-03-02T06:00:00+00:00", 60.0, status="afk")]
    )
    added = activitywatch.read(write(tmp_path / "more.json", more))
    assert {(s.t, s.app, s.window): s.id for s in added.snapshots} == ids
    # An export holding only the afternoon (older events gone) gives the same rows their ids.
    noon = datetime(2026, 3, 2, 12, tzinfo=UTC)
    later = copy.deepcopy(day)
    for bucket in later["buckets"].values():
        bucket["events"] = [
            e for e in bucket["events"] if epoch(e["timestamp"]) >= noon.timestamp()
        ]
    part = activitywatch.read(write(tmp_path / "later.json", later))
    assert part.snapshots and all(ids[s.t, s.app, s.window] == s.id for s in part.snapshots)
    assert all(s.id >= ID_FLOOR for s in whole.snapshots)
    assert all(a.id >= ID_FLOOR for a in whole.absences)


def test_activitywatch_window_and_afk_events_of_one_instant_get_distinct_ids(
    tmp_path: Path,
) -> None:
    export = _export([_ev("2026-03-02T09:00:00+00:00", 600.0, status="afk")])
    capture = activitywatch.read(write(tmp_path / "a.json", export))
    # aw-watcher-afk_h sorts before aw-watcher-window_h: the absence keeps the instant's number.
    assert [a.id for a in capture.absences] == [_row(at(9))]
    assert capture.snapshots[0].id == _row(at(9)) + EVENT_STRIDE
    ids = [s.id for s in capture.snapshots] + [a.id for a in capture.absences]
    assert len(set(ids)) == len(ids)


def test_activitywatch_refuses_timestamps_it_cannot_number(tmp_path: Path) -> None:
    bucket = _bucket(
        "aw-watcher-window_h", "currentwindow", [_ev("2001-09-09T01:46:39+00:00", 5.0, app="X")]
    )
    with pytest.raises(SourceError, match="before 2001-09-09"):
        activitywatch.read(write(tmp_path / "old.json", {"buckets": {"w": bucket}}))


def test_activitywatch_heartbeats_cover_each_interval(tmp_path: Path) -> None:
    capture = activitywatch.read(write(tmp_path / "a.json", _export([])))
    assert [(s.id, s.t, s.app, s.url) for s in capture.snapshots] == [
        (_row(at(9)), at(9), "Code", None),
        (_row(at(9)) + 1, at(9, 0, 30), "Code", None),
        (_row(at(9)) + 2, at(9, 1), "Code", None),
        (_row(at(9)) + 3, at(9, 1, 30), "Code", None),  # 95 s -> rows at 0, 30, 60, 90
        (_row(at(9, 1, 35)), at(9, 1, 35), "Firefox", None),  # zero duration: one row
        # Starts in the same second as Firefox's: the next number.
        (_row(at(9, 1, 35)) + EVENT_STRIDE, at(9, 1, 35.5), "Safari", None),
        (_row(at(9, 1, 35)) + EVENT_STRIDE + 1, at(9, 2, 5.5), "Safari", None),
    ]
    assert "The export has no web bucket; browser rows carry no URL." in capture.disclosures
    part = activitywatch.read(tmp_path / "a.json", at(9, 0, 30), at(9, 1, 35))
    assert [s.t for s in part.snapshots] == [at(9, 0, 30), at(9, 1), at(9, 1, 30)]
    assert {astuple(s) for s in part.snapshots} <= {astuple(s) for s in capture.snapshots}


def test_activitywatch_urls_match_the_browser_and_the_time(tmp_path: Path) -> None:
    window = [
        _ev("2026-03-02T09:00:00+00:00", 60.0, app="Firefox", title="Docs"),
        _ev("2026-03-02T09:01:00+00:00", 60.0, app="Google Chrome", title="Mail"),
        _ev("2026-03-02T09:02:00+00:00", 30.0, app="Archive Utility", title="x.zip"),
        _ev("2026-03-02T09:02:30+00:00", 30.0, app="msedge.exe", title="Bing"),
    ]
    firefox = [
        _ev("2026-03-02T08:59:00+00:00", 61.0, url="https://old.example/"),  # 1 s into the row
        _ev("2026-03-02T09:00:01+00:00", 200.0, url="https://docs.example/"),
    ]
    chrome = [_ev("2026-03-02T09:00:00+00:00", 400.0, url="https://mail.example/")]
    web = "web.tab.current"
    export = {
        "buckets": {
            "aw-watcher-window_h": _bucket("aw-watcher-window_h", "currentwindow", window),
            "aw-watcher-web-firefox_h": _bucket("aw-watcher-web-firefox_h", web, firefox),
            "aw-watcher-web-chrome_h": _bucket("aw-watcher-web-chrome_h", web, chrome),
        }
    }
    capture = activitywatch.read(write(tmp_path / "w.json", export))
    assert [(s.app, s.url) for s in capture.snapshots] == [
        ("Firefox", "https://docs.example/"),  # the page overlapping the row most
        ("Firefox", "https://docs.example/"),
        ("Google Chrome", "https://mail.example/"),  # not Firefox's page at the same time
        ("Google Chrome", "https://mail.example/"),
        ("Archive Utility", None),  # not Arc
        ("msedge.exe", "https://mail.example/"),  # Edge runs the Chrome extension
    ]
    assert (
        "The export has no AFK bucket; time away from the computer is unknown, not inactivity."
        in capture.disclosures
    )


def test_activitywatch_a_page_touching_a_row_only_at_its_edge_is_not_its_url(
    tmp_path: Path,
) -> None:
    window = [
        _ev("2026-03-02T09:10:00+00:00", 0.0, app="Firefox", title="A"),  # one instant
        _ev("2026-03-02T09:20:00+00:00", 30.0, app="Firefox", title="B"),
    ]
    pages = [
        _ev("2026-03-02T09:09:00+00:00", 60.0, url="https://a.example/"),  # open until 09:10
        _ev("2026-03-02T09:19:00+00:00", 60.0, url="https://b.example/"),  # closed at 09:20
        _ev("2026-03-02T09:20:30+00:00", 10.0, url="https://c.example/"),  # after the row
    ]
    export = {
        "buckets": {
            "aw-watcher-window_h": _bucket("aw-watcher-window_h", "currentwindow", window),
            "aw-watcher-web-firefox_h": _bucket("aw-watcher-web-firefox_h", "web", pages),
        }
    }
    capture = activitywatch.read(write(tmp_path / "edge.json", export))
    assert [(s.window, s.url) for s in capture.snapshots] == [
        ("A", "https://a.example/"),
        ("B", None),
    ]


def test_activitywatch_reads_single_bucket_exports(tmp_path: Path) -> None:
    events = [_ev("2026-03-02T09:00:00+00:00", 45.0, app="Code", title="a.py")]
    bare = _bucket("aw-watcher-window_h", "currentwindow", events)
    wrapped = {"buckets": {"aw-watcher-window_h": bare}}
    one = activitywatch.read(write(tmp_path / "bare.json", bare))
    two = activitywatch.read(write(tmp_path / "wrapped.json", wrapped))
    assert one == two
    assert [(s.id, s.t) for s in one.snapshots] == [
        (_row(at(9)), at(9)),
        (_row(at(9)) + 1, at(9, 0, 30)),
    ]
    gz = tmp_path / "export.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(wrapped).encode()))
    assert activitywatch.read(gz) == one


def test_activitywatch_other_buckets_and_naive_times_are_disclosed(tmp_path: Path) -> None:
    export = {
        "buckets": {
            "aw-watcher-window_h": _bucket(
                "aw-watcher-window_h", "currentwindow", [_ev("2026-03-02T09:00:00", 1.0, app="X")]
            ),
            "aw-stopwatch": _bucket("aw-stopwatch", "general.stopwatch", []),
        }
    }
    capture = activitywatch.read(write(tmp_path / "x.json", export))
    assert capture.snapshots[0].t == at(9)
    assert "Buckets not compiled: aw-stopwatch." in capture.disclosures
    assert "1 timestamp had no UTC offset and was read as UTC." in capture.disclosures


def test_activitywatch_rejects_what_is_not_an_export(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not an ActivityWatch export"):
        activitywatch.read(write(tmp_path / "list.json", [1, 2]))
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(SourceError, match="not a JSON ActivityWatch export"):
        activitywatch.read(tmp_path / "broken.json")
    bad = _export([_ev("noon", 1.0, status="afk")])
    with pytest.raises(SourceError, match="aw-watcher-afk_h.*event 0.*'noon'"):
        activitywatch.read(write(tmp_path / "bad.json", bad))


def test_activitywatch_export_of_a_synthetic_day_is_deterministic() -> None:
    assert activitywatch_export(day()) == activitywatch_export(day())


# --------------------------------------------------------------------------------------------
# Our event records and JSONL
# --------------------------------------------------------------------------------------------


def _records() -> list[dict[str, Any]]:
    return [
        {"occurred_at": "2026-03-02T10:00:00+01:00", "kind": "snapshot", "monitor": "0",
         "source_key": "s1", "payload": {"app": "Code", "window": "a.py", "url": None}},
        {"occurred_at": "2026-03-02T09:00:01Z", "kind": "elements", "monitor": "0",
         "source_key": "e1", "payload": {"snapshot": "s1", "elements": [
             {"role": "AXButton", "name": "Run", "bounds": [0.5, 0.5, 0.1, 0.1]},
             {"role": "AXWindow", "name": None, "bounds": None}]}},
        {"occurred_at": "2026-03-02T09:00:02Z", "kind": "input", "monitor": 1,
         "source_key": "i1", "payload": {"type": "text", "x": 3, "text": "hello"}},
        {"occurred_at": "2026-03-02T09:00:03Z", "kind": "elements", "monitor": "0",
         "source_key": "e2", "payload": {"snapshot": "nowhere", "elements": []}},
        {"occurred_at": "2026-03-02T09:00:04Z", "kind": "snapshot", "monitor": "1",
         "source_key": "s2", "payload": {"app": "Slack", "focused": False}},
        {"occurred_at": "2026-03-02T09:00:02Z", "kind": "input", "monitor": "0",
         "source_key": "i1", "payload": {"type": "key"}},
    ]  # fmt: skip


def test_capture_from_records_converts_our_records() -> None:
    capture = capture_from_records(_records())
    assert capture.snapshots == [
        Snapshot(1, at(9), "0", "Code", "a.py", None),
        Snapshot(5, at(9, 0, 4), "1", "Slack", None, None),  # focused: false, kept
    ]
    assert capture.inputs == [
        InputEvent(3, at(9, 0, 2), "text", "1", 3.0, None, text="hello"),
    ]
    assert capture.elements == [
        Element(1, "AXButton", "Run", (0.5, 0.5, 0.1, 0.1)),
        Element(1, "AXWindow", None, None),
    ]
    assert capture.elements_for([1, 5]) == {1: capture.elements}
    assert capture.disclosures == [
        "1 element tree named a snapshot that is not in the input and was dropped.",
        "1 record repeated the source_key of an earlier record and was read once.",
    ]
    assert (capture.recorder, capture.reader) == ("aframes", "events")


def test_capture_from_records_uses_stored_ids_and_any_record_order() -> None:
    records = _records()[:3]
    for number, record in enumerate(records):
        record["id"] = 100 + number
    reordered = [records[1], records[2], records[0]]  # the tree before its snapshot
    capture = capture_from_records(reordered)
    assert [s.id for s in capture.snapshots] == [100]
    assert [e.id for e in capture.inputs] == [102]
    assert [e.snapshot_id for e in capture.elements] == [100, 100]
    assert capture.disclosures == []


def test_capture_from_records_window_keeps_positional_ids() -> None:
    records = _records()
    part = capture_from_records(records, at(9, 0, 1), at(9, 0, 5))
    assert [(s.id, s.app) for s in part.snapshots] == [(5, "Slack")]  # unfocused, kept
    assert [e.id for e in part.inputs] == [3]
    assert part.elements == []  # their snapshot is outside the window
    assert capture_from_records(records, None, at(9, 0, 1)).elements != []


def test_capture_from_records_rejects_bad_records_by_position() -> None:
    records = _records()
    records[2]["occurred_at"] = "2026-03-02T09:00:02"
    with pytest.raises(SourceError, match=r"^record 3: occurred_at .* has no UTC offset"):
        capture_from_records(records)
    clash = _records()[:3]
    clash[0]["id"] = 3
    with pytest.raises(SourceError, match="record 3: id 3 is already used by record 1"):
        capture_from_records(clash)
    with pytest.raises(SourceError, match="kind is 'observation'"):
        capture_from_records([{**_records()[0], "kind": "observation"}])


def test_jsonl_reads_plain_and_gzip_like_the_converter(tmp_path: Path) -> None:
    records = day()
    plain = tmp_path / "day.jsonl"
    write_jsonl(plain, records)
    packed = tmp_path / "day.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    expected = capture_from_records(records, at(9), at(12))
    got = jsonl.read(plain, at(9), at(12))
    assert got.reader == "jsonl"
    assert (got.snapshots, got.inputs, got.elements) == (
        expected.snapshots,
        expected.inputs,
        expected.elements,
    )
    assert jsonl.read(packed, at(9), at(12)) == got


def test_jsonl_bad_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    lines = [json.dumps(r) for r in _records()[:3]]
    lines.insert(1, "")
    lines.insert(3, '{"occurred_at": "2026-03-02T09:00:00Z", "kind": ')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SourceError, match=rf"^{path}:4: not valid JSON"):
        jsonl.read(path)
    lines[3] = json.dumps({**_records()[2], "payload": {"type": "wink"}})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SourceError, match=rf"^{path}:4: payload.type is 'wink'"):
        jsonl.read(path)
    truncated = tmp_path / "cut.jsonl.gz"
    truncated.write_bytes(gzip.compress(b"\n".join(x.encode() for x in lines))[:-20])
    with pytest.raises(SourceError, match=rf"^{truncated}:"):
        jsonl.read(truncated)


# --------------------------------------------------------------------------------------------
# open_source and purity
# --------------------------------------------------------------------------------------------


def test_open_source_dispatches_by_format(sp_day: Path, aw_day: Path, tmp_path: Path) -> None:
    plain = tmp_path / "day.jsonl"
    write_jsonl(plain, day())
    assert contents(open_source(f"screenpipe:{sp_day}", at(9), at(10))) == contents(
        screenpipe.read(sp_day, at(9), at(10))
    )
    assert open_source(f"activitywatch:{aw_day}") == activitywatch.read(aw_day)
    assert open_source(f"jsonl:{plain}", at(9)) == jsonl.read(plain, at(9))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("csv:/tmp/x.csv", r"unknown source format 'csv'"),
        ("/tmp/capture.sqlite", r"has no format; write FORMAT:PATH"),
        ("screenpipe:", r"has no format"),
        ("screenpipe:/nonexistent/capture.sqlite", r"/nonexistent/capture.sqlite: no such file"),
        ("jsonl:/nonexistent/x.jsonl", r"no such file"),
    ],
)
def test_open_source_rejects_bad_specs_in_one_line(spec: str, message: str) -> None:
    with pytest.raises(SourceError, match=message) as caught:
        open_source(spec)
    assert "\n" not in str(caught.value)


def _imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def test_sources_import_only_the_standard_library_and_compiler() -> None:
    files = sorted(SOURCES.glob("*.py"))
    assert {f.name for f in files} >= {
        "__init__.py", "events.py", "jsonl.py", "screenpipe.py", "activitywatch.py",
    }  # fmt: skip
    for path in files:
        text = path.read_text()
        assert text.startswith('"""'), f"{path.name} needs a module docstring"
        assert "from __future__ import annotations" in text
        for module in _imports(path):
            top = module.split(".")[0]
            assert top in sys.stdlib_module_names or top in {"__future__", "compiler"}, (
                f"{path.name} imports {module}"
            )


# --------------------------------------------------------------------------------------------
# Our event records: every field checked, and the inverse (records_from_capture)
# --------------------------------------------------------------------------------------------


def _snap(stamp: str, key: str | None = None, **payload: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "occurred_at": stamp,
        "kind": "snapshot",
        "monitor": "0",
        "payload": {"app": "Code", **payload},
    }
    if key is not None:
        record["source_key"] = key
    return record


def _refused(record: object, message: str) -> None:
    with pytest.raises(SourceError) as caught:
        capture_from_records([record])  # type: ignore[list-item]
    assert str(caught.value) == f"record 1: {message}"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"occurred_at": "noon"}, "occurred_at 'noon' is not an ISO 8601 timestamp."),
        ({"occurred_at": 5}, "occurred_at must be an ISO 8601 string with an offset."),
        (
            {"occurred_at": datetime(2026, 3, 2, 9)},  # noqa: DTZ001 - the naive one refused
            "occurred_at datetime.datetime(2026, 3, 2, 9, 0) has no UTC offset; add Z or +HH:MM.",
        ),
        ({"kind": None}, "kind is None; a desktop record is one of snapshot, input, elements, "
                         "absence."),
        ({"monitor": True}, "monitor must be a string, an integer or null."),
        ({"monitor": 1.5}, "monitor must be a string, an integer or null."),
        ({"payload": []}, "payload must be an object."),
        ({"source_key": 7}, "source_key must be a string or null."),
        ({"id": True}, "id must be an integer or absent."),
        ({"id": "7"}, "id must be an integer or absent."),
        ({"payload": {"app": ""}}, "payload.app must be a non-empty string."),
        ({"payload": {"app": 3}}, "payload.app must be a non-empty string."),
        ({"payload": {"app": "Code", "window": 5}},
         "payload.window must be a string or null, got int."),
        ({"payload": {"app": "Code", "url": ["x"]}},
         "payload.url must be a string or null, got list."),
        ({"payload": {"app": "Code", "end": "later"}},
         "payload.end must be an ISO 8601 timestamp with an offset."),
        ({"payload": {"app": "Code", "end": "2026-03-02T09:00:30"}},
         "payload.end must be an ISO 8601 timestamp with an offset."),
        ({"payload": {"app": "Code", "end": 30}},
         "payload.end must be an ISO 8601 timestamp with an offset."),
    ],
)  # fmt: skip
def test_a_malformed_snapshot_record_is_refused_with_its_reason(
    change: dict[str, Any], message: str
) -> None:
    _refused({**_snap("2026-03-02T09:00:00Z"), **change}, message)


def test_a_record_that_is_not_an_object_is_refused() -> None:
    _refused(["snapshot"], "an event record must be an object, got list.")


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"type": "key", "x": True}, "payload.x must be a finite number or null."),
        ({"type": "key", "y": "3"}, "payload.y must be a finite number or null."),
        ({"type": "key", "x": math.nan}, "payload.x must be a finite number or null."),
        ({"type": "key", "y": math.inf}, "payload.y must be a finite number or null."),
        ({"type": "key", "text": 5}, "payload.text must be a string or null, got int."),
        ({"type": "key", "element_role": 1.0},
         "payload.element_role must be a string or null, got float."),
        ({"type": None}, "payload.type is None; expected one of key, text, click, clipboard, "
                         "app_switch, scroll."),
    ],
)  # fmt: skip
def test_a_malformed_input_record_is_refused_with_its_reason(
    payload: dict[str, Any], message: str
) -> None:
    _refused({"occurred_at": "2026-03-02T09:00:00Z", "kind": "input", "payload": payload}, message)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"elements": []}, "payload.snapshot must be the source_key of a snapshot."),
        ({"snapshot": 1, "elements": []}, "payload.snapshot must be the source_key of a snapshot."),
        ({"snapshot": "s"}, "payload.elements must be an array."),
        ({"snapshot": "s", "elements": {}}, "payload.elements must be an array."),
        ({"snapshot": "s", "elements": [{"role": "A"}, "B"]},
         "payload.elements[1] must be an object."),
        ({"snapshot": "s", "elements": [{"name": "x"}]},
         "payload.elements[0].role must be a string."),
        ({"snapshot": "s", "elements": [{"role": "A", "name": 5}]},
         "payload.elements[0].name must be a string or null."),
        ({"snapshot": "s", "elements": [{"role": "A", "bounds": [0, 0, 1]}]},
         "payload.elements[0].bounds must be [left, top, width, height] or null."),
        ({"snapshot": "s", "elements": [{"role": "A", "bounds": "0,0,1,1"}]},
         "payload.elements[0].bounds must be [left, top, width, height] or null."),
        ({"snapshot": "s", "elements": [{"role": "A", "bounds": [0, 0, 1, True]}]},
         "payload.elements[0].bounds holds a non-number."),
        ({"snapshot": "s", "elements": [{"role": "A", "bounds": [0, "0", 1, 1]}]},
         "payload.elements[0].bounds holds a non-number."),
    ],
)  # fmt: skip
def test_a_malformed_element_tree_is_refused_with_its_reason(
    payload: dict[str, Any], message: str
) -> None:
    record = {"occurred_at": "2026-03-02T09:00:00Z", "kind": "elements", "payload": payload}
    _refused(record, message)


@pytest.mark.parametrize(
    "payload",
    [
        {"end": None},
        {"end": "soon"},
        {"end": "2026-03-02T10:00:00"},
        {"end": 3600},
    ],
)
def test_an_absence_needs_an_aware_end(payload: dict[str, Any]) -> None:
    record = {"occurred_at": "2026-03-02T09:00:00Z", "kind": "absence", "payload": payload}
    _refused(record, "payload.end must be an ISO 8601 timestamp with an offset.")


@pytest.mark.parametrize("payload", [{"reason": 5}, {"monitor": 1}])
def test_an_absence_reason_and_monitor_are_strings(payload: dict[str, Any]) -> None:
    record = {
        "occurred_at": "2026-03-02T09:00:00Z",
        "kind": "absence",
        "payload": {"end": "2026-03-02T10:00:00Z", **payload},
    }
    _refused(record, "payload.reason and payload.monitor must be strings.")


def test_records_fields_become_typed_rows() -> None:
    records = [
        _snap("2026-03-02T09:00:00Z", "s1", window="a.py", url="https://a.example/",
              end="2026-03-02T10:00:30+01:00"),
        {**_snap("2026-03-02T09:00:05Z"), "monitor": None},
        {**_snap("2026-03-02T09:00:06Z"), "monitor": 2, "id": 40},
        {"occurred_at": datetime(2026, 3, 2, 9, 0, 7, tzinfo=UTC), "kind": "input", "monitor": 3,
         "payload": {"type": "click", "x": 10, "y": 2.5, "app": "Code", "window": "a.py",
                     "url": "u", "element_name": "Run", "element_role": "AXButton"}},
        {"occurred_at": "2026-03-02T09:00:08Z", "kind": "absence",
         "payload": {"end": "2026-03-02T09:30:00Z", "reason": None, "monitor": "1"}},
        {"occurred_at": "2026-03-02T09:00:09Z", "kind": "absence",
         "payload": {"end": "2026-03-02T09:40:00Z", "reason": "lock"}},
    ]  # fmt: skip
    capture = capture_from_records(records, recorder="rec", reader="rdr")
    assert capture.snapshots == [
        Snapshot(1, at(9), "0", "Code", "a.py", "https://a.example/", at(9, 0, 30)),
        Snapshot(2, at(9, 0, 5), "0", "Code"),
        Snapshot(40, at(9, 0, 6), "2", "Code"),
    ]
    assert [type(s.end) for s in capture.snapshots] == [float, type(None), type(None)]
    assert capture.inputs == [
        InputEvent(4, at(9, 0, 7), "click", "3", 10.0, 2.5, "Code", "a.py", "u", "Run",
                   "AXButton", None),
    ]  # fmt: skip
    assert type(capture.inputs[0].x) is float
    assert [astuple(a) for a in capture.absences] == [
        (5, at(9, 0, 8), at(9, 30), "afk", "1"),
        (6, at(9, 0, 9), at(9, 40), "lock", None),
    ]
    assert (capture.recorder, capture.reader, capture.disclosures) == ("rec", "rdr", [])
    assert capture.inputs_recorded is True


def test_an_absence_belongs_to_every_window_it_overlaps() -> None:
    records = [
        {"occurred_at": "2026-03-02T08:00:00Z", "kind": "absence",
         "payload": {"end": "2026-03-02T09:00:00Z"}},  # ends at the window's start: out
        {"occurred_at": "2026-03-02T08:30:00Z", "kind": "absence",
         "payload": {"end": "2026-03-02T09:00:01Z"}},  # reaches into it: in, unclipped
        {"occurred_at": "2026-03-02T09:59:59Z", "kind": "absence",
         "payload": {"end": "2026-03-02T11:00:00Z"}},
        {"occurred_at": "2026-03-02T10:00:00Z", "kind": "absence",
         "payload": {"end": "2026-03-02T11:00:00Z"}},  # starts at the end: out
    ]  # fmt: skip
    part = capture_from_records(records, at(9), at(10))
    assert [(a.id, a.start, a.end) for a in part.absences] == [
        (2, at(8, 30), at(9, 0, 1)),
        (3, at(9, 59, 59), at(11)),
    ]
    assert [a.id for a in capture_from_records(records, None, at(9)).absences] == [1, 2]
    assert [a.id for a in capture_from_records(records, at(10)).absences] == [3, 4]


def test_repeated_keys_and_orphan_trees_are_counted_in_the_window_only() -> None:
    tree = {"kind": "elements", "payload": {"snapshot": "gone", "elements": []}}
    records = [
        _snap("2026-03-02T08:00:00Z", "k1"),
        _snap("2026-03-02T08:00:00Z", "k1"),  # a repeat outside the window: not counted
        _snap("2026-03-02T09:00:00Z", "k2"),
        _snap("2026-03-02T09:00:00Z", "k2"),
        _snap("2026-03-02T09:00:00Z", "k2"),
        {**tree, "occurred_at": "2026-03-02T08:00:00Z", "source_key": "t0"},  # outside
        {**tree, "occurred_at": "2026-03-02T09:00:01Z", "source_key": "t1"},
        {**tree, "occurred_at": "2026-03-02T09:00:02Z", "source_key": "t2"},
        # A tree of a snapshot outside the window: that snapshot exists, so it is no orphan.
        {"occurred_at": "2026-03-02T09:00:03Z", "kind": "elements", "source_key": "t3",
         "payload": {"snapshot": "late", "elements": [{"role": "A"}]}},
        _snap("2026-03-02T11:00:00Z", "late"),
    ]  # fmt: skip
    part = capture_from_records(records, at(9), at(10))
    assert [s.id for s in part.snapshots] == [3]
    assert part.elements == []
    assert part.disclosures == [
        "2 element trees named a snapshot that is not in the input and were dropped.",
        "2 records repeated the source_key of an earlier record and were read once.",
    ]


def test_a_converter_finishes_again_after_more_records_as_if_read_at_once() -> None:
    from compiler.sources.events import RecordConverter

    tree = {"occurred_at": "2026-03-02T09:00:01Z", "kind": "elements", "source_key": "e",
            "payload": {"snapshot": "s", "elements": [{"role": "AXButton", "name": "Go",
                                                       "bounds": [1, 2, 3, 4]}]}}  # fmt: skip
    converter = RecordConverter()
    converter.add(tree, 1)
    first = converter.finish()
    assert first.elements == []
    assert first.disclosures == [
        "1 element tree named a snapshot that is not in the input and was dropped."
    ]
    converter.add(_snap("2026-03-02T09:00:00Z", "s"), 2)
    second = converter.finish()
    assert second.elements == [Element(2, "AXButton", "Go", (1.0, 2.0, 3.0, 4.0))]
    assert second.disclosures == [] and converter.orphan_trees == 0
    assert second == capture_from_records([tree, _snap("2026-03-02T09:00:00Z", "s")])


def test_element_trees_follow_their_snapshots_time_then_id_then_position() -> None:
    def tree(key: str, snapshot: str, *roles: str) -> dict[str, Any]:
        payload = {"snapshot": snapshot, "elements": [{"role": r} for r in roles]}
        return {"occurred_at": "2026-03-02T09:00:00Z", "kind": "elements", "source_key": key,
                "payload": payload}  # fmt: skip

    records = [
        _snap("2026-03-02T09:00:05Z", "b"),  # id 1, later
        tree("t1", "b", "B1"),
        tree("t2", "a", "A1", "A2"),  # before its snapshot
        {**_snap("2026-03-02T09:00:01Z", "a"), "id": 9},
        {**_snap("2026-03-02T09:00:01Z", "c"), "id": 8},  # same time as "a", smaller id
        tree("t3", "c", "C1"),
        tree("t4", "a", "A0"),  # a later tree of "a": after its first, whatever it holds
    ]
    capture = capture_from_records(records)
    assert [(e.snapshot_id, e.role) for e in capture.elements] == [
        (8, "C1"), (9, "A1"), (9, "A2"), (9, "A0"), (1, "B1"),
    ]  # fmt: skip
    assert [(s.id, s.t) for s in capture.snapshots] == [
        (8, at(9, 0, 1)), (9, at(9, 0, 1)), (1, at(9, 0, 5)),
    ]  # fmt: skip


def test_rows_emulated_from_activitywatch_are_disclosed_with_or_without_afk() -> None:
    from compiler.sources.events import EMULATED_AWAY, EMULATED_PREFIX

    row = ID_FLOOR + 7
    rows = [_snap("2026-03-02T09:00:00Z", f"{EMULATED_PREFIX}{row}")]
    away = {"occurred_at": "2026-03-02T09:10:00Z", "kind": "absence",
            "source_key": f"{EMULATED_AWAY}{row + 1}",
            "payload": {"end": "2026-03-02T09:20:00Z"}}  # fmt: skip
    without = capture_from_records(rows)
    assert without.disclosures == [
        EMULATION,
        "No ActivityWatch AFK signal reached this window; time away from the computer is "
        "unknown, not inactivity.",
    ]
    assert without.inputs_recorded is False  # nothing but emulated rows
    two = [*rows, _snap("2026-03-02T09:00:30Z", f"{EMULATED_PREFIX}{row + 1}")]
    assert capture_from_records(two).inputs_recorded is False
    assert capture_from_records([*rows, away]).disclosures == [EMULATION]
    # An AFK absence outside the window does not count as a signal of the window.
    later = capture_from_records([*rows, away], None, at(9, 5))
    assert len(later.disclosures) == 2 and later.absences == []
    # A snapshot outside the window is not counted as emulated in it.
    assert capture_from_records(rows, at(10)).disclosures == []
    mixed = capture_from_records([*rows, _snap("2026-03-02T09:00:01Z", "mine")])
    assert mixed.inputs_recorded is True  # one row not emulated: input was recorded
    plain_away = {**away, "source_key": "other:a1"}
    assert len(capture_from_records([*rows, plain_away]).disclosures) == 2
    typed = {"occurred_at": "2026-03-02T09:00:02Z", "kind": "input", "payload": {"type": "key"}}
    assert capture_from_records([*rows, typed]).inputs_recorded is True
    assert capture_from_records([]).inputs_recorded is False


def test_keyed_row_ids_are_the_activitywatch_reader_ids_and_nothing_else() -> None:
    from compiler.sources.activitywatch import ID_CEILING
    from compiler.sources.events import keyed_row_id, row_key

    top = ID_CEILING - 1  # 16 digits
    assert keyed_row_id(f"aw:s{ID_FLOOR}") == ID_FLOOR
    assert keyed_row_id(f"aw:a{top}") == top
    assert keyed_row_id(f"aw:s0{top}") is None  # 17 digits
    assert keyed_row_id(f"aw:s{ID_FLOOR - 1}") is None
    assert keyed_row_id(f"aw:s{ID_CEILING}") is None
    for key in (None, f"aw:x{ID_FLOOR}", f"ax:s{ID_FLOOR}", f"aw:s{ID_FLOOR}x", "aw:s",
                "aw:s" + "\u0661" * 15, f"aw:s-{ID_FLOOR}"):  # fmt: skip
        assert keyed_row_id(key) is None, key
    assert row_key(ID_FLOOR) == (f"aw:s{ID_FLOOR}", f"aw:a{ID_FLOOR}")
    assert row_key(top) == (f"aw:s{top}", f"aw:a{top}")
    assert row_key(ID_FLOOR - 1) is None and row_key(ID_CEILING) is None


def test_records_from_capture_writes_every_row_as_a_record() -> None:
    from compiler.sources.events import records_from_capture

    capture = Capture(
        snapshots=[
            Snapshot(1, at(9), "m1", "Code", "a.py", None),
            Snapshot(2, at(9, 0, 5), "0", "Firefox", "Docs", "https://d.example/", at(9, 1)),
        ],
        inputs=[
            InputEvent(
                7,
                at(9, 0, 1.5),
                "click",
                "m1",
                3.0,
                4.0,
                "Code",
                "a.py",
                None,
                "Run",
                "AXButton",
            ),
            InputEvent(8, at(9, 0, 2), "text", "0", math.nan, math.inf, text="hi"),
        ],  # fmt: skip
        elements=[
            Element(1, "AXButton", "Run", (0.5, 0.25, 0.125, 0.0625)),
            Element(1, "", None, None),
        ],
        absences=[Absence(4, at(10), at(11)), Absence(5, at(12), at(12, 30), "lock", "m1")],
    )
    records = list(records_from_capture(capture, "px"))
    assert records == [
        ("snapshot 1", {"occurred_at": "2026-03-02T09:00:00.000000Z", "kind": "snapshot",
                        "source_key": "px:s1", "monitor": "m1",
                        "payload": {"app": "Code", "window": "a.py", "url": None}}),
        ("elements of 1", {"occurred_at": "2026-03-02T09:00:00.000000Z", "kind": "elements",
                           "source_key": "px:e1", "monitor": "m1",
                           "payload": {"snapshot": "px:s1", "elements": [
                               {"role": "AXButton", "name": "Run",
                                "bounds": [0.5, 0.25, 0.125, 0.0625]},
                               {"role": "unknown", "name": None, "bounds": None}]}}),
        ("snapshot 2", {"occurred_at": "2026-03-02T09:00:05.000000Z", "kind": "snapshot",
                        "source_key": "px:s2", "monitor": "0",
                        "payload": {"app": "Firefox", "window": "Docs",
                                    "url": "https://d.example/",
                                    "end": "2026-03-02T09:01:00.000000Z"}}),
        ("input 7", {"occurred_at": "2026-03-02T09:00:01.500000Z", "kind": "input",
                     "source_key": "px:i7", "monitor": "m1",
                     "payload": {"type": "click", "x": 3.0, "y": 4.0, "app": "Code",
                                 "window": "a.py", "url": None, "element_name": "Run",
                                 "element_role": "AXButton"}}),
        ("input 8", {"occurred_at": "2026-03-02T09:00:02.000000Z", "kind": "input",
                     "source_key": "px:i8", "monitor": "0",
                     "payload": {"type": "text", "x": None, "y": None, "app": None,
                                 "window": None, "url": None, "element_name": None,
                                 "element_role": None, "text": "hi"}}),
        ("absence 4", {"occurred_at": "2026-03-02T10:00:00.000000Z", "kind": "absence",
                       "source_key": "px:a4", "monitor": "",
                       "payload": {"end": "2026-03-02T11:00:00.000000Z", "reason": "afk",
                                   "monitor": None}}),
        ("absence 5", {"occurred_at": "2026-03-02T12:00:00.000000Z", "kind": "absence",
                       "source_key": "px:a5", "monitor": "m1",
                       "payload": {"end": "2026-03-02T12:30:00.000000Z", "reason": "lock",
                                   "monitor": "m1"}}),
    ]  # fmt: skip
    # Read back, the records give the capture's rows (positions as ids, roles as written).
    back = capture_from_records([record for _, record in records])
    assert [(s.t, s.monitor, s.app, s.window, s.url, s.end) for s in back.snapshots] == [
        (s.t, s.monitor, s.app, s.window, s.url, s.end) for s in capture.snapshots
    ]
    assert [astuple(a)[1:] for a in back.absences] == [astuple(a)[1:] for a in capture.absences]
    assert [(e.role, e.name, e.bounds) for e in back.elements] == [
        ("AXButton", "Run", (0.5, 0.25, 0.125, 0.0625)), ("unknown", None, None),
    ]  # fmt: skip


# --------------------------------------------------------------------------------------------
# The shared helpers, and the JSONL reader's own messages
# --------------------------------------------------------------------------------------------


def test_day_windows_cut_at_each_utc_midnight() -> None:
    from compiler.sources import day_windows

    midnight = at(0) + 86_400  # 2026-03-03T00:00Z
    assert list(day_windows(at(22), midnight + 86_400 + 60)) == [
        (at(22), midnight),
        (midnight, midnight + 86_400),
        (midnight + 86_400, midnight + 86_400 + 60),
    ]
    assert list(day_windows(at(1), at(2))) == [(at(1), at(2))]
    assert list(day_windows(at(0), at(0) + 86_400)) == [(at(0), at(0) + 86_400)]
    assert list(day_windows(at(2), at(2))) == [] and list(day_windows(at(3), at(2))) == []


def test_utc_iso_writes_microseconds_and_z() -> None:
    from compiler.sources import utc_iso

    assert utc_iso(at(9, 0, 1.25)) == "2026-03-02T09:00:01.250000Z"
    assert utc_iso(0.0) == "1970-01-01T00:00:00.000000Z"


def test_parse_iso_reads_naive_times_as_utc_whatever_the_local_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    from compiler.sources._common import parse_iso, plural

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert parse_iso("2026-03-02T09:00:00") == (at(9), True)
        assert parse_iso("2026-03-02T10:00:00+01:00") == (at(9), False)
        assert parse_iso("2026-03-02T09:00:00Z") == (at(9), False)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert (plural(1, "row"), plural(2, "row"), plural(1_234, "row")) == (
        "1 row",
        "2 rows",
        "1,234 rows",
    )
    assert (plural(1, "batch", "batches"), plural(0, "batch", "batches")) == (
        "1 batch",
        "0 batches",
    )


def test_open_reader_reads_each_window_of_a_jsonl_file(tmp_path: Path) -> None:
    from compiler.sources import open_reader

    path = tmp_path / "day.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _records()) + "\n")
    reader = open_reader(f"jsonl:{path}")
    assert reader(at(9, 0, 1), at(9, 0, 3)) == jsonl.read(path, at(9, 0, 1), at(9, 0, 3))
    assert [e.id for e in reader(at(9, 0, 1), at(9, 0, 3)).inputs] == [3]
    assert [s.id for s in reader(None, at(9, 0, 3)).snapshots] == [1]
    assert reader(None, None).recorder == "aframes"


def test_open_source_expands_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "day.jsonl").write_text(json.dumps(_records()[0]) + "\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert [s.app for s in open_source("jsonl:~/day.jsonl").snapshots] == ["Code"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("csv:/tmp/x.csv",
         "unknown source format 'csv' in 'csv:/tmp/x.csv'; use one of screenpipe, activitywatch, "
         "jsonl."),
        ("capture.sqlite",
         "source 'capture.sqlite' has no format; write FORMAT:PATH with FORMAT one of "
         "screenpipe, activitywatch, jsonl, e.g. screenpipe:~/capture.sqlite."),
        ("activitywatch:/nonexistent/aw.json",
         "/nonexistent/aw.json: no such file; check the path after 'activitywatch:'."),
    ],
)  # fmt: skip
def test_open_source_says_exactly_what_is_wrong_with_a_spec(spec: str, message: str) -> None:
    with pytest.raises(SourceError) as caught:
        open_source(spec)
    assert str(caught.value) == message


def test_jsonl_a_gzip_file_cut_before_its_first_line_names_line_1(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(b"\x1f\x8b")
    with pytest.raises(SourceError, match=rf"^{path}:1: cannot read the file \("):
        jsonl.read(path)


# --------------------------------------------------------------------------------------------
# ActivityWatch: what an export says about itself, bucket kinds and malformed events
# --------------------------------------------------------------------------------------------


def test_activitywatch_discloses_what_the_export_lacks_and_what_was_left_out() -> None:
    from compiler.sources.activitywatch import read_export

    far = 3_000_001 * 1.0  # seconds: more than 10^5 heartbeats of 30 s
    export = {
        "buckets": {
            "aw-watcher-window_b": _bucket("aw-watcher-window_b", "currentwindow", [
                _ev("2026-03-02T09:00:00", 30.0, app="Code", title=""),
                _ev("2026-03-02T09:01:00", 10.0, title="no app"),
                _ev("2026-03-02T09:02:00+00:00", 10.0, app=""),
            ]),
            "aw-watcher-window_a": _bucket("aw-watcher-window_a", "currentwindow", [
                _ev("2026-03-01T09:00:00", far, app="Mail"),
            ]),
            "zz": _bucket("zz", "general.stopwatch", []),
            "aw-stopwatch": _bucket("aw-stopwatch", "general.stopwatch", []),
        }
    }  # fmt: skip
    capture = read_export(export, at(9), at(9, 5))
    mail = _row(at(9) - 86_400)  # started the day before: row k = 2,880 is 09:00
    assert [(s.id, s.app, s.t, s.window, s.end) for s in capture.snapshots] == [
        (mail + 2_880, "Mail", at(9), None, at(9) - 86_400 + far),
        (_row(at(9)), "Code", at(9), None, at(9, 0, 30)),  # an empty title is no title
    ] + [
        (mail + 2_880 + k, "Mail", at(9) + 30 * k, None, at(9) - 86_400 + far) for k in range(1, 10)
    ]
    assert capture.disclosures == [
        EMULATION,
        "ActivityWatch has no monitors; every row is on monitor 0.",
        "2 window buckets (aw-watcher-window_a, aw-watcher-window_b) were read onto the one "
        "monitor 0.",
        "The export has no web bucket; browser rows carry no URL.",
        "The export has no AFK bucket; time away from the computer is unknown, not inactivity.",
        "Buckets not compiled: aw-stopwatch, zz.",
        "2 window intervals without an app name were left out.",
        "1 window interval longer than 100,000 heartbeats was cut at that length.",
        "3 timestamps had no UTC offset and were read as UTC.",
    ]
    assert capture.inputs_recorded is False and capture.reader == "activitywatch"
    # Outside the intervals nothing is counted as left out or cut.
    quiet = read_export(export, at(9, 30), at(10))
    assert [s.app for s in quiet.snapshots] == ["Mail"] * 60
    assert "1 window interval longer than 100,000 heartbeats was cut at that length." in (
        quiet.disclosures
    )
    assert not any("without an app name" in d for d in quiet.disclosures)
    one = read_export({"buckets": {"w": _bucket("aw-watcher-window_h", "currentwindow", [
        _ev("2026-03-02T09:01:00+00:00", 10.0, title="no app"),
    ])}})  # fmt: skip
    assert "1 window interval without an app name was left out." in one.disclosures
    assert not any("timestamp" in d for d in one.disclosures)


def test_activitywatch_an_export_without_window_buckets_has_no_rows() -> None:
    from compiler.sources.activitywatch import read_export

    export = {"buckets": {"aw-watcher-afk_h": _bucket("aw-watcher-afk_h", "afkstatus", [
        _ev("2026-03-02T09:00:00+00:00", 60.0, status="afk"),
    ])}}  # fmt: skip
    capture = read_export(export)
    assert capture.snapshots == [] and [a.start for a in capture.absences] == [at(9)]
    assert capture.disclosures == [
        EMULATION,
        "ActivityWatch has no monitors; every row is on monitor 0.",
        "The export has no window bucket; there are no snapshot rows.",
        "The export has no web bucket; browser rows carry no URL.",
    ]


def test_activitywatch_buckets_as_a_list_or_keyed_by_id() -> None:
    from compiler.sources.activitywatch import read_export

    events = [_ev("2026-03-02T09:00:00+00:00", 10.0, app="Code")]
    bucket = _bucket("aw-watcher-window_h", "currentwindow", events)
    keyed = read_export({"buckets": {"aw-watcher-window_h": bucket}})
    assert read_export({"buckets": [bucket]}) == keyed
    # A bucket without its own id is named by its key, which then decides its kind.
    nameless = {k: v for k, v in bucket.items() if k not in ("id", "type")}
    by_key = read_export({"buckets": {"aw-watcher-window_x": nameless}})
    assert [s.app for s in by_key.snapshots] == ["Code"]
    assert not any("Buckets not compiled" in d for d in by_key.disclosures)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"buckets": {"b": []}}, "srv: bucket 'b' is not an object."),
        ({"buckets": "all"}, "srv: 'buckets' must be an object of buckets."),
        ({"buckets": [{"id": "a"}, 3]}, "srv: 'buckets' must be an object of buckets."),
        ({"events": []},
         'srv: not an ActivityWatch export; expected {"buckets": {...}} or one bucket with id '
         "and events."),
        ({"id": "b"},
         'srv: not an ActivityWatch export; expected {"buckets": {...}} or one bucket with id '
         "and events."),
        ({"id": "aw-watcher-window_h", "events": {}},
         "srv: bucket 'aw-watcher-window_h': events must be an array."),
        ({"id": "aw-watcher-window_h", "events": [[]]},
         "srv: bucket 'aw-watcher-window_h', event 0: not an object."),
        ({"id": "aw-watcher-window_h", "events": [{"duration": 1}]},
         "srv: bucket 'aw-watcher-window_h', event 0: timestamp None is not ISO 8601."),
        ({"id": "aw-watcher-window_h", "events": [{"timestamp": 5}]},
         "srv: bucket 'aw-watcher-window_h', event 0: timestamp 5 is not ISO 8601."),
        ({"id": "aw-watcher-window_h",
          "events": [_ev("2026-03-02T09:00:00Z", 1.0), _ev("2026-03-02T09:00:00Z", True)]},
         "srv: bucket 'aw-watcher-window_h', event 1: duration must be a number of seconds."),
        ({"id": "aw-watcher-window_h", "events": [_ev("2026-03-02T09:00:00Z", "60")]},
         "srv: bucket 'aw-watcher-window_h', event 0: duration must be a number of seconds."),
        ({"id": "aw-watcher-window_h", "events": [_ev("2026-03-02T09:00:00Z", math.inf)]},
         "srv: bucket 'aw-watcher-window_h', event 0: duration must be a number of seconds."),
        ({"id": "aw-watcher-window_h",
          "events": [{"timestamp": "2026-03-02T09:00:00Z", "data": ["x"]}]},
         "srv: bucket 'aw-watcher-window_h', event 0: data must be an object."),
        ({"id": "aw-watcher-window_h", "events": [_ev("4825-01-01T00:00:00+00:00", 1.0)]},
         "srv: bucket 'aw-watcher-window_h', event 0: timestamp '4825-01-01T00:00:00+00:00' is "
         "before 2001-09-09, earlier than any ActivityWatch data, or too far ahead to number."),
    ],
)  # fmt: skip
def test_activitywatch_refuses_malformed_exports_naming_where(data: Any, message: str) -> None:
    from compiler.sources.activitywatch import read_export

    with pytest.raises(SourceError) as caught:
        read_export(data, name="srv")
    assert str(caught.value) == message


def test_activitywatch_events_at_the_id_epoch_without_length_or_data_still_read() -> None:
    from compiler.sources.activitywatch import read_export

    events = [
        {"timestamp": "2001-09-09T01:46:40+00:00", "data": {"app": "Old"}},  # no duration
        _ev("2026-03-02T09:00:00+00:00", -5.0, app="Code"),  # negative: one row
        {"timestamp": "2026-03-02T09:01:00+00:00", "duration": 10},  # no data: no app
    ]
    capture = read_export({"id": "aw-watcher-window_h", "events": events})
    assert [(s.id, s.t, s.app, s.end) for s in capture.snapshots] == [
        (ID_FLOOR, 1_000_000_000.0, "Old", 1_000_000_000.0),
        (_row(at(9)), at(9), "Code", at(9)),
    ]
    assert "1 window interval without an app name was left out." in capture.disclosures


def test_activitywatch_bucket_kinds_come_from_type_then_id() -> None:
    from compiler.sources.activitywatch import read_export

    window = [_ev("2026-03-02T09:00:00+00:00", 60.0, app="Firefox", title="Docs - Mozilla")]
    page = [_ev("2026-03-02T09:00:00+00:00", 60.0, url="https://d.example/", title="Docs")]
    away = [_ev("2026-03-02T10:00:00+00:00", 60.0, status="afk")]
    export = {"buckets": {
        "w": {"id": "aw-watcher-window_h", "type": "odd", "events": window},
        "x": {"id": "aw-watcher-web_h", "events": page},  # no browser named: serves any
        "y": {"id": "aw-watcher-afk_h", "type": None, "events": away},
        "z": {"id": "mine", "type": "afkstatus", "events": away[:0]},
    }}  # fmt: skip
    capture = read_export(export)
    assert [s.url for s in capture.snapshots] == ["https://d.example/"] * 2
    assert [a.start for a in capture.absences] == [at(10)]
    assert capture.disclosures == [EMULATION, capture.disclosures[1]]


@pytest.mark.parametrize(
    ("bucket_id", "app", "served"),
    [
        ("aw-watcher-web-firefox_h", "Firefox", True),
        ("aw-watcher-web-firefox_h", "Google Chrome", False),
        ("aw-watcher-web-chrome_h", "Brave Browser", True),
        ("aw-watcher-web-chrome_h", "Firefox", False),
        ("aw-watcher-web-msedge_h", "Microsoft Edge", True),
        ("aw-watcher-web-edge_h", "Google Chrome", False),
        ("aw-watcher-web-Vivaldi", "Vivaldi", True),
        ("aw-watcher-web-lynx_h", "Safari", True),  # an unknown browser: serves any
        ("aw-watcher-webfirefox_h", "Safari", True),  # not "web-NAME": serves any
        ("aw-watcher-web-firefox_my_host", "Google Chrome", False),  # the name ends at "_"
        ("aw-watcher-web-msedge_h", "Google Chrome", False),  # msedge is Edge, not Chrome
    ],
)
def test_activitywatch_a_web_bucket_serves_its_own_browser(
    bucket_id: str, app: str, served: bool
) -> None:
    from compiler.sources.activitywatch import read_export

    window = [_ev("2026-03-02T09:00:00+00:00", 10.0, app=app, title="Page")]
    page = [_ev("2026-03-02T09:00:00+00:00", 10.0, url="https://p.example/", title="Page")]
    export = {"buckets": {
        "w": _bucket("aw-watcher-window_h", "currentwindow", window),
        "p": _bucket(bucket_id, "web.tab.current", page),
    }}  # fmt: skip
    [row] = read_export(export).snapshots
    assert row.url == ("https://p.example/" if served else None)


def _browsing(window: list[dict[str, Any]], pages: list[dict[str, Any]]) -> list[str | None]:
    from compiler.sources.activitywatch import read_export

    export = {"buckets": {
        "w": _bucket("aw-watcher-window_h", "currentwindow", window),
        "p": _bucket("aw-watcher-web-firefox_h", "web.tab.current", pages),
    }}  # fmt: skip
    return [s.url for s in read_export(export).snapshots]


def test_activitywatch_a_row_takes_the_page_overlapping_it_most_then_the_one_open_at_its_start():
    window = [
        _ev("2026-03-02T09:00:00+00:00", 30.0, app="Firefox"),
        _ev("2026-03-02T09:10:00+00:00", 30.0, app="Firefox"),
        _ev("2026-03-02T09:20:00+00:00", 30.0, app="Firefox"),
        _ev("2026-03-02T09:30:00+00:00", 30.0, app="Firefox"),
        _ev("2026-03-02T09:40:00+00:00", 30.0, app="Firefox"),
        _ev("2026-03-02T09:45:00+00:00", 0.0, app="Firefox"),  # one instant
        _ev("2026-03-02T09:50:00+00:00", 30.0, app="Firefox"),
        _ev("2026-03-02T09:55:00+00:00", 30.0, app="Firefox"),
        _ev("2026-03-02T10:00:00+00:00", 30.0, app="Firefox"),
    ]
    pages = [
        _ev("2026-03-02T09:39:50+00:00", 16.0, url="https://valid/"),
        _ev("2026-03-02T09:44:00+00:00", 120.0, url="https://long/at-the-instant"),
        _ev("2026-03-02T09:44:30+00:00", 20.0, url="https://closed-before/"),
        _ev("2026-03-02T09:50:00+00:00", 0.0, url="https://instant-at-start/"),
        _ev("2026-03-02T09:54:00+00:00", 360.0, url="https://older-and-open/"),
        _ev("2026-03-02T09:54:30+00:00", 0.0, url="https://instant-before/"),
        _ev("2026-03-02T10:00:00+00:00", 10.0, url="https://at-the-start/"),
        _ev("2026-03-02T10:00:10+00:00", 10.0, url="https://after-the-start/"),
        _ev("2026-03-02T08:59:50+00:00", 25.0, url="https://open-at-start/"),  # 15 s of the row
        _ev("2026-03-02T09:00:15+00:00", 15.0, url="https://later/"),  # 15 s too
        _ev("2026-03-02T09:00:10+00:00", 0.0, url="https://instant/"),
        _ev("2026-03-02T09:10:05+00:00", 10.0, url="https://first/"),
        _ev("2026-03-02T09:10:10+00:00", 10.0, url="https://second/"),  # a tie: the later one
        _ev("2026-03-02T09:20:00+00:00", 5.0, url="https://short/"),
        _ev("2026-03-02T09:20:10+00:00", 15.0, url="https://long/"),  # overlaps most
        _ev("2026-03-02T09:30:10+00:00", 0.0, url="https://only-an-instant/"),
        _ev("2026-03-02T09:40:05+00:00", 5.0, url=""),  # no URL: skipped
        _ev("2026-03-02T09:40:10+00:00", 5.0, url=None),
    ]
    assert _browsing(window, pages) == [
        "https://open-at-start/",
        "https://second/",
        "https://long/",
        "https://only-an-instant/",
        "https://valid/",  # the pages without a URL are passed over, not the search
        "https://long/at-the-instant",
        "https://instant-at-start/",
        "https://older-and-open/",
        "https://at-the-start/",  # a tie: the page open at the row's start
    ]


def test_activitywatch_a_tab_not_in_the_window_title_is_another_windows_page() -> None:
    window = [
        _ev("2026-03-02T09:00:00+00:00", 30.0, app="Firefox", title="Private Browsing"),
        _ev("2026-03-02T09:01:00+00:00", 30.0, app="Firefox", title="INBOX (3) - Mail"),
        _ev("2026-03-02T09:02:00+00:00", 30.0, app="Firefox"),
    ]
    pages = [
        _ev("2026-03-02T09:00:00+00:00", 30.0, url="https://docs/", title="Docs"),
        _ev("2026-03-02T09:01:00+00:00", 30.0, url="https://mail/", title="inbox (3)"),
        _ev("2026-03-02T09:02:00+00:00", 30.0, url="https://any/", title="Anything"),
    ]
    assert _browsing(window, pages) == [None, "https://mail/", "https://any/"]
    untitled = [{**p, "data": {"url": p["data"]["url"], "title": ""}} for p in pages]
    assert _browsing(window, untitled) == ["https://docs/", "https://mail/", "https://any/"]


def test_activitywatch_unreadable_files_say_so(tmp_path: Path) -> None:
    cut = tmp_path / "aw.json.gz"
    cut.write_bytes(gzip.compress(b'{"buckets": {}}')[:-12])
    with pytest.raises(SourceError, match=rf"^{cut}: cannot read the file \("):
        activitywatch.read(cut)
    binary = tmp_path / "aw.json"
    binary.write_bytes(b'{"buckets": "\xff\xfe"}')
    with pytest.raises(SourceError, match=rf"^{binary}: not a JSON ActivityWatch export \("):
        activitywatch.read(binary)
    with pytest.raises(SourceError, match=rf"^{tmp_path / 'none.json'}: no such file\.$"):
        activitywatch.open_export(tmp_path / "none.json")


def test_activitywatch_absences_touching_the_window_edge_stay_outside_it(tmp_path: Path) -> None:
    afk = [
        _ev("2026-03-02T08:00:00+00:00", 3600.0, status="afk"),  # ends at 09:00
        _ev("2026-03-02T09:30:00+00:00", 60.0, status="afk"),
        _ev("2026-03-02T10:00:00+00:00", 60.0, status="afk"),  # starts at 10:00
        _ev("2026-03-02T09:40:00+00:00", 60.0, status="afk"),  # merges with the next
        _ev("2026-03-02T09:40:30+00:00", 60.0, status="afk"),
        _ev("2026-03-02T09:41:00+00:00", 0.0, status="afk"),  # no length: says nothing
    ]
    path = write(tmp_path / "afk.json", _export(afk))
    part = activitywatch.read(path, at(9), at(10))
    assert [(a.id, a.start, a.end) for a in part.absences] == [
        (_row(at(9, 30)), at(9, 30), at(9, 31)),
        (_row(at(9, 40)), at(9, 40), at(9, 41, 30)),
    ]


# --------------------------------------------------------------------------------------------
# screenpipe: time spans, input rows and element trees of hand-written databases
# --------------------------------------------------------------------------------------------

FULL_SCHEMA = """
CREATE TABLE frames (id INTEGER PRIMARY KEY, timestamp TEXT, app_name TEXT, window_name TEXT,
                     browser_url TEXT, device_name TEXT);
CREATE TABLE ui_events (id INTEGER PRIMARY KEY, timestamp TEXT, event_type TEXT, x INTEGER,
                        y INTEGER, text_content TEXT, app_name TEXT, window_title TEXT,
                        browser_url TEXT, element_name TEXT, element_role TEXT, frame_id INTEGER);
CREATE TABLE elements (id INTEGER PRIMARY KEY, frame_id INTEGER, source TEXT, role TEXT,
                       text TEXT, left_bound REAL, top_bound REAL, width_bound REAL,
                       height_bound REAL);
"""


def test_screenpipe_time_span_covers_frames_and_input_events(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "span.sqlite",
        FULL_SCHEMA,
        {
            "frames": [
                (1, "2026-03-02T09:00:05Z", "Code", None, None, "m"),
                (2, "2026-03-02T10:00:00", "Code", None, None, "m"),
            ],
            "ui_events": [
                (1, "2026-03-02T09:00:01.5+00:00", "key", None, None, None, None, None, None,
                 None, None, 1),
                (2, "2026-03-02T09:30:00Z", "key", None, None, None, None, None, None, None,
                 None, 1),
            ],
        },
    )  # fmt: skip
    assert screenpipe.time_span(path) == (at(9, 0, 1.5), at(10))
    frames_only = make_db(tmp_path / "frames.sqlite", OLD_FRAMES, {"frames": [
        (1, "2026-03-02T09:00:00Z", "Code", None, None),
        (2, "2026-03-02T11:00:00+01:00", "Code", None, None),
    ]})  # fmt: skip
    assert screenpipe.time_span(frames_only) == (at(9), at(10))
    empty = make_db(tmp_path / "empty.sqlite", FULL_SCHEMA, {})
    assert screenpipe.time_span(empty) is None
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database\n" * 200)
    with pytest.raises(SourceError, match=rf"^{text}: not a readable capture database \("):
        screenpipe.time_span(text)
    odd = make_db(tmp_path / "odd.sqlite", OLD_FRAMES, {"frames": [(1, "noon", "X", None, None)]})
    with pytest.raises(SourceError, match=rf"^{odd}: not a readable capture database \("):
        screenpipe.time_span(odd)


def test_screenpipe_input_rows_keep_every_field_in_the_window(tmp_path: Path) -> None:
    def event(n: int, stamp: str, kind: str, frame: int | None, **fields: Any) -> tuple[Any, ...]:
        names = ("x", "y", "text", "app", "window", "url", "name", "role")
        return (n, stamp, kind, *(fields.get(k) for k in names), frame)

    path = make_db(
        tmp_path / "inputs.sqlite",
        FULL_SCHEMA,
        {
            "frames": [
                (1, "2026-03-02T09:00:00Z", "Code", "a.py", None, "monitor_1"),
                (2, "2026-03-02T09:00:00Z", "Slack", None, None, None),
            ],
            "ui_events": [
                event(5, "2026-03-02T09:00:03Z", "click", 1, x=10, y=20, app="Code",
                      window="a.py", url="u", name="Run", role="AXButton"),
                event(4, "2026-03-02T09:00:02Z", "TEXT", 2, text="hi"),
                event(3, "2026-03-02T08:59:59Z", "key", 1),  # before the window
                event(6, "2026-03-02T10:00:00Z", "key", 1),  # at its end
                event(7, "2026-03-02T09:00:04Z", "hover", 1),
                event(8, "2026-03-02T09:00:05Z", "Hover", None),
                event(9, "2026-03-02T09:00:06Z", "scroll_wheel", None),
                event(10, "soon", "key", None),
                event(11, "2026-03-02T09:00:07", "key", 99),  # naive; its frame is unknown
                event(12, "2026-03-02T09:30:00+00:30", "key", 1),  # 09:00 UTC
            ],
        },
    )  # fmt: skip
    capture = screenpipe.read(path, at(9), at(10))
    base = INPUT_ID_BASE
    assert capture.inputs == [
        InputEvent(base + 12, at(9), "key", "monitor_1"),
        InputEvent(base + 4, at(9, 0, 2), "text", "0", None, None, text="hi"),
        InputEvent(base + 5, at(9, 0, 3), "click", "monitor_1", 10.0, 20.0, "Code", "a.py", "u",
                   "Run", "AXButton"),
        InputEvent(base + 11, at(9, 0, 7), "key", "0"),
    ]  # fmt: skip
    assert type(capture.inputs[2].x) is float
    assert capture.disclosures == [
        "3 ui_events rows of other types (hover, scroll_wheel) were left out.",
        "1 timestamp had no UTC offset and was read as UTC.",
        "1 timestamp carried a non-UTC offset; the times were converted, but rows were selected "
        "for the window by their written time.",
    ]  # an unreadable time is never selected for a window
    everything = screenpipe.read(path)
    assert "1 row with an unreadable timestamp was left out." in everything.disclosures
    assert "3 ui_events rows of other types (hover, scroll_wheel) were left out." in (
        everything.disclosures
    )
    assert "2 rows with an unreadable timestamp were left out." not in everything.disclosures


def test_screenpipe_ui_events_without_time_or_type_are_not_read(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "bare.sqlite",
        OLD_FRAMES + "CREATE TABLE ui_events (id INTEGER, timestamp TEXT, kind TEXT);",
        {"frames": [(1, "2026-03-02T09:00:00Z", "Code", None, None)],
         "ui_events": [(1, "2026-03-02T09:00:01Z", "key")]},
    )  # fmt: skip
    capture = screenpipe.read(path)
    assert capture.inputs == []
    assert (
        "The ui_events table has no timestamp or event_type column; no input events were read."
        in capture.disclosures
    )
    one_missing = make_db(
        tmp_path / "one.sqlite",
        OLD_FRAMES + "CREATE TABLE ui_events (timestamp TEXT, event_type TEXT, x, y, text_content,"
        " app_name, window_title, browser_url, element_name);",
        {"ui_events": [("2026-03-02T09:00:01Z", "key", 1, 2, None, None, None, None, None)]},
    )  # fmt: skip
    read = screenpipe.read(one_missing)
    assert [(e.id, e.x, e.y) for e in read.inputs] == [(INPUT_ID_BASE + 1, 1.0, 2.0)]
    assert (
        "The ui_events table has no element_role column (an older schema); those fields are "
        "empty on every input event." in read.disclosures
    )
    assert (
        "The frames table has no device_name column (an older schema); every snapshot is on "
        "monitor 0." in read.disclosures
    )
    assert not any("frame_id column" in d for d in read.disclosures)


def test_screenpipe_frame_ids_must_stay_below_input_ids(tmp_path: Path) -> None:
    path = make_db(tmp_path / "big.sqlite", OLD_FRAMES, {"frames": [
        (INPUT_ID_BASE - 1, "2026-03-02T09:00:00Z", "Code", None, None),
    ]})  # fmt: skip
    assert [s.id for s in screenpipe.read(path).snapshots] == [INPUT_ID_BASE - 1]
    make_db(path, "", {"frames": [(INPUT_ID_BASE, "2026-03-02T09:00:01Z", "Code", None, None)]})
    with pytest.raises(SourceError) as caught:
        screenpipe.read(path)
    assert str(caught.value) == (
        f"{path}: a frame id reaches 1,000,000,000,000, where input ids begin; this reader "
        "cannot keep the two apart."
    )


def test_screenpipe_frames_with_naive_offset_and_unreadable_times_are_counted(
    tmp_path: Path,
) -> None:
    path = make_db(tmp_path / "t.sqlite", OLD_FRAMES, {"frames": [
        (1, "2026-03-02T09:00:00", "A", None, None),
        (2, "2026-03-02T09:00:01", "A", None, None),
        (3, "2026-03-02T09:30:02+00:30", "A", None, None),
        (4, "2026-03-02T09:30:03+00:30", "A", None, None),
        (5, "2026-03-02T09:00:04+00:00", "A", None, None),  # UTC written as an offset
        (6, "later", "A", None, None),
        (7, None, "A", None, None),
        (8, "2026-03-02T09:00:05Z", None, None, None),
        (9, "2026-03-02T09:00:06Z", "", None, None),
        (10, "2026-03-02T08:00:00", "A", None, None),  # naive, outside the window
        (11, "2026-03-02T11:00:00+01:00", "A", None, None),  # 10:00 UTC: at the end
    ]})  # fmt: skip
    capture = screenpipe.read(path, at(9), at(10))
    assert [(s.id, s.t) for s in capture.snapshots] == [
        (1, at(9)), (2, at(9, 0, 1)), (3, at(9, 0, 2)), (4, at(9, 0, 3)), (5, at(9, 0, 4)),
    ]  # fmt: skip
    assert [d for d in capture.disclosures if d[0].isdigit()] == [
        "2 frames without an app name were left out.",
        "2 timestamps had no UTC offset and were read as UTC.",
        "2 timestamps carried a non-UTC offset; the times were converted, but rows were "
        "selected for the window by their written time.",
    ]
    assert "2 rows with an unreadable timestamp were left out." in (
        screenpipe.read(path).disclosures
    )


def test_screenpipe_element_trees_without_source_id_or_bounds(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "plain.sqlite",
        OLD_FRAMES + "CREATE TABLE elements (frame_id INTEGER, role TEXT, text TEXT);",
        {
            "frames": [
                (2, "2026-03-02T09:00:00Z", "Code", None, None),
                (1, "2026-03-02T09:00:05Z", "Code", None, None),  # ids out of time order
            ],
            "elements": [(1, "AXWindow", "one"), (2, "AXWindow", "two"), (2, None, "two b")],
        },
    )
    capture = screenpipe.read(path)
    assert [s.id for s in capture.snapshots] == [2, 1]
    loaded = capture.element_loader([1, 2])  # type: ignore[misc]
    # Trees come by snapshot id, each in stored order (elements_for keys them by id).
    assert [(e.snapshot_id, e.role, e.name, e.bounds) for e in loaded] == [
        (1, "AXWindow", "one", None), (2, "AXWindow", "two", None), (2, "", "two b", None),
    ]  # fmt: skip
    sentence = (
        "The elements table has no bounds columns; elements carry no bounds, so clicks cannot "
        "be matched to them."
    )
    capture.elements_for([1])
    assert capture.disclosures.count(sentence) == 1  # said once however often trees load
    assert not any("OCR" in d for d in capture.disclosures)


def test_screenpipe_elements_without_frame_ids_or_gone_since_the_read(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "noframe.sqlite",
        OLD_FRAMES + "CREATE TABLE elements (id INTEGER, role TEXT);",
        {"frames": [(1, "2026-03-02T09:00:00Z", "Code", None, None)]},
    )
    capture = screenpipe.read(path)
    assert capture.element_loader is None
    assert (
        "The elements table has no frame_id column; no element trees were read."
        in capture.disclosures
    )
    gone = make_db(
        tmp_path / "gone.sqlite",
        OLD_FRAMES + "CREATE TABLE elements (frame_id INTEGER, role TEXT, text TEXT);",
        {"frames": [(1, "2026-03-02T09:00:00Z", "Code", None, None)],
         "elements": [(1, "AXWindow", "a")]},
    )  # fmt: skip
    with screenpipe.CaptureDatabase(gone) as database:
        open_read = database.read()
        recorder = sqlite3.connect(gone)
        recorder.execute("DROP TABLE elements")
        recorder.commit()
        recorder.close()
        assert open_read.elements_for([1]) == {}
    closed_read = screenpipe.read(gone)
    assert closed_read.element_loader is None
    assert (
        "The elements table is gone or has no frame_id column now; no element trees were read."
        in open_read.disclosures
    )


def test_open_reader_keeps_input_context_unless_told_and_paths_may_hold_colons(
    sp_day: Path, tmp_path: Path
) -> None:
    from compiler.sources import open_reader

    full = open_reader(f"screenpipe:{sp_day}")(at(9), at(10))
    assert full.inputs and all(e.app for e in full.inputs if e.type == "click")
    lean = open_reader(f"screenpipe:{sp_day}", input_context=False)(at(9), at(10))
    assert {e.app for e in lean.inputs} == {None}
    odd = tmp_path / "a:b.jsonl"
    odd.write_text(json.dumps(_records()[0]) + "\n")
    assert [s.app for s in open_reader(f"jsonl:{odd}")(None, None).snapshots] == ["Code"]


def test_jsonl_a_line_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(_records()[0]).encode() + b'\n{"kind": "caf\xe9"}\n')
    with pytest.raises(SourceError, match=rf"^{path}:2: not valid JSON \("):
        jsonl.read(path)


def test_screenpipe_window_edges_are_exact_for_every_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    path = make_db(tmp_path / "edges.sqlite", OLD_FRAMES, {"frames": [
        (1, "2026-03-02T10:00:00.5Z", "A", None, None),  # in the end's second, after the end
        (2, "2026-03-02T09:59:59.5Z", "A", None, None),  # the end's second before
        (3, "2026-03-02T10:00:00", "A", None, None),  # naive, exactly the end
        (4, "2026-03-02T09:30:00-00:30", "A", None, None),  # 10:00 UTC, exactly the end
        (5, "0", "A", None, None),  # unreadable, sorts before any start
        (6, "1970-01-01T00:00:00.5Z", "A", None, None),
        (7, "2026-03-02T09:00:00", "A", None, None),  # naive, exactly the start
    ]})  # fmt: skip
    monkeypatch.setenv("TZ", "America/New_York")  # the local zone never enters
    time.tzset()
    try:
        part = screenpipe.read(path, at(9), at(10))
        opened = screenpipe.read(path, at(9))
        early = screenpipe.read(path, 0.0, at(9))
        far = screenpipe.read(path, at(9), 1e13)  # past what strftime can write
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert [s.id for s in part.snapshots] == [7, 2]
    assert not any("unreadable" in d for d in part.disclosures)
    assert [s.id for s in opened.snapshots] == [7, 2, 3, 4, 1]
    assert [s.id for s in early.snapshots] == [6]
    assert [s.id for s in far.snapshots] == [7, 2, 3, 4, 1]
    assert (
        "The frames table has no device_name column (an older schema); every snapshot is on "
        "monitor 0." in part.disclosures
    )


def test_screenpipe_frames_without_window_or_url_columns_say_so(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "lean.sqlite",
        "CREATE TABLE frames (id INTEGER, timestamp TEXT, app_name TEXT, browser_url TEXT);",
        {"frames": [(1, "2026-03-02T09:00:00Z", "Code", "https://x/")]},
    )
    capture = screenpipe.read(path)
    assert capture.snapshots == [Snapshot(1, at(9), "0", "Code", None, "https://x/")]
    assert capture.disclosures[0] == (
        "The frames table has no window_name column (an older schema); those fields are empty "
        "on every snapshot."
    )
    both = make_db(
        tmp_path / "bare.sqlite",
        "CREATE TABLE frames (id INTEGER, timestamp TEXT, app_name TEXT);",
        {"frames": [(1, "2026-03-02T09:00:00Z", "Code")]},
    )
    assert screenpipe.read(both).disclosures[0] == (
        "The frames table has no window_name or browser_url column (an older schema); those "
        "fields are empty on every snapshot."
    )


def test_screenpipe_time_span_compares_times_not_spellings(tmp_path: Path) -> None:
    # As text, the space-separated row sorts first and the +01:00 row last; as time, neither.
    mixed = make_db(tmp_path / "mixed.sqlite", OLD_FRAMES, {"frames": [
        (1, "2026-03-02 09:30:00", "Code", None, None),
        (2, "2026-03-02T08:00:00Z", "Code", None, None),
        (3, "2026-03-02T11:00:00+01:00", "Code", None, None),
        (4, "2026-03-02T10:30:00Z", "Code", None, None),
        (5, "2026-03-02T07:45:00-00:30", "Code", None, None),
    ]})  # fmt: skip
    assert screenpipe.time_span(mixed) == (at(8), at(10, 30))


def test_screenpipe_time_span_reads_naive_times_as_utc_in_any_local_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    naive = make_db(tmp_path / "naive.sqlite", OLD_FRAMES, {"frames": [
        (1, "2026-03-02T09:00:00", "Code", None, None),
        (2, "2026-03-02T10:00:00", "Code", None, None),
    ]})  # fmt: skip
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert screenpipe.time_span(naive) == (at(9), at(10))
    finally:
        monkeypatch.undo()
        time.tzset()


def test_screenpipe_time_span_of_input_events_alone(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "inputs-only.sqlite",
        "CREATE TABLE ui_events (id INTEGER, timestamp TEXT, event_type TEXT);",
        {"ui_events": [(1, "2026-03-02T09:00:00Z", "key"), (2, "2026-03-02T09:05:00Z", "key")]},
    )
    assert screenpipe.time_span(path) == (at(9), at(9, 5))


def test_screenpipe_a_fractional_end_and_the_last_writable_second(tmp_path: Path) -> None:
    path = make_db(tmp_path / "late.sqlite", OLD_FRAMES, {"frames": [
        (1, "2026-03-02T09:59:59.5Z", "A", None, None),
        (2, "9999-12-31T23:59:58.5Z", "A", None, None),
    ]})  # fmt: skip
    assert [s.id for s in screenpipe.read(path, at(9), at(9, 59, 59.75)).snapshots] == [1]
    assert [s.id for s in screenpipe.read(path, at(9), at(9, 59, 59.25)).snapshots] == []
    assert [s.id for s in screenpipe.read(path, at(10), 1e13).snapshots] == [2]


def test_screenpipe_ui_events_of_two_columns_and_names_shared_with_frames(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "two.sqlite",
        "CREATE TABLE frames (id INTEGER, timestamp TEXT, app_name TEXT, device_name TEXT,"
        " x REAL, element_role TEXT);"
        "CREATE TABLE ui_events (timestamp TEXT, event_type TEXT);",
        {"ui_events": [("2026-03-02T09:00:01Z", "key")]},
    )
    capture = screenpipe.read(path)
    assert [(e.id, e.t, e.type) for e in capture.inputs] == [
        (INPUT_ID_BASE + 1, at(9, 0, 1), "key")
    ]
    shared = make_db(
        tmp_path / "shared.sqlite",
        "CREATE TABLE frames (id INTEGER, timestamp TEXT, app_name TEXT, device_name TEXT,"
        " x REAL, y REAL, element_name TEXT, element_role TEXT, text_content TEXT);"
        "CREATE TABLE ui_events (id INTEGER, timestamp TEXT, event_type TEXT, x, y,"
        " text_content, app_name, window_title, browser_url, frame_id);",
        {
            "frames": [(1, "2026-03-02T09:00:00Z", "Code", "m", 9, 9, "F", "F", "F")],
            "ui_events": [(1, "2026-03-02T09:00:01Z", "click", 3, 4, None, None, None, None, 1)],
        },
    )
    read = screenpipe.read(shared)
    assert read.inputs == [InputEvent(INPUT_ID_BASE + 1, at(9, 0, 1), "click", "m", 3.0, 4.0)]
    assert (
        "The ui_events table has no element_name, element_role columns (an older schema); those "
        "fields are empty on every input event." in read.disclosures
    )


def test_screenpipe_element_rows_order_partial_bounds_and_ocr_counts(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "rows.sqlite",
        OLD_FRAMES
        + """CREATE TABLE elements (id INTEGER, frame_id INTEGER, source TEXT, role TEXT,
                                    text TEXT, left_bound REAL, top_bound REAL,
                                    width_bound REAL, height_bound REAL);""",
        {
            "frames": [(1, "2026-03-02T09:00:00Z", "Code", None, None)],
            "elements": [  # stored out of id order: the tree follows the ids
                (4, 1, "accessibility", "D", "d", 0.1, 0.2, None, 0.4),
                (3, 1, "accessibility", "C", "c", 0.1, None, 0.3, 0.4),
                (2, 1, "ocr", "B", "b", None, 0.2, 0.3, 0.4),
                (1, 1, "ocr", "A", "a", 0.1, 0.2, 0.3, 0.4),
            ],
        },
    )
    capture = screenpipe.read(path)
    assert capture.elements_for([1]) == {
        1: [
            Element(1, "A", "a", (0.1, 0.2, 0.3, 0.4)),
            Element(1, "B", "b", None),  # a box missing any side is no box
            Element(1, "C", "c", None),
            Element(1, "D", "d", None),
        ]
    }
    assert (
        "2 elements came from OCR rather than the accessibility tree; element records do not "
        "mark which." in capture.disclosures
    )


def test_screenpipe_a_range_scan_skips_the_frames_not_asked_for(tmp_path: Path) -> None:
    frames = [(n, f"2026-03-02T09:{n // 60:02d}:{n % 60:02d}Z", "A", None, None) for n in
              range(1, 601)]  # fmt: skip
    path = make_db(
        tmp_path / "many.sqlite",
        OLD_FRAMES + "CREATE TABLE elements (frame_id INTEGER, role TEXT, text TEXT);",
        {"frames": frames, "elements": [(n, "AXWindow", str(n)) for n in range(1, 601)]},
    )
    capture = screenpipe.read(path)
    asked = [n for n in range(1, 601) if n != 300]  # more than 500: one range scan
    trees = capture.elements_for(asked)
    assert sorted(trees) == asked
    assert trees[301] == [Element(301, "AXWindow", "301")]


def test_activitywatch_equal_pages_of_two_buckets_go_to_the_later_bucket() -> None:
    from compiler.sources.activitywatch import read_export

    window = [_ev("2026-03-02T09:00:00+00:00", 30.0, app="Firefox")]
    page = _ev("2026-03-02T09:00:00+00:00", 30.0)
    export = {"buckets": {
        "w": _bucket("aw-watcher-window_h", "currentwindow", window),
        "a": _bucket("aw-watcher-web_a", "web.tab.current", [{**page, "data": {"url": "https://a/"}}]),
        "b": _bucket("aw-watcher-web_b", "web.tab.current", [{**page, "data": {"url": "https://b/"}}]),
    }}  # fmt: skip
    assert [s.url for s in read_export(export).snapshots] == ["https://b/"]


def test_activitywatch_rows_of_a_window_cut_inside_intervals() -> None:
    from compiler.sources.activitywatch import read_export

    export = _export([])
    whole = read_export(export)
    part = read_export(export, at(9, 0, 45), at(9, 1, 31))
    assert [(s.app, s.t) for s in part.snapshots] == [("Code", at(9, 1)), ("Code", at(9, 1, 30))]
    assert {astuple(s) for s in part.snapshots} <= {astuple(s) for s in whole.snapshots}


def test_activitywatch_names_and_lengths_are_counted_only_for_intervals_in_the_window(
    tmp_path: Path,
) -> None:
    from compiler.sources.activitywatch import Export, read_export

    exactly = 100_000 * 30.0  # 10^5 heartbeats: the most an id can hold, not cut
    export = {"buckets": {"w": _bucket("aw-watcher-window_h", "currentwindow", [
        _ev("2026-03-02T09:00:00+00:00", 10.0, app="Code"),
        _ev("2026-03-02T09:01:00+00:00", 10.0, title="no app"),
        _ev("2026-03-02T09:02:00+00:00", 10.0, app=""),
        _ev("2026-03-02T10:00:00+00:00", exactly, app="Long"),
        _ev("2026-03-02T11:00:00+00:00", exactly + 30, app="Longer"),
        _ev("2026-03-02T11:00:01+00:00", exactly + 30, app="Longest"),
    ])}}  # fmt: skip
    later = read_export(export, at(9, 1), at(9, 5))
    assert later.snapshots == []
    assert "2 window intervals without an app name were left out." in later.disclosures
    earlier = read_export(export, at(8), at(8, 30))
    assert earlier.snapshots == [] and not any("app name" in d for d in earlier.disclosures)
    long = read_export(export, at(10), at(10, 30))
    assert [s.app for s in long.snapshots][:1] == ["Long"]
    assert not any("cut at that length" in d for d in long.disclosures)
    longer = read_export(export, at(11), at(11, 1))
    assert (
        "2 window intervals longer than 100,000 heartbeats were cut at that length."
        in longer.disclosures
    )
    bad = {"buckets": "all"}
    for refused, name in ((lambda: read_export(bad), "export"), (lambda: Export(bad), "export")):
        with pytest.raises(SourceError, match=rf"^{name}: 'buckets' must be"):
            refused()
    path = write(tmp_path / "bad.json", bad)
    with pytest.raises(SourceError, match=rf"^{path}: 'buckets' must be"):
        activitywatch.read(path)


def test_activitywatch_exports_in_utf16_and_buckets_without_events_read(tmp_path: Path) -> None:
    events = [_ev("2026-03-02T09:00:00+00:00", 10.0, app="Zoë")]
    export = {"buckets": {
        "aw-watcher-window_h": _bucket("aw-watcher-window_h", "currentwindow", events),
        "aw-watcher-afk_h": {"type": "afkstatus"},  # no events at all
    }}  # fmt: skip
    path = tmp_path / "utf16.json"
    path.write_bytes(json.dumps(export, ensure_ascii=False).encode("utf-16"))
    capture = activitywatch.read(path)
    assert [s.app for s in capture.snapshots] == ["Zoë"] and capture.absences == []
    assert not any("no AFK bucket" in d for d in capture.disclosures)


def test_activitywatch_twins_are_ordered_by_their_data_whatever_its_key_order() -> None:
    from compiler.sources.activitywatch import read_export

    when = {"timestamp": "2026-03-02T09:00:00+00:00", "duration": 10.0}
    b_first = {**when, "data": {"app": "B", "title": "a"}}
    a_last = {**when, "data": {"title": "b", "app": "A", "seen": datetime(2026, 3, 2, tzinfo=UTC)}}
    for events in ([b_first, a_last], [a_last, b_first]):
        capture = read_export({"id": "aw-watcher-window_h", "events": events})
        assert [(s.id, s.app) for s in capture.snapshots] == [
            (_row(at(9)), "A"),
            (_row(at(9)) + EVENT_STRIDE, "B"),
        ]


def test_activitywatch_the_last_second_an_id_can_number() -> None:
    from compiler.sources.activitywatch import ID_CEILING, read_export

    last = (ID_CEILING - EVENT_STRIDE) // EVENT_STRIDE  # 90,071,992,546: in the year 4824
    ok = datetime.fromtimestamp(last, UTC).isoformat()
    too_far = datetime.fromtimestamp(last + 1, UTC).isoformat()
    capture = read_export({"id": "aw-watcher-window_h", "events": [_ev(ok, 1.0, app="X")]})
    assert [s.id for s in capture.snapshots] == [last * EVENT_STRIDE]
    with pytest.raises(SourceError, match="too far ahead to number"):
        read_export({"id": "aw-watcher-window_h", "events": [_ev(too_far, 1.0, app="X")]})


# --------------------------------------------------------------------------------------------
# ActivityWatch: a read of one span of a long export equals the whole read
# --------------------------------------------------------------------------------------------

MIDNIGHT = datetime(2026, 3, 3, tzinfo=UTC).timestamp()


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat()


@st.composite
def _crowded_exports(draw: st.DrawFn) -> dict[str, Any]:
    """Window, AFK and web events packed around one midnight: bursts in one second (their
    numbers chain past it), long events crossing midnight, AFK spans merging across it."""
    offsets = st.sampled_from([0.0, 0.25, 0.5, 0.999])
    # Bursts: many events in a few seconds, some of them just outside the span's slack.
    seconds = st.one_of(st.integers(-200, 200), st.sampled_from([-95, -94, -93, -31, 0, 1, 62]))
    length = st.sampled_from([0.0, 1.0, 29.0, 30.0, 95.0, 400.0, 7200.0])

    def events(count: int, **data: Any) -> list[dict[str, Any]]:
        found = []
        for _ in range(count):
            t = MIDNIGHT + draw(seconds) + draw(offsets)
            found.append(_ev(_stamp(t), draw(length), **data))
        return found

    window = events(draw(st.integers(0, 25)), app="Code", title="a.py")
    window += events(draw(st.integers(0, 10)), app="Firefox", title="Docs")
    afk = events(draw(st.integers(0, 12)), status="afk") + events(2, status="not-afk")
    web = events(draw(st.integers(0, 8)), url="https://example.org/", title="Docs")
    return {
        "buckets": {
            "aw-watcher-window_h": _bucket("aw-watcher-window_h", "currentwindow", window),
            "aw-watcher-afk_h": _bucket("aw-watcher-afk_h", "afkstatus", afk),
            "aw-watcher-web-firefox_h": _bucket("aw-watcher-web-firefox_h", "web.tab.current", web),
        }
    }


@settings(max_examples=200, deadline=None)
@given(
    export=_crowded_exports(),
    start=st.one_of(st.integers(-150, 150), st.sampled_from([-60, -1, 0, 2])),
    length=st.sampled_from([1, 60, 120, 3600]),
)
def test_a_read_of_a_span_gives_every_row_and_id_a_whole_read_gives(
    export: dict[str, Any], start: int, length: int
) -> None:
    low = MIDNIGHT + start
    high = low + length
    whole = activitywatch.Export(export).read(low, high)
    assert activitywatch.Export(export, span=(low, high)).read(low, high) == whole
    assert activitywatch.read_export(export, low, high) == whole
    # A span holds any window within it.
    wide = activitywatch.Export(export, span=(low - 300, high + 300))
    assert wide.read(low, high) == whole


_ODD_EVENTS = st.one_of(
    st.fixed_dictionaries(
        {
            "timestamp": st.sampled_from(
                [
                    "2026-03-02T23:59:30+00:00",
                    "2026-03-03T00:00:00.999999+01:00",
                    "2026-03-03T00:00:10",  # naive: read as UTC and counted
                    "2026-03-03",
                    "noon",
                    "1999-01-01T00:00:00+00:00",
                ]
            )
            | st.integers(0, 2),
        },
        optional={
            "duration": st.sampled_from([0, 5, 30.0, -1.0, True, "5", math.inf, 10**400, None]),
            "data": st.sampled_from([{}, {"app": "Code"}, [], "x", None]),
        },
    ),
    st.sampled_from([[], "event", None]),
)


@settings(max_examples=300, deadline=None)
@given(
    plain=st.lists(
        st.builds(
            lambda second, length: _ev(_stamp(MIDNIGHT + second), length, app="Code"),
            st.integers(-120, 120),
            st.sampled_from([0, 1, 29.5, 30, 400.0, -2.5]),
        ),
        max_size=12,
    ),
    odd=st.lists(_ODD_EVENTS, max_size=2),
    where=st.integers(0, 12),
    whole=st.booleans(),
)
def test_a_bucket_checked_in_bulk_reads_as_checked_event_by_event(
    plain: list[dict[str, Any]], odd: list[Any], where: int, whole: bool
) -> None:
    """The bulk check of a bucket's events is only a faster way to the same result: the same
    events inside and outside the span, the same numbers and naive count, or the same error."""
    events = plain[:where] + odd + plain[where:]
    span = (MIDNIGHT - 60, MIDNIGHT + 60)

    def outcome(read: Callable[[activitywatch._Reader], Any]) -> tuple[Any, int]:
        reader = activitywatch._Reader("x.json", span)
        try:
            return read(reader), reader.naive
        except SourceError as exc:
            return str(exc), reader.naive

    bucket = {"id": "aw-watcher-window_h", "events": events}
    low, high = (-math.inf, math.inf) if whole else span
    bulk = outcome(lambda reader: reader.keyed(bucket, whole=whole))
    one_by_one = outcome(
        lambda reader: reader.one_by_one(
            bucket["id"], events, low - HEARTBEAT_S, high + HEARTBEAT_S
        )
    )
    assert bulk == one_by_one


def test_a_span_of_a_month_long_export_reads_each_day_as_the_whole_export_does(
    tmp_path: Path,
) -> None:
    days = [generate_aw(date(2026, 3, d), "Europe/Berlin", seed=7, afk=True) for d in (2, 3, 4)]
    export = copy.deepcopy(days[0].export)
    for later in days[1:]:
        for key, bucket in later.export["buckets"].items():
            export["buckets"][key]["events"].extend(bucket["events"])
    path = write(tmp_path / "month.json", export)
    whole = activitywatch.open_export(path)
    for d in (2, 3, 4):
        low = datetime(2026, 3, d, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
        high = low + 86400
        one = open_source(f"activitywatch:{path}", low, high)
        assert one == whole.read(low, high) and one.snapshots
        assert activitywatch.open_export(path, span=(low, high)).read(low, high) == one


def test_a_span_read_still_refuses_a_broken_event_outside_it_and_a_window_beyond_it(
    tmp_path: Path,
) -> None:
    export = _export([_ev("2026-03-02T12:00:00+00:00", 60.0, status="afk")])
    export["buckets"]["aw-watcher-window_h"]["events"].append(
        {"timestamp": "2026-02-01T08:00:00+00:00", "duration": "long", "data": {}}
    )
    path = write(tmp_path / "broken.json", export)
    for read in (
        lambda: activitywatch.read(path, at(9), at(10)),
        lambda: activitywatch.read(path),
    ):
        with pytest.raises(SourceError, match="duration must be a number of seconds"):
            read()
    fine = activitywatch.Export(_export([]), span=(at(9), at(10)))
    assert fine.read(at(9), at(9, 30)).snapshots
    with pytest.raises(ValueError, match="not within the span"):
        fine.read(at(8), at(10))
    with pytest.raises(ValueError, match="not within the span"):
        fine.read()
