"""Enrichment (activity frames §4.3): inputs to their nearest snapshot, clicks to targets."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pytest

from compiler.capture import Element, InputEvent, Snapshot
from compiler.enrich import (
    AZERTY,
    LAYOUTS,
    TIERS,
    Attributed,
    attribute,
    layout_for,
    layout_map,
    repair_text,
    resolve_click,
)
from compiler.params import CLICK_TOLERANCE_PX, STALE_INPUT_S

SCREEN = (1000, 500)  # not square: x and y scale differently


def box(name: str | None, left: float, top: float, width: float, height: float) -> Element:
    """An element at pixel bounds on SCREEN (the tree holds them as fractions of it)."""
    w, h = SCREEN
    return Element(1, "AXButton", name, (left / w, top / h, width / w, height / h))


def click(x: float, y: float, *elements: Element) -> tuple[str | None, str | None, str]:
    return resolve_click(x, y, elements, SCREEN)


# --- Keyboard layouts -----------------------------------------------------------------------


def test_a_named_layout_or_an_operators_own_map_is_applied() -> None:
    assert layout_for("identity") == {} and LAYOUTS["identity"] == {}
    assert layout_for("azerty") is AZERTY
    assert layout_for("azerty", [("b", "B")]) == {"b": "B"}
    given = {"x": "y"}
    copied = layout_map(given)
    assert copied == given and copied is not given


def test_an_unknown_layout_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError) as raised:
        layout_for("dvorak")
    assert str(raised.value) == "unknown keyboard layout 'dvorak'; known: identity, azerty"


def test_azerty_typing_captured_as_qwerty_is_repaired_key_by_key() -> None:
    assert repair_text("qawzm;QAWZM:", AZERTY) == "aqzw,mAQZW?M"
    assert len(AZERTY) == 12
    assert repair_text("bulk_create", AZERTY) == "bulk_creqte"  # unmapped keys stay


def test_no_map_leaves_text_as_typed() -> None:
    assert repair_text("qa", {}) == "qa"
    assert repair_text("qa", {"q": "Q"}) == "Qa"


# --- Click resolution -----------------------------------------------------------------------


def test_a_click_inside_elements_hits_the_smallest_the_first_on_a_tie() -> None:
    big = box("Window", 0, 0, 1000, 500)
    small = box("Send", 100, 100, 50, 20)
    same = box("Also", 100, 100, 20, 50)  # the same area as Send
    assert click(110, 110, big, small, same) == ("Send", "AXButton", "exact")
    assert click(110, 110, big, same, small) == ("Also", "AXButton", "exact")
    assert click(500, 400, big, small) == ("Window", "AXButton", "exact")


def test_an_elements_edges_are_inside_it() -> None:
    send = box("Send", 100, 100, 50, 20)
    for x, y in ((100, 100), (150, 120), (100, 120), (150, 100)):
        assert click(x, y, send)[2] == "exact", (x, y)
    for x, y in ((99.9, 110), (150.1, 110), (120, 99.9), (120, 120.1)):
        assert click(x, y, send)[2] == "tolerance", (x, y)


def test_elements_without_bounds_or_name_are_never_targets() -> None:
    nameless = box("", 0, 0, 1000, 500)
    unplaced = Element(1, "AXButton", "Ghost", None)
    assert click(10, 10, nameless, unplaced) == ("zone:top-left", None, "zone")
    assert click(10, 10, nameless, unplaced, box("Pane", 0, 0, 100, 100))[0] == "Pane"


def test_a_click_on_the_far_edges_of_an_element_is_inside_it() -> None:
    # Bounds that scale to whole pixels exactly: the far edges are 750 and 375 px.
    pane = Element(1, "AXGroup", "Pane", (0.5, 0.5, 0.25, 0.25))
    for x, y in ((750, 375), (500, 250), (750, 250), (500, 375)):
        assert click(x, y, pane) == ("Pane", "AXGroup", "exact"), (x, y)


def test_a_near_miss_within_the_tolerance_hits_the_nearest_by_its_farther_axis() -> None:
    assert CLICK_TOLERANCE_PX == 40.0
    left = box("Left", 0, 0, 100, 100)  # the click is 30 px right of it, level with it
    lower = box("Lower", 160, 110, 100, 100)  # 30 px left of it and 20 px above: 30 px
    corner = box("Corner", 145, 145, 10, 10)  # 15 px left and 20 px above it: 20 px
    assert click(130, 50, left) == ("Left", "AXButton", "tolerance")
    assert click(130, 90, left, lower) == ("Left", "AXButton", "tolerance")  # a tie: the first
    assert click(130, 90, lower, left) == ("Lower", "AXButton", "tolerance")
    assert click(130, 125, left, lower, corner)[0] == "Corner"
    assert click(130, 125, corner, left, lower)[0] == "Corner"


def test_a_near_miss_on_one_axis_is_measured_on_that_axis_alone() -> None:
    # Half a pixel above an element, within its width: nearer than one listed first that is
    # 0.8 px to the side, within its height.
    beside = box("Beside", 0, 50, 100, 100)
    below = box("Below", 50, 100.5, 100, 100)
    assert click(100.8, 100, beside, below)[0] == "Below"


def test_the_tolerance_ring_is_forty_pixels_wide_inclusive() -> None:
    send = box("Send", 100, 100, 50, 20)
    assert click(190, 110, send)[2] == "tolerance"
    assert click(190.5, 110, send)[2] == "zone"
    assert click(120, 60, send)[2] == "tolerance"
    assert click(120, 59.5, send)[2] == "zone"
    assert click(60, 60, send)[2] == "tolerance"  # 40 px on both axes


def test_an_exact_hit_wins_over_a_nearer_listed_miss() -> None:
    miss = box("Miss", 0, 0, 99, 99)
    hit = box("Hit", 100, 0, 400, 400)
    assert click(100, 50, miss, hit) == ("Hit", "AXButton", "exact")


@pytest.mark.parametrize(
    ("x", "y", "zone"),
    [
        (0, 0, "top-left"),
        (332, 166, "top-left"),
        (334, 167, "middle-center"),
        (1000 / 3, 500 / 3, "middle-center"),
        (2000 / 3, 1000 / 3, "middle-center"),
        (667, 166, "top-right"),
        (500, 334, "bottom-center"),
        (999, 499, "bottom-right"),
        (10, 250, "middle-left"),
        (990, 250, "middle-right"),
        (500, 10, "top-center"),
        (10, 490, "bottom-left"),
    ],
)
def test_a_click_on_nothing_is_placed_in_a_third_of_the_screen(
    x: float, y: float, zone: str
) -> None:
    assert click(x, y) == (f"zone:{zone}", None, "zone")


# --- Attribution ----------------------------------------------------------------------------


class Trees:
    """An element loader that records which snapshots' trees it was asked for."""

    def __init__(self, trees: dict[int, list[Element]]) -> None:
        self.trees = trees
        self.asked: list[set[int]] = []

    def __call__(self, ids: Collection[int]) -> dict[int, list[Element]]:
        self.asked.append(set(ids))
        # Newest first, as a loader may return them: the caller puts them in order.
        return {i: self.trees[i] for i in sorted(ids, reverse=True) if i in self.trees}


