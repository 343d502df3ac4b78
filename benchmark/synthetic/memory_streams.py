"""SYNTHETIC 90-day event streams, one per scope, with planted routines for the ProactMem benchmark.

Nothing here was recorded from a person, a home or a repository: every event is invented by a
seeded generator and only *shaped* like what the importers store (``aframes_web/streams/
importers``), so ``validate_batch`` accepts it and the trajectory extractors
(``memory/engine/extract``) cut the segments the routines are meant to show:

* **sports** (HeartSteps): five ``decision_point`` observations a day (the attributes the
  HeartSteps importer writes) and Jawbone minute ``steps`` rows: a weekday morning walk and a
  daily evening walk (>= 100 steps/min for 15-25 minutes: ``step_bout``), two weekday desk hours
  of explicit 0-3 step minutes (``sedentary``) and scattered light minutes. Deviation: the
  evening walk is skipped on about one day in five; the fifth decision point falls just before
  that walk's window closes, so the rules policy has a moment to suggest it.
* **home** (CASAS): motion ON/OFF pairs and door OPEN/CLOSE events from sensors with rooms, a
  morning routine (bedroom, bathroom, kitchen breakfast with the fridge door, leaving by the
  front door on weekdays) and an evening one, hourly temperature readings. The home gets up an
  hour later at weekends and, on about one day in four, more than an hour late: what tells the
  morning routine from a fixed habit. Deviation: breakfast is skipped on about one day in eight.
* **code** (GitHub): GH Archive ``PullRequestEvent`` / ``PullRequestReviewEvent`` /
  ``IssuesEvent`` / ``IssueCommentEvent`` and REST ``workflow_run`` observations of one
  repository with a weekday rhythm: pull requests opened in the morning, CI minutes later, a
  review within about two hours, merges in the afternoon, issues now and then. Deviation: about
  one pull request in six gets no review, and a comment on it arrives later the same day.
* **desktop**: days of ``benchmark.synthetic.desktop`` (one monitor), bounded to its snapshot
  rows, one kept per app or window change and otherwise at most one per
  :data:`DESKTOP_MIN_GAP_S` (a full synthetic day has ~4,000 rows; see the module's use in
  ``perf/memory.py`` for why it is bounded).

Every stream is a list of ingestion items (``occurred_at``, ``kind``, ``source_key``,
``payload``) sorted by (time, source key); the same (scope, days, seed, start) always gives the
same list.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from benchmark.synthetic.desktop import generate_day as desktop_day

Item = dict[str, Any]

SCOPES = ("sports", "home", "code", "desktop")
START = date(2026, 1, 7)  # a Wednesday: a 90-day stream ends on a Monday, a working day
ZONES = {
    "sports": "America/New_York",
    "home": "America/Los_Angeles",
    "code": "Europe/Berlin",
    "desktop": "Europe/Berlin",
}
# Our bound: a snapshot every 14 s on average over a ~9 h day is ~2,400 rows; one a minute (and
# every app or window change) keeps the day's frames while the engine's per-event work stays
# tractable for a 90-day replay.
DESKTOP_MIN_GAP_S = 60


def _rng(*parts: object) -> random.Random:
    """A generator seeded from the parts; stable across runs and Python versions (no hash())."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _at(day: date, zone: ZoneInfo, hour: int, minute: float) -> datetime:
    """Local ``hour:minute`` (fractional minutes allowed, may pass 60) on ``day``, aware."""
    base = datetime.combine(day, time(hour), tzinfo=zone)
    return base + timedelta(minutes=minute)


# -- sports -------------------------------------------------------------------------------------

_SLOTS = ((8, 0), (12, 30), (15, 30), (18, 30), (19, 45))  # HeartSteps: five decision times a day
_SPORTS_USER = "bench-user"


