"""Code decision points: every native event, in (time, id) order (ProactMem A.2).

ProactiveStream's Code streams keep native event granularity: each repository event is a
moment a method decides on, pushes included (a push is an observation a method may still act
on), and each repository is its own isolated stream. The point is the event itself: its public
fields are the event's payload as stored (``type``, ``value``, ``unit``, ``attributes``: the
GitHub importer's summary, no bodies or URLs), and its decision comes before the event is
committed to memory. GitHub data carries no ground truth, so points have no private fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from zoneinfo import ZoneInfo

from benchmark.streams.records import DecisionPoint, StreamEvent


def points(events: Sequence[StreamEvent], zone: ZoneInfo) -> list[DecisionPoint]:
    """One point per event, keyed by its source key (stable across re-imports)."""
    return [
        DecisionPoint(
            key=f"code:{event.source_key or event.id}",
            scope="code",
            at=event.at,
            public=dict(event.public().payload),
            cites=(event.id,),
            event_id=event.id,
        )
        for event in sorted(events, key=lambda e: (e.at, e.id))
    ]
