"""make bench-memory: what ProactMem's memory holds and how fast it is, on the real streams.

    python -m perf.memory [--source real|synthetic] [--parts replay,loop,service]
                               [--decide-max 300] [--days 90] [--seed 7] [--scopes ...]

Streams. ``real`` (the default): every real stream in ``../shared/data``, read with the
importers' own readers (``perf.real``): Ordóñez homes A and B, Fitabase's 33 people
(hourly and wide minute files), the kubernetes repositories of the GH Archive sample and the
ants REST objects, one entity per home, person or repository. ``synthetic``:
``benchmark.synthetic.memory_streams``, one generated entity per scope, ``--days`` long
(SYNTHETIC: planted routines and deviations, nothing recorded; the only desktop stream).

1. **Replay and what memory holds** (``replay``). Each stream is replayed into memory from
   empty with ``memory.engine.stream.MemoryStream.ingest`` (commit, then every day close:
   extraction, validation, mining, regularity replay and lifecycle), in one process, no
   database. ``replay_events_per_s`` = events / wall seconds (target >= 2,000). Then, per
   stream, what the replay left: active regularities per entity; the share of active ones with
   lift >= 1.2 (target >= 90 %); and, of those that can intervene (active or weakening, with a
   catalogue service that applies to their behavior), how many are *always-true* behaviours
   (the behavior on every observable day: base rate 1, which no trigger can raise; target 0)
   and how many are habit-like (base rate >= 0.9).
   The *causal loop* (``loop``, off by default on real data: a decision at each of 121,000
   events): the same stream through ``MemoryStream.process``, a rules decision at every event,
   with the engine decision time per event (``process`` less the day closes it ran).
2. **Decision latency through the service** (``service``). On its own scratch PostgreSQL
   database, for one entity per source (the one with the most events): the days before the
   decided day (the last with at least half the median day's events) ingested with
   ``events_ingest`` (tasks eager, so day summaries, desktop compiles and day closes run as a
   worker would) and closed with ``memory_close_due``; then that day's events (the first
   ``--decide-max``) go through ``memory_decide`` one by one (tasks queued, not run: the
   request path only). Figures: the stored ``Decision.latency_ms`` (lock, memory
   read, staging, decide, control, store) and the wall time of each call (adds validation,
   the commit and queueing its maintenance). ``decision_p95_ms`` is the stored latency;
   target p95 <= 10 ms.
3. **Memory on disk** (after ``service``): ``pg_total_relation_size`` of the memory tables
   (the database holds only these entities) over closed entity-days; decisions, stored for the
   last day only, as bytes per decision.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from benchmark.synthetic.memory_streams import SCOPES, ZONES, generate
from memory.engine.catalogue import services
from memory.engine.decide import POLICIES
from memory.engine.records import EngineEvent
from memory.engine.stream import MemoryStream, compiled_frames
from perf import real
from perf.harness import (
    django_on,
    fail,
    finish,
    percentile,
    redis_url,
    scratch_instance,
    settings_on,
)

Item = dict[str, Any]
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
# The targets of memory that means something (ARCHITECTURE.md, ProactMem): a decision within
# 10 ms at p95 through the service, memory rebuilt at 2,000 events a second, nine active
# regularities in ten whose trigger raises the behaviour by a fifth, none that can intervene
# on a behaviour that happens every day anyway.
TARGET_P95_MS = 10.0
TARGET_EVENTS_PER_S = 2000.0
TARGET_LIFT = 1.2
TARGET_LIFT_SHARE = 0.9
HABIT_LIKE = 0.9  # base rate: a behaviour on nine observable days in ten
DECIDE_MAX = 300  # events of the last day decided through the service, per entity


@dataclass
class Source:
    """One entity's stream: its source (``ordonez-a``, ``fitbit``...), scope and zone."""

    source: str
    key: str
    scope: str
    zone: ZoneInfo
    items: list[Item]


def _ordered(items: list[Item]) -> list[Item]:
    return sorted(items, key=lambda it: (it["occurred_at"], it.get("source_key", "")))


def real_sources() -> list[Source]:

    if not real.DATA.is_dir():
        fail(f"the shared data folder {real.DATA} is missing")
    found = [
        Source(f"ordonez-{h.lower()}", f"ordonez-{h.lower()}", "home", real.MADRID, items)
        for h in "AB"
        if (items := _ordered(real.ordonez_items(h)))
    ]
    for source, zone, per in (
        ("fitbit", real.NEW_YORK, real.fitbit_items()),
        ("k8s", real.UTC, real.github_items(real.K8S)),
        ("ants", real.UTC, real.github_items(real.ANTS)),
    ):
        scope = "sports" if source == "fitbit" else "code"
        found += [
            Source(source, key, scope, zone, _ordered(items)) for key, items in sorted(per.items())
        ]
    return found


