"""A long import runs in turns: with other bulk work queued behind it, it hands the worker over
and goes on where it stopped, storing nothing twice and counting everything once."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from aframes_web.proactivestream.models import BenchmarkRun
from aframes_web.streams import importing, uploads
from aframes_web.streams.importers import SourceItem
from aframes_web.streams.importing import import_items
from aframes_web.streams.models import Event, ImportJob
from aframes_web.streams.services import entity_create
from aframes_web.streams.uploads import import_job_run, waiting_for_bulk
from tests.conftest import snapshot
from tests.lost_worker import run_until_killed

pytestmark = pytest.mark.django_db(transaction=True)

START = datetime(2026, 3, 2, 8, tzinfo=UTC)
LONG = 12_000  # lines: two full batches of importing.IMPORT_BATCH and a part of one


def _line(i: int) -> str:
    return json.dumps(snapshot((START + timedelta(seconds=i)).isoformat(), f"k{i}"))


def _job(team: Any, path: Path, lines: list[str], *, waited_s: float = 0.0) -> ImportJob:
    """A job for the file uploaded as ``path.name``, stored under another name (as uploads are)."""
    name, path = path.name, path.with_name(f"0f3a-{path.name}")
    path.write_text("\n".join(lines) + "\n")
    job = ImportJob.objects.create(
        team=team,
        format="jsonl",
        entity_key="laptop",
        scope="desktop",
        timezone="UTC",
        original_name=name,
        stored_path=str(path),
        size_bytes=path.stat().st_size,
    )
    if waited_s:
        ImportJob.objects.filter(pk=job.pk).update(
            created_at=timezone.now() - timedelta(seconds=waited_s)
        )
    return job


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The jobs queued again, recorded instead of run inline (tests run tasks eagerly)."""
    calls: list[int] = []
    monkeypatch.setattr(uploads, "job_queued", calls.append)
    return calls


@pytest.fixture
def every_batch(settings: Any) -> None:
    """A turn may end after any stored batch (the default turn is 20 s)."""
    settings.AFRAMES_IMPORT_TURN_S = 0


def test_a_long_import_hands_over_to_an_upload_queued_behind_it_and_goes_on(
    team, owner, tmp_path, queued, every_batch
) -> None:
    lines = [_line(i) for i in range(LONG)]
    lines[10] = "{not json"  # rejected in the first turn
    lines[11_000] = "{nor this"  # and in the second
    big = _job(team, tmp_path / "year.jsonl", lines)
    small = _job(team, tmp_path / "day.jsonl", [_line(LONG + 1)], waited_s=60)

    import_job_run(job_id=big.pk)
    big.refresh_from_db()
    assert queued == [big.pk]
    batch = importing.IMPORT_BATCH
    assert (big.status, big.read, big.imported, big.rejected) == ("queued", batch + 1, batch, 1)
    assert big.attempts == 0  # a turn that handed over is no lost worker
    assert big.summary["turns"] == 1 and big.summary["waiting"] == 1
    assert Event.objects.count() == batch
    # The page says why it waits and that nothing is lost.
    client = Client()
    client.force_login(owner)
    page = client.get(f"/t/acme/import/{big.pk}/").content.decode()
    assert "Waiting for its next turn" in page
    assert "1 import or benchmark run queued behind it" in page
    assert f"The {batch:,} events it stored are kept" in page
    assert "year.jsonl:11: not valid JSON" in page  # what the first turn skipped, shown now
    assert "0f3a-" not in page + json.dumps(big.summary)  # never where the upload lies
    listed = client.get("/t/acme/import/").text  # the team's imports say it too
    assert f"Waiting for its next turn ({big.percent} %)" in listed

    import_job_run(job_id=small.pk)  # the upload behind it runs first
    small.refresh_from_db()
    assert (small.status, small.imported) == ("done", 1)

    import_job_run(job_id=big.pk)  # nothing waits now: it runs to its end
    big.refresh_from_db()
    assert queued == [big.pk]
    assert (big.status, big.read, big.imported, big.duplicates, big.rejected) == (
        "done",
        LONG,
        LONG - 2,
        0,
        2,
    )
    assert Event.objects.count() == LONG - 2 + 1
    assert big.summary["rejected"] == {"unreadable": 2}
    assert len(big.summary["problems"]) == 2
    assert "imported in 2 turns, handing the worker over 1 time" in big.report
    assert big.summary["turns"] == 2
    assert "Waiting for its next turn" not in client.get(f"/t/acme/import/{big.pk}/").text
    assert not Path(big.stored_path).exists()


def test_an_import_with_nothing_queued_behind_it_runs_in_one_turn(
    team, tmp_path, queued, every_batch
) -> None:
    big = _job(team, tmp_path / "year.jsonl", [_line(i) for i in range(LONG)])
    import_job_run(job_id=big.pk)
    big.refresh_from_db()
    assert queued == [] and (big.status, big.imported) == ("done", LONG)
    assert "turns" not in big.report


