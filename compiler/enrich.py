"""Enrichment (activity frames §4.3): inputs → the snapshot they happened on, clicks → targets.

Every input event is attributed to the temporally nearest snapshot of its monitor (binary
search), keeping the distance. A click the capture could not name is resolved against that
snapshot's element tree in tiers — exact, tolerance, zone — or counted as unresolved; it is
never guessed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from compiler.capture import BY_TIME, ROW_ID, Element, InputEvent, Snapshot, in_time_order
from compiler.params import CLICK_TOLERANCE_PX, STALE_INPUT_S

TIERS = ("named", "exact", "tolerance", "zone", "unresolved")

# What a QWERTY-configured capture records when the person types on an AZERTY keyboard,
# mapped back to what they typed. Operators may supply their own map.
AZERTY: dict[str, str] = {
    "q": "a", "a": "q", "w": "z", "z": "w", "m": ",", ";": "m",
    "Q": "A", "A": "Q", "W": "Z", "Z": "W", "M": "?", ":": "M",
}  # fmt: skip
LAYOUTS: dict[str, dict[str, str]] = {"identity": {}, "azerty": AZERTY}


def layout_for(name: str, custom: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The character map a compile applies: an operator's own map, else a named layout."""
    return dict(custom) if custom else layout_map(name)


def layout_map(name_or_map: str | Mapping[str, str]) -> dict[str, str]:
    if isinstance(name_or_map, str):
        if name_or_map not in LAYOUTS:
            raise ValueError(
                f"unknown keyboard layout {name_or_map!r}; known: {', '.join(LAYOUTS)}"
            )
        return LAYOUTS[name_or_map]
    return dict(name_or_map)


def repair_text(text: str, mapping: Mapping[str, str]) -> str:
    if not mapping:
        return text
    return "".join(mapping.get(ch, ch) for ch in text)


@dataclass(slots=True)
class Attributed:
    """An input event with the snapshot it belongs to and, for clicks, its resolved target."""

    event: InputEvent
    snapshot_id: int | None  # None: no snapshot of its monitor within STALE_INPUT_S
    distance_ms: int | None
    target: str | None = None
    role: str | None = None
    tier: str | None = None  # for clicks: one of TIERS


def _zone(fx: float, fy: float) -> str:
    row = "top" if fy < 1 / 3 else "bottom" if fy > 2 / 3 else "middle"
    col = "left" if fx < 1 / 3 else "right" if fx > 2 / 3 else "center"
    return f"{row}-{col}"


def resolve_click(
    x: float, y: float, elements: Sequence[Element], screen: tuple[int, int]
) -> tuple[str | None, str | None, str]:
    """(target, role, tier) of a click at pixel (x, y) against one snapshot's elements."""
    width, height = screen
    best: tuple[float, int, Element] | None = None
    near: tuple[float, int, Element] | None = None
    for index, element in enumerate(elements):
        if element.bounds is None or not element.name:
            continue
        left, top, w, h = element.bounds
        x0, y0, x1, y1 = left * width, top * height, (left + w) * width, (top + h) * height
        if x0 <= x <= x1 and y0 <= y <= y1:
            area = (x1 - x0) * (y1 - y0)
            if best is None or (area, index) < best[:2]:
                best = (area, index, element)
        elif best is None:
            dx = max(x0 - x, 0.0, x - x1)
            dy = max(y0 - y, 0.0, y - y1)
            distance = max(dx, dy)
            if distance <= CLICK_TOLERANCE_PX and (near is None or (distance, index) < near[:2]):
                near = (distance, index, element)
    if best is not None:
        return best[2].name, best[2].role, "exact"
    if near is not None:
        return near[2].name, near[2].role, "tolerance"
    return f"zone:{_zone(x / width, y / height)}", None, "zone"


def attribute(
    inputs: Sequence[InputEvent],
    by_monitor: Mapping[str, Sequence[Snapshot]],
    times: Mapping[str, Sequence[float]],
    elements_for: Callable[[Collection[int]], dict[int, list[Element]]],
    screen: tuple[int, int],
) -> tuple[list[Attributed], list[Element]]:
    """Attribute every input to its nearest snapshot of the same monitor (ties: the earlier).

    ``by_monitor`` holds each monitor's snapshots in (t, id) order, as segmentation sorted
    them, and ``times`` their times, as segmentation collected them. Returns the attributed
    inputs in time order and the element-tree rows that were consulted (only trees of
    snapshots with an unnamed click are loaded).
    """
    columns = {
        monitor: (times[monitor], list(map(ROW_ID, rows))) for monitor, rows in by_monitor.items()
    }
    out: list[Attributed] = []
    keep = out.append
    unnamed: list[Attributed] = []  # clicks to resolve against element trees, loaded at once
    stale = STALE_INPUT_S
    # Inputs come in runs on one monitor: its columns are looked up when the monitor changes.
    monitor: str | None = None
    series: Sequence[float] = []
    ids: Sequence[int] = []
    size = 0
    for event in inputs if in_time_order(inputs) else sorted(inputs, key=BY_TIME):
        if event.monitor != monitor:
            monitor = event.monitor
            series, ids = columns.get(monitor, ([], []))
            size = len(series)
        if not size:
            keep(_unresolved(event))
            continue
        t = event.t
        k = bisect_left(series, t)
        choice = k if k < size else k - 1
        if 0 < k < size and t - series[k - 1] <= series[k] - t:
            choice = k - 1
        distance = abs(series[choice] - t)
        if distance > stale:
            keep(_unresolved(event))
            continue
        item = Attributed(
            event,
            ids[choice],
            round(distance * 1000),
            event.element_name,
            event.element_role,
        )
        if event.type == "click":
            if event.element_name:
                item.tier = "named"
            elif event.x is not None and event.y is not None:
                unnamed.append(item)
            else:
                item.tier = "unresolved"
        keep(item)
    trees = elements_for({item.snapshot_id for item in unnamed if item.snapshot_id is not None})
    for item in unnamed:
        assert item.snapshot_id is not None and item.event.x is not None
        assert item.event.y is not None
        item.target, item.role, item.tier = resolve_click(
            item.event.x, item.event.y, trees.get(item.snapshot_id, ()), screen
        )
    used = [element for snapshot_id in sorted(trees) for element in trees[snapshot_id]]
    return out, used


def _unresolved(event: InputEvent) -> Attributed:
    tier = None
    if event.type == "click":
        tier = "named" if event.element_name else "unresolved"
    return Attributed(event, None, None, event.element_name, event.element_role, tier)
