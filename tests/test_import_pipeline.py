"""The pipelined import: a forked reader process stages batches, this process stores them."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from aframes_web.streams.importers import SourceItem
from aframes_web.streams.importing import (
    ImportAborted,
    ImportFailed,
    ImportPlan,
    ImportRefused,
    import_plan,
    run_import,
)
from aframes_web.streams.importing import pipeline_available as real_pipeline_available
from aframes_web.streams.models import Entity, Event
from aframes_web.streams.services import entity_create
from benchmark.synthetic.gharchive import write_file
from tests.conftest import snapshot

pytestmark = pytest.mark.django_db
TEST_PROCESS = os.getpid()


@pytest.fixture(autouse=True)
def forking_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the pipeline, so it must run. A test process that served a page
    earlier keeps pytest-django's live server thread for the session, and the import would
    then (rightly) refuse to fork and run in-process. That thread idles in its accept loop
    and the reader child touches no lock it could hold, so forking beside it is safe here."""
    from aframes_web.streams import importing

    monkeypatch.setattr(importing, "pipeline_available", lambda: True)


class ListReader:
    """A reader over prepared items that fails (or dies) after ``fail_after`` of them."""

    def __init__(self, items: list[SourceItem], fail_after: int | None = None, die=False) -> None:
        self.items, self.fail_after, self.die = items, fail_after, die
        self.bytes_read = 0
        self.notes: list[str] = []

    def __iter__(self) -> Iterator[SourceItem]:
        for count, item in enumerate(self.items):
            if count == self.fail_after:
                if self.die:
                    # Only the forked reader dies: killing the test process would end the run.
                    assert os.getpid() != TEST_PROCESS, "the import did not fork its reader"
                    os.kill(os.getpid(), signal.SIGKILL)
                raise RuntimeError("disk on fire")
            self.bytes_read += 1
            yield item
        self.notes.append("read to the end")


def _plan(entity: Entity, reader: ListReader) -> ImportPlan:
    return ImportPlan(reader, len(reader.items), entity, None, False, entity.scope)


def _snapshots(count: int) -> list[SourceItem]:
    return [
        SourceItem(
            f"f:{i + 1}", item=snapshot(f"2026-03-02T08:{i // 60:02d}:{i % 60:02d}Z", f"k{i}")
        )
        for i in range(count)
    ]


def _no_reader_left() -> None:
    assert multiprocessing.active_children() == []


def test_pipelined_import_stores_like_the_in_process_one(team, tmp_path: Path) -> None:
    path = write_file(tmp_path / "events.json.gz", 1500, seed=11, repos=4)
    summaries = {}
    for prefix, pipeline in (("piped", True), ("inline", False)):
        plan = import_plan(team=team, format_name="github", path=path, entity_key=prefix)
        summary = run_import(plan, batch_size=100, pipeline=pipeline).as_dict()
        summary["entities"] = {k.split(":", 1)[1]: n for k, n in summary["entities"].items()}
        summaries[prefix] = summary
    assert summaries["piped"] == summaries["inline"]
    assert summaries["piped"]["imported"] == 1500
    piped = Event.objects.filter(entity__key__startswith="piped:")
    inline = Event.objects.filter(entity__key__startswith="inline:")
    fields = ("source_key", "occurred_at", "kind", "monitor", "payload")
    assert sorted(piped.values_list(*fields)) == sorted(inline.values_list(*fields))
    again = import_plan(team=team, format_name="github", path=path, entity_key="piped")
    rerun = run_import(again, batch_size=100, pipeline=True)
    assert rerun.imported == 0 and rerun.duplicates == 1500
    _no_reader_left()


def test_reader_notes_bad_items_and_progress_come_across(desktop) -> None:
    items = _snapshots(30)
    items[4] = SourceItem("f:5", error="not valid JSON (x)")
    items[12] = SourceItem("f:13", item={**items[12].item, "kind": "nonsense"})
    reader = ListReader(items)
    seen: list[int] = []
    summary = run_import(
        _plan(desktop, reader),
        batch_size=10,
        pipeline=True,
        progress=lambda s: seen.append(reader.bytes_read),
    )
    assert (summary.read, summary.imported, dict(summary.rejected)) == (
        30,
        28,
        {"kind": 1, "unreadable": 1},
    )
    assert summary.problems[0] == "f:5: not valid JSON (x)"
    assert summary.problems[1].startswith("f:13: kind: is 'nonsense'")
    assert summary.notes == ["read to the end"]
    assert seen and seen[-1] == 30  # the reader process's position, mirrored here
    _no_reader_left()


