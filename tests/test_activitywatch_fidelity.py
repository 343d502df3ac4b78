"""ActivityWatch days as the recorder measured them: minutes, and the CLI against the service.

The days are SYNTHETIC but in the exact native format, with the quirks of real exports
(``benchmark/synthetic/aw_day.py``): short gaps, zero-duration events, overlapping AFK events,
private windows, buckets sorting before the window bucket.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from aframes_web.activity.models import DayDocument
from aframes_web.activity.selectors import evidence_events
from aframes_web.streams.models import Entity, Event
from benchmark.synthetic.aw_day import generate, local_day_bounds
from compiler.capture import Capture, Snapshot
from compiler.document import compile_day, expand_runs
from compiler.emit import to_json, to_markdown
from compiler.params import Params
from compiler.segment import segment
from compiler.sources import activitywatch
from compiler.sources.events import capture_from_records, records_from_capture
from compiler.views import ledger

DAY = date(2026, 3, 2)
TZ = "Europe/Berlin"
ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 0.03  # credited minutes within 3 % of the recorder's own totals


def _credited(capture: Capture) -> dict[str, float]:
    return {a["app"]: a["minutes"] for a in ledger(compile_day(capture, DAY, TZ))}


def test_a_known_end_caps_a_rows_credit_and_other_rows_keep_the_dwell_rule() -> None:
    rows = [
        Snapshot(1, 0.0, "0", "Code", "a", None, 12.0),  # its event ended 12 s in
        Snapshot(2, 40.0, "0", "Code", "a"),  # event-driven: earns the gap, capped at 90 s
        Snapshot(3, 200.0, "0", "Slack", "b", None, 260.0),  # last row: its own end counts
    ]
    credits = [c for s in segment(rows, [], Params()).segments for c in s.credits]
    assert credits == [12.0, 90.0, 60.0]
    # An end before the next row never extends the credit past the dwell cap either.
    long = [Snapshot(1, 0.0, "0", "Code", end=500.0), Snapshot(2, 200.0, "0", "Code")]
    assert segment(long, [], Params()).segments[0].credits[0] == 90.0
    # A nonsensical end (before the row) credits nothing rather than a negative time.
    odd = [Snapshot(1, 10.0, "0", "Code", end=5.0), Snapshot(2, 20.0, "0", "Code")]
    assert segment(odd, [], Params()).segments[0].credits[0] == 0.0


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("afk", [True, False])
def test_credited_minutes_match_the_recorders_focused_not_afk_totals(seed, afk) -> None:
    day = generate(DAY, TZ, seed=seed, afk=afk)
    start, end = local_day_bounds(DAY, TZ)
    credited = _credited(activitywatch.read_export(day.export, start, end))
    total = sum(credited.values())
    assert abs(total / day.total_minutes - 1) <= TOLERANCE, (total, day.total_minutes)
    # Every app the recorder saw is credited within the same tolerance or a minute.
    for app, minutes in day.truth_minutes.items():
        assert abs(credited.get(app, 0.0) - minutes) <= max(1.0, TOLERANCE * minutes), app


def test_the_end_survives_the_event_records_that_import_and_sync_send() -> None:
    day = generate(DAY, TZ, seed=4)
    start, end = local_day_bounds(DAY, TZ)
    capture = activitywatch.read_export(day.export, start, end)
    records = [record for _, record in records_from_capture(capture, "aw")]
    assert all("end" in r["payload"] for r in records if r["kind"] == "snapshot")
    back = capture_from_records(records)
    assert [s.end for s in back.snapshots] == pytest.approx([s.end for s in capture.snapshots])
    assert _credited(back) == _credited(capture)


@pytest.mark.django_db
def test_the_cli_and_an_import_compiled_by_the_worker_give_the_same_frames_and_evidence_ids(
    team, tmp_path, django_capture_on_commit_callbacks
) -> None:
    export = tmp_path / "aw.json"
    export.write_text(json.dumps(generate(DAY, TZ, seed=5).export))
    cli = subprocess.run(
        [sys.executable, "-m", "compiler", "day", "--source", f"activitywatch:{export}",
         "--date", DAY.isoformat(), "--tz", TZ, "-f", "json"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    ours = json.loads(cli.stdout)
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "import_events", "activitywatch", str(export), "--team", "acme", "--entity", "aw",
            "--tz", TZ, stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    stored = DayDocument.objects.get(entity__key="aw", day=DAY, current=True).body
    # The same frames byte for byte, evidence ids included: a row cited by one is found in the
    # other (the service compiles an ActivityWatch row under its reader's id).
    assert to_json(stored["frames"]) == to_json(ours["frames"])
    assert to_json(stored["coverage"]) == to_json(ours["coverage"])
    cited = expand_runs(ours["frames"][0]["evidence"]["rows"])
    assert min(cited) >= activitywatch.ID_FLOOR
    found = evidence_events(entity=Entity.objects.get(key="aw"), ids=cited)
    assert [e.source_key for e in found] == [f"aw:s{row}" for row in cited]
    assert [e.row_id for e in found] == cited


def test_one_app_under_several_spellings_is_one_app_and_placeholders_are_disclosed() -> None:
    from compiler.segment import UNKNOWN_APP, normalise_app

    assert normalise_app("Code - Insiders") == normalise_app("Code-insiders") == "Code - Insiders"
    assert normalise_app("Microsoft\u200b Edge") == normalise_app("msedge.exe") == "Microsoft Edge"
    assert normalise_app("unknown") == normalise_app("  ") == UNKNOWN_APP
    # Names not in the table stay exactly as captured.
    assert normalise_app("Codex") == "Codex" and normalise_app("slack") == "slack"
    rows = [
        Snapshot(1, 0.0, "0", "unknown", "?", None, 120.0),
        Snapshot(2, 120.0, "0", "Code-insiders", "a\u200b.py", None, 180.0),
        Snapshot(3, 180.0, "0", "Code - Insiders", "a.py", None, 240.0),
    ]
    compiled = compile_day(Capture(snapshots=rows), date(1970, 1, 1), "UTC")
    apps = [a["app"] for a in ledger(compiled)]
    assert apps == ["Code - Insiders", UNKNOWN_APP]
    frames = compiled.document["frames"]
    assert [f["windows"] for f in frames if f["app"] == "Code - Insiders"] == [["a.py"]]
    disclosed = " ".join(compiled.document["source"]["disclosures"])
    # 90 s: the dwell cap holds for a row with a known end too.
    assert "1.5 min were captured in windows whose app the recorder could not name" in disclosed


def test_a_private_window_never_gets_another_tabs_url() -> None:
    day = generate(DAY, TZ, seed=2)
    start, end = local_day_bounds(DAY, TZ)
    rows = activitywatch.read_export(day.export, start, end).snapshots
    private = [r for r in rows if r.window and "Private Browsing" in r.window]
    normal = [r for r in rows if r.app == "Firefox" and r not in private]
    assert private and not any(r.url for r in private)
    assert sum(1 for r in normal if r.url) > 0.9 * len(normal)


def test_an_app_seen_only_as_an_interruption_is_not_shown_as_zero_sessions() -> None:
    from compiler.emit import context_block

    rows = [
        Snapshot(1, 0.0, "0", "Code", "a.py"),
        Snapshot(2, 60.0, "0", "Slack", "chat"),  # 10 s, folded into Code
        Snapshot(3, 70.0, "0", "Code", "a.py"),
        Snapshot(4, 130.0, "0", "Code", "a.py"),
    ]
    block = context_block(compile_day(Capture(snapshots=rows), date(1970, 1, 1), "UTC"))
    ledger_line = next(line for line in block.splitlines() if line.startswith("ledger:"))
    assert "Slack <1m (within other frames)" in ledger_line and "(0)" not in ledger_line


@pytest.mark.django_db
def test_a_stored_activitywatch_day_keeps_the_sources_disclosures(
    team, tmp_path, django_capture_on_commit_callbacks
) -> None:
    for afk in (True, False):
        export = tmp_path / f"aw-{afk}.json"
        export.write_text(json.dumps(generate(DAY, TZ, seed=6, afk=afk).export))
        with django_capture_on_commit_callbacks(execute=True):
            call_command(
                "import_events", "activitywatch", str(export), "--team", "acme",
                "--entity", f"aw-{afk}", "--tz", TZ, stdout=StringIO(), stderr=StringIO(),
            )  # fmt: skip
        body = DayDocument.objects.get(entity__key=f"aw-{afk}", day=DAY, current=True).body
        said = body["source"]["disclosures"]
        assert activitywatch.EMULATION in said
        assert any("time away from the computer is unknown" in s for s in said) is (not afk)
    # The day page says them too.
    from django.test import Client

    from aframes_web.teams.models import Role
    from aframes_web.teams.services import member_add, user_get_or_create

    user = user_get_or_create(username="aw-viewer", password="aw-viewer-pass-1")
    member_add(team=team, user=user, role=Role.VIEWER)
    client = Client()
    client.force_login(user)
    page = client.get(f"/t/acme/e/aw-False/d/{DAY.isoformat()}/").content.decode()
    assert "What the source could not tell" in page
    assert "emulated as snapshot rows every 30 s" in page


def test_a_busy_days_block_costs_no_more_than_its_forty_longest_frames() -> None:
    from compiler.emit import _frame_line, context_block
    from compiler.tokens import cl100k

    day = generate(DAY, TZ, seed=7)
    start, end = local_day_bounds(DAY, TZ)
    compiled = compile_day(activitywatch.read_export(day.export, start, end), DAY, TZ)
    block = context_block(compiled)
    frames = sorted(compiled.document["frames"], key=lambda f: -f["duration_min"])
    assert len(frames) > 40
    count = cl100k()
    head = block.splitlines()[:2]
    layout = sum(count(line + "\n") for line in head) + sum(
        count(_frame_line(f) + "\n") for f in frames[:40]
    )
    # 30: the omitted line, which the reference's layout has too; the block counts its
    # budget in approximate tokens, so cl100k may differ a little.
    assert count(block) <= (layout + 30) * 1.03
    # ...and still accounts for every app and every away span.
    ledger_line = next(line for line in block.splitlines() if line.startswith("ledger: "))
    assert all(app in ledger_line for app in day.truth_minutes)
    assert block.count("(afk)") == 1 and "12:30-13:15 (45m)" in block


@pytest.mark.django_db
def test_memory_reads_an_activitywatch_days_frames_and_cites_stored_events(
    team, tmp_path, django_capture_on_commit_callbacks
) -> None:
    from memory.models import Segment
    from memory.services.closing import memory_close_day

    export = tmp_path / "aw.json"
    export.write_text(json.dumps(generate(DAY, TZ, seed=6).export))
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "import_events", "activitywatch", str(export), "--team", "acme", "--entity", "aw",
            "--tz", TZ, stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    entity = Entity.objects.get(key="aw")
    document = DayDocument.objects.get(entity=entity, day=DAY, current=True).body
    assert memory_close_day(entity_id=entity.pk, day=DAY) is not None
    # The document cites rows by their reader's ids; memory's segments stand on each frame and
    # cite the stored events those rows are.
    frames = {f["id"] for f in document["frames"]}
    segments = list(Segment.objects.filter(trajectory__entity=entity, source__in=frames))
    assert {s.source for s in segments} == frames
    cited = {i for s in segments for i in s.cited_ids}
    stored = dict(Event.objects.filter(entity=entity, pk__in=cited).values_list("pk", "source_key"))
    assert set(stored) == cited
    assert all(key.startswith("aw:s") for key in stored.values())


def test_a_recorder_without_input_events_gives_unknown_counts_not_zeros(tmp_path) -> None:
    export = tmp_path / "aw.json"
    export.write_text(json.dumps(generate(DAY, TZ, seed=2).export))
    capture = activitywatch.read(export)
    assert capture.inputs_recorded is False
    document = compile_day(capture, DAY, TZ, Params()).document
    assert document["frames"]
    assert all(f["input"] is None and "inputs" not in f["evidence"] for f in document["frames"])
    assert "| — | — | — |" in to_markdown(document)
    # The same rows as stored events read back as a source without input events too.
    back = capture_from_records(r for _w, r in records_from_capture(capture, "aw"))
    assert back.inputs_recorded is False


@pytest.mark.django_db
def test_memory_close_after_a_command_line_import_does_what_no_worker_did(
    team, tmp_path, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    """The import queues its compiles and summaries for a worker, and none runs (the broker
    keeps the messages): the command builds the summaries and runs the pending compiles
    itself, then closes the complete day with its frames."""
    from aframes_web.pipeline.tasks import compile_day, refresh_entity_days
    from memory.models import Segment, Trajectory

    monkeypatch.setattr(compile_day, "apply_async", lambda *args, **kwargs: None)
    monkeypatch.setattr(refresh_entity_days, "delay", lambda *args, **kwargs: None)

    export = {"buckets": {}}
    for offset in range(2):
        day = generate(date(2026, 3, 2 + offset), TZ, seed=offset + 1).export
        for bucket_id, bucket in day["buckets"].items():
            export["buckets"].setdefault(bucket_id, {**bucket, "events": []})["events"].extend(
                bucket["events"]
            )
    path = tmp_path / "aw.json"
    path.write_text(json.dumps(export))
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "import_events", "activitywatch", str(path), "--team", "acme", "--entity", "aw",
            "--tz", TZ, stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    assert not DayDocument.objects.filter(entity__key="aw").exists()
    out = StringIO()
    call_command("memory_close", "--team", "acme", "--entity", "aw", stdout=out)
    assert "aw: compiled 2 pending day(s)" in out.getvalue()
    assert "aw: 1 day(s) to close" in out.getvalue()
    assert list(Trajectory.objects.filter(entity__key="aw").values_list("day", flat=True)) == [
        date(2026, 3, 2)
    ]
    assert DayDocument.objects.filter(entity__key="aw", current=True).count() == 2
    assert Segment.objects.filter(trajectory__entity__key="aw", source__startswith="f-").exists()
