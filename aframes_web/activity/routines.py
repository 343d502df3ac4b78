"""Workflow patterns, routines, replay plans and the cost instrument over a window of stored days.

A read (nothing is stored): each local day of the window is compiled from its stored events
exactly as its day document is (:func:`~aframes_web.activity.services.day_compile_read`), the
days' action history is built (``compiler.actions.history``), and the pure cores answer:
``compiler.patterns.detect`` (workflow patterns), ``compiler.routines.mine`` with
``compiler.replay`` (routines with their guarded plan and minimal script, Activity Frames §7.1)
and ``compiler.cost.report`` (R_inject, R_info, h and the ceiling, §7.1–§7.4), with tokens
counted by tiktoken's offline ``cl100k_base`` as every token figure of the service is.

The REST views, the MCP tool, the dashboard and ``manage.py cost_report`` all call these
functions, so every door reads one truth (ARCHITECTURE.md, "Pure cores, thin shells").
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.core.cache import cache

from aframes_web.activity.services import (
    day_bounds,
    day_compile_read,
    entity_event_days,
    window_watermark,
)
from aframes_web.streams.models import Entity
from compiler.actions import GRANULARITIES, Action, history
from compiler.cost import DEFAULT_SCREEN, SCREENS, percent, ratio, report
from compiler.document import Compiled, runs
from compiler.params import COMPILER_VERSION, Params
from compiler.patterns import detect
from compiler.replay import is_destructive, plan, script
from compiler.routines import Routine, mine
from compiler.tokens import cl100k

WINDOW_DAYS_DEFAULT = 30  # the last 30 days with desktop activity
WINDOW_DAYS_MAX = 90  # each day is compiled on request: ~0.2-1 s a day
# How long an answer is kept; a stale one is never served (its key names the events it read),
# so this only bounds the cache's size.
ANSWER_CACHE_S = 3600


class WindowInvalid(ValueError):
    """A window that cannot be read; the message says what to ask for instead."""


@dataclass(frozen=True, slots=True)
class History:
    """The compiled days of a window and their action streams."""

    entity: Entity
    days: tuple[date, ...]  # local days with desktop activity, oldest first
    compiled: tuple[Compiled, ...]
    actions: dict[str, list[Action]]  # per granularity

    def window(self) -> dict[str, Any]:
        return {
            "days": len(self.days),
            "from": self.days[0].isoformat() if self.days else None,
            "to": self.days[-1].isoformat() if self.days else None,
        }


def window_days(
    *,
    entity: Entity,
    days: int | None = None,
    start: date | None = None,
    end: date | None = None,
) -> list[date]:
    """The local days with desktop activity in the window, oldest first.

    ``days``: the last N days that have activity (default 30; days without any are not
    counted, so a laptop off for a week still gives N days). ``start``/``end`` (inclusive)
    instead: the days with activity between them. At most ``WINDOW_DAYS_MAX`` days.
    """
    if days is not None and (start is not None or end is not None):
        raise WindowInvalid("Give days, or from and to, not both.")
    if days is not None and not (isinstance(days, int) and 1 <= days <= WINDOW_DAYS_MAX):
        raise WindowInvalid(f"days must be a whole number from 1 to {WINDOW_DAYS_MAX}, got {days}.")
    if start is not None and end is not None and end < start:
        raise WindowInvalid(f"from {start} is after to {end}; swap them.")
    found = entity_event_days(entity=entity)
    if start is None and end is None:
        return found[-(days or WINDOW_DAYS_DEFAULT) :]
    chosen = [d for d in found if (start is None or d >= start) and (end is None or d <= end)]
    if len(chosen) > WINDOW_DAYS_MAX:
        raise WindowInvalid(
            f"{start} to {end} holds {len(chosen)} days with activity; at most "
            f"{WINDOW_DAYS_MAX} are read at once. Narrow the range."
        )
    return chosen


def _desktop(entity: Entity) -> None:
    if entity.scope != Entity.Scope.DESKTOP:
        raise WindowInvalid(
            f"Entity {entity.key!r} is a {entity.scope} entity; patterns and routines are "
            "mined from compiled desktop activity."
        )


def _compile(
    entity: Entity,
    chosen: Sequence[date],
    *,
    include_text: bool = False,
    progress: Callable[[int, int, date], None] | None = None,
) -> History:
    params = Params(include_text=include_text)
    compiled: list[Compiled] = []
    kept: list[date] = []
    for index, day in enumerate(chosen, start=1):
        if progress is not None:
            progress(index, len(chosen), day)
        result = day_compile_read(entity=entity, day=day, params=params)
        if result.compiled is not None:
            compiled.append(result.compiled)
            kept.append(day)
    streams = {g: history(compiled, g) for g in GRANULARITIES}
    return History(entity, tuple(kept), tuple(compiled), streams)


def entity_history(
    *,
    entity: Entity,
    days: int | None = None,
    start: date | None = None,
    end: date | None = None,
    include_text: bool = False,
    progress: Callable[[int, int, date], None] | None = None,
) -> History:
    """Compile each day of the window (:func:`window_days`) and build its action streams."""
    _desktop(entity)
    chosen = window_days(entity=entity, days=days, start=start, end=end)
    return _compile(entity, chosen, include_text=include_text, progress=progress)


def _cached(
    what: str, entity: Entity, days: int | None, compute: Callable[[History], dict[str, Any]]
) -> dict[str, Any]:
    """``compute`` over the window's history, kept in the cache under the window's watermark
    (as the context window is, aframes_web.activity.renderings): the same window is asked for again
    and again (the dashboard, agents), and an event that would change a compile changes the
    key, so a stale answer is never served."""
    _desktop(entity)
    chosen = window_days(entity=entity, days=days)
    if not chosen:
        return compute(_compile(entity, chosen))
    start, _ = day_bounds(entity, chosen[0])
    _, end = day_bounds(entity, chosen[-1])
    parts = "|".join(
        map(
            str,
            (
                COMPILER_VERSION,
                what,
                entity.pk,
                entity.created_at.timestamp(),  # a database may reuse a deleted entity's id
                entity.timezone,
                *chosen,
                *window_watermark(entity=entity, start=start, end=end),
            ),
        )
    )
    key = "aframes-routines:" + hashlib.sha256(parts.encode()).hexdigest()
    answer = cache.get(key)
    if answer is None:
        answer = compute(_compile(entity, chosen))
        cache.set(key, answer, ANSWER_CACHE_S)
    return answer


def entity_patterns(*, entity: Entity, days: int | None = None) -> dict[str, Any]:
    """The workflow patterns of the window (compiler.patterns.detect), typed text excluded."""

    def compute(found: History) -> dict[str, Any]:
        return {
            "entity": entity.key,
            "window": found.window(),
            "patterns": detect(found.compiled) if found.compiled else [],
        }

    return _cached("patterns", entity, days, compute)


def _local(t: float, zone: ZoneInfo) -> str:
    return datetime.fromtimestamp(t, zone).isoformat(timespec="seconds")


def step_words(steps: Sequence[dict[str, Any]]) -> str:
    """A routine's steps in a line: ``New expense → type Amount → Save`` (clicks and URL
    templates by their target, typing as ``type <field>``)."""
    return " → ".join(f"type {s['target']}" if s["op"] == "type" else s["target"] for s in steps)


def routine_record(
    routine: Routine, zone: ZoneInfo, figures: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A routine as the API, the dashboard and the cost report show it: its steps, every
    occurrence with its evidence, the guarded plan, the minimal script and (from the cost
    report) its tokens and ratios."""
    guarded = plan(routine)
    record: dict[str, Any] = {
        "id": routine.id,
        "granularity": routine.granularity,
        "length": len(routine.steps),
        "count": routine.count,
        "steps": [
            {
                "op": s.op,
                "target": s.target,
                "role": s.role,
                "app": s.app,
                "url_template": s.url_template,
                "destructive": is_destructive(p),
            }
            for s, p in zip(routine.steps, guarded["steps"], strict=True)
        ],
        "occurrences": [
            {
                "day": o.day,
                "start": _local(o.start, zone),
                "end": _local(o.end, zone),
                "frames": list(o.frames),
                "evidence": runs(o.evidence),
            }
            for o in routine.occurrences
        ],
        "plan": guarded,
        "script": script(routine),
    }
    if figures is not None:
        for name in ("c_agent", "plan_tokens", "script_tokens", "r_inject", "r_info"):
            record[name] = figures[name]
        record["guard_coverage"] = figures["guard_coverage"]
    else:
        record["guard_coverage"] = guarded["guard_coverage"]
    return record