def snapshots(monitor: str, *pairs: tuple[int, float]) -> list[Snapshot]:
    return [Snapshot(i, t, monitor, "App") for i, t in pairs]


def attributed(
    inputs: Sequence[InputEvent],
    rows: Sequence[Snapshot],
    trees: Trees | None = None,
) -> tuple[list[Attributed], list[Element]]:
    by_monitor: dict[str, list[Snapshot]] = {}
    for row in rows:
        by_monitor.setdefault(row.monitor, []).append(row)
    times = {m: [r.t for r in monitor_rows] for m, monitor_rows in by_monitor.items()}
    return attribute(inputs, by_monitor, times, trees or Trees({}), SCREEN)


def where(items: Sequence[Attributed]) -> list[tuple[int, int | None, int | None]]:
    return [(item.event.id, item.snapshot_id, item.distance_ms) for item in items]


def test_an_input_goes_to_the_nearest_snapshot_of_its_monitor_the_earlier_on_a_tie() -> None:
    rows = snapshots("0", (1, 100.0), (2, 110.0), (3, 130.0))
    inputs = [
        InputEvent(10, 104.0, "key"),  # 4 s after row 1, 6 s before row 2
        InputEvent(11, 106.0, "key"),  # nearer row 2
        InputEvent(12, 120.0, "key"),  # halfway between rows 2 and 3: the earlier
        InputEvent(13, 110.25, "key"),
    ]
    out, _ = attributed(inputs, rows)
    assert where(out) == [(10, 1, 4000), (11, 2, 4000), (13, 2, 250), (12, 2, 10000)]


def test_inputs_before_the_first_or_after_the_last_row_go_to_that_row() -> None:
    rows = snapshots("0", (1, 100.0), (2, 200.0))
    out, _ = attributed([InputEvent(10, 50.0, "key"), InputEvent(11, 250.0, "key")], rows)
    assert where(out) == [(10, 1, 50000), (11, 2, 50000)]
    out, _ = attributed([InputEvent(12, 100.0, "key")], rows)
    assert where(out) == [(12, 1, 0)]


def test_an_input_more_than_a_dwell_cap_from_any_row_is_unattributed() -> None:
    assert STALE_INPUT_S == 90.0
    rows = snapshots("0", (1, 1000.0))
    inputs = [
        InputEvent(10, 1000.0 - 90.0, "key"),
        InputEvent(11, 1000.0 + 90.0, "key"),
        InputEvent(12, 1000.0 + 90.5, "key"),
        InputEvent(13, 1000.0 - 90.5, "key"),
    ]
    out, _ = attributed(inputs, rows)
    assert where(out) == [(13, None, None), (10, 1, 90000), (11, 1, 90000), (12, None, None)]


