"""Expectations: what is usual for this entity at this time of day, learned from its own history.

ARCHITECTURE.md, principle 10: memory adds expectations (a device on far longer than it ever
stays on, a stillness longer than usual at this hour, an hour that is usually active and is not,
steps behind this person's usual pace) and vetoes what it explains (the home is usually still
now: its resident is out; this lamp usually burns all evening; this hour is never active).
A behaviour that happens every day has no lift, but its absence is the strongest signal there is.

Learned causally, one step at a time, from what every method may see: the public payloads of
committed events (:meth:`Expectations.observe_event`: how long each door or appliance stays
open or on) and the decision points already decided (:meth:`Expectations.observe_point`: how
still the home is at each segment's close, how many steps each slot's hour holds). Each
figure keeps the day it was seen, so "usual" is always a share of distinct earlier days.

Every threshold is written once, here, with its reason. Nothing is usual before
:data:`MIN_DAYS` earlier days: a week less a weekend, the labelers' and the annotators' horizon
alike (``benchmark/labelers``), so a new entity behaves as the event-only rule does until its
history can speak.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from memory.engine.catalogue import (
    OBJECT_OF_KIND,
    code_kind,
    failed_run,
    is_sleep_place,
)
from memory.engine.extract.code import KINDS as CODE_KINDS
from memory.engine.extract.home import AMBIENT_TYPES, MOTION_TYPES
from memory.engine.records import POINT_KIND, EngineEvent

MIN_DAYS = 5  # earlier days with data before anything is "usual" (module docstring)
# A device: "longer than usual" is beyond twice its 95th-percentile on-time, once it has
# closed at least this many times (fewer and a single long evening would define "usual").
DEVICE_MIN_EPISODES = 5
DEVICE_FACTOR = 2.0
DEVICE_QUANTILE = 0.95
# Fewer closed on-times than that tell no 95th percentile, but they do tell a typical one (their
# median): a device on for less than twice its typical on-time has not been left on. The full
# rule never fires there either (twice the 95th percentile is at least twice the median), so
# memory with a short history vetoes only what it would veto with a long one.
DEVICE_TYPICAL_QUANTILE = 0.5
# Stillness: usual at this segment when the home was at least this still at its close on at
# least half the earlier days (its resident is usually out or resting then).
STILL_USUAL_SHARE = 0.5
# Home routines: a day's activity counts from this segment (05:00) on; earlier activity
# continues the night.
ROUTINE_FIRST_SEGMENT = 6
# An hour is usually active when it was on at least half the earlier days with data at the slot;
# sitting is unusual when it happened on at most a third of them (a habitual desk hour is not a
# moment to nag); behind pace is below half the person's median steps by the slot.
ACTIVE_USUAL_SHARE = 0.5
SITTING_UNUSUAL_SHARE = 0.34
PACE_SHARE = 0.5
PACE_MIN_MEDIAN = 1000.0  # a median below a walk's worth of steps sets no pace to fall behind
ACTIVE_STEPS = 1000.0  # steps in an hour that make it an active one (a short walk), hourly rows
# Where the tracker reports its own active minutes (fairly or very active), they decide instead:
# ten minutes of activity is a walk's worth whatever the steps (a bicycle counts few), and slow
# steps about the house, however many, are not (active_hour).
ACTIVE_MIN = 10.0
SEDENTARY_STEPS = 250.0
SITTING_MIN = 50.0
ROUTINE_USUAL_SHARE = 0.7  # a room active at this segment on 70% of the earlier days
# Desktop: switching is unusual above the 95th percentile of this person's earlier points (and
# at least the baseline's floor); the usual main app is the day's most used on 60 % of the days.
SWITCH_QUANTILE = 0.95
# A 95th percentile needs at least twenty moments to exist (one in twenty above it): switching is
# read at every frame's end, so a day at the computer gives that many, and memory judges
# switching from its first full day on instead of waiting MIN_DAYS days.
SWITCH_MIN_MOMENTS = 20
MAIN_APP_SHARE = 0.6
# The main app's usual first start is read from the earlier days of today's kind: a work app's
# habit is a weekday's, and a weekend at the computer (for something else) is no late start.
# A weekend is judged against earlier weekends only, once MIN_DAYS of them are known; a weekday
# against earlier weekdays once MIN_DAYS are, and against every earlier day before that.
WEEKEND = frozenset({5, 6})  # Saturday, Sunday
# A home's first uses (a routine's room, being up) likewise, where the two kinds differ: before
# MIN_DAYS days of today's kind are known, every earlier day says when, unless this many days of
# today's kind all began later than three days in four (a resident who sleeps in at weekends):
# then nothing says when yet, and nothing is asked.
KIND_DIFFERS_AT = 2
# Code: "clearly longer than usual" is beyond twice this repository's median first-response time
# for its kind (pull request or issue), once it has seen a few answers (fewer say nothing).
CODE_MIN_SAMPLES = 3
RESPONSE_FACTOR = 2.0
# ... and a day at the least: a repository's contributors span time zones, so an item opened in
# one person's evening is answered in another's morning; before a day it is not late to anyone.
WAIT_FLOOR_MIN = 24 * 60.0
# A waiting item is nudged once when it becomes late, never again at every later event: a
# reminder a day about the same item is noise its people learn to ignore. A pull request is
# nudged once more when it has waited this many times as long (the first reminder went
# unheard): it is finished work blocked on a reviewer. An issue is not: once triage was asked
# for, leaving it open is a decision (a feature request, the backlog), not an oversight.
ESCALATE = 3.0
# What a repository's events say of its pull requests and issues, in both vocabularies the
# GitHub importer writes (GH Archive event types, REST objects).
_OPENED = {"pr_opened": "pull_request", "issue_opened": "issue"}
_CLOSED = {"pr_merged": "pull_request", "pr_closed": "pull_request", "issue_closed": "issue"}
_ACTION_KIND = {"PullRequestEvent": "pull_request", "IssuesEvent": "issue"}
_REVIEWS = frozenset(
    {"PullRequestReviewEvent", "PullRequestReviewCommentEvent", "pr_review", "pr_review_comment"}
)
_COMMENTS = frozenset({"IssueCommentEvent", "issue_comment"})
# The event types that may open, answer or close a wait (code_change) or run or follow up a
# check (Expectations._checks); an event of any other type (a home's sensor, a wearable's
# hour) is looked at for a device alone.
_CODE_TYPES = frozenset(
    {
        *_OPENED,
        *_CLOSED,
        *_ACTION_KIND,
        "issue_event",
        *_REVIEWS,
        *_COMMENTS,
        "PushEvent",
        "ci_run",
        *(t for t, k in CODE_KINDS.items() if OBJECT_OF_KIND.get(k) == "ci_run"),
    }
)
_BOT = re.compile(r"(\[bot\]|-bot|-robot)$", re.IGNORECASE)
# Work in progress waits for its author, a cherry-pick for a release: neither for a reviewer.
_WIP = re.compile(r"^\s*[\[(]?\s*(wip|draft|do not merge|dnm)\b|cherry[- ]?pick", re.IGNORECASE)
# The states of a door or appliance (public payload values) and the kinds that are neither.
ON_VALUES = frozenset({"ON", "OPEN"})
OFF_VALUES = frozenset({"OFF", "CLOSE", "CLOSED"})
NOT_DEVICES = frozenset({"motion", "pir", "temperature", "light", "battery", "humidity"})
# A seat or bed sensor says someone is resting on it: occupancy, never a device left on.
OCCUPANCY = frozenset({"pressure"})
CONTACTS = frozenset({"door", "magnetic"})
# An outer door, by the words a home names it with (Ordóñez's Maindoor at the Entrance,
# AL-Smarthome's OutsideDoor/FrontDoor): after it, with nothing moving since, the resident is out.
OUTER_WORDS = re.compile(r"main|front|entr|outside|outdoor|exit|porch|garage", re.IGNORECASE)


def quantile(values: list[float], share: float) -> float:
    """The ``share`` quantile of ``values`` by linear interpolation (values need not be sorted)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def share_below(values: list[float], value: float) -> float:
    """The share of ``values`` strictly below ``value`` (0 for none): how much of history this
    moment goes beyond."""
    return sum(1 for v in values if v < value) / len(values) if values else 0.0


