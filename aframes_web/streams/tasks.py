"""Background work on the event store. Tasks take ids, call one service, and are idempotent."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from aframes_web.streams.services import entity_days_refresh
from aframes_web.streams.uploads import incoming_sweep


@shared_task(
    name="streams.refresh_entity_days",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_kwargs={"max_retries": 5},
)
def refresh_entity_days(entity_id: int, days: list[str]) -> int:
    written = entity_days_refresh(entity_id=entity_id, days=days)
    # Memory closes the days the stream has moved past, which the summary just recorded.
    from memory.tasks import close_due

    close_due.delay(entity_id)
    return written


@shared_task(
    name="streams.run_import_job",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_kwargs={"max_retries": 3},
)
def run_import_job(job_id: int) -> None:
    from aframes_web.streams.uploads import import_job_run

    import_job_run(job_id=job_id)


@shared_task(name="streams.sweep_incoming_uploads")
def sweep_incoming_uploads() -> int:
    return incoming_sweep()
