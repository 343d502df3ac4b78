"""Naive local times (the way many sensor and study files write them) to aware UTC.

Daylight-saving edges are decided once, here, for every importer: a time that occurs twice
(the fall-back hour) is read as its first occurrence; a time that never occurs (the
spring-forward hour) is read with the offset in force just before the jump, i.e. as the
instant the clock would have shown had it not jumped. Both are counted so the import summary
can say how many times were ambiguous or missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo


@dataclass
class DstTally:
    ambiguous: int = 0
    nonexistent: int = 0


def to_utc(naive: datetime, zone: ZoneInfo, tally: DstTally | None = None) -> datetime:
    """The UTC instant of a naive local time in ``zone`` (see the module rules)."""
    first = naive.replace(tzinfo=zone, fold=0)
    second = naive.replace(tzinfo=zone, fold=1)
    if first.utcoffset() != second.utcoffset():
        # Either a repeated hour (both exist) or a skipped one (neither round-trips).
        round_trip = first.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
        if tally is not None:
            if round_trip == naive:
                tally.ambiguous += 1
            else:
                tally.nonexistent += 1
    return first.astimezone(UTC)


def iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def dst_notes(subject: str, tally: DstTally) -> list[str]:
    """What the import summary says about the daylight-saving edges ``to_utc`` met."""
    notes = []
    if tally.nonexistent:
        notes.append(
            f"{tally.nonexistent} {subject} fell in a daylight-saving gap (the skipped hour); "
            "read with the offset in force before the jump"
        )
    if tally.ambiguous:
        notes.append(
            f"{tally.ambiguous} {subject} fell in the repeated daylight-saving hour; read as "
            "its first occurrence"
        )
    return notes
