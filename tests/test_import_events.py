from __future__ import annotations

import gzip
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from aframes_web.streams.models import Entity, Event
from tests.conftest import snapshot

pytestmark = pytest.mark.django_db


def _write(path: Path, items: list, extra_lines: tuple[str, ...] = ()) -> Path:
    path.write_text("\n".join([json.dumps(i) for i in items] + list(extra_lines)) + "\n")
    return path


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_events", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_export_reimports_into_another_entity(owner_api, desktop, team, tmp_path) -> None:
    owner_api.post(
        "/api/v1/entities/alice-laptop/events",
        [snapshot(f"2026-03-02T08:00:{i:02d}Z", f"s{i}") for i in range(5)],
    )
    answer = owner_api.get(
        "/api/v1/entities/alice-laptop/events", headers={"Accept": "application/x-ndjson"}
    )
    export = tmp_path / "export.jsonl"
    export.write_bytes(b"".join(answer.streaming_content))
    out, _ = _run(
        "jsonl",
        str(export),
        "--team",
        "acme",
        "--entity",
        "copy",
        "--scope",
        "desktop",
        "--tz",
        "Europe/Berlin",
        "--json",
    )
    assert json.loads(out) == {
        "read": 5,
        "imported": 5,
        "duplicates": 0,
        "dropped_text_fields": 0,
        "rejected": {},
    }
    copy = Entity.objects.get(key="copy")
    assert copy.timezone == "Europe/Berlin"
    assert sorted(Event.objects.filter(entity=copy).values_list("source_key", flat=True)) == sorted(
        f"s{i}" for i in range(5)
    )


def test_rerun_is_idempotent_and_extended_file_imports_only_new(desktop, tmp_path) -> None:
    items = [snapshot(f"2026-03-02T08:00:{i:02d}Z", f"s{i}") for i in range(4)]
    path = _write(tmp_path / "a.jsonl", items)
    args = ("jsonl", str(path), "--team", "acme", "--entity", "alice-laptop", "--json")
    assert json.loads(_run(*args)[0])["imported"] == 4
    again = json.loads(_run(*args)[0])
    assert again["imported"] == 0 and again["duplicates"] == 4
    _write(path, items + [snapshot("2026-03-02T09:00:00Z", "s9")])
    assert json.loads(_run(*args)[0])["imported"] == 1


def test_bad_lines_are_reported_with_file_and_line(desktop, tmp_path) -> None:
    path = _write(
        tmp_path / "bad.jsonl",
        [snapshot("2026-03-02T08:00:00Z", "ok")],
        ('{"occurred_at": "2026-03-02T08:00:00", "kind": "snapshot", "payload": {}}', "{broken"),
    )
    out, err = _run("jsonl", str(path), "--team", "acme", "--entity", "alice-laptop")
    assert "read 3, imported 1, duplicates 0, rejected 2 (occurred_at: 1, unreadable: 1)" in out
    assert "bad.jsonl:2: occurred_at:" in err and "bad.jsonl:3: not valid JSON" in err


def test_an_event_from_the_future_is_a_rejected_line(desktop, tmp_path) -> None:
    path = _write(
        tmp_path / "clock.jsonl",
        [snapshot("2026-03-02T08:00:00Z", "ok"), snapshot("2150-01-01T08:00:00Z", "wrong clock")],
    )
    out, err = _run("jsonl", str(path), "--team", "acme", "--entity", "alice-laptop")
    assert "read 2, imported 1, duplicates 0, rejected 1 (occurred_at: 1)" in out
    assert "clock.jsonl:2: occurred_at:" in err and "past the latest moment" in err


def test_strict_stops_at_the_first_bad_line(desktop, tmp_path) -> None:
    path = _write(tmp_path / "bad.jsonl", [snapshot("2026-03-02T08:00:00Z", "ok")], ("{x",))
    with pytest.raises(CommandError, match=r"bad.jsonl:2: not valid JSON"):
        _run("jsonl", str(path), "--team", "acme", "--entity", "alice-laptop", "--strict")


