"""The episode rule all reference labelers share, and the causal driver (ProactMem §4.2).

At every point a scope labeler lists the opportunities that hold *now*, each with an episode
(what it is about, e.g. ``2011-11-28/Breakfast``), a service of the catalogue, a support
``strength`` and a reason in words. :class:`EpisodeBook` then applies the labelling rule:

* an opportunity whose episode is not covered yet is **new**; so is a covered one whose
  strength rose, whose service changed, or whose episode had stopped holding at the previous
  point and holds again (it reopened);
* the point is labelled **intervene** for the first new opportunity in the scope's order (its
  episode becomes covered with that strength and service), otherwise **abstain**: windows an
  opportunity already covers abstain, and a second new opportunity waits for the next point
  (its first window that is free). The label stays valid for the opportunity's ``timely`` span
  (ProactMem D.2: an intervention at a later valid observation still matches it; the scoring
  rule is in ``benchmark/metrics.py``);
* an opportunity is listed only when it is *reliable* (enough history to say what is usual);
  it is labelled only when it is also *actionable* now (someone is there to act on it), and
  one that holds while not actionable is listed as such, so that the pause is no reopening.
  Each scope says how it judges both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, Protocol

from benchmark.streams.catalogue import service_ids
from benchmark.streams.records import DecisionPoint, Stream, StreamEvent

LabelAction = Literal["intervene", "abstain"]


@dataclass(frozen=True, slots=True)
class Opportunity:
    """A service opportunity that holds at a point."""

    type: str  # the scope's opportunity type (its module's catalogue)
    service: str  # a service id of benchmark/streams/catalogue.py
    episode: str  # what it is about; the unit of coverage
    reason: str  # a sentence a person can check
    strength: int = 1  # a rise reopens a covered episode
    # How long after its first window an intervention is still timely (ProactMem D.2: the
    # valid observations of an opportunity); zero: only at its first window.
    timely: timedelta = timedelta(0)
    # Listed but not actionable now (nobody there to act): it keeps its episode holding, so
    # a pause in actionability does not count as a reopening, and it cannot be labelled.
    actionable: bool = True


@dataclass(frozen=True, slots=True)
class Label:
    """The reference label of one decision point, with where it came from."""

    point: str  # DecisionPoint.key
    action: LabelAction
    service: str | None = None
    episode: str | None = None
    type: str | None = None
    reason: str = ""
    source: str = ""  # "labeler:home/1", "jsonl:labels.jsonl", ...
    # Through when an intervention for this opportunity is still timely (metrics.py); None: at
    # its own point only.
    valid_until: datetime | None = None

    @property
    def positive(self) -> bool:
        return self.action == "intervene"


class ScopeLabeler(Protocol):
    """What a scope module provides: a causal reader of events and points."""

    name: str
    version: int

    def observe(self, event: StreamEvent) -> None: ...

    def opportunities(self, point: DecisionPoint) -> Sequence[Opportunity]: ...


@dataclass
class EpisodeBook:
    """The labelling rule (module docstring) over the opportunities listed at each point."""

    scope: str
    covered: dict[str, tuple[int, str]] = field(
        default_factory=dict
    )  # episode -> (strength, service)
    holding: set[str] = field(default_factory=set)  # episodes listed at the previous point

    def label(self, point: DecisionPoint, found: Iterable[Opportunity], source: str) -> Label:
        order = {s: i for i, s in enumerate(service_ids(self.scope))}
        listed = list(found)
        for o in listed:
            if o.service not in order:
                raise ValueError(f"{o.service!r} is not a {self.scope} service")
        now = {o.episode for o in listed}
        chosen: Opportunity | None = None
        for o in sorted(listed, key=lambda o: order[o.service]):
            if not o.actionable:
                continue
            before = self.covered.get(o.episode)
            new = (
                before is None
                or o.strength > before[0]
                or o.service != before[1]
                or o.episode not in self.holding
            )
            if new:
                chosen = o
                break
        self.holding = now
        if chosen is None:
            covered = sorted(now)
            reason = f"already covered: {', '.join(covered[:3])}" if covered else "no opportunity"
            return Label(point.key, "abstain", reason=reason, source=source)
        self.covered[chosen.episode] = (chosen.strength, chosen.service)
        return Label(
            point.key,
            "intervene",
            chosen.service,
            chosen.episode,
            chosen.type,
            chosen.reason,
            source,
            point.at + chosen.timely,
        )


def label_stream(stream: Stream, labeler: ScopeLabeler) -> dict[str, Label]:
    """Labels of every point of ``stream``, fed to ``labeler`` one step at a time in causal
    order: it has seen exactly the events at or before each point when it labels it."""
    book = EpisodeBook(stream.scope)
    source = f"labeler:{labeler.name}/{labeler.version}"
    labels: dict[str, Label] = {}
    for step in stream.steps():
        if isinstance(step, StreamEvent):
            labeler.observe(step)
        else:
            labels[step.key] = book.label(step, labeler.opportunities(step), source)
    return labels


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        raise ValueError("median of nothing")
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def quantile(values: Sequence[float], share: float) -> float:
    """The nearest-rank quantile (no interpolation: a labelled threshold is a seen value)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("quantile of nothing")
    index = min(len(ordered) - 1, max(0, int(-(-share * len(ordered) // 1)) - 1))
    return ordered[index]


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}
