"""Benchmark runs on the worker. Tasks take ids, call one service, and are idempotent."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from aframes_web.proactivestream.services import run_execute


@shared_task(
    name="proactivestream.execute_run",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.AFRAMES_BENCHMARK_TIME_LIMIT - 30,
    time_limit=settings.AFRAMES_BENCHMARK_TIME_LIMIT,
)
def execute_run(run_id: int) -> str | None:
    """Run a queued benchmark run; a failure is stored on the run (and not retried: a run that
    failed once fails the same way again, and a person reads why on its page)."""
    try:
        run = run_execute(run_id=run_id)
    except Exception:
        return "failed"
    return run.status if run is not None else None


def run_queue(run_id: int) -> None:
    execute_run.delay(run_id)
