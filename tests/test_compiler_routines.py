"""Routine mining (Activity Frames §7.1): contiguous recurring sequences of 3..60 steps, at least
three non-overlapping occurrences, two distinct specific targets, sessions cut at 90 s gaps,
self-repeats collapsed, maximal only; recurrence (h_raw, h_specific) and the hold-out."""

from __future__ import annotations

import json
import math
import random
from datetime import date, timedelta

import pytest

from compiler.actions import Action, actions, history
from compiler.document import compile_day
from compiler.params import Params
from compiler.routines import (
    Routine,
    Step,
    holdout,
    is_specific,
    mine,
    recurrence,
    routine_id,
)
from tests.compiler_days import DAY, TZ, Day


class Stream:
    """Builds an action stream: each ``session`` starts 10 minutes after the previous one."""

    def __init__(self) -> None:
        self.out: list[Action] = []
        self.t = 1_000_000.0
        self.ids = 0
        self.day = "2026-03-02"

    def act(
        self,
        target: str,
        *,
        op: str = "click",
        role: str | None = "AXButton",
        app: str = "Firefox",
        url: str | None = "mail.example/inbox",
        frame: str | None = None,
        dt: float = 5.0,
    ) -> Action:
        self.t += dt
        self.ids += 1
        action = Action(
            self.t,
            self.day,
            op,
            target,
            role,
            app,
            url,
            frame or f"f-{self.ids}",
            (self.ids,),
        )
        self.out.append(action)
        return action

    def session(self, *targets: str, **kw: object) -> list[Action]:
        self.t += 600
        return [self.act(target, **kw) for target in targets]  # type: ignore[arg-type]

    def nav(self, *templates: str) -> list[Action]:
        self.t += 600
        return [self.act(t, op="navigate", role=None, url=t) for t in templates]


def _targets(routine: Routine) -> list[str]:
    return [s.target for s in routine.steps]


def test_a_sequence_recurring_three_times_is_a_routine_with_its_occurrences():
    s = Stream()
    made = [s.session("Compose", "To", "Send") for _ in range(3)]
    s.session("Settings", "Filters", "Labels")  # once: not a routine
    (routine,) = mine(s.out)
    assert _targets(routine) == ["Compose", "To", "Send"]
    assert routine.count == 3
    assert routine.granularity == "action"
    assert routine.steps[0] == Step("click", "Compose", "AXButton", "Firefox", "mail.example/inbox")
    first = routine.occurrences[0]
    assert first.evidence == tuple(a.evidence[0] for a in made[0])
    assert first.frames == tuple(a.frame for a in made[0])
    assert (first.start, first.end) == (made[0][0].t, made[0][-1].t)
    assert first.day == "2026-03-02"
    assert routine.id == routine_id("action", routine.steps)
    assert routine.id.startswith("r-") and len(routine.id) == 14


def test_two_occurrences_are_not_enough():
    s = Stream()
    for _ in range(2):
        s.session("Compose", "To", "Send")
    assert mine(s.out) == []
    assert [r.count for r in mine(s.out, min_count=2)] == [2]


def test_sessions_are_cut_at_gaps_over_90_seconds():
    cut, kept = Stream(), Stream()
    for _ in range(3):
        cut.session("Compose", "To")
        cut.act("Send", dt=90.5)
        kept.session("Compose", "To")
        kept.act("Send", dt=90.0)  # exactly 90 s is still one session
    assert mine(cut.out) == []
    assert [_targets(r) for r in mine(kept.out)] == [["Compose", "To", "Send"]]


def test_immediate_self_repeats_are_collapsed_into_one_step():
    s = Stream()
    s.session("Compose", "Attach", "Attach", "Attach", "Send")
    s.session("Compose", "Attach", "Send")
    third = s.session("Compose", "Attach", "Attach", "Send")
    (routine,) = mine(s.out)
    assert _targets(routine) == ["Compose", "Attach", "Send"]
    # The collapsed presses are still evidence of the occurrence, which ends at the last one.
    assert routine.occurrences[2].evidence == tuple(a.evidence[0] for a in third)
    assert routine.occurrences[2].end == third[-1].t


def test_a_routine_names_two_distinct_specific_targets():
    s = Stream()
    for _ in range(3):
        s.session("Next", "OK", "Close")  # generic controls only
        s.session("Report", "Next", "Report", "Next")  # one specific target
    assert mine(s.out) == []
    assert not is_specific("OK", "action")
    assert not is_specific("  more   OPTIONS ", "action")
    assert not is_specific("42", "action")
    assert is_specific("Archive", "action")
    assert is_specific("shop.example", "url")
    assert is_specific("shop.example/orders/*", "url")
    assert not is_specific("shop.example/*/*", "url")


