"""The text references a decision cites as evidence, and the stable id of a regularity.

Evidence ids are strings with a type prefix so one list can cite events, facts and
regularities: ``event:123``, ``fact:2024-05-01/3/f2`` (day, segment index, fact id) and
``reg:<12 hex>``. They are pure functions of what they name, so a rebuild from the same events
cites the same ids.
"""

from __future__ import annotations

import hashlib
from datetime import date

from memory.engine.records import Proposal
from memory.engine.regularities import proposal_key

EVENT = "event:"
FACT = "fact:"
REGULARITY = "reg:"


def event_ref(event_id: int) -> str:
    return f"{EVENT}{event_id}"


def fact_ref(day: date, segment_index: int, fact_id: str) -> str:
    """A fact of a day's trajectory: unique within the entity (one trajectory per day)."""
    return f"{FACT}{day.isoformat()}/{segment_index}/{fact_id}"


def regularity_id(proposal: Proposal) -> str:
    """Stable across rebuilds: the hash of the proposal's canonical key."""
    digest = hashlib.sha256(proposal_key(proposal).encode()).hexdigest()[:12]
    return f"{REGULARITY}{digest}"


def parse_ref(ref: str) -> tuple[str, str]:
    """``("event" | "fact" | "reg", rest)``; raises ValueError on anything else."""
    for prefix in (EVENT, FACT, REGULARITY):
        if ref.startswith(prefix) and len(ref) > len(prefix):
            return prefix[:-1], ref[len(prefix) :]
    raise ValueError(f"{ref!r} is not an evidence reference (event:N, fact:DAY/S/ID or reg:HEX)")
