"""The one place that turns newly stored events into background work.

Ingestion (API and importers) calls :func:`dispatch_days` after its transaction commits, with
exactly the (entity, local day) pairs that gained events. Each derived layer adds its task here.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from datetime import date, timedelta

DayPair = tuple[int, date]
logger = logging.getLogger(__name__)


def group_days(pairs: Iterable[DayPair]) -> dict[int, list[str]]:
    by_entity: dict[int, set[date]] = defaultdict(set)
    for entity_id, day in pairs:
        by_entity[entity_id].add(day)
    return {entity_id: sorted(d.isoformat() for d in days) for entity_id, days in by_entity.items()}


def dispatch_days(pairs: Iterable[DayPair]) -> None:
    from aframes_web.streams.tasks import refresh_entity_days

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
    from aframes_web.activity.services import compile_requests_add, compile_unqueue
    from aframes_web.activity.tasks import compile_day

    for entity_id, day, countdown in compile_requests_add(pairs=pairs, stale_after=stale_after):
        try:
            compile_day.apply_async((entity_id, day.isoformat()), countdown=countdown or None)
        except Exception:
            logger.exception("could not queue the compile of entity %s day %s", entity_id, day)
            compile_unqueue(entity_id=entity_id, day=day)
