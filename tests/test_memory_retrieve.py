"""Retrieval: which regularities bear on now, in what occurrence state, in what order."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.engine.records import DayRecord, Observation, Predicate, Proposal
from memory.engine.regularities import RegularityState, Tally, proposal_key
from memory.engine.retrieve import (
    RETRIEVAL_GRACE,
    RETRIEVAL_LEAD,
    RETRIEVED,
    TOP_K,
    in_reach,
    occurrence,
    retrieve,
)

TZ = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 3, 2)
P = Proposal(Predicate(("app",), "Slack"), Predicate(("site",), "github.com"), (time(9), time(10)))


def at(hhmm: str, d: date = MONDAY) -> datetime:
    h, m = map(int, hhmm.split(":"))
    return datetime(d.year, d.month, d.day, h, m, tzinfo=TZ)


def today(*items: tuple[str, str], d: date = MONDAY) -> DayRecord:
    what = {"t": (("app",), "Slack"), "b": (("site",), "github.com"), "o": (("app",), "Mail")}
    obs = [Observation(at(hhmm, d), what[k][0], what[k][1], f"{k}@{hhmm}") for k, hhmm in items]
    return DayRecord(d, tuple(sorted(obs, key=lambda o: o.at)))


def state(name: str = "active", n_f: int = 3, n_v: int = 0) -> RegularityState:
    return RegularityState(state=name, tally=Tally(n_f=n_f, n_v=n_v))  # type: ignore[arg-type]


def occ(proposal: Proposal, now: str, day: DayRecord) -> str | None:
    found = retrieve([(proposal, state())], at(now), day)
    return found[0].occurrence if found else None


def test_constants() -> None:
    assert timedelta(minutes=30) == RETRIEVAL_LEAD
    assert timedelta(hours=2) == RETRIEVAL_GRACE
    assert TOP_K == 3


@pytest.mark.parametrize("name", ["candidate", "dormant"])
def test_only_active_or_weakening_regularities_are_retrieved(name: str) -> None:
    day = today(("o", "08:00"))
    assert retrieve([(P, state(name))], at("08:45"), day) == []
    for shown in ("active", "weakening"):
        [r] = retrieve([(P, state(shown))], at("08:45"), day)
        assert r.state == shown


def test_a_regularity_for_other_weekdays_is_not_retrieved() -> None:
    tuesdays = Proposal(P.trigger, P.behavior, P.window, frozenset({1}))
    assert retrieve([(tuesdays, state())], at("08:45"), today(("o", "08:00"))) == []
    mondays = Proposal(P.trigger, P.behavior, P.window, frozenset({0}))
    assert len(retrieve([(mondays, state())], at("08:45"), today(("o", "08:00")))) == 1


def test_lead_starts_exactly_thirty_minutes_before_the_window() -> None:
    day = today(("o", "08:00"))
    assert occ(P, "08:29", day) is None
    assert occ(P, "08:30", day) == "upcoming"


def test_grace_ends_two_hours_after_the_window() -> None:
    day = today(("t", "09:10"))
    assert occ(P, "11:59", day) == "deviated"
    assert occ(P, "12:00", day) is None


def test_occurrence_is_upcoming_before_the_window_opens() -> None:
    [r] = retrieve([(P, state())], at("08:40"), today(("o", "08:00")))
    assert (r.occurrence, r.distance, r.fact_ids) == ("upcoming", timedelta(minutes=20), ())
    assert r.deadline == at("10:00")


def test_occurrence_is_pending_after_the_trigger_in_an_open_window() -> None:
    [r] = retrieve([(P, state())], at("09:20"), today(("t", "09:10")))
    assert (r.occurrence, r.distance, r.fact_ids) == ("pending", timedelta(0), ("t@09:10",))


def test_occurrence_is_deviated_when_the_window_closed_without_the_behavior() -> None:
    [r] = retrieve([(P, state())], at("10:00"), today(("t", "09:10")))
    assert (r.occurrence, r.distance) == ("deviated", timedelta(0))
    [r] = retrieve([(P, state())], at("10:15"), today(("t", "09:10"), ("b", "10:05")))
    assert (r.occurrence, r.distance) == ("deviated", timedelta(minutes=15))  # too late to count


def test_fulfilled_occurrences_are_not_retrieved() -> None:
    assert occ(P, "09:30", today(("t", "09:10"), ("b", "09:20"))) is None
    assert occ(P, "10:10", today(("t", "09:10"), ("b", "09:10"))) is None


def test_a_behavior_before_the_trigger_does_not_fulfil() -> None:
    assert occ(P, "09:30", today(("b", "09:05"), ("t", "09:10"))) == "pending"


def test_a_day_without_observations_so_far_is_censored_and_not_retrieved() -> None:
    assert occ(P, "08:45", DayRecord(MONDAY)) is None
    # Observations after now are not seen yet.
    assert occ(P, "08:45", today(("o", "09:00"))) is None


def test_an_open_window_without_its_trigger_is_not_retrieved() -> None:
    assert occ(P, "09:30", today(("o", "09:10"))) is None
    assert occ(P, "09:30", today(("t", "08:50"))) is None  # a trigger before the window
    assert occ(P, "10:10", today(("o", "09:10"))) is None


def test_observations_after_now_are_ignored() -> None:
    assert occ(P, "09:15", today(("t", "09:10"), ("b", "09:20"))) == "pending"


def proposal(start: str, end: str, name: str) -> Proposal:
    return Proposal(
        Predicate(("app",), "Slack"),
        Predicate(("site",), name),
        (time.fromisoformat(start), time.fromisoformat(end)),
    )


def test_ranking_puts_deviated_before_pending_before_upcoming() -> None:
    deviated = proposal("08:00", "09:00", "a")
    pending = proposal("09:00", "10:00", "b")
    upcoming = proposal("09:30", "10:30", "c")
    day = today(("t", "08:10"), ("t", "09:10"))
    found = retrieve(
        [(upcoming, state(n_f=9)), (pending, state(n_f=9)), (deviated, state("weakening"))],
        at("09:20"),
        day,
    )
    assert [r.proposal for r in found] == [deviated, pending, upcoming]
    assert [r.occurrence for r in found] == ["deviated", "pending", "upcoming"]


def test_ranking_puts_active_before_weakening_at_equal_occurrence() -> None:
    a, b = proposal("09:00", "10:00", "a"), proposal("09:00", "10:00", "b")
    found = retrieve(
        [(a, state("weakening", n_f=20)), (b, state("active"))], at("09:30"), today(("t", "09:10"))
    )
    assert [r.proposal for r in found] == [b, a]


def test_ranking_puts_higher_confidence_first_then_the_closer_window() -> None:
    far = proposal("09:15", "10:15", "far")
    near = proposal("09:00", "10:00", "near")
    confident = proposal("09:15", "10:15", "sure")
    found = retrieve(
        [(far, state()), (near, state()), (confident, state(n_f=9))],
        at("08:50"),
        today(("o", "08:00")),
    )
    assert [r.proposal for r in found] == [confident, near, far]
    assert [r.distance.seconds // 60 for r in found] == [25, 10, 25]


def test_ranking_ties_break_by_proposal_key_and_the_top_three_are_kept() -> None:
    ps = [proposal("09:00", "10:00", name) for name in "edcba"]
    found = retrieve([(p, state()) for p in ps], at("08:50"), today(("o", "08:00")))
    assert len(found) == TOP_K
    keys = sorted(proposal_key(p) for p in ps)[:TOP_K]
    assert [r.key for r in found] == keys


def test_malformed_proposals_are_never_retrieved() -> None:
    bad = Proposal(P.trigger, P.behavior, (time(10), time(9)))
    assert retrieve([(bad, state())], at("09:30"), today(("t", "09:10"))) == []


def test_retrieve_requires_an_aware_now_on_the_records_day() -> None:
    with pytest.raises(ValueError, match="aware"):
        retrieve([(P, state())], datetime(2026, 3, 2, 9, 0), today(("o", "08:00")))  # noqa: DTZ001
    with pytest.raises(ValueError, match="now's local day"):
        retrieve([(P, state())], at("09:00", MONDAY + timedelta(days=1)), today(("o", "08:00")))


def test_a_proposal_that_cannot_even_be_hashed_is_skipped_not_raised() -> None:
    from datetime import UTC, datetime, time

    from memory.engine.records import DayRecord, Predicate, Proposal
    from memory.engine.regularities import RegularityState, Tally
    from memory.engine.retrieve import retrieve

    bad = Proposal(
        Predicate(("room",), ["kitchen"]),  # type: ignore[arg-type]
        Predicate(("room",), "hall"),
        (time(6), time(10)),
    )
    state = RegularityState(state="active", tally=Tally(3, 0, 3, 3))
    now = datetime(2024, 5, 6, 8, tzinfo=UTC)
    assert retrieve([(bad, state)], now, DayRecord(now.date())) == []


def test_in_reach_is_the_window_widened_by_lead_and_grace_on_the_wall_clock() -> None:
    from datetime import datetime, time, timedelta
    from zoneinfo import ZoneInfo

    from memory.engine.records import Predicate, Proposal
    from memory.engine.retrieve import RETRIEVAL_GRACE, RETRIEVAL_LEAD, in_reach

    zone = ZoneInfo("Europe/Paris")
    p = Proposal(Predicate(("a",), 1), Predicate(("b",), 2), (time(8), time(9, 30)))
    day = datetime(2024, 3, 31, tzinfo=zone)  # a DST day: the wall clock decides
    start, end = day.replace(hour=8), day.replace(hour=9, minute=30)
    for moment, expected in [
        (start - RETRIEVAL_LEAD - timedelta(microseconds=1), False),
        (start - RETRIEVAL_LEAD, True),
        (end + RETRIEVAL_GRACE - timedelta(microseconds=1), True),
        (end + RETRIEVAL_GRACE, False),
    ]:
        assert in_reach(p, moment) is expected, moment
    late = Proposal(Predicate(("a",), 1), Predicate(("b",), 2), (time(23), time.max))
    assert in_reach(late, day.replace(hour=23, minute=59, second=59))
    assert not in_reach(late, day.replace(hour=0, minute=10))  # not the neighbouring day


# occurrence(): today's standing of one proposal at one moment


def test_occurrence_goes_from_censored_to_upcoming_to_not_triggered_and_on() -> None:
    from memory.engine.retrieve import occurrence

    assert occurrence(P, at("09:30"), today()) == ("censored", ())
    day = today(("o", "08:00"))
    assert occurrence(P, at("08:59"), day) == ("upcoming", ())
    assert occurrence(P, at("09:00"), day) == ("not_triggered", ())  # the window opens at 09:00
    triggered = today(("o", "08:00"), ("t", "09:10"))
    assert occurrence(P, at("09:10"), triggered) == ("pending", ("t@09:10",))  # at now counts
    assert occurrence(P, at("09:09"), triggered) == ("not_triggered", ())
    assert occurrence(P, at("10:00"), triggered) == ("deviated", ("t@09:10",))  # closed at 10:00
    kept = today(("t", "09:10"), ("b", "09:40"))
    assert occurrence(P, at("09:50"), kept) == ("fulfilled", ("t@09:10", "b@09:40"))


def test_occurrence_reads_each_record_and_moment_it_is_given() -> None:
    from memory.engine.retrieve import occurrence

    quiet, busy = today(("o", "08:00")), today(("t", "09:10"), ("b", "09:40"))
    assert occurrence(P, at("09:50"), quiet) == ("not_triggered", ())
    assert occurrence(P, at("09:50"), busy)[0] == "fulfilled"  # not the quiet record's index
    assert occurrence(P, at("09:20"), busy) == ("pending", ("t@09:10",))  # not 09:50's
    assert occurrence(P, at("09:50"), quiet) == ("not_triggered", ())


def test_in_reach_counts_seconds_and_microseconds_at_the_edges() -> None:
    from memory.engine.retrieve import in_reach

    opens = datetime(2026, 3, 2, 8, 30, tzinfo=TZ)  # 09:00 less the 30 min lead
    assert in_reach(P, opens) and not in_reach(P, opens - timedelta(microseconds=1))
    assert not in_reach(P, opens - timedelta(seconds=1))
    closes = datetime(2026, 3, 2, 12, 0, tzinfo=TZ)  # 10:00 plus the 2 h grace
    assert not in_reach(P, closes) and in_reach(P, closes - timedelta(microseconds=1))
    assert in_reach(P, closes - timedelta(seconds=30))


def test_a_blind_retrieval_reads_only_the_clock() -> None:
    day = today(("t", "09:10"), ("b", "09:40"))  # fulfilled, which blind retrieval cannot see

    def blind(now: str) -> str | None:
        found = retrieve([(P, state())], at(now), day, blind=True)
        return found[0].occurrence if found else None

    assert [blind(t) for t in ("08:59", "09:00", "09:59", "10:00")] == [
        "upcoming",
        "pending",
        "pending",
        "deviated",
    ]


def test_a_malformed_proposal_that_cannot_be_hashed_is_skipped_not_an_error() -> None:
    listed = Proposal(P.trigger, P.behavior, P.window, [0])  # type: ignore[arg-type]
    assert retrieve([(listed, state())], at("09:30"), today(("t", "09:10"))) == []
    assert len(retrieve([(P, state())], at("09:30"), today(("t", "09:10")))) == 1


def test_in_reach_reads_the_seconds_and_microseconds_of_now_as_the_window_does() -> None:
    from memory.engine.retrieve import in_reach

    half = Proposal(P.trigger, P.behavior, (time(9, 0, 0, 500_000), time(10)))
    opens = datetime(2026, 3, 2, 8, 30, 0, 500_000, tzinfo=TZ)  # the lead before 09:00:00.5
    assert in_reach(half, opens) and not in_reach(half, opens - timedelta(microseconds=1))
    assert in_reach(P, datetime(2026, 3, 2, 8, 30, 0, 500_000, tzinfo=TZ))
    assert in_reach(P, datetime(2026, 3, 2, 8, 30, 30, tzinfo=TZ))


def test_a_retrieved_regularity_carries_its_counts_and_smoothed_confidence() -> None:
    [r] = retrieve([(P, state(n_f=3, n_v=1))], at("09:30"), today(("t", "09:10")))
    assert (r.n_f, r.n_v) == (3, 1)
    assert r.confidence == (3 + 1) / (3 + 1 + 1 + 1)  # one prior success, one prior failure
    assert r.confidence == state(n_f=3, n_v=1).confidence


def test_a_now_without_an_offset_or_of_another_day_is_a_clear_error() -> None:
    from datetime import tzinfo

    class NoOffset(tzinfo):
        def utcoffset(self, dt: datetime | None) -> None:
            return None

        def tzname(self, dt: datetime | None) -> str:
            return "nowhere"

        def dst(self, dt: datetime | None) -> None:
            return None

    aware = "^retrieve: `now` must be an aware local datetime \\(the entity's time zone\\)$"
    with pytest.raises(ValueError, match=aware):
        retrieve([], datetime(2026, 3, 2, 9, tzinfo=NoOffset()), today())
    with pytest.raises(ValueError, match="pass the record of now's local day$"):
        retrieve([], at("09:00", MONDAY + timedelta(days=1)), today())


def test_every_regularity_that_is_skipped_leaves_the_rest_to_be_retrieved() -> None:
    tuesdays = Proposal(P.trigger, P.behavior, P.window, frozenset({1}))
    listed = Proposal(P.trigger, P.behavior, P.window, [0])  # type: ignore[arg-type]
    evening = Proposal(P.trigger, P.behavior, (time(20), time(21)))
    # In reach but not triggered today: considered, and not retrieved.
    other = Proposal(Predicate(("app",), "Zoom"), P.behavior, P.window)
    skipped = [
        (P, state("candidate")),
        (tuesdays, state()),
        (listed, state()),
        (evening, state()),
        (other, state()),
    ]
    [r] = retrieve([*skipped, (P, state())], at("09:30"), today(("t", "09:10"), ("o", "09:05")))
    assert (r.proposal, r.occurrence) == (P, "pending")


def test_without_the_replay_gate_any_state_ranks_as_active() -> None:
    later = Proposal(P.trigger, P.behavior, (time(9), time(10, 30)))
    both = [(P, state("weakening")), (later, state("candidate"))]
    found = retrieve(both, at("09:30"), today(("t", "09:10")), gate=False)
    # Both pending; the candidate counts as active, so it ranks before the weakening one.
    assert [(r.proposal, r.state) for r in found] == [(later, "active"), (P, "weakening")]


def test_decisions_following_one_another_on_one_record_see_it_as_of_their_own_moment() -> None:
    # One record is read at moment after moment until the day gains an event: what was found
    # at one moment is reused only where it is the same at the next (module helpers keep the
    # last index and what each regularity found in it).
    record = today(("o", "08:00"), ("t", "09:10"), ("b", "09:40"))
    assert occ(P, "08:45", record) == "upcoming"
    assert occ(P, "09:20", record) == "pending"  # the behavior at 09:40 is not seen yet
    assert occ(P, "09:45", record) is None  # fulfilled: never retrieved
    assert occ(P, "09:20", record) == "pending"  # back before it: the earlier view again
    untriggered = today(("o", "08:00"), ("t", "09:10"))
    assert occ(P, "09:50", untriggered) == "pending"
    assert occ(P, "10:30", untriggered) == "deviated"  # only the clock moved
    assert occ(P, "09:50", untriggered) == "pending"
    other = Proposal(P.trigger, P.behavior, (time(9, 15), time(10)))  # trigger before its window
    assert occ(other, "09:50", untriggered) is None  # not triggered in its own window


def test_one_record_read_at_later_moments_is_indexed_once_whatever_blind_reads_come_between(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memory.engine.retrieve as module

    built: list[datetime] = []
    real = module._seen

    def counting(record: DayRecord, now: datetime) -> object:
        built.append(now)
        return real(record, now)

    monkeypatch.setattr(module, "_SEEN", [])
    monkeypatch.setattr(module, "_seen", counting)
    record = today(("o", "08:00"), ("t", "09:10"))
    assert occ(P, "09:20", record) == "pending"
    # The no-trajectory ablation reads no record of today: it leaves the index alone.
    assert retrieve([(P, state())], at("09:20"), DayRecord(MONDAY), blind=True)
    assert occ(P, "09:25", record) == "pending"
    assert occ(P, "10:20", record) == "deviated"
    assert built == [at("09:20")]


# -- the whole order, held against its definition ------------------------------------------------

_SITES = ("a", "b", "c")
_STATES = ("active", "weakening", "candidate", "dormant")


@st.composite
def _regularities(draw: st.DrawFn) -> list[tuple[Proposal, RegularityState]]:
    found = []
    for n in range(draw(st.integers(0, 12))):
        opens = draw(st.integers(6 * 60, 20 * 60))
        closes = opens + draw(st.integers(15, 180))
        window = (time(opens // 60, opens % 60), time(closes // 60, closes % 60))
        trigger = Predicate(("app",), draw(st.sampled_from(("Slack", "Mail"))))
        behavior = Predicate(("site",), draw(st.sampled_from(_SITES)) + str(n))
        n_f, n_v = draw(st.integers(0, 12)), draw(st.integers(0, 12))
        contrast = draw(st.integers(0, 6))
        tally = Tally(
            n_f=n_f,
            n_v=n_v,
            observable=n_f + n_v + contrast,
            untriggered_behavior=draw(st.integers(0, contrast)),
        )
        name = draw(st.sampled_from(_STATES))
        found.append((Proposal(trigger, behavior, window), RegularityState(name, tally=tally)))  # type: ignore[arg-type]
    return found


@given(
    regularities=_regularities(),
    seen=st.lists(
        st.tuples(st.integers(5 * 60, 23 * 60), st.sampled_from(("Slack", "Mail", "a0", "b1"))),
        max_size=8,
    ),
    clock=st.integers(6 * 60, 23 * 60 + 59),
    gate=st.booleans(),
    blind=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_retrieval_is_the_top_three_of_the_documented_order(
    regularities: list[tuple[Proposal, RegularityState]],
    seen: list[tuple[int, str]],
    clock: int,
    gate: bool,
    blind: bool,
) -> None:
    # Retrieval ranks cheaply first and works out the rest of the order only where it can
    # still matter; the result is the definition's: every candidate ranked whole.
    obs = [
        Observation(
            at(f"{m // 60:02d}:{m % 60:02d}"),
            ("app",) if value in ("Slack", "Mail") else ("site",),
            value,
            f"f{i}",
        )
        for i, (m, value) in enumerate(sorted(seen))
    ]
    day = DayRecord(MONDAY, tuple(obs))
    now = at(f"{clock // 60:02d}:{clock % 60:02d}")
    expected = []
    for p, s in regularities:
        if (gate and s.state not in ("active", "weakening")) or not in_reach(p, now):
            continue
        if blind:
            start = datetime.combine(MONDAY, p.window[0], tzinfo=TZ)
            end = datetime.combine(MONDAY, p.window[1], tzinfo=TZ)
            kind = "upcoming" if now < start else "pending" if now < end else "deviated"
        else:
            kind = occurrence(p, now, day)[0]
        if kind not in RETRIEVED:
            continue
        start = datetime.combine(MONDAY, p.window[0], tzinfo=TZ)
        end = datetime.combine(MONDAY, p.window[1], tzinfo=TZ)
        distance = start - now if now < start else now - end if now >= end else timedelta(0)
        rank = (
            RETRIEVED.index(kind),
            {"active": 0, "weakening": 1}.get(s.state, 0),
            -s.tally.margin,
            distance,
            proposal_key(p),
        )
        expected.append((rank, p, kind))
    expected.sort(key=lambda item: item[0])
    found = retrieve(regularities, now, day, gate=gate, blind=blind)
    assert [(r.proposal, r.occurrence) for r in found] == [
        (p, kind) for _, p, kind in expected[:TOP_K]
    ]
