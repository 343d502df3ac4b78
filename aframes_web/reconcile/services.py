"""Reconciliation: every derived row held to the events it was derived from, and repaired.

ARCHITECTURE.md's derived state (day summaries, compiled documents, memory days) is rebuilt
from the append-only event store by background tasks. A task can be lost: its worker killed
mid-transaction, its message acknowledged and then its process gone, the broker restarted. The
rows then disagree with the events, and nothing would notice. This pass notices. Each derived
row records what it was derived from (a count and the highest event id, or an equivalent), and
one grouped query per entity says what the events are now:

* a **day summary** (``EntityDay``) holds the day's event count, first and last times and
  highest id; one that differs is recounted here, at once;
* a **compile** of a desktop day records on its claim row (``CompileRequest``) what it read;
  a day whose coverage differs, or that has no current document, is compiled again;
* a **memory day** (``Trajectory``) holds the events it was closed with; a closed day with
  more events stored, a day older than the newest closed one that memory never took in, and
  a due day nobody is closing are handed to ``memory.close_due`` (which rebuilds when events
  came late);
* an **import job** or **benchmark run** said to be running (or queued) has a living worker
  holding its lock (``aframes_web/liveness.py``); one without is resumed, queued again, or
  failed with a reason a person reads on its page.

Work younger than ``GRACE`` is in flight, not lost: its task is on its way. The pass is
idempotent and cheap enough for the beat (``AFRAMES_RECONCILE_INTERVAL_S``); ``manage.py
reconcile --check`` runs it without repairing.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from aframes_web import liveness
from aframes_web.activity.models import CompileRequest, DayDocument
from aframes_web.activity.services import (
    ABSENCE_LOOKBACK,
    COMPILE_LOCK_CLASS,
    FAILED_RETRY_AFTER,
    KINDS,
    day_bounds,
)
from aframes_web.pipeline.tasks import close_due, dispatch_compiles
from aframes_web.proactivestream.models import BenchmarkRun
from aframes_web.streams.models import Entity, EntityDay, Event, ImportJob
from aframes_web.streams.selectors import DayTally, day_tallies
from aframes_web.streams.services import entity_days_refresh
from aframes_web.streams.uploads import import_job_lost
from aframes_web.teams.models import Team
from memory.models import Trajectory
from memory.services.closing import MEMORY_LOCK_CLASS, compile_pending, days_due, late_in

# Work younger than this is on its way (a task queued, a refresh after a commit), not lost.
GRACE = timedelta(seconds=30)
# Times a lost import is resumed before it is failed (a file that kills its worker each time).
IMPORT_ATTEMPTS = 3
# Without PostgreSQL's locks, an import that has said nothing this long has no worker.
IMPORT_SILENT = timedelta(minutes=2)


@dataclass(frozen=True, slots=True)
class Drift:
    """One derived row that disagrees with the events (or work that nobody does)."""

    kind: str
    team: str
    entity: str | None  # key; None for team-level work (an import job, a run)
    day: date | None
    detail: str  # what disagrees, in words
    repair: str  # what the pass did (or, with --check, would do)

    def line(self) -> str:
        where = "/".join(p for p in (self.team, self.entity or "") if p)
        when = f" {self.day.isoformat()}" if self.day else ""
        return f"{self.kind:<22} {where}{when}: {self.detail}; {self.repair}"

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["day"] = self.day.isoformat() if self.day else None
        return out


@dataclass(slots=True)
class Report:
    drifts: list[Drift] = field(default_factory=list)
    checked: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("entities", "days", "compiled_days", "memory_days", "imports", "runs"), 0
        )
    )
    repaired: bool = False
    elapsed_ms: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "drifts": [d.as_dict() for d in self.drifts],
            "checked": dict(self.checked),
            "repaired": self.repaired,
            "elapsed_ms": round(self.elapsed_ms, 1),
        }


def reconcile(*, team: Team | None = None, repair: bool = True) -> Report:
    """Check every derived row of ``team`` (default: all teams) against the events; with
    ``repair``, recount, re-queue or fail what disagrees. Returns what was found."""
    began = time.perf_counter()
    now = timezone.now()
    report = Report(repaired=repair)
    entities = Entity.objects.select_related("team").order_by("pk")
    if team is not None:
        entities = entities.filter(team=team)
    running = _Running.now()
    for entity in entities.iterator():
        report.checked["entities"] += 1
        _entity(entity, now, running, repair, report)
    _imports(team, now, running, repair, report)
    _runs(team, now, running, repair, report)
    report.elapsed_ms = (time.perf_counter() - began) * 1000.0
    return report


@dataclass(frozen=True, slots=True)
class _Running:
    """What living workers hold right now (None: not known here, SQLite)."""

    compiles: set[int] | None  # entity ids with a compile in progress
    memory: set[int] | None  # entity ids with memory being closed or rebuilt
    imports: set[int] | None
    runs: set[int] | None

    @classmethod
    def now(cls) -> _Running:
        return cls(
            liveness.holders(COMPILE_LOCK_CLASS),
            liveness.holders(MEMORY_LOCK_CLASS),
            liveness.holders(liveness.IMPORT_JOB),
            liveness.holders(liveness.BENCHMARK_RUN),
        )


def _entity(entity: Entity, now: datetime, running: _Running, repair: bool, report: Report) -> None:
    desktop = entity.scope == Entity.Scope.DESKTOP
    tallies = day_tallies(entity=entity, kinds=KINDS if desktop else ())
    report.checked["days"] += len(tallies)
    settled = now - GRACE
    close_memory = _summaries(entity, tallies, settled, repair, report)
    if desktop:
        _compiles(entity, tallies, now, running, repair, report)
    close_memory |= _memory(entity, tallies, settled, running, report)
    if repair and close_memory:
        close_due.delay(entity.pk)


def _summaries(
    entity: Entity, tallies: dict[date, DayTally], settled: datetime, repair: bool, report: Report
) -> bool:
    """Day summaries against the events; recounted here. Returns whether any was wrong."""

    stored = {row.day: row for row in EntityDay.objects.filter(entity=entity)}
    wrong: list[date] = []
    for day, tally in tallies.items():
        row = stored.get(day)
        if row is not None and (row.event_count, row.watermark, row.first_at, row.last_at) == (
            tally.count,
            tally.top,
            tally.first_at,
            tally.last_at,
        ):
            continue
        if tally.received_at > settled:
            continue  # the refresh queued after those events committed is on its way
        said = f"the summary says {row.event_count}" if row else "no summary"
        kind = "summary_stale" if row else "summary_missing"
        if row and row.event_count == tally.count:
            said = f"the summary counted up to event {row.watermark}, not {tally.top}"
        report.drifts.append(
            _drift(kind, entity, day, f"{tally.count} events stored, {said}", "recounted", repair)
        )
        wrong.append(day)
    for day in sorted(stored.keys() - tallies.keys()):
        report.drifts.append(
            _drift(
                "summary_orphan",
                entity,
                day,
                f"the summary says {stored[day].event_count} events, none is stored",
                "removed",
                repair,
            )
        )
        wrong.append(day)
    if repair and wrong:
        entity_days_refresh(entity_id=entity.pk, days=[d.isoformat() for d in wrong])
    return bool(wrong)


def _lookback_tops(entity: Entity, days: Iterable[date]) -> dict[date, int]:
    """Per day: the highest id of the absences in the compile's look-back before the day."""

    rows = sorted(
        Event.objects.filter(entity=entity, kind="absence").values_list("occurred_at", "id")
    )
    times = [at for at, _ in rows]
    tops: dict[date, int] = {}
    for day in days:
        start, _ = day_bounds(entity, day)
        low = bisect.bisect_left(times, start - ABSENCE_LOOKBACK)
        high = bisect.bisect_left(times, start)
        tops[day] = max((i for _, i in rows[low:high]), default=0)
    return tops