def synthetic_sources(scopes: Sequence[str], days: int, seed: int) -> list[Source]:

    return [
        Source(
            f"synthetic-{scope}",
            f"mem-{scope}",
            scope,
            ZoneInfo(ZONES[scope]),
            generate(scope, days=days, seed=seed),
        )
        for scope in scopes
    ]


def local_day(item: Item, zone: ZoneInfo) -> date:
    return (
        datetime.fromisoformat(item["occurred_at"].replace("Z", "+00:00")).astimezone(zone).date()
    )


def engine_events(items: Sequence[Item]) -> list[Any]:
    """The items as the engine sees stored events: ids in order, ``private`` left out."""

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


# -- 1. replay and what memory holds ------------------------------------------------------------


@dataclass
class Held:
    """What one replayed stream's memory holds."""

    events: int
    seconds: float
    closed_days: int
    facts: int
    states: Counter[str]
    active_lifts: list[float]
    intervening: int  # active or weakening with a service that applies to the behavior
    always_true: int  # of those, behaviours on every observable day
    habit_like: int  # of those, behaviours on at least HABIT_LIKE of observable days


def held_by(stream: Any) -> dict[str, Any]:
    """The quality figures of a replayed ``MemoryStream``."""

    states: Counter[str] = Counter()
    lifts, intervening, always, habitual = [], 0, 0, 0
    for tracked in stream.tracked.values():
        state = tracked.state
        states[state.state] += 1
        tally = state.tally
        if state.state == "active":
            lifts.append(tally.lift)
        if state.state in ("active", "weakening") and any(
            s.applies(tracked.proposal) for s in services(stream.scope)
        ):
            intervening += 1
            always += tally.observable > 0 and tally.behavior_days == tally.observable
            habitual += tally.base >= HABIT_LIKE
    return {
        "closed_days": len(stream.closed),
        "facts": sum(len(c.record.observations) for c in stream.closed.values()),
        "states": states,
        "active_lifts": lifts,
        "intervening": intervening,
        "always_true": always,
        "habit_like": habitual,
    }


def build(source: Source) -> Held:
    """Memory replayed from the stream without decisions, and what it holds."""

    events = engine_events(source.items)
    stream = MemoryStream(
        source.scope, source.zone, POLICIES["rules"], frame_source=compiled_frames
    )
    began = time.perf_counter()
    for event in events:
        stream.ingest(event)
    stream.close_through(date.max)
    seconds = time.perf_counter() - began
    return Held(len(events), seconds, **held_by(stream))


@dataclass
class Replay:
    source: str
    events: int
    seconds: float
    decide_ms: list[float] = field(default_factory=list)
    close_s: float = 0.0
    memory: dict[str, Any] = field(default_factory=dict)

    @property
    def per_s(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def replay(source: Source) -> Replay:
    """The causal loop: a rules decision at every event, timed apart from the day closes."""

    closes: list[float] = []

    class Timed(MemoryStream):
        # Times the day closes a process() call runs, so the rest is the per-event decision.
        def close_through(self, before: date) -> list[date]:
            began = time.perf_counter()
            try:
                return super().close_through(before)
            finally:
                closes.append(time.perf_counter() - began)

    events = engine_events(source.items)
    stream = Timed(source.scope, source.zone, POLICIES["rules"], frame_source=compiled_frames)
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
        source.source,
        len(events),
        seconds,
        decide_ms,
        sum(closes),
        {
            "closed_days": len(stream.closed),
            "interventions": actions.get("intervene", 0),
            "suppressed": sum(o.suppressed for o in stream.decisions),
        },
    )


# -- 2. service ---------------------------------------------------------------------------------


def service_part(
    sources: Sequence[Source], decide_max: int
) -> tuple[list[Any], dict[str, int], int]:
    with scratch_instance(MEMORY_DB, MEMORY_REDIS_DB) as (env, _key):
        django_on(env)
        # After django_on: the service part's models must read the scratch database's settings.
        from perf import memory_service

        return memory_service.run(
            [
                (s.key, s.scope, s.source, s.zone, s.items, [local_day(i, s.zone) for i in s.items])
                for s in sources
            ],
            decide_max,
            (*MEMORY_TABLES, DECISION_TABLE),
        )


# -- report -------------------------------------------------------------------------------------


