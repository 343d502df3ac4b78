"""Background compiles. Tasks take ids, call one service, and are idempotent."""

from __future__ import annotations

from datetime import date
from typing import Any

from celery import shared_task
from celery.signals import worker_process_init
from django.db import IntegrityError, OperationalError

from aframes_web.activity.services import compiles_stuck, day_compile_queued, warm_up


@worker_process_init.connect
def _warm_up(**_: Any) -> None:
    # Loading the cl100k tables takes ~0.4 s; pay it when a worker process starts, not in the
    # first compile a user waits for.
    warm_up()


@shared_task(
    name="activity.compile_day",
    autoretry_for=(OperationalError, IntegrityError),
    retry_backoff=True,
    retry_kwargs={"max_retries": 5},
)
def compile_day(entity_id: int, day: str) -> int | None:
    stored = day_compile_queued(entity_id=entity_id, day=date.fromisoformat(day))
    # A desktop day closes in memory only on its compiled frames: a due day waited for this.
    from memory.tasks import close_due

    close_due.delay(entity_id)
    return stored.version if stored is not None else None


@shared_task(name="activity.compile_pending", autoretry_for=(OperationalError,), retry_backoff=True)
def compile_pending() -> int:
    """The periodic sweep (beat): queue the compiles that a lost message or a failure left."""
    from aframes_web.streams.dispatch import dispatch_compiles

    stuck = compiles_stuck()
    dispatch_compiles(stuck)
    return len(stuck)
