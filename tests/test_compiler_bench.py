"""The compile benchmark's SYNTHETIC days: exact row counts, both monitors, order, one date.

Only our parts are tested here; timings and the reference comparison live in the benchmark.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from benchmark.synthetic import aw_day
from benchmark.synthetic.aw_day import local_day_bounds
from benchmark.synthetic.native import write_screenpipe
from compiler.document import day_window
from compiler.sources import open_source
from perf import compiler_bench
from perf.compiler_bench import (
    AW_FIRST_DAY,
    EDGE_S,
    BenchDay,
    aw_days,
    aw_history,
    build_day,
    cli_commands,
    cli_env,
    default_sizes,
    fit_line,
    minutes_error_pct,
    reference_records,
    wall_medians,
    with_history,
)

MONDAY = date(2026, 1, 5)
TZ = "Europe/Berlin"


def epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def snapshots(bench: BenchDay) -> list[dict[str, Any]]:
    return [r for r in bench.records if r["kind"] == "snapshot"]


def assert_plausible(bench: BenchDay) -> None:
    rows = snapshots(bench)
    assert len(rows) == bench.rows
    assert set(Counter(str(r["monitor"]) for r in rows)) == {"0", "1"}
    times = [epoch(r["occurred_at"]) for r in bench.records]
    assert times == sorted(times)
    for monitor in ("0", "1"):
        mine = [epoch(r["occurred_at"]) for r in rows if str(r["monitor"]) == monitor]
        assert all(b > a for a, b in zip(mine, mine[1:], strict=False)), monitor
    start, end = day_window(bench.day, ZoneInfo(TZ))
    assert start + EDGE_S - 1 <= times[0] and times[-1] <= end - EDGE_S + 1
    kept = {r["source_key"] for r in rows}
    assert all(r["payload"]["snapshot"] in kept for r in bench.records if r["kind"] != "snapshot")


def test_small_day_is_cut_at_exactly_the_row_count_on_both_monitors() -> None:
    bench = build_day(600, MONDAY, tz=TZ)
    assert bench.pieces == [MONDAY]
    assert bench.squeeze == 1.0
    assert_plausible(bench)
    assert {"input", "elements"} <= {r["kind"] for r in bench.records}


def test_bigger_day_stitches_working_days_with_a_gap_between_them() -> None:
    bench = build_day(3_000, MONDAY, tz=TZ)
    assert bench.pieces == [MONDAY, date(2026, 1, 6)]
    assert_plausible(bench)
    times = [epoch(r["occurred_at"]) for r in bench.records]
    assert max(b - a for a, b in zip(times, times[1:], strict=False)) >= 20 * 60


def test_six_thousand_rows_fit_one_calendar_day_by_a_uniform_squeeze() -> None:
    bench = build_day(6_000, date(2026, 2, 2), tz=TZ)
    assert len(bench.pieces) == 3
    assert 0.85 < bench.squeeze < 1.0
    assert_plausible(bench)


def test_written_day_reads_back_with_every_row(tmp_path: Path) -> None:
    bench = build_day(600, MONDAY, tz=TZ)
    path = tmp_path / "day.sqlite"
    assert write_screenpipe(path, bench.records)["frames"] == 600
    start, end = day_window(MONDAY, ZoneInfo(TZ))
    capture = open_source(f"screenpipe:{path}", start, end)
    unfocused = sum(1 for r in snapshots(bench) if r["payload"]["focused"] is False)
    assert unfocused > 0
    assert len(capture.snapshots) == 600  # unfocused rows too: both sides read every row
    assert {s.monitor for s in capture.snapshots} == {"monitor_0", "monitor_1"}


def test_weekend_start_is_refused() -> None:
    with pytest.raises(ValueError, match="weekend"):
        build_day(100, date(2026, 1, 10), tz=TZ)


def test_default_sizes_spread_over_the_issue_range() -> None:
    assert default_sizes(1) == [2_000]
    assert default_sizes(3) == [2_000, 4_000, 6_000]
    assert default_sizes(5) == [2_000, 3_000, 4_000, 5_000, 6_000]


def test_fit_line_recovers_a_line() -> None:
    slope, intercept, r2 = fit_line([1, 2, 3, 4], [3, 5, 7, 9])
    assert (round(slope, 9), round(intercept, 9), round(r2, 9)) == (2, 1, 1)


def test_prefix_cuts_take_turns_each_timed_warm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each round times every cut once, right after an untimed call of the same cut: a slow
    stretch of the machine then slows all cuts alike, and no timed call is a cold one."""
    bench = build_day(2_500, MONDAY, tz=TZ)
    compiled: list[int] = []
    real = compiler_bench._compile

    def counting(capture: Any, day: date, tz: str, params: Any = None) -> Any:
        compiled.append(len(capture.snapshots))
        return real(capture, day, tz, params)

    monkeypatch.setattr(compiler_bench, "_compile", counting)
    series = compiler_bench.prefix_series(bench, tmp_path, repeat=2)
    assert [rows for rows, _c, _t in series] == [1_000, 2_000, 2_500]
    assert all(0 < compile_ms <= total_ms for _r, compile_ms, total_ms in series)
    one_round = [1_000, 1_000, 2_000, 2_000, 2_500, 2_500]
    assert compiled == one_round * 2


def test_aw_days_are_consecutive_weekdays_with_an_afk_bucket() -> None:
    days = aw_days(2, TZ)
    assert [d for d, _ in days] == [AW_FIRST_DAY, date(2026, 3, 3)]
    assert all(d.weekday() < 5 for d, _ in days)
    assert all(any("afk" in bucket for bucket in day.export["buckets"]) for _, day in days)
    assert aw_days(0, TZ) == []
    with pytest.raises(ValueError, match="aw-days"):
        aw_days(6, TZ)


