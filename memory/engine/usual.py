"""Memory that adds and vetoes, never hides: the rules policy's judgement at a decision point.

ARCHITECTURE.md, principle 10. The rules policy sees at least what the event-only baseline sees
(the point and the recent points) and what that baseline's rules would say; where the entity's
own history is long enough to say what is usual (:mod:`memory.engine.expect`), memory decides
instead of the fixed thresholds: it keeps a moment that is unusual for this entity now (a door
open far longer than it ever stays open, an hour that is usually active and is not), adds one
the thresholds miss (a stillness longer than any at this hour, a routine room not used by its
usual time) and vetoes one it explains (the home is usually still at this hour; this person
always sits at this hour). Where history is short, the baseline's rule stands.

:func:`judge` returns, per service intent, the sentence a person reads: rooms and devices in
words, times and durations with units, what is usual beside what is happening; and, for a
moment memory would act on, one **score** in [0, 1]: how much of the entity's own history this
moment goes beyond (the share of the device's closed on-times shorter than this one, the share
of earlier days on which this hour was active, the share of earlier answers quicker than this
wait, ...). The rules policy acts on a score at or above its threshold
(``decide.threshold_for``: the team's cost of a false alarm against a miss). Where no history
speaks and the baseline's rule stands alone, the score is :data:`BASELINE_SCORE`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from memory.engine.catalogue import is_care_place, is_sleep_place
from memory.engine.expect import (
    ACTIVE_USUAL_SHARE,
    DEVICE_FACTOR,
    MIN_DAYS,
    OCCUPANCY,
    PACE_MIN_MEDIAN,
    PACE_SHARE,
    RESPONSE_FACTOR,
    ROUTINE_FIRST_SEGMENT,
    ROUTINE_USUAL_SHARE,
    SEDENTARY_STEPS,
    SITTING_MIN,
    SITTING_UNUSUAL_SHARE,
    STILL_USUAL_SHARE,
    Expectations,
    as_number,
    minutes_words,
    passed_mark,
    share_below,
    since_minutes,
    within_words,
)
from memory.engine.records import Predicate
from memory.engine.words import ROOM_FIELDS, name_words, room_words

# The event-only baseline's rule for a device with no history (decide.py reads it from here).
DEVICE_OPEN_MIN = 30  # home: a door or appliance on for this long
# Where the entity's history cannot speak, the baseline's rule is the only witness: even odds.
# At the default threshold (false alarm and miss cost alike) it stands; a team that weighs a
# false alarm above a miss hears only what memory backs.
BASELINE_SCORE = 0.5
# Our choices, each the "clearly, not marginally" reading a careful annotator gives a rule:
DEVICE_FLOOR_MIN = 10.0  # a device on for less is never "left on", however short it usually is
STILL_FACTOR = 1.5  # stillness worth a check: half as long again as any at this segment before
STILL_FLOOR_MIN = 45.0  # and at least three quarters of an hour
DAYTIME = (time(8), time(22))  # stillness at night is sleep
# A routine room not used yet is a concern only past its usual first use: the third quartile of
# its first segments plus one segment (50 minutes of grace), and for three segments after that
# (later, the day has moved on); only while the home shows life in the current segment.
ROUTINE_GRACE_SEGMENTS = 1
ROUTINE_RELEVANT_SEGMENTS = 3
# A routine not begun today is asked after once that day (its target), whichever room the
# resident is in meanwhile: control reads a home's moment by the rooms in use, which say
# nothing about the kitchen that was not.
ROUTINE_TARGET = "routine/"
PACE_SLOTS = frozenset({1, 2, 3})  # noon, mid-afternoon and evening: a pace to fall behind
# Desktop: the baseline's break rule (90 minutes of frames, no gap of 5; decide.py reads these)
# nudged once per stretch; switching at least the baseline's floor; the main app late past its
# usual first start plus half an hour, for three hours.
WORK_SPAN_MIN = 90
# ... and once more when the stretch has gone on this much longer: a reminder unheeded for an
# hour is worth one more, never one per frame.
BREAK_AGAIN_MIN = 60
BREAK_MIN = 5
SWITCH_FLOOR = 12
MAIN_APP_GRACE_MIN = 30
MAIN_APP_RELEVANT_MIN = 180


@dataclass(frozen=True, slots=True)
class Judged:
    """What is said of one service at this point: act, with the sentence a person reads, or
    not, with why. ``baseline``: the sentence is the baseline rule's short reason, not memory's."""

    act: bool
    sentence: str
    baseline: bool = False
    target: str = ""  # what it is about, when not the current event's object (control.Proposed)
    score: float = BASELINE_SCORE  # of a moment to act on: how far it goes beyond history
    # What a person reads where it is not ``sentence`` (nor, for the baseline, the catalogue's
    # message with its reason): a baseline finding memory words in full, saying what it knows
    # and that no history says what is usual yet.
    message: str = ""
    # Posted on its target itself (a repository's reminder: a comment on the waiting pull
    # request or issue), so any moment is one to act at, not only one the service's own rule
    # gives (catalogue.Service.actionable, which reads the current event's object).
    on_target: bool = False


def _left_on(item: Mapping[str, Any]) -> str:
    """What a device reminder is about: the device and when it was opened or switched on. One
    reminder per such stretch, wherever in the home the resident is meanwhile (control reads
    a home's moment by its rooms, which change as the resident moves)."""
    return f"{item.get('device')}@{item.get('since')}"


def device_words(item: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """A device of a point's ``on_at_close`` in words: its name in the entity's names table
    (``names``: sensor id -> display name, room included) when it has one, else its own id in
    words, then its room."""
    named_as = (names or {}).get(str(item.get("device")))
    if named_as:
        return f"the {named_as}"
    device = str(item.get("device") or "a device").rsplit("/", 1)[-1]
    room = item.get("room")
    named = f"the {name_words(device)}"
    if isinstance(room, str) and room and room_words(room) not in named:
        named += f" ({room_words(room)})"
    return named


def device_named(item: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """A device as the baseline rule's short reason says it: ``The front door (entry)`` from
    the names table, else its id as the events give it (``D002``, ``Oven``)."""
    device = str(item.get("device"))
    named_as = (names or {}).get(device)
    return f"The {named_as}" if named_as else device


def _open_word(item: Mapping[str, Any]) -> tuple[str, str]:
    kind = str(item.get("kind") or "")
    if kind in ("door", "magnetic"):
        return "open", "closed"
    return "on", "off"


def _home(
    p: Mapping[str, Any],
    now: datetime,
    exp: Expectations,
    rules: Mapping[str, str],
    names: Mapping[str, str] | None = None,
) -> dict[str, Judged]:
    out: dict[str, Judged] = {}
    today = now.date()
    segment = p.get("segment")
    segment = segment if isinstance(segment, int) else None

    resting = [
        i
        for i in p.get("on_at_close") or ()
        if isinstance(i, Mapping) and i.get("kind") in OCCUPANCY
    ]
    # check_device: the longest-open device first; memory judges a device with history, and a
    # device without one is left to the baseline's rule (a veto of one never hides another).
    held = [i for i in p.get("on_at_close") or () if isinstance(i, Mapping)]
    vetoes: list[str] = []
    for item in sorted(held, key=lambda i: str(i.get("since"))):
        if not isinstance(item.get("since"), str):
            continue
        if item.get("kind") in OCCUPANCY:
            vetoes.append(f"{device_words(item, names)} in use: someone resting, not left on")
            continue
        minutes = since_minutes(now, item["since"])
        usual = exp.device_usual_minutes(str(item.get("device")))
        if minutes is None or usual is None:
            on, _off = _open_word(item)
            typical = exp.device_typical_minutes(str(item.get("device")))
            if minutes is not None and typical is not None and minutes < DEVICE_FACTOR * typical[0]:
                # Too few on-times to say how long is usual, enough to say this is not long
                # for this device (expect.DEVICE_TYPICAL_QUANTILE).
                middle, count = typical
                before = (
                    f"twice the one time before ({minutes_words(middle)})"
                    if count == 1
                    else f"twice its typical {minutes_words(middle)} over {count} times before"
                )
                vetoes.append(
                    f"{device_words(item, names)} {on} for {minutes_words(minutes)}, within "
                    f"{before}"
                )
                continue
            # No usual for this device yet: the baseline's rule speaks for it, about it alone.
            if minutes is not None and minutes >= DEVICE_OPEN_MIN:
                since = datetime.fromisoformat(item["since"]).strftime("%H:%M")
                device = device_named(item, names)
                if typical is None:
                    known = f"there is no history of it yet to say how long it is usually {on}"
                else:
                    middle, count = typical
                    known = (
                        f"over twice as long as the one time before ({minutes_words(middle)})"
                        if count == 1
                        else f"over twice as long as it typically was before "
                        f"({minutes_words(middle)} over {count} times)"
                    ) + f", too few times yet to say how long it is usually {on}"
                out["check_device"] = Judged(
                    True,
                    f"{device} on since {since}",
                    baseline=True,
                    target=_left_on(item),
                    message=(
                        f"{device_words(item, names).capitalize()} has been {on} since {since}, "
                        f"{minutes_words(minutes)}; {known}."
                    ),
                )
                break
            continue
        on, off = _open_word(item)
        if minutes < max(DEVICE_FLOOR_MIN, DEVICE_FACTOR * usual):
            vetoes.append(
                f"{device_words(item, names)} {on} for {minutes_words(minutes)}, within its usual "
                f"(twice {minutes_words(usual)})"
            )
            continue
        since = datetime.fromisoformat(item["since"]).strftime("%H:%M")
        longest = exp.device_longest(str(item.get("device"))) or usual
        out["check_device"] = Judged(
            True,
            f"{device_words(item, names).capitalize()} has been {on} since {since}, "
            f"{minutes_words(minutes)}; it is usually {off} {within_words(usual)} "
            f"(longest before: {minutes_words(longest)}).",
            score=exp.device_shorter_share(str(item.get("device")), minutes),
            target=_left_on(item),
        )
        break
    if "check_device" not in out and held:
        # Every device is judged above; the baseline's own reason would name a device memory
        # explained (or a seat), so it is not asked.
        out["check_device"] = Judged(
            False, "; ".join(vetoes) or f"nothing on for {DEVICE_OPEN_MIN} minutes yet"
        )

    # wellbeing_check: stillness, judged against the same segment on earlier days.
    quiet = as_number(p.get("quiet_min"))
    daytime = DAYTIME[0] <= now.time().replace(tzinfo=None) < DAYTIME[1]
    # Nobody up yet today (nothing outside the places of sleep since the morning began, on a
    # home whose usual getting up is known): whether the resident is up is the question, asked
    # by its usual time (check_in_routine), and the stillness is sleep's.
    up = _up_check(exp, segment, today, p)
    # The outer door used and nothing moved since: the resident has likely gone out, which
    # explains a still home and leaves no routine to check in on.
    out_since = exp.out_since if exp.out_since is not None and exp.out_since <= now else None
    gone = (
        f"the outer door was used at {out_since.astimezone(now.tzinfo):%H:%M} and nothing has "
        "moved since: the resident is likely out"
        if out_since is not None
        else ""
    )
    if quiet is not None and up is not None:
        out["wellbeing_check"] = Judged(
            False, "nobody is up yet today: the stillness is sleep's, and getting up is checked"
        )
    elif quiet is not None and gone:
        out["wellbeing_check"] = Judged(False, gone)
    elif quiet is not None and not daytime:
        out["wellbeing_check"] = Judged(False, f"still at {now:%H:%M}: night, sleep")
    elif quiet is not None and resting:
        out["wellbeing_check"] = Judged(
            False,
            f"{device_words(resting[0], names)} in use: someone resting explains the stillness",
        )
    elif quiet is not None and segment is not None:
        share, days = exp.quiet_usual_share(segment, quiet, today)
        if days >= MIN_DAYS:
            earlier = [s.value for s in exp.quiet.get(segment, []) if s.day < today]
            longest = max(earlier) if earlier else 0.0
            if share >= STILL_USUAL_SHARE:
                out["wellbeing_check"] = Judged(
                    False,
                    f"the home is usually this still at {now:%H:%M} ({round(100 * share)} % "
                    f"of {days} days)",
                )
            elif quiet >= max(STILL_FLOOR_MIN, STILL_FACTOR * longest):
                out["wellbeing_check"] = Judged(
                    True,
                    f"The home has been still for {minutes_words(quiet)}, longer than on any of "
                    f"the last {days} days at this time (longest {minutes_words(longest)}); is "
                    "everything all right?",
                    score=1.0 - share,
                )
            else:
                out["wellbeing_check"] = Judged(
                    False, f"still for {minutes_words(quiet)}, not unusual at {now:%H:%M}"
                )

    # check_in_routine: a room used every day by about now, not used yet today, while the home
    # shows life in this segment (the resident is in, the routine is not happening).
    lively = (as_number(p.get("events")) or 0) > 0
    if not daytime:
        out["check_in_routine"] = Judged(False, f"{now:%H:%M} is night: routines wait for day")
    elif gone:
        # Whether at this point's routine rule or at a regularity's deviation (decide.py reads
        # this verdict as a veto): a resident who is out has no routine to check in on.
        out["check_in_routine"] = Judged(False, f"{gone}, with no routine to check in on")
    elif up is not None and segment is not None:
        # Being up is missed whether or not the bedroom shows life: a silent home included.
        late = _overdue(up[0], segment)
        out["check_in_routine"] = (
            Judged(
                True,
                f"Nobody seems up yet: nothing has moved today outside where the resident "
                f"sleeps, though the home is usually about by {late} (on {len(up[0])} of the "
                f"last {up[1]} days). Is everything all right?",
                score=len(up[0]) / up[1],
                target=ROUTINE_TARGET + "up",
            )
            if late is not None
            else Judged(False, "nobody is up yet, not past the usual time to be up")
        )
    elif not lively:
        # A routine is missed only while the resident is in and about (the home shows life in
        # this segment); a silent home is the stillness check's to judge.
        out["check_in_routine"] = Judged(False, "nothing moved in this segment")
    elif segment is not None:
        routine = _routine(exp, segment, today, p)
        if routine is not None:
            out["check_in_routine"] = routine
        elif "check_in_routine" in rules and len(exp.days - {today}) >= MIN_DAYS:
            out["check_in_routine"] = Judged(False, "no room is overdue against its usual time")
        elif "check_in_routine" in rules:
            out["check_in_routine"] = _routine_standing_in(exp, segment, today, p)
    return out


def _routine_standing_in(
    exp: Expectations, segment: int, today: date, p: Mapping[str, Any]
) -> Judged:
    """The baseline's routine rule while history is short (rooms active at this segment on
    each of the last two days, not now), kept to the rooms of a routine a caregiver checks on
    (``catalogue.is_care_place``): which rooms those are is known without any history."""
    earlier = {today - timedelta(days=1), today - timedelta(days=2)}
    by_day = {day: rooms for day, rooms in exp.rooms.get(segment, []) if day in earlier}
    rooms_now = p.get("rooms")
    now = {str(r) for r in rooms_now} if isinstance(rooms_now, Mapping) else set()
    missing = (
        set.intersection(*(set(rooms) for rooms in by_day.values())) - now
        if len(by_day) == len(earlier)
        else set()
    )
    cared = sorted(room for room in missing if is_care_place(room))
    # A routine whose room has been in use today is under way, whatever the hour it came at:
    # memory knows today even before it knows what is usual (routine_under_way).
    used = rooms_used_today(exp, today, p)
    begun = [room for room in cared if room in used]
    cared = [room for room in cared if room not in used]
    if begun and not cared:
        return Judged(False, _under_way(begun[0]))
    if not cared:
        return Judged(
            False,
            "what was in use at this time on the last two days and is not now is no routine a "
            "caregiver checks on",
        )
    return Judged(
        True,
        f"the {room_words(cared[0])} was active at this time on the last two days",
        baseline=True,
        target=ROUTINE_TARGET + cared[0],
    )


def rooms_used_today(exp: Expectations, today: date, p: Mapping[str, Any]) -> set[str]:
    """The rooms of a home with activity today since :data:`ROUTINE_FIRST_SEGMENT` (earlier
    activity continues the night), the current point's included."""
    used = set(exp.rooms_used.get(today, ()))
    rooms_now = p.get("rooms")
    if isinstance(rooms_now, Mapping):
        used |= {str(r) for r in rooms_now}
    return used


def care_routine(behavior: Predicate) -> bool:
    """Whether a home regularity's behaviour is a routine a caregiver checks on: it happens
    in a place or at a device of a meal or medication (``catalogue.is_care_place``)."""
    return isinstance(behavior.value, str) and is_care_place(behavior.value)


def routine_under_way(
    exp: Expectations, behavior: Predicate, now: datetime, p: Mapping[str, Any]
) -> str | None:
    """Why a home routine a regularity expects is no concern though its behaviour has not
    happened yet: the room it happens in has been in use today. A caregiver checks on a
    routine when nothing of it shows (ARCHITECTURE.md, principle 10); a resident
    already about in the kitchen is not missing breakfast because the fridge is still shut.
    None when the behaviour names no room or the room is still unused today."""
    kind, *rest = behavior.path
    if kind not in ("room_presence", "device_use") or not rest or rest[-1] not in ROOM_FIELDS:
        return None
    room = str(behavior.value)
    if room not in rooms_used_today(exp, now.date(), p):
        return None
    return _under_way(room)


def _under_way(room: str) -> str:
    return f"the {room_words(room)} has been in use today: the routine is under way"


def _days_known(days: int) -> str:
    """The few days memory knows, as a short history's veto says them."""
    return "the one day" if days == 1 else f"{days} days"


def _routine(exp: Expectations, segment: int, today: date, p: Mapping[str, Any]) -> Judged | None:
    """The first room of a routine a caregiver checks on (``catalogue.is_care_place``: the
    kitchen, medication) whose usual first use today is overdue (module constants)."""
    first_by_room, earlier_days = exp.room_first_uses(today)
    if earlier_days < MIN_DAYS:
        return None
    used_today = rooms_used_today(exp, today, p)
    for room in sorted(first_by_room):
        if room in used_today or not is_care_place(room):
            continue
        starts = first_by_room[room]
        share = len(starts) / earlier_days
        if share < ROUTINE_USUAL_SHARE:
            continue
        by = _overdue(starts, segment)
        if by is not None:
            return Judged(
                True,
                f"The {room_words(room)} is usually in use by {by} (on {len(starts)} of the last "
                f"{earlier_days} days); not yet today, though the home is active. Is "
                "everything all right?",
                score=share,
                target=ROUTINE_TARGET + room,
            )
    return None


def _up_check(
    exp: Expectations, segment: int | None, today: date, p: Mapping[str, Any]
) -> tuple[list[int], int] | None:
    """When nobody is up yet today on a home whose getting up is known: the segments of the
    first activity outside the places of sleep on the earlier days, and how many earlier days;
    None when someone is up (or has gone out), or history cannot say when they usually are."""
    if segment is None or segment < ROUTINE_FIRST_SEGMENT:
        return None
    if exp.out_since is not None:
        return None  # the outer door was used and nothing has moved since: likely out
    firsts, earlier_days = exp.up_firsts(today)
    if earlier_days < MIN_DAYS or len(firsts) < ROUTINE_USUAL_SHARE * earlier_days:
        return None
    if any(not is_sleep_place(room) for room in rooms_used_today(exp, today, p)):
        return None
    return firsts, earlier_days


def _overdue(starts: list[int], segment: int) -> str | None:
    """The time a routine first begun in ``starts`` (sorted segments, on most of the earlier
    days) is usually under way by, when ``segment`` is past it and still relevant; else None."""
    q1 = starts[len(starts) // 4]
    q3 = starts[(3 * len(starts)) // 4]
    if q3 - q1 > 3:  # first uses spread over more than ~3 hours: no usual time
        return None
    deadline = q3 + ROUTINE_GRACE_SEGMENTS
    if deadline < segment <= deadline + ROUTINE_RELEVANT_SEGMENTS:
        return _segment_end(deadline)
    return None


def _segment_end(segment: int) -> str:
    minutes = min(24 * 60, (segment + 1) * 50)
    return "24:00" if minutes == 24 * 60 else f"{minutes // 60:02d}:{minutes % 60:02d}"


def _sports(
    p: Mapping[str, Any], now: datetime, exp: Expectations, rules: Mapping[str, str]
) -> dict[str, Judged]:
    out: dict[str, Judged] = {}
    today = now.date()
    slot = p.get("slot")
    if not isinstance(slot, int) or p.get("worn_last_60") is False:
        return out
    steps = as_number(p.get("steps_last_60"))
    at = p.get("slot_time") or f"{now:%H:%M}"
    if steps is not None and steps < SEDENTARY_STEPS:
        share, days = exp.slot_share(exp.active_hour, slot, today, 1.0)
        if days >= MIN_DAYS:
            usual = share >= ACTIVE_USUAL_SHARE
            out["suggest_walk"] = Judged(
                usual,
                f"{int(steps)} steps in the hour before {at}; this hour is usually an active "
                f"one for you ({round(100 * share)} % of the last {days} days). A short walk "
                "fits in now."
                if usual
                else f"this hour is active on only {round(100 * share)} % of {days} days",
                score=share,
                target=f"walk@slot{slot}",
            )
        elif days and share < ACTIVE_USUAL_SHARE:
            # Too few days to call an hour usually active, enough to say it is not: active on
            # fewer than half the days known, the full rule's own share. Where it cannot say
            # so, the baseline's rule stands.
            out["suggest_walk"] = Judged(
                False,
                f"this hour is active so far on only {round(100 * share)} % of "
                f"{_days_known(days)} known",
            )
    # A walk or a stand-up nudge is about the hour before its slot (its target): another slot's
    # hour is another moment. The baseline's rule standing in without history keeps the scope's
    # episode, the day: a fixed threshold alone is weak evidence, said at most once a day.
    sitting = as_number(p.get("sedentary_min_last_60"))
    sat = sitting is not None and sitting >= SITTING_MIN
    if sat and steps is not None and steps < SEDENTARY_STEPS:
        share, days = exp.slot_share(exp.sitting, slot, today, SITTING_MIN)
        if days >= MIN_DAYS:
            unusual = share <= SITTING_UNUSUAL_SHARE
            out["stand_break"] = Judged(
                unusual,
                f"You have been sitting for {int(sitting or 0)} of the last 60 minutes, more "
                f"than usual at {at} (such an hour on {round(100 * share)} % of the last {days} "
                "days); stand up and move for a few minutes."
                if unusual
                else f"sitting at {at} is usual ({round(100 * share)} % of {days} days)",
                score=1.0 - share,
                target=f"sitting@slot{slot}",
            )
        elif days and share > SITTING_UNUSUAL_SHARE:
            # Too few days to call an hour's sitting unusual, enough to explain it: sitting at
            # this hour on more than a third of the days known is this person's habit, and the
            # rule with a full history would say so too. Where it cannot explain, the
            # baseline's rule stands.
            out["stand_break"] = Judged(
                False,
                f"sitting at {at} is usual so far ({round(100 * share)} % of "
                f"{_days_known(days)} known)",
            )
    so_far = as_number(p.get("steps_today"))
    if slot in PACE_SLOTS and so_far is not None:
        median = exp.slot_median(exp.steps_today, slot, today)
        if median is not None and median < PACE_MIN_MEDIAN:
            # History speaks: by this time of day this person has usually walked too little to
            # fall behind, so the baseline's "behind yesterday" is not asked.
            out["step_goal_nudge"] = Judged(
                False, f"by {at} you usually have only {int(median)} steps: no pace to keep"
            )
        elif median is not None:
            behind = so_far < PACE_SHARE * median
            out["step_goal_nudge"] = Judged(
                behind,
                f"{int(so_far)} steps so far today; by {at} you usually have {int(median)}. "
                "A walk would help you catch up."
                if behind
                else f"{int(so_far)} steps by {at}, not behind the usual {int(median)}",
                score=exp.slot_share_above(exp.steps_today, slot, today, so_far),
            )
    return out


def _code(
    p: Mapping[str, Any], now: datetime, exp: Expectations, rules: Mapping[str, str]
) -> dict[str, Judged]:
    """A pull request or issue that has waited clearly longer than this repository usually
    takes to answer one, when its turn comes (:meth:`Expectations.reminder_turn`: one
    reminder per event of the repository, whatever the event is on, posted on the item it is
    about; items late at once in turn, pull requests first, then the longest-waiting; a pull
    request once more after it waited :data:`~memory.engine.expect.ESCALATE` times as long); a
    failed check not run again nor pushed over for twice the usual time to a follow-up, at
    the first moment after that."""
    out: dict[str, Judged] = {}
    usual_follow = exp.follow_up_usual_minutes()
    before = exp.reminded_moment("ci_run", now)
    for (name, branch), failed in sorted(exp.failed.items(), key=lambda i: i[1]):
        if usual_follow is None:
            break
        waited = (now - failed).total_seconds() / 60
        if not passed_mark(failed, before, waited, (RESPONSE_FACTOR * usual_follow,)):
            continue
        out["ci_follow_up"] = Judged(
            True,
            f"The check {name} failed on {branch or 'its branch'} {minutes_words(waited)} ago "
            "and has neither run again nor had a push since; a failure here is usually "
            f"followed up {within_words(usual_follow)} (median of "
            f"{len(exp.follow_up_minutes)}).",
            target=f"ci:{name}@{branch}@{failed.isoformat()}",
            score=share_below(exp.follow_up_minutes, waited),
            on_target=True,
        )
        break
    turn = exp.reminder_turn(now)
    if turn is not None:
        kind, number, again = turn
        opened, author = exp.waiting[kind, number]
        usual = exp.response_usual_minutes(kind)
        assert usual is not None  # nothing of a kind is late before its usual is known
        waited = (now - opened).total_seconds() / 60
        what = "Pull request" if kind == "pull_request" else "Issue"
        answer = "a review or comment" if kind == "pull_request" else "a reply"
        out[_CODE_INTENTS[kind]] = Judged(
            True,
            target=f"{kind}:{number}",
            sentence=f"{what} #{number}{_by(author)} has waited {minutes_words(waited)} for "
            f"{answer} from anyone else{' (a second reminder)' if again else ''}; this "
            f"repository usually answers {within_words(usual)} "
            f"(median of {len(exp.response_minutes[kind])}).",
            score=share_below(exp.response_minutes[kind], waited),
            on_target=True,
        )
    return out


def _by(author: str | None) -> str:
    return f" by {author}" if author else ""


def _clock(text: str) -> int:
    hours, _, minutes = text.partition(":")
    return int(hours) * 60 + int(minutes or 0)


def hhmm(minutes: float) -> str:
    """Minutes since local midnight as ``HH:MM``."""
    whole = int(minutes)
    return f"{whole // 60:02d}:{whole % 60:02d}"


def work_stretch(spans: Iterable[tuple[int, int]]) -> tuple[int, int] | None:
    """The latest stretch of work (start, end in minutes since midnight) among frame spans,
    frames closer than :data:`BREAK_MIN` apart joined: the baseline's rule and memory's read it
    alike."""
    reach: tuple[int, int] | None = None
    for start, end in sorted(spans):
        if reach is None or start - reach[1] >= BREAK_MIN:
            reach = (start, end)
        else:
            reach = (reach[0], max(reach[1], end))
    return reach


def _desktop(
    p: Mapping[str, Any], now: datetime, exp: Expectations, rules: Mapping[str, str]
) -> dict[str, Judged]:
    out: dict[str, Judged] = {}
    today = now.date()
    clock = now.hour * 60 + now.minute

    # take_break: one nudge per stretch of work without a break (the stretch is its target),
    # and one more when it has gone on unheeded for BREAK_AGAIN_MIN after that.
    frames = [*exp.spans.get(today, []), (p.get("start"), p.get("end"))]
    reach = work_stretch(
        (_clock(a), _clock(b)) for a, b in frames if isinstance(a, str) and isinstance(b, str)
    )
    if reach is not None and reach[1] - reach[0] >= WORK_SPAN_MIN:
        again = reach[1] - reach[0] >= WORK_SPAN_MIN + BREAK_AGAIN_MIN
        out["take_break"] = Judged(
            True,
            f"You have been working since {hhmm(reach[0])} without a break of "
            f"{BREAK_MIN} minutes ({minutes_words(reach[1] - reach[0])}); take a few minutes "
            "away from the screen.",
            target=f"work@{hhmm(reach[0])}{'/again' if again else ''}",
        )

    # refocus: switching above what is usual for this person (and at least the baseline floor).
    switches = as_number(p.get("switches_30"))
    usual = exp.switches_usual(today)
    if switches is not None and usual is not None:
        high, days = usual
        if switches > high and switches >= SWITCH_FLOOR:
            out["refocus"] = Judged(
                True,
                f"{int(switches)} apps and windows started in the last 30 minutes, more than on "
                f"95 % of your moments over the last {'day' if days == 1 else f'{days} days'} "
                f"({int(high)}); close what you do not need and pick one task.",
                target=f"switching@{now:%H}",
                score=exp.switches_below(today, switches),
            )
        else:
            out["refocus"] = Judged(False, f"{int(switches)} switches is usual for you")
    elif "refocus" in rules:
        # No history says what is usual yet: the baseline's rule stands, and like memory's own
        # nudge it is said once per stretch of switching (its target), not at every frame of
        # it with another app in front (control would take each app for a new situation).
        out["refocus"] = Judged(True, rules["refocus"], baseline=True, target=f"switching@{now:%H}")

    # resume_focus: the usual main app not opened yet by its usual time.
    main = exp.main_app(today)
    if main is not None:
        app, starts, days, kind = main
        used_today = set(exp.app_minutes.get(today, {})) | {p.get("app")}
        deadline = _clock(starts[(3 * len(starts)) // 4]) + MAIN_APP_GRACE_MIN
        late = app not in used_today and deadline < clock <= deadline + MAIN_APP_RELEVANT_MIN
        out["resume_focus"] = Judged(
            late,
            f"You usually open {app} by {hhmm(deadline - MAIN_APP_GRACE_MIN)} (it was your "
            f"main app on {len(starts)} of the last {days} {kind}); not yet today. Pick it up?"
            if late
            else f"{app} is in use or not due yet",
            target=f"start/{app}" if late else "",
            score=len(starts) / days,
        )
    return out


_CODE_INTENTS = {"pull_request": "review_nudge", "issue": "triage_nudge"}
_JUDGES = {"home": _home, "sports": _sports, "code": _code, "desktop": _desktop}


def judge(
    scope: str,
    point: Mapping[str, Any],
    now: datetime,
    exp: Expectations | None,
    rules: Mapping[str, str],
    names: Mapping[str, str] | None = None,
) -> dict[str, Judged]:
    """Per service intent at this point: memory's verdict where history can speak, else the
    baseline's rule (``rules``: intent -> its reason) stands (module docstring). A home's
    devices are said by ``names`` (sensor id -> display name) where it has them."""
    verdicts: dict[str, Judged] = {}
    if exp is not None and scope == "home":
        verdicts = _home(point, now, exp, rules, names)
    elif exp is not None and scope in _JUDGES:
        verdicts = _JUDGES[scope](point, now, exp, rules)
    out = dict(verdicts)
    for intent, reason in rules.items():
        out.setdefault(intent, Judged(True, reason, baseline=True))
    return out