def test_a_turn_lasts_its_time_before_handing_over(team, tmp_path, queued, settings) -> None:
    settings.AFRAMES_IMPORT_TURN_S = 3600
    big = _job(team, tmp_path / "year.jsonl", [_line(i) for i in range(LONG)])
    _job(team, tmp_path / "day.jsonl", [_line(LONG + 1)], waited_s=60)
    import_job_run(job_id=big.pk)
    big.refresh_from_db()
    assert queued == [] and (big.status, big.imported) == ("done", LONG)


def test_a_turn_re_reading_slowly_lasts_three_times_its_re_read(
    team, tmp_path, queued, every_batch, monkeypatch
) -> None:
    big = _job(team, tmp_path / "year.jsonl", [_line(i) for i in range(LONG)])
    _job(team, tmp_path / "day.jsonl", [_line(LONG + 1)], waited_s=60)
    import_job_run(job_id=big.pk)  # the first turn: one batch
    assert queued == [big.pk]
    # The second turn's re-read is said to take an hour: a turn now lasts three, so it does not
    # hand over again although work still waits.
    clock = iter([0.0, 3600.0])
    monkeypatch.setattr(importing, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    import_job_run(job_id=big.pk)
    big.refresh_from_db()
    assert queued == [big.pk] and (big.status, big.imported) == ("done", LONG)
    assert "took 3600 s" in big.report


def test_only_work_queued_for_a_while_counts_as_waiting(team, tmp_path) -> None:
    job = _job(team, tmp_path / "year.jsonl", [_line(0)])
    assert waiting_for_bulk(job_id=job.pk) == 0  # itself never counts
    _job(team, tmp_path / "new.jsonl", [_line(1)])  # a free worker would take it in a moment
    BenchmarkRun.objects.create(team=team, config={})
    assert waiting_for_bulk(job_id=job.pk) == 0
    _job(team, tmp_path / "old.jsonl", [_line(2)], waited_s=60)
    run = BenchmarkRun.objects.create(team=team, config={})
    BenchmarkRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=1))
    assert waiting_for_bulk(job_id=job.pk) == 2
    BenchmarkRun.objects.filter(pk=run.pk).update(status="running")
    assert waiting_for_bulk(job_id=job.pk) == 1


def test_a_worker_lost_in_a_later_turn_resumes_counting_every_event_once(
    team, tmp_path, queued, every_batch, monkeypatch
) -> None:
    from aframes_web.reconcile.services import reconcile

    big = _job(team, tmp_path / "year.jsonl", [_line(i) for i in range(LONG)])
    waiting = _job(team, tmp_path / "day.jsonl", [_line(LONG + 1)], waited_s=60)
    import_job_run(job_id=big.pk)  # turn one: a batch, then handed over
    ImportJob.objects.filter(pk=waiting.pk).delete()  # the one behind it has gone
    run_until_killed(monkeypatch, big.pk)  # turn two stores a batch, then its worker dies
    big.refresh_from_db()
    batch = importing.IMPORT_BATCH
    assert (big.status, big.imported, big.attempts) == ("running", 2 * batch, 1)
    ImportJob.objects.filter(pk=big.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert "queued to resume" in reconcile().drifts[0].line()
    assert queued == [big.pk, big.pk]
    import_job_run(job_id=big.pk)
    big.refresh_from_db()
    assert (big.status, big.imported, big.duplicates, big.read) == ("done", LONG, 0, LONG)
    assert Event.objects.count() == LONG
    assert "resumed after a lost worker (attempt 2)" in big.report
    assert "imported in 2 turns" in big.report


def test_a_multi_entity_turn_stores_every_item_it_read_before_handing_over(team) -> None:
    """Items waiting for other entities' batches are stored before the turn ends, so the next
    turn may begin after every item read."""
    entities = {
        key: entity_create(team=team, key=f"home:{key}", scope="desktop", timezone_name="UTC")
        for key in ("a", "b")
    }
    items = [
        SourceItem(
            f"f:{i}",
            item=snapshot((START + timedelta(seconds=i)).isoformat(), f"k{i}"),
            entity="a" if i % 3 else "b",
        )
        for i in range(30)
    ]
    first = import_items(
        items=items,
        route=lambda item: entities[item.entity],
        batch_size=4,
        pause=lambda summary: True,
    )
    assert first.paused and first.read < len(items)
    assert Event.objects.count() == first.imported == first.read
    rest = import_items(
        items=items,
        route=lambda item: entities[item.entity],
        batch_size=4,
        skip=first.read,
    )
    assert not rest.paused and rest.read == len(items)
    assert (rest.imported, rest.duplicates) == (len(items) - first.read, 0)
    assert Event.objects.count() == len(items)
