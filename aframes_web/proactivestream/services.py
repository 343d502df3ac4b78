"""Writes of ProactiveStream: build an entity's decision points, create and execute runs.

Thin around the pure ``benchmark`` package: load rows, call the builders, the replay and the
report, store what they return (ARCHITECTURE: pure cores, thin shells).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from aframes_web import liveness
from aframes_web.hooks import Hook
from aframes_web.proactivestream import selectors
from aframes_web.proactivestream.models import BenchmarkRun, DecisionPoint, RunArtefact, RunOutcome
from aframes_web.streams.models import Entity
from aframes_web.teams.models import Team
from benchmark import report
from benchmark.labelers.base import Label
from benchmark.labelers.registry import reference_labeler
from benchmark.methods.registry import at_false_alarm_cost, methods_named
from benchmark.reference import LabelKey, read_labels
from benchmark.run import CURVE_THRESHOLDS, evaluate
from benchmark.streams.build import build_points
from benchmark.streams.records import SCOPES
from memory import llm
from memory.engine.decide import DEFAULT_FALSE_ALARM_COST, threshold_for
from memory.services.deciding import DecideResult, memory_decide_point

BUILDER = "streams/1"  # bump when a builder changes what a point holds
LABELS_LABELER = "labeler"
PROGRESS_EVERY_S = 1.0  # a run writes its progress at most this often


class RunConfigError(ValueError):
    """A run asked for something that cannot be done; the message says what and how to fix it."""


# The final labels of the labelling project ``project:ID`` names, to score a run against: the
# annotation app, the layer above, provides it and raises RunConfigError when the team has no
# such project or the project has no final label yet.
project_labels: Hook[[Team, str], dict[LabelKey, Label]] = Hook("labels of a labelling project")
# Executes a queued run on a worker: this app's tasks module provides it (it imports this one).
run_queued: Hook[[int], None] = Hook("benchmark run queued")


@dataclass(frozen=True)
class BuildResult:
    entity: str
    created: int
    updated: int
    unchanged: int

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged


def points_build(*, entity: Entity) -> BuildResult:
    """Build the entity's decision points from its stored events and store them; idempotent.

    A point is keyed by its stable key: building again changes nothing unless the events
    changed (late events update the points they fall into). Desktop points come from the
    current compiled day documents, so a day must be compiled first.
    """

    events = selectors.stream_events(entity)
    frames = selectors.desktop_frames(entity) if entity.scope == "desktop" else None
    built = build_points(entity.scope, events, ZoneInfo(entity.timezone), frames)
    with transaction.atomic(durable=True):
        stored = {p.key: p for p in DecisionPoint.objects.filter(entity=entity)}
        new: list[DecisionPoint] = []
        changed: list[DecisionPoint] = []
        for point in built:
            fields = {
                "at": point.at,
                "public": _plain(point.public),
                "private": _plain(point.private),
                "cites": list(point.cites),
                "event_id": point.event_id,
                "builder": BUILDER,
            }
            row = stored.get(point.key)
            if row is None:
                new.append(DecisionPoint(entity=entity, key=point.key, **fields))
            elif any(getattr(row, k) != v for k, v in fields.items()):
                for k, v in fields.items():
                    setattr(row, k, v)
                changed.append(row)
        DecisionPoint.objects.bulk_create(new, batch_size=2000)
        if changed:
            DecisionPoint.objects.bulk_update(
                changed,
                ["at", "public", "private", "cites", "event_id", "builder"],
                batch_size=2000,
            )
    return BuildResult(entity.key, len(new), len(changed), len(built) - len(new) - len(changed))


def _plain(value: Any) -> Any:
    """JSON-ready copy: mappings as dicts, tuples as lists (what a JSONField gives back)."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def code_version() -> str:
    try:
        found = version("aframes")
    except PackageNotFoundError:
        found = "dev"
    labelers = ",".join(f"{scope}/{reference_labeler(scope, _utc()).version}" for scope in SCOPES)
    return f"aframes {found}; {BUILDER}; labelers {labelers}"[:64]


def _utc() -> Any:
    return ZoneInfo("UTC")


def run_entities(*, team: Team, scope: str, keys: Sequence[str] = ()) -> list[Entity]:
    """The entities a run covers: the named ones (all of ``scope`` unless ``all``), in order."""
    if scope != "all" and scope not in SCOPES:
        raise RunConfigError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)} or all")
    found = Entity.objects.filter(team=team).order_by("scope", "key")
    if scope != "all":
        found = found.filter(scope=scope)
    if keys:
        chosen = list(found.filter(key__in=list(keys)))
        missing = sorted(set(keys) - {e.key for e in chosen})
        if missing:
            raise RunConfigError(
                f"no {'' if scope == 'all' else scope + ' '}entity {', '.join(missing)} in team "
                f"{team.slug}"
            )
        return chosen
    entities = list(found)
    if not entities:
        raise RunConfigError(
            f"team {team.slug} has no {'' if scope == 'all' else scope + ' '}entities to run on; "
            "import some events first"
        )
    return entities


