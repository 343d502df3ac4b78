"""Background memory maintenance. Tasks take ids, call one service, and are idempotent."""

from __future__ import annotations

from celery import shared_task
from django.db import IntegrityError, OperationalError

from memory.services import entities_due, memory_close_due


@shared_task(
    name="memory.close_due",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, IntegrityError),
    retry_backoff=True,
    retry_kwargs={"max_retries": 5},
)
def close_due(entity_id: int, by_clock: bool = False) -> list[str]:
    return [d.isoformat() for d in memory_close_due(entity_id=entity_id, by_clock=by_clock)]


@shared_task(name="memory.close_idle", autoretry_for=(OperationalError,), retry_backoff=True)
def close_idle() -> int:
    """The periodic sweep (beat): close the days of entities that went quiet."""
    due = entities_due()
    for entity_id in due:
        close_due.delay(entity_id, True)
    return len(due)
