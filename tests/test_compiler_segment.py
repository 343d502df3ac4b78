"""Segmentation (activity frames §4.2) at its limits: absences, boundaries, order."""

from __future__ import annotations

import pytest

from compiler.capture import Absence, Snapshot
from compiler.params import Params
from compiler.segment import UNKNOWN_APP, Segmentation, is_lock_app, normalise_app, segment

T0 = 1_772_438_400.0  # 2026-03-02T08:00:00Z


def rows(*specs: tuple[float, str, str]) -> list[Snapshot]:
    """(offset s, monitor, app) per row; ids 1, 2, … in the given order."""
    return [Snapshot(i, T0 + t, monitor, app) for i, (t, monitor, app) in enumerate(specs, 1)]


def on(monitor: str, *specs: tuple[float, str]) -> list[tuple[float, str, str]]:
    return [(t, monitor, app) for t, app in specs]


def afk(start: float, end: float, monitor: str | None = None, id: int = 1) -> Absence:
    return Absence(id, T0 + start, T0 + end, monitor=monitor)


def seg(snapshots: list[Snapshot], *absences: Absence) -> Segmentation:
    return segment(snapshots, list(absences), Params())


def credits(result: Segmentation) -> dict[int, float]:
    """Credited seconds per row id, interruptions included; away rows are absent."""
    out: dict[int, float] = {}
    for s in result.segments:
        for part in [s, *s.interruptions]:
            out.update((r.id, c) for r, c in zip(part.rows, part.credits, strict=True))
    return out


def frames(result: Segmentation) -> list[list[int]]:
    """Each segment's own row ids, in output order."""
    return [[r.id for r in s.rows] for s in result.segments]


def away(result: Segmentation) -> list[tuple[str, float, float, list[int]]]:
    return [(a.reason, a.start - T0, a.end - T0, [r.id for r in a.rows]) for a in result.away]


# --- Absences -----------------------------------------------------------------------------


def test_an_absence_of_one_monitor_leaves_the_others_rows_credited() -> None:
    snaps = rows(
        *on("0", (0, "Code"), (30, "Code"), (60, "Code")),
        *on("1", (0, "Slack"), (30, "Slack"), (60, "Slack")),
    )
    result = seg(snaps, afk(20, 50, monitor="0"))
    assert credits(result) == {1: 20.0, 3: 0.0, 4: 30.0, 5: 30.0, 6: 0.0}
    assert frames(result) == [[1], [4, 5, 6], [3]]
    assert away(result) == [("afk", 20.0, 50.0, [2])]


def test_several_absences_each_cut_the_row_before_and_absorb_the_rows_inside() -> None:
    snaps = rows(*on("0", *((t, "Code") for t in (0, 30, 60, 90, 120, 150))))
    result = seg(snaps, afk(20, 40, id=1), afk(80, 100, id=2))
    assert credits(result) == {1: 20.0, 3: 20.0, 5: 30.0, 6: 0.0}
    assert frames(result) == [[1], [3], [5, 6]]
    assert all(s.break_after for s in result.segments)
    assert away(result) == [("afk", 20.0, 40.0, [2]), ("afk", 80.0, 100.0, [4])]


def test_an_absence_is_half_open_away_at_its_start_credited_at_its_end() -> None:
    snaps = rows(*on("0", (0, "Code"), (30, "Code"), (60, "Code"), (90, "Code")))
    result = seg(snaps, afk(30, 60))
    # The row before ends where the absence starts: credited in full, then the frame closes.
    assert credits(result) == {1: 30.0, 3: 30.0, 4: 0.0}
    assert frames(result) == [[1], [3, 4]]
    assert result.segments[0].break_after
    assert away(result) == [("afk", 30.0, 60.0, [2])]


def test_an_absence_starting_at_the_row_after_a_silence_credits_nothing() -> None:
    snaps = rows(*on("0", (0, "Code"), (400, "Code"), (430, "Code")))
    result = seg(snaps, afk(400, 420))
    assert credits(result) == {1: 0.0, 3: 0.0}
    assert away(result) == [("afk", 400.0, 420.0, [2])]