def _sports_day(day: date, zone: ZoneInfo, seed: int, first_index: int) -> list[Item]:
    rng = _rng("sports", seed, day.toordinal())
    weekday = day.weekday() < 5
    items: list[Item] = []
    for slot, (hour, minute) in enumerate(_SLOTS, start=1):
        at = _at(day, zone, hour, minute + rng.randint(-8, 8) + rng.random())
        if slot == 5:  # just before the evening walk's window closes (module docstring)
            at = _at(day, zone, hour, minute + rng.randint(0, 8) + rng.random())
        sent = rng.random() < 0.4
        location = ("home", "work", "work", "other", "home")[slot - 1]
        if not weekday and slot in (2, 3):
            location = "other"
        attributes: dict[str, Any] = {
            "decision_index": first_index + slot - 1,
            "slot": slot,
            "local_time": at.strftime("%H:%M"),
            "timezone": zone.key,
            "connected": True,
            "available": rng.random() < 0.9,
            "randomized": True,
            "snoozed": rng.random() < 0.04,
            "in_transit": slot == 1 and weekday and rng.random() < 0.2,
            "recognized_activity": "still" if rng.random() < 0.85 else "walking",
            "location": location,
            "weather": rng.choice(("clear", "cloudy", "rain")),
            "temperature": round(rng.uniform(-5, 25), 1),
        }
        if sent:
            attributes["suggestion"] = rng.choice(("active", "sedentary"))
        items.append(
            {
                "occurred_at": _iso(at),
                "kind": "observation",
                "source_key": f"heartsteps:{_SPORTS_USER}:decision:{first_index + slot - 1}",
                "payload": {
                    "type": "decision_point",
                    "value": 1 if sent else 0,
                    "attributes": attributes,
                    "private": {"response": rng.choice(("good", "meh", "no response"))},
                },
            }
        )
    minutes: dict[int, int] = {}  # local minute of the day -> steps in it

    def run(start: int, length: int, low: int, high: int) -> None:
        for m in range(start, start + length):
            minutes[m] = rng.randint(low, high)

    if weekday and rng.random() < 0.9:
        run(8 * 60 + 10 + rng.randint(0, 10), 15 + rng.randint(0, 5), 100, 135)  # morning walk
    if rng.random() >= 0.2:  # the deviation: no evening walk
        run(18 * 60 + 40 + rng.randint(0, 10), 20 + rng.randint(0, 5), 105, 140)
    if weekday:  # desk hours: explicit zero (or near-zero) rows
        run(10 * 60 + rng.randint(0, 10), 50, 0, 3)
        run(14 * 60 + rng.randint(0, 10), 50, 0, 3)
    for _ in range(30):  # light, scattered activity that makes no bout
        m = rng.randint(7 * 60, 22 * 60)
        minutes.setdefault(m, rng.randint(5, 60))
    midnight = datetime.combine(day, time(0), tzinfo=zone)
    for m, steps in sorted(minutes.items()):
        start = (midnight + timedelta(minutes=m)).astimezone(UTC)
        items.append(
            {
                "occurred_at": _iso(start + timedelta(minutes=1)),  # stamped at the minute's end
                "kind": "observation",
                "source_key": f"heartsteps:{_SPORTS_USER}:jawbone:{start:%Y-%m-%dT%H:%M:%SZ}",
                "payload": {
                    "type": "steps",
                    "value": steps,
                    "unit": "count",
                    "attributes": {"resolution": "minute", "source": "jawbone"},
                },
            }
        )
    return items


# -- home ---------------------------------------------------------------------------------------

_SENSORS = {
    "bedroom": "M001",
    "bathroom": "M002",
    "kitchen": "M003",
    "living": "M004",
    "office": "M005",
    "hall": "M006",
}
_DOORS = {"front": ("D001", "hall"), "fridge": ("D002", "kitchen")}


class _Home:
    def __init__(self, day: date, zone: ZoneInfo, rng: random.Random) -> None:
        self.day, self.zone, self.rng = day, zone, rng
        self.items: list[Item] = []

    def _add(self, at: datetime, kind: str, sensor: str, value: Any, room: str) -> None:
        local = at.astimezone(self.zone)
        self.items.append(
            {
                "occurred_at": _iso(at),
                "kind": "observation",
                "source_key": f"casas:{local:%Y-%m-%dT%H:%M:%S.%f}:{sensor}:{value}",
                "payload": {
                    "type": kind,
                    "value": value,
                    "attributes": {"sensor": sensor, "room": room},
                    "private": {"activity": "synthetic"},
                },
            }
        )

    def visit(self, room: str, hour: int, minute: float, length: float) -> None:
        """Motion ON/OFF pairs in ``room`` every one to four minutes for ``length`` minutes."""
        jitter = self.rng.uniform(-8, 8)
        t = minute + jitter
        end = t + length * self.rng.uniform(0.8, 1.2)
        sensor = _SENSORS[room]
        while t < end:
            on = _at(self.day, self.zone, hour, t)
            self._add(on, "motion", sensor, "ON", room)
            self._add(
                on + timedelta(seconds=self.rng.uniform(5, 90)), "motion", sensor, "OFF", room
            )
            t += self.rng.uniform(1, 4)

    def door(self, which: str, hour: int, minute: float) -> None:
        sensor, room = _DOORS[which]
        at = _at(self.day, self.zone, hour, minute + self.rng.uniform(-3, 3))
        self._add(at, "door", sensor, "OPEN", room)
        self._add(at + timedelta(seconds=self.rng.uniform(3, 40)), "door", sensor, "CLOSE", room)


