"""manage.py certify: PASS on honest data, FAIL on each kind of broken pipeline."""

from __future__ import annotations

import itertools
import json
from datetime import date, timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

import aframes_web.activity.services as services
from aframes_web.activity.models import DayDocument, Frame
from aframes_web.activity.services import day_compile
from aframes_web.streams.importers import SourceItem
from aframes_web.streams.importing import import_items
from aframes_web.streams.models import Event
from benchmark.synthetic.desktop import generate_days
from compiler.document import compile_window
from tests.conftest import store_snapshot_by_hand

pytestmark = pytest.mark.django_db

START = date(2026, 3, 2)


@pytest.fixture
def history(desktop, django_capture_on_commit_callbacks) -> Any:
    """Four working days of the synthetic person, compiled as ingestion would."""
    records = generate_days(START, 4, seed=11, tz=desktop.timezone)
    items = (SourceItem(f"t:{n}", item=r) for n, r in enumerate(records, 1))
    with django_capture_on_commit_callbacks(execute=True):
        import_items(entity=desktop, items=items)
    assert DayDocument.objects.filter(entity=desktop).count() == 4
    return desktop


def _certify(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("certify", *args, stdout=out)
    except SystemExit as stop:
        return int(stop.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_certify_passes_on_incrementally_compiled_days(history) -> None:
    status, text = _certify()
    assert status == 0, text
    assert text.splitlines()[-1] == "certify: PASS"
    assert text.count(" ok ") >= 4 and "generated_at: excluded" in text
    status, text = _certify("--entity", history.key, "--json", "--days", "2")
    report = json.loads(text)
    assert status == 0 and report["passed"] is True
    (entity,) = report["entities"]
    assert [d["day"] for d in entity["days"]] == ["2026-03-04", "2026-03-05"]
    assert all(d["recompile"] and d["rebuild"] and d["append_only"] for d in entity["days"])
    assert entity["median_ms"] > 0 and entity["cost_flat"] is True


def test_a_compiler_that_only_changes_generated_at_still_passes(history, monkeypatch) -> None:
    stamps = itertools.count()

    def stamped(*args: Any, **kwargs: Any) -> Any:
        kwargs["generated_at"] = f"2026-01-01T00:00:{next(stamps) % 60:02d}+00:00"
        return compile_window(*args, **kwargs)

    monkeypatch.setattr(services, "compile_window", stamped)
    assert _certify()[0] == 0


def test_a_nondeterministic_compiler_fails(history, monkeypatch) -> None:
    calls = itertools.count()

    def flaky(*args: Any, **kwargs: Any) -> Any:
        compiled = compile_window(*args, **kwargs)
        compiled.document["coverage"]["rows_analyzed"] += next(calls)
        return compiled

    monkeypatch.setattr(services, "compile_window", flaky)
    status, text = _certify("--json")
    report = json.loads(text)
    assert status == 1 and report["passed"] is False
    days = report["entities"][0]["days"]
    assert not any(d["recompile"] for d in days)
    assert "differ beyond generated_at" in days[0]["problems"][0]
    assert _certify()[1].splitlines()[-1] == "certify: FAIL"


def test_a_stored_document_behind_its_events_fails(history) -> None:
    # An event stored without its compile (dispatch lost): the stored document is stale.
    Event.objects.create(
        entity=history,
        occurred_at=timezone.datetime.fromisoformat("2026-03-03T12:00:30+01:00"),
        kind="snapshot",
        source_key="late-without-compile",
        monitor="0",
        payload={"app": "Terminal", "window": "ssh"},
        received_at=timezone.now(),
    )
    status, text = _certify()
    assert status == 1
    assert "2026-03-03: stored document is behind" in text
    day_compile(entity_id=history.pk, day=date(2026, 3, 3))
    status, text = _certify()
    assert status == 0, text


def test_a_version_written_without_new_events_of_its_day_fails(history) -> None:
    def different(*args: Any, **kwargs: Any) -> Any:
        compiled = compile_window(*args, **kwargs)
        compiled.document["blind_spots"].append("rewritten")
        return compiled

    # E.g. a pipeline that rewrites an earlier day while compiling a later one.
    day_compile(entity_id=history.pk, day=START, compile_fn=different)
    status, text = _certify()
    assert status == 1
    assert "2026-03-02: version 2 was written without new events of its own day" in text
    assert "2026-03-02: rebuild from scratch gives sha256" in text


def test_certify_explains_what_it_cannot_find(history, other_team) -> None:
    with pytest.raises(CommandError, match="No desktop entity to certify for entity 'nope'"):
        _certify("--entity", "nope")
    with pytest.raises(CommandError, match="--days must be at least 1"):
        _certify("--days", "0")
    with pytest.raises(CommandError, match="team 'globex'"):
        _certify("--team", "globex")


def test_days_are_listed_once_in_local_time(history) -> None:
    from aframes_web.activity.services import entity_event_days

    assert entity_event_days(entity=history) == [START + timedelta(days=n) for n in range(4)]


def test_certify_passes_on_every_day_of_the_bundled_demo_data(
    db, django_capture_on_commit_callbacks, settings, tmp_path
) -> None:
    settings.VAR_DIR = tmp_path
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=StringIO())
    status, text = _certify("--team", "demo", "--json")
    report = json.loads(text)
    (entity,) = report["entities"]
    assert status == 0 and report["passed"], [d["problems"] for d in entity["days"]]
    assert len(entity["days"]) == 5


def test_a_late_event_with_a_lower_id_is_a_legitimate_new_version(history) -> None:
    day = date(2026, 3, 3)
    top = Event.objects.latest("id").id

    store_snapshot_by_hand(history, top + 1000, "2026-03-03T21:10:00+01:00")
    day_compile(entity_id=history.pk, day=day)
    # Committed after a compile read past its id:
    store_snapshot_by_hand(history, top + 500, "2026-03-03T21:11:00+01:00")
    day_compile(entity_id=history.pk, day=day)
    versions = DayDocument.objects.filter(entity=history, day=day).order_by("version")
    assert versions[2].watermark == versions[1].watermark
    status, text = _certify()
    assert status == 0, text


@pytest.mark.parametrize("damage", ["body", "context", "frame"])
def test_stored_state_that_differs_from_its_document_fails(history, damage) -> None:
    document = DayDocument.objects.get(entity=history, day=START, current=True)
    if damage == "body":
        body = document.body
        body["frames"][0]["app"] = "Tampered"
        DayDocument.objects.filter(pk=document.pk).update(body=body)
        expected = "the stored body does not hash to its sha256"
    elif damage == "context":
        DayDocument.objects.filter(pk=document.pk).update(context=document.context + "x\n")
        expected = "the stored context block differs from the rebuild's"
    else:
        frame = Frame.objects.filter(document=document).first()
        Frame.objects.filter(pk=frame.pk).update(clicks=frame.clicks + 1)
        expected = "the materialised frames differ from the stored document's frames"
    status, text = _certify()
    assert status == 1 and f"2026-03-02: {expected}" in text


def test_a_short_history_says_it_is_too_short_to_judge_cost(history) -> None:
    status, text = _certify("--days", "2")
    assert status == 0
    assert "too few days to compare the first half with the second (needs 8)" in text


def test_compile_cost_that_grows_with_history_fails_and_noise_does_not() -> None:
    from aframes_web.activity.certify import MIN_DAYS_FOR_TREND, cost_flat

    flat = [100.0, 130.0, 90.0, 110.0, 95.0, 120.0, 105.0, 100.0]
    assert cost_flat(flat)
    growing = [100.0 + 40.0 * n for n in range(MIN_DAYS_FOR_TREND)]  # 100 .. 380 ms
    assert not cost_flat(growing)
    assert cost_flat([5.0, 5.0, 5.0, 5.0, 20.0, 20.0, 20.0, 20.0])  # 4x, but under the noise floor
    assert cost_flat(growing[: MIN_DAYS_FOR_TREND - 1])  # too few days to judge
