from __future__ import annotations

import ast
from pathlib import Path

from aframes_web.streams import records
from aframes_web.streams.records import content_key, validate_batch

SNAP = {
    "occurred_at": "2026-03-02T09:00:00Z",
    "kind": "snapshot",
    "payload": {"app": "Code", "window": "x.py", "url": None},
}


def errors_of(items: list, scope: str = "desktop") -> list[dict]:
    return [e.as_dict() for e in validate_batch(items, scope=scope, store_text=False).errors]


def test_module_is_pure_python() -> None:
    tree = ast.parse(Path(records.__file__).read_text())
    imported = {n.names[0].name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)}
    imported |= {
        n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    }
    assert not imported & {"django", "rest_framework", "aframes_web", "celery"}


def test_timestamps_are_normalised_to_utc() -> None:
    batch = validate_batch(
        [{**SNAP, "occurred_at": "2026-03-02T10:00:00.5+01:00"}], scope="desktop", store_text=False
    )
    assert batch.records[0].occurred_at.isoformat() == "2026-03-02T09:00:00.500000+00:00"


def test_rejects_naive_timestamps_with_advice() -> None:
    [error] = errors_of([{**SNAP, "occurred_at": "2026-03-02T09:00:00"}])
    assert error["index"] == 0 and error["field"] == "occurred_at"
    assert "no UTC offset" in error["message"] and "add Z" in error["message"]


def test_rejects_unknown_kinds_and_kinds_of_another_scope() -> None:
    [error] = errors_of([{**SNAP, "kind": "screenshot"}])
    assert error["field"] == "kind" and "snapshot, input, elements" in error["message"]
    [error] = errors_of([SNAP], scope="home")
    assert "a home entity takes observation" in error["message"]


def test_rejects_payloads_of_the_wrong_shape_naming_the_path() -> None:
    bad = [
        {**SNAP, "payload": {"window": "w"}},
        {**SNAP, "payload": {"app": 3}},
        {**SNAP, "payload": {"app": "A", "colour": "red"}},
        {"occurred_at": "2026-03-02T09:00:00Z", "kind": "input", "payload": {"type": "swipe"}},
        {
            "occurred_at": "2026-03-02T09:00:00Z",
            "kind": "elements",
            "payload": {"snapshot": "s1", "elements": [{"role": "AXButton", "bounds": [0, 0, 2]}]},
        },
        {
            "occurred_at": "2026-03-02T09:00:00Z",
            "kind": "input",
            "payload": {"type": "click", "x": "12"},
        },
        "not an object",
    ]
    fields = [(e["index"], e["field"]) for e in errors_of(bad)]
    assert fields == [
        (0, "payload.app"),
        (1, "payload.app"),
        (2, "payload.colour"),
        (3, "payload.type"),
        (4, "payload.elements[0].bounds"),
        (5, "payload.x"),
        (6, ""),
    ]


def test_rejects_nul_characters_postgres_cannot_store() -> None:
    [error] = errors_of([{**SNAP, "payload": {"app": "A", "window": "a\x00b"}}])
    assert "NUL" in error["message"]


def test_observation_payloads() -> None:
    good = {
        "occurred_at": "2026-03-02T09:00:00Z",
        "kind": "observation",
        "payload": {
            "type": "steps",
            "value": 120,
            "unit": "count",
            "attributes": {"source": "fitbit"},
            "private": {"label": "walk"},
        },
    }
    assert errors_of([good], scope="sports") == []
    [error] = errors_of([{**good, "payload": {"type": "steps", "value": [1]}}], scope="sports")
    assert error["field"] == "payload.value"


def test_text_and_clipboard_are_dropped_unless_opted_in() -> None:
    typed = {
        "occurred_at": "2026-03-02T09:00:00Z",
        "kind": "input",
        "payload": {"type": "text", "text": "my password"},
    }
    dropped = validate_batch([typed], scope="desktop", store_text=False)
    assert dropped.dropped_text_fields == 1 and "text" not in dropped.records[0].payload
    kept = validate_batch([typed], scope="desktop", store_text=True)
    assert kept.dropped_text_fields == 0 and kept.records[0].payload["text"] == "my password"


def test_content_key_is_deterministic_and_ignores_text() -> None:
    typed = {
        "occurred_at": "2026-03-02T09:00:00Z",
        "kind": "input",
        "payload": {"type": "text", "text": "secret"},
    }
    one = validate_batch([typed], scope="desktop", store_text=True).records[0]
    two = validate_batch([typed], scope="desktop", store_text=False).records[0]
    assert one.source_key == two.source_key and one.source_key.startswith("h:")
    assert "secret" not in one.source_key
    assert content_key(one.occurred_at, "input", "0", {"type": "text"}) == one.source_key


def test_all_errors_of_a_batch_are_reported_not_just_the_first() -> None:
    items = [SNAP, {**SNAP, "kind": "x"}, SNAP, {**SNAP, "occurred_at": 5}]
    assert [e["index"] for e in errors_of(items)] == [1, 3]


def test_rejects_non_finite_numbers_jsonb_cannot_hold() -> None:
    item = {
        "occurred_at": "2026-03-02T09:00:00Z",
        "kind": "observation",
        "payload": {"type": "steps", "attributes": {"rate": float("nan")}},
    }
    [error] = errors_of([item], scope="sports")
    assert error["field"] == "payload" and "NaN or infinity" in error["message"]


def test_rejects_lone_surrogates_no_database_can_store() -> None:
    # JSON may escape half a surrogate pair ("\ud800"); as text it cannot be encoded, so it
    # would fail the whole batch at storage instead of this one item here.
    base = {"occurred_at": "2026-03-02T09:00:00Z", "kind": "observation", "source_key": "k"}
    items = [
        {**base, "payload": {"type": "x", "attributes": {"title": "a\ud800b"}}},
        {**base, "source_key": "k\udfff", "payload": {"type": "x"}},
        {**base, "monitor": "m\ud83d", "payload": {"type": "x"}},
        {**base, "payload": {"type": "x", "attributes": {"title": "caf\u00e9 \U0001f600"}}},
    ]
    errors = errors_of(items, scope="code")
    assert [(e["index"], e["field"]) for e in errors] == [
        (0, "payload"),
        (1, "source_key"),
        (2, "monitor"),
    ]
    assert "lone surrogate (\\ud800)" in errors[0]["message"]
    assert "lone surrogate (\\udfff)" in errors[1]["message"]


def test_literal_backslash_u0000_text_is_not_a_nul() -> None:
    assert errors_of([{**SNAP, "payload": {"app": "A", "window": "escape \\\\u0000 shown"}}]) == []


def test_stored_json_is_computed_once_from_the_final_payload() -> None:
    typed = {
        "occurred_at": "2026-03-02T09:00:00Z",
        "kind": "input",
        "payload": {"type": "text", "text": "secret"},
    }
    [record] = validate_batch([typed], scope="desktop", store_text=False).records
    assert record.payload_json == '{"type":"text"}'
