"""python -m compiler: the commands and their one-line errors."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from benchmark.synthetic.desktop import generate_day, write_jsonl
from benchmark.synthetic.native import write_screenpipe
from compiler.__main__ import main, raw_rows_json
from compiler.document import canonical_sha256, compile_day, day_window
from compiler.sources import screenpipe
from compiler.tokens import cl100k

ROOT = Path(__file__).resolve().parent.parent
DAY = "2026-03-03"


@pytest.fixture(scope="module")
def day_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "day.jsonl"
    write_jsonl(path, generate_day(date.fromisoformat(DAY), seed=11))
    return path


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


def run(*args: str) -> Done:
    """``python -m compiler ARGS`` in this process (what :func:`main` writes and returns)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return Done(code, out.getvalue(), err.getvalue())


def test_python_dash_m_compiler_runs_main(tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_text("https://github.com/a/b/pull/1\n")
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "urls", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total"] == 1
    wrong = subprocess.run(
        [sys.executable, "-m", "compiler", "urls"], cwd=ROOT, capture_output=True, text=True
    )
    assert wrong.returncode == 2 and wrong.stderr.startswith("error: ")


def test_a_whole_call_writes_everything_before_the_process_ends(day_file: Path) -> None:
    """The command line skips the interpreter's teardown at its end: what it wrote must still
    all reach the reader, an error still says so with 2, and a reader that stops early ends
    the call with 1 and no traceback."""
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    for form in ("json", "context"):  # one larger than the output buffer, one smaller
        args = [*day_args(day_file), "-f", form, "--generated-at", "2026-03-03T08:00:00+00:00"]
        argv = [sys.executable, "-m", "compiler", "day", *args]
        done = subprocess.run(
            argv, cwd=ROOT, env=buffered, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == run("day", *args).stdout
    missing = [sys.executable, "-m", "compiler", "day", *day_args(day_file.with_name("none"))]
    failed = subprocess.run(missing, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert failed.returncode == 2 and "no such file" in failed.stderr and not failed.stdout
    with subprocess.Popen(
        argv, cwd=ROOT, env=buffered, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as cut:
        assert cut.stdout is not None and cut.stderr is not None
        cut.stdout.close()  # before the call writes anything
        stopped = cut.wait(timeout=120)
        assert stopped == 1 and b"Traceback" not in cut.stderr.read()


def day_args(path: Path, *extra: str) -> list[str]:
    return ["--source", f"jsonl:{path}", "--date", DAY, "--tz", "Europe/Berlin", *extra]


def test_day_in_every_format(day_file: Path) -> None:
    as_json = run("day", *day_args(day_file), "-f", "json")
    assert as_json.returncode == 0, as_json.stderr
    doc = json.loads(as_json.stdout)
    assert doc["schema_version"] == 1 and doc["frames"]
    assert doc["coverage"]["monitors"] == ["0", "1"]
    context = run("day", *day_args(day_file), "-f", "context")
    assert context.stdout.startswith(f"Activity {DAY} (Europe/Berlin)")
    markdown = run("day", *day_args(day_file), "-f", "md")
    assert "| time | monitor | app |" in markdown.stdout
    yaml_out = run("day", *day_args(day_file), "-f", "yaml")
    assert "schema_version: 1" in yaml_out.stdout


def test_budget_uses_real_tokens_and_shrinks_the_block(day_file: Path) -> None:
    full = run("day", *day_args(day_file), "-f", "context").stdout
    small = run("day", *day_args(day_file), "-f", "context", "--budget-tokens", "300").stdout
    assert len(small) < len(full) and "beyond the token budget" in small


def test_text_only_on_request(day_file: Path) -> None:
    plain = run("day", *day_args(day_file), "-f", "json").stdout
    with_text = run("day", *day_args(day_file), "-f", "json", "--include-text").stdout
    assert '"text"' not in plain and '"clipboard"' not in plain
    assert '"text"' in with_text


def test_tokens_report(day_file: Path) -> None:
    done = run("tokens", *day_args(day_file))
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["raw_tokens"] > figures["document_tokens"] > figures["context_tokens"] > 0
    assert figures["raw_to_context"] == round(figures["raw_tokens"] / figures["context_tokens"], 1)


def test_tokens_counts_each_input_events_own_context_which_day_does_not_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "day.sqlite"
    write_screenpipe(path, generate_day(date.fromisoformat(DAY), seed=11))
    args = ["--source", f"screenpipe:{path}", "--date", DAY, "--tz", "Europe/Berlin"]
    done = run("tokens", *args)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    start, end = day_window(date.fromisoformat(DAY), ZoneInfo("Europe/Berlin"))
    window = (start, end)
    count = cl100k()
    full = screenpipe.read(path, *window)
    lean = screenpipe.read(path, *window, input_context=False)
    assert figures["raw_tokens"] == count(raw_rows_json(full, start, end))
    assert count(raw_rows_json(lean, start, end)) < figures["raw_tokens"]
    # The document of the day is the same from either read.
    day_doc = json.loads(run("day", *args, "-f", "json").stdout)
    for capture in (full, lean):
        doc = compile_day(capture, date.fromisoformat(DAY), "Europe/Berlin").document
        assert canonical_sha256(doc) == canonical_sha256(day_doc)


def test_apps_comms_and_steps(day_file: Path) -> None:
    apps = json.loads(run("apps", *day_args(day_file)).stdout)
    assert apps[0]["minutes"] >= apps[-1]["minutes"] and {"app", "sessions"} <= set(apps[0])
    comms = json.loads(run("comms", *day_args(day_file), "--kind", "messaging").stdout)
    assert comms and all(c["kind"] == "messaging" for c in comms)
    doc = json.loads(run("day", *day_args(day_file)).stdout)
    busiest = max(doc["frames"], key=lambda f: f["input"]["clicks"])
    result = json.loads(run("steps", *day_args(day_file), "--frame", busiest["id"]).stdout)
    assert result["frame"] == busiest["id"]
    assert sum(1 for s in result["steps"] if s["op"] == "click") == busiest["input"]["clicks"]


def test_urls_report(tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_text(
        "https://github.com/a/b/pull/1\nhttps://example.com/x\nhttps://github.com/a/b/pull/1\n"
    )
    report = json.loads(run("urls", str(path)).stdout)
    assert report["total"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["day", "--source", "jsonl:/nope.jsonl", "--date", DAY, "--tz", "UTC"], "nope.jsonl"),
        (["day", "--source", "csv:/x", "--date", DAY, "--tz", "UTC"], "csv"),
        (["day", "--source", "jsonl:/x", "--date", "2026-13-01", "--tz", "UTC"], "--date"),
        (["day", "--source", "jsonl:/x", "--date", DAY, "--tz", "Mars/Base"], "--tz"),
        (["day", "--date", DAY], "required"),
        (["urls", "/does/not/exist.txt"], "cannot read"),
    ],
)
def test_errors_exit_2_with_one_line(args: list[str], message: str) -> None:
    done = run(*args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_screenpipe_and_jsonl_of_the_same_day_agree(day_file: Path, tmp_path: Path) -> None:
    from benchmark.synthetic.native import write_screenpipe

    records = [json.loads(line) for line in day_file.read_text().splitlines()]
    database = tmp_path / "capture.sqlite"
    write_screenpipe(database, records)
    from_jsonl = json.loads(run("day", *day_args(day_file)).stdout)
    from_sqlite = json.loads(
        run(
            "day", "--source", f"screenpipe:{database}", "--date", DAY, "--tz", "Europe/Berlin"
        ).stdout
    )
    assert from_sqlite["source"]["reader"] != from_jsonl["source"]["reader"]
    assert from_sqlite["coverage"]["active_minutes"] == from_jsonl["coverage"]["active_minutes"]
    assert [(f["app"], f["duration_min"]) for f in from_sqlite["frames"]] == [
        (f["app"], f["duration_min"]) for f in from_jsonl["frames"]
    ]


def test_activitywatch_export_compiles_and_discloses_emulation(
    day_file: Path, tmp_path: Path
) -> None:
    from benchmark.synthetic.native import write_activitywatch

    records = [json.loads(line) for line in day_file.read_text().splitlines()]
    export = tmp_path / "aw.json"
    write_activitywatch(export, records)
    doc = json.loads(
        run(
            "day", "--source", f"activitywatch:{export}", "--date", DAY, "--tz", "Europe/Berlin"
        ).stdout
    )
    assert any("every 30 s" in line for line in doc["source"]["disclosures"])
    assert doc["frames"] and doc["coverage"]["monitors"] == ["0"]


def test_layout_map_file_is_checked(day_file: Path, tmp_path: Path) -> None:
    good = tmp_path / "map.json"
    good.write_text('{"q": "a", "a": "q"}')
    assert run("day", *day_args(day_file), "--layout-map", str(good)).returncode == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"qq": "a"}')
    done = run("day", *day_args(day_file), "--layout-map", str(bad))
    assert done.returncode == 2 and "single characters" in done.stderr


def test_generated_at_is_pinned_by_flag_or_source_date_epoch(
    day_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1772438400")  # 2026-03-02T08:00:00Z
    runs = [run("day", *day_args(day_file)).stdout for _ in range(2)]
    assert runs[0] == runs[1]
    assert json.loads(runs[0])["generated_at"] == "2026-03-02T08:00:00+00:00"
    pinned = run("day", *day_args(day_file), "--generated-at", "2026-03-02T09:00:00+01:00")
    assert json.loads(pinned.stdout)["generated_at"] == "2026-03-02T09:00:00+01:00"
    bad = run("day", *day_args(day_file), "--generated-at", "yesterday")
    assert bad.returncode == 2 and "--generated-at 'yesterday'" in bad.stderr
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "soon")
    odd = run("day", *day_args(day_file))
    assert odd.returncode == 2 and "SOURCE_DATE_EPOCH='soon'" in odd.stderr


def _aw_week(tmp_path: Path) -> Path:
    """A SYNTHETIC ActivityWatch export of three working days in one file."""
    from benchmark.synthetic.aw_day import generate as generate_aw

    export: dict = {"buckets": {}}
    for offset in range(3):
        day = generate_aw(date(2026, 3, 2 + offset), "Europe/Berlin", seed=offset + 1).export
        for bucket_id, bucket in day["buckets"].items():
            kept = export["buckets"].setdefault(bucket_id, {**bucket, "events": []})
            kept["events"].extend(bucket["events"])
    path = tmp_path / "aw-week.json"
    path.write_text(json.dumps(export))
    return path


def test_a_range_of_days_prints_each_days_own_document_and_parses_the_export_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from compiler.sources import activitywatch

    export = _aw_week(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1772409600")
    source = ["--source", f"activitywatch:{export}", "--tz", "Europe/Berlin"]
    alone = []
    for day in ("2026-03-02", "2026-03-03", "2026-03-04"):
        assert main(["day", *source, "--date", day]) == 0
        alone.append(json.loads(capsys.readouterr().out))
    loads = []
    real_load = activitywatch._load
    monkeypatch.setattr(activitywatch, "_load", lambda name: loads.append(name) or real_load(name))
    argv = ["day", *source, "--date", "2026-03-02", "--to", "2026-03-04"]
    assert main([*argv, "--no-index"]) == 0
    assert json.loads(capsys.readouterr().out) == alone
    assert loads == [str(export)]
    # Through the export's index (made by the calls above), the same days, nothing parsed whole.
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == alone
    assert loads == [str(export)]
    assert alone[1]["frames"] and alone[1]["window"]["day"] == "2026-03-03"
    assert (
        main(["day", *source, "--date", "2026-03-02", "--to", "2026-03-03", "-f", "context"]) == 0
    )
    blocks = capsys.readouterr().out
    assert blocks.count("Activity 2026-03-0") == 2


@pytest.mark.parametrize(
    ("last", "message"),
    [
        ("2026-03-01", "--to 2026-03-01 is before --date 2026-03-02"),
        ("2027-03-05", "--date to --to spans 369 days; at most 366 at once"),
        ("tomorrow", "--to 'tomorrow' is not a date like 2026-03-02"),
    ],
)
def test_a_bad_range_is_one_line_and_exit_2(
    tmp_path: Path, last: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    export = _aw_week(tmp_path)
    argv = ["day", "--source", f"activitywatch:{export}", "--tz", "Europe/Berlin"]
    assert main([*argv, "--date", "2026-03-02", "--to", last]) == 2
    assert capsys.readouterr().err.strip() == f"error: {message}"


@pytest.mark.parametrize("columns", ["57", "133"])
def test_help_wraps_as_argparse_would_at_the_terminals_width(
    columns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from compiler.__main__ import build_parser

    monkeypatch.setenv("COLUMNS", columns)
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    ours = [parser.format_help()] + [sub.format_help() for sub in commands.choices.values()]
    # The same parsers with argparse's own formatters, which find the width themselves.
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    for sub in commands.choices.values():
        sub.formatter_class = argparse.HelpFormatter
    theirs = [parser.format_help()] + [sub.format_help() for sub in commands.choices.values()]
    assert ours == theirs
    assert max(len(line) for text in ours for line in text.splitlines()) > 50


def test_a_call_reads_the_terminals_width_without_importing_shutil() -> None:
    # argparse imports shutil for every formatter it sizes itself: a few ms of a one-shot call.
    code = (
        "import sys; from compiler.__main__ import build_parser; "
        "build_parser().parse_args("
        "['day', '--source', 'jsonl:x', '--date', '2026-03-02', '--tz', 'UTC']); "
        "print('shutil' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "False"
