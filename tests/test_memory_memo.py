"""Identity memos (memory.engine.memo): one piece of work per object, never another's answer."""

from __future__ import annotations

from memory.engine.memo import IdentityMemo


class Box:
    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and other.value == self.value

    __hash__ = None  # type: ignore[assignment]  # unhashable: the memo never hashes a key


def test_an_object_is_worked_on_once() -> None:
    calls: list[int] = []
    memo = IdentityMemo(lambda box: calls.append(box.value) or box.value * 2, limit=8)
    box = Box(3)
    assert [memo(box), memo(box)] == [6, 6]
    assert calls == [3]


def test_equal_objects_are_distinct_keys() -> None:
    # 1 == True and equal dataclasses would share an entry of a hashed cache; here each
    # object answers for itself.
    memo = IdentityMemo(lambda value: repr(value), limit=8)
    assert memo(1) == "1" and memo(True) == "True"
    first, second = Box(1), Box(1)
    calls: list[Box] = []
    memo_boxes = IdentityMemo(lambda box: calls.append(box) or len(calls), limit=8)
    assert memo_boxes(first) == 1 and memo_boxes(second) == 2 and memo_boxes(first) == 1


def test_a_reused_id_never_returns_another_objects_answer() -> None:
    memo = IdentityMemo(lambda box: box.value, limit=8)
    box, gone = Box(5), Box(99)
    # What the memo would hold had ``gone`` been freed and its id given to ``box``.
    memo._held[id(box)] = (gone, 99)
    assert memo(box) == 5


def test_a_full_memo_starts_again() -> None:
    calls: list[int] = []
    memo = IdentityMemo(lambda box: calls.append(box.value) or box.value, limit=2)
    boxes = [Box(i) for i in range(3)]
    for box in boxes:
        memo(box)
    assert len(memo._held) == 1  # emptied at the limit, then the third held
    memo(boxes[0])
    assert calls == [0, 1, 2, 0]
