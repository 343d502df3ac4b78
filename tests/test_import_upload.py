"""Importing from the dashboard: upload, background job, progress, summary."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from aframes_web.streams.models import Event, ImportJob
from aframes_web.streams.uploads import upload_dir
from tests.conftest import snapshot

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def own_var_dir(settings, tmp_path) -> None:
    """Uploads and held files in this test's own folder: tests run in parallel processes, and
    these check what the folders hold."""
    settings.VAR_DIR = tmp_path


def _jsonl(*items: dict, extra: str = "") -> bytes:
    return ("\n".join(json.dumps(i) for i in items) + "\n" + extra).encode()


def _post(client: Client, content: bytes, **fields: str):
    data = {
        "format": "jsonl",
        "entity": "laptop",
        "scope": "desktop",
        "timezone": "Europe/Berlin",
        **fields,
        "file": SimpleUploadedFile("day.jsonl", content),
    }
    return client.post("/t/acme/import/", data)


def test_owner_uploads_and_sees_the_summary(owner) -> None:
    client = Client()
    client.force_login(owner)
    answer = _post(
        client,
        _jsonl(
            snapshot("2026-03-02T08:00:00Z", "a"),
            snapshot("2026-03-02T08:00:05Z", "b"),
            extra="{bad\n",
        ),
    )
    job = ImportJob.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/t/acme/import/{job.pk}/"
    # Tasks run inline in tests: the job is done by the time the page is asked for.
    page = client.get(answer["Location"])
    assert page.status_code == 200
    text = page.content.decode()
    assert "Done" in text and "imported 2" in text and "day.jsonl:3: not valid JSON" in text
    assert Event.objects.count() == 2
    assert not any(upload_dir().iterdir())  # the upload is not kept once imported
    again = _post(client, _jsonl(snapshot("2026-03-02T08:00:00Z", "a")))
    assert ImportJob.objects.get(pk=int(again["Location"].split("/")[-2])).duplicates == 1


def test_polling_returns_the_status_partial(owner) -> None:
    client = Client()
    client.force_login(owner)
    location = _post(client, _jsonl(snapshot("2026-03-02T08:00:00Z", "a")))["Location"]
    partial = client.get(location, headers={"HX-Request": "true"})
    assert partial.content.lstrip().startswith(b'<div id="status"')
    assert b"hx-trigger" not in partial.content  # finished jobs stop polling


def test_refused_imports_fail_with_the_reason(owner) -> None:
    client = Client()
    client.force_login(owner)
    location = _post(client, b"{}", entity="brand-new", scope="")["Location"]
    job = ImportJob.objects.get()
    assert job.status == ImportJob.Status.FAILED and "pass a scope" in job.error
    assert "pass a scope" in client.get(location).content.decode()


def test_form_errors_are_shown_and_nothing_is_queued(owner) -> None:
    client = Client()
    client.force_login(owner)
    page = _post(client, b"{}", timezone="Mars/Base", entity="bad key!")
    assert page.status_code == 200
    assert b"IANA time zone" in page.content and b"letters, digits" in page.content
    assert not ImportJob.objects.exists()


def test_viewers_cannot_upload_and_outsiders_see_nothing(owner, member, outsider) -> None:
    viewer = Client()
    viewer.force_login(member)
    assert viewer.get("/t/acme/import/").status_code == 200
    assert _post(viewer, b"{}").status_code == 403
    stranger = Client()
    stranger.force_login(outsider)
    assert stranger.get("/t/acme/import/").status_code == 404
    owner_client = Client()
    owner_client.force_login(owner)
    location = _post(owner_client, _jsonl(snapshot("2026-03-02T08:00:00Z", "a")))["Location"]
    assert stranger.get(location).status_code == 404


def test_a_job_never_shows_where_the_upload_lies_on_the_server(owner) -> None:
    client = Client()
    client.force_login(owner)
    data = {
        "format": "activitywatch",
        "entity": "laptop",
        "scope": "desktop",
        "timezone": "Europe/Berlin",
        "file": SimpleUploadedFile("aw-export.json", b"{not json"),
    }
    location = client.post("/t/acme/import/", data)["Location"]
    job = ImportJob.objects.get()
    page = client.get(location).content.decode()
    stored = job.stored_path.rsplit("/", 1)[-1]
    shown = page + job.error + job.report + json.dumps(job.summary)
    assert "aw-export.json" in shown and "not a JSON ActivityWatch export" in shown
    assert str(upload_dir()) not in shown and stored not in shown


def test_a_file_past_the_upload_limit_is_refused_with_the_command_that_imports_it(
    owner, settings
) -> None:
    settings.AFRAMES_MAX_UPLOAD_MB = 1
    client = Client()
    client.force_login(owner)
    page = _post(client, b"\n" * ((1 << 20) + 1))
    assert page.status_code == 200
    text = page.content.decode()
    assert "the import page takes at most 1 MiB" in text and "manage.py import_events" in text
    assert not ImportJob.objects.exists()


def test_uploads_a_killed_request_left_are_swept_after_a_day(settings) -> None:
    import os
    import time
    from pathlib import Path

    from aframes_web.streams.uploads import incoming_sweep

    folder = Path(settings.FILE_UPLOAD_TEMP_DIR)
    old, fresh = folder / "cut-off.upload", folder / "in-progress.upload"
    old.write_bytes(b"x")
    fresh.write_bytes(b"y")
    day_ago = time.time() - 86_400 - 60
    os.utime(old, (day_ago, day_ago))
    assert incoming_sweep() == 1
    assert not old.exists() and fresh.exists()
    fresh.unlink()
    assert "streams.sweep_incoming_uploads" in {
        entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }


def test_a_file_the_reader_cannot_finish_fails_the_job_saying_where(owner, settings) -> None:
    settings.AFRAMES_IMPORT_MAX_LINE_MB = 1
    client = Client()
    client.force_login(owner)
    content = _jsonl(snapshot("2026-03-02T08:00:00Z", "a"), extra='{"pad": "' + "x" * (2 << 20))
    _post(client, content)
    job = ImportJob.objects.get()
    assert job.status == "failed"
    assert job.error.startswith("Reading failed after day.jsonl:1 (FileTooStrange: day.jsonl: ")
    # The first line was in the batch being read: nothing was stored, and the job says so.
    assert "line 2 is longer than 1 MiB" in job.error and "the 0 events stored" in job.error
    assert Event.objects.count() == 0
    assert not any(upload_dir().iterdir())