def labeler_version(labels: str) -> int | None:
    """The version cap of ``labeler@N`` (None for plain ``labeler`` and anything else)."""
    head, at, tail = labels.partition("@")
    if head != LABELS_LABELER or not at or not tail.isdigit():
        return None
    return int(tail)


def run_create(
    *,
    team: Team,
    scope: str,
    methods: Sequence[str],
    labels: str = LABELS_LABELER,
    entities: Sequence[str] = (),
    control: bool = True,
    synthetic: Sequence[str] = (),
    user: Any = None,
    enqueue: bool = True,
    false_alarm_cost: float = DEFAULT_FALSE_ALARM_COST,
    curve: bool = False,
) -> BenchmarkRun:
    """Check a run's configuration and store it queued; with ``enqueue`` a worker runs it after
    commit (the dashboard), otherwise the caller executes it (the command).

    ``false_alarm_cost``: what a false alarm costs in missed needs, which sets the threshold
    ProactMem (and its ablations) act from (``decide.threshold_for``); ``curve``: replay
    ProactMem once more at every threshold of ``run.CURVE_THRESHOLDS`` for the curve.
    """

    chosen = run_entities(team=team, scope=scope, keys=entities)
    try:
        specs = methods_named(methods, llm_configured=llm.configured())
    except ValueError as exc:
        raise RunConfigError(str(exc)) from None
    if not specs:
        raise RunConfigError("name at least one method")
    try:
        threshold_for(false_alarm_cost)
    except ValueError as exc:
        raise RunConfigError(str(exc)) from None
    if labeler_version(labels) is None and not labels.startswith(
        (LABELS_LABELER, "jsonl:", "project:")
    ):
        raise RunConfigError(
            f"labels {labels!r}: use labeler (the scopes' reference labelers, newest version), "
            "labeler@N (each scope's newest version up to N), jsonl:PATH or project:ID (a "
            "labelling project's final labels)"
        )
    if labels.startswith(LABELS_LABELER) and labels != LABELS_LABELER:
        version = labeler_version(labels)
        if version is None or version < 1:
            raise RunConfigError(f"labels {labels!r}: a labeler version is a number from 1")
    if labels.startswith("project:"):
        project_labels(team, labels)
    if labels.startswith("jsonl:"):
        try:
            read_labels(Path(labels.removeprefix("jsonl:")))
        except ValueError as exc:
            raise RunConfigError(str(exc)) from None
    run = BenchmarkRun.objects.create(
        team=team,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        config={
            "scope": scope,
            "entities": [e.key for e in chosen],
            "methods": [m.name for m in specs],
            "labels": labels,
            "control": control,
            "synthetic": sorted(set(synthetic)),
            "false_alarm_cost": false_alarm_cost,
            "curve": curve,
        },
        code_version=code_version(),
    )
    if enqueue:
        transaction.on_commit(lambda: run_queued(run.pk))
    return run


Progress = Callable[[str, int, int], None]


def runs_waiting(since: datetime) -> int:
    """Runs of any team queued no later than ``since`` and not yet started: what a long
    import on the same bulk worker hands over to (aframes_web/streams/uploads.py)."""
    return BenchmarkRun.objects.filter(
        status=BenchmarkRun.Status.QUEUED, created_at__lte=since
    ).count()


def run_execute(
    *, run_id: int, out: Path | None = None, progress: Progress | None = None
) -> BenchmarkRun | None:
    """Execute a queued run: build points, replay, score, store results, files and outcomes.

    Idempotent: a run already done is returned as it is, one that a living worker runs is left
    to it, and a running one that a lost worker left behind is started again from scratch (a
    replay has no partial state worth keeping), unless reconciliation has failed it first. Any
    failure marks the run failed with its reason and re-raises.
    """

    # Held while it runs: a second delivery of the task (the broker hands a message back
    # after its visibility timeout, shorter than a run may take) leaves the run alone, and
    # reconciliation fails a run whose worker is gone.
    with liveness.holding(liveness.BENCHMARK_RUN, run_id) as mine:
        if not mine:
            return BenchmarkRun.objects.filter(pk=run_id).first()
        return _run_execute_held(run_id, out, progress)


def _run_execute_held(
    run_id: int, out: Path | None, progress: Progress | None
) -> BenchmarkRun | None:
    claimed = BenchmarkRun.objects.filter(
        pk=run_id, status__in=[BenchmarkRun.Status.QUEUED, BenchmarkRun.Status.RUNNING]
    ).update(status=BenchmarkRun.Status.RUNNING, started_at=timezone.now(), error="")
    run = BenchmarkRun.objects.filter(pk=run_id).first()
    if run is None or not claimed:
        return run
    try:
        _execute(run, out, progress)
    except Exception as exc:
        BenchmarkRun.objects.filter(pk=run.pk).update(
            status=BenchmarkRun.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now(),
        )
        raise
    run.refresh_from_db()
    return run


