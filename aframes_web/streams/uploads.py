"""Imports started from the dashboard: the uploaded file is stored, then a worker imports it.

The worker runs the same import service as ``manage.py import_events`` and writes its
progress to the job row, which the upload page polls.
"""

from __future__ import annotations

import re
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from aframes_web import liveness
from aframes_web.hooks import Hook
from aframes_web.streams.importers.labels import plural
from aframes_web.streams.importing import (
    ImportAborted,
    ImportFailed,
    ImportRefused,
    ImportSummary,
    describe,
    import_plan,
    run_import,
)
from aframes_web.streams.models import ImportJob
from aframes_web.teams.models import Team

# Runs an import job in the background: the pipeline provides it (its import task).
job_queued: Hook[[int], None] = Hook("import job queued")
# How many benchmark runs wait for the worker of the bulk queues (settings.AFRAMES_QUEUE_GROUPS),
# queued at least as long ago as given: the benchmark app provides it.
runs_waiting: Hook[[datetime], int] = Hook("benchmark runs waiting")

# A long import runs in turns, since one bulk worker may serve every team (ARCHITECTURE.md,
# "Embedded default and scale-out"): once a turn has had the worker for AFRAMES_IMPORT_TURN_S
# and other bulk work waits, the job hands the worker over and queues itself behind that work.
# Its next turn reads the file again up to where it stopped (readers stream, and some carry
# state from line to line) without storing anything; a turn lasts at least this many times that
# re-reading, so re-reading is at most a third of any turn and an import run in turns takes at
# most half as long again as one run straight through (waiting for the others aside).
TURN_PER_REREAD = 3
# Other work counts as waiting once it has been queued this long: a free worker of a deployment
# with several takes a job within a second, and a handover to work that did not need it would
# cost the import a re-read for nothing.
WAITING_AFTER_S = 5.0


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
        transaction.on_commit(lambda: job_queued(job.pk))
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
    """Run one job; safe to repeat, and to run after a worker was lost in it.

    While it runs, the job's lock (``aframes_web/liveness.py``) says a living worker has it: a
    second delivery of the task leaves it alone, and reconciliation hands a job without one
    back (``import_job_lost``). A job run again after a lost worker resumes: the file is read
    from its start, the events stored before are recognised by their source keys and skipped,
    and the counts go on from the last ones written, after every stored batch.

    A run is one turn: with other imports or benchmark runs waiting (``waiting_for_bulk``), a
    turn past its time stops after a stored batch, keeps its counts in the job's summary and
    queues the job again behind them; the next turn skips the items read before.
    """
    with liveness.holding(liveness.IMPORT_JOB, job_id) as mine:
        if not mine:
            return  # a living worker runs it
        claimed = ImportJob.objects.filter(
            pk=job_id, status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
        ).update(
            status=ImportJob.Status.RUNNING,
            attempts=F("attempts") + 1,
            heartbeat_at=timezone.now(),
        )
        handed_over = bool(claimed) and _import_job_run(
            ImportJob.objects.select_related("team").get(pk=job_id)
        )
    if handed_over:
        job_queued(job_id)  # after letting go of the job: the next delivery may run it at once


def waiting_for_bulk(*, job_id: int) -> int:
    """Imports (other than ``job_id``) and benchmark runs waiting for a bulk worker."""
    since = timezone.now() - timedelta(seconds=WAITING_AFTER_S)
    imports = (
        ImportJob.objects.filter(status=ImportJob.Status.QUEUED)
        .exclude(pk=job_id)
        .filter(Q(heartbeat_at__lte=since) | Q(heartbeat_at=None, created_at__lte=since))
        .count()
    )
    return imports + runs_waiting(since)


def handed_over_note(job: ImportJob) -> str:
    """What the job page says of a job waiting for its next turn ("" for any other job)."""
    state = job.summary or {}
    turns = state.get("turns", 0)
    if job.status != ImportJob.Status.QUEUED or not turns:
        return ""
    waiting = plural(
        state.get("waiting", 0), "import or benchmark run", "imports or benchmark runs"
    )
    return (
        f"Waiting for its next turn: after {plural(turns, 'turn', 'turns')} on the worker it "
        f"handed the worker over to {waiting} queued behind it. The {job.imported:,} events it "
        f"stored are kept, and it goes on after item {job.read:,} of the file."
    )


