"""Background work on the event store alone. Tasks take ids, call one service, and are idempotent.

The tasks that carry stored events on to compiles and memory are the pipeline's
(``aframes_web.pipeline.tasks``).
"""

from __future__ import annotations

from celery import shared_task

from aframes_web.streams.uploads import incoming_sweep


@shared_task(name="streams.sweep_incoming_uploads")
def sweep_incoming_uploads() -> int:
    return incoming_sweep()
