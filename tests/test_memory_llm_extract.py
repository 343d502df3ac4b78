"""The optional LLM extractor (memory/engine/llm_extract.py): it adds, it never bypasses
validation, and any failure adds nothing."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

from memory.engine.day import close_day
from memory.engine.extract import extract_day
from memory.engine.llm_extract import (
    LLM_SOURCE,
    extraction_prompt,
    llm_extractor,
    parse_segments,
)
from memory.engine.records import EngineEvent

ZONE = ZoneInfo("Europe/Paris")
DAY = date(2024, 5, 6)


def motion(eid: int, hour: int, room: str) -> EngineEvent:
    moment = datetime.combine(DAY, time(hour), tzinfo=ZONE).astimezone(UTC)
    payload = {
        "type": "motion",
        "value": "ON",
        "attributes": {"sensor": f"M-{room}", "room": room},
        "private": {"activity": "secret-label"},
    }
    return EngineEvent(eid, moment, "observation", payload)


EVENTS = [motion(1, 7, "bedroom"), motion(2, 8, "kitchen")]


def proposal(room: str, cites: int, hour: int) -> dict[str, object]:
    at = datetime.combine(DAY, time(hour), tzinfo=ZONE).isoformat()
    return {
        "kind": "breakfast",
        "start": at,
        "end": at,
        "citations": [cites],
        "facts": [{"id": "f1", "type": "observed", "path": ["room"], "value": room, "at": at}],
    }


def closed_with(reply: object) -> list[tuple[str, str, bool, str | None]]:
    def complete(prompt: str) -> str:
        if isinstance(reply, Exception):
            raise reply
        return reply  # type: ignore[return-value]

    extract = llm_extractor(complete, extract_day)
    closed = close_day("home", EVENTS, DAY, ZONE, extractor=extract)
    return [
        (c.segment.kind, c.segment.source, c.verdict.accepted, c.verdict.reason)
        for c in closed.segments
    ]


def test_a_grounded_proposal_is_added_beside_the_deterministic_segments() -> None:
    base = closed_with(json.dumps({"segments": []}))
    added = closed_with(json.dumps({"segments": [proposal("kitchen", 2, 8)]}))
    assert added[: len(base)] == base
    assert added[len(base) :] == [("breakfast", LLM_SOURCE, True, None)]


def test_a_proposal_its_events_do_not_hold_is_rejected_with_the_reason() -> None:
    added = closed_with(json.dumps({"segments": [proposal("garage", 2, 8)]}))
    kind, source, accepted, reason = added[-1]
    assert (kind, source, accepted) == ("breakfast", LLM_SOURCE, False)
    assert "garage" in (reason or "") and "grounded by no cited event" in (reason or "")


def test_a_citation_outside_the_segment_is_rejected() -> None:
    added = closed_with(json.dumps({"segments": [proposal("bedroom", 1, 8)]}))
    assert added[-1][2] is False and "outside the segment" in (added[-1][3] or "")


def test_any_failure_of_the_model_adds_nothing() -> None:
    base = closed_with(json.dumps({"segments": []}))
    for reply in (
        "not json",
        json.dumps({"segs": []}),
        RuntimeError("down"),
        json.dumps({"segments": [{**proposal("kitchen", 2, 8), "kind": "Bad Kind"}]}),
    ):
        assert closed_with(reply) == base


def test_parse_names_what_is_wrong() -> None:
    naive = {**proposal("kitchen", 2, 8), "start": "2024-05-06T08:00:00"}
    assert parse_segments(json.dumps({"segments": [naive]}))[1] == (
        "segment 0: time '2024-05-06T08:00:00' has no offset"
    )
    bad_type = proposal("kitchen", 2, 8)
    bad_type["facts"] = [{"id": "f1", "type": "guess", "path": ["room"], "value": "x"}]
    assert "fact type 'guess'" in (parse_segments(json.dumps({"segments": [bad_type]}))[1] or "")


def test_the_prompt_never_shows_ground_truth_and_is_deterministic() -> None:
    prompt = extraction_prompt("home", EVENTS, DAY, ZONE)
    assert "secret-label" not in prompt and '"private"' not in prompt
    assert prompt == extraction_prompt("home", list(reversed(EVENTS)), DAY, ZONE)
