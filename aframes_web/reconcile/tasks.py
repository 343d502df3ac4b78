"""The reconciliation pass on the beat. Takes no arguments, repairs what it finds."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import OperationalError

from aframes_web.reconcile.services import reconcile as reconcile_pass

logger = logging.getLogger(__name__)


@shared_task(name="aframes.reconcile", autoretry_for=(OperationalError,), retry_backoff=True)
def reconcile() -> int:
    report = reconcile_pass(repair=True)
    for drift in report.drifts:
        logger.warning("reconcile: %s", drift.line())
    return len(report.drifts)
