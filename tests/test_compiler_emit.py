"""The emitters (activity frames §3.4, §5): JSON, YAML, Markdown and the context block."""

from __future__ import annotations

import sys
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from compiler.capture import Capture
from compiler.document import Compiled, compile_day
from compiler.emit import (
    FORMATS,
    MAX_CONTEXT_FRAMES,
    approx_tokens,
    context_block,
    render,
    to_json,
    to_markdown,
    to_yaml,
)
from compiler.params import Params
from tests.compiler_days import DAY, TZ, Day

FIXED = "2026-03-03T00:00:00+00:00"


def at(hhmm: str, seconds: str = "00") -> str:
    return f"2026-03-02T{hhmm}:{seconds}+01:00"


def frame(start: str, end: str, minutes: float, app: str = "Code", **fields: Any) -> dict[str, Any]:
    """A document frame as compile_window writes it (§3.4), with what a test sets."""
    return {
        "id": f"f-{start.replace(':', '')}",
        "app": app,
        "site": None,
        "monitor": "0",
        "start": at(start),
        "end": at(end),
        "duration_min": minutes,
        "transit": False,
        "windows": [],
        "pages": [],
        "input": {"keys": 0, "clicks": 0, "copies": 0},
        **fields,
    }


def document(frames: list[dict[str, Any]], **coverage: Any) -> dict[str, Any]:
    """A schema-v1 document over the day, its coverage as the test sets it."""
    return {
        "window": {
            "start": "2026-03-02T00:00:00+01:00",
            "end": "2026-03-03T00:00:00+01:00",
            "day": "2026-03-02",
            "timezone": TZ,
        },
        "coverage": {
            "first_activity": at("08:00"),
            "last_activity": at("09:00"),
            "active_minutes": 30.0,
            "span_minutes": 60.0,
            "coverage_pct": 100.0,
            "rows_analyzed": 12,
            "distinct_apps": 2,
            "monitors": ["0"],
            "gaps": [],
            "away": [],
            **coverage,
        },
        "frames": frames,
        "blind_spots": ["Presence is not attention."],
        "omitted": {"below_min_minutes": 0, "minutes": 0.0, "min_minutes": 0.5},
    }


def compiled_of(doc: dict[str, Any]) -> Compiled:
    """A compiled window around a hand-built document; it has no frames, so no ledger line."""
    return Compiled(doc, [], {}, ZoneInfo(TZ), Params())


def block(doc: dict[str, Any], **options: Any) -> list[str]:
    return context_block(compiled_of(doc), **options).splitlines()


def one_token_a_line(text: str) -> int:
    return 1


# --- JSON and YAML --------------------------------------------------------------------------


def test_tokens_are_approximated_as_four_utf8_bytes_each_plus_one() -> None:
    assert [approx_tokens(t) for t in ("", "abc", "abcd", "a" * 9)] == [1, 1, 2, 3]
    assert approx_tokens("ééé") == 2  # six bytes, three characters


def test_json_sorts_keys_indents_by_two_and_keeps_text_as_written() -> None:
    assert to_json({"b": 1, "a": "é"}) == '{\n  "a": "é",\n  "b": 1\n}\n'
    assert to_json([{"b": 1, "a": 2}], indent=None) == '[{"a": 2, "b": 1}]\n'


def test_yaml_sorts_keys_keeps_text_and_folds_past_a_hundred_columns() -> None:
    assert to_yaml({"b": 1, "a": "é", "c": [1, 2]}) == "a: é\nb: 1\nc:\n- 1\n- 2\n"
    words = "ab " * 60
    assert to_yaml({"k": words[:99].strip()}).count("\n") == 1
    assert to_yaml({"k": words[:100].strip()}).count("\n") == 2


def test_yaml_without_pyyaml_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now raises ImportError
    with pytest.raises(RuntimeError) as raised:
        to_yaml({})
    assert str(raised.value) == "YAML output needs PyYAML: pip install PyYAML"
    assert raised.value.__suppress_context__


# --- Markdown -------------------------------------------------------------------------------


