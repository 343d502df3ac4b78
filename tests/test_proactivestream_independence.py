"""ProactiveStream's guarantees: labelers and methods share no code, methods never read a
private field or a later event, labels are joined only after every decision is made, and the
harness stops a method that cites what it could not have seen (benchmark/replay.py)."""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

from benchmark.methods.registry import METHODS, methods_named
from benchmark.replay import CausalityViolation, MethodDecision, replay
from benchmark.run import evaluate
from benchmark.streams.catalogue import CATALOGUE
from benchmark.streams.records import Stream
from memory.engine.catalogue import intents
from tests import proactive_streams as data
from tests.conftest import need_service

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("aframes_web", "benchmark", "compiler", "memory", "aframes_sync")
# What both sides may read: the stream records and the service catalogue (the interface).
INTERFACE = {
    "benchmark",
    "benchmark.streams",
    "benchmark.streams.records",
    "benchmark.streams.catalogue",
}


def _imports(module: str) -> set[str]:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text())
    package = module if spec.origin.endswith("__init__.py") else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1]
                    + ([base] if base else [])
                )
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in PROJECT and _is_module(m)}


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a name imported from a module, not a module itself
        return False


def _closure(package: str) -> set[str]:
    """Every project module ``package``'s modules import, transitively (parents included)."""
    root = ROOT / package.replace(".", "/")
    todo = [package] + [
        f"{package}.{p.relative_to(root).with_suffix('').as_posix().replace('/', '.')}"
        for p in root.rglob("*.py")
        if p.name != "__init__.py"
    ]
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += list(_imports(module))
    return seen


def test_labelers_and_methods_share_no_code_but_the_stream_interface() -> None:
    labelers = {m for m in _closure("benchmark.labelers") if not m.startswith("benchmark.labelers")}
    methods = {m for m in _closure("benchmark.methods") if not m.startswith("benchmark.methods")}
    assert labelers <= INTERFACE, sorted(labelers - INTERFACE)
    assert not {m for m in methods if m.startswith("benchmark.labelers")}
    assert labelers & methods <= INTERFACE
    # The labelers read nothing of ProactMem, the compiler or the service.
    assert not {m for m in labelers if m.split(".")[0] in ("memory", "compiler", "aframes_web")}


def test_every_method_sees_the_same_catalogue_of_services_as_the_labelers() -> None:
    for scope, specs in CATALOGUE.items():
        assert intents(scope) == {s.id for s in specs}, scope  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def home_b() -> Stream:
    if not data.DATA.is_dir():
        need_service("shared data (../shared/data)", False)
    return data.ordonez("B")


def _actions(run: object) -> dict[str, list[tuple[str, str | None, tuple[str, ...]]]]:
    return {
        name: [(d.action, d.service, d.evidence) for d in decisions]
        for name, decisions in run.decisions.items()  # type: ignore[attr-defined]
    }


def test_a_method_decides_identically_with_the_private_fields_removed(home_b: Stream) -> None:
    methods = methods_named(["all"])
    assert any(e.private for e in home_b.events) and any(p.private for p in home_b.points)
    with_private = replay(home_b, methods, strip_private=False)
    without = replay(home_b.without_private(), methods)
    assert _actions(with_private) == _actions(without)
    assert any(d.intervened for ds in without.decisions.values() for d in ds)


def test_a_decision_never_depends_on_a_later_event(home_b: Stream) -> None:
    methods = methods_named(["all"])
    full = _actions(replay(home_b, methods))
    keep = len(home_b.points) // 2
    cut = home_b.points[keep - 1].at
    short = replace(
        home_b,
        events=tuple(e for e in home_b.events if e.at <= cut),
        points=home_b.points[:keep],
    )
    prefix = _actions(replay(short, methods))
    assert prefix == {name: actions[:keep] for name, actions in full.items()}


def test_private_fields_never_reach_a_method(home_b: Stream) -> None:
    seen: list[object] = []

    class Peeking:
        name = "peeking"
        reads = frozenset({"today"})

        def decide(self, ctx: object) -> object:
            current = ctx.current  # type: ignore[attr-defined]
            seen.append(current.payload.get("private"))
            seen.extend(e.payload.get("private") for e in ctx.recent)  # type: ignore[attr-defined]
            return ctx.abstain("looked")  # type: ignore[attr-defined]

    spec = replace(METHODS["proactmem"], name="peeking", policy=Peeking)
    replay(home_b, [spec])
    assert seen and all(p is None for p in seen)


def test_a_method_citing_an_event_it_has_not_seen_stops_the_run(home_b: Stream) -> None:
    from memory.engine.control import Proposed

    later = home_b.events[-1].id

    class Clairvoyant:
        name = "clairvoyant"
        reads = frozenset()

        def decide(self, ctx: object) -> Proposed:
            return Proposed(
                "intervene", "check_in_routine", ctx.episode,  # type: ignore[attr-defined]
                message="I know what comes", evidence_ids=(f"event:{later}",),
            )  # fmt: skip

    spec = replace(METHODS["proactmem"], name="clairvoyant", policy=Clairvoyant)
    with pytest.raises(CausalityViolation, match=f"cites event {later}, not seen yet"):
        replay(home_b, [spec])


def test_a_point_out_of_time_order_stops_the_run() -> None:
    if not data.DATA.is_dir():
        need_service("shared data (../shared/data)", False)
    stream = max(data.github(data.ANTS), key=lambda s: len(s.points))
    # A code point is its own event: one stamped a year after it comes out of time order.
    late = replace(stream.points[5], at=stream.points[5].at.replace(year=2030))
    broken = replace(stream, points=(*stream.points[:5], late, *stream.points[6:]))
    with pytest.raises(CausalityViolation, match="is before"):
        replay(broken, methods_named(["event_only"]))


def test_a_failing_method_is_counted_invalid_never_dropped(home_b: Stream) -> None:
    class Broken:
        name = "broken"
        reads = frozenset()

        def decide(self, ctx: object) -> object:
            raise RuntimeError("no model")

    spec = replace(METHODS["proactmem"], name="broken", policy=Broken)
    run = replay(home_b, [spec])
    decisions: list[MethodDecision] = run.decisions["broken"]
    assert len(decisions) == len(home_b.points)
    assert {d.action for d in decisions} == {"invalid"}
    assert decisions[0].error == "RuntimeError: no model"
    evaluation = evaluate([home_b], [spec])
    figures = evaluation.results["scopes"]["home"]["broken"]
    assert figures["invalid"] == len(home_b.points) and figures["tp"] == 0


def test_labels_are_joined_only_after_every_decision_of_a_stream(
    home_b: Stream, monkeypatch: pytest.MonkeyPatch
) -> None:
    import benchmark.run as run_module

    order: list[str] = []
    real_replay, real_labels = run_module.replay, run_module.label_stream

    def replaying(*args: object, **kwargs: object) -> object:
        order.append("replay")
        return real_replay(*args, **kwargs)  # type: ignore[arg-type]

    def labelling(stream: Stream, labeler: object) -> object:
        order.append("labels")
        return real_labels(stream, labeler)  # type: ignore[arg-type]

    monkeypatch.setattr(run_module, "replay", replaying)
    monkeypatch.setattr(run_module, "label_stream", labelling)
    evaluate([home_b], methods_named(["event_only"]))
    assert order == ["replay", "labels"]
