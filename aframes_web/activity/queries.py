"""The typed questions about compiled activity that every door asks the same way.

REST, MCP and the dashboard each build one of these small frozen queries from what they were
given and hand it to one selector (ARCHITECTURE.md, "Layers"): a default, a limit or an error
message lives here once, so a question has one answer whichever door it came through.
A bad value raises :class:`~aframes_web.streams.records.FieldInvalid` naming the parameter; each
door words it in its own shape (a 400 problem, a tool error, a form error).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from aframes_web.streams.models import Entity
from aframes_web.streams.records import FieldInvalid, query_moment

# The reference implementation's get_context default (REFERENCE.md, "MCP"): the stretch of work
# an agent is usually asked to help with. Agents that already call it get the window they expect.
CONTEXT_HOURS_DEFAULT = 2.0
CONTEXT_HOURS_MIN = 0.25  # a quarter hour: shorter windows hold a frame or two, not a context
CONTEXT_HOURS_MAX = 168.0  # a week: a window is compiled on request, so its cost is bounded


def window_hours(raw: float | str | None, default: float = CONTEXT_HOURS_DEFAULT) -> float:
    """A window's length in hours, as every door reads it: a number from a quarter hour to a
    week; FieldInvalid otherwise (NaN and infinities included)."""
    if raw is None:
        return default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = math.nan
    if not CONTEXT_HOURS_MIN <= value <= CONTEXT_HOURS_MAX:  # also false for nan
        shown = raw if isinstance(raw, str) else f"{raw:g}" if isinstance(raw, float) else raw
        raise FieldInvalid(
            "hours",
            f"must be a number of hours from {CONTEXT_HOURS_MIN:g} to {CONTEXT_HOURS_MAX:g}, "
            f"got {shown!r}.",
        )
    return value


@dataclass(frozen=True, slots=True)
class ContextQuery:
    """The context block of the ``hours`` before ``end`` (whole seconds: a document states its
    window to the second), optionally fitted to ``budget_tokens``."""

    entity: Entity
    end: datetime
    hours: float = CONTEXT_HOURS_DEFAULT
    include_text: bool = False
    budget_tokens: int | None = None

    @classmethod
    def build(
        cls,
        *,
        entity: Entity,
        now: datetime,
        hours: float | str | None = None,
        at: datetime | str | None = None,
        include_text: bool = False,
        budget_tokens: int | None = None,
    ) -> ContextQuery:
        """The query from a door's raw values; ``at`` as text is read as every door reads a
        moment, and an absent ``at`` is ``now``."""
        moment = query_moment(at, "at") if isinstance(at, str) else at
        if budget_tokens is not None and budget_tokens < 1:
            raise FieldInvalid("budget_tokens", f"must be at least 1, got {budget_tokens}.")
        return cls(
            entity=entity,
            end=(moment or now).replace(microsecond=0),
            hours=window_hours(hours),
            include_text=include_text,
            budget_tokens=budget_tokens,
        )

    @property
    def start(self) -> datetime:
        return self.end - timedelta(hours=self.hours)
