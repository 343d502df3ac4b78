"""The plain records every reader produces and the compiler consumes (activity frames §3.1).

Times are UTC seconds since the epoch as floats (microsecond-exact for capture timestamps);
ids are integers that are unique within one capture and stable across reads of it, so the
evidence a document cites can be looked up again. Records are treated as immutable; they are
not frozen only because a frozen dataclass costs five times as much to build, and a day has
thousands of them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress, islice
from operator import attrgetter, eq, le, lt
from typing import Protocol

INPUT_TYPES = ("key", "text", "click", "clipboard", "app_switch", "scroll")
# Zero-width and direction marks some platforms put in app names and titles
# ("\u200eSlack", "Microsoft\u200b Edge").
INVISIBLE = dict.fromkeys(
    map(ord, "\u200b\u200c\u200d\u200e\u200f\u2060\u2066\u2067\u2068\u2069\ufeff\u00ad")
)
BY_TIME = attrgetter("t", "id")  # (t, id): the order every reader hands rows over in
ROW_ID = attrgetter("id")
ROW_T = attrgetter("t")


class _Row(Protocol):
    id: int
    t: float


@lru_cache(maxsize=4096)
def normalise_title(text: str) -> str:
    """A window title without invisible marks and with its spaces collapsed."""
    return " ".join(text.translate(INVISIBLE).split())


def in_time_order(rows: Sequence[_Row], times: Sequence[float] | None = None) -> bool:
    """Whether the rows are in (t, id) order already, so sorting them can be skipped.

    Readers hand rows over in that order and the compiler sorts them again to be safe; this
    check costs a fraction of sorting a sorted list, which builds a (t, id) key per row.
    Rows at the same instant (two monitors captured at once) must be in id order. ``times``
    are the rows' times when the caller has them already.
    """
    if times is None:
        times = [row.t for row in rows]
    if all(map(lt, times, islice(times, 1, None))):
        return True
    if not all(map(le, times, islice(times, 1, None))):
        return False
    ties = compress(range(len(times) - 1), map(eq, times, islice(times, 1, None)))
    return all(rows[i].id <= rows[i + 1].id for i in ties)


@dataclass(slots=True)
class Snapshot:
    """One capture row: what was on screen (focused app, window title, URL) at time t.

    ``end`` is set by sources that know when the screen stopped showing this (an interval
    recorder such as ActivityWatch): the row is then credited no time past it. Event-driven
    capture leaves it None and each row earns the time to the next row (activity frames §4.2).
    """

    id: int
    t: float
    monitor: str
    app: str
    window: str | None = None
    url: str | None = None
    end: float | None = None


@dataclass(slots=True)
class InputEvent:
    """A keystroke, typed text, click, clipboard copy, app switch or scroll."""

    id: int
    t: float
    type: str
    monitor: str = "0"
    x: float | None = None
    y: float | None = None
    app: str | None = None
    window: str | None = None
    url: str | None = None
    element_name: str | None = None
    element_role: str | None = None
    text: str | None = None


@dataclass(slots=True)
class Element:
    """One node of a snapshot's accessibility tree; bounds are (left, top, width, height) in 0-1."""

    snapshot_id: int
    role: str
    name: str | None = None
    bounds: tuple[float, float, float, float] | None = None


@dataclass(slots=True)
class Absence:
    """An explicit signal that nobody was there (an AFK interval), from start to end.

    ``monitor`` None means every monitor.
    """

    id: int
    start: float
    end: float
    reason: str = "afk"
    monitor: str | None = None


@dataclass(slots=True)
class Capture:
    """Everything a reader read for a window, plus what the reader emulated or could not read."""

    snapshots: list[Snapshot] = field(default_factory=list)
    inputs: list[InputEvent] = field(default_factory=list)
    elements: list[Element] = field(default_factory=list)
    absences: list[Absence] = field(default_factory=list)
    recorder: str = "unknown"
    reader: str = "unknown"
    # Sentences the document repeats verbatim, e.g. that snapshot rows were emulated from
    # intervals, or that a table was missing from an older database.
    disclosures: list[str] = field(default_factory=list)
    screen: tuple[int, int] = (1920, 1080)  # pixels, for click-to-element resolution
    # False when the recorder captures no input events at all (ActivityWatch): a frame's key,
    # click and copy counts are then unknown, not zero, and the document says null.
    inputs_recorded: bool = True
    # Readers of large stores may load element trees on demand: only the trees of snapshots
    # with a click to resolve are ever needed, a few dozen a day out of thousands.
    element_loader: Callable[[Collection[int]], list[Element]] | None = field(
        default=None, compare=False, repr=False
    )

    def elements_for(self, snapshot_ids: Collection[int]) -> dict[int, list[Element]]:
        """The element trees of these snapshots, each in stored order."""
        wanted = set(snapshot_ids)
        if not wanted:
            return {}
        found = (
            self.element_loader(wanted)
            if self.element_loader is not None
            else [e for e in self.elements if e.snapshot_id in wanted]
        )
        trees: dict[int, list[Element]] = {}
        for element in found:
            if element.snapshot_id in wanted:
                trees.setdefault(element.snapshot_id, []).append(element)
        return trees