def _median(values: list[float]) -> float:
    return quantile(values, 0.5)


def as_number(value: Any) -> float | None:
    """A payload value as a number; None for bools, NaN and anything not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


def active_hour(p: Mapping[str, Any]) -> bool | None:
    """Whether a wearable's point shows the hour before it active: a walk's worth of the
    tracker's fairly or very active minutes (:data:`ACTIVE_MIN`) where it reports them (a ride
    of few steps counts; a thousand slow steps about the house do not), else a walk's worth of
    steps (:data:`ACTIVE_STEPS`, hourly rows alone); None where it reports neither. The sports
    reference labeler reads an active hour the same way."""
    steps = as_number(p.get("steps_last_60"))
    minutes = as_number(p.get("active_min_last_60"))
    if minutes is not None:
        return minutes >= ACTIVE_MIN
    if steps is None:
        return None
    return steps >= ACTIVE_STEPS


def of_kind(days: Iterable[date], today: date) -> list[date]:
    """The days among ``days`` of ``today``'s kind: weekdays for a weekday, :data:`WEEKEND`
    days for a weekend day."""
    weekend = today.weekday() in WEEKEND
    return [d for d in days if (d.weekday() in WEEKEND) == weekend]


def days_like(days: Collection[date], today: date) -> list[date]:
    """The days among ``days`` to read what is usual on ``today`` from: those of its kind
    (:func:`of_kind`) once :data:`MIN_DAYS` of them are known, else every one."""
    alike = of_kind(days, today)
    return alike if len(alike) >= MIN_DAYS else list(days)


def firsts_like(
    by_day: Mapping[date, int], days: Collection[date], today: date
) -> list[int] | None:
    """The first occurrences (``by_day``: day -> segment) on the days usual for ``today``
    (:func:`days_like`), sorted; None where today's kind of day differs and too few of its days
    are known to say when: :data:`KIND_DIFFERS_AT` or more of them, each later than three days
    in four of all (their third quartile) or without one."""
    chosen = days_like(days, today)
    starts = sorted(by_day[d] for d in chosen if d in by_day)
    alike = of_kind(days, today)
    if len(chosen) != len(alike) and len(alike) >= KIND_DIFFERS_AT and starts:
        q3 = starts[(3 * len(starts)) // 4]
        if all(by_day.get(d, q3 + 1) > q3 for d in alike):
            return None
    return starts


def _attributes(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    found = payload.get("attributes")
    # A plain dict or none at all, the common cases, before the abstract type's check.
    if type(found) is dict:
        return found
    return found if found is not None and isinstance(found, Mapping) else {}


def device_of(payload: Mapping[str, Any]) -> str | None:
    """The door or appliance an event reports on (its sensor), None for motion and readings."""
    kind = payload.get("type")
    if not isinstance(kind, str) or kind in NOT_DEVICES:
        return None  # most of a home's events: motion, before its attributes are read
    sensor = _attributes(payload).get("sensor")
    return sensor if isinstance(sensor, str) else None


def is_outer_door(payload: Mapping[str, Any]) -> bool:
    """A door to the outside, by its kind and the words its sensor, device or room carry."""
    if payload.get("type") not in CONTACTS:
        return False
    names = _attributes(payload)
    text = " ".join(str(names.get(k) or "") for k in ("sensor", "device", "room", "place"))
    return OUTER_WORDS.search(text) is not None


def someone_moved(payload: Mapping[str, Any]) -> bool:
    """Whether an event shows someone at home: not an ambient reading (a thermometer reports
    whoever is in), nor a motion sensor going quiet (its OFF is the sensor resetting after the
    last movement, which may be the resident walking out past it)."""
    kind = str(payload.get("type") or "").lower()
    if kind in AMBIENT_TYPES:
        return False
    return not (kind in MOTION_TYPES and str(payload.get("value")).strip().upper() == "OFF")


def code_change(
    payload: Mapping[str, Any],
) -> tuple[str, str, int, str | None, str | None] | None:
    """What a repository event does to a pull request or issue: ``(change, kind, number, who,
    title)``, change one of ``opened``, ``closed``, ``response``; None for anything else."""
    kind_of = payload.get("type")
    a = _attributes(payload)
    number = a.get("number", a.get("pr_number"))
    if not isinstance(kind_of, str) or not isinstance(number, int) or isinstance(number, bool):
        return None
    who = a.get("author") or a.get("actor")
    who = who if isinstance(who, str) else None
    action = a.get("action") or a.get("event")
    found = _code_kind(kind_of, a, action, who)
    if found is None:
        return None
    title = a.get("title")
    return (*found, title if isinstance(title, str) else None)


def _merger(payload: Mapping[str, Any]) -> str | None:
    """Who merged a pull request with this event, a person (REST ``pr_merged`` names them in
    ``merged_by``; in GH Archive the actor of a closing, merged PullRequestEvent); else None."""
    a = _attributes(payload)
    kind_of = payload.get("type")
    if kind_of == "pr_merged":
        who = a.get("merged_by")
    elif kind_of == "PullRequestEvent" and a.get("action") == "closed" and a.get("merged") is True:
        who = a.get("actor")
    else:
        return None
    return who if isinstance(who, str) and who and not _BOT.search(who) else None


def _code_kind(
    kind_of: str, a: Mapping[str, Any], action: Any, who: str | None
) -> tuple[str, str, int, str | None] | None:
    number = a.get("number", a.get("pr_number"))
    assert isinstance(number, int)
    if kind_of in _OPENED:
        return "opened", _OPENED[kind_of], number, who
    if kind_of in _CLOSED:
        return "closed", _CLOSED[kind_of], number, who
    # A draft marked ready for review asks for one from then on: it opens its wait.
    if kind_of in _ACTION_KIND and action in ("opened", "reopened", "ready_for_review"):
        return "opened", _ACTION_KIND[kind_of], number, a.get("author") or who
    if kind_of in _ACTION_KIND and action == "closed":
        return "closed", _ACTION_KIND[kind_of], number, who
    if kind_of == "issue_event" and action == "closed":
        return "closed", "pull_request" if a.get("pull_request") else "issue", number, who
    if kind_of in _REVIEWS:
        return "response", "pull_request", number, who
    if kind_of in _COMMENTS:
        return "response", "pull_request" if a.get("pull_request") else "issue", number, who
    return None


def passed_mark(
    since: datetime, before: datetime | None, waited: float, marks: tuple[float, ...]
) -> bool:
    """Whether a wait begun at ``since``, ``waited`` minutes long now, passed one of ``marks``
    (minutes) after ``before``, the last moment before now a reminder could be posted at (None:
    there was none): only then is now a moment to remind. A mark passed before that moment was
    reminded of at it."""
    then = -1.0 if before is None else (before - since).total_seconds() / 60
    return any(then < mark <= waited for mark in marks)


@dataclass(frozen=True, slots=True)
class Seen:
    """One figure of one earlier day at one time of day (a segment, a slot)."""

    day: date
    value: float


def _per_day(history: list[Seen], today: date) -> list[float]:
    """The latest figure of each earlier day (a day seen twice keeps its last)."""
    by_day: dict[date, float] = {}
    for seen in history:
        if seen.day < today:
            by_day[seen.day] = seen.value
    return list(by_day.values())


@dataclass
class Expectations:
    """One entity's usual figures, updated incrementally (module docstring)."""

    device_minutes: dict[str, list[float]] = field(default_factory=dict)
    _on_since: dict[str, datetime] = field(default_factory=dict)
    quiet: dict[int, list[Seen]] = field(default_factory=dict)  # home: per segment
    rooms: dict[int, list[tuple[date, frozenset[str]]]] = field(default_factory=dict)
    # Home, per day: the rooms with activity from ROUTINE_FIRST_SEGMENT on (a routine's place
    # in use today is read from this, not from every day's segments).
    rooms_used: dict[date, set[str]] = field(default_factory=dict)
    # Sports, per slot: whether the hour before it was active (1.0) or not (0.0), see
    # active_hour.
    active_hour: dict[int, list[Seen]] = field(default_factory=dict)
    steps_today: dict[int, list[Seen]] = field(default_factory=dict)
    sitting: dict[int, list[Seen]] = field(default_factory=dict)
    days: set[date] = field(default_factory=set)  # days with a decided point
    # When an outer door was last used with no other event since (None: something moved).
    out_since: datetime | None = None
    # Code: items opened in the stream and not answered by anyone but their author yet, with
    # when and by whom; first-response delays (minutes) of those answered, per kind.
    waiting: dict[tuple[str, int], tuple[datetime, str | None]] = field(default_factory=dict)
    response_minutes: dict[str, list[float]] = field(default_factory=dict)
    # Code: who opened each item opened in the stream, and the repository's maintainers: anyone
    # seen answering or reviewing another person's item, or merging a pull request. An issue a
    # maintainer opens is their own tracking of work, not a question waiting for an answer.
    authors: dict[tuple[str, int], str] = field(default_factory=dict)
    maintainers: set[str] = field(default_factory=set)
    # The last two distinct moments (oldest first) of the events seen (``moment_before``): in
    # a repository every event is a moment to post a reminder on the item it is about, so a
    # decision knows when the one before it was and what became late since then.
    moments: tuple[datetime, ...] = ()
    # When each code usual became known (its CODE_MIN_SAMPLES-th sample), per kind
    # (pull_request, issue, ci_run): before then no reminder of that kind could be posted.
    known_since: dict[str, datetime] = field(default_factory=dict)
    # Code: the waiting items that became late and wait their turn for a reminder, in turn
    # order (reminder_turn), as (kind, number, again: past the escalation mark).
    reminder_queue: tuple[tuple[str, int, bool], ...] = ()
    # code: failed checks not yet run again ((workflow, branch) -> when, and its name), and
    # the minutes from a failure to the next run of it or a push to its branch
    failed: dict[tuple[str, str], datetime] = field(default_factory=dict)
    follow_up_minutes: list[float] = field(default_factory=list)
    # Desktop, per day: active minutes and first start ("HH:MM") per app, the frames' spans,
    # and the switching seen at each point.
    app_minutes: dict[date, dict[str, float]] = field(default_factory=dict)
    app_first: dict[date, dict[str, str]] = field(default_factory=dict)
    spans: dict[date, list[tuple[str, str]]] = field(default_factory=dict)
    switches: list[Seen] = field(default_factory=list)
    # What a decision reads of the days before today (switching's usual, the main app, the
    # rooms' first uses) is worked out once per day asked, not at every point: it grows with
    # history. Each answer is kept with the day asked and the count of points of days before
    # the latest day asked seen since (``_past``), so a late point is never missed.
    _asked: date | None = field(default=None, compare=False, repr=False)
    _past: int = field(default=0, compare=False, repr=False)
    _memo: dict[str, tuple[date, int, Any]] = field(default_factory=dict, compare=False, repr=False)
    # The last reminder_turn worked out, with the moment asked and the count of events observed
    # then: a decision at an event and the event's commit ask the same.
    _observed: int = field(default=0, compare=False, repr=False)
    _turn: tuple[datetime, int, Any] | None = field(default=None, compare=False, repr=False)

    # -- learning -------------------------------------------------------------------------------

    def observe_event(self, event: EngineEvent) -> None:
        """A committed event: a door's or appliance's on-time ends when it goes off; an outer
        door with nothing after it may mean the resident went out."""
        if event.kind != POINT_KIND:
            outer = is_outer_door(event.payload)
            if outer:
                self.out_since = event.at
            elif (
                self.out_since is not None
                and event.at > self.out_since
                and someone_moved(event.payload)
            ):
                self.out_since = None
        if self.waiting or self.reminder_queue:
            # This event was a moment for the item whose turn it was, reminded of or not.
            self.reminder_queue = self._turn_at(event.at)[1]
        self._observed += 1
        moments = self.moments
        if not moments:
            self.moments = (event.at,)
        elif event.at > moments[-1]:
            self.moments = (moments[-1], event.at)
        kind_of = event.payload.get("type")
        if type(kind_of) is str and kind_of in _CODE_TYPES:
            change = code_change(event.payload)
            if change is not None:
                draft = _attributes(event.payload).get("draft") is True
                self._code(event.at, *change, draft=draft)
                merger = _merger(event.payload)
                if merger is not None:
                    self.maintainers.add(merger)
                return
            if self._checks(event, code_kind(event)):
                return
        device = device_of(event.payload)
        value = event.payload.get("value")
        if device is None or not isinstance(value, str):
            return
        state = value.strip().upper()
        if state in ON_VALUES:
            self._on_since.setdefault(device, event.at)
        elif state in OFF_VALUES and device in self._on_since:
            began = self._on_since.pop(device)
            minutes = max(0.0, (event.at - began).total_seconds() / 60)
            self.device_minutes.setdefault(device, []).append(minutes)

    def _code(
        self,
        at: datetime,
        change: str,
        kind: str,
        number: int,
        who: str | None,
        title: str | None,
        *,
        draft: bool = False,
    ) -> None:
        key = (kind, number)
        if change == "opened":
            if who is not None:
                self.authors[key] = who
            # A bot's item asks nobody, and work in progress (by its title, or a pull request
            # opened as a draft) asks for no review yet (what careful annotators skip); neither
            # is waiting on anyone.
            if who is not None and _BOT.search(who) or _WIP.search(title or "") or draft:
                return
            self.waiting[key] = (at, who)
        elif change == "closed":
            self.waiting.pop(key, None)
        elif who is not None and not _BOT.search(who):
            author = self.authors.get(key)
            if author is not None and who != author:
                self.maintainers.add(who)
            if key in self.waiting:
                opened, author = self.waiting[key]
                if who != author:
                    del self.waiting[key]
                    minutes = max(0.0, (at - opened).total_seconds() / 60)
                    found = self.response_minutes.setdefault(kind, [])
                    found.append(minutes)
                    if len(found) == CODE_MIN_SAMPLES:
                        self.known_since[kind] = at

    def _checks(self, event: EngineEvent, kind: str) -> bool:
        """A check run or a push (``kind``: the event's :func:`code_kind`): a failure waits for
        its follow-up (the next run of the same workflow on the same branch, or a push to that
        branch), which is timed."""
        a = _attributes(event.payload)
        if kind == "ci_run":
            name, branch = a.get("name"), a.get("branch")
            key = (
                name if isinstance(name, str) else "check",
                branch if isinstance(branch, str) else "",
            )
            failed = self.failed.pop(key, None)
            if failed is not None:
                self._followed_up(event.at, failed)
            if failed_run(event):
                self.failed[key] = event.at
            return True
        if event.payload.get("type") == "PushEvent":
            ref = a.get("ref")
            branch = ref.removeprefix("refs/heads/") if isinstance(ref, str) else ""
            for key in [k for k in self.failed if k[1] == branch]:
                self._followed_up(event.at, self.failed.pop(key))
            return True
        return False

    def _followed_up(self, at: datetime, failed: datetime) -> None:
        self.follow_up_minutes.append(max(0.0, (at - failed).total_seconds() / 60))
        if len(self.follow_up_minutes) == CODE_MIN_SAMPLES:
            self.known_since["ci_run"] = at

    def late_minutes(self, kind: str) -> float | None:
        """How long an item of ``kind`` waits before it is late here: twice this repository's
        median first response, and a day at the least (None: no usual yet)."""
        usual = self.response_usual_minutes(kind)
        return None if usual is None else max(RESPONSE_FACTOR * usual, WAIT_FLOOR_MIN)

    def reminder_turn(self, now: datetime) -> tuple[str, int, bool] | None:
        """The waiting pull request or issue whose turn it is to be reminded of at ``now``, an
        event of the repository, as (kind, number, again); None: nobody's.

        An item's turn comes once it is late (:meth:`late_minutes`), and a pull request's once
        more at :data:`ESCALATE` times that. Each event of the repository is a moment for one
        reminder, posted on its item: items that became late since the last moment join those
        still waiting for their reminder, and one is served per moment, pull requests first
        (finished work blocked on a reviewer), then the longest-waiting first, so each item is
        reminded of on its own, in turn, and none is left out. An item answered or closed
        while it waits leaves the queue. Before its kind's usual is known no item of it is
        late; an item already late when it becomes known joins at the next moment
        (:attr:`known_since`). A maintainer's own issue waits for nobody.
        """
        return self._turn_at(now)[0]

    def _turn_at(
        self, now: datetime
    ) -> tuple[tuple[str, int, bool] | None, tuple[tuple[str, int, bool], ...]]:
        held = self._turn
        if held is not None and held[0] == now and held[1] == self._observed:
            turn: tuple[tuple[str, int, bool] | None, tuple[tuple[str, int, bool], ...]]
            turn = held[2]
            return turn
        queue = [entry for entry in self.reminder_queue if entry[:2] in self.waiting]
        last = self.moments[-1] if self.moments else None
        if last is None or now > last:  # a new moment: what became late since the last one
            queued = {entry[:2] for entry in queue}
            fresh: list[tuple[str, int, bool]] = []
            kinds = ("pull_request", "issue")
            lates = {kind: self.late_minutes(kind) for kind in kinds}
            befores = {kind: self.reminded_moment(kind, now) for kind in kinds}
            for (kind, number), (opened, author) in self.waiting.items():
                late = lates.get(kind)
                if late is None:
                    continue
                waited = (now - opened).total_seconds() / 60
                if waited < late or (kind == "issue" and author in self.maintainers):
                    continue
                before = befores[kind]
                marks = (late, ESCALATE * late) if kind == "pull_request" else (late,)
                if not passed_mark(opened, before, waited, marks):
                    continue
                # A second reminder only after a first: the first mark passed at a moment before.
                again = before is not None and (before - opened).total_seconds() / 60 >= late
                if again or (kind, number) not in queued:
                    fresh.append((kind, number, again))
            renewed = {entry[:2] for entry in fresh if entry[2]}
            queue = [entry for entry in queue if entry[:2] not in renewed]
            queue.extend(fresh)
            queue.sort(key=self._turn_order)
        turn = (queue[0], tuple(queue[1:])) if queue else (None, ())
        self._turn = (now, self._observed, turn)
        return turn

    def _turn_order(self, entry: tuple[str, int, bool]) -> tuple[bool, datetime, int]:
        kind, number, _again = entry
        return kind != "pull_request", self.waiting[kind, number][0], number

    def reminded_moment(self, kind: str, now: datetime) -> datetime | None:
        """The last moment before ``now`` a reminder of ``kind`` (pull_request, issue, ci_run)
        could be posted at: the last event before it, if this repository's usual for the kind
        was known by then. Else None: an item already late when the usual became known was never
        reminded of, and is at the first moment after."""
        moment = self.moment_before(now)
        known = self.known_since.get(kind)
        return moment if moment is not None and known is not None and known < moment else None

    def moment_before(self, now: datetime) -> datetime | None:
        """The latest moment before ``now`` a code reminder could be posted at: the last event
        seen before it (None: none), whether or not the event at ``now`` was observed yet."""
        return next((t for t in reversed(self.moments) if t < now), None)

    def follow_up_usual_minutes(self) -> float | None:
        """This repository's median time from a failed check to its follow-up, once it has
        seen :data:`CODE_MIN_SAMPLES` of them."""
        found = self.follow_up_minutes
        return _median(found) if len(found) >= CODE_MIN_SAMPLES else None

    def response_usual_minutes(self, kind: str) -> float | None:
        """This repository's median first response to a ``kind``, once it has seen
        :data:`CODE_MIN_SAMPLES` of them."""
        found = self.response_minutes.get(kind, [])
        return _median(found) if len(found) >= CODE_MIN_SAMPLES else None

    def observe_point(self, point: EngineEvent, day: date) -> None:
        """A decided point of a home or sports stream: its figures join its time of day."""
        if point.kind != POINT_KIND:
            return
        if self._asked is not None and day < self._asked:
            self._past += 1
        p = point.payload
        self.days.add(day)
        segment = p.get("segment")
        if isinstance(segment, int):
            quiet = as_number(p.get("quiet_min"))
            if quiet is not None:
                self.quiet.setdefault(segment, []).append(Seen(day, quiet))
            rooms = p.get("rooms")
            if isinstance(rooms, Mapping):
                active = frozenset(str(r) for r, n in rooms.items() if as_number(n))
                self.rooms.setdefault(segment, []).append((day, active))
                if segment >= ROUTINE_FIRST_SEGMENT:
                    self.rooms_used.setdefault(day, set()).update(active)
        if p.get("type") == "frame_end":
            self._frame(p, day)
        slot = p.get("slot")
        if isinstance(slot, int):
            # Every earlier day the tracker reported the slot counts, worn in the hour or not:
            # an hour it recorded no movement in is one this person did not move in, whether
            # they sat, slept or left it on the nightstand, so sitting then now is nothing
            # unusual and an hour rarely active is not "usually active". (Whether the current
            # hour was worn decides whether anyone can be reached: usual.py.)
            for name, into in (
                ("steps_today", self.steps_today),
                ("sedentary_min_last_60", self.sitting),
            ):
                number = as_number(p.get(name))
                if number is not None:
                    into.setdefault(slot, []).append(Seen(day, number))
            moved = active_hour(p)
            if moved is not None:
                self.active_hour.setdefault(slot, []).append(Seen(day, 1.0 if moved else 0.0))

    def _frame(self, p: Mapping[str, Any], day: date) -> None:
        app, start, end = p.get("app"), p.get("start"), p.get("end")
        minutes = as_number(p.get("minutes"))
        if isinstance(app, str) and minutes is not None:
            used = self.app_minutes.setdefault(day, {})
            used[app] = used.get(app, 0.0) + minutes
            if isinstance(start, str):
                self.app_first.setdefault(day, {}).setdefault(app, start)
        if isinstance(start, str) and isinstance(end, str):
            self.spans.setdefault(day, []).append((start, end))
        switches = as_number(p.get("switches_30"))
        if switches is not None:
            self.switches.append(Seen(day, switches))

    def _before(self, name: str, today: date, work: Callable[[], Any]) -> Any:
        """``work()``, an answer read from the days before ``today`` only, kept for that day
        (the fields' comment above)."""
        held = self._memo.get(name)
        if held is not None and held[0] == today and held[1] == self._past:
            return held[2]
        found = work()
        self._memo[name] = (today, self._past, found)
        if self._asked is None or today > self._asked:
            self._asked = today
        return found

    def _earlier_switches(self, today: date) -> tuple[list[float], int]:
        """Switching at the points of the days before ``today``, sorted, and their days."""

        def work() -> tuple[list[float], int]:
            earlier = [s for s in self.switches if s.day < today]
            return sorted(s.value for s in earlier), len({s.day for s in earlier})

        found: tuple[list[float], int] = self._before("switches", today, work)
        return found

    def switches_usual(self, today: date) -> tuple[float, int] | None:
        """The 95th percentile of switching at this person's earlier points, and over how many
        days; None before :data:`SWITCH_MIN_MOMENTS` points."""
        earlier, days = self._earlier_switches(today)
        if len(earlier) < SWITCH_MIN_MOMENTS:
            return None
        return quantile(earlier, SWITCH_QUANTILE), days

    def switches_below(self, today: date, switches: float) -> float:
        """The share of the earlier points with less switching than ``switches``."""
        earlier, _ = self._earlier_switches(today)
        return bisect_left(earlier, switches) / len(earlier) if earlier else 0.0

    def main_app(self, today: date) -> tuple[str, list[str], int, str] | None:
        """The app most used on at least :data:`MAIN_APP_SHARE` of the earlier days of today's
        kind (:data:`WEEKEND`), its first starts on those days ("HH:MM"), the number of those
        days and what they are in words (``weekdays``, ``weekend days`` or ``days``); None if
        there is none."""
        found: tuple[str, list[str], int, str] | None = self._before(
            "main_app", today, lambda: self._main_app(today)
        )
        return found

    def _main_app(self, today: date) -> tuple[str, list[str], int, str] | None:
        earlier = [d for d in self.app_minutes if d < today]
        weekend = today.weekday() in WEEKEND
        alike = of_kind(earlier, today)
        said = "days"
        if len(alike) >= MIN_DAYS or weekend:
            earlier, said = alike, "weekend days" if weekend else "weekdays"
        if len(earlier) < MIN_DAYS:
            return None
        mains: dict[str, list[date]] = {}
        for d in earlier:
            used = self.app_minutes[d]
            mains.setdefault(max(sorted(used), key=lambda a: used[a]), []).append(d)
        app, days = max(sorted(mains.items()), key=lambda item: len(item[1]))
        if len(days) < MAIN_APP_SHARE * len(earlier):
            return None
        return app, sorted(self.app_first[d][app] for d in days), len(earlier), said

    def _room_firsts(self, today: date) -> tuple[dict[str, dict[date, int]], frozenset[date]]:
        """Per room, the segment of its first use on each earlier day it was used (from
        :data:`ROUTINE_FIRST_SEGMENT`; earlier activity continues the night); and the earlier
        days with a point."""

        def work() -> tuple[dict[str, dict[date, int]], frozenset[date]]:
            firsts: dict[str, dict[date, int]] = {}
            earlier: set[date] = set()
            for segment, seen in self.rooms.items():
                for day, active in seen:
                    if day >= today:
                        continue
                    earlier.add(day)
                    if segment < ROUTINE_FIRST_SEGMENT:
                        continue
                    for room in active:
                        by_day = firsts.setdefault(room, {})
                        by_day[day] = min(by_day.get(day, segment), segment)
            return firsts, frozenset(earlier)

        found: tuple[dict[str, dict[date, int]], frozenset[date]] = self._before(
            "room_firsts", today, work
        )
        return found

    def room_first_uses(self, today: date) -> tuple[dict[str, list[int]], int]:
        """Per room, the segments of its first use on the earlier days usual for today
        (:func:`days_like`), sorted (:meth:`_room_firsts`), leaving out a room whose first use
        on today's kind of day differs (:func:`firsts_like`); and the number of those days."""

        def work() -> tuple[dict[str, list[int]], int]:
            firsts, earlier = self._room_firsts(today)
            days = days_like(earlier, today)
            found = {room: firsts_like(by_day, earlier, today) for room, by_day in firsts.items()}
            return {room: starts for room, starts in found.items() if starts is not None}, len(days)

        found: tuple[dict[str, list[int]], int] = self._before("room_first_uses", today, work)
        return found

    def up_firsts(self, today: date) -> tuple[list[int], int]:
        """The segment of the first activity outside the places of sleep on each earlier day
        usual for today that had one (:meth:`_room_firsts`, :func:`days_like`), sorted: when the
        resident is usually up and about (none where today's kind of day differs); and the
        number of those days."""

        def work() -> tuple[list[int], int]:
            firsts, earlier = self._room_firsts(today)
            up: dict[date, int] = {}
            for room, by_day in firsts.items():
                if is_sleep_place(room):
                    continue
                for day, segment in by_day.items():
                    up[day] = min(up.get(day, segment), segment)
            return firsts_like(up, earlier, today) or [], len(days_like(earlier, today))

        found: tuple[list[int], int] = self._before("up_firsts", today, work)
        return found

    # -- what is usual ----------------------------------------------------------------------------

    def device_usual_minutes(self, device: str) -> float | None:
        """The device's usual longest on-time in minutes (its 95th percentile), None until it
        has closed :data:`DEVICE_MIN_EPISODES` times."""
        found = self.device_minutes.get(device, [])
        if len(found) < DEVICE_MIN_EPISODES:
            return None
        return quantile(found, DEVICE_QUANTILE)

    def device_typical_minutes(self, device: str) -> tuple[float, int] | None:
        """The device's typical on-time in minutes (the median of its closed on-times) and how
        many there are, None before it has closed once; read where it has closed fewer than
        :data:`DEVICE_MIN_EPISODES` times (:data:`DEVICE_TYPICAL_QUANTILE`)."""
        found = self.device_minutes.get(device, [])
        if not found:
            return None
        return quantile(found, DEVICE_TYPICAL_QUANTILE), len(found)

    def device_shorter_share(self, device: str, minutes: float) -> float:
        """The share of the device's closed on-times shorter than ``minutes``."""
        return share_below(self.device_minutes.get(device, []), minutes)

    def device_longest(self, device: str) -> float | None:
        found = self.device_minutes.get(device, [])
        return max(found) if found else None

    def quiet_usual_share(self, segment: int, quiet: float, today: date) -> tuple[float, int]:
        """On what share of the earlier days the home was at least this still at this
        segment's close, and over how many days."""
        earlier = _per_day(self.quiet.get(segment, []), today)
        if not earlier:
            return 0.0, 0
        return sum(1 for q in earlier if q >= quiet) / len(earlier), len(earlier)

    def room_usual_share(self, segment: int, room: str, today: date) -> tuple[float, int]:
        """On what share of the earlier days ``room`` was active in this segment."""
        by_day: dict[date, frozenset[str]] = {}
        for day, active in self.rooms.get(segment, []):
            if day < today:
                by_day[day] = active
        if not by_day:
            return 0.0, 0
        return sum(1 for a in by_day.values() if room in a) / len(by_day), len(by_day)

    def slot_share(
        self, figures: dict[int, list[Seen]], slot: int, today: date, at_least: float
    ) -> tuple[float, int]:
        earlier = _per_day(figures.get(slot, []), today)
        if not earlier:
            return 0.0, 0
        return sum(1 for v in earlier if v >= at_least) / len(earlier), len(earlier)

    def slot_share_above(
        self, figures: dict[int, list[Seen]], slot: int, today: date, value: float
    ) -> float:
        """On what share of the earlier days the figure at this slot was above ``value``."""
        earlier = _per_day(figures.get(slot, []), today)
        return sum(1 for v in earlier if v > value) / len(earlier) if earlier else 0.0

    def slot_median(self, figures: dict[int, list[Seen]], slot: int, today: date) -> float | None:
        earlier = _per_day(figures.get(slot, []), today)
        return _median(earlier) if len(earlier) >= MIN_DAYS else None


