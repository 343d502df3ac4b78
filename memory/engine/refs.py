"""The text references a decision cites as evidence, and the stable id of a regularity.

Evidence ids are strings with a type prefix so one list can cite events, decision points, facts
and regularities: ``event:123``, ``point:45``, ``fact:2024-05-01/room_presence@812/f2`` (day,
segment key, fact id) and ``reg:<12 hex>``. They are pure functions of what they name, so a
rebuild from the same events cites the same ids.

A segment's key is its kind and its lowest cited event id, not its position in the day: a
decision cites facts of its own day before the day closes, and the day's final extraction adds
segments in between; the key of a segment that has grown keeps its first event, so the
reference still names it.
"""

from __future__ import annotations

import hashlib
from datetime import date

from memory.engine.memo import IdentityMemo
from memory.engine.records import POINT_KIND, EngineEvent, Proposal
from memory.engine.regularities import proposal_key

EVENT = "event:"
POINT = "point:"
FACT = "fact:"
REGULARITY = "reg:"


def event_ref(event_id: int) -> str:
    return f"{EVENT}{event_id}"


def point_ref(point_id: int) -> str:
    return f"{POINT}{point_id}"


def current_ref(current: EngineEvent) -> str:
    """What a decision cites for the moment it decided at: the event, or the decision point."""
    return point_ref(current.id) if current.kind == POINT_KIND else event_ref(current.id)


def fact_ref(day: date, segment_key: str, fact_id: str) -> str:
    """A fact of a day's trajectory: unique within the entity (one trajectory per day)."""
    return f"{FACT}{day.isoformat()}/{segment_key}/{fact_id}"


def _regularity_id(proposal: Proposal) -> str:
    digest = hashlib.sha256(proposal_key(proposal).encode()).hexdigest()[:12]
    return f"{REGULARITY}{digest}"


_regularity_ids: IdentityMemo[Proposal, str] = IdentityMemo(_regularity_id, limit=16384)


def regularity_id(proposal: Proposal) -> str:
    """Stable across rebuilds: the hash of the proposal's canonical key."""
    return _regularity_ids(proposal)


def parse_ref(ref: str) -> tuple[str, str]:
    """``("event" | "point" | "fact" | "reg", rest)``; raises ValueError on anything else."""
    for prefix in (EVENT, POINT, FACT, REGULARITY):
        if ref.startswith(prefix) and len(ref) > len(prefix):
            return prefix[:-1], ref[len(prefix) :]
    raise ValueError(
        f"{ref!r} is not an evidence reference (event:N, point:N, fact:DAY/SEGMENT/ID or reg:HEX)"
    )