def test_markdown_lays_out_coverage_absences_frames_and_blind_spots() -> None:
    pages = [{"kind": "github_pr", "entity": f"acme/app#{n}", "count": n} for n in (1, 2, 3, 4)]
    doc = document(
        [
            frame("08:00", "08:20", 19.8, windows=["a|b"], pages=pages),
            frame("08:20", "08:21", 0.58, app="Fin|der", site="x.org", transit=True, input=None),
            frame("08:21", "08:30", 9.0, app="Multi\nline", monitor="1"),
        ],
        gaps=[{"start": at("08:34", "30"), "end": at("08:55"), "minutes": 20.5}],
        away=[{"start": at("09:00"), "end": at("09:03", "20"), "minutes": 3.33, "reason": "afk"}],
        first_activity=None,
    )
    doc["frames"][0]["input"] = {"keys": 12, "clicks": 3, "copies": 1}
    doc["omitted"] = {"below_min_minutes": 2, "minutes": 0.7, "min_minutes": 1.0}
    assert to_markdown(doc) == (
        "# Activity 2026-03-02 (Europe/Berlin)\n"
        "\n"
        "Measured from capture; no interpretation.\n"
        "\n"
        "| first | last | active min | span min | coverage | rows | apps |\n"
        "|---|---|---|---|---|---|---|\n"
        "| --:-- | 09:00 | 30.0 | 60.0 | 100.0 % | 12 | 2 |\n"
        "\n"
        "| from | to | minutes | what |\n"
        "|---|---|---|---|\n"
        "| 08:34 | 08:55 | 20.5 | no capture |\n"
        "| 09:00 | 09:03 | 3.33 | away (afk) |\n"
        "\n"
        "| time | monitor | app | site | min | pages | keys | clicks | copies | id |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
        "| 08:00–08:20 | 0 | Code |  | 19.8 | github_pr:acme/app#1 ×1; github_pr:acme/app#2 ×2; "
        "github_pr:acme/app#3 ×3 | 12 | 3 | 1 | `f-0800` |\n"
        "| 08:20–08:21 | 0 | Fin\\|der (transit) | x.org | 0.58 |  | — | — | — | `f-0820` |\n"
        "| 08:21–08:30 | 1 | Multi line |  | 9.0 |  | 0 | 0 | 0 | `f-0821` |\n"
        "\n"
        "2 frames under 1.0 min (0.7 min) are omitted.\n"
        "\n"
        "## Blind spots\n"
        "\n"
        "- Presence is not attention.\n"
    )


def test_markdown_of_a_window_that_is_no_day_lists_a_gap_alone_and_one_omitted_frame() -> None:
    doc = document(
        [], gaps=[{"start": at("08:00"), "end": at("08:10"), "minutes": 10.0}], last_activity=""
    )
    doc["window"] = {**doc["window"], "day": None, "start": "S", "end": "E"}
    doc["omitted"] = {"below_min_minutes": 1, "minutes": 0.3, "min_minutes": 0.5}
    lines = to_markdown(doc).splitlines()
    assert lines[0] == "# Activity S – E (Europe/Berlin)"
    assert lines[6] == "| 08:00 | --:-- | 30.0 | 60.0 | 100.0 % | 12 | 2 |"
    assert lines[8:12] == [
        "| from | to | minutes | what |",
        "|---|---|---|---|",
        "| 08:00 | 08:10 | 10.0 | no capture |",
        "",
    ]
    assert "1 frame under 0.5 min (0.3 min) is omitted." in lines


