"""Real workers, real brokers: the dispatched task runs and its effect lands in the database."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from celery.contrib.testing.worker import start_worker
from django.conf import settings

import aframes_web.pipeline.tasks  # noqa: F401  (registers the shared task)
from aframes_web.celery import app as main_app
from aframes_web.pipeline.tasks import group_days
from aframes_web.streams.models import EntityDay
from aframes_web.streams.services import events_store, validate_events
from tests.conftest import snapshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]
URL = "/api/v1/entities/alice-laptop/events"


def _wait_for_days(entity: Any, expected: int, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        count = EntityDay.objects.filter(entity=entity).count()
        if count >= expected:
            return count
        time.sleep(0.2)
    return EntityDay.objects.filter(entity=entity).count()


def test_delivery_settings_are_reliable() -> None:
    conf = main_app.conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert 0 < conf.task_soft_time_limit < conf.task_time_limit


def test_real_worker_on_redis_runs_dispatched_work(owner_api, desktop, redis_worker) -> None:
    with start_worker(main_app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        answer = owner_api.post(
            URL, [snapshot("2026-03-02T08:00:00Z", "a"), snapshot("2026-03-03T08:00:00Z", "b")]
        )
        assert answer.status_code == 201
        assert _wait_for_days(desktop, 2) == 2


def test_real_worker_on_the_embedded_filesystem_broker(desktop, tmp_path: Path) -> None:
    folders = {name: tmp_path / name for name in ("queue", "processed", "control")}
    for folder in folders.values():
        folder.mkdir()
    embedded = Celery("aframes_embedded_test", set_as_current=False)
    embedded.conf.update(
        broker_url="filesystem://localhost/",
        broker_transport_options={
            "data_folder_in": str(folders["queue"]),
            "data_folder_out": str(folders["queue"]),
            "processed_folder": str(folders["processed"]),
            "control_folder": str(folders["control"]),
        },
        task_acks_late=True,
        worker_prefetch_multiplier=1,
        task_always_eager=False,
    )
    # shared_task binds to every app when it is finalised, so the embedded app runs ours.
    assert "streams.refresh_entity_days" in embedded.tasks
    with start_worker(embedded, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        batch = validate_events(entity=desktop, items=[snapshot("2026-03-02T08:00:00Z", "a")])

        def send(pairs: set) -> None:
            for entity_id, days in group_days(pairs).items():
                embedded.send_task("streams.refresh_entity_days", args=[entity_id, days])

        events_store(entity=desktop, batch=batch, on_days=send)
        assert _wait_for_days(desktop, 1) == 1


def test_a_real_worker_test_holds_the_queue_alone(redis_worker) -> None:
    """Parallel test processes share REDIS_URL's one queue: a test with a real worker holds
    the cross-process lock, so no other process's worker takes its tasks, and starts empty."""
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        assert client.lock("aframes-tests:real-worker").locked()
        assert client.llen("celery") == 0
        other = client.lock("aframes-tests:real-worker", blocking_timeout=0.2)
        assert not other.acquire()
    finally:
        client.close()
