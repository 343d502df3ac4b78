"""python -m compiler routines / patterns: a range of days read from a source, printed as the
library computes them (Activity Frames §7.1)."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from benchmark.synthetic.desktop import generate_days, write_jsonl
from compiler.__main__ import main
from compiler.actions import history
from compiler.document import compile_day, day_window
from compiler.patterns import detect
from compiler.replay import plan, script
from compiler.routines import mine
from compiler.sources import open_source

FIRST, LAST, TZ = "2026-03-02", "2026-03-06", "Europe/Berlin"
DAYS = 5


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("routines") / "days.jsonl"
    write_jsonl(path, generate_days(date.fromisoformat(FIRST), DAYS, seed=11))
    return path


@pytest.fixture(scope="module")
def compiled(source: Path):
    out = []
    for k in range(DAYS):
        day = date.fromisoformat(FIRST) + timedelta(days=k)
        start, end = day_window(day, ZoneInfo(TZ))
        out.append(compile_day(open_source(f"jsonl:{source}", start, end), day, TZ))
    return out


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _window(path: Path, *extra: str) -> list[str]:
    return ["--source", f"jsonl:{path}", "--from", FIRST, "--to", LAST, "--tz", TZ, *extra]


@pytest.mark.parametrize("granularity", ["action", "url"])
def test_routines_print_what_the_library_mines(source, compiled, capsys, granularity):
    code, out, err = _run(capsys, "routines", *_window(source, "--granularity", granularity))
    assert code == 0, err
    body = json.loads(out)
    expected = mine(history(compiled, granularity), granularity=granularity)
    assert expected, "the demo days hold routines"
    assert [r["id"] for r in body["routines"]] == [r.id for r in expected]
    first, routine = body["routines"][0], expected[0]
    assert first["plan"] == json.loads(json.dumps(plan(routine)))
    assert first["script"] == script(routine)
    assert first["count"] == routine.count
    assert [o["frames"] for o in first["occurrences"]] == [
        list(o.frames) for o in routine.occurrences
    ]
    assert (body["granularity"], body["from"], body["to"]) == (granularity, FIRST, LAST)


def test_routines_as_markdown(source, compiled, capsys):
    code, out, _ = _run(capsys, "routines", *_window(source, "-f", "md"))
    assert code == 0
    routine = mine(history(compiled))[0]
    assert out.startswith(f"# Routines {FIRST} to {LAST} (action granularity)\n")
    assert f"## {routine.id}: {len(routine.steps)} steps, seen {routine.count} times" in out
    assert script(routine) in out


def test_patterns_print_what_the_detectors_find(source, compiled, capsys):
    code, out, _ = _run(capsys, "patterns", *_window(source))
    assert code == 0
    assert json.loads(out) == detect(compiled)
    code, out, _ = _run(capsys, "patterns", *_window(source, "-f", "md"))
    assert out.startswith(f"# Workflow patterns {FIRST} to {LAST}\n\n- repeated_click: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", LAST, "--to", FIRST], f"--to {FIRST} is before --from {LAST}"),
        (["--from", "2026-02-30", "--to", FIRST], "--from '2026-02-30' is not a date"),
        (["--from", FIRST, "--to", LAST, "--granularity", "screen"], "invalid choice: 'screen'"),
    ],
)
def test_bad_ranges_are_one_line_errors(source, capsys, args, message):
    code, _, err = _run(capsys, "routines", "--source", f"jsonl:{source}", "--tz", TZ, *args)
    assert code == 2
    assert message in err