MINUTES_PER_DAY = 24 * 60
DAYS_ONLY_FROM = 7  # our choice: from a week on, the hours no longer change what a reader does


def minutes_words(minutes: float) -> str:
    """A duration as a person says it: ``"under a minute"``, ``"9 minutes"``, ``"3 hours 10
    minutes"``; past a day, days and whole hours (``"1 day 2 hours"``); past a week, whole
    days (``"70 days"``). A review waiting ten weeks is not read in hours and minutes."""
    whole = int(round(minutes))
    if whole < 1:
        return "under a minute"
    days, rest = divmod(whole, MINUTES_PER_DAY)
    hours, rest = divmod(rest, 60)
    if days >= DAYS_ONLY_FROM:
        return _count(days, "day")
    if days:
        return " ".join(_count(n, unit) for n, unit in ((days, "day"), (hours, "hour")) if n)
    return " ".join(_count(n, unit) for n, unit in ((hours, "hour"), (rest, "minute")) if n)


def within_words(minutes: float) -> str:
    """``"within 9 minutes"``, or ``"in under a minute"`` (never "within under a minute")."""
    said = minutes_words(minutes)
    return f"in {said}" if said.startswith("under") else f"within {said}"


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'s' if n != 1 else ''}"


def since_minutes(now: datetime, since: str) -> float | None:
    """Minutes from a point's ``since`` (local ISO time) to ``now``."""
    try:
        began = datetime.fromisoformat(since)
    except ValueError:
        return None
    if began.tzinfo is None:
        return None
    return max(0.0, (now - began) / timedelta(minutes=1))