def test_only_maximal_sequences_are_kept():
    s = Stream()
    for _ in range(3):
        s.session("Inbox", "Open", "Label", "Archive")
    routines = mine(s.out)
    assert [_targets(r) for r in routines] == [["Inbox", "Open", "Label", "Archive"]]


def test_a_contained_sequence_with_a_higher_count_is_kept_and_ordered_first():
    s = Stream()
    for _ in range(3):
        s.session("Inbox", "Open", "Label", "Archive")
    s.session("Inbox", "Open", "Label", "Spam")
    routines = mine(s.out)
    assert [(r.count, _targets(r)) for r in routines] == [
        (4, ["Inbox", "Open", "Label"]),
        (3, ["Inbox", "Open", "Label", "Archive"]),
    ]


def test_occurrences_that_overlap_are_counted_once():
    s = Stream()
    # "Inbox Archive Inbox" starts at steps 0, 2 and 4, but only 0 and 4 do not overlap.
    s.session("Inbox", "Archive", "Inbox", "Archive", "Inbox", "Archive", "Inbox")
    assert mine(s.out) == []
    s.session("Inbox", "Archive", "Inbox")
    (routine,) = mine(s.out)
    assert routine.count == 3
    assert _targets(routine) == ["Inbox", "Archive", "Inbox"]


def test_the_same_target_in_another_app_is_another_step():
    s = Stream()
    for app in ("Slack", "Mail", "Slack", "Mail"):
        s.session("Compose", "To", "Send", app=app)
    assert mine(s.out) == []
    assert [r.count for r in mine(s.out, min_count=2)] == [2, 2]


def test_a_step_keeps_the_page_only_when_every_occurrence_saw_it():
    s = Stream()
    s.session("Compose", "To", "Send", url="mail.example/inbox")
    s.session("Compose", "To", "Send", url="mail.example/inbox")
    s.session("Compose", "To", "Send", url="mail.example/sent")
    s.session("Compose", "To", "Send", url="mail.example/inbox")
    (routine,) = mine(s.out)
    assert [step.url_template for step in routine.steps] == [None, None, None]
    assert routine.count == 4


def test_max_len_bounds_the_sequences():
    s = Stream()
    for _ in range(3):
        s.session("A1", "B1", "C1", "D1", "E1")
    routines = mine(s.out, max_len=4)
    assert sorted(_targets(r) for r in routines) == [
        ["A1", "B1", "C1", "D1"],
        ["B1", "C1", "D1", "E1"],
    ]
    assert [len(r.steps) for r in mine(s.out)] == [5]


def test_routines_at_url_granularity_are_sequences_of_url_templates():
    s = Stream()
    for _ in range(3):
        s.nav("shop.example/orders", "shop.example/orders/*", "shop.example/invoices/*")
    (routine,) = mine(s.out, granularity="url")
    assert routine.granularity == "url"
    assert [(st.op, st.target, st.url_template) for st in routine.steps] == [
        ("navigate", "shop.example/orders", "shop.example/orders"),
        ("navigate", "shop.example/orders/*", "shop.example/orders/*"),
        ("navigate", "shop.example/invoices/*", "shop.example/invoices/*"),
    ]
    assert routine.id != routine_id("action", routine.steps)


def test_the_order_is_deterministic_and_independent_of_input_order():
    s = Stream()
    for _ in range(4):
        s.session("Pull", "Review", "Approve")
    for _ in range(3):
        s.session("Issue", "Label", "Assign", "Close")
        s.session("Board", "Card", "Move")
    found = mine(s.out)
    assert [(r.count, len(r.steps)) for r in found] == [(4, 3), (3, 4), (3, 3)]
    shuffled = list(s.out)
    random.Random(7).shuffle(shuffled)
    assert mine(shuffled) == found


