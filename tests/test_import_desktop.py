"""screenpipe and ActivityWatch files through import_events, and back out through the compiler."""

from __future__ import annotations

import json
from datetime import date
from io import StringIO
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command

from aframes_web.streams.models import Event
from benchmark.synthetic.desktop import generate_day
from benchmark.synthetic.native import write_activitywatch, write_screenpipe
from compiler.document import compile_day, day_window
from compiler.sources import open_source
from compiler.sources.events import capture_from_records

pytestmark = pytest.mark.django_db
DAY = date(2026, 3, 3)
TZ = "Europe/Berlin"


def _import(*args: str) -> dict:
    out = StringIO()
    call_command("import_events", *args, "--team", "acme", "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


@pytest.fixture
def capture_db(tmp_path: Path) -> Path:
    path = tmp_path / "capture.sqlite"
    write_screenpipe(path, generate_day(DAY, seed=3))
    return path


def test_screenpipe_import_is_complete_idempotent_and_private(team, capture_db) -> None:
    first = _import("screenpipe", str(capture_db), "--entity", "laptop", "--tz", TZ)
    capture = open_source(f"screenpipe:{capture_db}")
    trees = capture.elements_for([s.id for s in capture.snapshots])
    expected = len(capture.snapshots) + len(capture.inputs) + len(trees)
    assert first["imported"] == expected and first["rejected"] == {}
    typed = sum(1 for e in capture.inputs if e.text)
    assert typed and first["dropped_text_fields"] == typed
    assert not any("text" in e.payload for e in Event.objects.filter(kind="input"))
    again = _import("screenpipe", str(capture_db), "--entity", "laptop")
    assert again["imported"] == 0 and again["duplicates"] == expected


def test_stored_capture_compiles_like_the_file(team, capture_db) -> None:
    _import("screenpipe", str(capture_db), "--entity", "laptop", "--tz", TZ)
    records = [
        {
            "id": e.id,
            "occurred_at": e.occurred_at.isoformat(),
            "kind": e.kind,
            "source_key": e.source_key,
            "monitor": e.monitor,
            "payload": e.payload,
        }
        for e in Event.objects.order_by("id")
    ]
    start, end = day_window(DAY, ZoneInfo(TZ))
    from_store = compile_day(capture_from_records(records, start - 300, end + 300), DAY, TZ)
    from_file = compile_day(
        open_source(f"screenpipe:{capture_db}", start - 300, end + 300), DAY, TZ
    )
    ours, theirs = from_store.document, from_file.document
    assert ours["coverage"]["active_minutes"] == theirs["coverage"]["active_minutes"]
    assert ours["coverage"]["inputs"] == theirs["coverage"]["inputs"]
    assert [(f["app"], f["duration_min"], f["pages"]) for f in ours["frames"]] == [
        (f["app"], f["duration_min"], f["pages"]) for f in theirs["frames"]
    ]


def test_activitywatch_import_keeps_afk_as_absences(team, tmp_path) -> None:
    export = tmp_path / "aw.json"
    write_activitywatch(export, generate_day(DAY, seed=3))
    summary = _import("activitywatch", str(export), "--entity", "aw-laptop", "--tz", TZ)
    assert summary["imported"] > 0 and summary["rejected"] == {}
    assert any("every 30 s" in note for note in summary["notes"])
    absences = Event.objects.filter(kind="absence")
    assert absences.exists()
    assert all(a.payload["end"] > a.occurred_at.isoformat()[:19] for a in absences)
    assert _import("activitywatch", str(export), "--entity", "aw-laptop")["imported"] == 0


def test_unreadable_database_is_one_clear_error(team, tmp_path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    summary = _import("screenpipe", str(junk), "--entity", "x", "--scope", "desktop")
    assert summary["imported"] == 0 and summary["rejected"] == {"unreadable": 1}
