"""Certify the compile pipeline on stored data: deterministic, rebuildable, append-only, flat cost.

For each day with desktop events it checks:

- **recompile**: two compiles of the same events give byte-identical canonical JSON once
  ``generated_at`` is set aside (the one field allowed to differ; the second compile is given a
  different ``generated_at`` on purpose so the exclusion is exercised, never assumed);
- **rebuild**: a compile from scratch equals the incrementally maintained current document (same
  sha256), that document has read every event of its day, and what is stored and served matches
  it too: the body hashes to its sha256, the context block is the rebuild's, and the
  materialised frame rows are exactly the document's frames;
- **append-only**: every stored version after the first read more events than the one before
  (new events of its own day) or came from a new compiler version or parameters; a version
  written for any other reason, e.g. while a later day was compiled, fails;
- **cost against history**: median compile ms per day, and the mean of the first half of the
  days against the second half; the cost of a day must not grow with the history before it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

from aframes_web.activity.models import DayDocument, Frame
from aframes_web.activity.services import (
    CompileFn,
    DayCompile,
    day_compile_read,
    entity_event_days,
    frame_rows,
)
from aframes_web.streams.models import Entity
from compiler.document import canonical_json, canonical_sha256
from compiler.emit import context_block

# The second half of the days may cost this much more than the first before certify fails...
COST_GROWTH_MAX = 1.5
# ...unless the difference is under this many ms, which is timer and cache noise at day scale.
COST_NOISE_MS = 25.0
# Fewer days than this give no first-half / second-half comparison (it passes by default): a
# few days' timings are noise (a loaded machine alone doubled one of four days in CI).
MIN_DAYS_FOR_TREND = 8
# A fixed, obviously different generated_at for the second compile of each day.
OTHER_GENERATED_AT = "1970-01-01T00:00:00+00:00"


@dataclass
class DayCheck:
    day: str
    events: int
    compile_ms: float
    recompile: bool
    rebuild: bool
    append_only: bool
    versions: int
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.recompile and self.rebuild and self.append_only


@dataclass
class EntityCertificate:
    entity: str
    timezone: str
    days: list[DayCheck]
    median_ms: float
    first_half_mean_ms: float
    second_half_mean_ms: float
    cost_flat: bool

    @property
    def passed(self) -> bool:
        return bool(self.days) and self.cost_flat and all(d.passed for d in self.days)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["passed"] = self.passed
        for item, check in zip(out["days"], self.days, strict=True):
            item["passed"] = check.passed
        return out


def _without_generated_at(document: dict[str, Any]) -> str:
    return canonical_json({k: v for k, v in document.items() if k != "generated_at"})


def _append_only(versions: list[DayDocument]) -> list[str]:
    """Problems with the stored history of one day (versions oldest first).

    A new version must have read more events than the one before (events of its own day, or an
    absence reaching into it from the day before). The watermark alone cannot tell: ids are
    not committed in order, so a late event can have a lower id than one already read.
    """
    problems: list[str] = []
    for before, after in zip(versions, versions[1:], strict=False):
        if (before.compiler_version, before.params) != (after.compiler_version, after.params):
            continue  # a new compiler or new parameters may rewrite every day, openly
        if after.event_count <= before.event_count:
            problems.append(
                f"version {after.version} was written without new events of its own day "
                f"({before.event_count} events before, {after.event_count} after)"
            )
    return problems


def _stored_problems(current: DayDocument, rebuilt: DayCompile) -> list[str]:
    """Whether what is stored and served matches the rebuild beyond the sha256 column."""
    problems: list[str] = []
    if canonical_sha256(current.body) != current.sha256:
        problems.append("the stored body does not hash to its sha256 (it was altered)")
    assert rebuilt.compiled is not None
    if context_block(rebuilt.compiled) != current.context:
        problems.append("the stored context block differs from the rebuild's")
    fields = [f.attname for f in Frame._meta.concrete_fields if f.name not in ("id", "document")]

    def rows(frames: Iterable[Frame]) -> list[tuple[Any, ...]]:
        return sorted(tuple(getattr(f, name) for name in fields) for f in frames)

    expected = rows(frame_rows(current, current.body["frames"]))
    if rows(Frame.objects.filter(document=current)) != expected:
        problems.append("the materialised frames differ from the stored document's frames")
    return problems


def certify_day(entity: Entity, day: date, *, compile_fn: CompileFn | None = None) -> DayCheck:
    first = day_compile_read(entity=entity, day=day, compile_fn=compile_fn)
    second = day_compile_read(
        entity=entity, day=day, compile_fn=compile_fn, generated_at=OTHER_GENERATED_AT
    )
    problems: list[str] = []
    assert first.compiled is not None and second.compiled is not None
    recompile = _without_generated_at(first.compiled.document) == _without_generated_at(
        second.compiled.document
    )
    if not recompile:
        problems.append("two compiles of the same events differ beyond generated_at")
    versions = list(DayDocument.objects.filter(entity=entity, day=day).order_by("version"))
    current = versions[-1] if versions and versions[-1].current else None
    rebuild = True
    if current is None:
        rebuild = False
        problems.append("no stored document (its compile is pending or failed)")
    else:
        stored = _stored_problems(current, first)
        if stored:
            rebuild = False
            problems += stored
        if current.watermark < first.watermark or current.event_count < first.event_count:
            rebuild = False
            problems.append(
                f"stored document is behind: it read {current.event_count} events up to id "
                f"{current.watermark}, the day has {first.event_count} up to id "
                f"{first.watermark} (a compile is pending)"
            )
        if current.sha256 != first.sha256:
            rebuild = False
            problems.append(
                f"rebuild from scratch gives sha256 {first.sha256[:12]}, the stored "
                f"document has {current.sha256[:12]}"
            )
    history = _append_only(versions)
    problems += history
    return DayCheck(
        day=day.isoformat(),
        events=first.event_count,
        compile_ms=round(first.compile_ms, 1),
        recompile=recompile,
        rebuild=rebuild,
        append_only=not history,
        versions=len(versions),
        problems=problems,
    )


def _halves(costs: list[float]) -> tuple[float, float]:
    """Mean cost of the first half of the days and of the second (0.0 for an empty half)."""
    half = len(costs) // 2
    first, second = costs[:half], costs[half:]
    return (
        statistics.fmean(first) if first else 0.0,
        statistics.fmean(second) if second else 0.0,
    )


def cost_flat(costs: list[float]) -> bool:
    """Whether compile cost stays flat as history grows: the second half of the days may cost
    at most COST_GROWTH_MAX times the first, or COST_NOISE_MS more. Too few days pass."""
    if len(costs) < MIN_DAYS_FOR_TREND:
        return True
    first, second = _halves(costs)
    return second <= COST_GROWTH_MAX * first or second - first < COST_NOISE_MS


def certify_entity(
    entity: Entity, *, last_days: int | None = None, compile_fn: CompileFn | None = None
) -> EntityCertificate:
    days = entity_event_days(entity=entity)
    if last_days is not None:
        days = days[-last_days:] if last_days > 0 else []
    checks = [certify_day(entity, day, compile_fn=compile_fn) for day in days]
    costs = [c.compile_ms for c in checks]
    first_half, second_half = _halves(costs)
    return EntityCertificate(
        entity=f"{entity.team.slug}/{entity.key}",
        timezone=entity.timezone,
        days=checks,
        median_ms=round(statistics.median(costs), 1) if costs else 0.0,
        first_half_mean_ms=round(first_half, 1),
        second_half_mean_ms=round(second_half, 1),
        cost_flat=cost_flat(costs),
    )