def test_mining_reads_the_compiled_action_stream_end_to_end():
    day = Day()
    clicks = []
    for k in range(3):
        base = k * 600
        snap = day.snap(base, "Firefox", "Mail", "https://mail.example/u/0/inbox")
        clicks.append(
            (
                snap,
                day.inp(base + 1, "click", element_name="Compose", element_role="AXButton"),
                day.inp(base + 2, "key", element_name="To", element_role="AXTextField"),
                day.inp(base + 3, "click", element_name="Send", element_role="AXButton"),
            )
        )
        day.snap(base + 30, "Firefox", "Mail", "https://mail.example/u/0/inbox")
    compiled = compile_day(day.capture, DAY, TZ, Params())
    (routine,) = mine(actions(compiled))
    assert [(s.op, s.target, s.role) for s in routine.steps] == [
        ("click", "Compose", "AXButton"),
        ("type", "To", "AXTextField"),
        ("click", "Send", "AXButton"),
    ]
    assert routine.steps[0].url_template == "mail.example/u/*/*"
    assert [o.evidence for o in routine.occurrences] == [ids[1:] for ids in clicks]
    assert [o.frames for o in routine.occurrences] == [(f"f-{ids[0]}",) for ids in clicks]
    assert {o.day for o in routine.occurrences} == {DAY.isoformat()}
    # The next day's compile of the same capture adds nothing: a day is cut at midnight.
    later = compile_day(day.capture, DAY + timedelta(days=1), TZ, Params())
    assert mine(history([compiled, later])) == [routine]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"granularity": "screen"}, "granularity 'screen' must be one of action, url"),
        ({"min_count": 1}, "min_count must be an integer of at least 2, not 1"),
        ({"min_count": True}, "min_count must be an integer of at least 2"),
        ({"min_len": 1}, "min_len must be an integer of at least 2, not 1"),
        ({"min_len": 5, "max_len": 4}, "max_len must be an integer of at least 5, not 4"),
        ({"max_len": 3.5}, "max_len must be an integer"),
        ({"gap_s": 0}, "gap_s must be a positive number of seconds, not 0"),
        ({"gap_s": math.nan}, "gap_s must be a positive number"),
        ({"gap_s": "90"}, "gap_s must be a positive number"),
    ],
)
def test_bad_mining_parameters_are_refused(kwargs, message):
    s = Stream()
    s.session("Compose", "To", "Send")
    with pytest.raises(ValueError, match=message):
        mine(s.out, **kwargs)


def test_actions_of_the_other_granularity_are_refused():
    s = Stream()
    s.nav("shop.example/orders", "shop.example/cart")
    with pytest.raises(ValueError, match="'navigate' on 'shop.example/orders' .* does not belong"):
        mine(s.out)
    s = Stream()
    s.session("Compose")
    with pytest.raises(ValueError, match="expected navigate"):
        mine(s.out, granularity="url")


def test_an_action_without_evidence_is_refused():
    bare = Action(1.0, "2026-03-02", "click", "Send", None, "Mail", None, "f-1", ())
    with pytest.raises(ValueError, match="has no evidence ids"):
        mine([bare])


def _recurring() -> Stream:
    s = Stream()
    for _ in range(3):
        s.session("Compose", "To", "Send")
        s.session("Next", "OK", "Close")  # recurs, but names nothing specific
    s.session("Settings", "Filters", "Labels", "Import")
    return s


def test_recurrence_counts_steps_inside_recurring_ngrams_and_inside_routines():
    s = _recurring()
    found = mine(s.out)
    figures = recurrence(s.out, found, granularity="action")
    assert figures["steps"] == 22 and figures["actions"] == 22
    assert figures["raw_steps"] == 18
    assert figures["specific_steps"] == 9
    assert figures["h_raw"] == pytest.approx(18 / 22, abs=1e-6)
    assert figures["h_specific"] == pytest.approx(9 / 22, abs=1e-6)
    assert figures["raw_ngram"] == 3
    assert recurrence([], [], granularity="action")["h_raw"] == 0.0


def test_recurrence_counts_collapsed_steps():
    s = Stream()
    for _ in range(3):
        s.session("Compose", "Attach", "Attach", "Send")
    figures = recurrence(s.out, mine(s.out), granularity="action")
    assert (figures["actions"], figures["steps"], figures["specific_steps"]) == (12, 9, 9)
    assert figures["h_specific"] == 1.0


def test_recurrence_refuses_routines_of_another_granularity():
    s = Stream()
    for _ in range(3):
        s.nav("a.example/x", "a.example/y", "a.example/z")
    urls = mine(s.out, granularity="url")
    with pytest.raises(ValueError, match="mined at url granularity, not action"):
        recurrence([], urls, granularity="action")
    with pytest.raises(ValueError, match="granularity 'x' must be one of"):
        recurrence([], [], granularity="x")