def test_an_absence_soon_after_a_row_credits_only_the_time_up_to_it() -> None:
    snaps = rows(*on("0", (0, "Code"), (200, "Code")))
    result = seg(snaps, afk(30, 150))
    assert credits(result) == {1: 30.0, 2: 0.0}  # not the 90 s cap
    assert frames(result) == [[1], [2]]
    assert result.segments[0].break_after


def test_an_absence_far_after_a_row_still_caps_its_credit() -> None:
    snaps = rows(*on("0", (0, "Code"), (200, "Code")))
    result = seg(snaps, afk(150, 180))
    assert credits(result) == {1: 90.0, 2: 0.0}
    assert result.segments[0].break_after


def test_an_absence_that_ended_before_a_row_does_not_touch_it() -> None:
    snaps = rows(*on("0", (100, "Code"), (130, "Code"), (160, "Code")))
    result = seg(snaps, afk(0, 50), afk(140, 150, id=2))
    assert credits(result) == {1: 30.0, 2: 10.0, 3: 0.0}
    assert frames(result) == [[1, 2], [3]]


def test_overlapping_absences_of_one_monitor_are_one_interval() -> None:
    snaps = rows(*on("0", *((t, "Code") for t in (0, 60, 120, 180, 240))))
    # [10, 200) and [50, 100): the second lies inside the first, which keeps its end.
    result = seg(snaps, afk(10, 200, id=1), afk(50, 100, id=2))
    assert credits(result) == {1: 10.0, 5: 0.0}
    assert away(result) == [("afk", 10.0, 200.0, [2, 3, 4])]
    # [10, 100) and [50, 200) overlap: one interval to 200.
    result = seg(snaps, afk(10, 100, id=1), afk(50, 200, id=2))
    assert credits(result) == {1: 10.0, 5: 0.0}
    assert away(result) == [("afk", 10.0, 200.0, [2, 3, 4])]


def test_an_all_monitor_and_a_one_monitor_absence_do_not_merge_across_monitors() -> None:
    snaps = rows(
        *on("0", *((t, "Code") for t in (0, 60, 120, 180, 240))),
        *on("1", *((t, "Slack") for t in (0, 60, 120, 180, 240))),
    )
    everyone, second = afk(10, 100, id=1), afk(50, 200, monitor="1", id=2)
    for absences in ((everyone, second), (second, everyone)):
        result = seg(snaps, *absences)
        # Monitor 0 is away only while everyone is; monitor 1 until its own absence ends.
        assert credits(result) == {1: 10.0, 3: 60.0, 4: 60.0, 5: 0.0, 6: 10.0, 10: 0.0}
        assert frames(result) == [[1], [6], [3, 4, 5], [10]]
        assert away(result) == [("afk", 10.0, 200.0, [2, 7, 8, 9])]


def test_absences_of_all_monitors_and_of_one_with_the_same_bounds_are_both_kept() -> None:
    snaps = rows(*on("0", (0, "Code"), (30, "Code"), (60, "Code")), *on("1", (0, "Slack")))
    for absences in ((afk(10, 40, id=1), afk(10, 40, "0", 2)), (afk(10, 40, "0", 2), afk(10, 40))):
        result = seg(snaps, *absences)
        assert credits(result) == {1: 10.0, 3: 0.0, 4: 0.0}
        assert away(result) == [("afk", 10.0, 40.0, [2])]


def test_an_absence_inside_a_longer_one_of_other_monitors_does_not_shorten_it() -> None:
    # Everyone away [8, 100), monitor 0 also [50, 60): monitor 0 is away from 8 s on.
    snaps = rows(*on("0", (5, "Code"), (10, "Code"), (120, "Code"), (150, "Code")))
    result = seg(snaps, afk(50, 60, "0", 1), afk(8, 100, id=2))
    assert credits(result) == {1: 3.0, 3: 30.0, 4: 0.0}
    assert away(result) == [("afk", 8.0, 100.0, [2])]


