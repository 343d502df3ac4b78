"""Compiles on a real Celery worker process (PostgreSQL + Redis), including a kill mid-compile."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from aframes_web.activity.models import CompileRequest, DayDocument, Frame
from aframes_web.activity.services import day_compile_read
from benchmark.synthetic.desktop import generate_day
from tests.conftest import need_service

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]

URL = "/api/v1/entities/alice-laptop/events"
DAY = date(2026, 3, 3)
ROOT = Path(__file__).resolve().parent.parent


def _conninfo() -> str:
    db = connection.settings_dict
    return (
        f"postgresql://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    )


def _wait(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _wait_blocked_on_frames() -> None:
    """Until a compile waits on the frames table (held by the test)."""
    with psycopg.connect(_conninfo(), autocommit=True) as watch:
        _wait(
            lambda: watch.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE 'INSERT INTO \"activity_frame\"%%'"
            ).fetchone()[0],
            60,
            "the compile to block on its frames",
        )


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def _start_worker(log_path: Path) -> subprocess.Popen[bytes]:
    """A prefork worker process with one child, on the test database and Redis."""
    env = {
        **os.environ,
        "DATABASE_URL": _conninfo(),
        "REDIS_URL": settings.REDIS_URL,
        "SECRET_KEY": "worker-test",
        "DJANGO_SETTINGS_MODULE": "aframes_web.settings",
    }
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "aframes_web", "worker", "--pool=prefork"]
            + ["--concurrency=1", "--without-gossip", "--without-mingle", "--loglevel=INFO"]
            + ["--hostname=compile-test@%h"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    _wait(lambda: log_path.read_text().count("ready.") > 0, 60, "the worker")
    return process


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def worker(redis_worker: Any, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A prefork worker process with one child, on the test database and Redis."""
    need_service("PostgreSQL (DATABASE_URL)", connection.vendor == "postgresql")
    process = _start_worker(tmp_path / "worker.log")
    try:
        yield process
    finally:
        _stop(process)


def test_a_real_worker_compiles_what_ingestion_queues(worker, owner_api, desktop) -> None:
    records = generate_day(DAY, seed=2)
    for start in range(0, len(records), 1000):
        answer = owner_api.post(URL, records[start : start + 1000])
        assert answer.status_code == 201, answer.content
    document = _wait(
        lambda: DayDocument.objects.filter(
            entity=desktop, day=DAY, current=True, event_count=len(records)
        ).first(),
        60,
        "the day's document",
    )
    assert document.sha256 == day_compile_read(entity=desktop, day=DAY).sha256
    request = _wait(
        lambda: (
            CompileRequest.objects.filter(entity=desktop, day=DAY, queued=False)
            .exclude(compiled__lt=1)
            .first()
        ),
        30,
        "the compile request to settle",
    )
    # Batches coalesced: never more compiles than batches, usually fewer.
    assert 1 <= request.compiles <= request.requested


def test_killing_a_worker_mid_compile_loses_nothing(worker, owner_api, desktop, tmp_path) -> None:
    records = generate_day(DAY, seed=4)
    with psycopg.connect(_conninfo()) as blocker:
        # Hold the frames table so the compile stops half-way: its new DayDocument row is
        # written, its frames are not, and its transaction is open when the worker dies.
        blocker.execute("LOCK TABLE activity_frame IN SHARE MODE")
        answer = owner_api.post(URL, records)
        assert answer.status_code == 201, answer.content
        _wait_blocked_on_frames()
        children = _children(worker.pid)
        assert children, "the prefork worker has no child process"
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        _wait(
            lambda: "WorkerLostError" in (tmp_path / "worker.log").read_text(),
            30,
            "the worker to notice its lost child",
        )
        blocker.rollback()  # release the table; the killed compile's transaction rolls back
    document = _wait(
        lambda: DayDocument.objects.filter(entity=desktop, day=DAY, current=True).first(),
        60,
        "the compile to be redone",
    )
    # Exactly what an uninterrupted compile stores, once: one version, all its frames.
    assert DayDocument.objects.filter(entity=desktop, day=DAY).count() == 1
    fresh = day_compile_read(entity=desktop, day=DAY)
    assert fresh.compiled is not None
    assert document.version == 1 and document.sha256 == fresh.sha256
    assert document.event_count == len(records)
    assert Frame.objects.filter(document=document).count() == len(fresh.compiled.document["frames"])
    assert sorted(Frame.objects.filter(document=document).values_list("frame_id", flat=True)) == (
        sorted(f["id"] for f in fresh.compiled.document["frames"])
    )


def test_a_worker_lost_as_a_whole_mid_compile_is_healed_by_reconciliation(
    worker, owner_api, desktop, tmp_path, monkeypatch
) -> None:
    """Parent and child killed (a lost machine): the message waits in Redis for the
    visibility timeout, and the claim row says "claimed"; reconciliation sees that nobody holds
    the compile lock and queues the day again for the restarted worker."""
    from aframes_web.reconcile import services as reconcile_services
    from aframes_web.reconcile.services import reconcile

    records = generate_day(DAY, seed=5)
    with psycopg.connect(_conninfo()) as blocker:
        blocker.execute("LOCK TABLE activity_frame IN SHARE MODE")
        assert owner_api.post(URL, records).status_code == 201
        _wait_blocked_on_frames()
        for pid in [*_children(worker.pid), worker.pid]:
            os.kill(pid, signal.SIGKILL)
        worker.wait()
        blocker.rollback()
    assert not DayDocument.objects.filter(entity=desktop, day=DAY).exists()
    restarted = _start_worker(tmp_path / "restarted.log")
    try:
        monkeypatch.setattr(reconcile_services, "GRACE", timedelta(0))  # the kill was just now
        report = reconcile()
        # The summary task it had taken may be lost with it too (and is recounted here).
        assert ("compile_missing", DAY) in [(d.kind, d.day) for d in report.drifts]
        document = _wait(
            lambda: DayDocument.objects.filter(entity=desktop, day=DAY, current=True).first(),
            60,
            "the restarted worker to compile the day",
        )
        assert document.sha256 == day_compile_read(entity=desktop, day=DAY).sha256
        assert _wait(lambda: reconcile(repair=False).drifts == [], 30, "nothing left to heal")
    finally:
        _stop(restarted)
