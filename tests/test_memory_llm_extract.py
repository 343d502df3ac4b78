"""The optional LLM extractor (memory/engine/llm_extract.py): it adds, it never bypasses
validation, and any failure adds nothing."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from memory.engine.day import close_day
from memory.engine.extract import extract_day
from memory.engine.llm_extract import (
    LLM_SOURCE,
    PROMPT,
    extraction_prompt,
    llm_extractor,
    parse_segments,
)
from memory.engine.records import EngineEvent, Fact, Segment

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


# -- what the reply may hold (parse_segments) ---------------------------------------------------


def problem(**changes: object) -> str | None:
    return parse_segments(json.dumps({"segments": [{**proposal("kitchen", 2, 8), **changes}]}))[1]


def fact_problem(**changes: object) -> str | None:
    fact = {"id": "f1", "type": "observed", "path": ["room"], "value": "kitchen", **changes}
    return problem(facts=[fact])


def test_a_reply_that_is_no_json_object_with_a_segments_list_is_unreadable() -> None:
    assert parse_segments("not json") == ((), "the reply is not JSON")
    assert parse_segments("[]") == ((), 'the reply has no "segments" list')
    assert parse_segments('{"segments": {}}') == ((), 'the reply has no "segments" list')
    assert parse_segments('{"segs": []}') == ((), 'the reply has no "segments" list')


def test_a_well_formed_proposal_is_read_as_an_llm_segment() -> None:
    eight = datetime.combine(DAY, time(8), tzinfo=ZONE)
    reply = {
        "segments": [
            {
                "kind": "breakfast",
                "start": eight.isoformat(),
                "end": eight.replace(hour=9).isoformat(),
                "citations": [2, 1],
                "facts": [
                    {"id": 3, "type": "outcome", "path": ["room"], "value": "kitchen"},
                    {
                        "id": "f2",
                        "type": "context_before",
                        "path": ["attributes", "room"],
                        "value": None,
                        "at": eight.isoformat(),
                    },
                ],
            }
        ]
    }
    (segment,), reason = parse_segments(json.dumps(reply))
    assert reason is None
    assert (segment.kind, segment.source, segment.citations) == ("breakfast", LLM_SOURCE, (2, 1))
    assert (segment.start, segment.end) == (eight, eight.replace(hour=9))
    assert segment.facts == (
        Fact("3", "outcome", ("room",), "kitchen", None),
        Fact("f2", "context_before", ("attributes", "room"), None, eight),
    )


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"kind": "Bad Kind"}, "segment 0: kind 'Bad Kind' is not a snake_case name"),
        ({"citations": {}}, "segment 0: citations must be a list of event ids"),
        ({"citations": [1, "2"]}, "segment 0: citations must be a list of event ids"),
        ({"citations": [True]}, "segment 0: citations must be a list of event ids"),
    ],
)
def test_a_malformed_segment_is_named_with_what_is_wrong(
    changes: dict[str, object], reason: str
) -> None:
    assert problem(**changes) == reason


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        (
            {"type": "guess"},
            "segment 0: fact type 'guess' is not one of observed, context_before, outcome",
        ),
        ({"path": "room"}, "segment 0: a fact path must be a non-empty list of field names"),
        ({"path": []}, "segment 0: a fact path must be a non-empty list of field names"),
        ({"path": ["room", 1]}, "segment 0: a fact path must be a non-empty list of field names"),
        ({"value": ["kitchen"]}, "segment 0: a fact value must be a scalar"),
        ({"value": {"room": "kitchen"}}, "segment 0: a fact value must be a scalar"),
        ({"at": "2024-05-06T08:00:00"}, "segment 0: time '2024-05-06T08:00:00' has no offset"),
    ],
)
def test_a_malformed_fact_is_named_with_what_is_wrong(
    changes: dict[str, object], reason: str
) -> None:
    assert fact_problem(**changes) == reason


def test_one_malformed_segment_makes_the_whole_reply_unreadable() -> None:
    good, bad = proposal("kitchen", 2, 8), {**proposal("kitchen", 2, 8), "citations": "2"}
    assert parse_segments(json.dumps({"segments": [good, bad]})) == (
        (),
        "segment 1: citations must be a list of event ids",
    )


# -- the prompt ---------------------------------------------------------------------------------


def test_the_prompt_is_the_instructions_then_the_compact_sorted_day() -> None:
    kitchen = EngineEvent(
        2,
        datetime(2024, 5, 6, 6, tzinfo=UTC),
        "observation",
        {"type": "motion", "attributes": {"room": "Küche"}, "private": {"activity": "x"}},
    )
    bedroom = EngineEvent(1, datetime(2024, 5, 6, 5, tzinfo=UTC), "observation", {"type": "pir"})
    prompt = extraction_prompt("home", [kitchen, bedroom], DAY, ZONE)
    assert prompt == PROMPT + (
        '{"day":"2024-05-06","events":['
        '{"at":"2024-05-06T05:00:00+00:00","id":1,"kind":"observation",'
        '"payload":{"type":"pir"}},'
        '{"at":"2024-05-06T06:00:00+00:00","id":2,"kind":"observation",'
        '"payload":{"attributes":{"room":"Küche"},"type":"motion"}}],'
        '"events_total":2,"scope":"home","timezone":"Europe/Paris"}'
    )


# -- the extractor ------------------------------------------------------------------------------


def test_the_extractor_passes_everything_to_the_base_and_the_prompt_to_the_model() -> None:
    seen: list[tuple[object, ...]] = []
    prompts: list[str] = []
    frames = ({"id": 5},)

    def base(*args: object) -> tuple[Segment, ...]:
        seen.append(args)
        return ()

    def complete(prompt: str) -> str:
        prompts.append(prompt)
        return json.dumps({"segments": [proposal("kitchen", 2, 8)]})

    found = llm_extractor(complete, base)("home", EVENTS, DAY, ZONE, frames)
    assert seen == [("home", EVENTS, DAY, ZONE, frames)]
    assert prompts == [extraction_prompt("home", EVENTS, DAY, ZONE)]
    assert [(s.kind, s.source) for s in found] == [("breakfast", LLM_SOURCE)]


def test_the_extractor_asks_nothing_of_a_day_without_events() -> None:
    def complete(prompt: str) -> str:
        raise AssertionError("the model is not asked")

    kept = (
        Segment(datetime(2024, 5, 6, 6, tzinfo=UTC), datetime(2024, 5, 6, 7, tzinfo=UTC), (), ()),
    )
    assert llm_extractor(complete, lambda *args: kept)("home", [], DAY, ZONE) == kept


def test_a_reply_that_is_no_text_adds_nothing() -> None:
    extract = llm_extractor(lambda prompt: None, extract_day)  # type: ignore[arg-type,return-value]
    assert extract("home", EVENTS, DAY, ZONE) == extract_day("home", EVENTS, DAY, ZONE)