def test_a_monitor_absence_stays_on_its_monitor_when_it_sorts_first() -> None:
    snaps = rows(
        *on("a", *((t, "Code") for t in (0, 60, 120))),
        *on("b", *((t, "Slack") for t in (0, 60, 120))),
    )
    result = seg(snaps, afk(10, 100, monitor="a", id=1), afk(30, 50, monitor="b", id=2))
    assert credits(result) == {1: 10.0, 3: 0.0, 4: 30.0, 5: 60.0, 6: 0.0}


# --- Lock screens ---------------------------------------------------------------------------


def test_a_lock_row_is_away_until_the_next_row() -> None:
    snaps = rows(*on("0", (0, "Code"), (10, "loginwindow"), (40, "LockApp"), (100, "Code")))
    result = seg(snaps)
    assert credits(result) == {1: 10.0, 4: 0.0}
    assert frames(result) == [[1], [4]]
    assert result.segments[0].break_after
    assert away(result) == [("lock_screen", 10.0, 100.0, [2, 3])]


def test_a_lock_row_before_a_silence_ends_the_away_span_at_the_lock_row() -> None:
    snaps = rows(*on("0", (0, "Code"), (10, "loginwindow"), (311, "Code")))
    assert away(seg(snaps)) == [("lock_screen", 10.0, 10.0, [2])]
    # Exactly a session gap later is not a silence yet.
    snaps = rows(*on("0", (0, "Code"), (10, "loginwindow"), (310, "Code")))
    assert away(seg(snaps)) == [("lock_screen", 10.0, 310.0, [2])]


def test_a_lock_row_last_of_its_monitor_is_an_instant() -> None:
    snaps = rows(*on("0", (0, "Code"), (10, "loginwindow")))
    assert away(seg(snaps)) == [("lock_screen", 10.0, 10.0, [2])]


def test_separate_lock_runs_are_separate_spans() -> None:
    snaps = rows(*on("0", (0, "loginwindow"), (20, "Code"), (50, "screensaver"), (70, "Code")))
    result = seg(snaps)
    assert away(result) == [("lock_screen", 0.0, 20.0, [1]), ("lock_screen", 50.0, 70.0, [3])]
    assert credits(result) == {2: 30.0, 4: 0.0}


def test_lock_and_afk_spans_that_overlap_stay_apart_by_reason() -> None:
    snaps = rows(*on("0", (0, "Code"), (10, "loginwindow"), (40, "Code"), (100, "Code")))
    result = seg(snaps, afk(20, 30))
    assert away(result) == [("lock_screen", 10.0, 40.0, [2]), ("afk", 20.0, 30.0, [])]


def test_overlapping_away_spans_of_two_monitors_become_one_with_rows_in_time_order() -> None:
    snaps = rows(
        *on("1", (0, "Code"), (10, "loginwindow"), (50, "Code")),
        *on("0", (0, "Slack"), (5, "loginwindow"), (30, "Slack")),
    )
    result = seg(snaps)
    assert away(result) == [("lock_screen", 5.0, 50.0, [5, 2])]


# --- Boundaries of §4.2's constants ---------------------------------------------------------


def test_rows_exactly_a_session_gap_apart_stay_one_session() -> None:
    result = seg(rows(*on("0", (0, "Code"), (300, "Code"), (601, "Code"))))
    assert credits(result) == {1: 90.0, 2: 0.0, 3: 0.0}
    assert frames(result) == [[1, 2], [3]]
    # The last row of a monitor ends its frame too.
    assert [s.break_after for s in result.segments] == [True, True]


