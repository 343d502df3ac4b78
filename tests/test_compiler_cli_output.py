"""python -m compiler: the exact text each command prints, its options' defaults and help, and
the exact one-line errors (the command line is an interface people script against)."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Iterable
from contextlib import redirect_stdout
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from benchmark.synthetic.desktop import generate_day, generate_days, write_jsonl
from compiler import __main__ as cli
from compiler.actions import history
from compiler.capture import Capture, InputEvent, Snapshot
from compiler.document import compile_day, day_window, runs
from compiler.emit import context_block, to_json, to_markdown, to_yaml
from compiler.entities import url_report
from compiler.params import MIN_MINUTES_DEFAULT, Params
from compiler.patterns import detect
from compiler.replay import plan, script
from compiler.routines import mine
from compiler.sources import open_source
from compiler.tokens import cl100k
from compiler.views import communications, ledger, steps
from tests.test_compiler_cli import DAY, day_args, run

TZ = "Europe/Berlin"  # the zone of day_args
EPOCH = "1772438400"  # 2026-03-02T08:00:00Z
PINNED = "2026-03-02T08:00:00+00:00"
FIRST, LAST, DAYS = "2026-03-02", "2026-03-06", 5


def accented(records: Iterable[dict]) -> list[dict]:
    """The demo's records with every window title and element name ending in "·é", so that
    each view and routine the commands print holds text that JSON would escape."""
    out = []
    for record in records:
        payload = dict(record["payload"])
        for field in ("window", "element_name"):
            if payload.get(field):
                payload[field] += " ·é"
        out.append({**record, "payload": payload})
    return out


@pytest.fixture(scope="module")
def day_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli-out") / "day.jsonl"
    write_jsonl(path, accented(generate_day(date.fromisoformat(DAY), seed=11)))
    return path


@pytest.fixture(scope="module")
def week_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli-week") / "days.jsonl"
    write_jsonl(path, accented(generate_days(date.fromisoformat(FIRST), DAYS, seed=11)))
    return path


@pytest.fixture(autouse=True)
def _pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    monkeypatch.setenv("COLUMNS", "2000")  # help text on one line per option


def ok(*args: str) -> str:
    done = run(*args)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return done.stdout


def error(*args: str) -> str:
    """The one line a failing command writes to stderr, having written nothing to stdout."""
    done = run(*args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("\n") and done.stderr.count("\n") == 1
    return done.stderr.rstrip("\n")


def compiled_day(path: Path, params: Params | None = None, day: str = DAY):
    local = date.fromisoformat(day)
    start, end = day_window(local, ZoneInfo(TZ))
    capture = open_source(f"jsonl:{path}", start, end)
    return compile_day(capture, local, TZ, params or Params(), generated_at=PINNED)


def week(path: Path) -> list:
    return [
        compiled_day(path, day=(date.fromisoformat(FIRST) + timedelta(days=k)).isoformat())
        for k in range(DAYS)
    ]


def window_args(path: Path, *extra: str, first: str = FIRST, last: str = LAST) -> list[str]:
    return ["--source", f"jsonl:{path}", "--from", first, "--to", last, "--tz", TZ, *extra]


# --- what each command prints --------------------------------------------------------------


def test_day_prints_each_format_exactly_as_the_library_renders_it(day_file: Path) -> None:
    compiled = compiled_day(day_file)
    assert ok("day", *day_args(day_file)) == to_json(compiled.document)
    assert ok("day", *day_args(day_file), "-f", "json") == to_json(compiled.document)
    assert ok("day", *day_args(day_file), "-f", "yaml") == to_yaml(compiled.document)
    assert ok("day", *day_args(day_file), "--format", "md") == to_markdown(compiled.document)
    assert ok("day", *day_args(day_file), "-f", "context") == context_block(compiled)


def test_a_token_budget_counts_real_tokens_and_only_the_context_block_takes_it(
    day_file: Path,
) -> None:
    compiled = compiled_day(day_file)
    real = context_block(compiled, budget_tokens=400, count_tokens=cl100k())
    assert real != context_block(compiled, budget_tokens=400), "the counts must differ here"
    assert ok("day", *day_args(day_file), "-f", "context", "--budget-tokens", "400") == real
    budgeted_md = ok("day", *day_args(day_file), "-f", "md", "--budget-tokens", "400")
    assert budgeted_md == to_markdown(compiled.document)


def test_min_minutes_include_text_and_a_layout_map_reach_the_compile(
    day_file: Path, tmp_path: Path
) -> None:
    keymap = tmp_path / "map.json"
    keymap.write_text('{"y": "z", "z": "y"}')
    params = Params(
        min_minutes=0.5, include_text=True, layout_map=(("y", "z"), ("z", "y")), layout="identity"
    )
    expected = to_json(compiled_day(day_file, params).document)
    assert expected != to_json(compiled_day(day_file, Params(include_text=True)).document)
    printed = ok(
        "day",
        *day_args(day_file),
        "--min-minutes",
        "0.5",
        "--include-text",
        "--layout-map",
        str(keymap),
    )
    assert printed == expected


def test_a_layout_name_reaches_the_compile(day_file: Path) -> None:
    layout = next(name for name in sorted(cli.LAYOUTS) if name != "identity")
    params = Params(include_text=True, layout=layout)
    expected = to_json(compiled_day(day_file, params).document)
    assert expected != to_json(compiled_day(day_file, Params(include_text=True)).document)
    assert ok("day", *day_args(day_file), "--include-text", "--layout", layout) == expected


def test_a_range_joins_each_days_output_per_format(week_file: Path) -> None:
    days = week(week_file)[:2]
    argv = ["day", "--source", f"jsonl:{week_file}", "--tz", TZ, "--date", FIRST]
    argv += ["--to", "2026-03-03"]
    assert ok(*argv) == to_json([c.document for c in days])
    assert ok(*argv, "-f", "yaml") == "---\n".join(to_yaml(c.document) for c in days)
    assert ok(*argv, "-f", "md") == "\n".join(to_markdown(c.document) for c in days)
    counter = cl100k()
    blocks = [context_block(c, budget_tokens=300, count_tokens=counter) for c in days]
    assert ok(*argv, "-f", "context", "--budget-tokens", "300") == "\n".join(blocks)


def test_a_range_of_one_day_and_of_the_longest_allowed_span(tmp_path: Path) -> None:
    small = tmp_path / "small.jsonl"
    write_jsonl(small, generate_day(date.fromisoformat(DAY), seed=11)[:600])
    one = json.loads(ok("day", *day_args(small), "--to", DAY))
    assert [d["window"]["day"] for d in one] == [DAY] and one[0]["frames"]
    longest = json.loads(ok("day", *day_args(small), "--to", "2027-03-03"))
    assert len(longest) == cli.MAX_RANGE_DAYS == 366
    assert (longest[0]["window"]["day"], longest[-1]["window"]["day"]) == (DAY, "2027-03-03")
    assert error("day", *day_args(small), "--to", "2027-03-04") == (
        "error: --date to --to spans 367 days; at most 366 at once"
    )


def test_a_range_pins_generated_at_on_every_day(week_file: Path) -> None:
    argv = ["day", "--source", f"jsonl:{week_file}", "--tz", TZ, "--date", FIRST, "--to", LAST]
    stamped = json.loads(ok(*argv, "--generated-at", "2026-03-09T10:00:00+01:00"))
    assert {d["generated_at"] for d in stamped} == {"2026-03-09T10:00:00+01:00"}


def test_a_window_with_a_bad_last_day_names_to() -> None:
    window = ["--source", "jsonl:x", "--from", FIRST, "--to", "soon", "--tz", TZ]
    assert error("routines", *window) == "error: --to 'soon' is not a date like 2026-03-02"


def test_a_range_whose_source_cannot_be_read_is_one_line() -> None:
    message = error("day", *day_args(Path("/nope/days.jsonl")), "--to", "2026-03-04")
    assert message.startswith("error: ") and "/nope/days.jsonl" in message


def test_raw_rows_are_the_windows_snapshots_then_inputs_half_open() -> None:
    capture = Capture(
        snapshots=[
            Snapshot(1, 99.0, "0", "Early"),
            Snapshot(2, 100.0, "1", "Café", "Über uns", "https://x.test/ü"),
            Snapshot(3, 200.0, "0", "Late"),
        ],
        inputs=[
            InputEvent(4, 99.5, "click"),
            InputEvent(5, 100.0, "click", "1", 0.25, 0.5, "Café", "Über", None, "Save", "AXButton"),
            InputEvent(6, 200.0, "key"),
        ],
    )
    assert cli.raw_rows_json(capture, 100.0, 200.0) == (
        '[{"type": "frame", "id": 2, "timestamp": 100.0, "monitor": "1", "app_name": "Café", '
        '"window_name": "Über uns", "browser_url": "https://x.test/ü"}, '
        '{"type": "ui_event", "id": 5, "timestamp": 100.0, "event_type": "click", "x": 0.25, '
        '"y": 0.5, "app_name": "Café", "window_title": "Über", "element_name": "Save", '
        '"element_role": "AXButton"}]'
    )
    assert cli.raw_rows_json(capture, 300.0, 400.0) == "[]"


def test_tokens_prints_its_table_then_the_figures(day_file: Path) -> None:
    lines = ok("tokens", *day_args(day_file), "--min-minutes", "2").splitlines()
    start, end = day_window(date.fromisoformat(DAY), ZoneInfo(TZ))
    full = open_source(f"jsonl:{day_file}", start, end, input_context=True)
    compiled = compile_day(
        full, date.fromisoformat(DAY), TZ, Params(min_minutes=2.0), generated_at=PINNED
    )
    count = cl100k()
    raw = count(cli.raw_rows_json(full, start, end))
    doc = count(to_json(compiled.document))
    block = count(context_block(compiled))
    assert lines[:4] == [
        f"{DAY} ({TZ}), cl100k_base tokens:",
        f"  raw rows as JSON  {raw:>9,}",
        f"  document (JSON)   {doc:>9,}   {round(raw / doc, 1)}x smaller",
        f"  context block     {block:>9,}   {round(raw / block, 1)}x smaller",
    ]
    assert json.loads(lines[4]) == {
        "rows": compiled.document["coverage"]["rows_analyzed"],
        "raw_tokens": raw,
        "document_tokens": doc,
        "context_tokens": block,
        "raw_to_document": round(raw / doc, 1),
        "raw_to_context": round(raw / block, 1),
    }
    assert len(lines) == 5 and raw >= 1000  # the thousands separator is in play


def test_cl100k_counts_special_token_text_as_plain_text() -> None:
    count = cl100k()
    assert count("<|endoftext|>") > 1 and count("hello world") == 2


def test_apps_comms_and_steps_print_the_views_as_indented_unicode_json(day_file: Path) -> None:
    compiled = compiled_day(day_file)

    def dumped(value: object) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"

    apps = ok("apps", *day_args(day_file))
    assert apps == dumped(ledger(compiled)) and not apps.isascii()
    every = ok("comms", *day_args(day_file))
    assert every == dumped(communications(compiled)) and "·é" in every
    for kind in ("email", "messaging", "meeting"):
        printed = ok("comms", *day_args(day_file), "--kind", kind)
        assert printed == dumped(communications(compiled, kind))
    frame = max(compiled.document["frames"], key=lambda f: f["input"]["clicks"])["id"]
    assert ok("steps", *day_args(day_file), "--frame", frame) == dumped(steps(compiled, frame))
    few = ok("steps", *day_args(day_file), "--frame", frame, "--max-steps", "3")
    assert few == dumped(steps(compiled, frame, max_steps=3))
    assert few != dumped(steps(compiled, frame))


def test_steps_of_a_frame_with_text_and_a_layout(day_file: Path, tmp_path: Path) -> None:
    keymap = tmp_path / "map.json"
    keymap.write_text('{"e": "3"}')
    params = Params(include_text=True, layout_map=(("e", "3"),))
    compiled = compiled_day(day_file, params)
    frame = max(compiled.document["frames"], key=lambda f: f["input"]["keys"])["id"]
    expected = json.dumps(steps(compiled, frame), indent=2, ensure_ascii=False) + "\n"
    plain = compiled_day(day_file)
    assert expected != json.dumps(steps(plain, frame), indent=2, ensure_ascii=False) + "\n"
    printed = ok(
        "steps",
        *day_args(day_file),
        "--frame",
        frame,
        "--include-text",
        "--layout-map",
        str(keymap),
    )
    assert printed == expected


def test_steps_of_an_unknown_frame_is_one_line(day_file: Path) -> None:
    assert error("steps", *day_args(day_file), "--frame", "f-nope") == (
        "error: no frame 'f-nope' in this window"
    )


def test_urls_skips_blank_lines_strips_spaces_and_replaces_bad_bytes(tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_bytes(
        b"  https://github.com/a/b/pull/1  \n\n\t\nhttps://example.com/caf\xc3\xa9\n"
        b"https://example.com/\xff\n"
    )
    printed = ok("urls", str(path))
    urls = ["https://github.com/a/b/pull/1", "https://example.com/café", "https://example.com/�"]
    assert printed == json.dumps(url_report(urls), indent=2, ensure_ascii=False) + "\n"


def test_routines_json_is_sorted_indented_and_holds_each_occurrence(week_file: Path) -> None:
    out = ok("routines", *window_args(week_file, "-f", "json"))
    found = mine(history(week(week_file), "action"), granularity="action")
    assert found
    expected = {
        "granularity": "action",
        "from": FIRST,
        "to": LAST,
        "tz": TZ,
        "routines": [
            {
                "id": r.id,
                "count": r.count,
                "length": len(r.steps),
                "occurrences": [
                    {
                        "day": o.day,
                        "start": o.start,
                        "end": o.end,
                        "frames": list(o.frames),
                        "rows": runs(o.evidence),
                    }
                    for o in r.occurrences
                ],
                "plan": plan(r),
                "script": script(r),
            }
            for r in found
        ],
    }
    assert out == json.dumps(expected, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    assert "·é" in out


def test_routines_markdown_lists_each_routine_its_script_and_occurrences(
    week_file: Path,
) -> None:
    out = ok("routines", *window_args(week_file, "-f", "md", "--granularity", "url"))
    found = mine(history(week(week_file), "url"), granularity="url")
    assert found
    zone = ZoneInfo(TZ)
    lines = [f"# Routines {FIRST} to {LAST} (url granularity)", ""]
    for r in found:
        coverage = plan(r)["guard_coverage"]
        lines += [
            f"## {r.id}: {len(r.steps)} steps, seen {r.count} times",
            "",
            f"Guard coverage {coverage:.0%}.",
            "",
            "```",
            script(r).rstrip("\n"),
            "```",
            "",
        ]
        for o in r.occurrences:
            at = datetime.fromtimestamp(o.start, zone).strftime("%Y-%m-%d %H:%M")
            lines.append(f"- {at}, frames {', '.join(o.frames)}, rows {runs(o.evidence)}")
        lines.append("")
    assert out == "\n".join(lines).rstrip("\n") + "\n"
    assert out.endswith("\n") and not out.endswith("\n\n")


def test_a_window_without_routines_or_patterns_says_so(week_file: Path) -> None:
    quiet = window_args(week_file, "-f", "md", first="2025-01-01", last="2025-01-01")
    assert ok("routines", *quiet) == (
        "# Routines 2025-01-01 to 2025-01-01 (action granularity)\n\n"
        "No routine recurs in these days.\n"
    )
    assert ok("patterns", *quiet) == (
        "# Workflow patterns 2025-01-01 to 2025-01-01\n\nNo pattern recurs in these days.\n"
    )
    as_json = json.loads(
        ok("routines", *window_args(week_file, first="2025-01-01", last="2025-01-01"))
    )
    assert as_json["routines"] == []


def test_patterns_print_the_detectors_output_with_or_without_text(week_file: Path) -> None:
    days = week(week_file)
    found = detect(days)
    assert ok("patterns", *window_args(week_file, "-f", "json")) == (
        json.dumps(found, indent=2, ensure_ascii=False) + "\n"
    )
    markdown = ok("patterns", *window_args(week_file, "-f", "md"))
    assert (
        markdown
        == "\n".join(
            [
                f"# Workflow patterns {FIRST} to {LAST}",
                "",
                *(f"- {p['kind']}: {p['label']} ({p['count']}×)" for p in found),
            ]
        )
        + "\n"
    )
    texts = [
        compiled_day(week_file, Params(include_text=True), day=c.document["window"]["day"])
        for c in days
    ]
    with_text = detect(texts, include_text=True)
    assert with_text != found
    assert json.loads(ok("patterns", *window_args(week_file, "--include-text"))) == with_text


# --- options: defaults, types, choices, help -----------------------------------------------


def parsed(*argv: str) -> dict:
    values = vars(cli.build_parser().parse_args(list(argv)))
    values.pop("run")
    return values


def test_each_commands_defaults() -> None:
    source = ["--source", "jsonl:x", "--date", DAY, "--tz", "UTC"]
    common = {
        "source": "jsonl:x",
        "date": DAY,
        "tz": "UTC",
        "min_minutes": MIN_MINUTES_DEFAULT,
        "no_index": False,
    }
    assert parsed("day", *source) == {
        **common,
        "command": "day",
        "to": None,
        "format": "json",
        "include_text": False,
        "budget_tokens": None,
        "layout": "identity",
        "layout_map": None,
        "generated_at": None,
    }
    assert parsed("tokens", *source) == {**common, "command": "tokens"}
    assert parsed("apps", *source) == {**common, "command": "apps"}
    assert parsed("comms", *source) == {**common, "command": "comms", "kind": None}
    assert parsed("steps", *source, "--frame", "f-1") == {
        **common,
        "command": "steps",
        "frame": "f-1",
        "include_text": False,
        "layout": "identity",
        "layout_map": None,
        "max_steps": 250,
    }
    window = ["--source", "jsonl:x", "--from", FIRST, "--to", LAST, "--tz", "UTC"]
    in_window = {**common, "date": FIRST, "to": LAST, "format": "json"}
    assert parsed("routines", *window) == {
        **in_window,
        "command": "routines",
        "granularity": "action",
    }
    assert parsed("patterns", *window) == {
        **in_window,
        "command": "patterns",
        "include_text": False,
    }
    assert parsed("urls", "list.txt") == {"command": "urls", "file": "list.txt"}


def test_each_command_runs_its_own_function() -> None:
    parser = cli.build_parser()
    source = ["--source", "jsonl:x", "--date", DAY, "--tz", "UTC"]
    window = ["--source", "jsonl:x", "--from", FIRST, "--to", LAST, "--tz", "UTC"]
    for argv, function in [
        (["day", *source], cli._day),
        (["tokens", *source], cli._tokens),
        (["apps", *source], cli._apps),
        (["comms", *source], cli._comms),
        (["steps", *source, "--frame", "f-1"], cli._steps),
        (["routines", *window], cli._routines),
        (["patterns", *window], cli._patterns),
        (["urls", "x"], cli._urls),
    ]:
        assert parser.parse_args(argv).run is function


def test_numbers_are_parsed_as_numbers() -> None:
    source = ["--source", "jsonl:x", "--date", DAY, "--tz", "UTC"]
    values = parsed("day", *source, "--min-minutes", "2", "--budget-tokens", "300")
    assert values["min_minutes"] == 2.0 and isinstance(values["min_minutes"], float)
    assert values["budget_tokens"] == 300 and isinstance(values["budget_tokens"], int)
    for command in ("tokens", "apps", "comms"):
        assert parsed(command, *source, "--min-minutes", "1.5")["min_minutes"] == 1.5
    values = parsed("steps", *source, "--frame", "f", "--max-steps", "7", "--min-minutes", "3")
    assert (values["max_steps"], values["min_minutes"]) == (7, 3.0)
    window = ["--source", "jsonl:x", "--from", FIRST, "--to", LAST, "--tz", "UTC"]
    for command in ("routines", "patterns"):
        assert parsed(command, *window, "--min-minutes", "4")["min_minutes"] == 4.0
    assert error("day", *source, "--budget-tokens", "many") == (
        "error: argument --budget-tokens: invalid int value: 'many'"
    )
    assert error("steps", *source, "--frame", "f", "--max-steps", "1.5") == (
        "error: argument --max-steps: invalid int value: '1.5'"
    )
    assert error("apps", *source, "--min-minutes", "x") == (
        "error: argument --min-minutes: invalid float value: 'x'"
    )


@pytest.mark.parametrize(
    ("argv", "accepted", "rejected", "option"),
    [
        (["day"], ["json", "yaml", "md", "context"], "pdf", "-f/--format"),
        (["routines"], ["json", "md"], "yaml", "-f/--format"),
        (["patterns"], ["json", "md"], "context", "-f/--format"),
        (["routines", "-f", "json", "--granularity"], ["action", "url"], "screen", "--granularity"),
        (["comms", "--kind"], ["email", "messaging", "meeting"], "fax", "--kind"),
        (["day", "--layout"], sorted(cli.LAYOUTS), "dvorak-ish", "--layout"),
        (["steps", "--frame", "f", "--layout"], sorted(cli.LAYOUTS), "dvorak-ish", "--layout"),
    ],
)
def test_each_choice_is_accepted_and_anything_else_refused(
    argv: list[str], accepted: list[str], rejected: str, option: str
) -> None:
    command, *rest = argv
    if command in ("routines", "patterns"):
        base = ["--source", "jsonl:x", "--from", FIRST, "--to", LAST, "--tz", "UTC"]
    else:
        base = ["--source", "jsonl:x", "--date", DAY, "--tz", "UTC"]
    flag = rest or ["-f"]
    for value in accepted:
        values = vars(cli.build_parser().parse_args([command, *base, *flag, value]))
        assert value in values.values()
    message = error(command, *base, *flag, rejected)
    assert message.startswith(f"error: argument {option}: invalid choice: '{rejected}'")


@pytest.mark.parametrize(
    ("command", "given", "missing"),
    [
        ("day", ["--date", DAY, "--tz", "UTC"], "--source"),
        ("day", ["--source", "jsonl:x", "--tz", "UTC"], "--date"),
        ("day", ["--source", "jsonl:x", "--date", DAY], "--tz"),
        ("tokens", ["--date", DAY, "--tz", "UTC"], "--source"),
        ("tokens", ["--source", "jsonl:x", "--tz", "UTC"], "--date"),
        ("tokens", ["--source", "jsonl:x", "--date", DAY], "--tz"),
        ("steps", ["--source", "jsonl:x", "--date", DAY, "--tz", "UTC"], "--frame"),
        ("routines", ["--from", FIRST, "--to", LAST, "--tz", "UTC"], "--source"),
        ("routines", ["--source", "jsonl:x", "--to", LAST, "--tz", "UTC"], "--from"),
        ("routines", ["--source", "jsonl:x", "--from", FIRST, "--tz", "UTC"], "--to"),
        ("patterns", ["--source", "jsonl:x", "--from", FIRST, "--to", LAST], "--tz"),
        ("urls", [], "file"),
    ],
)
def test_a_missing_required_option_is_named(command: str, given: list[str], missing: str) -> None:
    assert error(command, *given) == f"error: the following arguments are required: {missing}"


def test_no_command_or_an_unknown_one_is_one_line() -> None:
    assert error() == "error: the following arguments are required: command"
    assert error("weekly").startswith("error: argument command: invalid choice: 'weekly'")
    assert error("day", "--source", "jsonl:x", "--date", DAY, "--tz", "UTC", "--colour") == (
        "error: unrecognized arguments: --colour"
    )


def words(text: str) -> str:
    return " " + " ".join(text.split()) + " "


def help_of(*command: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as stopped:
        cli.main([*command, "--help"])
    assert stopped.value.code == 0
    return out.getvalue()


def test_the_help_shows_the_usage_examples_verbatim_and_each_command() -> None:
    text = help_of()
    assert text.startswith("usage: python -m compiler ")
    lines = text.splitlines()
    for example in cli.__doc__.strip().splitlines():
        assert example in lines  # the description keeps its lines
    spoken = words(text)
    for phrase in (
        "day compile one local day, or each day of a range",
        "tokens token counts: raw rows vs document vs block",
        "apps per-app ledger of a day",
        "comms communication surfaces of a day",
        "steps the ordered steps of one frame",
        "routines recurring action sequences of a range of days, with replay plans",
        "patterns workflow patterns of a range of days",
        "urls how many distinct URLs get a specific kind",
    ):
        assert f" {phrase} " in spoken


SOURCE_HELP = "--source SOURCE screenpipe:PATH | activitywatch:PATH | jsonl:PATH"
DAY_HELP = (
    SOURCE_HELP,
    "--date DATE local day, YYYY-MM-DD",
    "--tz TZ IANA time zone of the day",
    "--min-minutes MIN_MINUTES",
)


@pytest.mark.parametrize(
    ("command", "phrases"),
    [
        (
            "day",
            (
                *DAY_HELP,
                "--to TO last local day (YYYY-MM-DD) of a range from --date: every day is "
                "compiled, the source read once; JSON prints an array of documents, YAML one "
                "document per day, md and context one block per day",
                "--include-text include typed and copied text",
                "--budget-tokens BUDGET_TOKENS context block token budget (cl100k_base)",
                "--layout-map LAYOUT_MAP JSON file mapping captured to typed characters",
                "--generated-at GENERATED_AT pin the document's generated_at (ISO 8601 with "
                "offset; default: SOURCE_DATE_EPOCH if set, else now), so two runs are "
                "byte-identical",
            ),
        ),
        ("tokens", DAY_HELP),
        ("apps", DAY_HELP),
        ("comms", DAY_HELP),
        (
            "steps",
            (
                *DAY_HELP,
                "--frame FRAME frame id, e.g. f-1234",
                "--layout-map LAYOUT_MAP JSON file mapping captured to typed characters",
            ),
        ),
        (
            "routines",
            (
                SOURCE_HELP,
                "--from DATE first local day, YYYY-MM-DD",
                "--to TO last local day, YYYY-MM-DD",
                "--tz TZ IANA time zone of the days",
            ),
        ),
        (
            "patterns",
            (
                SOURCE_HELP,
                "--from DATE first local day, YYYY-MM-DD",
                "--include-text also detect repeated typed text",
            ),
        ),
        ("urls", ("file one URL per line",)),
    ],
)
def test_each_option_says_what_it_takes(command: str, phrases: tuple[str, ...]) -> None:
    spoken = words(help_of(command))
    for phrase in phrases:
        assert f" {phrase} " in spoken, phrase


# --- generated_at, layout maps, dates and zones --------------------------------------------


def test_generated_at_is_cut_to_seconds_and_needs_an_offset(
    day_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = ok("day", *day_args(day_file), "--generated-at", "2026-03-02T09:00:00.75+01:00")
    assert json.loads(given)["generated_at"] == "2026-03-02T09:00:00+01:00"
    assert error("day", *day_args(day_file), "--generated-at", "2026-03-02T09:00:00") == (
        "error: --generated-at '2026-03-02T09:00:00' is not an ISO 8601 time with an offset"
    )
    monkeypatch.setenv("SOURCE_DATE_EPOCH", f"  {EPOCH}\n")
    assert json.loads(ok("day", *day_args(day_file)))["generated_at"] == PINNED
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "-5")
    assert error("day", *day_args(day_file)) == (
        "error: SOURCE_DATE_EPOCH='-5' must be whole seconds since 1970-01-01"
    )
    for unset in ("   ", None):
        if unset is None:
            monkeypatch.delenv("SOURCE_DATE_EPOCH")
        else:
            monkeypatch.setenv("SOURCE_DATE_EPOCH", unset)
        before = datetime.now(UTC).replace(microsecond=0)
        stamp = datetime.fromisoformat(json.loads(ok("day", *day_args(day_file)))["generated_at"])
        assert before <= stamp <= datetime.now(UTC)


def test_tokens_documents_are_pinned_too(day_file: Path) -> None:
    assert ok("tokens", *day_args(day_file)) == ok("tokens", *day_args(day_file))


def test_params_of_commands_without_text_options_leave_text_out() -> None:
    assert cli._params(argparse.Namespace(min_minutes=3.0)) == Params(min_minutes=3.0)


def test_a_layout_map_file_is_sorted_and_every_bad_one_refused(tmp_path: Path) -> None:
    good = tmp_path / "map.json"
    good.write_text('{"q": "a", "a": "q"}', encoding="utf-8")
    assert cli._layout_file(str(good)) == (("a", "q"), ("q", "a"))
    assert cli._layout_file(None) == () and cli._layout_file("") == ()
    for text in ('["q"]', '{"q": "ab"}', '{"": "a"}', '{"q": 1}', '{"qq": "a"}'):
        bad = tmp_path / "bad.json"
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(cli.CliError) as refused:
            cli._layout_file(str(bad))
        assert str(refused.value) == (
            f"--layout-map {bad} must map single characters to single characters"
        )
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(cli.CliError) as refused:
        cli._layout_file(str(broken))
    assert str(refused.value).startswith(f"--layout-map {broken} is not JSON: Expecting")
    with pytest.raises(cli.CliError) as refused:
        cli._layout_file(str(tmp_path / "none.json"))
    assert str(refused.value) == (
        f"cannot read --layout-map {tmp_path / 'none.json'}: No such file or directory"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--date", "2026-13-01", "--tz", "UTC"],
            "--date '2026-13-01' is not a date like 2026-03-02",
        ),
        (
            ["--date", DAY, "--tz", "Mars/Base"],
            "--tz 'Mars/Base' is not an IANA time zone (e.g. Europe/Berlin)",
        ),
        (
            ["--date", DAY, "--tz", "/etc/localtime"],
            "--tz '/etc/localtime' is not an IANA time zone (e.g. Europe/Berlin)",
        ),
    ],
)
def test_a_bad_date_or_zone_is_named_exactly(argv: list[str], message: str) -> None:
    assert error("apps", "--source", "jsonl:x", *argv) == f"error: {message}"


def test_urls_of_a_missing_file_is_named_exactly() -> None:
    assert error("urls", "/does/not/exist.txt") == (
        "error: cannot read /does/not/exist.txt: No such file or directory"
    )


def test_a_day_is_the_local_day_cut_at_local_midnight(tmp_path: Path) -> None:
    """Rows at 00:10-00:20 Berlin time are the day's (23:10Z the UTC day before); a row at
    00:10 Berlin the next day is not, on its own or in a range."""

    def row(moment: str, n: int) -> dict:
        return {
            "occurred_at": moment,
            "kind": "snapshot",
            "source_key": f"t:0:snapshot:{n}",
            "monitor": "0",
            "payload": {"app": "Code", "window": "main.py", "url": None, "focused": True},
        }

    path = tmp_path / "midnight.jsonl"
    moments = ["2026-03-02T23:10:00Z", "2026-03-02T23:15:00Z", "2026-03-02T23:20:00Z"]
    write_jsonl(path, [*(row(m, n) for n, m in enumerate(moments)), row("2026-03-03T23:10:00Z", 9)])
    alone = json.loads(ok("day", *day_args(path)))
    assert alone["coverage"]["rows_analyzed"] == 3
    ranged = json.loads(ok("day", *day_args(path), "--to", "2026-03-04"))
    assert [d["coverage"]["rows_analyzed"] for d in ranged] == [3, 1]


def test_only_tokens_reads_each_input_events_own_context(
    day_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compiling never uses an input event's own app, window and URL, so the day commands skip
    reading them; ``tokens`` measures the raw rows as stored, so it reads them."""
    import compiler.sources

    asked: list[bool] = []
    real = compiler.sources.open_source

    def spy(
        spec: str, start: float, end: float, *, input_context: bool = True, index: bool = False
    ) -> Capture:
        asked.append(input_context)
        return real(spec, start, end, input_context=input_context, index=index)

    monkeypatch.setattr(cli, "open_source", spy)
    for command in ("day", "apps", "comms"):
        ok(command, *day_args(day_file))
    frame = json.loads(ok("day", *day_args(day_file)))["frames"][0]["id"]
    ok("steps", *day_args(day_file), "--frame", frame)
    assert asked == [False] * 5
    ok("tokens", *day_args(day_file))
    assert asked[-1] is True

    ranged: list[object] = []
    real_reader = compiler.sources.open_reader

    spans: list[object] = []

    def reader_spy(
        spec: str, *, input_context: bool = True, span: object = None, index: bool = False
    ):
        ranged.append(input_context)
        spans.append(span)
        return real_reader(spec, input_context=input_context, span=span, index=index)

    monkeypatch.setattr(cli, "open_reader", reader_spy)
    ok("day", *day_args(day_file), "--to", DAY)
    ok("patterns", *window_args(day_file, first=DAY, last=DAY))
    assert ranged == [False, False]
    # The reader is told the range's span, so an export is kept only where it is read.
    one_day = day_window(date.fromisoformat(DAY), ZoneInfo(TZ))
    assert spans == [one_day, one_day]


def test_tokens_measures_the_document_as_pinned(
    day_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamps: list[str | None] = []
    real = cli.compile_day

    def spy(*args: object, generated_at: str | None = None, **kwargs: object):
        stamps.append(generated_at)
        return real(*args, generated_at=generated_at, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "compile_day", spy)
    ok("tokens", *day_args(day_file))
    assert stamps == [PINNED]