def _import_job_run(job: ImportJob) -> bool:
    """One turn of a job; True when it handed the worker over and must be queued again."""
    path = Path(job.stored_path)
    state = job.summary or {}  # a running job's summary is what its earlier turns left
    # What earlier turns stored (they ended by handing over, not by a lost worker).
    earlier = ImportSummary.restored(state.get("carried"))
    turns, skip = state.get("turns", 0), state.get("read", 0)
    # Stored by an earlier, lost attempt at this turn: read again now, they come back as
    # duplicates.
    before = job.imported - earlier.imported if job.attempts > 1 else 0
    began = time.monotonic()

    def counts(summary: ImportSummary) -> dict[str, int]:
        return {
            "read": summary.read,
            "imported": earlier.imported + before + summary.imported,
            "duplicates": earlier.duplicates + max(0, summary.duplicates - before),
            "rejected": sum(earlier.rejected.values()) + sum(summary.rejected.values()),
        }

    def hand_over(summary: ImportSummary) -> bool:
        ran = time.monotonic() - began
        turn = max(settings.AFRAMES_IMPORT_TURN_S, TURN_PER_REREAD * summary.skip_s)
        return ran >= turn and waiting_for_bulk(job_id=job.pk) > 0

    def progress(summary: ImportSummary) -> None:
        # After every stored batch: what a resumed attempt continues from.
        ImportJob.objects.filter(pk=job.pk).update(
            progress_bytes=getattr(plan.reader, "bytes_read", 0),
            heartbeat_at=timezone.now(),
            **counts(summary),
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
        summary = run_import(plan, progress=progress, skip=skip, pause=hand_over)
    except (ImportRefused, ImportAborted, ImportFailed) as err:
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportJob.Status.FAILED,
            error=_as_uploaded(str(err), job),
            finished_at=timezone.now(),
        )
    except SoftTimeLimitExceeded:
        stored = ImportJob.objects.filter(pk=job.pk).values_list("imported", flat=True).first()
        limit = settings.AFRAMES_IMPORT_TIME_LIMIT
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportJob.Status.FAILED,
            error=(
                f"The import ran past its time limit (AFRAMES_IMPORT_TIME_LIMIT, {limit:,} s) "
                f"and was stopped; the {stored or 0:,} events stored before it are kept. Ask "
                "whoever runs this Aframes to raise the limit, or split the file, and upload it "
                "again: the events already stored are recognised and skipped."
            ),
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
        totals = counts(summary)
        if before:
            summary.imported, summary.duplicates = (
                before + summary.imported,
                max(0, summary.duplicates - before),
            )
            summary.notes.append(
                f"resumed after a lost worker (attempt {job.attempts}): the {before:,} events "
                "stored before it count as imported"
            )
        summary = earlier.then(summary)
        if summary.paused:
            waiting = waiting_for_bulk(job_id=job.pk)
            ImportJob.objects.filter(pk=job.pk).update(
                status=ImportJob.Status.QUEUED,
                attempts=0,  # this turn ended as it should; attempts count lost workers
                heartbeat_at=timezone.now(),
                progress_bytes=getattr(plan.reader, "bytes_read", 0),
                summary=_as_uploaded(
                    {
                        "carried": summary.carried(),
                        "read": summary.read,
                        "turns": turns + 1,
                        "waiting": waiting,
                        "reread_s": round(state.get("reread_s", 0.0) + summary.skip_s, 1),
                        "problems": summary.problems,
                    },
                    job,
                ),
                **totals,
            )
            return True
        if turns:
            reread = state.get("reread_s", 0.0) + summary.skip_s
            summary.notes.append(
                f"imported in {turns + 1} turns, handing the worker over "
                f"{plural(turns, 'time', 'times')} to imports or benchmark runs "
                "queued behind it; reading the file again up to where each turn had stopped "
                f"took {reread:.0f} s"
            )
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportJob.Status.DONE,
            progress_bytes=job.size_bytes,
            summary=_as_uploaded(
                summary.as_dict()
                | {"problems": summary.problems}
                | ({"turns": turns + 1} if turns else {}),
                job,
            ),
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
            **totals,
        )
    path.unlink(missing_ok=True)  # the events are stored; the upload is not kept
    return False


def import_job_lost(*, job_id: int, attempts: int, act: bool = True) -> str:
    """A job said to be queued or running that no living worker has: queue it again to
    resume, or, after ``attempts`` runs or without its file, fail it saying why and delete
    the upload. Returns what was done (``act`` False: what would be)."""
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is None or job.status not in (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING):
        return "already ended"
    path = Path(job.stored_path)
    if job.attempts < attempts and path.is_file():
        if act:
            ImportJob.objects.filter(pk=job.pk, attempts=job.attempts).update(
                status=ImportJob.Status.QUEUED, heartbeat_at=timezone.now()
            )
            job_queued(job.pk)
        return "queued to resume" if act else "would be queued to resume"
    if path.is_file():
        lost = f"the worker running it was lost {job.attempts} times"
    else:
        lost = "its uploaded file is gone (the server's upload folder was cleared)"
    error = (
        f"This import could not finish: {lost}. The {job.imported:,} events stored before are "
        "kept, and importing the file again skips them."
    )
    if act:
        ImportJob.objects.filter(pk=job.pk, attempts=job.attempts).update(
            status=ImportJob.Status.FAILED, error=error, finished_at=timezone.now()
        )
        path.unlink(missing_ok=True)
    return "failed, saying so" if act else "would be failed, saying so"