def _ms(values: list[float]) -> str:
    return f"p50 {percentile(values, 0.5):.2f} ms, p95 {percentile(values, 0.95):.2f} ms"


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _by_source(sources: Sequence[Source]) -> dict[str, list[Source]]:
    grouped: dict[str, list[Source]] = {}
    for source in sources:
        grouped.setdefault(source.source, []).append(source)
    return grouped


def replay_report(sources: Sequence[Source], figures: dict[str, Any]) -> None:
    print("Replay: memory built from each stream, from empty (MemoryStream.ingest, no DB)")
    events, seconds = 0, 0.0
    lifts: list[float] = []
    intervening = always = habit_like = entities = 0
    for name, group in _by_source(sources).items():
        held = [build(source) for source in group]
        n = sum(h.events for h in held)
        s = sum(h.seconds for h in held)
        active = [len(h.active_lifts) for h in held]
        g_lifts = [lift for h in held for lift in h.active_lifts]
        g_int = sum(h.intervening for h in held)
        g_always = sum(h.always_true for h in held)
        g_habit = sum(h.habit_like for h in held)
        states = sum((h.states for h in held), Counter())
        lifted = sum(lift >= TARGET_LIFT for lift in g_lifts)
        print(
            f"  {name}: {len(group)} entit{'y' if len(group) == 1 else 'ies'}, {n:,} events in "
            f"{s:.2f} s = {n / s:,.0f} events/s; {sum(h.closed_days for h in held):,} closed "
            f"days, {sum(h.facts for h in held):,} facts"
        )
        print(
            f"    regularities {dict(sorted(states.items()))}; active per entity "
            f"{sum(active) / len(group):.1f} (max {max(active)}); lift >= {TARGET_LIFT}: "
            f"{lifted} of {len(g_lifts)}; can intervene {g_int}, of which always-true "
            f"{g_always}, habit-like (base >= {HABIT_LIKE}) {g_habit}"
        )
        figures[f"{name}_replay_events_per_s"] = round(n / s, 1)
        figures[f"{name}_active_per_entity"] = round(sum(active) / len(group), 2)
        figures[f"{name}_lift_ge_1_2_share"] = _share(lifted, len(g_lifts))
        events, seconds = events + n, seconds + s
        lifts += g_lifts
        intervening, always, habit_like = (
            intervening + g_int,
            always + g_always,
            habit_like + g_habit,
        )
        entities += len(group)
    figures["replay_events_per_s"] = round(events / seconds, 1)
    figures["replay_s"] = round(seconds, 2)
    figures["entities"] = entities
    figures["active_per_entity"] = round(len(lifts) / entities, 2)
    figures["lift_ge_1_2_share"] = _share(sum(x >= TARGET_LIFT for x in lifts), len(lifts))
    figures["intervening"] = intervening
    figures["always_true_intervening"] = always
    figures["always_true_intervening_share"] = _share(always, intervening)
    figures["habit_like_intervening_share"] = _share(habit_like, intervening)
    print(
        f"  all: {figures['replay_events_per_s']:,.0f} events/s (target >= "
        f"{TARGET_EVENTS_PER_S:,.0f}); {figures['active_per_entity']} active regularities per "
        f"entity, {figures['lift_ge_1_2_share']:.1%} with lift >= {TARGET_LIFT} (target >= "
        f"{TARGET_LIFT_SHARE:.0%}); always-true among the {intervening} that can intervene: "
        f"{always} (target 0)"
    )


def loop_report(sources: Sequence[Source], figures: dict[str, Any]) -> None:
    print("Causal loop: a rules decision at every event besides the day closes (no DB)")
    runs = []
    for name, group in _by_source(sources).items():
        done = [replay(source) for source in group]
        runs += done
        n = sum(r.events for r in done)
        s = sum(r.seconds for r in done)
        ms = [x for r in done for x in r.decide_ms]
        print(
            f"  {name}: {n:,} events in {s:.1f} s = {n / s:,.0f} events/s (day closes "
            f"{sum(r.close_s for r in done):.1f} s); per-event decision {_ms(ms)}; "
            f"{sum(r.memory['interventions'] for r in done)} interventions, "
            f"{sum(r.memory['suppressed'] for r in done)} suppressed"
        )
        figures[f"{name}_loop_events_per_s"] = round(n / s, 1)
        figures[f"{name}_engine_decision_p95_ms"] = round(percentile(ms, 0.95), 3)
    total = sum(r.events for r in runs)
    all_ms = [ms for r in runs for ms in r.decide_ms]
    figures["loop_events_per_s"] = round(total / sum(r.seconds for r in runs), 1)
    figures["engine_decision_p50_ms"] = round(percentile(all_ms, 0.5), 3)
    figures["engine_decision_p95_ms"] = round(percentile(all_ms, 0.95), 3)
    print(f"  all: {figures['loop_events_per_s']:,.0f} events/s; decision {_ms(all_ms)}")


