"""The capture records (activity frames §3.1): row order, titles and element-tree look-ups."""

from __future__ import annotations

from collections.abc import Collection

from compiler.capture import Capture, Element, Snapshot, in_time_order, normalise_title


def test_titles_lose_invisible_marks_and_collapse_their_spaces() -> None:
    normalise_title.cache_clear()  # the answer must come from the rule, not an earlier call
    assert normalise_title("  a\u200b.py \u2014\t Code\u00ad  ") == "a.py \u2014 Code"
    assert normalise_title("\u200e\ufeff") == ""


def test_time_order_is_strict_in_time_and_by_id_at_one_instant() -> None:
    def rows(*pairs: tuple[float, int]) -> list[Snapshot]:
        return [Snapshot(i, t, "0", "Code") for t, i in pairs]

    assert in_time_order(rows((1.0, 9), (2.0, 1)))  # ids need not rise across instants
    assert in_time_order(rows((1.0, 1), (1.0, 1)))  # a repeated (t, id) is still in order
    assert not in_time_order(rows((2.0, 1), (1.0, 2)))
    assert not in_time_order(rows((1.0, 2), (1.0, 1), (2.0, 3)))
    # The times the caller hands over decide, not the rows' own.
    snaps = rows((1.0, 1), (2.0, 2))
    assert not in_time_order(snaps, [2.0, 1.0])
    assert in_time_order(snaps, [1.0, 1.0])  # a tie: the ids decide
    assert not in_time_order([snaps[1], snaps[0]], [1.0, 1.0])


def test_element_trees_are_looked_up_per_snapshot_in_stored_order() -> None:
    elements = [
        Element(2, "button", "Send"),
        Element(1, "link", "Home"),
        Element(2, "text", "To"),
        Element(3, "link", "Away"),
    ]
    capture = Capture(elements=elements)
    assert capture.elements_for({2, 1}) == {
        2: [elements[0], elements[2]],
        1: [elements[1]],
    }
    assert capture.elements_for([4]) == {}
    assert capture.elements_for(set()) == {}


def test_an_element_loader_is_asked_only_for_the_trees_wanted() -> None:
    asked: list[set[int]] = []
    stored = [Element(5, "button", "Send"), Element(6, "link", "Other"), Element(5, "text")]

    def load(ids: Collection[int]) -> list[Element]:
        asked.append(set(ids))
        return stored  # a loader may return more than it was asked for

    capture = Capture(elements=[Element(5, "ignored")], element_loader=load)
    assert capture.elements_for([5, 5]) == {5: [stored[0], stored[2]]}
    assert asked == [{5}]
    assert capture.elements_for([]) == {} and asked == [{5}]  # nothing wanted, nothing loaded
