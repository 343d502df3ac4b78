"""The activity document (activity frames §3.4): frame fields, canonical form, tier 2."""

from __future__ import annotations

import re
from typing import Any

import pytest

from compiler.capture import Absence, Capture, InputEvent, Snapshot
from compiler.document import (
    InferredError,
    attach_inferred,
    canonical_json,
    compile_window,
    expand_runs,
    runs,
)
from compiler.params import Params

T0 = 1_772_438_400.0  # 2026-03-02T08:00:00Z


def document(*rows: tuple[float, str, str | None]) -> dict[str, Any]:
    """One monitor's rows: (offset s, app, window title) each, ids in order."""
    capture = Capture(
        snapshots=[
            Snapshot(i, T0 + t, "0", app, window) for i, (t, app, window) in enumerate(rows, 1)
        ]
    )
    result = compile_window(capture, T0, T0 + 86400, "UTC", Params(min_minutes=0))
    return result.document


def titled(*windows: str | None) -> list[str]:
    """The windows listed for one Code frame whose rows show these titles, 10 s apart."""
    [frame] = document(*((10 * i, "Code", w) for i, w in enumerate(windows)))["frames"]
    return frame["windows"]


def test_a_frame_lists_its_most_shown_titles_first_ties_in_first_seen_order() -> None:
    assert titled("a", "b", "b") == ["b", "a"]
    assert titled("a", "b", "c", "c", "d", "b", "d", "b") == ["b", "c", "d"]
    assert titled("x\u200b", "x", None, "") == ["x"]  # one title after normalising; none blank


def test_a_frame_counts_a_page_once_over_all_its_urls_and_lists_at_most_ten() -> None:
    pr = ["https://github.com/a/b/pull/1", "https://github.com/a/b/pull/1/files"]
    issues = [f"https://github.com/a/b/issues/{n}" for n in range(1, 12)]
    urls = [pr[0], pr[1], pr[1], *issues]
    capture = Capture(
        snapshots=[
            Snapshot(i, T0 + 10 * i, "0", "Firefox", "t", url) for i, url in enumerate(urls, 1)
        ]
    )
    [frame] = compile_window(capture, T0, T0 + 86400, "UTC", Params(min_minutes=0)).document[
        "frames"
    ]
    assert len(frame["pages"]) == 10
    assert frame["pages"][:2] == [
        {"kind": "github_pr", "entity": "a/b#1", "count": 3},
        {"kind": "github_issue", "entity": "a/b#1", "count": 1},
    ]


def inputs_frame(include_text: bool) -> dict[str, Any]:
    capture = Capture(
        snapshots=[Snapshot(i, T0 + t, "0", "Code", "a") for i, t in enumerate((0, 30, 60), 1)],
        inputs=[
            InputEvent(11, T0 + 5, "key", text="ab"),  # a key is one key, whatever it typed
            InputEvent(12, T0 + 10, "text", text="hello"),  # typed text: one key a character
            InputEvent(13, T0 + 15, "clipboard", text="x"),
            InputEvent(14, T0 + 20, "clipboard", text="y"),
            InputEvent(15, T0 + 25, "click"),
            InputEvent(16, T0 + 35, "scroll"),
        ],
    )
    params = Params(min_minutes=0, include_text=include_text)
    [frame] = compile_window(capture, T0, T0 + 86400, "UTC", params).document["frames"]
    return frame


def test_a_frame_counts_its_inputs_and_shows_text_only_on_opt_in() -> None:
    assert inputs_frame(False)["input"] == {"keys": 6, "clicks": 1, "copies": 2}
    assert inputs_frame(False)["evidence"]["inputs"] == "11-16"
    assert inputs_frame(True)["input"] == {
        "keys": 6,
        "clicks": 1,
        "copies": 2,
        "text": "abhello",
        "clipboard": ["x", "y"],
    }


def test_an_interruption_reports_its_seconds_to_a_tenth() -> None:
    doc = document((0, "Code", "a"), (10, "Slack", None), (22.34, "Code", "a"), (40, "Code", "a"))
    [frame] = doc["frames"]
    assert frame["interruptions"] == [
        {"app": "Slack", "site": None, "seconds": 12.3, "evidence": "2"}
    ]
    assert frame["evidence"] == {"rows": "1,3-4", "inputs": ""}


def test_canonical_json_sorts_keys_is_compact_and_keeps_text_as_it_is() -> None:
    assert canonical_json({"b": [1, 2.5], "a": {"d": None, "c": "Küche"}}) == (
        '{"a":{"c":"Küche","d":null},"b":[1,2.5]}'
    )