def test_gzip_files_are_read(desktop, tmp_path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(json.dumps(snapshot("2026-03-02T08:00:00Z", "z")).encode()))
    out, _ = _run("jsonl", str(path), "--team", "acme", "--entity", "alice-laptop", "--json")
    assert json.loads(out)["imported"] == 1


def test_clear_errors_for_missing_team_entity_file_and_mismatches(desktop, tmp_path) -> None:
    path = _write(tmp_path / "a.jsonl", [])
    with pytest.raises(CommandError, match="No team 'nope'"):
        _run("jsonl", str(path), "--team", "nope", "--entity", "x")
    with pytest.raises(CommandError, match="pass a scope"):
        _run("jsonl", str(path), "--team", "acme", "--entity", "new-one")
    with pytest.raises(CommandError, match="missing.jsonl does not exist"):
        _run("jsonl", str(tmp_path / "missing.jsonl"), "--team", "acme", "--entity", "x")
    with pytest.raises(CommandError, match="is a desktop entity, not home"):
        _run("jsonl", str(path), "--team", "acme", "--entity", "alice-laptop", "--scope", "home")
    with pytest.raises(CommandError, match="uses time zone Europe/Berlin"):
        _run("jsonl", str(path), "--team", "acme", "--entity", "alice-laptop", "--tz", "UTC")


def test_items_for_many_entities_are_stored_before_the_end(team, tmp_path) -> None:
    from aframes_web.streams.importers import SourceItem
    from aframes_web.streams.importing import PENDING_BATCHES, import_items
    from aframes_web.streams.services import entity_create

    entities = {f"e{i}": entity_create(team=team, key=f"e{i}", scope="desktop") for i in range(40)}
    stored_during: list[int] = []
    items = [
        SourceItem(f"x:{i}", item=snapshot("2026-03-02T08:00:00Z", f"k{i}"), entity=f"e{i}")
        for i in range(40)
    ]

    def route(item: SourceItem):
        stored_during.append(Event.objects.count())
        return entities[item.entity]

    summary = import_items(items=items, route=route, batch_size=2)
    assert summary.imported == 40
    # With batches of 2, at most 2 x PENDING_BATCHES items wait before everything is stored.
    assert max(stored_during) >= 40 - 2 * PENDING_BATCHES


def test_a_line_too_long_to_hold_stops_the_import_saying_where(desktop, tmp_path, settings) -> None:
    settings.AFRAMES_IMPORT_MAX_LINE_MB = 1
    path = _write(
        tmp_path / "long.jsonl",
        [snapshot("2026-03-02T08:00:00Z", "a"), snapshot("2026-03-02T08:00:01Z", "b")],
        ('{"pad": "' + "x" * (2 << 20) + '"}', json.dumps(snapshot("2026-03-02T08:00:02Z", "c"))),
    )
    with pytest.raises(CommandError, match=r"long.jsonl: line 3 is longer than 1 MiB"):
        _run("jsonl", str(path), "--team", "acme", "--entity", "alice-laptop", "--batch-size", "1")
    # The batches before the line are stored; nothing from it on is read.
    assert set(Event.objects.values_list("source_key", flat=True)) == {"a", "b"}


def test_a_gzip_bomb_stops_the_import_instead_of_holding_the_worker(
    desktop, tmp_path, settings
) -> None:
    settings.AFRAMES_IMPORT_MAX_UNPACK_RATIO = 2
    path = tmp_path / "bomb.jsonl.gz"
    first = json.dumps(snapshot("2026-03-02T08:00:00Z", "a")).encode() + b"\n"
    path.write_bytes(gzip.compress(first + b"\n" * (80 << 20)))  # ~80 KiB unpacking to 80 MiB
    with pytest.raises(CommandError, match=r"bomb.jsonl.gz: unpacks to more than"):
        _run("jsonl", str(path), "--team", "acme", "--entity", "alice-laptop", "--batch-size", "1")
    assert list(Event.objects.values_list("source_key", flat=True)) == ["a"]