def _screen(screen: str) -> str:
    if screen not in SCREENS:
        raise WindowInvalid(f"screen must be one of {', '.join(SCREENS)}, got {screen!r}.")
    return screen


def entity_routines(
    *,
    entity: Entity,
    days: int | None = None,
    granularity: str = "action",
    screen: str = DEFAULT_SCREEN,
) -> dict[str, Any]:
    """The routines of the window at one granularity, each with its occurrences, plan,
    script, tokens and ratios, and the window's R and h figures (§7.1–§7.4)."""
    if granularity not in GRANULARITIES:
        raise WindowInvalid(
            f"granularity must be one of {', '.join(GRANULARITIES)}, got {granularity!r}."
        )
    _screen(screen)

    def compute(found: History) -> dict[str, Any]:
        stream = found.actions[granularity]
        cost = report({granularity: stream}, count_tokens=cl100k(), screen=screen)
        figures = cost["granularities"][granularity]
        rows = {row["id"]: row for row in figures["routines"]}
        zone = ZoneInfo(entity.timezone)
        mined = mine(stream, granularity=granularity)
        return {
            "entity": entity.key,
            "window": found.window(),
            "granularity": granularity,
            "screen": screen,
            "steps": len(stream),
            "routines": [routine_record(r, zone, rows.get(r.id)) for r in mined],
            "summary": _summary(figures),
        }

    return _cached(f"routines|{granularity}|{screen}", entity, days, compute)