def test_runs_and_their_expansion() -> None:
    assert runs([]) == "" and expand_runs("") == []
    assert runs([7]) == "7"
    assert runs([5, 3, 4, 4]) == "3-5"
    assert runs([1, 3, 5]) == "1,3,5"
    assert runs([1, 2, 4, 6, 7, 8, 10]) == "1-2,4,6-8,10"
    assert expand_runs("1-2,4,6-8,10") == [1, 2, 4, 6, 7, 8, 10]


FRAME = "f-1"


def entry(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"label": "x", "confidence": "high", "evidence": {"frames": [FRAME]}}
    return {**base, **changes}


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    made = document((0, "Code", "a"), (30, "Code", "a"))
    assert [f["id"] for f in made["frames"]] == [FRAME]
    return made


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({}, "inferred must be a non-empty object of namespaced entries"),
        ([entry()], "inferred must be a non-empty object of namespaced entries"),
        ({"task": [entry()]}, "inferred key 'task' must be namespaced, e.g. 'llm:task'"),
        ({1: [entry()]}, "inferred key 1 must be namespaced, e.g. 'llm:task'"),
        ({"llm:task": entry()}, "inferred['llm:task'] must be a list of entries"),
        ({"llm:task": ["x"]}, "inferred['llm:task'][0] needs a string label"),
        ({"llm:task": [entry(), entry(label=3)]}, "inferred['llm:task'][1] needs a string label"),
        (
            {"llm:task": [entry(confidence="certain")]},
            "inferred['llm:task'][0].confidence must be one of high, medium, speculative",
        ),
        (
            {"llm:task": [entry(evidence=[FRAME])]},
            "inferred['llm:task'][0].evidence must name frames or rows",
        ),
        (
            {"llm:task": [entry(evidence={"frames": [], "rows": ""})]},
            "inferred['llm:task'][0].evidence must name frames or rows",
        ),
        (
            {"llm:task": [entry(evidence={"frames": ["f-9", FRAME, "f-8"]})]},
            "inferred['llm:task'][0].evidence names unknown frames ['f-8', 'f-9']",
        ),
        (
            {"llm:task": [entry(evidence={"rows": "3-x"})]},
            "inferred['llm:task'][0].evidence.rows must be id runs like '3-5,9'",
        ),
    ],
)
def test_an_inferred_block_that_breaks_a_rule_is_refused_with_the_rule(
    doc: dict[str, Any], block: Any, message: str
) -> None:
    with pytest.raises(InferredError) as refused:
        attach_inferred(doc, block)
    assert str(refused.value) == message


def test_an_inferred_block_may_cite_rows_alone_and_leaves_the_document_as_it_was(
    doc: dict[str, Any],
) -> None:
    block = {
        "llm:task": [entry(confidence="speculative", evidence={"rows": "1-2"})],
        "rules:focus": [entry(confidence="medium")],
    }
    attached = attach_inferred(doc, block)
    assert attached["inferred"] is block
    assert "inferred" not in doc
    assert {k: v for k, v in attached.items() if k != "inferred"} == doc


# --- The window and what it counts ----------------------------------------------------------


def compile_rows(
    snapshots: list[Snapshot], start: float = T0, end: float = T0 + 86400, **kw: Any
) -> dict[str, Any]:
    capture = Capture(snapshots=snapshots, **kw)
    params = Params(min_minutes=0)
    return compile_window(capture, start, end, "UTC", params, generated_at="fixed").document


def test_the_window_is_half_open_for_frames_rows_and_inputs() -> None:
    snaps = [
        Snapshot(1, T0 - 30, "0", "Mail"),
        Snapshot(2, T0, "0", "Code"),
        Snapshot(3, T0 + 30, "0", "Code"),
        Snapshot(4, T0 + 60, "0", "Slack"),
        Snapshot(5, T0 + 90, "0", "Slack"),
    ]
    inputs = [
        InputEvent(11, T0 - 25, "click"),
        InputEvent(12, T0, "click"),
        InputEvent(13, T0 + 5, "key"),
        InputEvent(14, T0 + 60, "key"),
    ]
    doc = compile_rows(snaps, T0, T0 + 60, inputs=inputs)
    assert [f["id"] for f in doc["frames"]] == ["f-2"]  # starts at start: in; at end: out
    assert doc["coverage"]["rows_analyzed"] == 2  # the rows at start and +30 s, not at end
    assert doc["frames"][0]["evidence"]["inputs"] == "12-13"
    assert doc["coverage"]["inputs"]["attributed"] == 2
    # Rows handed over out of order are counted the same.
    shuffled = compile_rows([snaps[3], snaps[0], snaps[2], snaps[1], snaps[4]], T0, T0 + 60)
    assert shuffled["coverage"]["rows_analyzed"] == 2


