"""Which methods exist, and what each one is: a memory variant, a policy and its switches.

* ``proactmem``: validated trajectories and replay-gated regularities, the rules policy (the
  system).
* ``proactmem-llm``: the same memory, the configured model deciding (needs ``LLM_*``).
* ``event_only``: reads no memory; the event-only rules on the current point and the points of
  the last 72 hours (the paper's baseline, B.5).
* ``recent_memory``: recent points and the last three days' trajectories, no regularities.
* ``no_trajectory`` (ablation): regularities, but no trajectory of today; occurrences are
  judged by the clock alone.
* ``no_replay_gate`` (ablation): every mined regularity is retrievable, replay never gates it.
* ``no_validation`` (ablation): trajectory segments are accepted without validation.

All share intervention control unless a run switches it off.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from types import MappingProxyType
from typing import Any

from memory.engine.decide import (
    EventOnlyPolicy,
    RecentMemoryPolicy,
    RulesPolicy,
    llm_policy,
    threshold_for,
)

STANDARD = "standard"
UNVALIDATED = "unvalidated"


@dataclass(frozen=True)
class MethodSpec:
    """One method: its name, the memory it reads, its policy and ProactMem's switches."""

    name: str
    description: str
    memory: str = STANDARD
    gate: bool = True
    blind: bool = False
    needs_llm: bool = False
    policy: Callable[[], Any] = RulesPolicy

    def make_policy(self, complete: Callable[[str], str] | None = None) -> Any:
        if self.needs_llm:
            if complete is None:
                raise ValueError(f"{self.name} needs a model: set LLM_BASE_URL and LLM_MODEL")
            return llm_policy(complete)
        return self.policy()


METHODS: Mapping[str, MethodSpec] = MappingProxyType(
    {
        "proactmem": MethodSpec(
            "proactmem", "ProactMem (rules): validated trajectories and replay-gated regularities"
        ),
        "proactmem-llm": MethodSpec(
            "proactmem-llm", "ProactMem with the configured LLM deciding", needs_llm=True
        ),
        "event_only": MethodSpec(
            "event_only",
            "Event only: the current point and the points of the last 72 hours",
            policy=EventOnlyPolicy,
        ),
        "recent_memory": MethodSpec(
            "recent_memory",
            "Recent memory: recent points and the last three days' trajectories, no regularities",
            policy=RecentMemoryPolicy,
        ),
        "no_trajectory": MethodSpec(
            "no_trajectory",
            "Ablation: no trajectory of today (occurrences judged by the clock alone)",
            blind=True,
        ),
        "no_replay_gate": MethodSpec(
            "no_replay_gate",
            "Ablation: every mined regularity is retrievable, replay never gates it",
            gate=False,
        ),
        "no_validation": MethodSpec(
            "no_validation",
            "Ablation: trajectory segments accepted without validation",
            memory=UNVALIDATED,
        ),
    }
)
DEFAULT_METHODS = (
    "proactmem",
    "event_only",
    "recent_memory",
    "no_trajectory",
    "no_replay_gate",
    "no_validation",
)


def methods_named(names: Sequence[str], *, llm_configured: bool = False) -> list[MethodSpec]:
    """The methods called ``names`` (``all``: every one, ``proactmem-llm`` only when a model is
    configured); ValueError naming the choices otherwise."""
    chosen: list[str] = []
    for name in names:
        if name == "all":
            chosen += [n for n in METHODS if llm_configured or not METHODS[n].needs_llm]
        elif name not in METHODS:
            raise ValueError(f"unknown method {name!r}; use any of {', '.join(METHODS)} or all")
        else:
            chosen.append(name)
    unique = list(dict.fromkeys(chosen))
    for name in unique:
        if METHODS[name].needs_llm and not llm_configured:
            raise ValueError(f"{name} needs a model: set LLM_BASE_URL and LLM_MODEL")
    return [METHODS[n] for n in unique]


def at_threshold(threshold: float) -> MethodSpec:
    """ProactMem acting only on candidates scored at or above ``threshold`` (the threshold
    curve: one such method per point of it)."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"a threshold is a score between 0 and 1, not {threshold}")
    return MethodSpec(
        f"proactmem@{threshold:.2f}",
        f"ProactMem acting on scores >= {threshold:.2f}",
        policy=partial(RulesPolicy, threshold=threshold),
    )


def at_false_alarm_cost(specs: Sequence[MethodSpec], cost: float) -> list[MethodSpec]:
    """``specs`` with every rules-policy method (ProactMem and its ablations) acting at the
    threshold a false alarm costing ``cost`` missed needs sets; the others as they are."""
    threshold = threshold_for(cost)
    return [
        replace(spec, policy=partial(RulesPolicy, threshold=threshold))
        if spec.policy is RulesPolicy
        else spec
        for spec in specs
    ]
