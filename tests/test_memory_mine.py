"""The regularity miner: planted regularities found, weak ones not, windows, weekdays, bounds."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from memory.engine.mine import (
    CONCENTRATION,
    MAX_PREDICATES,
    MIN_SUPPORT_DAYS,
    MINE_LIMIT,
    WINDOW_TRIM,
    mine,
)
from memory.engine.records import DayRecord, Observation, Predicate, Proposal
from memory.engine.regularities import MIN_FULFILLED, proposal_key, replay, validate_proposal

TZ = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 3, 2)
DP = ("decision_point", "available")
WALK = ("step_bout", "type")
TRIGGER = Predicate(DP, True)
BEHAVIOR = Predicate(WALK, "steps")


def at(d: date, hhmm: str) -> datetime:
    h, m = map(int, hhmm.split(":"))
    return datetime(d.year, d.month, d.day, h, m, tzinfo=TZ)


def day(d: date, *items: tuple[str, tuple[str, ...], object]) -> DayRecord:
    obs = [
        Observation(at(d, hhmm), path, value, f"fact:{d}/{i}/f")  # type: ignore[arg-type]
        for i, (hhmm, path, value) in enumerate(items)
    ]
    return DayRecord(d, tuple(sorted(obs, key=lambda o: (o.at, o.fact_id))))


def walk_day(d: date, trig: str = "09:10", beh: str = "09:40") -> DayRecord:
    return day(d, (trig, DP, True), (beh, WALK, "steps"))


def pairs(found: tuple[Proposal, ...]) -> set[tuple[Predicate, Predicate]]:
    return {(p.trigger, p.behavior) for p in found}


def the(found: tuple[Proposal, ...], weekdays: frozenset[int] | None = None) -> Proposal:
    [p] = [
        p
        for p in found
        if (p.trigger, p.behavior) == (TRIGGER, BEHAVIOR) and p.weekdays == weekdays
    ]
    return p


def test_constants() -> None:
    assert MIN_SUPPORT_DAYS == MIN_FULFILLED == 3
    assert (MAX_PREDICATES, MINE_LIMIT, WINDOW_TRIM, CONCENTRATION) == (40, 50, 0.1, 2.0)


def test_finds_a_planted_regularity_with_its_window() -> None:
    records = [walk_day(MONDAY + timedelta(days=i)) for i in range(3)]
    p = the(mine(records))
    assert p.window == (time(9), time(10))
    assert p.weekdays is None
    assert validate_proposal(p) is None
    # Replay decides: two days without the trigger (nor a walk) show that the trigger matters.
    quiet = [day(MONDAY + timedelta(days=i), ("12:00", ("app",), "Mail")) for i in (3, 4)]
    assert replay(p, [*records, *quiet]).activated


def test_ignores_a_pair_under_support() -> None:
    records = [walk_day(MONDAY), walk_day(MONDAY + timedelta(days=1))]
    assert mine(records) == ()


def test_behavior_before_the_trigger_does_not_support() -> None:
    records = [walk_day(MONDAY + timedelta(days=i), "10:00", "09:00") for i in range(5)]
    found = mine(records)
    assert (TRIGGER, BEHAVIOR) not in pairs(found)
    assert (BEHAVIOR, TRIGGER) in pairs(found)


def test_window_is_floor_of_the_trigger_hour_to_the_hour_after_the_behavior() -> None:
    records = [
        walk_day(MONDAY, "08:55", "09:05"),
        walk_day(MONDAY + timedelta(days=1), "09:10", "10:00"),
        walk_day(MONDAY + timedelta(days=2), "09:30", "09:45"),
    ]
    # 10:00 sharp lies in [.., 11:00), not in [.., 10:00): the hour after, not the ceiling.
    assert the(mine(records)).window == (time(8), time(11))


def test_window_trims_the_outer_tenth_of_days() -> None:
    records = [walk_day(MONDAY + timedelta(days=i)) for i in range(9)]
    records.append(walk_day(MONDAY + timedelta(days=9), "06:00", "21:30"))
    p = the(mine(records))
    assert p.window == (time(9), time(10))
    assert replay(p, records).n_f == 9  # the odd day is a violation of the narrow window
    # Under ten days nothing is trimmed: the odd day widens the window.
    assert the(mine(records[-3:])).window == (time(6), time(22))


def test_window_ending_in_the_last_hour_stays_inside_the_day() -> None:
    records = [walk_day(MONDAY + timedelta(days=i), "22:10", "23:20") for i in range(3)]
    p = the(mine(records))
    assert p.window == (time(22), time.max)
    assert replay(p, records).n_f == 3


def test_a_weekday_variant_only_when_support_concentrates_there() -> None:
    records = []
    for i in range(21):  # three weeks: the walk follows on weekdays, never on weekends
        d = MONDAY + timedelta(days=i)
        records.append(walk_day(d) if d.weekday() < 5 else day(d, ("09:10", DP, True)))
    found = mine(records)
    weekdays = the(found, frozenset(range(5)))
    assert weekdays.window == (time(9), time(10))
    assert the(found).weekdays is None  # the every-day proposal stays a candidate too
    assert [p for p in found if p.weekdays == frozenset({5, 6})] == []


def test_no_weekday_variant_when_both_groups_fulfil_alike() -> None:
    records = [walk_day(MONDAY + timedelta(days=i)) for i in range(21)]
    assert [p.weekdays for p in mine(records) if p.weekdays is not None] == []


def test_no_weekday_variant_when_the_other_group_shows_too_few_triggers() -> None:
    records = [walk_day(MONDAY + timedelta(days=i)) for i in range(5)]  # Mon-Fri only
    assert [p.weekdays for p in mine(records) if p.weekdays is not None] == []


def test_weekend_variant() -> None:
    records = []
    for i in range(21):
        d = MONDAY + timedelta(days=i)
        records.append(
            walk_day(d, "10:05", "10:50") if d.weekday() >= 5 else day(d, ("10:05", DP, True))
        )
    assert the(mine(records), frozenset({5, 6})).window == (time(10), time(11))


def test_skips_known_keys() -> None:
    records = [walk_day(MONDAY + timedelta(days=i)) for i in range(3)]
    p = the(mine(records))
    assert (TRIGGER, BEHAVIOR) not in pairs(mine(records, known={proposal_key(p)}))


def test_never_mines_private_paths() -> None:
    records = [
        day(
            MONDAY + timedelta(days=i),
            ("09:10", DP, True),
            ("09:40", ("private", "activity"), "walk"),
        )
        for i in range(5)
    ]
    assert mine(records) == ()


def test_skips_two_fields_of_one_segment_kind_but_not_two_values_of_one_path() -> None:
    door = ("door", "value")
    records = [
        day(
            MONDAY + timedelta(days=i),
            ("06:00", ("door", "sensor"), "D001"),
            ("07:00", door, "OPEN"),
            ("07:30", door, "CLOSE"),
        )
        for i in range(4)
    ]
    found = pairs(mine(records))
    assert (Predicate(door, "OPEN"), Predicate(door, "CLOSE")) in found
    assert not any(t.path != b.path and t.path[0] == b.path[0] for t, b in found)


def test_ranks_by_support_then_key_and_respects_the_limit() -> None:
    door = Predicate(("door", "value"), "OPEN")
    records = [
        day(MONDAY + timedelta(days=i), ("07:00", door.path, "OPEN"), ("08:00", WALK, "steps"))
        for i in range(5)
    ]
    records += [walk_day(MONDAY + timedelta(days=i)) for i in range(5, 8)]
    found = mine(records)
    # Five days before three, though the walk's key sorts first.
    assert [(p.trigger, p.behavior) for p in found] == [(door, BEHAVIOR), (TRIGGER, BEHAVIOR)]
    assert proposal_key(found[1]) < proposal_key(found[0])
    assert mine(records, limit=1) == found[:1]
    assert mine(records, limit=0) == ()


def test_canonically_equal_values_are_one_predicate() -> None:
    records = [
        day(MONDAY, ("09:10", DP, True), ("09:40", ("room_presence", "room"), "Kitchen")),
        day(
            MONDAY + timedelta(days=1),
            ("09:10", DP, True),
            ("09:40", ("room_presence", "room"), "kitchen "),
        ),
        day(
            MONDAY + timedelta(days=2),
            ("09:10", DP, True),
            ("09:40", ("room_presence", "room"), "KITCHEN"),
        ),
    ]
    [p] = [p for p in mine(records) if p.trigger == TRIGGER]
    assert p.behavior == Predicate(("room_presence", "room"), "Kitchen")  # the first seen


def test_deterministic_under_shuffled_input() -> None:
    rnd = random.Random(7)
    records = _noise(30, 20, seed=3)
    shuffled = [
        DayRecord(r.day, tuple(rnd.sample(r.observations, len(r.observations)))) for r in records
    ]
    rnd.shuffle(shuffled)
    assert mine(shuffled) == mine(records)


def test_bounded_on_many_predicates_and_observations() -> None:
    records = _noise(20, 2000, kinds=60, values=5, seed=1)
    found = mine(records)
    assert len(found) == MINE_LIMIT
    preds = {p.trigger for p in found} | {p.behavior for p in found}
    assert len(preds) <= MAX_PREDICATES
    assert all(validate_proposal(p) is None for p in found)


def _noise(n: int, per_day: int, kinds: int = 8, values: int = 4, seed: int = 0) -> list[DayRecord]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        d = MONDAY + timedelta(days=i)
        items = []
        for j in range(per_day):
            moment = at(d, "00:00") + timedelta(seconds=rnd.randrange(86400))
            items.append(
                Observation(
                    moment,
                    (f"k{rnd.randrange(kinds)}", "f"),
                    f"v{rnd.randrange(values)}",
                    f"fact:{d}/{j}/f",
                )
            )
        out.append(DayRecord(d, tuple(sorted(items, key=lambda o: (o.at, o.fact_id)))))
    return out


def test_equivalent_predicates_are_mined_once_under_their_most_readable_name() -> None:
    kitchen = ("room_presence", "room")
    sensor_a, sensor_b = ("device_use", "sensor"), ("device_use", "type")
    records = [
        day(
            MONDAY + timedelta(days=i),
            ("07:00", DP, True),
            # Two names for one thing: on the same days, within minutes of each other.
            ("07:30", kitchen, "kitchen"),
            ("07:32", sensor_a, "Fridge"),
            ("07:35", sensor_b, "magnetic"),
        )
        for i in range(4)
    ]
    behaviors = {p.behavior for p in mine(records) if p.trigger == TRIGGER}
    assert behaviors == {Predicate(kitchen, "kitchen")}
    # One seen at another time on some day is its own predicate.
    records[3] = day(
        MONDAY + timedelta(days=3),
        ("07:00", DP, True),
        ("07:30", kitchen, "kitchen"),
        ("09:30", sensor_a, "Fridge"),
        ("07:35", sensor_b, "magnetic"),
    )
    behaviors = {p.behavior for p in mine(records) if p.trigger == TRIGGER}
    assert behaviors == {Predicate(kitchen, "kitchen"), Predicate(sensor_a, "Fridge")}


def test_a_behavior_at_the_instant_of_its_trigger_every_day_is_no_routine() -> None:
    # Getting up in the bedroom is activity in the bedroom at the same moment: the pair says
    # nothing a person does. The bathroom twenty minutes later is a routine.
    getting_up, room = ("day_start", "room"), ("room_presence", "room")
    up, there = Predicate(getting_up, "bedroom"), Predicate(room, "bedroom")
    bathroom = Predicate(room, "bathroom")

    def bedroom_day(d: date, later: str = "06:40") -> DayRecord:
        return day(
            d,
            ("06:40", getting_up, "bedroom"),
            (later, room, "bedroom"),
            ("07:00", room, "bathroom"),
        )

    def hall_day(d: date) -> DayRecord:
        # Up in the hall, the bedroom only later: the two bedroom predicates are not one.
        return day(
            d, ("07:00", getting_up, "hall"), ("07:00", room, "hall"), ("08:00", room, "bedroom")
        )

    records = [bedroom_day(MONDAY + timedelta(days=i)) for i in range(5)]
    records += [hall_day(MONDAY + timedelta(days=i)) for i in (5, 6)]
    found = pairs(mine(records))
    assert (up, there) not in found and (there, up) not in found
    assert (up, bathroom) in found
    # One day with the two a minute apart: no longer one observation under two names.
    records[0] = bedroom_day(MONDAY, later="06:41")
    assert (up, there) in pairs(mine(records))


def _weeks(
    weekday: Callable[[date], DayRecord],
    weekend: Callable[[int, date], DayRecord],
    n: int = 21,
) -> list[DayRecord]:
    """``n`` days from a Monday: ``weekday(d)`` on Mon-Fri, ``weekend(i, d)`` on the i-th
    weekend day (0, 1, ...)."""
    records, seen = [], 0
    for i in range(n):
        d = MONDAY + timedelta(days=i)
        if d.weekday() < 5:
            records.append(weekday(d))
        else:
            records.append(weekend(seen, d))
            seen += 1
    return records


def test_a_weekday_variant_when_the_other_group_fulfils_exactly_half_as_often() -> None:
    # Walks follow on every weekday and on three of the six weekend mornings: 1/2 <= 1 / 2.
    records = _weeks(walk_day, lambda n, d: walk_day(d) if n < 3 else day(d, ("09:10", DP, True)))
    found = mine(records)
    variant, every_day = the(found, frozenset(range(5))), the(found)
    # Each ranks by its own support: 18 days for every day, 15 for the weekdays.
    assert found.index(every_day) < found.index(variant)


def test_a_weekend_variant_when_weekdays_follow_the_routine_at_another_hour() -> None:
    # On weekdays the walk follows the 07:10 trigger; a 10:05 trigger is never followed.
    records = _weeks(
        lambda d: day(d, ("07:10", DP, True), ("07:40", WALK, "steps"), ("10:05", DP, True)),
        lambda n, d: walk_day(d, "10:05", "10:50"),
    )
    found = mine(records)
    assert the(found).window == (time(7), time(8))
    # The weekday group is no variant (no weekend trigger in 07:00-08:00 to compare with),
    # and that does not stop the weekend group from being one.
    assert the(found, frozenset({5, 6})).window == (time(10), time(11))
    walks = [p.weekdays for p in found if (p.trigger, p.behavior) == (TRIGGER, BEHAVIOR)]
    assert walks == [None, frozenset({5, 6})]


def test_a_group_with_exactly_min_support_days_can_be_a_variant() -> None:
    # Thirteen days from a Monday hold three weekend days, each with the walk.
    records = _weeks(
        lambda d: day(d, ("10:05", DP, True)),
        lambda n, d: walk_day(d, "10:05", "10:50"),
        n=13,
    )
    assert the(mine(records), frozenset({5, 6})).window == (time(10), time(11))


def test_the_other_group_needs_min_support_triggered_days_to_compare() -> None:
    records = _weeks(walk_day, lambda n, d: day(d, ("09:10", DP, True)), n=13)
    # Twelve days: two weekend days with the trigger, too few to say the weekend differs.
    assert [p.weekdays for p in mine(records[:12]) if p.weekdays is not None] == []
    # Thirteen: three, and none of them followed by the walk.
    assert the(mine(records), frozenset(range(5))).window == (time(9), time(10))


def test_the_other_groups_rate_reads_all_of_its_days_triggered_in_the_window() -> None:
    # The first weekend day has no trigger, the second one outside 09:00-10:00: neither counts,
    # and neither stops the four later weekend days from being counted.
    def weekend(n: int, d: date) -> DayRecord:
        if n == 0:
            return day(d, ("12:00", ("app",), "Mail"))
        return day(d, ("15:00" if n == 1 else "09:10", DP, True))

    records = _weeks(walk_day, weekend)
    assert the(mine(records), frozenset(range(5))).window == (time(9), time(10))


def test_a_trigger_at_the_windows_end_is_outside_the_window() -> None:
    # Weekend triggers at 10:00 sharp are not triggers of [09:00, 10:00): nothing to compare.
    records = _weeks(walk_day, lambda n, d: day(d, ("10:00", DP, True)))
    found = mine(records)
    assert the(found).window == (time(9), time(10))
    assert [p.weekdays for p in found if p.weekdays is not None] == []


def test_a_weekday_variant_is_proposed_when_the_every_day_proposal_is_known() -> None:
    records = _weeks(walk_day, lambda n, d: day(d, ("09:10", DP, True)))
    every_day = the(mine(records))
    found = mine(records, known={proposal_key(every_day)})
    assert [p.weekdays for p in found if (p.trigger, p.behavior) == (TRIGGER, BEHAVIOR)] == [
        frozenset(range(5))
    ]


def test_the_window_follows_the_hour_most_triggers_fell_in() -> None:
    # Three days triggered at nine, one at seven with its walk in the same hour as the others'.
    records = [walk_day(MONDAY + timedelta(days=i), "09:10", "10:20") for i in range(3)]
    records.append(walk_day(MONDAY + timedelta(days=3), "07:10", "10:30"))
    assert the(mine(records)).window == (time(9), time(11))


def test_the_window_starts_on_the_hour_when_triggers_carry_seconds() -> None:
    records = [
        DayRecord(
            d,
            (
                Observation(at(d, "09:10").replace(second=30, microsecond=250000), DP, True, "a"),
                Observation(at(d, "09:40"), WALK, "steps", "b"),
            ),
        )
        for d in (MONDAY + timedelta(days=i) for i in range(3))
    ]
    assert the(mine(records)).window == (time(9), time(10))


def test_a_behavior_at_the_days_last_instant_is_outside_every_window() -> None:
    # Replay reads windows as [start, end), and no window ends after time.max.
    last = time.max
    records = [
        DayRecord(
            d,
            (
                Observation(at(d, "23:10"), DP, True, "a"),
                Observation(datetime.combine(d, last, tzinfo=TZ), WALK, "steps", "b"),
            ),
        )
        for d in (MONDAY + timedelta(days=i) for i in range(3))
    ]
    assert (TRIGGER, BEHAVIOR) not in pairs(mine(records))
    assert replay(Proposal(TRIGGER, BEHAVIOR, (time(23), last)), records).n_f == 0


def test_equivalent_within_ten_minutes_inclusive_across_the_hour() -> None:
    kitchen, fridge = ("room_presence", "room"), ("device_use", "sensor")

    def days(fridge_at: str) -> list[DayRecord]:
        return [
            day(
                MONDAY + timedelta(days=i),
                ("07:00", DP, True),
                ("07:55", kitchen, "kitchen"),
                (fridge_at, fridge, "Fridge"),
            )
            for i in range(4)
        ]

    def behaviors(records: list[DayRecord]) -> set[Predicate]:
        return {p.behavior for p in mine(records) if p.trigger == TRIGGER}

    assert behaviors(days("08:05")) == {Predicate(kitchen, "kitchen")}
    assert behaviors(days("08:06")) == {Predicate(kitchen, "kitchen"), Predicate(fridge, "Fridge")}


def test_readability_is_judged_by_the_last_part_of_a_longer_path() -> None:
    room, kind = ("presence", "state", "room"), ("appliance", "fridge", "type")
    records = [
        day(
            MONDAY + timedelta(days=i),
            ("07:00", DP, True),
            ("07:30", room, "kitchen"),
            ("07:32", kind, "magnetic"),
        )
        for i in range(4)
    ]
    assert {p.behavior for p in mine(records) if p.trigger == TRIGGER} == {
        Predicate(room, "kitchen")
    }


def test_of_equally_readable_equivalents_the_first_by_path_then_value_stands() -> None:
    # Both pairs are seen in the opposite order each day: the text order decides, not the clock.
    records = [
        day(
            MONDAY + timedelta(days=i),
            ("07:00", DP, True),
            ("07:30", ("zone", "spot"), "z"),
            ("07:32", ("area", "spot"), "a"),
            ("20:00", ("tv", "state"), "playing"),
            ("20:02", ("tv", "state"), "on"),
        )
        for i in range(4)
    ]
    assert {p.behavior for p in mine(records) if p.trigger == TRIGGER} == {
        Predicate(("area", "spot"), "a"),
        Predicate(("tv", "state"), "on"),
    }


def test_a_naive_and_an_aware_time_at_one_path_are_two_predicates() -> None:
    # Canonical times of both kinds do not compare with each other; their text forms do.
    due = ("calendar", "start")
    records = [
        day(
            MONDAY + timedelta(days=i),
            ("09:10", DP, True),
            ("09:40", due, "2026-03-01T10:00" if i < 3 else "2026-03-01T10:00+01:00"),
        )
        for i in range(6)
    ]
    assert {p.behavior for p in mine(records) if p.trigger == TRIGGER} == {
        Predicate(due, "2026-03-01T10:00"),
        Predicate(due, "2026-03-01T10:00+01:00"),
    }


def test_the_best_supported_predicates_go_on_when_more_are_eligible() -> None:
    # Forty predicates seen on three days, half an hour apart, and the walk routine on five:
    # the routine's two predicates are among the MAX_PREDICATES kept.
    records = []
    for i in range(5):
        d = MONDAY + timedelta(days=i)
        noise = [
            (f"{(j * 25) // 60:02}:{(j * 25) % 60:02}", (f"a{j:02}", "f"), "x")
            for j in range(MAX_PREDICATES)
            if i < 3
        ]
        records.append(day(d, ("09:10", DP, True), ("09:40", WALK, "steps"), *noise))
    assert the(mine(records)).window == (time(9), time(10))


def test_true_and_one_at_one_path_are_two_predicates() -> None:
    records = [walk_day(MONDAY + timedelta(days=i)) for i in range(3)]
    records += [
        day(MONDAY + timedelta(days=i), ("09:10", DP, 1), ("09:40", WALK, "steps"))
        for i in range(3, 6)
    ]
    triggers = [p.trigger.value for p in mine(records) if p.behavior == BEHAVIOR]
    assert sorted(triggers, key=repr) == [1, True]
    assert sorted(type(v).__name__ for v in triggers) == ["bool", "int"]


def test_an_observation_skipped_does_not_end_the_days_reading() -> None:
    records = [
        day(
            MONDAY + timedelta(days=i),
            ("08:00", ("private", "note"), "x"),
            ("09:10", DP, True),
            ("09:40", WALK, "steps"),
        )
        for i in range(3)
    ]
    assert the(mine(records)).window == (time(9), time(10))


def test_a_nan_observation_is_no_predicate_and_hides_no_equivalent_one() -> None:
    fridge = ("device_use", "sensor")
    records = [
        day(
            MONDAY + timedelta(days=i),
            ("07:00", DP, True),
            ("07:30", ("motion", "room"), float("nan")),
            ("07:32", fridge, "Fridge"),
        )
        for i in range(4)
    ]
    assert {p.behavior for p in mine(records) if p.trigger == TRIGGER} == {
        Predicate(fridge, "Fridge")
    }


def test_a_closed_day_is_scanned_once_however_many_closes_mine_it(monkeypatch) -> None:
    # The miner reads its last 28 closed days at every close; a record never changes, so each
    # is scanned once and what is mined from it is the same at every close.
    import memory.engine.mine as module
    from memory.engine.memo import IdentityMemo

    scanned: list[int] = []

    def counted(record):
        scanned.append(id(record))
        return module._scan_day(record)

    monkeypatch.setattr(module, "_day_scan", IdentityMemo(counted, limit=4096))
    records = [walk_day(MONDAY + timedelta(days=i)) for i in range(5)]
    first = mine(records[:4])
    assert scanned == [id(r) for r in records[:4]]
    again = mine(records)  # the next close: one day more
    assert scanned == [id(r) for r in records]  # only the new day scanned
    assert first == mine(records[:4])
    monkeypatch.setattr(module, "_day_scan", IdentityMemo(module._scan_day, limit=4096))
    assert again == mine(records)  # the same as from scratch


def test_the_miner_gives_the_same_proposal_again_and_unlike_parts_never_share() -> None:
    from memory.engine.mine import _proposal

    days = [walk_day(MONDAY + timedelta(days=i)) for i in range(6)]
    first, again = the(mine(days)), the(mine(list(reversed(days))))
    assert again is first  # its key, id and problems are worked out once
    window = (time(9), time(10))
    held = _proposal(TRIGGER, BEHAVIOR, window, None)
    assert _proposal(Predicate(DP, True), Predicate(WALK, "steps"), window, None) is held
    # Values that compare equal but are different values of a predicate stay apart.
    for other in (1, "True", 1.0):
        made = _proposal(Predicate(DP, other), BEHAVIOR, window, None)
        assert made is not held and type(made.trigger.value) is type(other)
    zero, negative = Predicate(WALK, 0.0), Predicate(WALK, -0.0)
    assert repr(_proposal(TRIGGER, negative, window, None).behavior.value) == "-0.0"
    assert _proposal(TRIGGER, zero, window, None) is not _proposal(TRIGGER, zero, window, None)
    folded = (time(1, fold=1), time(2))
    assert _proposal(TRIGGER, BEHAVIOR, folded, None).window[0].fold == 1
    assert _proposal(TRIGGER, BEHAVIOR, (time(1), time(2)), None).window[0].fold == 0
    weekdays = frozenset(range(5))
    assert _proposal(TRIGGER, BEHAVIOR, window, weekdays) is not held
    assert _proposal(TRIGGER, BEHAVIOR, window, weekdays).weekdays == weekdays


def test_a_pair_seen_again_on_the_same_days_and_times_is_not_worked_out_again(monkeypatch) -> None:
    # The miner's last 28 days move one day at each close; a pair whose predicates were seen
    # at the same times on the same days gives the same proposals, kept from the close before.
    import memory.engine.mine as module

    worked: list[tuple[Predicate, Predicate]] = []
    pair = module._pair

    def counted(pt, pb, *rest):
        worked.append((pt, pb))
        return pair(pt, pb, *rest)

    monkeypatch.setattr(module, "_pair", counted)
    rng = random.Random(7)
    apps = [("app_focus", "app"), ("visit", "site")]
    history = [
        day(
            MONDAY + timedelta(days=i),
            ("09:10", DP, True),
            ("09:40", WALK, "steps"),
            *[
                (f"{rng.randrange(8, 18):02d}:{rng.randrange(60):02d}", p, v)
                for p in apps
                for v in ("a", "b")
                if rng.random() < 0.7
            ],
        )  # fmt: skip
        for i in range(40)
    ]
    for end in range(5, 41):
        window = history[max(0, end - 28) : end]
        kept = mine(window)
        worked.clear()
        assert mine(window) == kept
        assert worked == []  # every pair of plain values came from the close before
        module._PAIRS.clear()
        assert mine(window) == kept  # and is what working it out afresh gives
        assert worked


def test_a_kept_pair_never_answers_for_values_that_only_compare_equal() -> None:
    # True and 1 (and 1.0) at one path, at the same times on the same days: each mined as
    # itself, whichever was mined first.
    for first, second in ((True, 1), (1, True), (1, 1.0), (1.0, 1)):
        records = [
            day(MONDAY + timedelta(days=i), ("09:10", DP, first), ("09:40", WALK, "steps"))
            for i in range(4)
        ]
        again = [
            day(MONDAY + timedelta(days=i), ("09:10", DP, second), ("09:40", WALK, "steps"))
            for i in range(4)
        ]
        [mined] = {type(p.trigger.value) for p in mine(records) if p.behavior == BEHAVIOR}
        [then] = {type(p.trigger.value) for p in mine(again) if p.behavior == BEHAVIOR}
        assert (mined, then) == (type(first), type(second))


def test_times_in_a_repeated_hour_are_never_kept_for_a_pair() -> None:
    # fold does not take part in comparing times, so a DST night's repeated hour is mined
    # afresh each time, and its window keeps the fold it was mined with.
    from memory.engine.mine import _signature

    dates = [MONDAY + timedelta(days=i) for i in range(3)]
    plain = {i: [time(2, 30)] for i in range(3)}
    folded = {i: [time(2, 30, fold=1)] for i in range(3)}
    assert isinstance(_signature(plain, dates), int)
    assert _signature(plain, dates) == _signature({i: [time(2, 30)] for i in range(3)}, dates)
    assert _signature(folded, dates) is None
    assert _signature({0: [time(2, 30)]}, dates) != _signature({1: [time(2, 30)]}, dates)
