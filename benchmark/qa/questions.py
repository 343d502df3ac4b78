"""The QA questions (Activity Frames §6.2): a fixed rule picks the days, eight questions a day.

Per day, in five categories (rank, time, count, fact, hallucination):

=====================  ==============  =================================================
question               category        answer the oracle gives
=====================  ==============  =================================================
dominant_app           rank            the app credited the most seconds
dominant_minutes       time            that app's credited minutes
app_count              count           how many distinct apps the day's rows name
pairwise               rank            which of the 2nd and 3rd ranked apps had more time
visited_domain         fact            yes: a hostname the day's URLs name
absent_domain          hallucination   no: a hostname the entity never visited
first_activity         time            the local time (HH:MM) of the day's first row
absent_app             hallucination   no: an app the entity was never seen using
=====================  ==============  =================================================

Everything here is a pure function of the oracle's figures, so the same days give the same
questions on every run and on every database.

The days (:func:`select_days`): a day qualifies when it has at least :data:`MIN_ROWS` snapshot
rows, at least two apps with credited time, the first strictly ahead of the second (a tie has
no dominant app), and at least one domain, so that every question can be asked. A capture that
names no website at all (an ActivityWatch export with the window watcher only, no browser
bucket) cannot say what was or was not visited: its days qualify without a domain, and the two
domain questions are skipped with that reason (:func:`skipped_questions`), never asked. Of the
qualifying days in date order, all are taken when there are at most ``n``; otherwise ``n``
evenly spaced ones, the first and the last always among them
(position ``round(i * (k - 1) / (n - 1))`` for ``i`` in ``0..n-1`` of ``k`` days).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

MIN_ROWS = 20  # fewer rows than this is a day someone barely touched the machine
QUESTIONS_PER_DAY = 8
CATEGORIES = ("rank", "time", "count", "fact", "hallucination")

# Apps and domains to ask about that a day must not show. The first of them (counted from a
# place fixed by the date) that the entity was never seen with is asked, so the question
# rotates from day to day but stays fixed for a day.
ABSENT_APPS = (
    "Blender", "AutoCAD", "GarageBand", "Final Cut Pro", "Steam", "Photoshop", "Tableau",
    "Minecraft", "Logic Pro", "SolidWorks",
)  # fmt: skip
ABSENT_DOMAINS = (
    "netflix.com", "twitch.tv", "booking.com", "espn.com", "etsy.com", "ikea.com",
    "airbnb.com", "pinterest.com", "tripadvisor.com", "imdb.com",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class DayFigures:
    """What the oracle says about one local day (times local, seconds of credited dwell)."""

    day: date
    timezone: str
    rows: int
    active_s: float
    app_seconds: tuple[tuple[str, float], ...]  # ranked: most credited first, ties by name
    apps: tuple[str, ...]  # distinct apps of the day's rows, sorted
    domains: tuple[str, ...]  # distinct hostnames, sorted
    first_activity: datetime | None
    last_activity: datetime | None
    apps_ever: frozenset[str] = field(default_factory=frozenset)  # every app of the entity
    domains_ever: frozenset[str] = field(default_factory=frozenset)

    @property
    def ranked_apps(self) -> tuple[str, ...]:
        return tuple(app for app, _ in self.app_seconds)

    @property
    def active_minutes(self) -> float:
        return self.active_s / 60.0

    def app_minutes(self, app: str) -> float:
        return dict(self.app_seconds)[app] / 60.0


class NoDays(ValueError):
    """No day of the entity qualifies for questions."""


@dataclass(frozen=True, slots=True)
class Question:
    """One question about one day, with the oracle's answer."""

    id: str  # "<day>/<kind>"
    day: str  # ISO date, local
    kind: str
    category: str
    text: str
    expected: str | float | int | bool
    # For pairwise: the app that must not be named as the answer.
    other: str | None = None
    # The app or domain the question names (dominant_minutes, the domain and absent-app ones).
    subject: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "day": self.day,
            "kind": self.kind,
            "category": self.category,
            "text": self.text,
            "expected": self.expected,
            "other": self.other,
            "subject": self.subject,
        }


DOMAIN_KINDS = ("visited_domain", "absent_domain")
NO_BROWSER = (
    "the capture names no website on any day (no browser history, e.g. an ActivityWatch export "
    "without a browser bucket): what was or was not visited cannot be known"
)


def _browses(figures: DayFigures) -> bool:
    """Whether the entity's capture names websites at all."""
    return bool(figures.domains_ever)


def skipped_questions(figures: DayFigures) -> list[tuple[str, str]]:
    """The questions of the table that are not asked about this day, each with why."""
    return [] if _browses(figures) else [(kind, NO_BROWSER) for kind in DOMAIN_KINDS]