def _summary(figures: dict[str, Any]) -> dict[str, Any]:
    """A granularity's figures without the per-routine rows (those are on the routines)."""
    return {k: v for k, v in figures.items() if k != "routines"}


def entity_cost(
    *,
    entity: Entity,
    days: int | None = None,
    start: date | None = None,
    end: date | None = None,
    screen: str = DEFAULT_SCREEN,
    fit_days: int | None = None,
    progress: Callable[[int, int, date], None] | None = None,
) -> dict[str, Any]:
    """The cost report of the window at both granularities, with every routine's record."""
    _screen(screen)
    if fit_days is not None and fit_days < 1:
        raise WindowInvalid(f"fit_days must be at least 1, got {fit_days}.")
    found = entity_history(entity=entity, days=days, start=start, end=end, progress=progress)
    if fit_days is not None and fit_days >= len(found.days):
        raise WindowInvalid(
            f"fit_days {fit_days} leaves nothing to hold out: the window has "
            f"{len(found.days)} day{'s' if len(found.days) != 1 else ''} with activity."
        )
    cost = report(found.actions, count_tokens=cl100k(), screen=screen, fit_days=fit_days)
    zone = ZoneInfo(entity.timezone)
    out: dict[str, Any] = {
        "entity": entity.key,
        "timezone": entity.timezone,
        "window": found.window(),
        "screen": screen,
        "fit_days": fit_days,
        "tokens": "cl100k_base (tiktoken, offline)",
        "granularities": {},
    }
    for granularity, figures in cost["granularities"].items():
        rows = {row["id"]: row for row in figures["routines"]}
        mined = mine(found.actions[granularity], granularity=granularity)
        out["granularities"][granularity] = {
            "steps": len(found.actions[granularity]),
            **_summary(figures),
            "routines": [routine_record(r, zone, rows.get(r.id)) for r in mined],
        }
    return out


def _cell(text: str) -> str:
    """Captured text inside a Markdown table cell: one line, no cell breaks."""
    return " ".join(text.split()).replace("|", "\\|")


def cost_markdown(cost: dict[str, Any]) -> str:
    """The cost report (:func:`entity_cost`) as Markdown a person reads."""
    window = cost["window"]
    lines = [
        f"# Routines and cost: {cost['entity']}",
        "",
        f"{window['days']} day{'s' if window['days'] != 1 else ''} with desktop activity, "
        f"{window['from'] or '—'} to {window['to'] or '—'} ({cost['timezone']}); screen "
        f"{cost['screen']}; tokens {cost['tokens']}. C_agent(k) = k·(w·h/750 + 350 + 180) "
        "(Activity Frames §7.1); R_inject = C_agent / plan tokens, R_info = C_agent / script "
        "tokens. The ceiling is h·(1 − 1/R_info); R is never multiplied by the context "
        "compression ratio.",
    ]
    for granularity, g in cost["granularities"].items():
        held = g.get("holdout") or {}
        lines += [
            "",
            f"## {'URL' if granularity == 'url' else 'Action'} granularity",
            "",
            f"- steps in the stream: {g['steps']:,}; routines: {len(g['routines'])}",
            f"- h_raw {percent(g['h_raw'])}, h_specific {percent(g['h_specific'])}"
            + (
                f"; hold-out {percent(held.get('h_holdout'))} (fit on {len(held['fit_days'])} "
                f"day{'s' if len(held['fit_days']) != 1 else ''}, tested on "
                f"{len(held['test_days'])})"
                if held
                else "; hold-out: too few days"
            ),
            f"- R_inject median {ratio(g['r_inject']['median'])}, R_info median "
            f"{ratio(g['r_info']['median'])}; plan tokens median "
            f"{g['plan_tokens']['median'] if g['plan_tokens']['median'] is not None else '—'}, "
            f"script tokens median "
            f"{g['script_tokens']['median'] if g['script_tokens']['median'] is not None else '—'}",
            f"- ceiling h·(1 − 1/R_info): {percent(g['ceiling'])}"
            + (
                f"; on the hold-out {percent(g['ceiling_holdout'])}"
                if g.get("ceiling_holdout") is not None
                else ""
            ),
            "",
        ]
        if not g["routines"]:
            lines.append("No routine recurs at least 3 times in this window.")
            continue
        lines += [
            "| routine | steps | length | count | plan tokens | script tokens | R_inject "
            "| R_info | guard coverage |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in g["routines"]:
            steps = step_words(r["steps"])
            lines.append(
                f"| `{r['id']}` | {_cell(steps)} | {r['length']} | {r['count']} | "
                f"{r.get('plan_tokens', '—')} | {r.get('script_tokens', '—')} | "
                f"{ratio(r.get('r_inject'))} | {ratio(r.get('r_info'))} | "
                f"{r['guard_coverage']:.2f} |"
            )
    return "\n".join(lines) + "\n"
