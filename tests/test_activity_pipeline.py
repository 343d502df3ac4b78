"""Incremental compilation: ingestion compiles days, versions, frames, coalescing, day cuts."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from io import StringIO
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from django.utils import timezone

from aframes_web.activity.models import CompileRequest, DayDocument, Frame
from aframes_web.activity.services import (
    REQUEUE_AFTER,
    compile_claim,
    compile_requests_add,
    compiles_stuck,
    day_compile,
    day_compile_queued,
    day_compile_read,
    document_tokens,
    entity_event_days,
    frame_verify,
    window_compile_read,
)
from aframes_web.streams.models import Event
from aframes_web.streams.services import entity_create
from benchmark.synthetic.desktop import generate_day
from compiler.document import canonical_sha256, expand_runs
from tests.conftest import snapshot, store_snapshot_by_hand

pytestmark = pytest.mark.django_db

DAY = date(2026, 3, 3)  # a Tuesday


def test_ingestion_compiles_the_day_and_materialises_its_frames(load, desktop) -> None:
    load(desktop, generate_day(DAY, seed=3, tz="Europe/Berlin"))
    document = DayDocument.objects.get(entity=desktop, day=DAY)
    assert document.current and document.version == 1
    assert document.sha256 == canonical_sha256(document.body)
    assert document.body["window"]["day"] == DAY.isoformat()
    assert document.watermark == Event.objects.filter(entity=desktop).latest("id").id
    assert document.context.startswith(f"Activity {DAY.isoformat()} (Europe/Berlin)")
    assert document.document_tokens is None  # counted when first asked for, then kept
    assert 0 < document.context_tokens < document_tokens(document)
    assert DayDocument.objects.get(pk=document.pk).document_tokens == document.document_tokens
    frames = list(Frame.objects.filter(document=document))
    assert len(frames) == document.frame_count == len(document.body["frames"]) > 10
    # Evidence is the exact event ids of this entity's snapshots, each in exactly one frame.
    seen: list[int] = []
    for frame in frames:
        seen += expand_runs(frame.evidence_rows)
        for body in document.body["frames"]:
            if body["id"] == frame.frame_id:
                assert frame.app == body["app"] and frame.monitor == body["monitor"]
    assert len(seen) == len(set(seen))
    kinds = set(Event.objects.filter(pk__in=seen).values_list("kind", "entity_id"))
    assert kinds == {("snapshot", desktop.pk)}


def test_recompiling_unchanged_events_stores_no_new_version(load, desktop) -> None:
    load(desktop, generate_day(DAY, seed=3))
    first = DayDocument.objects.get(entity=desktop, day=DAY)
    again = day_compile(entity_id=desktop.pk, day=DAY)
    assert again is not None and again.pk == first.pk
    assert DayDocument.objects.filter(entity=desktop, day=DAY).count() == 1


def test_a_late_event_recompiles_its_own_day_only(load, desktop) -> None:
    load(desktop, generate_day(DAY, seed=3) + generate_day(DAY + timedelta(days=1), seed=3))
    later = DayDocument.objects.get(entity=desktop, day=DAY + timedelta(days=1))
    load(desktop, [snapshot("2026-03-03T19:30:00+01:00", "late-1", app="Late App")])
    versions = DayDocument.objects.filter(entity=desktop, day=DAY).order_by("version")
    assert [(d.version, d.current) for d in versions] == [(1, False), (2, True)]
    assert versions[1].event_count == versions[0].event_count + 1
    assert versions[1].sha256 != versions[0].sha256
    # The old version's frames are gone; the new ones are there.
    assert not Frame.objects.filter(document=versions[0]).exists()
    assert Frame.objects.filter(document=versions[1]).count() == versions[1].frame_count
    assert DayDocument.objects.get(entity=desktop, day=later.day).pk == later.pk


def test_frames_are_cut_at_local_midnight(load, desktop) -> None:
    rows = [
        snapshot(f"2026-03-02T23:{m:02d}:00+01:00", f"a{m}", app="Editor") for m in (50, 53, 56)
    ] + [snapshot(f"2026-03-03T00:0{m}:00+01:00", f"b{m}", app="Editor") for m in (0, 3, 6)]
    load(desktop, rows)
    monday = DayDocument.objects.get(entity=desktop, day=date(2026, 3, 2))
    tuesday = DayDocument.objects.get(entity=desktop, day=DAY)
    assert [f["start"][11:16] for f in monday.body["frames"]] == ["23:50"]
    assert [f["start"][11:16] for f in tuesday.body["frames"]] == ["00:00"]
    assert monday.event_count == tuesday.event_count == 3
    assert entity_event_days(entity=desktop) == [date(2026, 3, 2), DAY]


def test_non_desktop_entities_compile_nothing(load, team) -> None:
    home = entity_create(team=team, key="flat", scope="home", timezone_name="UTC")
    item = {
        "occurred_at": "2026-03-03T08:00:00Z",
        "kind": "observation",
        "payload": {"sensor": "M001", "value": "ON"},
    }
    load(home, [item])
    assert not DayDocument.objects.filter(entity=home).exists()
    assert compile_requests_add(pairs=[(home.pk, DAY)]) == []


def test_a_burst_of_batches_for_one_day_queues_one_compile(desktop, settings) -> None:
    pair = (desktop.pk, DAY)
    queued = [compile_requests_add(pairs=[pair]) for _ in range(40)]
    assert queued[0] == [(*pair, 0.0)] and all(not q for q in queued[1:])
    request = CompileRequest.objects.get(entity=desktop, day=DAY)
    assert request.requested == 40 and request.queued and request.pending
    # Once a compile claims the day, the next batch queues the next compile.
    assert compile_claim(entity_id=desktop.pk, day=DAY) == 40
    settings.AFRAMES_COMPILE_INTERVAL_MS = 0
    assert compile_requests_add(pairs=[pair]) == [(*pair, 0.0)]
    assert compile_requests_add(pairs=[pair]) == []


def test_a_day_compiled_moments_ago_waits_out_the_interval(desktop, settings) -> None:
    settings.AFRAMES_COMPILE_INTERVAL_MS = 1000
    pair = (desktop.pk, DAY)
    # A compile started 300 ms ago (and may still be running): the next waits out the rest.
    CompileRequest.objects.create(
        entity=desktop, day=DAY, started_at=timezone.now() - timedelta(milliseconds=300)
    )
    ((_, _, countdown),) = compile_requests_add(pairs=[pair])
    assert 0.6 <= countdown <= 0.7
    # Long after the last compile started, or with the interval off, a batch compiles at once.
    CompileRequest.objects.update(queued=False, started_at=timezone.now() - timedelta(minutes=1))
    assert compile_requests_add(pairs=[pair]) == [(*pair, 0.0)]
    settings.AFRAMES_COMPILE_INTERVAL_MS = 0
    CompileRequest.objects.update(queued=False, started_at=timezone.now())
    assert compile_requests_add(pairs=[pair]) == [(*pair, 0.0)]


def test_a_queued_compile_that_never_started_is_queued_again(desktop) -> None:
    pair = (desktop.pk, DAY)
    assert compile_requests_add(pairs=[pair]) == [(*pair, 0.0)]
    CompileRequest.objects.update(queued_at=timezone.now() - REQUEUE_AFTER - timedelta(seconds=1))
    assert compile_requests_add(pairs=[pair]) == [(*pair, 0.0)]


def test_the_queued_compile_marks_its_requests_done(load, desktop) -> None:
    load(desktop, [snapshot("2026-03-03T09:00:00+01:00", "x1")])
    request = CompileRequest.objects.get(entity=desktop, day=DAY)
    assert not request.pending and not request.queued and request.compiles == 1
    assert request.compiled_at is not None and request.last_error == ""
    # A success clears an earlier failure, so the sweep does not hold the day back for it.
    CompileRequest.objects.update(last_error="x", last_error_at=timezone.now())
    load(desktop, [snapshot("2026-03-03T09:05:00+01:00", "x2")])
    request.refresh_from_db()
    assert (request.last_error, request.last_error_at) == ("", None)


def test_a_failing_compile_records_its_error_and_raises(desktop, monkeypatch) -> None:
    Event.objects.create(
        entity=desktop,
        occurred_at=timezone.now(),
        kind="snapshot",
        source_key="raw-1",
        monitor="0",
        payload={"app": ""},  # stored by hand, bypassing validation: the compile rejects it
        received_at=timezone.now(),
    )
    day = timezone.now().astimezone(ZoneInfo(desktop.timezone)).date()
    compile_requests_add(pairs=[(desktop.pk, day)])
    with pytest.raises(Exception, match="payload.app"):
        day_compile_queued(entity_id=desktop.pk, day=day)
    request = CompileRequest.objects.get(entity=desktop, day=day)
    assert "payload.app" in request.last_error and request.pending
    assert not DayDocument.objects.filter(entity=desktop).exists()


def test_reading_a_day_writes_nothing(load, desktop) -> None:
    load(desktop, generate_day(DAY, seed=3))
    DayDocument.objects.all().delete()
    result = day_compile_read(entity=desktop, day=DAY)
    assert result.compiled is not None and result.event_count > 0
    assert not DayDocument.objects.exists()
    assert day_compile_read(entity=desktop, day=DAY - timedelta(days=30)).compiled is None


def test_every_frame_verifies_from_exactly_its_evidence(load, desktop) -> None:
    load(desktop, generate_day(DAY, seed=5))
    document = DayDocument.objects.get(entity=desktop, day=DAY)
    frames = list(Frame.objects.filter(document=document).select_related("document"))
    assert len(frames) > 10
    for frame in frames:
        check = frame_verify(entity=desktop, frame=frame)
        assert check.match, (frame.frame_id, check.differences)
        evidence = set(expand_runs(frame.evidence_rows))
        assert evidence <= set(check.row_ids)
        # Besides evidence, at most the closing row and the frame's inputs, trees and absences.
        others = set(check.row_ids) - evidence - set(expand_runs(frame.evidence_inputs))
        kinds = set(Event.objects.filter(pk__in=others).values_list("kind", flat=True))
        assert kinds <= {
            "snapshot",
            "elements",
            "absence",
        }
        snapshots = others & set(
            Event.objects.filter(pk__in=others, kind="snapshot").values_list("pk", flat=True)
        )
        interruption_rows = {
            i for item in check.stored["interruptions"] for i in expand_runs(item["evidence"])
        }
        assert snapshots - interruption_rows <= {check.closing_id}


def test_verify_names_what_differs_from_the_stored_frame(load, desktop) -> None:
    load(desktop, generate_day(DAY, seed=5))
    document = DayDocument.objects.get(entity=desktop, day=DAY)
    body = document.body
    body["frames"][0]["app"] = "Tampered"
    DayDocument.objects.filter(pk=document.pk).update(body=body)
    frame = Frame.objects.select_related("document").get(
        document=document, frame_id=body["frames"][0]["id"]
    )
    check = frame_verify(entity=desktop, frame=frame)
    assert not check.match
    assert check.differences == [("app", "Tampered", frame.app)]


def test_a_window_across_midnight_compiles_on_the_fly(load, desktop) -> None:
    load(desktop, generate_day(DAY, seed=5) + generate_day(DAY + timedelta(days=1), seed=5))
    first = DayDocument.objects.get(entity=desktop, day=DAY)
    start = datetime.fromisoformat(first.body["coverage"]["last_activity"]) - timedelta(hours=1)
    result = window_compile_read(entity=desktop, start=start, end=start + timedelta(hours=24))
    assert result.compiled is not None and result.event_count > 0
    window = result.compiled.document["window"]
    assert window["day"] is None and window["start"] == start.astimezone(
        ZoneInfo("Europe/Berlin")
    ).isoformat(timespec="seconds")
    days = {f["start"][:10] for f in result.compiled.document["frames"]}
    assert days == {DAY.isoformat(), (DAY + timedelta(days=1)).isoformat()}


def test_an_event_committed_after_a_compile_read_past_its_id_is_not_missed(load, desktop) -> None:
    load(desktop, generate_day(DAY, seed=5))
    top = Event.objects.latest("id").id

    store_snapshot_by_hand(desktop, top + 1000, "2026-03-03T21:10:00+01:00")
    day_compile(entity_id=desktop.pk, day=DAY)  # this process now holds the day up to top+1000
    # A lower id that committed later, as concurrent ingestion can:
    store_snapshot_by_hand(desktop, top + 500, "2026-03-03T21:11:00+01:00")
    document = day_compile(entity_id=desktop.pk, day=DAY)
    assert document is not None
    assert document.event_count == Event.objects.filter(entity=desktop).count()
    assert document.sha256 == day_compile_read(entity=desktop, day=DAY).sha256


def test_a_new_version_moves_unchanged_frames_and_rewrites_the_rest(load, desktop) -> None:
    records = generate_day(DAY, seed=5)
    load(desktop, records[: len(records) // 2])
    first = DayDocument.objects.get(entity=desktop, day=DAY)
    rows_before = {f.frame_id: f.pk for f in Frame.objects.filter(document=first)}
    load(desktop, records[len(records) // 2 :])
    second = DayDocument.objects.get(entity=desktop, day=DAY, current=True)
    assert second.version == 2 and not Frame.objects.filter(document=first).exists()
    frames = list(Frame.objects.filter(document=second).order_by("position"))
    # Exactly the document's frames, in its order, each with its own fields...
    assert [f.frame_id for f in frames] == [item["id"] for item in second.body["frames"]]
    for frame, item in zip(frames, second.body["frames"], strict=True):
        assert (frame.app, frame.monitor, frame.evidence_rows) == (
            item["app"],
            item["monitor"],
            item["evidence"]["rows"],
        )
    # ...and the frames of the morning, unchanged, are the same rows as before.
    kept = [f for f in frames if rows_before.get(f.frame_id) == f.pk]
    assert len(kept) > len(frames) // 4


def test_an_absence_across_midnight_is_away_time_on_both_days(load, desktop) -> None:
    rows = [snapshot(f"2026-03-02T23:{m:02d}:00+01:00", f"a{m}", app="Editor") for m in (0, 5, 10)]
    rows.append(
        {
            "occurred_at": "2026-03-02T23:30:00+01:00",
            "kind": "absence",
            "source_key": "afk-1",
            "payload": {"end": "2026-03-03T00:20:00+01:00", "reason": "afk"},
        }
    )
    rows += [snapshot(f"2026-03-03T00:{m:02d}:00+01:00", f"b{m}", app="Mail") for m in (25, 28, 31)]
    load(desktop, rows[:4])  # the evening and its absence first, as a sync agent would send
    tuesday = DayDocument.objects.filter(entity=desktop, day=DAY).first()
    assert tuesday is None  # no events of Tuesday yet: nothing to compile
    load(desktop, rows[4:])
    tuesday = DayDocument.objects.get(entity=desktop, day=DAY, current=True)
    (away,) = tuesday.body["coverage"]["away"]
    assert (away["start"][11:16], away["end"][11:16], away["reason"]) == ("00:00", "00:20", "afk")
    monday = DayDocument.objects.get(entity=desktop, day=date(2026, 3, 2), current=True)
    assert [a["end"][11:16] for a in monday.body["coverage"]["away"]] == ["00:00"]
    for frame in Frame.objects.filter(document=tuesday).select_related("document"):
        assert frame_verify(entity=desktop, frame=frame).match
    assert tuesday.sha256 == day_compile_read(entity=desktop, day=DAY).sha256


def test_an_absence_stored_after_the_next_day_recompiles_that_day(load, desktop) -> None:
    load(desktop, [snapshot(f"2026-03-03T00:{m:02d}:00+01:00", f"b{m}") for m in (5, 8, 11)])
    before = DayDocument.objects.get(entity=desktop, day=DAY, current=True)
    assert before.body["coverage"]["away"] == []
    absence = {
        "occurred_at": "2026-03-02T23:50:00+01:00",
        "kind": "absence",
        "source_key": "afk-late",
        "payload": {"end": "2026-03-03T00:04:00+01:00", "reason": "afk"},
    }
    load(desktop, [absence, snapshot("2026-03-02T23:40:00+01:00", "m1")])
    after = DayDocument.objects.get(entity=desktop, day=DAY, current=True)
    assert after.version == 2 and len(after.body["coverage"]["away"]) == 1


def test_a_refused_message_leaves_the_day_pending_for_the_sweep(desktop, monkeypatch) -> None:
    from kombu.exceptions import OperationalError as BrokerDown

    from aframes_web.pipeline import tasks
    from aframes_web.pipeline.tasks import dispatch_compiles

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise BrokerDown("connection refused")

    pair = (desktop.pk, DAY)
    monkeypatch.setattr(tasks.compile_day, "apply_async", refuse)
    dispatch_compiles([pair])  # logs, does not raise: the events are stored either way
    request = CompileRequest.objects.get(entity=desktop, day=DAY)
    assert request.pending and not request.queued
    assert compiles_stuck() == [pair]
    monkeypatch.undo()
    out = StringIO()
    call_command("compile_pending", stdout=out)
    assert "queued 1 compile(s)." in out.getvalue() and "alice-laptop 2026-03-03" in out.getvalue()
    assert compiles_stuck() == []


def test_the_sweep_skips_days_compiling_now_and_days_that_failed_recently(desktop) -> None:
    now = timezone.now()
    CompileRequest.objects.create(entity=desktop, day=DAY, requested=2, queued=True, queued_at=now)
    CompileRequest.objects.create(
        entity=desktop, day=DAY + timedelta(days=1), requested=1, last_error="x", last_error_at=now
    )
    lost = DAY + timedelta(days=2)
    CompileRequest.objects.create(
        entity=desktop, day=lost, requested=1, queued=True, queued_at=now - REQUEUE_AFTER * 2
    )
    CompileRequest.objects.create(
        entity=desktop, day=DAY + timedelta(days=3), requested=1, compiled=1
    )
    assert compiles_stuck() == [(desktop.pk, lost)]
    out = StringIO()
    call_command("compile_pending", "--dry-run", stdout=out)
    assert "would queue 1 compile(s)." in out.getvalue()


def test_an_absence_claiming_a_century_queues_no_more_than_the_days_it_can_reach(
    load, desktop
) -> None:
    from aframes_web.activity.models import CompileRequest

    load(desktop, [snapshot(f"2026-03-03T09:{m:02d}:00+01:00", f"t{m}") for m in (0, 5)])
    load(desktop, [snapshot(f"2026-03-05T09:{m:02d}:00+01:00", f"h{m}") for m in (0, 5)])
    absence = {
        "occurred_at": "2026-03-02T23:50:00+01:00",
        "kind": "absence",
        "source_key": "afk-century",
        "payload": {"end": "2126-03-02T23:50:00+01:00", "reason": "afk"},
    }
    load(desktop, [absence])
    # Monday (its own day) and Tuesday (the next day, which reads it) compile; Thursday is
    # beyond the day's look-back and Wednesday has no events: nothing else is queued.
    days = set(CompileRequest.objects.filter(entity=desktop).values_list("day", flat=True))
    assert days == {date(2026, 3, 2), date(2026, 3, 3), date(2026, 3, 5)}
    tuesday = DayDocument.objects.get(entity=desktop, day=DAY, current=True)
    assert [a["reason"] for a in tuesday.body["coverage"]["away"]] == ["afk"]