def service_report(sources: Sequence[Source], decide_max: int, figures: dict[str, Any]) -> None:
    chosen = [max(group, key=lambda s: len(s.items)) for group in _by_source(sources).values()]
    print(
        "Service: the days before the decided day ingested and closed on PostgreSQL, then "
        f"that day's first {decide_max} events decided one by one with memory_decide"
    )
    served, sizes, decisions = service_part(chosen, decide_max)
    for s in served:
        print(
            f"  {s.source} ({s.scope}), {s.day}: history {s.history_events:,} events ingested and "
            f"{s.closed_days} days closed in {s.history_s:.1f} s; {len(s.latency_ms)} "
            f"decisions, {s.interventions} interventions"
        )
        print(f"    stored latency_ms {_ms(s.latency_ms)}; wall per call {_ms(s.wall_ms)}")
        figures[f"{s.source}_decision_p95_ms"] = round(percentile(s.latency_ms, 0.95), 3)
    latency = [ms for s in served for ms in s.latency_ms]
    wall = [ms for s in served for ms in s.wall_ms]
    figures["decision_p50_ms"] = round(percentile(latency, 0.5), 3)
    figures["decision_p95_ms"] = round(percentile(latency, 0.95), 3)
    figures["decision_wall_p50_ms"] = round(percentile(wall, 0.5), 3)
    figures["decision_wall_p95_ms"] = round(percentile(wall, 0.95), 3)
    figures["decisions"] = len(latency)
    print(
        f"  all: stored latency_ms {_ms(latency)} (target p95 <= {TARGET_P95_MS:.0f} ms); "
        f"wall per call {_ms(wall)}"
    )
    entity_days = sum(s.closed_days for s in served)
    memory = sum(sizes[t] for t in MEMORY_TABLES)
    figures["entity_days"] = entity_days
    figures["memory_bytes_per_entity_day"] = round(memory / entity_days) if entity_days else 0
    figures["decision_bytes_each"] = round(sizes[DECISION_TABLE] / decisions) if decisions else 0
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


def main(argv: list[str] | None = None) -> int:

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", choices=("real", "synthetic"), default="real")
    parser.add_argument(
        "--parts", default=None, help="default: replay,service (real), all three (synthetic)"
    )
    parser.add_argument("--decide-max", type=int, default=DECIDE_MAX)
    parser.add_argument("--days", type=int, default=90, help="synthetic only")
    parser.add_argument("--seed", type=int, default=7, help="synthetic only")
    parser.add_argument("--scopes", default=",".join(SCOPES), help="synthetic only")
    args = parser.parse_args(argv)
    default = "replay,service" if args.source == "real" else "replay,loop,service"
    parts = set((args.parts or default).split(","))
    if unknown := parts - {"replay", "loop", "service"}:
        fail(f"unknown part(s) {sorted(unknown)}; use replay, loop, service")
    if args.decide_max < 1:
        fail("--decide-max must be at least 1")
    if "service" in parts and redis_url() is None:
        print("Redis is not reachable; the service part queues its tasks on the filesystem broker")
    if "service" in parts:
        # Reading the files reads settings (the import limits): they must be the scratch's.
        settings_on(MEMORY_DB, MEMORY_REDIS_DB)
    figures: dict[str, Any] = {"source": args.source}
    if args.source == "real":
        sources = real_sources()
        print("ProactMem on the REAL streams of ../shared/data")
    else:
        scopes = [s for s in args.scopes.split(",") if s]
        if unknown := set(scopes) - set(SCOPES):
            fail(f"unknown scope(s) {sorted(unknown)}; use {', '.join(SCOPES)}")
        if args.days < 3:
            fail("--days must be at least 3: a regularity needs three fulfilled days")
        sources = synthetic_sources(scopes, args.days, args.seed)
        figures.update(days=args.days, seed=args.seed)
        print(f"ProactMem on SYNTHETIC {args.days}-day streams (seed {args.seed})")
    figures["events"] = sum(len(s.items) for s in sources)
    for name, group in _by_source(sources).items():
        count = sum(len(s.items) for s in group)
        print(f"  {name} ({group[0].scope}): {len(group)} stream(s), {count:,} events")
    if "replay" in parts:
        replay_report(sources, figures)
    if "loop" in parts:
        loop_report(sources, figures)
    if "service" in parts:
        service_report(sources, args.decide_max, figures)
    finish("memory", figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