@pytest.mark.parametrize(("delta", "credit"), [(89, 89.0), (90, 90.0), (91, 90.0)])
def test_a_row_earns_the_time_to_the_next_up_to_the_cap(delta: float, credit: float) -> None:
    result = seg(rows(*on("0", (0, "Code"), (delta, "Code"))))
    assert credits(result) == {1: credit, 2: 0.0}
    assert result.segments[0].end_t == T0 + delta + 0.0
    assert result.segments[0].active_s == credit


@pytest.mark.parametrize(("back_after", "folded"), [(20, True), (21, False)])
def test_a_flicker_of_exactly_the_limit_folds(back_after: float, folded: bool) -> None:
    snaps = rows(*on("0", (0, "Code"), (5, "Slack"), (5 + back_after, "Code")))
    result = seg(snaps)
    if folded:
        assert frames(result) == [[1, 3]]
        assert [[r.id for r in b.rows] for b in result.segments[0].interruptions] == [[2]]
    else:
        assert frames(result) == [[1], [2], [3]]


# --- Folds and session breaks ---------------------------------------------------------------


def test_no_fold_across_a_lock_even_when_b_is_short() -> None:
    # A, lock, short B, A: the lock closed A's frame, so B is not A's interruption.
    snaps = rows(*on("0", (0, "Code"), (10, "loginwindow"), (15, "Slack"), (25, "Code")))
    assert frames(seg(snaps)) == [[1], [3], [4]]


def test_no_fold_when_b_is_followed_by_a_break() -> None:
    snaps = rows(*on("0", (0, "Code"), (5, "Slack"), (10, "loginwindow"), (15, "Code")))
    assert frames(seg(snaps)) == [[1], [2], [4]]


def test_a_fold_carries_the_break_after_the_returning_row() -> None:
    # A B A [gap] C A: the first fold ends in a session gap, so C A do not fold into it.
    snaps = rows(
        *on("0", (0, "Code"), (5, "Slack"), (10, "Code"), (410, "Terminal"), (415, "Code"))
    )
    result = seg(snaps)
    assert frames(result) == [[1, 3], [4], [5]]
    assert result.segments[0].break_after


def test_a_fold_keeps_the_returning_segments_own_interruptions() -> None:
    # A B A C A: C folds into the second A first, then both fold into the first.
    snaps = rows(
        *on(
            "0",
            (0, "Code"),
            (2, "Slack"),
            (4, "Code"),
            (6, "Mail"),
            (8, "Code"),
            (10, "Slack"),
            (12, "Code"),
        )
    )
    [frame] = seg(snaps).segments
    assert [r.id for r in frame.rows] == [1, 3, 5, 7]
    assert [[r.id for r in b.rows] for b in frame.interruptions] == [[2], [4], [6]]


def test_a_folded_flicker_with_its_own_flickers_leaves_them_all_flat_on_the_host() -> None:
    # A B C B A: C folds into B, then B (with C) into A; A holds both, B holds none.
    snaps = rows(
        *on("0", (0, "Code"), (2, "Slack"), (4, "Mail"), (6, "Slack"), (8, "Code"), (10, "Code"))
    )
    [frame] = seg(snaps).segments
    assert [r.id for r in frame.rows] == [1, 5, 6]
    assert [[r.id for r in b.rows] for b in frame.interruptions] == [[2, 4], [3]]
    assert [b.interruptions for b in frame.interruptions] == [[], []]


# --- Order ----------------------------------------------------------------------------------


def test_same_instant_rows_of_one_monitor_are_ordered_by_id() -> None:
    snaps = [
        Snapshot(2, T0, "0", "Slack"),
        Snapshot(1, T0, "0", "Code"),
        Snapshot(3, T0 + 30, "0", "Code"),
    ]
    result = seg(snaps)
    assert [r.id for r in result.by_monitor["0"]] == [1, 2, 3]
    assert result.times["0"] == [T0, T0, T0 + 30]
    assert credits(result) == {1: 0.0, 2: 30.0, 3: 0.0}