def test_an_export_with_history_holds_the_working_days_before_and_reads_the_same_day(
    tmp_path: Path,
) -> None:
    ((day, generated),) = aw_days(1, TZ)  # a Monday
    history = aw_history(day, 3, TZ)
    starts = [first_event_day(h) for h in history]
    assert starts == [date(2026, 2, 27), date(2026, 2, 26), date(2026, 2, 25)]  # no weekend
    merged = with_history(generated.export, history)
    for key, bucket in generated.export["buckets"].items():
        expected = len(bucket["events"]) + sum(
            len(h.export["buckets"][key]["events"]) for h in history
        )
        assert len(merged["buckets"][key]["events"]) == expected
    alone, whole = tmp_path / "alone.json", tmp_path / "whole.json"
    alone.write_text(json.dumps(generated.export))
    whole.write_text(json.dumps(merged))
    window = local_day_bounds(day, TZ)
    # The day reads the same from an export that holds earlier days too.
    assert open_source(f"activitywatch:{whole}", *window).snapshots == (
        open_source(f"activitywatch:{alone}", *window).snapshots
    )
    assert aw_history(day, 0, TZ) == []
    with pytest.raises(ValueError, match="aw-history"):
        aw_history(day, -1, TZ)


def first_event_day(generated: Any) -> date:
    stamps = [
        e["timestamp"] for bucket in generated.export["buckets"].values() for e in bucket["events"]
    ]
    return datetime.fromisoformat(min(stamps)).astimezone(ZoneInfo(TZ)).date()


def test_the_reference_gets_the_emulated_rows_at_the_same_instants(tmp_path: Path) -> None:
    ((day, generated),) = aw_days(1, TZ)
    window = local_day_bounds(day, TZ)
    export = tmp_path / "aw.json"
    export.write_text(json.dumps(generated.export))
    ours = open_source(f"activitywatch:{export}", *window)
    assert ours.absences  # the day has AFK time the reference cannot be told about
    records = reference_records(ours)
    assert {r["kind"] for r in records} == {"snapshot"}
    path = tmp_path / "ref.sqlite"
    assert write_screenpipe(path, records)["frames"] == len(ours.snapshots)
    back = open_source(f"screenpipe:{path}", *window)

    def rows(capture: Any) -> list[tuple[Any, ...]]:
        return [(round(s.t, 6), s.app, s.window, s.url) for s in capture.snapshots]

    assert rows(back) == rows(ours)
    assert any(s.url for s in back.snapshots)
    assert all(s.end is None for s in back.snapshots) and not back.absences


def test_minutes_error_is_a_signed_percentage_of_the_truth() -> None:
    assert minutes_error_pct(97.0, 100.0) == pytest.approx(-3.0)
    assert minutes_error_pct(123.0, 100.0) == pytest.approx(23.0)
    with pytest.raises(ValueError, match="positive"):
        minutes_error_pct(5.0, 0.0)


def test_cli_commands_ask_both_sides_for_the_same_days_context_block(tmp_path: Path) -> None:
    commands = cli_commands(tmp_path / "aw.json", tmp_path / "ref.sqlite", MONDAY, TZ, "aframes")
    ours, ref = commands["ours"], commands["ref"]
    assert ours[:4] == [sys.executable, "-m", "compiler", "day"]
    assert f"activitywatch:{tmp_path / 'aw.json'}" in ours
    assert ours[-2:] == ref[-2:] == ["-f", "context"]
    assert MONDAY.isoformat() in ours and MONDAY.isoformat() in ref
    assert ref[:4] == ["aframes", "day", "--db", str(tmp_path / "ref.sqlite")]


def test_both_clis_run_in_the_days_zone_with_bytecode_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = cli_env(TZ, tmp_path)
    assert env["TZ"] == TZ and env["PYTHONPYCACHEPREFIX"] == str(tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in env


def test_wall_medians_time_every_command_and_keep_what_it_printed() -> None:
    commands = {
        "a": [sys.executable, "-c", "print('a')"],
        "b": [sys.executable, "-c", "print('b')"],
    }
    medians, printed = wall_medians(commands, 2, {})
    assert set(medians) == {"a", "b"} and all(v > 0 for v in medians.values())
    assert printed == {"a": "a\n", "b": "b\n"}
    with pytest.raises(SystemExit, match="exited with 3"):
        wall_medians({"bad": [sys.executable, "-c", "raise SystemExit(3)"]}, 1, {})


def test_our_first_call_on_an_export_is_timed_with_the_index_it_writes(tmp_path: Path) -> None:
    from perf.compiler_bench import first_call_ms

    export = tmp_path / "aw.json"
    export.write_text(json.dumps(aw_day.generate(MONDAY, TZ).export), encoding="utf-8")
    env = cli_env(TZ, tmp_path / "pycache", tmp_path / "index")
    assert env["AFRAMES_CACHE_DIR"] == str(tmp_path / "index")
    argv = [sys.executable, "-m", "compiler", "day", "--source", f"activitywatch:{export}",
            "--date", MONDAY.isoformat(), "--tz", TZ, "-f", "context"]  # fmt: skip
    assert first_call_ms(argv, env) > 0
    assert len(list((tmp_path / "index" / "activitywatch").iterdir())) == 1
    with pytest.raises(SystemExit, match="exited with 2"):
        first_call_ms([*argv[:-2], "-f", "nonsense"], env)