def _compiles(
    entity: Entity,
    tallies: dict[date, DayTally],
    now: datetime,
    running: _Running,
    repair: bool,
    report: Report,
) -> None:
    """Each desktop day's last compile against its events; lost or stale ones queued again."""

    days = [day for day, tally in tallies.items() if tally.chosen_count]
    report.checked["compiled_days"] += len(days)
    requests = {r.day: r for r in CompileRequest.objects.filter(entity=entity)}
    documents = set(
        DayDocument.objects.filter(entity=entity, current=True).values_list("day", flat=True)
    )
    lookback = _lookback_tops(entity, days)
    settled = now - GRACE
    again: list[tuple[int, date]] = []
    for day in days:
        tally, request = tallies[day], requests.get(day)
        truth = (tally.chosen_count, tally.chosen_top, lookback[day])
        covered = (
            request is not None
            and (
                request.read_count,
                request.read_top,
                request.lookback_top,
            )
            == truth
        )
        if covered and day in documents:
            continue
        if tally.received_at > settled or _compile_in_flight(entity, request, settled, running):
            continue
        if covered:
            kind, detail = "document_missing", "compiled, but no current document is stored"
        elif request is None or request.read_count is None:
            kind, detail = "compile_missing", f"{tally.chosen_count} desktop events, never compiled"
        else:
            kind = "compile_stale"
            detail = (
                f"{tally.chosen_count} desktop events (up to event {tally.chosen_top}), the last "
                f"compile read {request.read_count} (up to {request.read_top})"
            )
        if (
            request is not None
            and request.last_error_at
            and (request.last_error_at >= now - FAILED_RETRY_AFTER)
        ):
            report.drifts.append(
                Drift(
                    "compile_failing",
                    entity.team.slug,
                    entity.key,
                    day,
                    f"{detail}; its compile failed: {request.last_error[:200]}",
                    "left to the compile sweep, which tries again 30 min after a failure",
                )
            )
            continue
        report.drifts.append(_drift(kind, entity, day, detail, "queued to compile", repair))
        again.append((entity.pk, day))
    if repair and again:
        dispatch_compiles(again, stale_after=GRACE)


