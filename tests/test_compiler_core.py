"""The compiler's rules on hand-built days: segmentation, enrichment, documents, privacy."""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from compiler.capture import Capture, Snapshot, in_time_order
from compiler.document import (
    InferredError,
    attach_inferred,
    canonical_json,
    canonical_sha256,
    compile_day,
    compile_window,
    expand_runs,
    runs,
    strip_inferred,
)
from compiler.emit import context_block, to_json, to_markdown
from compiler.params import Params
from compiler.views import communications, ledger, steps
from tests.compiler_days import BASE, DAY, TZ, Day, full_day

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "full_day.json"
FIXED = "2026-03-03T00:00:00+00:00"


def compiled(capture: Capture | None = None, **params: object):
    return compile_day(capture or full_day(), DAY, TZ, Params(**params), generated_at=FIXED)  # type: ignore[arg-type]


def frames_by_app(doc: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for frame in doc["frames"]:
        out.setdefault(frame["app"], []).append(frame)
    return out


def test_compiler_imports_no_django_or_network() -> None:
    banned = {
        "django",
        "rest_framework",
        "celery",
        "aframes_web",
        "requests",
        "urllib3",
        "httpx",
        "socket",
        "tiktoken",
    }
    for path in (ROOT / "compiler").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                # tiktoken is imported lazily by the one token counter (compiler/tokens.py).
                if path.name == "tokens.py" and name == "tiktoken":
                    continue
                assert name.split(".")[0] not in banned, f"{path}: imports {name}"


def test_rows_at_one_instant_are_in_time_order_when_their_ids_are() -> None:
    def rows(*pairs: tuple[float, int]) -> list[Snapshot]:
        return [Snapshot(i, t, "0", "Code") for t, i in pairs]

    assert in_time_order(rows()) and in_time_order(rows((1.0, 5)))
    assert in_time_order(rows((1.0, 1), (2.0, 2), (3.0, 3)))
    # Two monitors captured at the same instant: (t, id) order holds, no sort is needed.
    assert in_time_order(rows((1.0, 1), (2.0, 2), (2.0, 7), (3.0, 3)))
    assert not in_time_order(rows((1.0, 1), (2.0, 7), (2.0, 2), (3.0, 3)))
    assert not in_time_order(rows((1.0, 1), (3.0, 3), (2.0, 2)))


def test_dwell_credit_is_capped_and_gaps_credit_nothing() -> None:
    d = Day()
    d.run(0, 300, 30, "Code")  # 10 rows x 30 s
    d.snap(300, "Code")  # next row 200 s later: capped at 90 s
    d.snap(500, "Code")  # next row 400 s later: a session gap, credit 0
    d.snap(900, "Code")
    d.snap(960, "Code")
    doc = compiled(d.capture, min_minutes=0).document
    code = frames_by_app(doc)["Code"]
    assert [f["duration_min"] for f in code] == [round((300 + 90) / 60, 2), 1.0]
    assert doc["coverage"]["gaps"] == [
        {"start": "2026-03-02T08:08:20+01:00", "end": "2026-03-02T08:15:00+01:00", "minutes": 6.67}
    ]


def test_flicker_becomes_an_interruption_not_added_time() -> None:
    doc = compiled().document
    code = frames_by_app(doc)["Code"]
    assert len(code) == 1
    [interruption] = code[0]["interruptions"]
    assert interruption["app"] == "Slack" and interruption["seconds"] == 12.0
    # Code's own rows: 0..570 every 30 s (20 rows), 612..1182 (20 rows); credited, Slack not.
    assert code[0]["duration_min"] == round((19 * 30 + 30 + 19 * 30 + 18) / 60, 2)
    slack_row = expand_runs(interruption["evidence"])
    assert len(slack_row) == 1 and slack_row[0] not in expand_runs(code[0]["evidence"]["rows"])


def test_no_flicker_fold_across_a_session_break() -> None:
    d = Day()
    d.run(0, 120, 30, "Code")
    d.snap(120, "Slack")
    d.snap(130, "Code")  # back after 10 s, but...
    d2 = Day()
    d2.run(0, 120, 30, "Code")
    d2.snap(500, "Slack")  # ...here a gap precedes B, so nothing folds
    d2.snap(510, "Code")
    assert len(frames_by_app(compiled(d.capture, min_minutes=0).document)["Code"]) == 1
    assert len(frames_by_app(compiled(d2.capture, min_minutes=0).document)["Code"]) == 2


def test_monitors_are_separate_streams() -> None:
    doc = compiled().document
    firefox = frames_by_app(doc)["Firefox"]
    docs = [f for f in firefox if f["monitor"] == "1"]
    assert len(docs) == 1 and docs[0]["site"] == "docs.djangoproject.com"
    assert docs[0]["duration_min"] == round(27 * 50 / 60, 2)
    assert doc["coverage"]["monitors"] == ["0", "1"]


def test_single_row_frames_are_flagged_transit_and_kept() -> None:
    doc = compiled(min_minutes=0).document
    [finder] = frames_by_app(doc)["Finder"]
    assert finder["transit"] is True and finder["duration_min"] == round(35 / 60, 2)
    assert all(not f["transit"] for f in frames_by_app(doc)["Code"])


def test_lock_screen_and_afk_are_away_and_never_credited() -> None:
    doc = compiled(min_minutes=0).document
    away = doc["coverage"]["away"]
    assert [(a["reason"], a["start"][11:19], a["end"][11:19]) for a in away] == [
        ("lock_screen", "09:00:00", "09:03:20"),
        ("afk", "09:10:00", "09:13:00"),
    ]
    assert len(expand_runs(away[0]["evidence"])) == 2 and len(expand_runs(away[1]["evidence"])) == 1
    terminal = frames_by_app(doc)["Terminal"]
    assert len(terminal) == 2  # the lock closes the first Terminal frame
    # The last row before the lock earns time up to the lock row; lock rows earn nothing.
    assert terminal[0]["duration_min"] == round((6 * 45 + 30) / 60, 2)
    assert "loginwindow" not in frames_by_app(doc)
    # The AFK interval cuts the credit of the row before it (4070 -> absence at 4200: 90 s cap).
    assert terminal[1]["end"][11:19] == "09:09:20"


def test_app_names_lose_invisible_marks_only() -> None:
    doc = compiled().document
    assert "\u200eSlack" not in frames_by_app(doc)
    slack = frames_by_app(doc)["Slack"]
    assert {f["app"] for f in slack} == {"Slack"}


def test_non_web_schemes_are_not_sites() -> None:
    d = Day()
    d.run(0, 120, 30, "Firefox", url="moz-extension://abc/popup.html")
    d.run(120, 240, 30, "Firefox", url="https://example.com/a")
    frames = compiled(d.capture, min_minutes=0).document["frames"]
    assert [f["site"] for f in frames] == [None, "example.com"]


def test_clicks_resolve_in_tiers_and_unresolved_are_counted() -> None:
    doc = compiled().document
    assert doc["coverage"]["inputs"]["clicks"] == {
        "named": 1,
        "exact": 1,
        "tolerance": 1,
        "zone": 1,
        "unresolved": 1,
    }
    gmail = next(f for f in doc["frames"] if f["site"] == "mail.google.com")
    result = steps(compiled(), gmail["id"])
    clicks = [(s["target"], s["tier"]) for s in result["steps"] if s["op"] == "click"]
    assert clicks == [
        ("Compose", "exact"),
        ("Toolbar", "tolerance"),
        ("zone:bottom-right", "zone"),
        (None, "unresolved"),
        ("Send", "named"),
    ]
    assert result["unresolved_clicks"] == 1


def test_stale_inputs_are_unattributed_not_guessed() -> None:
    doc = compiled().document
    assert doc["coverage"]["inputs"]["unattributed"] == 1
    assert doc["coverage"]["inputs"]["attributed"] == 9


def test_input_counts_and_privacy_by_default() -> None:
    result = compiled()
    code = frames_by_app(result.document)["Code"][0]
    assert code["input"] == {"keys": 1 + len("bulk_create"), "clicks": 0, "copies": 0}
    outputs = [to_json(result.document), to_markdown(result.document), context_block(result)]
    outputs += [json.dumps(steps(result, f["id"])) for f in result.document["frames"]]
    for text in outputs:
        assert "bulk_create" not in text and "meeting notes" not in text


def test_text_on_opt_in_with_layout_repair() -> None:
    result = compiled(include_text=True, layout="azerty")
    code = frames_by_app(result.document)["Code"][0]
    assert code["input"]["text"] == "bulk_creqte"  # QWERTY capture of AZERTY typing, repaired
    gmail = next(f for f in result.document["frames"] if f["site"] == "mail.google.com")
    assert gmail["input"]["clipboard"] == ["meeting notes"]


def test_min_minutes_floor_omits_and_counts() -> None:
    everything = compiled(min_minutes=0).document
    floored = compiled(min_minutes=2).document
    dropped = [f for f in everything["frames"] if f["duration_min"] < 2]
    assert floored["omitted"]["below_min_minutes"] == len(dropped) > 0
    assert floored["omitted"]["minutes"] == pytest.approx(
        sum(f["duration_min"] for f in dropped), abs=0.05
    )
    assert len(floored["frames"]) + len(dropped) == len(everything["frames"])
    # The coverage still counts every credited minute.
    assert floored["coverage"]["active_minutes"] == everything["coverage"]["active_minutes"]


def test_evidence_is_exact_and_disjoint() -> None:
    capture = full_day()
    doc = compiled(capture, min_minutes=0).document
    seen: set[int] = set()
    for frame in doc["frames"]:
        ids = expand_runs(frame["evidence"]["rows"])
        for interruption in frame["interruptions"]:
            ids += expand_runs(interruption["evidence"])
        assert not seen & set(ids)
        seen |= set(ids)
        rows = {s.id: s for s in capture.snapshots}
        assert {rows[i].monitor for i in ids} == {frame["monitor"]}
    away = {i for a in doc["coverage"]["away"] for i in expand_runs(a["evidence"])}
    assert seen | away == {s.id for s in capture.snapshots}


def test_runs_round_trip() -> None:
    assert runs([9, 3, 4, 5, 11, 12]) == "3-5,9,11-12"
    assert expand_runs("3-5,9,11-12") == [3, 4, 5, 9, 11, 12]
    assert runs([]) == ""


def test_runs_of_one_run_and_of_interleaved_ids() -> None:
    # The two shapes written without a loop: one monitor's rows, two monitors' rows.
    assert runs([7]) == "7"
    assert runs([8, 7, 9, 7]) == "7-9"
    assert runs([1, 3, 5, 9]) == "1,3,5,9"
    assert runs([1, 3, 4]) == "1,3-4"
    generator = random.Random(5)
    for _ in range(500):
        ids = generator.sample(range(40), generator.randint(1, 20))
        assert expand_runs(runs(ids)) == sorted(ids)


def _offset_changes(zone: ZoneInfo, start: int, end: int) -> list[int]:
    """The first second of each new UTC offset of ``zone`` in [start, end)."""
    found: list[int] = []
    step = 6 * 3600
    for low in range(start, end, step):
        high = low + step
        if (
            datetime.fromtimestamp(low, zone).utcoffset()
            == datetime.fromtimestamp(high, zone).utcoffset()
        ):
            continue
        before = datetime.fromtimestamp(low, zone).utcoffset()
        while high - low > 1:
            middle = (low + high) // 2
            if datetime.fromtimestamp(middle, zone).utcoffset() == before:
                low = middle
            else:
                high = middle
        found.append(high)
    return found


@pytest.mark.parametrize(
    "tz",
    ["Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "America/St_Johns", "Africa/Monrovia"],
)
def test_local_time_is_isoformat_of_the_zone_across_offset_changes(tz: str) -> None:
    # Compiled.local assembles the string from a per-hour offset instead of calling isoformat.
    zone = ZoneInfo(tz)
    compiled_day = compile_window(Capture(), 0.0, 1.0, tz, generated_at=FIXED)
    changes = _offset_changes(zone, -2_000_000_000, 2_000_000_000)
    assert changes, tz
    instants = [
        change + delta + fraction
        for change in changes
        for delta in range(-7_200, 7_200, 599)
        for fraction in (0.0, 0.4999994, 0.4999996, 0.9999994, 0.9999995, 0.9999996)
    ]
    instants += [-1.5, -0.0000004, 0.0, 1_767_600_392.193381, 1_767_600_392.9999996]
    for t in instants:
        assert compiled_day.local(t) == datetime.fromtimestamp(t, zone).isoformat(
            timespec="seconds"
        ), (tz, t)


def test_frame_ids_do_not_depend_on_the_window() -> None:
    capture = full_day()
    morning = compile_window(
        capture, BASE, BASE + 3000, TZ, Params(min_minutes=0), generated_at=FIXED
    ).document
    whole = compiled(capture, min_minutes=0).document
    by_id = {f["id"]: f for f in whole["frames"]}
    assert morning["frames"]
    for frame in morning["frames"]:
        assert by_id[frame["id"]] == frame


def test_output_ignores_input_order() -> None:
    capture = full_day()
    shuffled = replace(capture)
    rng = random.Random(7)
    for name in ("snapshots", "inputs", "elements", "absences"):
        items = list(getattr(capture, name))
        rng.shuffle(items)
        setattr(shuffled, name, items)
    assert canonical_json(compiled(capture).document) == canonical_json(compiled(shuffled).document)


def test_output_ignores_hash_seed_and_locale(tmp_path: Path) -> None:
    script = (
        "import sys; from tests.test_compiler_core import compiled; "
        "from compiler.emit import to_json, context_block; r = compiled(); "
        "sys.stdout.write(to_json(r.document) + context_block(r))"
    )
    outputs = set()
    for seed, locale in (("0", "C"), ("123", "C.UTF-8"), ("random", "de_DE.UTF-8")):
        env = {**os.environ, "PYTHONHASHSEED": seed, "LC_ALL": locale, "LANG": locale}
        done = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_golden_document() -> None:
    text = to_json(compiled().document)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "rerun with UPDATE_GOLDEN=1 after checking the diff"


def test_sha256_ignores_generated_at_only() -> None:
    one = compiled().document
    two = {**one, "generated_at": "2030-01-01T00:00:00+00:00"}
    assert canonical_sha256(one) == canonical_sha256(two)
    assert canonical_sha256(one) != canonical_sha256(compiled(min_minutes=3).document)


def test_document_shape_and_provenance() -> None:
    doc = compiled().document
    assert list(doc) == [
        "schema_version",
        "generated_at",
        "source",
        "window",
        "coverage",
        "frames",
        "blind_spots",
        "omitted",
        "provenance",
    ]
    assert doc["window"] == {
        "start": "2026-03-02T00:00:00+01:00",
        "end": "2026-03-03T00:00:00+01:00",
        "day": "2026-03-02",
        "timezone": TZ,
    }
    assert any("two monitors" in s for s in doc["blind_spots"])
    assert any("Presence is not attention" in s for s in doc["blind_spots"])
    assert len(doc["provenance"]["input_sha256"]) == 64
    changed = full_day()
    changed.snapshots[0] = replace(changed.snapshots[0], window="other")
    assert (
        compiled(changed).document["provenance"]["input_sha256"]
        != doc["provenance"]["input_sha256"]
    )


def test_inferred_block_is_validated_and_strippable() -> None:
    doc = compiled().document
    frame = doc["frames"][0]["id"]
    good = {
        "llm:task": [
            {"label": "code review", "confidence": "medium", "evidence": {"frames": [frame]}}
        ]
    }
    with_block = attach_inferred(doc, good)
    assert with_block["inferred"] == good and strip_inferred(with_block) == doc
    bad_blocks = [
        {"task": good["llm:task"]},
        {"llm:task": [{"label": "x", "confidence": "certain", "evidence": {"frames": [frame]}}]},
        {"llm:task": [{"label": "x", "confidence": "high", "evidence": {}}]},
        {"llm:task": [{"label": "x", "confidence": "high", "evidence": {"frames": ["f-999999"]}}]},
    ]
    for block in bad_blocks:
        with pytest.raises(InferredError):
            attach_inferred(doc, block)


def test_context_block_accounts_for_every_minute() -> None:
    result = compiled(min_minutes=1)
    block = context_block(result)
    lines = block.splitlines()
    assert lines[0].startswith("Activity 2026-03-02 (Europe/Berlin): measured")
    assert lines[1].startswith("coverage: 08:00-")
    assert any(line.startswith("no capture: 08:34-08:55") for line in lines)
    assert any(line.startswith("away (") and "09:00-09:03" in line for line in lines)
    assert any(line.startswith("- 08:20-") and "github_pr" in line for line in lines)
    ledger_line = next(line for line in lines if line.startswith("ledger: "))
    assert "Code 20m" in ledger_line
    assert "omitted: 1 frame under 1 min (0.58 m)" in lines  # the transit Finder frame
    assert "Finder 1m (1)" in ledger_line  # ...whose minute the ledger still counts


def test_context_budget_keeps_longest_frames_in_time_order() -> None:
    result = compiled(min_minutes=0)
    full = context_block(result)
    tight = context_block(result, budget_tokens=130)
    frame_lines = [line for line in tight.splitlines() if line.startswith("- ")]
    assert 0 < len(frame_lines) < len([x for x in full.splitlines() if x.startswith("- ")])
    starts = [line[2:7] for line in frame_lines]
    assert starts == sorted(starts)
    assert "beyond the token budget" in tight


def test_views_ledger_and_communications() -> None:
    result = compiled()
    apps = {a["app"]: a for a in ledger(result)}
    assert apps["Code"]["sessions"] == 1 and apps["Code"]["top_windows"] == ["records.py — aframes"]
    assert apps["Slack"]["minutes"] > 0  # flicker seconds stay on Slack's ledger line
    surfaces = communications(result)
    kinds = {(s["kind"], s["app"], s["site"]) for s in surfaces}
    assert ("messaging", "Slack", None) in kinds
    assert ("email", "Firefox", "mail.google.com") in kinds
    assert all("untrusted" in s for s in surfaces)
    assert communications(result, "email") == [s for s in surfaces if s["kind"] == "email"]


def test_operator_layout_map_overrides_the_named_layout() -> None:
    result = compiled(include_text=True, layout="azerty", layout_map=(("b", "B"), ("_", "-")))
    code = frames_by_app(result.document)["Code"][0]
    assert code["input"]["text"] == "Bulk-create"
    assert result.document["source"]["parameters"]["layout_map"] == (("b", "B"), ("_", "-"))


def test_steps_keep_the_attribution_distance() -> None:
    result = compiled()
    gmail = next(f for f in result.document["frames"] if f["site"] == "mail.google.com")
    clicks = [s for s in steps(result, gmail["id"])["steps"] if s["op"] == "click"]
    assert [s["distance_ms"] for s in clicks] == [1000, 2000, 3000, 4000, 5000]


def test_input_digest_covers_the_element_trees_consulted_only() -> None:
    from compiler.capture import Element

    base = compiled().document["provenance"]["input_sha256"]
    unclicked = full_day()
    unclicked.elements.append(Element(1, "AXButton", "Run", (0.5, 0.5, 0.1, 0.1)))
    assert compiled(unclicked).document["provenance"]["input_sha256"] == base
    clicked = full_day()
    sid = next(s.id for s in clicked.snapshots if s.window == "Gmail")
    clicked.elements.append(Element(sid, "AXButton", "Archive", (0.9, 0.0, 0.05, 0.05)))
    assert compiled(clicked).document["provenance"]["input_sha256"] != base


def test_nested_flickers_are_flattened_and_every_second_kept() -> None:
    d = Day()
    url = "https://github.com/a/b/pull/1"
    for second, app, link in (
        (1, "Code", None),
        (2, "Code", url),
        (3, "Slack", None),
        (4, "Code", url),
        (5, "Code", None),
    ):
        d.snap(second, app, url=link)
    result = compiled(d.capture, min_minutes=0)
    [frame] = result.frames
    assert [(b.app, b.site) for b in frame.interruptions] == [
        ("Code", "github.com"),
        ("Slack", None),
    ]
    assert frame.active_s + sum(b.active_s for b in frame.interruptions) == 4.0


def test_the_block_says_when_minutes_summed_over_monitors_exceed_the_span() -> None:
    # Two monitors showing apps side by side for 20 minutes: 40 active minutes in 20.
    rows = [
        Snapshot(2 * n + m, BASE + 30.0 * n, str(m), ("Code", "Slack")[m])
        for n in range(41)
        for m in (0, 1)
    ]
    block = context_block(compiled(Capture(snapshots=rows)))
    coverage = next(line for line in block.splitlines() if line.startswith("coverage: "))
    assert "active min (summed over 2 monitors: exceeds the span)" in coverage
    one = [Snapshot(n, BASE + 30.0 * n, "0", "Code") for n in range(41)]
    alone = next(
        line
        for line in context_block(compiled(Capture(snapshots=one))).splitlines()
        if line.startswith("coverage: ")
    )
    assert "summed" not in alone