def test_a_reader_failure_is_a_clear_error_and_keeps_what_was_stored(desktop) -> None:
    reader = ListReader(_snapshots(50), fail_after=25)
    with pytest.raises(ImportFailed) as failed:
        run_import(_plan(desktop, reader), batch_size=10, pipeline=True)
    message = str(failed.value)
    assert "Reading failed after f:25 (RuntimeError: disk on fire)" in message
    assert "the 20 events stored before it are kept" in message
    assert Event.objects.filter(entity=desktop).count() == 20  # the two full batches
    _no_reader_left()


def test_a_killed_reader_process_is_a_clear_error_and_keeps_what_was_stored(desktop) -> None:
    reader = ListReader(_snapshots(50), fail_after=35, die=True)
    with pytest.raises(ImportFailed, match=r"stopped unexpectedly \(exit code -9\)"):
        run_import(_plan(desktop, reader), batch_size=10, pipeline=True)
    assert Event.objects.filter(entity=desktop).count() == 30
    _no_reader_left()


def test_strict_stops_the_reader_at_the_first_bad_item(desktop) -> None:
    items = _snapshots(40)
    items[14] = SourceItem("f:15", item={**items[14].item, "occurred_at": "noon"})
    with pytest.raises(ImportAborted, match=r"^f:15: occurred_at: 'noon' is not an ISO 8601"):
        run_import(_plan(desktop, ListReader(items)), batch_size=10, strict=True, pipeline=True)
    assert Event.objects.filter(entity=desktop).count() == 10  # the batch before it
    _no_reader_left()


def test_a_storing_failure_ends_the_reader_process(team, tmp_path: Path) -> None:
    path = write_file(tmp_path / "events.json.gz", 300, seed=2, repos=2)
    plan = import_plan(team=team, format_name="github", path=path, entity_key="gh")
    # Routing refuses one repository's entity (it exists with another scope) mid-import.
    first = next(iter(plan.reader)).entity
    entity_create(team=team, key=f"gh:{first}", scope="desktop")
    plan = import_plan(team=team, format_name="github", path=path, entity_key="gh")
    with pytest.raises(ImportRefused, match="is a desktop entity, not code"):
        run_import(plan, batch_size=20, pipeline=True)
    _no_reader_left()


def test_copy_text_keeps_backslashes_tabs_and_line_ends(desktop) -> None:
    from aframes_web.streams.services import events_ingest

    tricky = "C:\\new\\table\twith\ttabs\nand\r\nlines \\N \\."
    item = snapshot("2026-03-02T08:00:00.000123Z", f"key\\{tricky}", window=tricky)
    item["monitor"] = "m\\1\t2"
    assert events_ingest(entity=desktop, items=[item]).accepted == 1
    stored = Event.objects.get(entity=desktop)
    assert stored.source_key == f"key\\{tricky}"
    assert stored.monitor == "m\\1\t2"
    assert stored.payload["window"] == tricky
    assert stored.occurred_at.isoformat() == "2026-03-02T08:00:00.000123+00:00"


def test_a_process_with_other_threads_imports_in_process_instead_of_forking(
    desktop, monkeypatch
) -> None:
    import threading

    from aframes_web.streams import importing

    monkeypatch.setattr(importing, "pipeline_available", real_pipeline_available)
    forks: list[str] = []
    real = multiprocessing.get_context
    monkeypatch.setattr(multiprocessing, "get_context", lambda m=None: forks.append(m) or real(m))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="a-pool-thread", daemon=True)
    other.start()
    try:
        summary = run_import(
            _plan(desktop, ListReader(_snapshots(30))), batch_size=10, pipeline=True
        )
    finally:
        stop.set()
        other.join()
    assert forks == [] and summary.imported == 30
    # A process alone (this one may keep pytest-django's live server thread for the session).
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    run_import(_plan(desktop, ListReader(_snapshots(30))), batch_size=10, pipeline=True)
    assert forks == ["fork"]  # alone again, the reader is forked as before


@pytest.mark.parametrize("pipeline", [True, False])
def test_a_reader_failure_reads_the_same_forked_or_in_process(desktop, monkeypatch, pipeline):
    from aframes_web.streams import importing

    if not pipeline:  # as in a process with other threads (a worker, a served test)
        monkeypatch.setattr(importing, "pipeline_available", lambda: False)
    reader = ListReader(_snapshots(50), fail_after=35)
    expected = (
        r"^Reading failed after f:35 \(RuntimeError: disk on fire\); the 30 events stored "
        r"before it are kept, and a rerun skips them\.$"
    )
    with pytest.raises(ImportFailed, match=expected):
        run_import(_plan(desktop, reader), batch_size=10, pipeline=True)
    assert Event.objects.filter(entity=desktop).count() == 30
