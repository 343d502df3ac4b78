"""The pipeline's queueing and its Celery tasks: stored events → compiles and day summaries →
memory close. Tasks take ids, call one service of the layer they drive, and are idempotent.

Task names are the ones the beat schedule and running workers know (``settings.py``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

from celery import shared_task
from celery.signals import worker_process_init
from django.conf import settings
from django.db import IntegrityError, OperationalError

from aframes_web.activity import services as activity
from aframes_web.activity.services import compile_requests_add, compile_unqueue, compiles_stuck
from aframes_web.streams import services as streams
from aframes_web.streams import uploads
from aframes_web.streams.services import DayPair
from memory.services import closing as memory

logger = logging.getLogger(__name__)


def group_days(pairs: Iterable[DayPair]) -> dict[int, list[str]]:
    by_entity: dict[int, set[date]] = defaultdict(set)
    for entity_id, day in pairs:
        by_entity[entity_id].add(day)
    return {entity_id: sorted(d.isoformat() for d in days) for entity_id, days in by_entity.items()}


def dispatch_days(pairs: Iterable[DayPair]) -> None:
    """Queue what newly stored events set off, called after the storing transaction commits
    with exactly the (entity, local day) pairs that gained events."""
    pairs = list(pairs)
    # Compile requests first: the summary task closes memory days, and a desktop day must
    # already show its compile as pending by then, or it would close without its frames.
    dispatch_compiles(pairs)
    for entity_id, days in sorted(group_days(pairs).items()):
        try:
            refresh_entity_days.delay(entity_id, days)
        except Exception:
            # The events are committed: the caller must hear that they are stored, not get an
            # error it would retry as duplicates. Reconciliation recounts these days.
            logger.exception("could not queue the summary of entity %s days %s", entity_id, days)


def dispatch_compiles(pairs: Iterable[DayPair], stale_after: timedelta | None = None) -> None:
    """Queue compiles of desktop days; a day whose compile is queued only records the request.

    A broker that refuses the message leaves the day pending, not queued, so the next request
    or reconciliation sends it; the events are stored either way. ``stale_after``: queue again
    a compile queued longer ago than this (default: the compile queue's own REQUEUE_AFTER).
    """
    for entity_id, day, countdown in compile_requests_add(pairs=pairs, stale_after=stale_after):
        try:
            compile_day.apply_async((entity_id, day.isoformat()), countdown=countdown or None)
        except Exception:
            logger.exception("could not queue the compile of entity %s day %s", entity_id, day)
            compile_unqueue(entity_id=entity_id, day=day)


def provide_hooks() -> None:
    """Hand the layers below the functions that queue what they set off (``aframes_web.hooks``)."""
    streams.days_stored.provide(dispatch_days)
    uploads.job_queued.provide(_import_job_queue)
    activity.compiles_wanted.provide(dispatch_compiles)


def _import_job_queue(job_id: int) -> None:
    run_import_job.delay(job_id)


@worker_process_init.connect
def _warm_up(**_: Any) -> None:
    # Loading the cl100k tables takes ~0.4 s; pay it when a worker process starts, not in the
    # first compile a user waits for.
    activity.warm_up()


@shared_task(
    name="streams.run_import_job",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_kwargs={"max_retries": 3},
    soft_time_limit=settings.AFRAMES_IMPORT_TIME_LIMIT - 30,
    time_limit=settings.AFRAMES_IMPORT_TIME_LIMIT,
)
def run_import_job(job_id: int) -> None:
    uploads.import_job_run(job_id=job_id)


@shared_task(
    name="streams.refresh_entity_days",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_kwargs={"max_retries": 5},
)
def refresh_entity_days(entity_id: int, days: list[str]) -> int:
    written = streams.entity_days_refresh(entity_id=entity_id, days=days)
    # Memory closes the days the stream has moved past, which the summary just recorded.
    close_due.delay(entity_id)
    return written


@shared_task(
    name="activity.compile_day",
    autoretry_for=(OperationalError, IntegrityError),
    retry_backoff=True,
    retry_kwargs={"max_retries": 5},
)
def compile_day(entity_id: int, day: str) -> int | None:
    stored = activity.day_compile_queued(entity_id=entity_id, day=date.fromisoformat(day))
    # A desktop day closes in memory only on its compiled frames: a due day waited for this.
    close_due.delay(entity_id)
    return stored.version if stored is not None else None


@shared_task(name="activity.compile_pending", autoretry_for=(OperationalError,), retry_backoff=True)
def compile_pending() -> int:
    """The periodic sweep (beat): queue the compiles that a lost message or a failure left."""
    stuck = compiles_stuck()
    dispatch_compiles(stuck)
    return len(stuck)


@shared_task(
    name="memory.close_due",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, IntegrityError),
    retry_backoff=True,
    retry_kwargs={"max_retries": 5},
)
def close_due(entity_id: int, by_clock: bool = False) -> list[str]:
    return [d.isoformat() for d in memory.memory_close_due(entity_id=entity_id, by_clock=by_clock)]


@shared_task(name="memory.close_idle", autoretry_for=(OperationalError,), retry_backoff=True)
def close_idle() -> int:
    """The periodic sweep (beat): close the days of entities that went quiet."""
    due = memory.entities_due()
    for entity_id in due:
        close_due.delay(entity_id, True)
    return len(due)