def test_markdown_without_gaps_or_absences_has_no_table_of_them() -> None:
    lines = to_markdown(document([frame("08:00", "08:10", 10.0)])).splitlines()
    assert lines[7:10] == [
        "",
        "| time | monitor | app | site | min | pages | keys | clicks | copies | id |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    assert not any("omitted" in line for line in lines)


# --- The context block: its header ----------------------------------------------------------


def test_the_block_opens_with_the_day_and_the_measured_coverage() -> None:
    lines = block(document([], active_minutes=30.5, distinct_apps=3))
    assert lines == [
        "Activity 2026-03-02 (Europe/Berlin): measured from capture, no interpretation.",
        "coverage: 08:00-09:00, 30 active min, 3 apps",
    ]


def test_a_window_that_is_no_day_is_named_by_its_bounds_to_the_minute() -> None:
    doc = document([], first_activity=None)
    doc["window"] = {**doc["window"], "day": None}
    assert block(doc) == [
        "Activity 2026-03-02T00:00 to 2026-03-03T00:00 (Europe/Berlin): measured from capture, "
        "no interpretation.",
        "coverage: no activity captured in this window",
    ]


def test_minutes_summed_over_monitors_are_said_to_exceed_the_span_only_when_they_do() -> None:
    summed = document([], active_minutes=61.0, span_minutes=60.0, monitors=["0", "1"])
    assert block(summed)[1] == (
        "coverage: 08:00-09:00, 61 active min (summed over 2 monitors: exceeds the span), 2 apps"
    )
    equal = document([], active_minutes=60.0, span_minutes=60.0, monitors=["0", "1"])
    assert block(equal)[1] == "coverage: 08:00-09:00, 60 active min, 2 apps"


def test_a_gap_inside_an_away_span_is_said_once_as_away_time() -> None:
    away = {"start": at("09:00"), "end": at("09:30"), "minutes": 30.0, "reason": "afk"}
    lock = {"start": at("10:00"), "end": at("10:10"), "minutes": 10.0, "reason": "lock_screen"}
    gaps = [
        {"start": at("08:10"), "end": at("08:20"), "minutes": 10.4},  # no absence near it
        {"start": at("09:00"), "end": at("09:30"), "minutes": 30.0},  # exactly the afk span
        {"start": at("08:59"), "end": at("09:10"), "minutes": 11.0},  # starts before it
        {"start": at("09:20"), "end": at("09:31"), "minutes": 11.0},  # ends after it
        {"start": at("10:01"), "end": at("10:09"), "minutes": 8.0},  # inside the second span
    ]
    assert block(document([], gaps=gaps, away=[away, lock]))[2:] == [
        "no capture: 08:10-08:20 (10m)",
        "no capture: 08:59-09:10 (11m)",
        "no capture: 09:20-09:31 (11m)",
        "away (afk): 09:00-09:30 (30m)",
        "away (lock_screen): 10:00-10:10 (10m)",
    ]


def test_away_spans_share_one_line_per_reason_and_spans_under_a_minute_are_left_out() -> None:
    def span(start: str, end: str, minutes: float, reason: str) -> dict[str, Any]:
        return {"start": at(start), "end": at(end), "minutes": minutes, "reason": reason}

    away = [
        span("08:10", "08:13", 3.33, "lock_screen"),
        span("08:20", "08:20", 0.99, "afk"),
        span("08:30", "08:31", 1.0, "afk"),
        span("08:40", "08:46", 5.6, "lock_screen"),
    ]
    assert block(document([], away=away))[2:] == [
        "away (lock_screen): 08:10-08:13 (3m), 08:40-08:46 (6m)",
        "away (afk): 08:30-08:31 (1m)",
    ]


# --- The context block: frame lines ---------------------------------------------------------


def test_a_frame_line_names_app_site_span_rounded_minutes_and_at_most_four_pages() -> None:
    pages = [{"kind": "github_pr", "entity": f"acme/app#{n}", "count": n} for n in range(1, 6)]
    doc = document([frame("08:00", "08:20", 19.6, site="github.com", pages=pages)])
    assert block(doc)[2] == (
        "- 08:00-08:20 Code/github.com (20 m): github_pr:acme/app#1 x1; github_pr:acme/app#2 x2; "
        "github_pr:acme/app#3 x3; github_pr:acme/app#4 x4"
    )


def test_a_page_that_only_repeats_the_site_or_has_no_entity_is_named_by_its_kind() -> None:
    pages = [
        {"kind": "calendar", "entity": "calendar.google.com", "count": 3},
        {"kind": "search", "entity": None, "count": 2},
        {"kind": "doc", "entity": "", "count": 1},
    ]
    doc = document([frame("08:00", "08:10", 10.0, site="calendar.google.com", pages=pages)])
    assert block(doc)[2] == (
        "- 08:00-08:10 Code/calendar.google.com (10 m): calendar x3; search x2; doc x1"
    )


def test_a_frame_without_pages_shows_its_first_title_or_nothing() -> None:
    doc = document(
        [
            frame("08:00", "08:10", 10.0, windows=["zsh", "vim"]),
            frame("08:10", "08:20", 10.0),
        ]
    )
    assert block(doc)[2:] == ["- 08:00-08:10 Code (10 m): zsh", "- 08:10-08:20 Code (10 m)"]


def test_typing_is_mentioned_above_fifty_keys_after_the_detail_or_alone() -> None:
    def typed(keys: int | None, windows: list[str]) -> str:
        counts = None if keys is None else {"keys": keys, "clicks": 0, "copies": 0}
        doc = document([frame("08:00", "08:10", 10.0, windows=windows, input=counts)])
        return block(doc)[2]

    assert typed(51, ["zsh"]) == "- 08:00-08:10 Code (10 m): zsh; typed ~51 chars"
    assert typed(51, []) == "- 08:00-08:10 Code (10 m): typed ~51 chars"
    assert typed(50, ["zsh"]) == "- 08:00-08:10 Code (10 m): zsh"
    assert typed(None, []) == "- 08:00-08:10 Code (10 m)"  # no input recorded: nothing said


# --- The context block: the ledger ----------------------------------------------------------


def test_the_ledger_line_gives_minutes_and_sessions_and_flags_apps_seen_only_inside_others() -> (
    None
):
    d = Day()
    d.run(0, 300, 30, "Code")
    d.snap(300, "Slack")  # a 10 s flicker: an interruption of Code, no frame of its own
    d.run(310, 400, 30, "Code")
    d.snap(400, "Finder")  # 30 s: half a minute, which round() takes to 0
    d.snap(430, "Mail")  # the last row earns nothing
    compiled = compile_day(d.capture, DAY, TZ, Params(min_minutes=0), generated_at=FIXED)
    ledger_line = context_block(compiled).splitlines()[-1]
    assert ledger_line == (
        "ledger: Code 6m (1), Finder <1m (1), Slack <1m (within other frames), Mail <1m (1)"
    )


# --- The context block: what a budget or the frame limit leaves out -------------------------


DURATIONS = (3.0, 10.0, 5.0, 8.0)


def four_frames() -> dict[str, Any]:
    starts = ("08:00", "08:10", "08:20", "08:30")
    return document(
        [
            frame(s, s[:4] + "9", m, app=f"A{n}")
            for n, (s, m) in enumerate(zip(starts, DURATIONS, strict=True))
        ]
    )


def listed_apps(lines: list[str]) -> list[str]:
    return [line.split()[2] for line in lines if line.startswith("- ")]


@pytest.mark.parametrize(
    ("budget", "apps", "omitted"),
    [
        # The header (two lines) and room for the omitted line (30) cost 32 tokens.
        (32, [], "4 frames beyond the token budget (26.0 m)"),
        (33, ["A1"], "3 frames beyond the token budget (16.0 m)"),
        (34, ["A1", "A3"], "2 frames beyond the token budget (8.0 m)"),
        (35, ["A1", "A2", "A3"], "1 frame beyond the token budget (3.0 m)"),
        (36, ["A0", "A1", "A2", "A3"], None),
    ],
)
def test_a_budget_keeps_the_longest_frames_that_fit_in_time_order(
    budget: int, apps: list[str], omitted: str | None
) -> None:
    lines = block(four_frames(), budget_tokens=budget, count_tokens=one_token_a_line)
    assert listed_apps(lines) == apps
    assert (lines[-1] if lines[-1].startswith("omitted: ") else None) == (
        f"omitted: {omitted}" if omitted else None
    )


def test_a_frame_too_costly_for_the_budget_is_skipped_for_shorter_ones_that_fit() -> None:
    doc = four_frames()
    doc["frames"][1]["windows"] = ["a long title"]
    lines = block(doc, budget_tokens=34, count_tokens=lambda t: 5 if "long title" in t else 1)
    assert listed_apps(lines) == ["A2", "A3"]
    assert lines[-1] == "omitted: 2 frames beyond the token budget (13.0 m)"


@pytest.mark.parametrize("budget", [34, None])
def test_the_budget_weighs_each_line_of_the_block_with_its_newline(budget: int | None) -> None:
    asked: list[str] = []

    def count(text: str) -> int:
        asked.append(text)
        return 1

    lines = block(four_frames(), budget_tokens=budget, max_frames=2, count_tokens=count)
    header = lines[:2]
    frame_lines = [line for line in block(four_frames()) if line.startswith("- ")]
    assert set(asked) == {line + "\n" for line in header + frame_lines[1::2]}


def test_frames_of_equal_length_are_kept_earliest_first() -> None:
    doc = document([frame("08:00", "08:05", 5.0, app="A"), frame("08:10", "08:15", 5.0, app="B")])
    lines = block(doc, budget_tokens=33, count_tokens=one_token_a_line)
    assert listed_apps(lines) == ["A"]


def test_frames_past_the_limit_are_counted_as_the_limits_not_the_budgets() -> None:
    # A budget weighs only the max_frames longest frames; the rest were cut by the limit.
    generous = block(four_frames(), budget_tokens=10_000, max_frames=2)
    assert listed_apps(generous) == ["A1", "A3"]
    assert generous[-1] == "omitted: 2 frames beyond the limit of 2 frames (8.0 m)"
    both = block(four_frames(), budget_tokens=33, max_frames=3, count_tokens=one_token_a_line)
    assert listed_apps(both) == ["A1"]
    assert both[-1] == (
        "omitted: 2 frames beyond the token budget (13.0 m); "
        "1 frame beyond the limit of 3 frames (3.0 m)"
    )


def test_without_a_budget_a_day_of_many_frames_costs_what_max_frames_lines_cost() -> None:
    doc = four_frames()
    lines = block(doc, max_frames=2, count_tokens=one_token_a_line)
    assert listed_apps(lines) == ["A1", "A3"]
    assert lines[-1] == "omitted: 2 frames beyond the size of 2 frames (8.0 m)"
    # A gap line in the header is paid for by the shortest of the frames that would be listed.
    doc["coverage"]["gaps"] = [{"start": at("08:40"), "end": at("08:50"), "minutes": 10.0}]
    lines = block(doc, max_frames=2, count_tokens=one_token_a_line)
    assert listed_apps(lines) == ["A1"]
    assert lines[-1] == "omitted: 3 frames beyond the size of 2 frames (16.0 m)"


def test_without_a_budget_every_frame_up_to_the_limit_is_listed() -> None:
    doc = four_frames()
    doc["coverage"]["gaps"] = [{"start": at("08:40"), "end": at("08:50"), "minutes": 10.0}]
    lines = block(doc, max_frames=4, count_tokens=one_token_a_line)
    assert listed_apps(lines) == ["A0", "A1", "A2", "A3"]
    assert not lines[-1].startswith("omitted")
    assert MAX_CONTEXT_FRAMES == 40


def test_the_omitted_line_counts_frames_under_the_floor_first_and_sums_minutes_to_a_tenth() -> None:
    doc = document([frame("08:00", "08:10", 1.26), frame("08:10", "08:20", 1.0)])
    doc["omitted"] = {"below_min_minutes": 1, "minutes": 0.33, "min_minutes": 0.5}
    lines = block(doc, budget_tokens=32, count_tokens=one_token_a_line)
    assert lines[-1] == (
        "omitted: 1 frame under 0.5 min (0.33 m); 2 frames beyond the token budget (2.3 m)"
    )
    doc["omitted"]["below_min_minutes"] = 3
    assert block(doc)[-1] == "omitted: 3 frames under 0.5 min (0.33 m)"


# --- render ---------------------------------------------------------------------------------


def test_render_writes_each_format_and_refuses_an_unknown_one() -> None:
    d = Day()
    d.run(0, 300, 30, "Code")
    compiled = compile_day(d.capture, DAY, TZ, Params(), generated_at=FIXED)
    assert render(compiled, "json") == to_json(compiled.document)
    assert render(compiled, "yaml") == to_yaml(compiled.document)
    assert render(compiled, "md") == to_markdown(compiled.document)
    assert render(compiled, "context") == context_block(compiled)
    tight = render(compiled, "context", budget_tokens=1)
    assert tight == context_block(compiled, budget_tokens=1) != context_block(compiled)
    assert FORMATS == ("json", "yaml", "md", "context")
    with pytest.raises(ValueError) as raised:
        render(compiled, "html")
    assert str(raised.value) == "unknown format 'html'; choose one of json, yaml, md, context"


def test_an_empty_capture_renders_in_every_format() -> None:
    compiled = compile_day(Capture(), DAY, TZ, Params(), generated_at=FIXED)
    for fmt in FORMATS:
        assert render(compiled, fmt).endswith("\n")
