"""Recent events: what a decision sees of the stream right before now (ProactMem's
recent-events layer).

The current event plus at most RECENT_MAX_PRIOR earlier events of the same entity from the last
RECENT_WINDOW. Only events before the current one count (the causal order: memory is read as it
stood before the event), ties in time broken by id so the answer never depends on input order.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from memory.engine.records import EngineEvent

RECENT_MAX_PRIOR = 99  # ProactMem: the current event plus at most 99 prior events
RECENT_WINDOW = timedelta(hours=72)  # ProactMem: prior events from the last 72 hours


def recent_events(current: EngineEvent, prior: Iterable[EngineEvent]) -> tuple[EngineEvent, ...]:
    """The current event's context, oldest first and the current event last.

    ``prior`` may hold anything of the entity (in any order); events at or after the current one
    in (time, id) order, the current event itself, and events older than the window are left
    out. The window is inclusive at its start: an event exactly 72 h earlier counts.
    """
    if current.at.tzinfo is None:
        raise ValueError("the current event's time must be aware")
    since = current.at - RECENT_WINDOW
    now = (current.at, current.id)
    earlier = sorted(
        (e for e in prior if since <= e.at and (e.at, e.id) < now and e.id != current.id),
        key=lambda e: (e.at, e.id),
    )
    return (*earlier[-RECENT_MAX_PRIOR:], current)
