"""The SYNTHETIC desktop-capture generator: valid, deterministic, realistically shaped days."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from datetime import date, datetime, timedelta
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

from aframes_web.streams.records import validate_item
from benchmark.synthetic import desktop
from benchmark.synthetic.desktop import generate_day, generate_days, write_jsonl

ROOT = Path(__file__).resolve().parent.parent
BERLIN = ZoneInfo("Europe/Berlin")
WEEK = [date(2026, 3, 2) + timedelta(days=n) for n in range(5)]  # Monday to Friday


@cache
def day_of(day: date, seed: int = 7, tz: str = "Europe/Berlin", monitors: int = 2) -> tuple:
    return tuple(generate_day(day, seed=seed, tz=tz, monitors=monitors))


def when(record: dict) -> datetime:
    return datetime.fromisoformat(record["occurred_at"])


def test_module_uses_only_the_standard_library() -> None:
    tree = ast.parse(Path(desktop.__file__).read_text())
    imported = {n.names[0].name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)}
    imported |= {
        n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}


def test_same_seed_gives_identical_days_and_another_seed_differs() -> None:
    first = generate_day(date(2026, 3, 4), seed=7)
    assert first == generate_day(date(2026, 3, 4), seed=7)
    assert first != generate_day(date(2026, 3, 4), seed=8)
    assert first != generate_day(date(2026, 3, 5), seed=7)


def test_written_jsonl_is_byte_identical_across_runs(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert write_jsonl(a, generate_days(WEEK[0], 2, seed=3)) == write_jsonl(
        b, generate_days(WEEK[0], 2, seed=3)
    )
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes().endswith(b"\n")


def test_every_record_passes_validation() -> None:
    days = [*WEEK, date(2026, 3, 7), date(2026, 3, 29)]
    for day in days:
        for item in day_of(day):
            record, dropped = validate_item(item, scope="desktop", store_text=True)
            assert dropped == 0
            assert record.occurred_at == when(item)
    for item in day_of(WEEK[2], seed=1, tz="America/New_York", monitors=3):
        validate_item(item, scope="desktop", store_text=True)


def test_timestamps_are_utc_z_with_microseconds() -> None:
    for item in day_of(WEEK[0]):
        assert item["occurred_at"].endswith("Z")
        assert len(item["occurred_at"]) == len("2026-03-02T08:31:12.345678Z")


def test_source_keys_are_unique_across_days_and_monitors() -> None:
    records = list(generate_days(WEEK[0], 9, seed=7, monitors=3, include_weekends=True))
    keys = [r["source_key"] for r in records]
    assert len(keys) == len(set(keys))
    assert {r["monitor"] for r in records} == {"0", "1", "2"}


def test_records_are_sorted_by_time_then_source_key() -> None:
    for day in WEEK:
        records = day_of(day)
        order = [(when(r), r["source_key"]) for r in records]
        assert order == sorted(order)


def test_a_lunch_gap_of_at_least_30_minutes_and_no_gap_of_more_than_an_hour() -> None:
    for day in WEEK:
        times = [when(r) for r in day_of(day)]
        gaps = [(b - a).total_seconds() / 60 for a, b in zip(times, times[1:], strict=False)]
        lunch = [g for g in gaps if g >= 30]
        assert len(lunch) == 1, (day, sorted(gaps)[-3:])
        assert lunch[0] <= 61
        starts = [
            a.astimezone(BERLIN)
            for a, b in zip(times, times[1:], strict=False)
            if (b - a).total_seconds() >= 30 * 60
        ]
        assert 11 <= starts[0].hour <= 13


def test_working_day_spans_morning_to_evening_in_local_time() -> None:
    for day in WEEK:
        records = day_of(day)
        first, last = when(records[0]).astimezone(BERLIN), when(records[-1]).astimezone(BERLIN)
        assert first.date() == day == last.date()
        assert (8, 30) <= (first.hour, first.minute) <= (9, 30)
        assert (16, 55) <= (last.hour, last.minute) <= (18, 31)


def test_size_per_day_at_defaults() -> None:
    for day in WEEK:
        assert 2_000 <= len(day_of(day)) <= 5_000


def test_both_monitors_present_and_the_side_monitor_is_slower() -> None:
    for day in WEEK:
        snapshots = Counter(r["monitor"] for r in day_of(day) if r["kind"] == "snapshot")
        assert set(snapshots) == {"0", "1"}
        assert snapshots["1"] * 2 < snapshots["0"]


def test_main_monitor_cadence_is_irregular_between_2_and_30_seconds() -> None:
    records = [r for r in day_of(WEEK[1]) if r["kind"] == "snapshot" and r["monitor"] == "0"]
    gaps = [
        (when(b) - when(a)).total_seconds()
        for a, b in zip(records, records[1:], strict=False)
        if a["payload"]["app"] == b["payload"]["app"] != "loginwindow"
    ]
    assert min(gaps) >= 1.0
    assert sorted(gaps)[len(gaps) * 9 // 10] <= 30
    assert len({round(g) for g in gaps}) > 20


def test_inputs_and_elements_belong_to_an_earlier_snapshot_on_their_monitor() -> None:
    for day in WEEK[:2]:
        records = day_of(day)
        snapshots = {r["source_key"]: r for r in records if r["kind"] == "snapshot"}
        latest: dict[str, str] = {}
        for r in records:
            if r["kind"] == "snapshot":
                latest[r["monitor"]] = r["source_key"]
                continue
            owner = snapshots[r["payload"]["snapshot"]]
            assert owner["monitor"] == r["monitor"]
            assert latest[r["monitor"]] == owner["source_key"]
            if r["kind"] == "input":
                for key in ("app", "window", "url"):
                    assert r["payload"][key] == owner["payload"][key]


def test_app_switch_accompanies_every_change_of_the_focused_app() -> None:
    records = day_of(WEEK[2])
    switches = {
        r["payload"]["snapshot"] for r in records if r["payload"].get("type") == "app_switch"
    }
    focused = [
        r
        for r in records
        if r["kind"] == "snapshot" and r["payload"]["focused"] and r["monitor"] == "0"
    ]
    changed = [
        b["source_key"]
        for a, b in zip(focused, focused[1:], strict=False)
        if a["payload"]["app"] != b["payload"]["app"]
    ]
    assert len(changed) > 20
    assert set(changed) <= switches


def test_realistic_apps_sites_and_a_lock_screen() -> None:
    records = [r for day in WEEK for r in day_of(day)]
    apps = {r["payload"]["app"] for r in records if r["kind"] == "snapshot"}
    assert {"Code", "Terminal", "Slack", "Zoom", "loginwindow"} <= apps
    assert apps & {"Firefox", "Google Chrome"}
    urls = " ".join({r["payload"]["url"] or "" for r in records if r["kind"] == "snapshot"})
    for site in (
        "github.com/acme/aframes/pull/",
        "docs.djangoproject.com",
        "stackoverflow.com/questions/",
        "mail.google.com",
        "calendar.google.com",
        ".atlassian.net/browse/AF-",
        "www.notion.so/",
    ):
        assert site in urls, site
    for r in records:
        if r["kind"] == "snapshot" and r["payload"]["app"] in {"Code", "Slack", "Zoom", "Terminal"}:
            assert r["payload"]["url"] is None
    assert any(
        " — aframes" in (r["payload"]["window"] or "")
        for r in records
        if r["payload"].get("app") == "Code"
    )


def test_a_flicker_returns_to_the_same_window_within_seconds() -> None:
    snapshots = [
        r for day in WEEK for r in day_of(day) if r["kind"] == "snapshot" and r["monitor"] == "0"
    ]
    flickers = 0
    for a, b, c in zip(snapshots, snapshots[1:], snapshots[2:], strict=False):
        if (
            a["payload"]["window"] == c["payload"]["window"] != b["payload"]["window"]
            and a["payload"]["app"] != b["payload"]["app"]
            and (when(c) - when(b)).total_seconds() <= 16
        ):
            flickers += 1
    assert flickers >= 1


def test_clicks_are_pixels_and_mostly_name_their_element() -> None:
    clicks = [r["payload"] for r in day_of(WEEK[0]) if r["payload"].get("type") == "click"]
    assert clicks
    assert all(0 <= c["x"] < 1920 and 0 <= c["y"] < 1080 for c in clicks)
    named = [c for c in clicks if c["element_name"]]
    assert all(c["element_role"].startswith("AX") for c in named)
    assert 0.5 < len(named) / len(clicks) < 1


def test_about_a_fifth_of_snapshots_carry_a_small_accessibility_tree() -> None:
    records = day_of(WEEK[3])
    snapshots = [r for r in records if r["kind"] == "snapshot"]
    trees = [r["payload"]["elements"] for r in records if r["kind"] == "elements"]
    assert 0.15 < len(trees) / len(snapshots) < 0.25
    for tree in trees:
        assert 3 <= len(tree) <= 8
        assert tree[0]["parent"] is None
        for index, element in enumerate(tree):
            assert element["source"] == "accessibility"
            assert element["parent"] is None or element["parent"] < index
            left, top, width, height = element["bounds"]
            assert min(left, top) >= 0
            assert max(left + width, top + height) <= 1.0001


def test_text_and_clipboard_carry_text_that_is_dropped_without_opt_in() -> None:
    texts = [
        r
        for r in day_of(WEEK[0])
        if r["kind"] == "input" and r["payload"]["type"] in {"text", "clipboard"}
    ]
    assert {r["payload"]["type"] for r in texts} == {"text", "clipboard"}
    for item in texts:
        assert item["payload"]["text"].strip()
        record, dropped = validate_item(item, scope="desktop", store_text=False)
        assert dropped == 1
        assert "text" not in record.payload
    others = [r for r in day_of(WEEK[0]) if r["kind"] == "input" and r not in texts]
    assert all("text" not in r["payload"] for r in others)


def test_dst_day_is_still_a_plausible_local_day() -> None:
    # 2026-03-29: Berlin moves from +01:00 to +02:00 at 02:00 local (a Sunday).
    records = generate_day(date(2026, 3, 29), seed=7)
    local = [when(r).astimezone(BERLIN) for r in records]
    assert all(t.utcoffset() == timedelta(hours=2) for t in local)
    assert all(t.date() == date(2026, 3, 29) for t in local)
    assert local[0].hour >= 9
    assert local[-1].hour <= 17
    # Around the change the local start stays in the morning, so UTC moves by an hour.
    before = when(day_of(date(2026, 3, 27))[0])
    after = when(day_of(date(2026, 3, 30))[0])
    for start in (before, after):
        local_start = start.astimezone(BERLIN)
        assert (8, 30) <= (local_start.hour, local_start.minute) <= (9, 30)
    assert before.hour in (7, 8) and after.hour in (6, 7)
    new_york = generate_day(date(2026, 3, 9), seed=7, tz="America/New_York")
    first = when(new_york[0]).astimezone(ZoneInfo("America/New_York"))
    assert first.utcoffset() == timedelta(hours=-4)
    assert (8, 30) <= (first.hour, first.minute) <= (9, 30)


def test_weekends_are_skipped_unless_asked_for() -> None:
    days = {r["source_key"].split(":")[3] for r in generate_days(date(2026, 3, 6), 3, seed=1)}
    assert days == {"20260306"}  # Friday; Saturday and Sunday skipped
    days = {
        r["source_key"].split(":")[3]
        for r in generate_days(date(2026, 3, 6), 3, seed=1, include_weekends=True)
    }
    assert days == {"20260306", "20260307", "20260308"}


def test_cli_events_writes_exactly_that_many_lines(tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    command = [
        sys.executable,
        "-m",
        "benchmark.synthetic.desktop",
        "--start",
        "2026-03-06",
        "--events",
        "7000",
        "--seed",
        "7",
        "--out",
        str(out),
    ]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
    lines = out.read_bytes().splitlines()
    assert len(lines) == 7000
    assert b"20260309" in lines[-1]  # more than one day: the Friday, then the Monday


def test_cli_days_matches_the_library(tmp_path: Path) -> None:
    out = tmp_path / "days.jsonl"
    command = [
        sys.executable,
        "-m",
        "benchmark.synthetic.desktop",
        "--start",
        "2026-03-02",
        "--days",
        "1",
        "--seed",
        "7",
        "--out",
        str(out),
    ]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
    expected = tmp_path / "expected.jsonl"
    write_jsonl(expected, generate_day(date(2026, 3, 2), seed=7))
    assert out.read_bytes() == expected.read_bytes()


def test_the_synthetic_generators_need_no_django_and_nothing_of_the_product() -> None:
    """The demo data (make run) and the benchmark's synthetic streams come from one pure
    package: stdlib and its siblings only, so the product may build on it, never the reverse."""
    folder = ROOT / "benchmark" / "synthetic"
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text())
        modules = {n.names[0].name for n in ast.walk(tree) if isinstance(n, ast.Import)}
        modules |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        roots = {m.split(".")[0] for m in modules}
        assert roots <= set(sys.stdlib_module_names) | {"__future__", "benchmark"}, path.name
        inner = {m for m in modules if m.startswith("benchmark")}
        assert all(m.startswith("benchmark.synthetic") for m in inner), (path.name, inner)