def test_rows_out_of_order_are_sorted_and_their_times_follow() -> None:
    snaps = [Snapshot(2, T0 + 30, "0", "Code"), Snapshot(1, T0, "0", "Code")]
    result = seg(snaps)
    assert result.times["0"] == [T0, T0 + 30]
    assert credits(result) == {1: 30.0, 2: 0.0}


def test_segments_of_two_monitors_at_one_instant_are_ordered_by_monitor_then_row_id() -> None:
    snaps = [
        Snapshot(1, T0, "1", "Code"),
        Snapshot(2, T0, "0", "Slack"),
        Snapshot(3, T0 + 10, "1", "Code"),
        Snapshot(4, T0 + 10, "0", "Slack"),
    ]
    result = seg(snaps)
    assert [s.monitor for s in result.segments] == ["0", "1"]
    assert sorted(result.by_monitor) == ["0", "1"]


# --- Rows with a known end (interval recorders) -----------------------------------------------


def test_a_known_end_caps_the_credit_and_credits_a_row_before_a_silence() -> None:
    snaps = [
        Snapshot(1, T0, "0", "Code", end=T0 + 12),  # next row 30 s later: 12 s
        Snapshot(2, T0 + 30, "0", "Code", end=T0 + 100),  # next row 40 s later: 40 s
        Snapshot(3, T0 + 70, "0", "Code", end=T0 + 130),  # last row: 60 s, its own end
        Snapshot(4, T0 + 1000, "0", "Code", end=T0 + 1500),  # last row: capped at 90 s
        Snapshot(5, T0 + 2000, "0", "Code", end=T0 + 1990),  # an end before its start: 0
    ]
    result = seg(snaps)
    assert credits(result) == {1: 12.0, 2: 40.0, 3: 60.0, 4: 90.0, 5: 0.0}
    assert frames(result) == [[1, 2, 3], [4], [5]]


def test_a_known_end_before_an_absence_still_caps_the_credit() -> None:
    snaps = [
        Snapshot(1, T0, "0", "Code", end=T0 + 5),
        Snapshot(2, T0 + 60, "0", "Code"),
    ]
    assert credits(seg(snaps, afk(20, 40))) == {1: 5.0, 2: 0.0}
    # An end after the absence's start does not lengthen the cut credit.
    snaps[0] = Snapshot(1, T0, "0", "Code", end=T0 + 50)
    assert credits(seg(snaps, afk(20, 40))) == {1: 20.0, 2: 0.0}


# --- App names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("captured", "shown"),
    [
        ("Code - Insiders", "Code - Insiders"),
        ("Code-insiders", "Code - Insiders"),
        ("code_insiders.EXE", "Code - Insiders"),
        ("Code.exe", "Code"),
        ("msedge.exe", "Microsoft Edge"),
        ("Microsoft\u200b Edge", "Microsoft Edge"),
        ("Firefox-ESR", "Firefox"),
        ("Mozilla Firefox", "Firefox"),
        ("  Code  ", "Code"),
        ("exe", "exe"),  # nothing but the suffix: not an app name to strip
        ("Codex", "Codex"),
        ("slack", "slack"),
        ("unknown", UNKNOWN_APP),
        ("(Unknown)", UNKNOWN_APP),
        ("N/A", UNKNOWN_APP),
        ("\u200e", UNKNOWN_APP),
    ],
)
def test_app_names_map_known_spellings_to_one_name(captured: str, shown: str) -> None:
    normalise_app.cache_clear()  # the answer must come from the rule, not an earlier call
    assert normalise_app(captured) == shown


def test_lock_apps_are_recognised_in_any_case_and_end_frames() -> None:
    is_lock_app.cache_clear()
    assert is_lock_app("LOGINWINDOW") and is_lock_app("Windows Default Lock Screen")
    assert not is_lock_app("Code")
    snaps = rows(*on("0", (0, "Code"), (10, "lockapp.exe"), (20, "Code")))
    assert frames(seg(snaps)) == [[1], [3]]
