"""ProactiveStream's causal replay: every method over every stream, from empty state (§4.3).

Each stream is replayed chronologically (``Stream.steps``): an event is committed to the
methods' memory (``MemoryStream.ingest``), a decision point is decided on by every method from
memory as it stands, and each decision is final before the next step. Methods that read the
same memory variant share one ``MemoryStream`` (decisions never change memory), each with its
own intervention control state, so replaying several methods costs little more than one; memory
without validation shares it too until the validator first rejects a segment (``_Memories``),
and while it does, that ablation's decision is ProactMem's, made once (``_decide_all``).

The harness guards what the methods see and do:

* **Public fields only.** Methods get ``Stream.without_private()``: no event payload and no
  point carries ``private``; the harness checks every step it hands out.
* **Causal order.** Steps must come in non-decreasing time; a decision may cite only events
  already committed and points already decided (``event:N``, ``point:N``); anything else is a
  :class:`CausalityViolation` and stops the run.
* **Nothing dropped.** A method that raises, or returns something that is not a decision, gets
  an ``invalid`` outcome at that point (scored as an abstention and counted in the report).

Labels are not read here: they are joined after every decision is made (``metrics.py``).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from benchmark.methods.registry import STANDARD, UNVALIDATED, MethodSpec
from benchmark.streams.records import PRIVATE, DecisionPoint, Step, Stream, StreamEvent
from memory.engine.control import ControlState
from memory.engine.decide import RulesPolicy
from memory.engine.records import POINT_KIND, EngineEvent
from memory.engine.refs import parse_ref, regularity_id
from memory.engine.stream import MemoryStream, compiled_frames, decide_on, stored_frames
from memory.engine.words import regularity as sentence

# Steps between two freezes of what the replay has built so far, where it owns the freeze
# (:func:`replay`). Memory keeps most of it to the end (committed events, days' records, closed
# days), so the collector's full scans would only walk it again and again. Nothing is lost: a
# frozen object is still freed once nothing refers to it, a cycle (the collector found none in
# a whole replay of any bundled scope) is collected once the replay gives everything back at
# its end, and a freeze costs the same whatever it moves. A few thousand steps between two
# keep the young generations, which are scanned often, small.
KEEP_EVERY = 2048


class CausalityViolation(RuntimeError):
    """A step out of time order, a private field handed to a method, or a decision citing what
    it could not have seen."""


@dataclass(frozen=True, slots=True)
class MethodDecision:
    """One method's final decision at one point (after intervention control)."""

    point: str
    action: str  # intervene | abstain | invalid
    service: str | None = None
    proposed: str = ""  # what the policy proposed, before control
    suppressed: bool = False
    message: str = ""
    evidence: tuple[str, ...] = ()
    regularities: tuple[Mapping[str, Any], ...] = ()
    error: str = ""

    @property
    def intervened(self) -> bool:
        return self.action == "intervene"


@dataclass
class StreamRun:
    """Every method's decisions on one stream, in point order, and what the replay cost."""

    entity: str
    scope: str
    synthetic: bool
    points: tuple[DecisionPoint, ...]
    decisions: dict[str, list[MethodDecision]] = field(default_factory=dict)
    events: int = 0
    seconds: float = 0.0


def _frame_source(stream: Stream) -> Any:
    """Desktop memory reads the compiled frames the points were built from (as the service
    reads its stored documents); a stream without them is compiled from its events."""
    if stream.scope != "desktop":
        return None
    return stored_frames(stream.frames) if stream.frames else compiled_frames


def engine_event(event: StreamEvent) -> EngineEvent:
    return EngineEvent(event.id, event.at, event.kind, event.payload, event.monitor)


def point_event(point: DecisionPoint, number: int) -> EngineEvent:
    return EngineEvent(point.id or number, point.at, POINT_KIND, point.public)