def test_an_input_on_an_interruption_row_counts_for_the_host_frame() -> None:
    snaps = [
        Snapshot(1, T0, "0", "Code"),
        Snapshot(2, T0 + 10, "0", "Slack"),
        Snapshot(3, T0 + 20, "0", "Code"),
        Snapshot(4, T0 + 50, "0", "Code"),
    ]
    doc = compile_rows(snaps, inputs=[InputEvent(11, T0 + 11, "key")])
    [frame] = doc["frames"]
    assert frame["input"]["keys"] == 1 and frame["evidence"]["inputs"] == "11"


def test_frames_under_the_floor_are_counted_and_their_minutes_summed() -> None:
    snaps = [
        Snapshot(1, T0, "0", "Code"),  # 30 s: exactly the 0.5 min floor, kept
        Snapshot(2, T0 + 30, "0", "Slack"),  # 20 s: omitted
        Snapshot(3, T0 + 50, "0", "Mail"),  # 25 s: omitted
        Snapshot(4, T0 + 75, "0", "Code"),  # last row: 0 s, omitted
    ]
    result = compile_window(Capture(snapshots=snaps), T0, T0 + 86400, "UTC", Params())
    assert [f["id"] for f in result.document["frames"]] == ["f-1"]
    assert result.document["omitted"] == {
        "below_min_minutes": 3,
        "minutes": 0.75,
        "min_minutes": 0.5,
    }


def test_time_in_windows_of_no_named_app_is_disclosed_in_minutes() -> None:
    snaps = [Snapshot(1, T0, "0", "unknown"), Snapshot(2, T0 + 45, "0", "Code")]
    disclosures = compile_rows(snaps)["source"]["disclosures"]
    assert disclosures == [
        "0.75 min were captured in windows whose app the recorder could not name; they are "
        "counted as (unknown app), not as an app."
    ]
    assert compile_rows([Snapshot(1, T0, "0", "Code")])["source"]["disclosures"] == []


def test_generated_at_defaults_to_the_utc_second_of_the_compile() -> None:
    capture = Capture(snapshots=[Snapshot(1, T0, "0", "Code")])
    stamp = compile_window(capture, T0, T0 + 60, "UTC", Params()).document["generated_at"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", stamp)


def test_the_input_digest_ignores_row_order_and_reads_any_text() -> None:
    snaps = [
        Snapshot(1, T0, "0", "Code", "a\ud800"),  # a lone surrogate, as some recorders store
        Snapshot(2, T0 + 10, "0", "Code", "b"),
        Snapshot(3, T0 + 20, "0", "Code", "c"),
    ]
    absences = [Absence(2, T0 + 100, T0 + 200), Absence(1, T0 + 300, T0 + 400)]
    digest = compile_rows(snaps, absences=absences)["provenance"]["input_sha256"]
    reordered = compile_rows([snaps[1], snaps[0], snaps[2]], absences=absences[::-1])
    assert reordered["provenance"]["input_sha256"] == digest
    assert compile_rows(snaps[:2])["provenance"]["input_sha256"] != digest


def test_coverage_lists_only_away_time_in_the_window_and_gaps_longer_than_five_minutes() -> None:
    snaps = [
        Snapshot(1, T0, "0", "Code"),
        Snapshot(2, T0 + 300, "0", "Code"),  # exactly 5 minutes later: not a gap
        Snapshot(3, T0 + 601, "0", "Code"),  # 301 s later: a gap
    ]
    absences = [Absence(1, T0 - 500, T0 - 100), Absence(2, T0 + 700, T0 + 800)]
    coverage = compile_rows(snaps, T0, T0 + 650, absences=absences)["coverage"]
    assert [g["minutes"] for g in coverage["gaps"]] == [5.02]
    assert coverage["away"] == []


def test_a_window_without_frames_spans_nothing() -> None:
    coverage = compile_rows([Snapshot(1, T0, "0", "Code")], T0 + 10, T0 + 20)["coverage"]
    assert (coverage["span_minutes"], coverage["coverage_pct"]) == (0.0, 0.0)
    assert coverage["first_activity"] is None and coverage["last_activity"] is None


def test_an_inferred_block_may_be_attached_to_a_document_without_frames() -> None:
    block = {"llm:task": [entry(evidence={"rows": "1"})]}
    assert attach_inferred({}, block) == {"inferred": block}
