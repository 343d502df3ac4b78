"""What an answerer is given about a day (Activity Frames §6.2): the raw rows, the compiled
block with its per-app ledger, and an LLM summary of the raw rows; with cl100k token counts.

* ``raw``: the day's snapshot rows as the REST events endpoint returns them
  (:func:`aframes_web.api.serializers.event_record`, typed text dropped), compact JSON, times
  in UTC with the day's local offset stated above them.
* ``block``: the stored DayDocument's context block when it is the current compile of the day
  (same sha256), else the block of a fresh compile; then the per-app ledger
  (:func:`compiler.views.ledger`) of that compile, one line per app.
* ``summary``: the raw rows cut into pieces that fit the model's context, each summarised by
  the model, the summaries joined in time order (only with an LLM).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any
from zoneinfo import ZoneInfo

from aframes_web.activity.models import DayDocument
from aframes_web.activity.services import DayCompile, day_compile_read
from aframes_web.qa.oracle import SNAPSHOT, local_day_bounds
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.selectors import event_record
from compiler.emit import context_block
from compiler.tokens import cl100k
from compiler.views import UNTRUSTED, ledger

REPRESENTATIONS = ("raw", "block", "summary")
SUMMARY_REPLY_TOKENS = 400  # room kept in each summary call for the model's reply
SUMMARY_PROMPT = (
    "Below is part of one day's computer activity log of a person, as JSON rows (one row per "
    "screen snapshot: time, monitor, application, window title, URL). Summarise it for "
    "someone who will later answer questions about the day: which applications were used and "
    "for roughly how many minutes each, which websites (domains) were visited, and the times "
    "of the first and last rows. Be factual and brief; mention every application and domain "
    "that appears.\n\n{rows}\n\nSUMMARY:"
)


@dataclass(frozen=True, slots=True)
class Representation:
    name: str
    text: str
    tokens: int
    source: str  # where it came from, for the report


def _offset(entity: Entity, day: date) -> str:
    start, _ = local_day_bounds(entity, day)
    offset = start.astimezone(ZoneInfo(entity.timezone)).strftime("%z")
    return f"UTC{offset[:3]}:{offset[3:]}"


def raw_records(entity: Entity, day: date) -> list[dict[str, Any]]:
    start, end = local_day_bounds(entity, day)
    events = Event.objects.filter(
        entity=entity, kind=SNAPSHOT, occurred_at__gte=start, occurred_at__lt=end
    ).order_by("occurred_at", "id")
    return [event_record(event, include_text=False) for event in events.iterator()]


def _raw_header(entity: Entity, day: date) -> str:
    return (
        f"Snapshot rows of {day.isoformat()}; times are UTC, the person's local time is "
        f"{_offset(entity, day)} ({entity.timezone}) on this day.\n"
    )


def _dumps(records: list[dict[str, Any]]) -> str:
    # Compact, as the API's JSONRenderer writes it.
    return json.dumps(records, ensure_ascii=False, separators=(",", ":"))


def raw(entity: Entity, day: date) -> Representation:
    text = _raw_header(entity, day) + _dumps(raw_records(entity, day))
    return Representation("raw", text, cl100k()(text), "events endpoint rows")


def ledger_lines(entries: list[dict[str, Any]]) -> str:
    lines = [f"Per-app ledger (every credited minute). {UNTRUSTED}"]
    for entry in entries:
        sessions = entry["sessions"]
        windows = "; ".join(entry["top_windows"])
        lines.append(
            f"- {entry['app']}: {entry['minutes']} min in {sessions} "
            f"session{'s' if sessions != 1 else ''} (longest {entry['longest_session_min']} min)"
            + (f"; top windows: {windows}" if windows else "")
        )
    return "\n".join(lines) + "\n"


def compiled(entity: Entity, day: date) -> DayCompile:
    return day_compile_read(entity=entity, day=day)


def block(entity: Entity, day: date, result: DayCompile) -> Representation:
    if result.compiled is None:
        raise ValueError(f"{day}: the compiler found no desktop events")
    stored = (
        DayDocument.objects.filter(entity=entity, day=day, current=True)
        .only("sha256", "context")
        .first()
    )
    if stored is not None and stored.sha256 == result.sha256:
        context, source = stored.context, "stored DayDocument"
    else:
        context, source = context_block(result.compiled), "compiled now (no current document)"
    text = context + "\n" + ledger_lines(ledger(result.compiled))
    return Representation("block", text, cl100k()(text), source)


def summary(
    entity: Entity,
    day: date,
    *,
    complete: Callable[[str], str],
    context_tokens: int,
) -> Representation:
    """The model's summary of the raw rows, piece by piece so each call fits its context.

    Raises ValueError when not even one row fits beside the prompt.
    """
    count = cl100k()
    fixed = count(SUMMARY_PROMPT.format(rows="")) + count(_raw_header(entity, day))
    room = context_tokens - fixed - SUMMARY_REPLY_TOKENS
    pieces: list[list[dict[str, Any]]] = [[]]
    used = 2  # the brackets
    for record in raw_records(entity, day):
        cost = count(_dumps([record])) - 1  # its comma replaces a bracket
        if cost > room:
            raise ValueError(
                f"{day}: a single row needs {cost} tokens, more than the {room} a summary call "
                f"has beside its prompt in a {context_tokens}-token context"
            )
        if used + cost > room and pieces[-1]:
            pieces.append([])
            used = 2
        pieces[-1].append(record)
        used += cost
    parts = []
    for n, piece in enumerate(pieces, 1):
        if not piece:
            continue
        rows = _raw_header(entity, day) + _dumps(piece)
        reply = complete(SUMMARY_PROMPT.format(rows=rows)).strip()
        parts.append(
            f"Part {n} of {len(pieces)} ({piece[0]['occurred_at']} to "
            f"{piece[-1]['occurred_at']} UTC): {reply}"
        )
    header = f"Summary of {day.isoformat()}; local time is {_offset(entity, day)}.\n"
    text = header + "\n".join(parts) + "\n"
    return Representation(
        "summary", text, count(text), f"LLM summary of {len(parts)} pieces of the raw rows"
    )