def replay(
    stream: Stream,
    methods: Sequence[MethodSpec],
    *,
    complete: Callable[[str], str] | None = None,
    control: bool = True,
    strip_private: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> StreamRun:
    """Replay ``stream`` through ``methods`` (module docstring)."""
    # Everything alive before the replay (the run's streams, labels and results, Django) is
    # kept out of the cyclic collector's scans until it ends: the replay makes no cycles in
    # it, and scanning it again at every collection was a quarter of a month of wearable data's
    # replay (measured). So is what the replay builds to keep until its end (_prepared,
    # KEEP_EVERY). What someone else froze stays as they left it.
    owner = gc.get_freeze_count() == 0
    if owner:
        gc.freeze()
    try:
        return _replay(stream, methods, complete, control, strip_private, progress, owner)
    finally:
        if owner:
            gc.unfreeze()


def _replay(
    stream: Stream,
    methods: Sequence[MethodSpec],
    complete: Callable[[str], str] | None,
    control: bool,
    strip_private: bool,
    progress: Callable[[int, int], None] | None,
    owner: bool = False,
) -> StreamRun:
    variants = sorted({m.memory for m in methods})
    unknown = set(variants) - {STANDARD, UNVALIDATED}
    if unknown:
        raise ValueError(f"unknown memory variant(s) {sorted(unknown)}")
    seen, steps = _prepared(stream, strip_private, owner)
    memories = _Memories(seen, variants)
    policies = {m.name: m.make_policy(complete) for m in methods}
    # One empty state for all: control states are immutable, and twins (_decide_all) are
    # told apart from other methods by holding the very same state.
    empty = ControlState()
    states = {m.name: empty for m in methods}
    run = StreamRun(seen.entity, seen.scope, seen.synthetic, seen.points)
    run.decisions = {m.name: [] for m in methods}
    committed: set[int] = set()
    decided: set[int] = set()
    by_id = {e.id: e for e in seen.events} if any(p.event_id for p in seen.points) else {}
    started = time.perf_counter()
    last: datetime | None = None
    done = 0
    for number, step in enumerate(steps, start=1):
        if owner and number % KEEP_EVERY == 0:
            gc.freeze()
        at = step.at
        if last is not None and at < last:
            raise CausalityViolation(f"step {number} at {at.isoformat()} is before {last}")
        last = at
        if isinstance(step, StreamEvent):
            if strip_private and PRIVATE in step.payload:
                raise CausalityViolation(f"event {step.id} reached the methods with private fields")
            memories.ingest(engine_event(step), steps, number)
            committed.add(step.id)
            run.events += 1
            continue
        if strip_private and (step.private or PRIVATE in step.public):
            raise CausalityViolation(f"point {step.key} reached the methods with private fields")
        if step.event_id is not None:
            own = by_id.get(step.event_id)
            if own is None:
                raise CausalityViolation(
                    f"point {step.key} names event {step.event_id}, not in stream"
                )
            current = engine_event(own)
        else:
            current = point_event(step, number)
        mark = memories.mark()
        views: dict[int, Any] = {}
        shared: dict[Any, Any] = {}
        for variant in variants:
            chosen = [m for m in methods if m.memory == variant]
            made = _decide_all(
                chosen, policies, states, memories, variant, current, step, views, control, shared
            )
            if memories.diverged(variant, mark):
                # Validation rejected a segment at this point: memory without it differs from
                # here on, so that variant's decisions are made again on its own memory.
                memories.split(steps, number)
                made = _decide_all(
                    chosen, policies, states, memories, variant, current, step, {}, control
                )
            for method, decision, state in made:
                _check_citations(decision, committed, decided, current)
                states[method.name] = state
                run.decisions[method.name].append(decision)
        if current.kind == POINT_KIND:
            memories.note_point(current)
            decided.add(current.id)
        done += 1
        if progress is not None:
            progress(done, len(seen.points))
    run.seconds = time.perf_counter() - started
    return run


def _prepared(stream: Stream, strip_private: bool, owner: bool) -> tuple[Stream, list[Step]]:
    """The stream as the methods see it and its steps in causal order.

    Both live until the replay ends and hold no cycles. Where the replay owns the collector's
    freeze (:func:`replay`), they are built with the collector paused and then frozen, so no
    collection ever scans them: on a SYNTHETIC month of a dense home, the collections while
    they were built were half of what the replay spent outside its loop (measured).
    """
    paused = owner and gc.isenabled()
    if paused:
        gc.disable()
    try:
        seen = stream.without_private() if strip_private else stream
        steps = list(seen.steps())
    finally:
        if paused:
            gc.enable()
    if owner:
        gc.freeze()
    return seen, steps


class _Memories:
    """The memory variants a replay reads, built once each.

    Memory without validation (the ``no_validation`` ablation) holds exactly what validated
    memory holds until the validator first rejects a segment: validation only removes
    segments, and nothing else differs. So the two share one ``MemoryStream`` until then (the
    deterministic extractors cite exactly their events, so on most streams that is the whole
    run); at the first rejection the unvalidated memory is built on its own from the steps so
    far and goes on separately. The decisions are the ones separate memories give
    (``tests/test_replay_shared_memory.py`` holds both ways equal).
    """

    def __init__(self, seen: Stream, variants: Sequence[str]) -> None:
        self.seen = seen
        self.own: dict[str, MemoryStream] = {v: self._new(v) for v in variants[:1]}
        self.shared = set(variants) == {STANDARD, UNVALIDATED}
        if not self.shared:
            self.own.update({v: self._new(v) for v in variants[1:]})

    def _new(self, variant: str) -> MemoryStream:
        # The memory's own policy is never asked: methods decide on its views.
        return MemoryStream(
            self.seen.scope,
            self.seen.zone,
            RulesPolicy(),
            frame_source=_frame_source(self.seen),
            validate=variant != UNVALIDATED,
        )

    def of(self, variant: str) -> MemoryStream:
        return self.own[STANDARD] if self.shared else self.own[variant]

    def distinct(self) -> list[MemoryStream]:
        return list(self.own.values())

    def mark(self) -> int:
        return self.own[STANDARD].rejections if self.shared else 0

    def diverged(self, variant: str, mark: int) -> bool:
        """Whether ``variant`` still shares validated memory, which rejected a segment since
        ``mark``."""
        return self.shared and variant == UNVALIDATED and self.mark() != mark

    def ingest(self, event: EngineEvent, steps: Sequence[Step], number: int) -> None:
        if self.shared:  # one memory, validated: the unvalidated one shares it until it rejects
            standard = self.own[STANDARD]
            mark = standard.rejections
            standard.ingest(event)
            if standard.rejections != mark:
                self.split(steps, number + 1)
            return
        for memory in self.own.values():
            memory.ingest(event)

    def note_point(self, point: EngineEvent) -> None:
        for memory in self.distinct():
            memory.note_point(point)

    def split(self, steps: Sequence[Step], number: int) -> None:
        """Give memory without validation its own, built from the steps before ``number``
        (1-based) exactly as a separate memory would have been built along the run."""
        alone = self._new(UNVALIDATED)
        for index, step in enumerate(steps[: number - 1], start=1):
            if isinstance(step, StreamEvent):
                alone.ingest(engine_event(step))
            elif step.event_id is None:  # a point on its own event is decided, not noted
                alone.note_point(point_event(step, index))
        self.own[UNVALIDATED] = alone
        self.shared = False


def _decide_all(
    chosen: Sequence[MethodSpec],
    policies: Mapping[str, Any],
    states: Mapping[str, ControlState],
    memories: _Memories,
    variant: str,
    current: EngineEvent,
    step: DecisionPoint,
    views: dict[int, Any],
    control: bool,
    share: dict[Any, tuple[ControlState, MethodDecision, ControlState]] | None = None,
) -> list[tuple[MethodSpec, MethodDecision, ControlState]]:
    """Every method of ``variant`` decides at ``step``; nothing is kept yet (the caller keeps
    the decisions and control states once the variant's memory is known to be its own)."""
    memory = memories.of(variant)
    view = views.get(id(memory))
    if view is None:
        view = views[id(memory)] = memory.view(current)
    made = []
    for method in chosen:
        state = states[method.name]
        # A method deciding exactly as another on the same memory view from the same control
        # state (no_validation while validation has rejected nothing is ProactMem) makes the
        # same decision: it is made once. The twins then hold one state object, so the test
        # stays an identity check.
        twin = _twin_key(method, view) if share is not None else None
        held = share.get(twin) if share is not None and twin is not None else None
        if held is not None and held[0] is state:
            decision, new_state = held[1], held[2]
        else:
            decision, new_state = _decide(method, policies[method.name], view, state, step, control)
            if share is not None and twin is not None:
                share[twin] = (state, decision, new_state)
        made.append((method, decision, new_state))
    return made


def _twin_key(method: MethodSpec, view: Any) -> tuple[Any, ...] | None:
    """What a method's decision depends on besides the control state: its memory view, its
    policy (class and settings) and ProactMem's switches; None for a model's policy, whose
    answers may differ from call to call."""
    if method.needs_llm:
        return None
    factory = method.policy
    if isinstance(factory, partial):
        policy: Any = (factory.func, factory.args, tuple(sorted(factory.keywords.items())))
    else:
        policy = factory
    return (id(view), policy, method.gate, method.blind)


def _decide(
    method: MethodSpec,
    policy: Any,
    view: Any,
    state: ControlState,
    point: DecisionPoint,
    control: bool,
) -> tuple[MethodDecision, ControlState]:
    try:
        outcome, new_state = decide_on(view, policy, state, gate=method.gate, blind=method.blind)
    except Exception as exc:  # a method's failure is an outcome, never a lost decision
        return MethodDecision(point.key, "invalid", error=f"{type(exc).__name__}: {exc}"), state
    proposed = outcome.controlled.proposed
    action = outcome.action if control else proposed.action
    if not control:
        new_state = state
    used = {regularity_id(r.proposal): r for r in outcome.retrieved}
    regularities = tuple(
        {
            "id": rid,
            "summary": sentence(used[rid].proposal),
            "state": used[rid].state,
            "confidence": round(used[rid].confidence, 3),
            "occurrence": used[rid].occurrence,
        }
        for rid in proposed.regularity_ids
        if rid in used
    )
    return (
        MethodDecision(
            point=point.key,
            action=action,
            service=proposed.intent or None if action == "intervene" else None,
            proposed=proposed.action,
            suppressed=outcome.suppressed and control,
            message=proposed.message,
            evidence=tuple(proposed.evidence_ids),
            regularities=regularities,
        ),
        new_state,
    )


def _check_citations(
    decision: MethodDecision, committed: set[int], decided: set[int], current: EngineEvent
) -> None:
    for ref in decision.evidence:
        try:
            kind, rest = parse_ref(ref)
        except ValueError:
            raise CausalityViolation(
                f"{decision.point}: cites {ref!r}, not an evidence id"
            ) from None
        if (
            kind == "event"
            and int(rest) not in committed
            and not (current.kind != POINT_KIND and int(rest) == current.id)
        ):
            raise CausalityViolation(f"{decision.point}: cites event {rest}, not seen yet")
        if kind == "point" and int(rest) not in decided and int(rest) != current.id:
            raise CausalityViolation(f"{decision.point}: cites point {rest}, not seen yet")