def test_each_monitors_inputs_are_attributed_to_that_monitors_rows_only() -> None:
    rows = snapshots("0", (1, 100.0)) + snapshots("1", (2, 101.0))
    inputs = [
        InputEvent(10, 101.0, "key", monitor="0"),
        InputEvent(11, 101.5, "key", monitor="1"),
        InputEvent(12, 102.0, "key", monitor="0"),
        InputEvent(13, 102.5, "key", monitor="2"),  # a monitor with no rows
        InputEvent(14, 103.0, "key", monitor="1"),
    ]
    out, _ = attributed(inputs, rows)
    assert where(out) == [
        (10, 1, 1000),
        (11, 2, 500),
        (12, 1, 2000),
        (13, None, None),
        (14, 2, 2000),
    ]


def test_inputs_out_of_order_are_attributed_in_time_order() -> None:
    rows = snapshots("0", (1, 100.0), (2, 200.0))
    inputs = [InputEvent(11, 190.0, "key"), InputEvent(10, 110.0, "key")]
    out, _ = attributed(inputs, rows)
    assert where(out) == [(10, 1, 10000), (11, 2, 10000)]


def test_clicks_are_named_by_capture_resolved_by_tree_or_unresolved() -> None:
    rows = snapshots("0", (1, 100.0), (2, 200.0), (3, 300.0))
    send = box("Send", 100, 100, 50, 20)
    tree = [Element(2, "AXGroup", "Pane", (0.0, 0.0, 1.0, 1.0)), send]
    trees = Trees({2: tree, 3: [Element(3, "AXLink", "Home", (0.0, 0.0, 0.5, 0.5))]})
    inputs = [
        InputEvent(10, 101.0, "click", element_name="OK", element_role="AXButton", x=5, y=5),
        InputEvent(11, 201.0, "click", x=110.0, y=110.0),
        InputEvent(12, 202.0, "click", x=110.0),  # no y: nothing to resolve against
        InputEvent(13, 203.0, "click", x=900.0, y=450.0),
        InputEvent(14, 204.0, "key", element_name="Field", element_role="AXTextField"),
        InputEvent(15, 999.0, "click", element_name="Late", element_role="AXLink"),
        InputEvent(16, 999.5, "click", x=1.0, y=1.0),
        InputEvent(17, 999.9, "scroll"),
    ]
    out, used = attributed(inputs, rows, trees)
    assert [(i.target, i.role, i.tier) for i in out] == [
        ("OK", "AXButton", "named"),
        ("Send", "AXButton", "exact"),
        (None, None, "unresolved"),
        ("Pane", "AXGroup", "exact"),
        ("Field", "AXTextField", None),
        ("Late", "AXLink", "named"),  # no snapshot near it, but the capture named it
        (None, None, "unresolved"),
        (None, None, None),
    ]
    assert [i.snapshot_id for i in out][-3:] == [None, None, None]
    # Only the trees of snapshots with a click to resolve are loaded, at once.
    assert trees.asked == [{2}]
    assert used == tree
    assert set(TIERS) >= {i.tier for i in out if i.tier}


def test_the_consulted_trees_are_returned_in_snapshot_order() -> None:
    rows = snapshots("0", (1, 100.0), (2, 200.0))
    one = [Element(1, "AXButton", "A", (0.0, 0.0, 0.1, 0.1))]
    two = [Element(2, "AXButton", "B", (0.0, 0.0, 0.1, 0.1))]
    trees = Trees({1: one, 2: two})
    inputs = [
        InputEvent(11, 200.0, "click", x=1.0, y=1.0),
        InputEvent(10, 100.0, "click", x=1.0, y=1.0),
    ]
    out, used = attributed(inputs, rows, trees)
    assert [i.target for i in out] == ["A", "B"]
    assert used == one + two and trees.asked == [{1, 2}]


def test_a_click_whose_snapshot_has_no_tree_is_placed_in_a_zone() -> None:
    rows = snapshots("0", (1, 100.0))
    out, used = attributed([InputEvent(10, 100.0, "click", x=10.0, y=10.0)], rows)
    assert (out[0].target, out[0].tier) == ("zone:top-left", "zone") and used == []


def test_no_inputs_ask_for_no_trees() -> None:
    trees = Trees({})
    assert attributed([], snapshots("0", (1, 100.0)), trees) == ([], [])
    assert trees.asked == [set()]


def test_a_monitor_named_by_the_empty_string_is_a_monitor_like_any_other() -> None:
    out, _ = attributed([InputEvent(10, 101.0, "key", monitor="")], snapshots("", (1, 100.0)))
    assert where(out) == [(10, 1, 1000)]