def test_the_holdout_fits_on_the_first_days_and_measures_the_later_ones():
    s = Stream()
    for day in ("2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05"):
        s.day = day
        s.session("Compose", "To", "Send")
        s.session("Compose", "To", "Send")
        s.session(f"Unique {day}", f"Other {day}", f"Third {day}")
    # Fit on two days: four occurrences; each later day has one known routine in two sessions.
    figures = holdout(s.out, fit_days=2, granularity="action")
    assert figures["fit_days"] == ["2026-03-02", "2026-03-03"]
    assert figures["test_days"] == ["2026-03-04", "2026-03-05"]
    assert figures["known_routines"] == 1
    assert (figures["test_steps"], figures["covered_steps"]) == (18, 12)
    assert figures["h_holdout"] == pytest.approx(12 / 18, abs=1e-6)
    # One fit day holds only two occurrences: nothing is known yet.
    assert holdout(s.out, fit_days=1, granularity="action")["h_holdout"] == 0.0


@pytest.mark.parametrize(
    ("fit_days", "message"),
    [
        (0, "fit_days must be an integer of at least 1, not 0"),
        (4, "needs more than fit_days=4 active days; the actions cover 4"),
    ],
)
def test_a_holdout_without_later_days_is_refused(fit_days, message):
    s = Stream()
    for day in ("2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05"):
        s.day = day
        s.session("Compose", "To", "Send")
    with pytest.raises(ValueError, match=message):
        holdout(s.out, fit_days=fit_days, granularity="action")


