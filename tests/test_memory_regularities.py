"""Regularities: canonical matching, replay, activation and the lifecycle (ProactMem)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from time import tzset
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.engine import canonical as canonical_module
from memory.engine.canonical import canonical, same
from memory.engine.day import MINING_DAYS
from memory.engine.records import DayRecord, Observation, Predicate, Proposal
from memory.engine.refs import regularity_id
from memory.engine.regularities import (
    DORMANT_AFTER,
    MIN_CONFIDENCE,
    MIN_CONTRAST,
    MIN_FULFILLED,
    MIN_LIFT,
    RETIRE_AFTER_DAYS,
    WEAKENING_AFTER,
    MalformedProposal,
    RegularityState,
    Tally,
    advance,
    assess_day,
    day_index,
    family_key,
    in_window,
    matches,
    proposal_key,
    replay,
    run,
    validate_proposal,
    wilson_lower,
)

TZ = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 3, 2)
TRIGGER = Predicate(("app",), "Slack")
BEHAVIOR = Predicate(("site",), "github.com")
P = Proposal(TRIGGER, BEHAVIOR, (time(8), time(12)))


def at(d: date, hhmm: str) -> datetime:
    h, m = map(int, hhmm.split(":"))
    return datetime(d.year, d.month, d.day, h, m, tzinfo=TZ)


def rec(d: date, *items: tuple[str, str]) -> DayRecord:
    """A day: ("t", "09:00") is the trigger, ("b", ...) the behavior, ("o", ...) anything else."""
    what = {"t": (("app",), "Slack"), "b": (("site",), "github.com"), "o": (("app",), "Mail")}
    obs = [
        Observation(at(d, hhmm), what[kind][0], what[kind][1], f"{d.isoformat()}/{kind}{i}")
        for i, (kind, hhmm) in enumerate(items)
    ]
    return DayRecord(d, tuple(sorted(obs, key=lambda o: o.at)))


def days(n: int, start: date = MONDAY) -> list[date]:
    return [start + timedelta(days=i) for i in range(n)]


def f(d: date) -> DayRecord:  # a fulfilled day
    return rec(d, ("t", "09:00"), ("b", "10:00"))


def v(d: date) -> DayRecord:  # a violated day
    return rec(d, ("t", "09:00"), ("o", "10:00"))


def quiet(d: date) -> DayRecord:  # observed, not triggered
    return rec(d, ("o", "09:00"))


# --- canonical -------------------------------------------------------------------------------


def test_canonical_trims_and_casefolds_strings() -> None:
    assert same("  GitHub.COM ", "github.com")
    assert not same("github.com", "github.org")


def test_canonical_equates_an_int_and_its_float() -> None:
    assert same(1, 1.0)
    assert same(2**60, float(2**60))
    assert not same(1, 1.5)


def test_canonical_keeps_bools_apart_from_numbers_and_strings() -> None:
    assert not same(True, 1)
    assert not same(False, 0)
    assert not same("1", 1)
    assert same(True, True)


def test_canonical_nan_equals_nothing() -> None:
    nan = float("nan")
    assert canonical(nan) is None
    assert not same(nan, nan)


@pytest.fixture
def parsed_afresh() -> None:
    """canonical() remembers each string's form; a test of how strings are read parses its
    own, rather than reading forms an earlier test in this process left (mutation testing
    forks each run from one process that has already run every test)."""
    canonical_module._text.cache_clear()


@pytest.mark.usefixtures("parsed_afresh")
def test_canonical_compares_iso_times_to_the_minute() -> None:
    assert same("2026-03-02T09:00:59+01:00", "2026-03-02T08:00Z")
    assert not same("2026-03-02T09:00", "2026-03-02T09:00+01:00")  # naive never meets aware
    assert not same("2026-03-02", "2026-03-02T00:00")  # a date alone is not a time


@pytest.mark.usefixtures("parsed_afresh")
def test_canonical_time_is_the_utc_minute_or_the_naive_minute() -> None:
    assert canonical("2026-03-02T09:00:59.250+01:00") == (
        "time",
        datetime(2026, 3, 2, 8, 0, tzinfo=UTC),
    )
    naive = datetime(2026, 3, 2, 9, 0)  # noqa: DTZ001 - the naive time under test
    assert canonical(" 2026-03-02 09:00:59.250 ") == ("time", naive)
    assert same("2026-03-02T09:00:00.999", "2026-03-02T09:00")


@pytest.mark.usefixtures("parsed_afresh")
def test_canonical_text_that_is_not_an_iso_time_stays_text() -> None:
    assert canonical("2026-03-02T25:00") == ("str", "2026-03-02t25:00")  # no such hour
    assert canonical("Meeting 2026-03-02T09:00") == ("str", "meeting 2026-03-02t09:00")


@pytest.fixture
def machine_in_kolkata(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    tzset()
    yield
    monkeypatch.undo()
    tzset()


@pytest.mark.usefixtures("parsed_afresh", "machine_in_kolkata")
def test_canonical_time_is_written_in_utc_whatever_the_machines_zone() -> None:
    # A proposal key writes the instant as text, and a regularity id hashes that key: the
    # same time must give the same id on every machine.
    found = canonical("2026-03-02T09:00+01:00")
    assert found is not None
    assert str(found[1]) == "2026-03-02 08:00:00+00:00"


def test_canonical_integral_float_is_the_int_so_keys_write_it_alike() -> None:
    assert canonical(3.0) == ("num", 3)
    assert json.dumps(canonical(3.0)) == json.dumps(canonical(3)) == '["num", 3]'
    assert json.dumps(canonical(2.5)) == '["num", 2.5]'


# --- malformed proposals fail closed ---------------------------------------------------------


WINDOW = (time(8), time(9))
NO_ZONE = "window times are local wall-clock times and carry no time zone"
NOT_TIMES = "window start and end must be datetime.time values"
PAIR = "window must be a (start, end) pair of local times of day"
WEEKDAYS = "weekdays must be None (every day) or a non-empty frozenset"
DAY_NUMBERS = "weekdays must be integers 0 (Monday) to 6 (Sunday), got "
SCALAR = "behavior: value must be a scalar (str, number, bool or null), got "


@pytest.mark.parametrize(
    ("proposal", "reason"),
    [
        ("not a proposal", "a proposal must be a Proposal, not str"),
        (Proposal("app", BEHAVIOR, WINDOW), "trigger: must be a Predicate, not str"),  # type: ignore[arg-type]
        (
            Proposal(Predicate((), "x"), BEHAVIOR, WINDOW),
            "trigger: path must be a non-empty tuple of field names",
        ),
        (
            Proposal(TRIGGER, Predicate(("a", ""), "x"), WINDOW),
            "behavior: path ('a', '') has an empty or non-string field name",
        ),
        (Proposal(TRIGGER, Predicate(("a",), ["x"]), WINDOW), SCALAR + "list"),  # type: ignore[arg-type]
        (Proposal(TRIGGER, Predicate(("a",), {"k": 1}), WINDOW), SCALAR + "dict"),  # type: ignore[arg-type]
        (
            Proposal(TRIGGER, Predicate(("a",), float("inf")), WINDOW),
            "behavior: value inf is not a finite number",
        ),
        (
            Proposal(TRIGGER, Predicate(("app",), " slack "), WINDOW),
            "trigger and behavior are the same predicate; a day would fulfil itself",
        ),
        (
            Proposal(TRIGGER, BEHAVIOR, (time(9), time(9))),
            "window start 09:00:00 must be before its end 09:00:00",
        ),
        (
            Proposal(TRIGGER, BEHAVIOR, (time(22), time(2))),
            "window start 22:00:00 must be before its end 02:00:00",
        ),
        (Proposal(TRIGGER, BEHAVIOR, (time(8, tzinfo=TZ), time(9, tzinfo=TZ))), NO_ZONE),
        # One bad end is enough, and must give a reason rather than fail on the other's type.
        (Proposal(TRIGGER, BEHAVIOR, (time(8, tzinfo=TZ), time(9))), NO_ZONE),
        (Proposal(TRIGGER, BEHAVIOR, (time(8), time(9, tzinfo=TZ))), NO_ZONE),
        (Proposal(TRIGGER, BEHAVIOR, (time(8), "09:00")), NOT_TIMES),  # type: ignore[arg-type]
        (Proposal(TRIGGER, BEHAVIOR, ("08:00", time(9))), NOT_TIMES),  # type: ignore[arg-type]
        (Proposal(TRIGGER, BEHAVIOR, (time(8),)), PAIR),  # type: ignore[arg-type]
        (Proposal(TRIGGER, BEHAVIOR, [time(8), time(9)]), PAIR),  # type: ignore[arg-type]
        (Proposal(TRIGGER, BEHAVIOR, (time(8), time(9), time(10))), PAIR),  # type: ignore[arg-type]
        (Proposal(TRIGGER, BEHAVIOR, WINDOW, frozenset()), WEEKDAYS),
        (Proposal(TRIGGER, BEHAVIOR, WINDOW, {1, 2}), WEEKDAYS),  # type: ignore[arg-type]
        (Proposal(TRIGGER, BEHAVIOR, WINDOW, frozenset({7, 1})), DAY_NUMBERS + "['1', '7']"),
        (Proposal(TRIGGER, BEHAVIOR, WINDOW, frozenset({-1})), DAY_NUMBERS + "['-1']"),
        (Proposal(TRIGGER, BEHAVIOR, WINDOW, frozenset({True})), DAY_NUMBERS + "['True']"),
    ],
)
def test_malformed_proposal_is_rejected_with_a_reason(proposal: object, reason: str) -> None:
    assert validate_proposal(proposal) == reason


def test_well_formed_proposal_passes_validation() -> None:
    assert validate_proposal(P) is None
    whole_day = Proposal(TRIGGER, BEHAVIOR, (time(0), time(23, 59)), frozenset({0, 6}))
    assert validate_proposal(whole_day) is None


def test_malformed_proposal_never_activates() -> None:
    bad = Proposal(TRIGGER, BEHAVIOR, (time(12), time(8)))
    records = [f(d) for d in days(10)]
    r = replay(bad, records)
    assert r.rejected and not r.activated and r.assessments == ()
    state = run(bad, records)
    assert state.state == "candidate" and state.rejected and state.transitions == ()
    with pytest.raises(MalformedProposal, match="^window start 12:00:00 must be before its end"):
        assess_day(bad, records[0])


# --- assessing a day -------------------------------------------------------------------------


def test_day_is_fulfilled_by_behavior_after_the_first_trigger_and_cites_both_facts() -> None:
    a = assess_day(P, rec(MONDAY, ("t", "09:00"), ("t", "09:30"), ("b", "10:00")))
    assert a.outcome == "fulfilled"
    assert a.fact_ids == ("2026-03-02/t0", "2026-03-02/b2")


def test_behavior_at_the_same_moment_as_the_trigger_fulfils() -> None:
    assert assess_day(P, rec(MONDAY, ("t", "09:00"), ("b", "09:00"))).outcome == "fulfilled"


def test_behavior_only_before_the_trigger_is_a_violation() -> None:
    a = assess_day(P, rec(MONDAY, ("b", "08:30"), ("t", "09:00")))
    assert a.outcome == "violated"
    assert a.fact_ids == ("2026-03-02/t1",)
    assert a.behavior_in_window  # it still counts towards base


def test_behavior_after_the_window_closes_is_a_violation() -> None:
    assert assess_day(P, rec(MONDAY, ("t", "09:00"), ("b", "12:00"))).outcome == "violated"


def test_trigger_outside_the_window_does_not_make_a_day_eligible() -> None:
    # Named outcome: observed but not triggered inside the window.
    assert assess_day(P, rec(MONDAY, ("t", "07:59"), ("b", "09:00"))).outcome == "not_triggered"
    assert assess_day(P, rec(MONDAY, ("t", "12:00"))).outcome == "not_triggered"
    assert assess_day(P, rec(MONDAY, ("t", "08:00"), ("b", "11:59"))).outcome == "fulfilled"


def test_day_without_observations_is_censored() -> None:
    assert assess_day(P, DayRecord(MONDAY)).outcome == "censored"


def test_day_outside_the_weekday_set_is_inapplicable_observed_or_not() -> None:
    weekdays_only = Proposal(TRIGGER, BEHAVIOR, P.window, frozenset(range(5)))
    saturday = MONDAY + timedelta(days=5)
    assert assess_day(weekdays_only, f(saturday)).outcome == "inapplicable"
    assert assess_day(weekdays_only, DayRecord(saturday)).outcome == "inapplicable"
    assert assess_day(weekdays_only, f(MONDAY)).outcome == "fulfilled"


def test_matching_compares_canonical_values_at_the_equal_path() -> None:
    d = MONDAY
    obs = (
        Observation(at(d, "09:00"), ("app",), "  SLACK ", "t"),
        Observation(at(d, "10:00"), ("site",), "GitHub.com", "b"),
    )
    assert assess_day(P, DayRecord(d, obs)).outcome == "fulfilled"
    other_path = (Observation(at(d, "09:00"), ("window", "app"), "Slack", "t"),)
    assert assess_day(P, DayRecord(d, other_path)).outcome == "not_triggered"
    numeric = Proposal(Predicate(("n",), 1), Predicate(("m",), 2.0), P.window)
    nums = (
        Observation(at(d, "09:00"), ("n",), 1.0, "t"),
        Observation(at(d, "10:00"), ("m",), 2, "b"),
    )
    assert assess_day(numeric, DayRecord(d, nums)).outcome == "fulfilled"
    bools = (Observation(at(d, "09:00"), ("n",), True, "t"),)
    assert assess_day(numeric, DayRecord(d, bools)).outcome == "not_triggered"


def test_first_trigger_is_the_earliest_whatever_the_record_order() -> None:
    d = MONDAY
    obs = (
        Observation(at(d, "10:30"), ("app",), "Slack", "late"),
        Observation(at(d, "10:00"), ("site",), "github.com", "b"),
        Observation(at(d, "09:00"), ("app",), "Slack", "early"),
    )
    assert assess_day(P, DayRecord(d, obs)).fact_ids == ("early", "b")


# --- replay ----------------------------------------------------------------------------------


def test_replay_counts_fulfilled_and_violated_days_and_their_confidence() -> None:
    d = days(6)
    r = replay(P, [f(d[0]), v(d[1]), f(d[2]), DayRecord(d[3]), quiet(d[4]), f(d[5])])
    assert [a.outcome for a in r.assessments] == [
        "fulfilled",
        "violated",
        "fulfilled",
        "censored",
        "not_triggered",
        "fulfilled",
    ]
    assert (r.n_f, r.n_v) == (3, 1)
    assert r.confidence == 0.75


def test_replay_counts_each_date_once_and_the_last_record_wins() -> None:
    d = days(2)
    r = replay(P, [v(d[1]), f(d[0]), v(d[0]), f(d[0])])
    assert [(a.day, a.outcome) for a in r.assessments] == [(d[0], "fulfilled"), (d[1], "violated")]
    assert (r.n_f, r.n_v) == (1, 1)


def test_replay_with_no_eligible_day_has_zero_confidence_base_and_lift() -> None:
    r = replay(P, [DayRecord(MONDAY), quiet(MONDAY + timedelta(days=1))])
    assert (r.n_f, r.n_v, r.confidence, r.base, r.lift) == (0, 0, 0.0, 0.0, 0.0)
    assert replay(P, []).base == 0.0


def test_base_counts_observable_applicable_days_with_the_behavior_in_the_window() -> None:
    weekdays_only = Proposal(TRIGGER, BEHAVIOR, P.window, frozenset(range(5)))
    d = days(7)  # Monday .. Sunday
    records = [
        f(d[0]),  # behavior in window
        v(d[1]),  # no behavior
        rec(d[2], ("b", "09:00")),  # not triggered, behavior in window
        rec(d[3], ("b", "13:00")),  # not triggered, behavior outside the window
        DayRecord(d[4]),  # censored: not in the denominator
        f(d[5]),  # Saturday: inapplicable, not in the denominator
        f(d[6]),  # Sunday: inapplicable
    ]
    r = replay(weekdays_only, records)
    assert (r.tally.behavior_days, r.tally.observable) == (2, 4)
    assert r.base == 0.5
    assert r.confidence == 0.5
    assert r.lift == 1.0


def contrast(start: date = MONDAY) -> list[DayRecord]:
    """Two observed days without the trigger (nor the behavior): what activation contrasts."""
    return [quiet(start), quiet(start + timedelta(days=1))]


def test_activation_needs_three_fulfilled_days_and_two_contrast_days() -> None:
    assert (MIN_FULFILLED, MIN_CONTRAST) == (3, 2)
    d = days(5)
    assert not replay(P, [*contrast(d[0]), f(d[2]), f(d[3])]).activated
    assert replay(P, [*contrast(d[0]), f(d[2]), f(d[3]), f(d[4])]).activated
    # Without days where the trigger did not happen, nothing says the trigger matters.
    assert not replay(P, [f(x) for x in d]).activated
    assert not replay(P, [quiet(d[0]), *(f(x) for x in d[1:])]).activated


def test_activation_holds_at_exactly_half_confidence_and_fails_just_below() -> None:
    assert MIN_CONFIDENCE == 0.5
    d = days(9)
    half = [*contrast(d[0]), f(d[2]), v(d[3]), f(d[4]), v(d[5]), f(d[6]), v(d[7])]
    r = replay(P, half)
    assert r.confidence == 0.5 and r.lift == pytest.approx(4 / 3)
    assert r.activated
    below = replay(P, [*half, v(d[8])])
    assert below.confidence < 0.5 and not below.activated


def test_activation_needs_a_lift_of_at_least_1_2() -> None:
    assert MIN_LIFT == 1.2
    # Behavior on every triggered day and on no contrast day: lift = observable / behavior days.
    at_margin = Tally(n_f=10, n_v=0, observable=12, behavior_days=10)
    assert at_margin.lift == pytest.approx(1.2) and at_margin.activated
    below = Tally(n_f=11, n_v=0, observable=13, behavior_days=11)
    assert below.lift < 1.2 and not below.activated


def test_a_behavior_as_common_without_the_trigger_never_activates() -> None:
    d = days(10)
    # The behavior happens on the untriggered days too: the trigger predicts nothing.
    records = [*(rec(x, ("b", "09:00")) for x in d[:3]), *(f(x) for x in d[3:6]), v(d[6])]
    r = replay(P, records)
    assert r.tally.contrast == 3 and r.tally.untriggered_base == 1.0
    assert r.tally.margin < 0 and not r.activated


def test_an_always_true_behavior_becomes_a_habit_never_an_alert() -> None:
    d = days(10)
    # The behavior happens every day; the trigger only on some: a habit, base 1.
    records = [rec(x, ("b", "09:00")) if i % 3 == 0 else f(x) for i, x in enumerate(d)]
    s = run(P, records)
    assert s.state == "habit" and s.tally.base == 1.0 and s.tally.lift == 1.0
    assert "a habit, never a deviation alert" in s.transitions[-1].reason
    # A habit never weakens: violations change nothing but its counts.
    s = run(P, [v(d[-1] + timedelta(days=k)) for k in range(1, 5)], s)
    assert s.state == "candidate"  # no longer on nearly every day: a candidate again
    assert s.transitions[-1].reason == "the behavior no longer happens on nearly every day"


def test_the_wilson_bound_ranks_by_evidence_not_only_by_rate() -> None:
    assert wilson_lower(3, 3) < wilson_lower(9, 9) < 1.0
    assert wilson_lower(0, 0) == 0.0
    assert wilson_lower(5, 10) == pytest.approx(0.2366, abs=1e-4)
    few = Tally(n_f=3, n_v=0, observable=5, behavior_days=3)
    many = Tally(n_f=9, n_v=0, observable=11, behavior_days=9)
    assert 0 < few.margin < many.margin


# --- lifecycle -------------------------------------------------------------------------------


def active_after_three(start: date = MONDAY) -> tuple[RegularityState, list[date]]:
    d = days(40, start)
    s = run(P, [*contrast(d[0]), f(d[2]), f(d[3]), f(d[4])])
    assert s.state == "active"
    return s, d[5:]


def test_run_activates_on_the_first_day_the_rule_holds_and_cites_that_day() -> None:
    d = days(6)
    s = run(P, [*contrast(d[0]), f(d[2]), f(d[3]), f(d[4]), f(d[5])])
    assert s.state == "active"
    [t] = s.transitions
    assert (t.day, t.from_state, t.to_state) == (d[4], "candidate", "active")
    assert t.fact_ids == (f"{d[4].isoformat()}/t0", f"{d[4].isoformat()}/b1")
    assert "fulfilled on 3 of 3 triggered days" in t.reason
    assert "behavior on 0 of 2 days without the trigger" in t.reason


def test_candidate_that_fails_replay_stays_a_candidate() -> None:
    d = days(6)
    s = run(P, [*contrast(d[0]), f(d[2]), v(d[3]), v(d[4]), f(d[5])])
    assert s.state == "candidate" and s.transitions == ()


def test_confidence_after_activation_is_smoothed_with_one_prior_each_way() -> None:
    s, rest = active_after_three()
    assert s.confidence == 4 / 5  # (3 + 1) / (3 + 0 + 2)
    s = run(P, [v(rest[0]), f(rest[1])], s)
    assert (s.n_f, s.n_v) == (4, 1)
    assert s.confidence == 5 / 7


def test_after_activation_untriggered_days_count_only_towards_the_base_rate() -> None:
    s, rest = active_after_three()
    s = run(P, [v(rest[0])], s)
    censored = run(P, [DayRecord(rest[1])], s)
    assert censored == RegularityState(
        s.state,
        s.tally,
        s.violation_run,
        s.violation_facts,
        s.transitions,
        rest[1],
        trial_days=s.trial_days,
    )
    after = run(P, [quiet(rest[2]), quiet(rest[3])], censored)
    assert after.last_day == rest[3] and after.state == "active"
    assert (after.n_f, after.n_v, after.violation_run) == (s.n_f, s.n_v, s.violation_run)
    assert after.tally.contrast == s.tally.contrast + 2
    assert after.tally.observable == s.tally.observable + 2
    # ... so the violation run continues across them.
    assert run(P, [v(rest[4])], after).state == "weakening"


def test_an_active_regularity_whose_trigger_stops_predicting_is_a_candidate_again() -> None:
    s, rest = active_after_three()
    # The behavior now happens on the days without the trigger too: the trigger tells nothing.
    s = run(P, [rec(x, ("b", "09:00")) for x in rest[:6]], s)
    assert s.state == "candidate"
    t = s.transitions[-1]
    assert (t.from_state, t.to_state) == ("active", "candidate")
    assert "the trigger no longer predicts the behavior" in t.reason


def behavior_only(d: date) -> DayRecord:  # the behavior in the window, no trigger
    return rec(d, ("b", "09:30"))


def test_an_active_regularity_must_keep_its_lift_above_the_activation_margin() -> None:
    s, rest = active_after_three()
    s = run(P, [f(x) for x in rest[:5]], s)  # 8 f over 10 days: lift 1.25
    # Each day with the behavior but not the trigger raises the base rate; the margin over
    # those days stays positive (Wilson 8/8 = 0.68 > 3/5), so the lift alone decides.
    s = run(P, [behavior_only(rest[5]), behavior_only(rest[6])], s)
    assert s.state == "active" and s.tally.lift == 1.2  # exactly the margin: still active
    s = run(P, [behavior_only(rest[7])], s)
    assert s.tally.margin > 0 and s.tally.lift < 1.2
    t = s.transitions[-1]
    assert s.state == "candidate" and (t.from_state, t.to_state) == ("active", "candidate")
    assert "lift 1.18" in t.reason


def test_an_active_regularity_whose_behavior_turns_daily_ends_a_habit() -> None:
    s, rest = active_after_three()
    s = run(P, [f(x) for x in rest[:20]], s)  # the behavior on 23 of 25 days
    assert s.state == "habit" and s.tally.base >= 0.9
    # On the way its lift fell below the margin (a candidate), then the behavior was daily.
    path = [(t.from_state, t.to_state) for t in s.transitions]
    assert path == [("candidate", "active"), ("active", "candidate"), ("candidate", "habit")]
    assert "a habit, never a deviation alert" in s.transitions[-1].reason


def test_two_consecutive_violations_weaken_an_active_regularity() -> None:
    assert WEAKENING_AFTER == 2
    s, rest = active_after_three()
    s = run(P, [v(rest[0])], s)
    assert s.state == "active"
    s = run(P, [v(rest[1])], s)
    assert s.state == "weakening"
    t = s.transitions[-1]
    assert (t.day, t.from_state, t.to_state) == (rest[1], "active", "weakening")
    assert t.fact_ids == (f"{rest[0].isoformat()}/t0", f"{rest[1].isoformat()}/t0")


def test_a_fulfilment_between_violations_breaks_the_run() -> None:
    s, rest = active_after_three()
    s = run(P, [v(rest[0]), f(rest[1]), v(rest[2])], s)
    assert s.state == "active" and s.violation_run == 1


def test_four_consecutive_violations_make_it_dormant() -> None:
    assert DORMANT_AFTER == 4
    s, rest = active_after_three()
    s = run(P, [v(rest[0]), v(rest[1]), v(rest[2])], s)
    assert s.state == "weakening"
    s = run(P, [v(rest[3])], s)
    assert s.state == "dormant"
    t = s.transitions[-1]
    assert (t.day, t.from_state, t.to_state) == (rest[3], "weakening", "dormant")
    assert len(t.fact_ids) == 4
    assert (s.n_f, s.n_v, s.violation_run) == (0, 0, 0)  # the next replay starts empty


def test_a_fulfilment_returns_a_weakening_regularity_to_active_at_half_confidence() -> None:
    s, rest = active_after_three()
    s = run(P, [v(rest[0]), v(rest[1]), v(rest[2])], s)  # 3 f, 3 v: smoothed 4/8
    assert s.state == "weakening"
    s = run(P, [f(rest[3])], s)  # 4 f, 3 v: smoothed 5/9 >= 0.5
    assert s.state == "active" and s.violation_run == 0
    t = s.transitions[-1]
    assert (t.from_state, t.to_state, t.day) == ("weakening", "active", rest[3])


def test_a_fulfilment_below_half_confidence_keeps_it_weakening_but_ends_the_run() -> None:
    d = days(30)
    # Activates on day 7 (3 f, 2 v: confidence 0.6, lift 0.6 / (3/7) = 1.4).
    s = run(P, [*contrast(d[0]), f(d[2]), v(d[3]), f(d[4]), v(d[5]), f(d[6])])
    assert s.state == "active" and s.transitions[-1].day == d[6]
    s = run(P, [v(d[7]), v(d[8]), v(d[9])], s)  # 3 f, 5 v
    assert s.state == "weakening"
    s = run(P, [f(d[10])], s)  # 4 f, 5 v: smoothed 5/11 < 0.5
    assert s.state == "weakening" and s.violation_run == 0
    # Two quiet days keep the trigger informative (4 f, 8 v over 16 days: lift 1.33).
    s = run(P, [quiet(d[11]), quiet(d[12]), v(d[13]), v(d[14]), v(d[15])], s)
    assert s.state == "weakening"  # only 3 in the new run
    s = run(P, [v(d[16])], s)
    assert s.state == "dormant"


def test_dormant_becomes_a_candidate_on_the_next_eligible_day_and_must_replay_again() -> None:
    s, rest = active_after_three()
    s = run(P, [v(rest[0]), v(rest[1]), v(rest[2]), v(rest[3])], s)
    assert s.state == "dormant"
    s = run(P, [DayRecord(rest[4]), quiet(rest[5])], s)
    assert s.state == "dormant"  # censored and untriggered days do not wake it
    s = run(P, [f(rest[6])], s)
    assert s.state == "candidate"
    t = s.transitions[-1]
    assert (t.day, t.from_state, t.to_state) == (rest[6], "dormant", "candidate")
    # The replay counts only days after it went dormant: the three earlier fulfilments do not.
    assert (s.n_f, s.n_v, s.tally.observable) == (1, 0, 2)
    s = run(P, [f(rest[7])], s)
    assert s.state == "candidate"
    s = run(P, [quiet(rest[8]), f(rest[9])], s)  # the second contrast day, the third fulfilment
    assert s.state == "active"
    assert s.transitions[-1].day == rest[9]


def test_a_day_already_processed_is_ignored() -> None:
    s, rest = active_after_three()
    s = run(P, [v(rest[0])], s)
    assert advance(s, assess_day(P, v(rest[0]))) == s
    assert run(P, [v(rest[0]), f(MONDAY)], s) == s


def test_proposal_key_is_equal_for_canonically_equal_proposals() -> None:
    same_p = Proposal(Predicate(("app",), " SLACK"), BEHAVIOR, P.window)
    assert proposal_key(same_p) == proposal_key(P)
    assert proposal_key(Proposal(TRIGGER, BEHAVIOR, P.window, frozenset({1}))) != proposal_key(P)


# --- resumability ----------------------------------------------------------------------------

KINDS = ["f", "v", "censored", "quiet", "behavior_only", "late_behavior"]


def make(kind: str, d: date) -> DayRecord:
    if kind == "f":
        return f(d)
    if kind == "v":
        return v(d)
    if kind == "censored":
        return DayRecord(d)
    if kind == "quiet":
        return quiet(d)
    if kind == "behavior_only":
        return rec(d, ("b", "09:00"))
    return rec(d, ("t", "09:00"), ("b", "12:30"))


@st.composite
def streams(draw: st.DrawFn) -> list[DayRecord]:
    kinds = draw(st.lists(st.sampled_from(KINDS), max_size=60))
    gaps = draw(st.lists(st.integers(1, 3), min_size=len(kinds), max_size=len(kinds)))
    out, d = [], MONDAY
    for kind, gap in zip(kinds, gaps, strict=True):
        out.append(make(kind, d))
        d += timedelta(days=gap)
    return out


@settings(max_examples=300, deadline=None)
@given(
    records=streams(),
    cut=st.integers(0, 60),
    weekdays=st.sampled_from([None, frozenset(range(5)), frozenset({0, 2, 4, 6})]),
)
def test_processing_in_one_run_or_resumed_at_any_cut_gives_the_same_state(
    records: list[DayRecord], cut: int, weekdays: frozenset[int] | None
) -> None:
    p = Proposal(TRIGGER, BEHAVIOR, P.window, weekdays)
    cut = min(cut, len(records))
    whole = run(p, records)
    resumed = run(p, records[cut:], run(p, records[:cut]))
    assert resumed == whole
    one_by_one = RegularityState()
    for r in records:
        one_by_one = run(p, [r], one_by_one)
    assert one_by_one == whole
    assert run(p, records, whole) == whole  # processing the same days again changes nothing


def test_proposal_key_is_the_canonical_json_of_what_the_proposal_matches() -> None:
    assert proposal_key(P) == (
        '[[["app"],["str","slack"]],[["site"],["str","github.com"]],"08:00:00","12:00:00",null]'
    )
    weekly = Proposal(TRIGGER, BEHAVIOR, P.window, frozenset({4, 0}))
    assert proposal_key(weekly).endswith('"08:00:00","12:00:00",[0,4]]')


def test_family_key_leaves_the_window_out_and_keeps_trigger_behavior_and_weekdays() -> None:
    assert family_key(P) == '[[["app"],["str","slack"]],[["site"],["str","github.com"]],null]'
    moved = Proposal(Predicate(("app",), " SLACK"), BEHAVIOR, (time(7, 30), time(11)))
    assert family_key(moved) == family_key(P) and proposal_key(moved) != proposal_key(P)
    other_trigger = Proposal(Predicate(("app",), "Mail"), BEHAVIOR, P.window)
    other_behavior = Proposal(TRIGGER, Predicate(("site",), "gitlab.com"), P.window)
    weekdays = Proposal(TRIGGER, BEHAVIOR, P.window, frozenset({0}))
    keys = {family_key(p) for p in (P, other_trigger, other_behavior, weekdays)}
    assert len(keys) == 4


def test_a_time_valued_predicate_has_a_key_naming_its_utc_minute() -> None:
    due = Proposal(Predicate(("due",), "2026-03-02T09:00:30+01:00"), BEHAVIOR, P.window)
    same_minute = Proposal(Predicate(("due",), "2026-03-02 08:00Z"), BEHAVIOR, P.window)
    assert proposal_key(due) == proposal_key(same_minute)
    assert family_key(due).startswith('[[["due"],["time","2026-03-02 08:00:00+00:00"]]')
    assert regularity_id(due) == regularity_id(same_minute) == "reg:0bbc342e7ca9"


def test_regularity_ids_are_pinned_and_keep_non_ascii_text_as_it_is() -> None:
    # Ids are stored and cited; a change in the key's text would orphan every stored one.
    assert regularity_id(P) == "reg:c36ce928c7a7"
    kitchen = Proposal(
        Predicate(("room",), "Küche"),
        Predicate(("event",), "Tür offen"),
        (time(7), time(9, 30)),
        frozenset({4, 0}),
    )
    assert proposal_key(kitchen) == (
        '[[["room"],["str","küche"]],[["event"],["str","tür offen"]],"07:00:00","09:30:00",[0,4]]'
    )
    assert regularity_id(kitchen) == "reg:ec9bcbaca601"


def test_a_fulfilment_at_exactly_half_smoothed_confidence_returns_weakening_to_active() -> None:
    d = days(12)
    # Active on day 7 at 3 f, 3 v over 8 days (confidence 0.5, lift 0.5 / (3/8) = 1.33).
    s = run(P, [*contrast(d[0]), f(d[2]), v(d[3]), f(d[4]), v(d[5]), v(d[6]), f(d[7])])
    assert s.state == "active" and s.transitions[-1].day == d[7]
    assert s.transitions[-1].reason == (
        "replay passed: fulfilled on 3 of 6 triggered days (confidence 0.50), lift 1.33, "
        "behavior on 0 of 2 days without the trigger"
    )
    s = run(P, [v(d[8]), v(d[9])], s)  # 3 f, 5 v
    assert s.state == "weakening"
    s = run(P, [f(d[10])], s)  # 4 f, 5 v: smoothed 5/11 < 0.5
    assert s.state == "weakening" and s.violation_run == 0
    s = run(P, [f(d[11])], s)  # 5 f, 5 v: smoothed 6/12, exactly the recovery threshold
    assert s.confidence == 0.5 and s.tally.lift == 1.2
    assert s.state == "active"
    t = s.transitions[-1]
    assert (t.day, t.from_state, t.to_state) == (d[11], "weakening", "active")
    assert t.reason == "fulfilled with smoothed confidence >= 0.5"
    assert t.fact_ids == (f"{d[11].isoformat()}/t0", f"{d[11].isoformat()}/b1")


def test_a_fulfilment_clears_the_violation_facts_so_a_later_run_cites_only_its_own() -> None:
    s, rest = active_after_three()
    s = run(P, [v(rest[0])], s)
    assert s.violation_facts == (f"{rest[0].isoformat()}/t0",)
    s = run(P, [f(rest[1])], s)
    assert (s.violation_run, s.violation_facts) == (0, ())
    s = run(P, [v(rest[2]), v(rest[3])], s)
    assert s.state == "weakening"
    assert s.transitions[-1].fact_ids == (f"{rest[2].isoformat()}/t0", f"{rest[3].isoformat()}/t0")


def test_a_regularity_back_from_dormant_starts_a_fresh_violation_run() -> None:
    s, rest = active_after_three()
    s = run(P, [v(x) for x in rest[:4]], s)
    assert s.state == "dormant"
    assert (s.violation_run, s.violation_facts, s.tally) == (0, (), Tally())
    # dormant -> candidate -> active, then violated: the run counts from this activation.
    s = run(P, [f(rest[4]), quiet(rest[5]), quiet(rest[6]), f(rest[7]), f(rest[8])], s)
    path = [(t.from_state, t.to_state) for t in s.transitions]
    assert path[-2:] == [("dormant", "candidate"), ("candidate", "active")]
    s = run(P, [v(rest[9])], s)
    assert (s.state, s.violation_run) == ("active", 1)
    assert s.violation_facts == (f"{rest[9].isoformat()}/t0",)
    s = run(P, [v(rest[10])], s)
    assert s.state == "weakening"
    assert s.transitions[-1].fact_ids == (f"{rest[9].isoformat()}/t0", f"{rest[10].isoformat()}/t0")
    assert s.transitions[-1].reason == "2 consecutive violations"


def test_matching_needs_the_same_path_and_the_same_canonical_value() -> None:
    o = Observation(at(MONDAY, "09:00"), ("app",), " SLACK", "f1")
    assert matches(TRIGGER, o)
    assert not matches(Predicate(("site",), "Slack"), o)  # same value, other path
    assert not matches(Predicate(("app",), "Mail"), o)  # same path, other value
    assert not matches(Predicate(("app",), None), o)


def test_the_window_is_half_open_and_of_the_day_asked_about() -> None:
    def obs(d: date, hhmm: str) -> Observation:
        return Observation(at(d, hhmm), ("app",), "Slack", "f1")

    assert in_window(P, MONDAY, obs(MONDAY, "08:00"))
    assert in_window(P, MONDAY, obs(MONDAY, "11:59"))
    assert not in_window(P, MONDAY, obs(MONDAY, "12:00"))
    assert not in_window(P, MONDAY, obs(MONDAY, "07:59"))
    assert not in_window(P, MONDAY, obs(MONDAY + timedelta(days=1), "09:00"))


def test_a_rejected_replay_counts_nothing() -> None:
    r = replay(Proposal(TRIGGER, BEHAVIOR, (time(12), time(8))), [f(MONDAY)])
    assert (r.n_f, r.n_v, r.confidence, r.base, r.lift) == (0, 0, 0.0, 0.0, 0.0)
    assert r.tally == Tally()


def test_a_dormant_regularity_wakes_with_a_named_reason() -> None:
    s, rest = active_after_three()
    s = run(P, [v(x) for x in rest[:4]], s)
    s = run(P, [v(rest[4])], s)
    t = s.transitions[-1]
    assert (s.state, t.from_state, t.to_state) == ("candidate", "dormant", "candidate")
    assert t.reason == "first eligible day after going dormant: replay again"
    assert t.fact_ids == (f"{rest[4].isoformat()}/t0",)


def test_a_weakening_regularity_whose_trigger_stops_predicting_is_a_candidate() -> None:
    s, rest = active_after_three()
    s = run(P, [v(rest[0]), v(rest[1])], s)
    assert s.state == "weakening" and s.violation_run == 2
    s = run(P, [behavior_only(x) for x in rest[2:8]], s)
    t = s.transitions[-1]
    assert (s.state, t.from_state, t.to_state) == ("candidate", "weakening", "candidate")
    assert t.reason.startswith("the trigger no longer predicts the behavior: lift ")
    assert (s.violation_run, s.violation_facts) == (0, ())


def test_an_active_regularity_that_stops_predicting_forgets_its_violation_run() -> None:
    s, rest = active_after_three()
    s = run(P, [v(rest[0])], s)
    assert s.violation_run == 1
    s = run(P, [behavior_only(x) for x in rest[1:8]], s)
    assert s.state == "candidate" and (s.violation_run, s.violation_facts) == (0, ())
    # 3 f, 1 v; the behavior on 1 of 3 untriggered days: lift 1.31 but no margin.
    t = s.transitions[-1]
    assert (t.day, t.from_state) == (rest[1], "active")
    assert t.reason == (
        "the trigger no longer predicts the behavior: lift 1.31, behavior on 1 of 3 days "
        "without the trigger"
    )


def test_a_resumed_active_state_whose_behavior_is_daily_becomes_a_habit_at_once() -> None:
    # A state resumed from storage may already hold a habit's counts; the next day says so.
    daily = Tally(n_f=8, n_v=1, observable=10, behavior_days=9, untriggered_behavior=1)
    resumed = RegularityState(
        "active", daily, violation_run=1, violation_facts=("x/t0",), last_day=MONDAY
    )
    day = MONDAY + timedelta(days=1)
    s = advance(resumed, assess_day(P, f(day)))
    assert (s.state, s.violation_run, s.violation_facts) == ("habit", 0, ())
    t = s.transitions[-1]
    assert (t.day, t.from_state, t.to_state) == (day, "active", "habit")
    assert t.reason == (
        "the behavior happened on 10 of 11 days whatever the trigger: a habit, never a "
        "deviation alert"
    )
    assert t.fact_ids == (f"{day.isoformat()}/t0", f"{day.isoformat()}/b1")


def test_four_violations_name_the_reason_for_going_dormant() -> None:
    s, rest = active_after_three()
    s = run(P, [v(x) for x in rest[:4]], s)
    assert (s.state, s.transitions[-1].reason) == ("dormant", "4 consecutive violations")


def test_a_recovery_that_leaves_the_trigger_uninformative_ends_a_candidate() -> None:
    # Resumed weakening, behavior common on untriggered days: the fulfilment lifts the smoothed
    # confidence to 6/11 (active again) but the lift is 0.68, so it is a candidate that day.
    tally = Tally(n_f=4, n_v=4, observable=10, behavior_days=8, untriggered_behavior=4)
    resumed = RegularityState("weakening", tally, violation_run=1, last_day=MONDAY)
    day = MONDAY + timedelta(days=1)
    s = advance(resumed, assess_day(P, f(day)))
    path = [(t.day, t.from_state, t.to_state) for t in s.transitions]
    assert path == [(day, "weakening", "active"), (day, "active", "candidate")]
    assert s.state == "candidate"


def test_an_untriggered_day_cites_no_facts() -> None:
    a = assess_day(P, rec(MONDAY, ("b", "09:00")))
    assert (a.outcome, a.fact_ids, a.behavior_in_window) == ("not_triggered", (), True)


def test_observations_of_another_date_are_left_out_of_the_day_wherever_they_are() -> None:
    sunday = Observation(at(MONDAY - timedelta(days=1), "09:00"), ("app",), "Slack", "s1")
    monday = rec(MONDAY, ("t", "09:00"), ("b", "10:00"))
    record = DayRecord(MONDAY, (sunday, *monday.observations))
    assert assess_day(P, record).fact_ids == ("2026-03-02/t0", "2026-03-02/b1")
    assert [o.fact_id for o in day_index(record)[(("app",), ("str", "slack"))]] == ["2026-03-02/t0"]


def test_a_days_index_is_built_once_and_shared_by_every_proposal() -> None:
    record = f(MONDAY)
    first = day_index(record)
    assert day_index(record) is first
    assert day_index(f(MONDAY)) is not first  # an equal record of its own is indexed anew


def test_the_wilson_bound_of_one_trial() -> None:
    assert wilson_lower(1, 1) == pytest.approx(0.2065, abs=1e-4)
    assert wilson_lower(0, 0) == 0.0 and wilson_lower(0, -1) == 0.0


def test_a_violation_that_shows_a_habit_ends_the_violation_run() -> None:
    # The behavior came before the trigger: a violation, yet on 10 of 11 days: a habit.
    daily = Tally(n_f=8, n_v=1, observable=10, behavior_days=9, untriggered_behavior=1)
    resumed = RegularityState("active", daily, last_day=MONDAY)
    day = MONDAY + timedelta(days=1)
    a = assess_day(P, rec(day, ("b", "08:30"), ("t", "09:00")))
    assert (a.outcome, a.behavior_in_window) == ("violated", True)
    s = advance(resumed, a)
    assert (s.state, s.violation_run, s.violation_facts) == ("habit", 0, ())
    assert s.transitions[-1].fact_ids == (f"{day.isoformat()}/t1",)


# --- retirement -------------------------------------------------------------------------------


def test_a_candidate_not_activated_28_observable_days_after_its_first_fulfilment_retires() -> None:
    assert RETIRE_AFTER_DAYS == MINING_DAYS == 28  # the trial is the miner's window
    d = days(40)
    # Fulfilled once, then violated: never activates, and is no habit.
    trial = [f(d[0]), *(v(x) for x in d[1:27])]
    assert run(P, trial).state == "candidate" and run(P, trial).trial_days == 27
    s = run(P, [*trial, v(d[27])])
    assert s.state == "retired" and s.trial_days == 28
    [t] = s.transitions
    assert (t.day, t.from_state, t.to_state) == (d[27], "candidate", "retired")
    assert "not activated 28 observable days after it was first fulfilled" in t.reason
    # Retired, it changes no more, whatever comes.
    assert run(P, [f(x) for x in d[28:]], s) == s


def test_the_trial_starts_at_the_first_fulfilled_day_and_counts_observable_days_only() -> None:
    d = days(80)
    # Forty violated days before the routine began are no trial.
    before = run(P, [v(x) for x in d[:40]])
    assert before.state == "candidate" and before.trial_days == 0
    # Days without data (censored) in the trial do not count.
    s = run(P, [f(d[40]), *(DayRecord(x) for x in d[41:61]), *(v(x) for x in d[61:70])], before)
    assert s.state == "candidate" and s.trial_days == 10


def test_a_habit_is_never_on_trial_and_an_active_one_is_tried_afresh_once_demoted() -> None:
    d = days(60)
    habit = run(P, [f(x) for x in d[:40]])
    assert habit.state == "habit" and habit.trial_days == 0
    s, rest = active_after_three()
    # Active, then the behavior comes without the trigger too: back to a candidate, its trial
    # counted from that day on.
    both = [rec(x, ("b", "10:00")) for x in rest[:6]]
    demoted = run(P, both, s)
    assert demoted.state == "candidate"
    assert demoted.trial_days < 6
