"""make bench-memory: ProactMem decision latency, replay throughput, memory size; SYNTHETIC data.

    python -m benchmark.memory [--days 90] [--seed 7] [--scopes sports,home,code,desktop]
                               [--parts replay,loop,service]

Streams: ``benchmark.synthetic.memory_streams``, one generated entity per scope (SYNTHETIC:
planted routines and deviations, nothing recorded). Three figures (issue 6):

1. **Replay throughput** (``replay``). Each scope's whole stream is replayed into memory from
   empty with ``memory.engine.stream.MemoryStream.ingest`` (commit, then every day close:
   extraction, validation, mining, regularity replay and lifecycle), in one process, no
   database: how fast memory is built (or rebuilt) from a stream. events/s = events / wall
   seconds. The issue's ``replay_events_per_s`` (target >= 2,000).
   Then the *causal loop* (``loop``): the same stream through ``MemoryStream.process``, a
   rules decision at every event besides the day closes, with the *engine decision time* per
   event: ``process`` minus the day closes it ran (memory read including today's extraction
   and retrieval, decide, control, store, commit).
2. **Decision latency through the service** (``service``). On its own scratch PostgreSQL
   database: the first ``days - 1`` days of each stream are ingested with ``events_ingest``
   (tasks eager, so day summaries, desktop compiles and day closes run as a worker would) and
   closed with ``memory_close_due``; then each event of the last day goes through
   ``memory_decide`` one by one (tasks queued, not run: the request path only). Figures: the
   stored ``Decision.latency_ms`` (lock, memory read, staging, decide, control, store) and the
   wall time of each call (adds validation, the commit and queueing its maintenance).
   ``decision_p95_ms`` in the JSON line is the stored latency; target p95 <= 10 ms.
3. **Memory on disk** (after ``service``): ``pg_total_relation_size`` of the memory tables
   (the database holds only these entities) over closed entity-days; decisions, stored for the
   last day only, as bytes per decision.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from benchmark.harness import fail, finish, percentile, redis_url, scratch_instance
from benchmark.synthetic.memory_streams import SCOPES, ZONES, Item, generate, local_day

# Its own scratch database and Redis database: tasks it queues must reach no other worker.
MEMORY_DB = "aframes_bench_memory"
MEMORY_REDIS_DB = 13
MEMORY_TABLES = (
    "memory_trajectory",
    "memory_segment",
    "memory_citation",
    "memory_fact",
    "memory_regularity",
    "memory_assessment",
    "memory_transition",
)
DECISION_TABLE = "memory_decision"
TARGET_P95_MS = 10.0  # issue 6
TARGET_EVENTS_PER_S = 2000.0  # issue 6


def engine_events(items: Sequence[Item]) -> list[Any]:
    """The items as the engine sees stored events: ids in order, ``private`` left out."""
    from memory.engine.records import EngineEvent

    return [
        EngineEvent(
            number,
            datetime.fromisoformat(item["occurred_at"].replace("Z", "+00:00")),
            item["kind"],
            {k: v for k, v in item["payload"].items() if k != "private"},
            item.get("monitor", ""),
        )
        for number, item in enumerate(items, start=1)
    ]


# -- 1. replay ----------------------------------------------------------------------------------


@dataclass
class Replay:
    scope: str
    events: int
    seconds: float
    decide_ms: list[float] = field(default_factory=list)
    close_s: float = 0.0
    memory: dict[str, Any] = field(default_factory=dict)

    @property
    def per_s(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def build(scope: str, items: Sequence[Item]) -> tuple[int, float, dict[str, Any]]:
    """Memory replayed from the stream without decisions: events, seconds, what it holds."""
    from memory.engine.decide import POLICIES
    from memory.engine.stream import MemoryStream, compiled_frames

    events = engine_events(items)
    stream = MemoryStream(
        scope, ZoneInfo(ZONES[scope]), POLICIES["rules"], frame_source=compiled_frames
    )
    began = time.perf_counter()
    for event in events:
        stream.ingest(event)
    stream.close_through(date.max)
    seconds = time.perf_counter() - began
    held = {
        "closed_days": len(stream.closed),
        "facts": sum(len(c.record.observations) for c in stream.closed.values()),
        "regularities": dict(Counter(t.state.state for t in stream.tracked.values())),
    }
    return len(events), seconds, held


def replay(scope: str, items: Sequence[Item]) -> Replay:
    from memory.engine.decide import POLICIES
    from memory.engine.stream import MemoryStream, compiled_frames

    closes: list[float] = []

    class Timed(MemoryStream):
        # Times the day closes a process() call runs, so the rest is the per-event decision.
        def close_through(self, before: date) -> list[date]:
            began = time.perf_counter()
            try:
                return super().close_through(before)
            finally:
                closes.append(time.perf_counter() - began)

    events = engine_events(items)
    stream = Timed(scope, ZoneInfo(ZONES[scope]), POLICIES["rules"], frame_source=compiled_frames)
    decide_ms: list[float] = []
    began = time.perf_counter()
    for event in events:
        start = time.perf_counter()
        stream.process(event)
        decide_ms.append((time.perf_counter() - start - closes[-1]) * 1000)
    stream.close_through(date.max)
    seconds = time.perf_counter() - began
    actions = Counter(o.action for o in stream.decisions)
    return Replay(
        scope,
        len(events),
        seconds,
        decide_ms,
        sum(closes),
        {
            "closed_days": len(stream.closed),
            "facts": sum(len(c.record.observations) for c in stream.closed.values()),
            "regularities": dict(Counter(t.state.state for t in stream.tracked.values())),
            "interventions": actions.get("intervene", 0),
            "suppressed": sum(o.suppressed for o in stream.decisions),
        },
    )


# -- 2. service ---------------------------------------------------------------------------------


@dataclass
class Served:
    scope: str
    history_events: int
    history_s: float
    closed_days: int
    latency_ms: list[float]
    wall_ms: list[float]
    interventions: int


def serve(team: Any, scope: str, items: Sequence[Item]) -> Served:
    from aframes_web.celery import app
    from aframes_web.streams.services import entity_create, events_ingest
    from memory.models import Decision, Trajectory
    from memory.services import memory_close_due, memory_decide

    entity = entity_create(team=team, key=f"mem-{scope}", scope=scope, timezone_name=ZONES[scope])
    last = max(local_day(item, scope) for item in items)
    history = [i for i in items if local_day(i, scope) < last]
    today = [i for i in items if local_day(i, scope) == last]
    app.conf.task_always_eager = True  # history: day summaries, compiles and closes run inline
    began = time.perf_counter()
    by_day: dict[date, list[Item]] = {}
    for item in history:
        by_day.setdefault(local_day(item, scope), []).append(item)
    for day in sorted(by_day):
        events_ingest(entity=entity, items=by_day[day])
    events_ingest(entity=entity, items=today[:1])  # moves the stream past the history's days
    memory_close_due(entity_id=entity.pk, by_clock=False)
    history_s = time.perf_counter() - began
    app.conf.task_always_eager = False  # the request path only: maintenance is queued
    latency: list[float] = []
    wall: list[float] = []
    for item in today[1:]:
        start = time.perf_counter()
        result = memory_decide(entity=entity, item=item, policy="rules")
        wall.append((time.perf_counter() - start) * 1000)
        latency.append(float(result.decision.latency_ms))
    return Served(
        scope,
        len(history) + 1,
        history_s,
        Trajectory.objects.filter(entity=entity).count(),
        latency,
        wall,
        Decision.objects.filter(entity=entity, action="intervene").count(),
    )


def table_bytes() -> dict[str, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        out = {}
        for table in (*MEMORY_TABLES, DECISION_TABLE):
            cursor.execute("SELECT pg_total_relation_size(%s)", [table])
            out[table] = int(cursor.fetchone()[0])
    return out


def service_part(streams: dict[str, list[Item]]) -> tuple[list[Served], dict[str, int], int]:
    with scratch_instance(MEMORY_DB, MEMORY_REDIS_DB) as (env, _key):
        os.environ.update(env)
        os.environ["DJANGO_SETTINGS_MODULE"] = "aframes_web.settings"
        import django

        django.setup()
        from django.db import connection

        from aframes_web.teams.models import Team
        from memory.models import Decision

        team = Team.objects.get(slug="bench")
        served = [serve(team, scope, items) for scope, items in streams.items()]
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")  # sizes as they settle, not mid-insert free space
        sizes = table_bytes()
        decisions = Decision.objects.count()
        connection.close()
    return served, sizes, decisions


# -- report -------------------------------------------------------------------------------------


def _ms(values: list[float]) -> str:
    return f"p50 {percentile(values, 0.5):.2f} ms, p95 {percentile(values, 0.95):.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scopes", default=",".join(SCOPES))
    parser.add_argument("--parts", default="replay,loop,service")
    args = parser.parse_args(argv)
    scopes = [s for s in args.scopes.split(",") if s]
    parts = set(args.parts.split(","))
    if unknown := set(scopes) - set(SCOPES):
        fail(f"unknown scope(s) {sorted(unknown)}; use {', '.join(SCOPES)}")
    if args.days < 3:
        fail("--days must be at least 3: a regularity needs three fulfilled days")
    if "service" in parts and redis_url() is None:
        print("Redis is not reachable; the service part queues its tasks on the filesystem broker")
    streams = {scope: generate(scope, days=args.days, seed=args.seed) for scope in scopes}
    figures: dict[str, Any] = {"days": args.days, "seed": args.seed}
    figures["events"] = sum(len(items) for items in streams.values())
    print(f"ProactMem on SYNTHETIC {args.days}-day streams (seed {args.seed})")
    for scope, items in streams.items():
        print(f"  {scope}: {len(items):,} events, {len(items) / args.days:.0f} a day")

    if "replay" in parts:
        print("Replay: memory built from each stream, from empty (MemoryStream.ingest, no DB)")
        built_s = 0.0
        for scope, items in streams.items():
            count, seconds, held = build(scope, items)
            built_s += seconds
            print(
                f"  {scope}: {count:,} events in {seconds:.2f} s = {count / seconds:,.0f} "
                f"events/s; {held['closed_days']} closed days, {held['facts']:,} facts, "
                f"regularities {held['regularities']}"
            )
            figures[f"{scope}_replay_events_per_s"] = round(count / seconds, 1)
        figures["replay_events_per_s"] = round(figures["events"] / built_s, 1)
        figures["replay_s"] = round(built_s, 2)
        print(
            f"  all scopes: {figures['replay_events_per_s']:,.0f} events/s (target >= "
            f"{TARGET_EVENTS_PER_S:,.0f})"
        )

    if "loop" in parts:
        print("Causal loop: a rules decision at every event besides the day closes (no DB)")
        runs = []
        for scope, items in streams.items():
            run = replay(scope, items)
            runs.append(run)
            m = run.memory
            print(
                f"  {scope}: {run.events:,} events in {run.seconds:.1f} s = {run.per_s:,.0f} "
                f"events/s (day closes {run.close_s:.1f} s); per-event decision "
                f"{_ms(run.decide_ms)}"
            )
            print(
                f"    memory: {m['closed_days']} closed days, {m['facts']:,} facts, regularities "
                f"{m['regularities']}, {m['interventions']} interventions, "
                f"{m['suppressed']} suppressed"
            )
            figures[f"{scope}_loop_events_per_s"] = round(run.per_s, 1)
            figures[f"{scope}_engine_decision_p95_ms"] = round(percentile(run.decide_ms, 0.95), 3)
        total_s = sum(r.seconds for r in runs)
        all_ms = [ms for r in runs for ms in r.decide_ms]
        figures["loop_events_per_s"] = round(figures["events"] / total_s, 1)
        figures["engine_decision_p50_ms"] = round(percentile(all_ms, 0.5), 3)
        figures["engine_decision_p95_ms"] = round(percentile(all_ms, 0.95), 3)
        print(
            f"  all scopes: {figures['loop_events_per_s']:,.0f} events/s with a decision at "
            f"every event; engine per-event decision {_ms(all_ms)}"
        )

    if "service" in parts:
        print(
            f"Service: {args.days - 1} days ingested and closed on PostgreSQL, then the last "
            "day decided event by event with memory_decide"
        )
        served, sizes, decisions = service_part(streams)
        for s in served:
            print(
                f"  {s.scope}: history {s.history_events:,} events ingested and {s.closed_days} "
                f"days closed in {s.history_s:.1f} s; {len(s.latency_ms)} decisions, "
                f"{s.interventions} interventions"
            )
            print(f"    stored latency_ms {_ms(s.latency_ms)}; wall per call {_ms(s.wall_ms)}")
            figures[f"{s.scope}_decision_p95_ms"] = round(percentile(s.latency_ms, 0.95), 3)
        latency = [ms for s in served for ms in s.latency_ms]
        wall = [ms for s in served for ms in s.wall_ms]
        figures["decision_p50_ms"] = round(percentile(latency, 0.5), 3)
        figures["decision_p95_ms"] = round(percentile(latency, 0.95), 3)
        figures["decision_wall_p50_ms"] = round(percentile(wall, 0.5), 3)
        figures["decision_wall_p95_ms"] = round(percentile(wall, 0.95), 3)
        figures["decisions"] = len(latency)
        print(
            f"  all scopes: stored latency_ms {_ms(latency)} (target p95 <= "
            f"{TARGET_P95_MS:.0f} ms); wall per call {_ms(wall)}"
        )
        entity_days = sum(s.closed_days for s in served)
        memory = sum(sizes[t] for t in MEMORY_TABLES)
        figures["entity_days"] = entity_days
        figures["memory_bytes_per_entity_day"] = round(memory / entity_days) if entity_days else 0
        figures["decision_bytes_each"] = (
            round(sizes[DECISION_TABLE] / decisions) if decisions else 0
        )
        print(
            f"Memory on disk: {memory / 1e6:.1f} MB over {entity_days} closed entity-days = "
            f"{figures['memory_bytes_per_entity_day']:,} bytes per entity-day"
        )
        for table in MEMORY_TABLES:
            share = sizes[table] / entity_days if entity_days else 0
            print(f"    {table}: {sizes[table] / 1e6:.2f} MB, {share:,.0f} bytes per entity-day")
        print(
            f"    {DECISION_TABLE}: {sizes[DECISION_TABLE] / 1e6:.2f} MB for {decisions} "
            f"decisions = {figures['decision_bytes_each']:,} bytes per decision"
        )
    finish("memory", figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
