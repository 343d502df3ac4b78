"""The service part of ``make bench-memory`` (``perf.memory``): ingestion, day close and
decisions through the product's services, inside the Django that module set up on its scratch
PostgreSQL database."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from statistics import median
from typing import Any
from zoneinfo import ZoneInfo

from django.db import connection

from aframes_web.celery import app
from aframes_web.streams.services import entity_create, events_ingest
from aframes_web.teams.models import Team
from memory.models import Decision, Trajectory
from memory.services.closing import memory_close_due
from memory.services.deciding import memory_decide

Item = dict[str, Any]
# key, scope, source name, zone, items in order, each item's local day
Stream = tuple[str, str, str, ZoneInfo, Sequence[Item], Sequence[date]]


@dataclass
class Served:
    source: str
    scope: str
    day: date
    history_events: int
    history_s: float
    closed_days: int
    latency_ms: list[float]
    wall_ms: list[float]
    interventions: int


def decided_day(days: Sequence[date]) -> date:
    """The day decided through the service: the last one with at least half the median day's
    events, and two (a recording often ends with a few events of a day no one lived through;
    the first event of the day moves the stream past the history, the rest are decided)."""
    counts = Counter(days)
    floor = max(2.0, median(list(counts.values())) / 2)
    return max(day for day, count in counts.items() if count >= floor)


def serve(team: Team, source: Stream, decide_max: int) -> Served:
    key, scope, name, zone, items, days = source
    entity = entity_create(team=team, key=key, scope=scope, timezone_name=zone.key)
    last = decided_day(days)
    history = [i for i, d in zip(items, days, strict=True) if d < last]
    today = [i for i, d in zip(items, days, strict=True) if d == last]
    app.conf.task_always_eager = True  # history: day summaries, compiles and closes run inline
    began = time.perf_counter()
    by_day: dict[date, list[Item]] = {}
    for item, day in zip(items, days, strict=True):
        if day < last:
            by_day.setdefault(day, []).append(item)
    for day in sorted(by_day):
        events_ingest(entity=entity, items=by_day[day])
    events_ingest(entity=entity, items=today[:1])  # moves the stream past the history's days
    memory_close_due(entity_id=entity.pk, by_clock=False)
    history_s = time.perf_counter() - began
    app.conf.task_always_eager = False  # the request path only: maintenance is queued
    latency: list[float] = []
    wall: list[float] = []
    for item in today[1 : 1 + decide_max]:
        start = time.perf_counter()
        result = memory_decide(entity=entity, item=item, policy="rules")
        wall.append((time.perf_counter() - start) * 1000)
        latency.append(float(result.decision.latency_ms))
    return Served(
        name,
        scope,
        last,
        len(history) + 1,
        history_s,
        Trajectory.objects.filter(entity=entity).count(),
        latency,
        wall,
        Decision.objects.filter(entity=entity, action="intervene").count(),
    )


def table_bytes(tables: Sequence[str]) -> dict[str, int]:
    with connection.cursor() as cursor:
        out = {}
        for table in tables:
            cursor.execute("SELECT pg_total_relation_size(%s)", [table])
            out[table] = int(cursor.fetchone()[0])
    return out


def run(
    sources: Sequence[Stream], decide_max: int, tables: Sequence[str]
) -> tuple[list[Served], dict[str, int], int]:
    """Each stream's history through ingestion, then its last day decided event by event;
    with the sizes of ``tables`` and the number of decisions stored."""
    team = Team.objects.get(slug="bench")
    served = [serve(team, source, decide_max) for source in sources]
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # sizes as they settle, not mid-insert free space
    sizes = table_bytes(tables)
    decisions = Decision.objects.count()
    connection.close()
    return served, sizes, decisions