def _brute_force(stream: list[Action]) -> set[tuple[tuple[str, ...], int]]:
    """Every window of every session counted directly: the definition, without pruning."""
    sessions: list[list[str]] = []
    previous = None
    for a in sorted(stream, key=lambda a: (a.t, a.evidence[0])):
        if previous is None or a.t - previous.t > 90:
            sessions.append([])
        if not sessions[-1] or sessions[-1][-1] != a.target:
            sessions[-1].append(a.target)
        previous = a
    found: dict[tuple[str, ...], int] = {}
    for n in range(3, 61):
        starts: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        for s, session in enumerate(sessions):
            for p in range(len(session) - n + 1):
                starts.setdefault(tuple(session[p : p + n]), []).append((s, p))
        for pattern, where in starts.items():
            count, free = 0, (-1, -1)
            for s, p in where:
                if (s, p) >= free:
                    count, free = count + 1, (s, p + n)
            specific = {t for t in pattern if is_specific(t, "action")}
            if count >= 3 and len(specific) >= 2:
                found[pattern] = count

    def inside(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
        return any(long[i : i + len(short)] == short for i in range(len(long) - len(short) + 1))

    return {
        (p, c)
        for p, c in found.items()
        if not any(len(q) > len(p) and d == c and inside(p, q) for q, d in found.items())
    }


def _random_stream(seed: int) -> Stream:
    rng = random.Random(seed)
    names = ["Inbox", "Archive", "Next", "Label", "OK", "Compose"][: rng.randint(3, 5)]
    s = Stream()
    for _ in range(rng.randint(10, 30)):
        s.t += rng.choice([30, 600])  # some sessions run on, some break
        for _ in range(rng.randint(1, 12)):
            s.act(rng.choice(names), dt=rng.choice([2.0, 2.0, 20.0, 20.0, 95.0]))
    return s


@pytest.mark.parametrize("seed", range(12))
def test_mining_agrees_with_counting_every_window(seed):
    s = _random_stream(seed)
    found = mine(s.out)
    assert {(tuple(_targets(r)), r.count) for r in found} == _brute_force(s.out)
    for routine in found:
        ends = [(o.start, o.end) for o in routine.occurrences]
        assert all(a[1] < b[0] for a, b in zip(ends, ends[1:], strict=False))


def test_the_random_streams_hold_routines_to_compare():
    counts = [len(mine(_random_stream(seed).out)) for seed in range(12)]
    assert sum(n > 0 for n in counts) >= 8


def test_the_miner_scale_benchmark_finds_the_planted_routines_and_ends_with_json(capsys):
    from perf import routines_scale

    assert routines_scale.main(["--days", "3", "--routines", "4", "--max-len", "5"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("routine miner on 3 SYNTHETIC days:")
    figures = json.loads(lines[-1])
    assert figures["days"] == 3 and figures["actions"] > 1500
    assert figures["routines"] >= 4  # each planted routine recurs far more than 3 times
    assert {"mine_s", "recurrence_s", "holdout_s", "report_s"} <= set(figures)


def _fit_and_test(*test_sessions: tuple[str, ...]) -> Stream:
    """A fit day with "Compose → To → Send" three times, then a test day of these sessions."""
    s = Stream()
    for _ in range(3):
        s.session("Compose", "To", "Send")
    s.day = "2026-03-03"
    for targets in test_sessions:
        s.session(*targets)
    return s


def test_the_holdout_covers_back_to_back_occurrences_but_not_overlapping_or_partial_ones():
    back_to_back = _fit_and_test(("Compose", "To", "Send", "Compose", "To", "Send"))
    figures = holdout(back_to_back.out, fit_days=1, granularity="action")
    assert figures["granularity"] == "action"
    assert (figures["test_steps"], figures["covered_steps"]) == (6, 6)
    # The first step alone, or the first two, is no occurrence of the routine.
    partial = _fit_and_test(("Compose", "Archive", "Label"), ("Compose", "To", "Label"))
    assert holdout(partial.out, fit_days=1, granularity="action")["covered_steps"] == 0


def test_the_holdout_counts_a_routine_that_overlaps_itself_once():
    s = Stream()
    for _ in range(3):
        s.session("Compose", "To", "Compose")
    s.day = "2026-03-03"
    s.session("Compose", "To", "Compose", "To", "Compose")
    figures = holdout(s.out, fit_days=1, granularity="action")
    assert figures["known_routines"] == 1
    assert (figures["test_steps"], figures["covered_steps"]) == (5, 3)


def test_the_holdout_mines_the_fit_days_with_the_parameters_given():
    s = Stream()
    for _ in range(2):
        s.session("Compose", "To", "Send", "Archive")
    s.day = "2026-03-03"
    s.session("Compose", "To", "Send", "Archive")

    def known(**kw: object) -> int:
        return holdout(s.out, fit_days=1, granularity="action", **kw)["known_routines"]  # type: ignore[arg-type]

    assert known() == 0  # two occurrences: below the default count
    assert known(min_count=2) == 1
    assert known(min_count=2, min_len=5) == 0
    assert known(min_count=2, max_len=2, min_len=2) == 3  # the three pairs, none longer
    assert known(min_count=2, gap_s=1.0) == 0  # every action its own session


def test_recurrence_takes_a_min_count_of_two_and_names_a_bad_one():
    s = Stream()
    for _ in range(2):
        s.session("Compose", "To", "Send")
    figures = recurrence(s.out, [], granularity="action", min_count=2)
    assert figures["granularity"] == "action"
    assert figures["raw_steps"] == 6
    with pytest.raises(ValueError, match="^min_count must be an integer of at least 2, not 1$"):
        recurrence(s.out, [], granularity="action", min_count=1)


def test_a_gap_under_a_second_is_a_valid_session_cut():
    s = Stream()
    for _ in range(3):
        s.session("Compose", "To", "Send")
    assert mine(s.out, gap_s=0.5) == []  # actions 5 s apart: every one its own session


def test_a_routine_id_hashes_non_ascii_names_as_written():
    steps = [
        Step("click", "Café", "AXButton", "Mail", None),
        Step("type", "Größe", None, "Mail", None),
    ]
    # Pinned: ids are stored with routines and must not change with the encoding.
    assert routine_id("action", steps) == "r-a7361803682d"


def test_actions_at_the_same_instant_are_ordered_by_their_first_event_id():
    s = Stream()
    for _ in range(3):
        s.session("Compose", "To", "Send")
    shuffled = []
    for a, b, c in zip(s.out[::3], s.out[1::3], s.out[2::3], strict=True):
        # "To" happens at the same instant as "Compose", and is given first.
        shuffled += [
            Action(a.t, a.day, b.op, b.target, b.role, b.app, b.url_template, b.frame, b.evidence),
            a,
            c,
        ]
    (routine,) = mine(shuffled)
    assert _targets(routine) == ["Compose", "To", "Send"]


def test_a_wrong_granularity_names_the_operations_it_expects():
    s = Stream()
    s.nav("shop.example/orders")
    with pytest.raises(ValueError, match=r"granularity \(expected click or type\)$"):
        mine(s.out)


def test_url_templates_of_wildcards_only_are_not_specific_targets():
    s = Stream()
    for _ in range(3):
        s.nav("shop.example/*", "shop.example/*/*", "docs.example/*")
    assert mine(s.out, granularity="url") == []


def test_an_occurrence_across_midnight_belongs_to_the_day_it_started():
    s = Stream()
    for day in ("2026-03-02", "2026-03-03", "2026-03-04"):
        s.day = day
        s.session("Compose")
        s.day = _next_day(day)  # the same session goes on past midnight
        s.act("To")
        s.act("Send")
    (routine,) = mine(s.out)
    assert [o.day for o in routine.occurrences] == ["2026-03-02", "2026-03-03", "2026-03-04"]


def _next_day(day: str) -> str:
    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()
