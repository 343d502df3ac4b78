"""Sentences the dashboard shows about the state of an entity's days."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import dateformat, timezone

from aframes_web.streams.models import Entity


def not_closed_words(entity: Entity, day: date, now: datetime | None = None) -> str:
    """Why ``day`` has no trajectory yet and when it will have one, in the entity's zone.

    memory.services.closing closes a day once events of a later day arrive, or by the clock once the
    entity has been quiet for AFRAMES_MEMORY_CLOSE_GRACE_MIN minutes after the day is over.
    """
    zone = ZoneInfo(entity.timezone)
    midnight = datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)
    named = dateformat.format(day, "l j F Y")
    at = f"midnight {entity.timezone} ({dateformat.format(midnight.date(), 'D j M Y')} 00:00)"
    grace = settings.AFRAMES_MEMORY_CLOSE_GRACE_MIN
    if (now or timezone.now()) < midnight:
        return (
            f"{named} is not closed yet; it closes at {at} at the earliest, once events of a"
            f" later day arrive or the entity has been quiet for {grace} minutes. Until then"
            " decisions read its events as recent events."
        )
    return (
        f"{named} is not closed yet; the day ended at {at}, and it closes as soon as events"
        f" of a later day arrive or the entity has been quiet for {grace} minutes."
    )
