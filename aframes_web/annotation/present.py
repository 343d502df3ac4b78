"""The workbench's records as plain JSON-ready dicts: the one shape the REST API (and MCP)
show. Every record here is built for one reader and holds only what that reader may see
(the blindness rules of ``selectors.py``)."""

from __future__ import annotations

from typing import Any

from aframes_web.annotation import selectors as sel
from aframes_web.annotation.models import Assignment, LabelProject, Task
from aframes_web.proactivestream.present import _time
from aframes_web.streams.names import said_of
from benchmark.labelers.numbers import numbers_for
from benchmark.streams.words import describe
from memory.selectors import engine_event


def project_record(project: LabelProject) -> dict[str, Any]:
    return {
        "id": project.pk,
        "name": project.name,
        "scope": project.scope,
        "labels_per_point": project.labels_per_point,
        "starts_at": _time(project.starts_at),
        "ends_at": _time(project.ends_at),
        "timely_minutes": project.timely_minutes,
        "triage": project.triage,
        "review_percent": project.review_percent,
        "guidelines": project.guidelines,
        "numbers": [
            {k: n[k] for k in ("service", "number", "unit", "sentence", "default")}
            for n in numbers_for(project.scope, project.numbers)
        ],
        "created_at": _time(project.created_at),
        "counts": sel.project_counts(project),
    }


def assignment_record(place: Assignment) -> dict[str, Any]:
    following = sel.next_task(place)
    done = place.labels.filter(submitted_at__isnull=False).count()
    return {
        "project": place.stream.project_id,
        "stream": place.stream.entity.key,
        "points": place.stream.points,
        "labelled": done,
        "next_task": following.pk if following else None,
    }


def task_record(task: Task, user: Any, page: int = 1) -> dict[str, Any]:
    """A point as its annotator sees it: the point in words, its public fields, the stream's
    history up to it (newest first, one page), the annotator's own episodes and label."""
    events, older = sel.history(task, page)
    mine = sel.own_label(task, user)
    label = None
    if mine is not None:
        label = {
            "submitted": mine.submitted_at is not None,
            "decision": mine.decision or None,
            "service": mine.service or None,
            "episode": mine.episode_id,
            "reopens": mine.reopens,
            "ends_episode": mine.ends_episode,
            "rationale": mine.rationale,
            "draft": mine.draft,
        }
    return {
        "task": task.pk,
        "project": task.project_id,
        "stream": task.stream.entity.key,
        "seq": task.seq,
        "points": task.stream.points,
        "at": _time(task.at),
        "point": {
            "key": task.point.key,
            "words": describe(task.point.public or {}, said_of(task.stream.entity)),
            "public": task.point.public,
        },
        "final": task.final_id is not None,
        "history": {
            "page": page,
            "older": older,
            "events": [
                {
                    "id": e.pk,
                    "occurred_at": _time(e.occurred_at),
                    "kind": e.kind,
                    "monitor": e.monitor,
                    "payload": engine_event(e).payload,
                }
                for e in events
            ],
        },
        "episodes": sel.own_episodes(task, user),
        "label": label,
        "progress": {
            "done": (p := sel.progress_of(task.project, user)).done,
            "total": p.total,
        },
    }