def _home_day(day: date, zone: ZoneInfo, seed: int) -> list[Item]:
    rng = _rng("home", seed, day.toordinal())
    home = _Home(day, zone, rng)
    late = 0 if day.weekday() < 5 else 60  # weekends start an hour later
    if rng.random() < 0.25:  # a late morning now and then
        late += rng.choice((75, 105))
    home.visit("bedroom", 6, 40 + late, 15)
    home.visit("bathroom", 7, late, 15)
    if rng.random() >= 0.12:  # the deviation: no breakfast
        home.visit("kitchen", 7, 20 + late, 25)
        home.door("fridge", 7, 25 + late)
    if day.weekday() < 5:
        home.visit("hall", 8, 0, 5)
        home.door("front", 8, 5)
        home.door("front", 17, 30)
        home.visit("hall", 17, 32, 4)
        home.visit("living", 17, 40, 60)
    else:
        home.visit("office", 10, 0, 90)
        home.visit("kitchen", 12, 30, 30)
        home.visit("living", 14, 0, 120)
    home.visit("kitchen", 18, 50, 40)
    home.door("fridge", 18, 55)
    home.visit("living", 19, 35, 140)
    home.visit("bathroom", 22, 10, 10)
    home.visit("bedroom", 22, 25, 15)
    for hour in range(0, 24, 2):  # ambient readings: no activity, but what a home reports
        at = _at(day, zone, hour, rng.uniform(0, 5))
        home._add(at, "temperature", "T001", round(rng.uniform(18, 23), 1), "living")
    return home.items


# -- code ---------------------------------------------------------------------------------------

_REPO = "bench-org/bench-repo"
_DEVS = ("mschulz", "jweber", "aylink", "tfischer", "pnair")
_TITLES = (
    "Add JSONL importer for event exports",
    "Fix time zone of the day summary",
    "Speed up the day close",
    "Document the decide endpoint",
    "Retry the broker on connection loss",
    "Cut long titles in the audit page",
)


