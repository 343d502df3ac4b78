"""Imports started from the dashboard: the uploaded file is stored, then a worker imports it.

The worker runs the same import service as ``manage.py import_events`` and writes its
progress to the job row, which the upload page polls.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from aframes_web.streams.importing import (
    ImportAborted,
    ImportRefused,
    ImportSummary,
    describe,
    import_plan,
    run_import,
)
from aframes_web.streams.models import ImportJob
from aframes_web.teams.models import Team

PROGRESS_EVERY_S = 1.0  # how often a running job writes its counts (one UPDATE per second)


def upload_dir() -> Path:
    folder = Path(settings.VAR_DIR) / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# An upload still being written by a live request is younger than this; older files in the
# incoming folder were left by a process killed mid-upload.
INCOMING_STALE_S = 86_400.0


def incoming_sweep(*, now: float | None = None) -> int:
    """Delete what killed uploads left in ``FILE_UPLOAD_TEMP_DIR`` (older than a day); returns
    how many files went. Beat runs it hourly."""
    folder = Path(settings.FILE_UPLOAD_TEMP_DIR)
    moment = time.time() if now is None else now
    removed = 0
    for path in folder.iterdir() if folder.is_dir() else ():
        try:
            if path.is_file() and moment - path.stat().st_mtime > INCOMING_STALE_S:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue  # a request finished with it meanwhile
    return removed


def import_job_create(
    *,
    team: Team,
    user: AbstractBaseUser | None,
    format_name: str,
    entity_key: str,
    upload: UploadedFile,
    scope: str = "",
    tz: str = "",
) -> ImportJob:
    """Store the upload and queue its import after the transaction commits."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", upload.name or "upload")[-100:]
    target = upload_dir() / f"{uuid.uuid4().hex}-{safe}"
    with target.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    with transaction.atomic():
        job = ImportJob.objects.create(
            team=team,
            created_by=user,
            format=format_name,
            entity_key=entity_key,
            scope=scope,
            timezone=tz,
            original_name=upload.name or safe,
            stored_path=str(target),
            size_bytes=target.stat().st_size,
        )
        from aframes_web.streams.tasks import run_import_job

        transaction.on_commit(lambda: run_import_job.delay(job.pk))
    return job


def _as_uploaded(value: Any, job: ImportJob) -> Any:
    """``value`` (text, or JSON-like data holding text) with the upload's place on this server
    replaced by the name it was uploaded under: the people who read a job never see server
    paths (readers name the file they read in their messages and line locations)."""
    stored = Path(job.stored_path)
    if isinstance(value, str):
        return value.replace(str(stored), job.original_name).replace(stored.name, job.original_name)
    if isinstance(value, dict):
        return {k: _as_uploaded(v, job) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_uploaded(v, job) for v in value]
    return value


def import_job_run(*, job_id: int) -> None:
    """Run one job; safe to repeat (the import itself is idempotent on source keys)."""
    claimed = ImportJob.objects.filter(
        pk=job_id, status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
    ).update(status=ImportJob.Status.RUNNING)
    if not claimed:
        return
    job = ImportJob.objects.select_related("team").get(pk=job_id)
    path = Path(job.stored_path)
    last = [0.0]

    def progress(summary: ImportSummary) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_EVERY_S:
            return
        last[0] = now
        ImportJob.objects.filter(pk=job.pk).update(
            progress_bytes=getattr(plan.reader, "bytes_read", 0),
            read=summary.read,
            imported=summary.imported,
            duplicates=summary.duplicates,
            rejected=sum(summary.rejected.values()),
        )

    try:
        plan = import_plan(
            team=job.team,
            format_name=job.format,
            path=path,
            entity_key=job.entity_key,
            scope=job.scope or None,
            tz=job.timezone or None,
        )
        summary = run_import(plan, progress=progress)
    except (ImportRefused, ImportAborted) as err:
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportJob.Status.FAILED,
            error=_as_uploaded(str(err), job),
            finished_at=timezone.now(),
        )
    except Exception as err:
        # Say so on the page, then let the task fail loudly in the worker log.
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportJob.Status.FAILED,
            error=f"The import stopped unexpectedly ({type(err).__name__}); see the worker log.",
            finished_at=timezone.now(),
        )
        path.unlink(missing_ok=True)
        raise
    else:
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportJob.Status.DONE,
            progress_bytes=job.size_bytes,
            read=summary.read,
            imported=summary.imported,
            duplicates=summary.duplicates,
            rejected=sum(summary.rejected.values()),
            summary=_as_uploaded(summary.as_dict() | {"problems": summary.problems}, job),
            report=_as_uploaded(
                describe(
                    summary,
                    job.original_name,
                    f"{job.team.slug}/{job.entity_key}",
                    plan.multi_entity,
                ),
                job,
            ),
            finished_at=timezone.now(),
        )
    path.unlink(missing_ok=True)  # the events are stored; the upload is not kept