def _compile_in_flight(entity: Entity, request: Any, settled: datetime, running: _Running) -> bool:
    """A compile of the day is queued (recently) or running (its worker holds the lock)."""
    if request is None:
        return False
    if request.queued and request.queued_at and request.queued_at > settled:
        return True
    if request.started_at and request.started_at > settled:
        return True  # claimed a moment ago: the compile may not hold its lock yet
    if running.compiles is not None and entity.pk in running.compiles:
        return request.requested > request.compiled
    return False


def _memory(
    entity: Entity,
    tallies: dict[date, DayTally],
    settled: datetime,
    running: _Running,
    report: Report,
) -> bool:
    """Memory's closed days against the events, and due days nobody closes. Returns whether
    ``memory.close_due`` should run for the entity."""

    if running.memory is not None and entity.pk in running.memory:
        return False  # being closed or rebuilt right now
    closed = dict(Trajectory.objects.filter(entity=entity).values_list("day", "event_count"))
    report.checked["memory_days"] += len(closed)
    wrong = False
    for day in late_in(closed, {day: tally.count for day, tally in tallies.items()}):
        tally = tallies[day]
        if tally.received_at > settled:
            continue  # the refresh queued after those events committed closes them
        if day not in closed:
            kind = "memory_day_missing"
            detail = f"{tally.count} events, before the newest closed day, never taken in"
        else:
            kind = "memory_late_uncounted"
            detail = f"{tally.count} events stored, memory closed the day with {closed[day]}"
        report.drifts.append(
            _drift(kind, entity, day, detail, "queued for memory to rebuild", report.repaired)
        )
        wrong = True
    if wrong:
        return True
    refreshed = EntityDay.objects.filter(entity=entity).order_by("-refreshed_at").first()
    if refreshed is None or refreshed.refreshed_at > settled:
        return False  # the refresh that just ran queued its own close
    due = days_due(entity)
    if not due or compile_pending(entity, due[0]):
        return False  # a desktop day closes on its frames: the owed compile is checked above
    report.drifts.append(
        _drift(
            "memory_close_lost",
            entity,
            due[0],
            f"{len(due)} day(s) due to close, nobody closing them",
            "queued for memory to close",
            report.repaired,
        )
    )
    return True


def _imports(
    team: Team | None, now: datetime, running: _Running, repair: bool, report: Report
) -> None:
    """Import jobs said to be queued or running with no worker on them."""

    jobs = ImportJob.objects.filter(
        status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
    ).select_related("team")
    if team is not None:
        jobs = jobs.filter(team=team)
    settled = now - GRACE
    for job in jobs.order_by("pk"):
        report.checked["imports"] += 1
        seen = job.heartbeat_at or job.created_at  # queued, started, a batch stored
        if running.imports is not None and job.pk in running.imports:
            continue
        if seen > settled or (running.imports is None and seen > now - IMPORT_SILENT):
            continue
        state = "running" if job.status == ImportJob.Status.RUNNING else "queued"
        silent = int((now - seen).total_seconds())
        detail = f"import {job.pk} ({job.original_name}) {state}, no worker on it for {silent} s"
        outcome = import_job_lost(job_id=job.pk, attempts=IMPORT_ATTEMPTS, act=repair)
        report.drifts.append(
            Drift("import_lost", job.team.slug, job.entity_key, None, detail, outcome)
        )


def _runs(
    team: Team | None, now: datetime, running: _Running, repair: bool, report: Report
) -> None:
    """Benchmark runs said to be running with no worker on them: failed, with the reason."""

    runs = BenchmarkRun.objects.filter(status=BenchmarkRun.Status.RUNNING).select_related("team")
    if team is not None:
        runs = runs.filter(team=team)
    limit = timedelta(seconds=settings.AFRAMES_BENCHMARK_TIME_LIMIT)
    for run in runs.order_by("pk"):
        report.checked["runs"] += 1
        started = run.started_at or run.created_at
        if running.runs is not None:
            if run.pk in running.runs or started > now - GRACE:
                continue
        elif started > now - limit - GRACE:
            continue  # without locks: only one that outlived its time limit is surely lost
        if repair:
            BenchmarkRun.objects.filter(pk=run.pk, status=BenchmarkRun.Status.RUNNING).update(
                status=BenchmarkRun.Status.FAILED,
                error="The worker running this run was lost (stopped or killed); start it again.",
                finished_at=now,
            )
        report.drifts.append(
            Drift(
                "run_lost",
                run.team.slug,
                None,
                None,
                f"benchmark run {run.pk} running, no worker on it",
                "failed, saying so" if repair else "would be failed, saying so",
            )
        )


def _drift(
    kind: str, entity: Entity, day: date | None, detail: str, done: str, repair: bool
) -> Drift:
    return Drift(
        kind, entity.team.slug, entity.key, day, detail, done if repair else f"would be {done}"
    )
