"""The Celery application: reliable delivery defaults shared by every Aframes task."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aframes_web.settings")


def configure(app: Celery) -> Celery:
    """Apply the delivery rules every task relies on (STYLE.md, Celery)."""
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(
        # A task is acknowledged only after it finished, and a worker that dies mid-task hands
        # it back, so killing a worker loses no work; every task is idempotent to allow that.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
    )
    app.autodiscover_tasks()
    return app


app = Celery("aframes_web")
configure(app)