def qualifies(figures: DayFigures) -> bool:
    credited = [seconds for _app, seconds in figures.app_seconds if seconds > 0]
    return (
        figures.rows >= MIN_ROWS
        and len(credited) >= 2
        and credited[0] > credited[1]  # one dominant app: no tie to guess between
        and (bool(figures.domains) or not _browses(figures))
        and _absent(ABSENT_APPS, figures.apps_ever, figures) is not None
        and (
            not _browses(figures)
            or _absent(ABSENT_DOMAINS, figures.domains_ever, figures) is not None
        )
    )


def select_days(days: Sequence[DayFigures], n: int) -> list[DayFigures]:
    """The days questions are asked about, by the rule in the module docstring."""
    if n < 1:
        raise ValueError(f"the number of days must be at least 1, got {n}.")
    eligible = sorted((d for d in days if qualifies(d)), key=lambda d: d.day)
    if not eligible:
        raise NoDays(
            f"no day has at least {MIN_ROWS} snapshot rows, two apps with credited time, one "
            "of them ahead, and (where the capture has browser history) a visited domain; "
            "import more desktop capture first."
        )
    k = len(eligible)
    if k <= n:
        return eligible
    if n == 1:
        return [eligible[-1]]
    return [eligible[round(i * (k - 1) / (n - 1))] for i in range(n)]


def _absent(candidates: Sequence[str], seen: frozenset[str], figures: DayFigures) -> str | None:
    lowered = {s.lower() for s in seen}
    start = figures.day.toordinal() % len(candidates)
    for offset in range(len(candidates)):
        candidate = candidates[(start + offset) % len(candidates)]
        # Substring both ways, as the grader matches names: "Steam" must not hide in
        # "Steam Link", nor "Photoshop" in "Adobe Photoshop 2025".
        if not any(candidate.lower() in s or s in candidate.lower() for s in lowered):
            return candidate
    return None


def _pair(figures: DayFigures) -> tuple[str, str]:
    """(more, less): the 2nd and 3rd ranked apps when they differ in credited time, otherwise
    the 1st and 2nd, so the answer is never a tie."""
    ranked = [(app, s) for app, s in figures.app_seconds if s > 0]
    if len(ranked) >= 3 and ranked[1][1] > ranked[2][1]:
        return ranked[1][0], ranked[2][0]
    return ranked[0][0], ranked[1][0]  # qualifies(): the first is ahead of the second


def day_questions(figures: DayFigures) -> list[Question]:
    """The questions about one qualifying day: all eight, less :func:`skipped_questions`."""
    if not qualifies(figures):
        raise ValueError(f"{figures.day} does not qualify for questions (see select_days)")
    day = figures.day.isoformat()
    top, top_s = figures.app_seconds[0]
    more, less = _pair(figures)
    first, second = sorted((more, less))
    browses = _browses(figures)
    visited = figures.domains[figures.day.toordinal() % len(figures.domains)] if browses else ""
    absent_domain = _absent(ABSENT_DOMAINS, figures.domains_ever, figures) if browses else ""
    absent_app = _absent(ABSENT_APPS, figures.apps_ever, figures)
    assert figures.first_activity is not None and absent_app  # qualifies()
    subjects = {
        "dominant_minutes": top,
        "visited_domain": visited,
        "absent_domain": absent_domain,
        "absent_app": absent_app,
    }
    items: list[tuple[str, str, str, str | float | int | bool, str | None]] = [
        (
            "dominant_app",
            "rank",
            "Which application did the user spend the most active time in?",
            top,
            None,
        ),
        (
            "dominant_minutes",
            "time",
            f"How many minutes of active time did the user spend in {top}?",
            round(top_s / 60.0, 2),
            None,
        ),
        (
            "app_count",
            "count",
            "How many distinct applications did the user use?",
            len(figures.apps),
            None,
        ),
        (
            "pairwise",
            "rank",
            f"Which of these two applications had more active time: {first} or {second}?",
            more,
            less,
        ),
        ("visited_domain", "fact", f"Did the user visit the website {visited}?", True, None),
        (
            "absent_domain",
            "hallucination",
            f"Did the user visit the website {absent_domain}?",
            False,
            None,
        ),
        (
            "first_activity",
            "time",
            "At what local time (HH:MM, 24-hour clock) was the user's first activity?",
            figures.first_activity.strftime("%H:%M"),
            None,
        ),
        (
            "absent_app",
            "hallucination",
            f"Did the user use the application {absent_app}?",
            False,
            None,
        ),
    ]
    skipped = {kind for kind, _ in skipped_questions(figures)}
    return [
        Question(f"{day}/{kind}", day, kind, category, text, expected, other, subjects.get(kind))
        for kind, category, text, expected, other in items
        if kind not in skipped
    ]
