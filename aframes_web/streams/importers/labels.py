"""What the text-file importers of homes share: decoding lines, notes, activity-label timelines.

Used by the Ordóñez and CASAS importers; ground truth found here only ever goes into
``payload.private``.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import datetime, timedelta

_SHOWN_LINES = 10  # line numbers listed in a note before "..."


def decode_line(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        # The dataset's own README is Latin-1; its tools may have written names that way.
        return raw.decode("latin-1")


def plural(count: int, one: str, many: str) -> str:
    """``1 row starts`` / ``3 rows start``: ``plural(n, "row starts", "rows start")``."""
    return f"{count} {one if count == 1 else many}"


def lines_note(what: str, lines: list[int]) -> str:
    """``what: lines 3, 9, ...`` for a note about some lines of a file."""
    shown = ", ".join(str(n) for n in lines[:_SHOWN_LINES])
    more = ", ..." if len(lines) > _SHOWN_LINES else ""
    return f"{what}: line{'s' if len(lines) > 1 else ''} {shown}{more}"


@dataclass(frozen=True, slots=True)
class Span:
    """One hand-labelled activity: closed interval, UTC (B's labels end at hh:mm:59)."""

    start: datetime
    end: datetime
    activity: str


class ActivityTimeline:
    """A home's labelled activities, for "what was going on at this instant" lookups."""

    def __init__(self, spans: list[Span]) -> None:
        self.spans = sorted(spans, key=lambda span: (span.start, span.end, span.activity))
        self.starts = [span.start for span in self.spans]
        self.longest = max((span.end - span.start for span in spans), default=timedelta(0))

    def at(self, moment: datetime) -> list[str]:
        """The activities in progress at ``moment``, in order of their start."""
        found = []
        index = bisect.bisect_right(self.starts, moment) - 1
        while index >= 0 and self.starts[index] >= moment - self.longest:
            span = self.spans[index]
            if span.end >= moment:
                found.append(span.activity)
            index -= 1
        found.reverse()
        return found


def activity_value(activities: list[str]) -> str | list[str] | None:
    """``private["activity"]``: one name, several when labels overlap, None when none."""
    if not activities:
        return None
    return activities[0] if len(activities) == 1 else activities