def _execute(run: BenchmarkRun, out: Path | None, progress: Progress | None) -> None:
    config = run.config
    entities = run_entities(team=run.team, scope=config["scope"], keys=config["entities"])
    specs = at_false_alarm_cost(
        methods_named(config["methods"], llm_configured=llm.configured()),
        float(config.get("false_alarm_cost", DEFAULT_FALSE_ALARM_COST)),
    )
    synthetic = set(config.get("synthetic") or ())
    for index, entity in enumerate(entities, start=1):
        _note(run, f"building decision points of {entity.key} ({index} of {len(entities)})")
        points_build(entity=entity)
    streams = [selectors.stream_of(e, synthetic=e.key in synthetic) for e in entities]
    total = sum(len(s.points) for s in streams)
    BenchmarkRun.objects.filter(pk=run.pk).update(progress_total=total, progress_done=0)
    labels_file = None
    if config["labels"].startswith("jsonl:"):
        labels_file = read_labels(Path(config["labels"].removeprefix("jsonl:")))
    elif config["labels"].startswith("project:"):
        labels_file = project_labels(run.team, config["labels"])
    done_before: dict[str, int] = {}
    last_write = [0.0]

    def tick(entity: str, done: int, in_stream: int) -> None:
        if progress is not None:
            progress(entity, done, in_stream)
        done_before[entity] = done
        now = time.monotonic()
        if now - last_write[0] >= PROGRESS_EVERY_S or done == in_stream:
            last_write[0] = now
            BenchmarkRun.objects.filter(pk=run.pk).update(
                progress_done=sum(done_before.values()),
                progress_note=f"replaying {entity}: {done:,} of {in_stream:,} decision points",
            )

    complete = None
    if any(m.needs_llm for m in specs):
        complete = llm.complete
    evaluation = evaluate(
        streams,
        specs,
        labels_file=labels_file,
        complete=complete,
        control=bool(config.get("control", True)),
        progress=tick,
        curve=CURVE_THRESHOLDS if config.get("curve") else (),
        labeler_version=labeler_version(config["labels"]),
    )
    _note(run, "writing the report")
    files = _artefacts(evaluation)
    if out is not None:
        report.write(evaluation, out)
    by_key = {e.key: e for e in entities}
    points = {(r.entity, p.key): p for r in evaluation.runs for p in r.points}
    with transaction.atomic(durable=True):
        RunArtefact.objects.filter(run=run).delete()
        RunOutcome.objects.filter(run=run).delete()
        RunArtefact.objects.bulk_create(
            [RunArtefact(run=run, name=n, content_type=t, content=c) for n, (t, c) in files.items()]
        )
        RunOutcome.objects.bulk_create(
            [_outcome_row(run, o, by_key, points) for o in evaluation.outcomes],
            batch_size=2000,
        )
        BenchmarkRun.objects.filter(pk=run.pk).update(
            status=BenchmarkRun.Status.DONE,
            results=evaluation.results,
            progress_done=total,
            progress_note="",
            finished_at=timezone.now(),
        )


def _note(run: BenchmarkRun, text: str) -> None:
    BenchmarkRun.objects.filter(pk=run.pk).update(progress_note=text[:300])


def _artefacts(evaluation: Any) -> dict[str, tuple[str, bytes]]:
    files: dict[str, tuple[str, bytes]] = {
        "results.json": (
            "application/json",
            (json.dumps(evaluation.results, indent=2, ensure_ascii=False) + "\n").encode(),
        ),
        "results.md": (
            "text/markdown; charset=utf-8",
            report.markdown(evaluation.results).encode(),
        ),
        "streams.csv": ("text/csv; charset=utf-8", report.streams_csv(evaluation.results).encode()),
    }
    for name, content in report.plots(evaluation).items():
        files[name] = ("image/png", content)
    return files


def _outcome_row(
    run: BenchmarkRun, o: Any, by_key: dict[str, Entity], points: dict[tuple[str, str], Any]
) -> RunOutcome:
    point = points.get((o.entity, o.point))
    return RunOutcome(
        run=run,
        entity=by_key.get(o.entity),
        entity_key=o.entity,
        scope=o.scope,
        method=o.method,
        point_key=o.point,
        at=o.at,
        outcome=o.outcome,
        point={
            "id": point.id if point else None,
            "public": _plain(point.public) if point else {},
            "cites": list(point.cites) if point else [],
        },
        decision=_plain(
            {**asdict(o.decision), "regularities": [dict(r) for r in o.decision.regularities]}
        ),
        label=_plain(
            {
                **asdict(o.label),
                "valid_until": o.label.valid_until.isoformat() if o.label.valid_until else None,
            }
        ),
    )


def point_decide(
    *,
    entity: Entity,
    point: DecisionPoint,
    policy: str = "rules",
    trace: Callable[[str], None] | None = None,
) -> DecideResult:
    """Decide at a stored decision point from memory as it stood at its time; its recent events
    are the entity's earlier points of the recent window (:func:`memory_decide_point`)."""
    prior = selectors.prior_points(entity, point.at, point.pk)
    earlier = selectors.points_before(entity, point.at, point.pk)
    return memory_decide_point(
        entity=entity, point=point, prior=prior, earlier=earlier, policy=policy, trace=trace
    )
