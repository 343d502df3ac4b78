"""An optional LLM extractor: a model proposes extra trajectory segments in the same schema.

It never bypasses validation: what it proposes goes through ``validate_segment`` like any
segment (``day.close_day`` validates whatever an extractor returns), so a fact the cited events
do not hold, or a citation outside the segment, rejects the segment and the reason is stored.
The deterministic segments are always kept; the model only adds (``source`` = ``"llm"``).

``complete`` is injected (the service passes the recorded, cached client of
``memory/llm.py``), so this module stays pure. A failed call or an unreadable reply adds
nothing (fail closed); the call's record keeps the reply for audit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.canonical import is_scalar
from memory.engine.records import FACT_TYPES, EngineEvent, Fact, Segment

LLM_SOURCE = "llm"
EVENTS_SHOWN = 300  # events of the day in the prompt: a bounded prompt; the rest are not shown
SEGMENTS_MAX = 50  # proposals read from one reply
_KIND = re.compile(r"[a-z][a-z0-9_]{0,39}")

PROMPT = (
    "You read one day of events of one entity and propose segments of its daily trajectory. "
    'Reply with JSON only: {"segments": [{"kind": snake_case name, "start": ISO time, '
    '"end": ISO time, "citations": [event ids], "facts": [{"id": text, "type": '
    '"observed" | "context_before" | "outcome", "path": [field names], "value": scalar, '
    '"at": ISO time or null}]}]}. Every fact must be a value that a cited event\'s payload '
    "holds at that path (or at a path ending with it), and every cited event must lie inside "
    "the segment; anything else is rejected.\n"
)

Extract = Callable[..., tuple[Segment, ...]]


def extraction_prompt(scope: str, events: Sequence[EngineEvent], day: date, zone: ZoneInfo) -> str:
    """The prompt for one day: deterministic for the same events."""
    shown = sorted(events, key=lambda e: (e.at, e.id))[:EVENTS_SHOWN]
    context = {
        "scope": scope,
        "day": day.isoformat(),
        "timezone": zone.key,
        "events_total": len(events),
        "events": [
            {
                "id": e.id,
                "at": e.at.isoformat(),
                "kind": e.kind,
                "payload": {k: v for k, v in e.payload.items() if k != "private"},
            }
            for e in shown
        ],
    }
    return PROMPT + json.dumps(context, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def parse_segments(text: str) -> tuple[tuple[Segment, ...], str | None]:
    """The segments of a reply, or none and the reason the reply cannot be read.

    Structure is checked here (types, kinds, scalar values, aware times); whether the facts hold
    is the validator's job. One malformed segment makes the whole reply unreadable: a model
    that cannot keep the schema is not trusted for the rest of it.
    """
    try:
        reply = json.loads(text)
    except ValueError:
        return (), "the reply is not JSON"
    items = reply.get("segments") if isinstance(reply, dict) else None
    if not isinstance(items, list):
        return (), 'the reply has no "segments" list'
    segments = []
    for n, item in enumerate(items[:SEGMENTS_MAX]):
        try:
            segments.append(_segment(item))
        except (KeyError, TypeError, ValueError) as err:
            return (), f"segment {n}: {err}"
    return tuple(segments), None


def _time(value: Any) -> datetime:
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"time {value!r} has no offset")
    return moment


def _segment(item: Mapping[str, Any]) -> Segment:
    kind = item["kind"]
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise ValueError(f"kind {kind!r} is not a snake_case name")
    citations = item["citations"]
    if not isinstance(citations, list) or not all(
        isinstance(c, int) and not isinstance(c, bool) for c in citations
    ):
        raise ValueError("citations must be a list of event ids")
    facts = []
    for f in item["facts"]:
        path, value, kind_of = f["path"], f["value"], f["type"]
        if kind_of not in FACT_TYPES:
            raise ValueError(f"fact type {kind_of!r} is not one of {', '.join(FACT_TYPES)}")
        if not isinstance(path, list) or not path or not all(isinstance(p, str) for p in path):
            raise ValueError("a fact path must be a non-empty list of field names")
        if not is_scalar(value):
            raise ValueError("a fact value must be a scalar")
        at = f.get("at")
        facts.append(
            Fact(str(f["id"]), kind_of, tuple(path), value, _time(at) if at is not None else None)
        )
    return Segment(
        _time(item["start"]),
        _time(item["end"]),
        tuple(facts),
        tuple(citations),
        kind=kind,
        source=LLM_SOURCE,
    )


def llm_extractor(complete: Callable[[str], str], base: Extract) -> Extract:
    """``base``'s segments plus what the model proposes for the day (module docstring)."""

    def extract(
        scope: str,
        events: Sequence[EngineEvent],
        day: date,
        zone: ZoneInfo,
        frames: Sequence[Mapping[str, Any]] = (),
    ) -> tuple[Segment, ...]:
        found = base(scope, events, day, zone, frames)
        if not events:
            return found
        try:
            text = complete(extraction_prompt(scope, events, day, zone))
        except Exception:  # the outside world: any failure adds nothing
            return found
        # Why a reply was unreadable is not kept here: the call's record keeps the reply.
        proposed = parse_segments(text)[0] if isinstance(text, str) else ()
        return found + proposed

    return extract
