"""The reconciliation pass on the beat. Takes no arguments, repairs what it finds."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import OperationalError

from aframes_web import liveness
from aframes_web.reconcile.services import reconcile as reconcile_pass

logger = logging.getLogger(__name__)


@shared_task(name="aframes.reconcile", autoretry_for=(OperationalError,), retry_backoff=True)
def reconcile() -> int:
    """One pass; a pass still running elsewhere (a slow one, on another worker) is enough."""
    with liveness.holding(liveness.RECONCILE, 0) as mine:
        if not mine:
            return 0
        report = reconcile_pass(repair=True)
    for drift in report.drifts:
        logger.warning("reconcile: %s", drift.line())
    return len(report.drifts)