class _Repo:
    """One repository's counters across days, so numbers and ids keep increasing."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.number = 100
        self.event_id = 30_000_000_000
        self.run_id = 9_000_000
        self.open_issues: list[int] = []

    def next_event(self) -> int:
        self.event_id += 1
        return self.event_id


def _gh(repo: _Repo, at: datetime, kind: str, actor: str, attributes: dict[str, Any]) -> Item:
    attributes = {"actor": actor, **{k: v for k, v in attributes.items() if v is not None}}
    return {
        "occurred_at": _iso(at),
        "kind": "observation",
        "source_key": f"gh:{repo.next_event()}",
        "payload": {"type": kind, "value": None, "attributes": attributes},
    }


def _ci(repo: _Repo, at: datetime, branch: str, actor: str, failed: bool) -> Item:
    repo.run_id += 1
    return {
        "occurred_at": _iso(at),
        "kind": "observation",
        "source_key": f"ghrest:workflow_run:{repo.run_id}:1",
        "payload": {
            "type": "workflow_run",
            "value": None,
            "attributes": {
                "name": "CI",
                "event": "pull_request",
                "status": "completed",
                "conclusion": "failure" if failed else "success",
                "branch": branch,
                "sha": f"{repo.run_id:040x}"[-40:],
                "run_number": repo.run_id - 9_000_000,
                "attempt": 1,
                "actor": actor,
                "run_id": repo.run_id,
            },
        },
    }


def _code_day(day: date, zone: ZoneInfo, repo: _Repo) -> list[Item]:
    rng = _rng("code", repo.seed, day.toordinal())
    items: list[Item] = []
    if day.weekday() >= 5:
        if repo.open_issues and rng.random() < 0.3:  # a weekend comment, now and then
            number = rng.choice(repo.open_issues)
            at = _at(day, zone, rng.randint(10, 20), rng.uniform(0, 59))
            items.append(
                _gh(
                    repo,
                    at,
                    "IssueCommentEvent",
                    rng.choice(_DEVS),
                    {"action": "created", "number": number, "title": "Weekend question"},
                )
            )
        return items
    for _ in range(rng.randint(1, 3)):
        repo.number += 1
        number, author = repo.number, rng.choice(_DEVS)
        title, branch = rng.choice(_TITLES), f"feature/{repo.number}"
        reviewer = rng.choice([d for d in _DEVS if d != author])
        opened = _at(day, zone, 9, rng.uniform(30, 90))
        pr = {"number": number, "title": title, "author": author, "head": branch, "base": "main"}
        items.append(
            _gh(
                repo,
                opened,
                "PullRequestEvent",
                author,
                {
                    "action": "opened",
                    **pr,
                    "state": "open",
                    "merged": False,
                    "draft": False,
                    "commits": rng.randint(1, 6),
                    "additions": rng.randint(5, 400),
                    "deletions": rng.randint(0, 120),
                    "changed_files": rng.randint(1, 12),
                },
            )
        )
        failed = rng.random() < 0.15
        items.append(
            _ci(repo, opened + timedelta(minutes=rng.uniform(4, 12)), branch, author, failed)
        )
        if rng.random() < 1 / 6:  # the deviation: nobody reviews; someone asks later that day
            asked = opened + timedelta(minutes=rng.uniform(140, 170))
            items.append(
                _gh(
                    repo,
                    asked,
                    "IssueCommentEvent",
                    author,
                    {"action": "created", "number": number, "title": title, "pull_request": True},
                )
            )
            continue
        reviewed = opened + timedelta(minutes=rng.uniform(50, 110))
        items.append(
            _gh(
                repo,
                reviewed,
                "PullRequestReviewEvent",
                reviewer,
                {
                    "action": "created",
                    "number": number,
                    "title": title,
                    "state": "approved" if not failed else "changes_requested",
                    "review_id": repo.next_event(),
                },
            )
        )
        if failed:
            pushed = reviewed + timedelta(minutes=rng.uniform(20, 60))
            items.append(
                _gh(
                    repo,
                    pushed,
                    "PullRequestEvent",
                    author,
                    {"action": "synchronize", **pr, "state": "open", "merged": False},
                )
            )
            items.append(_ci(repo, pushed + timedelta(minutes=8), branch, author, False))
            reviewed = pushed + timedelta(minutes=30)
        merged = max(reviewed + timedelta(minutes=20), _at(day, zone, 14, rng.uniform(0, 180)))
        items.append(
            _gh(
                repo,
                merged,
                "PullRequestEvent",
                reviewer,
                {"action": "closed", **pr, "state": "closed", "merged": True},
            )
        )
    if rng.random() < 0.5:
        repo.number += 1
        at = _at(day, zone, rng.randint(9, 16), rng.uniform(0, 59))
        reporter = rng.choice(_DEVS)
        items.append(
            _gh(
                repo,
                at,
                "IssuesEvent",
                reporter,
                {
                    "action": "opened",
                    "number": repo.number,
                    "title": "Crash on empty batch",
                    "state": "open",
                    "labels": ["bug"],
                },
            )
        )
        repo.open_issues.append(repo.number)
    if repo.open_issues and rng.random() < 0.4:
        number = repo.open_issues.pop(0)
        at = _at(day, zone, 16, rng.uniform(0, 90))
        items.append(
            _gh(
                repo,
                at,
                "IssuesEvent",
                rng.choice(_DEVS),
                {
                    "action": "closed",
                    "number": number,
                    "title": "Crash on empty batch",
                    "state": "closed",
                    "labels": ["bug"],
                },
            )
        )
    return items


# -- desktop ------------------------------------------------------------------------------------


def _desktop_day(day: date, zone: ZoneInfo, seed: int, gap_s: int) -> list[Item]:
    kept: list[Item] = []
    last: tuple[datetime, Any, Any] | None = None
    for record in desktop_day(day, seed=seed, tz=zone.key, monitors=1, person="bench"):
        if record["kind"] != "snapshot":
            continue
        at = datetime.fromisoformat(record["occurred_at"].replace("Z", "+00:00"))
        shown = (record["payload"].get("app"), record["payload"].get("window"))
        if last is not None and shown == last[1:] and at - last[0] < timedelta(seconds=gap_s):
            continue
        kept.append(record)
        last = (at, *shown)
    return kept


# -- streams ------------------------------------------------------------------------------------


def generate(
    scope: str,
    *,
    days: int = 90,
    seed: int = 7,
    start: date = START,
    desktop_gap_s: int = DESKTOP_MIN_GAP_S,
) -> list[Item]:
    """The SYNTHETIC stream of ``scope`` over ``days`` calendar days from ``start``, in order.

    ``desktop_gap_s`` bounds a desktop day (module docstring); tests pass a coarser one.
    """
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    zone = ZoneInfo(ZONES[scope])
    make: Callable[[date], list[Item]]
    if scope == "sports":
        counter = [1]

        def make(day: date) -> list[Item]:
            out = _sports_day(day, zone, seed, counter[0])
            counter[0] += len(_SLOTS)
            return out
    elif scope == "home":

        def make(day: date) -> list[Item]:
            return _home_day(day, zone, seed)
    elif scope == "code":
        repo = _Repo(seed)

        def make(day: date) -> list[Item]:
            return _code_day(day, zone, repo)
    else:

        def make(day: date) -> list[Item]:
            return _desktop_day(day, zone, seed, desktop_gap_s)

    items: list[Item] = []
    for offset in range(days):
        items += make(start + timedelta(days=offset))
    items.sort(key=lambda item: (item["occurred_at"], item["source_key"]))
    return items


def local_day(item: Item, scope: str) -> date:
    """The item's local day in its scope's zone."""
    at = datetime.fromisoformat(item["occurred_at"].replace("Z", "+00:00"))
    return at.astimezone(ZoneInfo(ZONES[scope])).date()
