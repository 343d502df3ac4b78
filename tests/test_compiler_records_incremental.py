"""The record converter can be finished, fed more records, and finished again."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from compiler.sources.events import RecordConverter, capture_from_records


def _records() -> list[dict[str, Any]]:
    tree = {"elements": [{"role": "button", "name": "Send", "bounds": [0, 0, 10, 10]}]}
    return [
        # The tree comes before its snapshot, and the snapshot only in the second part.
        {"id": 1, "occurred_at": "2026-03-02T09:00:00Z", "kind": "elements", "monitor": "0",
         "source_key": "e1", "payload": {"snapshot": "s2", **tree}},
        {"id": 3, "occurred_at": "2026-03-02T08:59:00Z", "kind": "snapshot", "monitor": "0",
         "source_key": "s3", "payload": {"app": "Mail", "window": "Inbox"}},
        {"id": 2, "occurred_at": datetime(2026, 3, 2, 9, tzinfo=UTC), "kind": "snapshot",
         "monitor": "0", "source_key": "s2", "payload": {"app": "Mail", "window": "Draft"}},
        {"id": 4, "occurred_at": "2026-03-02T09:00:05+00:00", "kind": "input", "monitor": "0",
         "source_key": "i4", "payload": {"type": "click", "x": 5, "y": 5}},
    ]  # fmt: skip


def test_finishing_twice_equals_converting_everything_at_once() -> None:
    records = _records()
    whole = capture_from_records(records)
    converter = RecordConverter()
    for position, record in enumerate(records[:2], start=1):
        converter.add(record, position)
    early = converter.finish()
    assert [s.id for s in early.snapshots] == [3] and early.elements == []
    assert early.disclosures == ["1 element tree named a snapshot that is not in the input "
                                 "and was dropped."]  # fmt: skip
    for position, record in enumerate(records[2:], start=3):
        converter.add(record, position)
    later = converter.finish()
    assert later == whole
    assert [e.snapshot_id for e in later.elements] == [2] and later.disclosures == []
    # Finishing again changes nothing, and the first result was not changed after the fact.
    assert converter.finish() == whole and [s.id for s in early.snapshots] == [3]


def test_an_aware_datetime_reads_like_its_iso_text() -> None:
    text = {"id": 1, "occurred_at": "2026-03-02T10:00:00+01:00", "kind": "snapshot",
            "payload": {"app": "Code"}}  # fmt: skip
    aware = {**text, "occurred_at": datetime(2026, 3, 2, 9, tzinfo=UTC)}
    assert capture_from_records([text]) == capture_from_records([aware])
