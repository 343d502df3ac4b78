"""SYNTHETIC desktop capture: deterministic, realistic working days as our own event records.

No openly licensed real desktop-capture log exists (see ``../shared/data/README.md``), so desktop
tests and benchmarks use days generated here. Nothing in the output was captured from a person:
apps, windows, URLs, clicks and typed text are all invented, only shaped like real capture
(snapshot rows, input events and accessibility trees, several monitors, breaks, DST-correct
timestamps). The same seed and arguments always give byte-identical output.

    python -m benchmark.synthetic.desktop --start 2026-03-02 --days 5 --seed 7 --out week.jsonl

``--routines`` (off by default, so the output above never changes) has the person also perform
recurring routines on some weekdays, for the routine miner and the cost benchmark
(``generate_day``, Activity Frames §7.1).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from itertools import islice
from typing import Any, TextIO
from urllib.parse import quote_plus
from zoneinfo import ZoneInfo

Record = dict[str, Any]

SCREEN_W, SCREEN_H = 1920, 1080  # pixels of every synthetic monitor
ELEMENTS_SHARE = 0.2  # share of snapshots that carry an accessibility tree
RESOLVED_CLICK_SHARE = 0.75  # clicks whose element the accessibility API could name
FLICKER_P = 0.08  # chance that a hold of more than a minute is interrupted by a 5-15 s flicker
GLANCE_P = 0.12  # chance that a hold of more than 90 s includes focusing a side monitor
LOCK = "loginwindow"
LOCKED = "+lock"  # suffix of a pause during which the screen is locked
_H = 3600.0
_M = 60.0
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_DAY_US = 86_400_000_000


# --------------------------------------------------------------------------------------------
# What the synthetic person works on. Invented names and titles, stable across days.
# --------------------------------------------------------------------------------------------

_COLLEAGUES = (
    ("Mira Schulz", "mschulz"),
    ("Jonas Weber", "jweber"),
    ("Aylin Kaya", "aylink"),
    ("Tom Fischer", "tfischer"),
    ("Priya Nair", "pnair"),
    ("Lukas Braun", "lbraun"),
    ("Sofia Rossi", "srossi"),
    ("Daniel Okafor", "dokafor"),
)
_PR_TITLES = (
    "Add JSONL importer for event exports",
    "Validate timestamps with explicit offsets",
    "Compile day documents under a per-entity lock",
    "Fix DST handling in local day boundaries",
    "Materialise frames from day documents",
    "Add adjudication view to the workbench",
    "Drop typed text unless the team opted in",
    "Bulk conflict-skip inserts for ingestion",
    "Mine weekday regularities from trajectories",
    "Add MCP tool for frame search",
    "Cache LLM replies by prompt hash",
    "Make rebuild byte-identical to incremental",
    "Use a Postgres advisory lock for compiles",
    "Expose decide endpoint in the schema",
)
_ISSUE_TITLES = (
    "Compile fails for days with a DST change",
    "Duplicate events after retrying a batch",
    "Dashboard timeline is empty for monitor 1",
    "Clipboard text leaks into context block",
    "gzip JSONL import reports wrong progress",
    "Regularity stays active after violations",
    "Frames overlap at the lunch gap",
    "API answers 500 for NUL in payload",
    "Worker loses task on restart",
    "Slow day documents for 20k events",
)
_TICKETS = (
    "Ingest NDJSON over HTTP",
    "Timezone per entity",
    "Evidence pointers as explicit ids",
    "Annotation agreement report",
    "Benchmark replay from empty state",
    "Rate limit API tokens",
    "Export events as NDJSON",
    "Regularity lifecycle dashboard",
    "Synthetic desktop days",
    "Spike: time partitioning in Postgres",
    "Certify rebuild equals incremental",
    "Intervention control signatures",
)
_FILES = (
    "records.py",
    "services.py",
    "models.py",
    "views.py",
    "tasks.py",
    "importing.py",
    "selectors.py",
    "settings.py",
    "serializers.py",
    "segment.py",
    "document.py",
    "test_records.py",
    "test_ingest_api.py",
    "conftest.py",
    "urls.py",
    "pyproject.toml",
    "README.md",
    "Makefile",
)
_DJANGO_DOCS = (
    ("ref/models/querysets", "QuerySet API reference"),
    ("topics/db/transactions", "Database transactions"),
    ("ref/models/fields", "Model field reference"),
    ("topics/migrations", "Migrations"),
    ("ref/settings", "Settings"),
    ("topics/testing/tools", "Testing tools"),
    ("topics/db/queries", "Making queries"),
    ("howto/custom-management-commands", "How to create custom django-admin commands"),
    ("ref/models/constraints", "Constraints reference"),
    ("topics/i18n/timezones", "Time zones"),
)
_PYTHON_DOCS = (
    ("library/zoneinfo.html", "zoneinfo — IANA time zone support"),
    ("library/datetime.html", "datetime — Basic date and time types"),
    ("library/json.html", "json — JSON encoder and decoder"),
    ("library/sqlite3.html", "sqlite3 — DB-API 2.0 interface for SQLite databases"),
    ("library/argparse.html", "argparse — Parser for command-line options"),
)
# (tag, question title, what one types into the search bar to find it)
_QUESTIONS = (
    ("python", "How do I convert a naive datetime to UTC with zoneinfo?", "python zoneinfo to utc"),
    (
        "django",
        "Django bulk_create with ignore_conflicts does not return ids",
        "django bulk_create ignore_conflicts ids",
    ),
    (
        "django",
        "How to use select_for_update inside a Celery task",
        "select_for_update celery task",
    ),
    (
        "python",
        "Why does datetime.fromisoformat not accept Z in Python 3.10?",
        "fromisoformat Z python",
    ),
    ("postgresql", "pg_advisory_xact_lock vs pg_advisory_lock", "postgres advisory lock xact"),
    (
        "celery",
        "Celery acks_late and the visibility timeout with Redis",
        "celery acks_late visibility timeout",
    ),
    (
        "pytest",
        "pytest-django test database is not rolled back between tests",
        "pytest-django transactional db rollback",
    ),
    (
        "python",
        "Deterministic random numbers across Python versions",
        "python random seed deterministic across versions",
    ),
    ("htmx", "htmx hx-swap outerHTML loses event listeners", "htmx outerHTML event listeners"),
    ("sqlite", "SQLite says database is locked in WAL mode", "sqlite database is locked wal"),
)
_VIDEOS = (
    "Django in production: lessons learned",
    "PostgreSQL indexing deep dive",
    "lofi beats to code to",
    "Celery best practices",
    "Python 3.13: what's new",
    "Designing event-sourced systems",
    "Simple Made Easy",
    "Mechanical keyboard build log",
)
_NOTION = (
    "Standup notes",
    "Sprint planning",
    "Architecture notes",
    "1:1 notes",
    "Benchmark results",
    "Roadmap Q2",
    "Onboarding checklist",
)
_MEETING_NOTES = {
    "Standup": "Standup notes",
    "Sprint planning": "Sprint planning",
    "1:1": "1:1 notes",
}
_MAIL_SUBJECTS = (
    "Re: Aframes roadmap review",
    "Offsite planning",
    "Re: Benchmark numbers",
    "Your invoice for this month",
    "Security alert: new sign-in",
    "Weekly digest",
    "Re: Interview schedule",
    "Lunch on Friday?",
)
_CHANNELS = ("general", "dev", "aframes", "standup", "incidents", "random")
_SLACK_LINES = (
    "morning!",
    "lgtm, merging now",
    "pushed a fix for the DST bug",
    "standup in 5",
    "thanks!",
    "on it",
    "I'll pair on this after lunch",
    "CI is green again",
    "which branch is that on?",
    "brb",
    "sounds good",
    "can someone review {pr}?",
)
_COMMANDS = (
    "git status",
    "git pull --rebase",
    "pytest tests/test_records.py -q",
    "python manage.py runserver",
    "python manage.py migrate",
    "ruff check .",
    "git commit -am 'Fix DST boundaries'",
    "git push origin HEAD",
    "make test",
    "git log --oneline -5",
    "python manage.py shell",
    "git switch -c {branch}",
)
_COMMENTS = (
    "Looks good to me, one nit inline.",
    "Could we add a test for the DST case?",
    "Nice, this reads much better.",
    "Why not reuse validate_item here?",
    "Approved, thanks!",
    "This will need a migration.",
)
_REPLIES = ("Thanks, works for me.", "Sounds good, see you then.", "Will do by Friday.")
_NOTES = ("- blocked on review", "- ship importer this week", "- ask about Postgres partitions")
_CLIP_EDIT = (
    "validate_item",
    "ValidatedBatch",
    "from zoneinfo import ZoneInfo",
    "transaction.atomic(durable=True)",
    "def compile_day(",
    "source_key",
)
_CLIP_SHELL = (
    "IntegrityError: UNIQUE constraint failed: streams_event.source_key",
    "FAILED tests/test_records.py::test_rejects_naive_timestamps",
    "3f2c9e1",
)
_CLIP_READ = (
    "select_for_update(skip_locked=True)",
    'ZoneInfo("Europe/Berlin")',
    "bulk_create(objs, ignore_conflicts=True)",
    "pg_advisory_xact_lock",
)
_CLIP_MISC = ("https://zoom.us/j/93215530412", "Thursday 15:30", "see thread above")
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# What the routines of ``routines=True`` days type (SYNTHETIC, like everything here).
_MERCHANTS = ("Deutsche Bahn", "Lufthansa", "Uber", "Hotel Adlon", "Cafe Einstein", "Staples")
_EXPENSE_NOTES = ("Client visit", "Team offsite", "Conference travel", "Office supplies")
# Chance per weekday that the person performs each routine (activity frames §7.1 mines
# routines recurring on some days, not every day).
ROUTINE_CHANCE = {"triage": 0.8, "review": 0.6, "expense": 0.4}


def _derive(*parts: object) -> int:
    """A 64-bit seed from the parts; stable across runs and Python versions (no hash())."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _slug(text: str, sep: str = "-") -> str:
    words = "".join(c.lower() if c.isalnum() else " " for c in text).split()
    return sep.join(words)[:80]


@dataclass(frozen=True, slots=True)
class _World:
    org: str
    repo: str
    email: str
    key: str  # the Jira project key
    manager: str
    dev_browser: str
    prs: tuple[tuple[int, str, str], ...]  # number, title, author login
    issues: tuple[tuple[int, str], ...]
    tickets: tuple[tuple[int, str], ...]
    questions: tuple[tuple[int, str, str, str], ...]  # id, tag, title, query
    videos: tuple[tuple[str, str], ...]
    notion: tuple[tuple[str, str], ...]  # title, 32-hex page id
    mails: tuple[tuple[str, str], ...]  # subject, message id


def _world(seed: int, person: str) -> _World:
    rng = random.Random(_derive("world", seed, person))
    pr_numbers = sorted(rng.sample(range(120, 400), len(_PR_TITLES)))
    issue_numbers = sorted(rng.sample(range(40, 400), len(_ISSUE_TITLES)))
    ticket_numbers = sorted(rng.sample(range(100, 600), len(_TICKETS)))
    logins = [login for _, login in _COLLEAGUES]
    return _World(
        org="acme",
        repo="aframes",
        email=f"{_slug(person, '.') or 'someone'}@example.com",
        key="AF",
        manager=rng.choice(_COLLEAGUES)[0],
        dev_browser=rng.choice(("Firefox", "Firefox", "Google Chrome")),
        prs=tuple((n, t, rng.choice(logins)) for n, t in zip(pr_numbers, _PR_TITLES, strict=True)),
        issues=tuple(zip(issue_numbers, _ISSUE_TITLES, strict=True)),
        tickets=tuple(zip(ticket_numbers, _TICKETS, strict=True)),
        questions=tuple(
            (rng.randint(40_000_000, 79_999_999), tag, title, query)
            for tag, title, query in _QUESTIONS
        ),
        videos=tuple(("".join(rng.choices(_ALNUM + "-_", k=11)), title) for title in _VIDEOS),
        notion=tuple((title, f"{rng.getrandbits(128):032x}") for title in _NOTION),
        mails=tuple(
            (subject, "FMfcgz" + "".join(rng.choices(_ALNUM, k=26))) for subject in _MAIL_SUBJECTS
        ),
    )


# --------------------------------------------------------------------------------------------
# Accessibility trees: per app (and per site for browsers) a template of
# (role, name, [left, top, width, height] as screen fractions, parent index, flags).
# Flags: c = clickable, t = receives typing, s = scroll area. Names may hold {w} (the window
# title) and {l} (the scene's label: file, channel, page heading).
# --------------------------------------------------------------------------------------------

_El = tuple[str, str | None, tuple[float, float, float, float], int | None, str]

_BROWSER: tuple[_El, ...] = (
    ("AXWindow", "{w}", (0.0, 0.025, 1.0, 0.975), None, ""),
    ("AXToolbar", "Navigation", (0.0, 0.025, 1.0, 0.05), 0, ""),
    ("AXButton", "Back", (0.005, 0.035, 0.018, 0.03), 1, "c"),
    ("AXButton", "Reload", (0.045, 0.035, 0.018, 0.03), 1, "c"),
    ("AXTextField", "Address and search bar", (0.08, 0.033, 0.7, 0.034), 1, "ct"),
    ("AXWebArea", "{w}", (0.0, 0.075, 1.0, 0.925), 0, "s"),
)
_SITES: dict[str, tuple[_El, ...]] = {
    "github_pr": (
        ("AXHeading", "{l}", (0.2, 0.13, 0.6, 0.04), 5, ""),
        ("AXLink", "Conversation", (0.2, 0.2, 0.07, 0.025), 5, "c"),
        ("AXLink", "Files changed", (0.34, 0.2, 0.07, 0.025), 5, "c"),
        ("AXButton", "Review changes", (0.72, 0.25, 0.07, 0.03), 5, "c"),
        ("AXRadioButton", "Approve", (0.66, 0.42, 0.08, 0.025), 5, "c"),
        ("AXButton", "Merge pull request", (0.22, 0.76, 0.1, 0.035), 5, "c"),
        ("AXTextArea", "Add a comment", (0.22, 0.83, 0.5, 0.09), 5, "ct"),
    ),
    "github_issue": (
        ("AXHeading", "{l}", (0.2, 0.13, 0.6, 0.04), 5, ""),
        ("AXLink", "Labels", (0.78, 0.25, 0.06, 0.025), 5, "c"),
        ("AXTextArea", "Add a comment", (0.2, 0.7, 0.5, 0.12), 5, "ct"),
        ("AXButton", "Comment", (0.63, 0.84, 0.06, 0.035), 5, "c"),
        ("AXButton", "Close issue", (0.53, 0.84, 0.08, 0.035), 5, "c"),
    ),
    "docs": (
        ("AXHeading", "{l}", (0.22, 0.14, 0.5, 0.05), 5, ""),
        ("AXTextField", "Search documentation", (0.7, 0.09, 0.2, 0.035), 5, "ct"),
        ("AXLink", "Table of contents", (0.02, 0.2, 0.12, 0.025), 5, "c"),
        ("AXLink", "Previous page", (0.22, 0.92, 0.08, 0.025), 5, "c"),
        ("AXLink", "Next page", (0.64, 0.92, 0.08, 0.025), 5, "c"),
        ("AXButton", "Copy to clipboard", (0.68, 0.42, 0.02, 0.03), 5, "c"),
    ),
    "google": (
        ("AXTextField", "Search", (0.12, 0.1, 0.45, 0.04), 5, "ct"),
        ("AXLink", "{l}", (0.12, 0.22, 0.4, 0.03), 5, "c"),
        ("AXLink", "Images", (0.16, 0.16, 0.04, 0.025), 5, "c"),
    ),
    "stackoverflow": (
        ("AXHeading", "{l}", (0.2, 0.13, 0.6, 0.04), 5, ""),
        ("AXButton", "Up vote", (0.2, 0.25, 0.02, 0.03), 5, "c"),
        ("AXButton", "Copy", (0.66, 0.45, 0.03, 0.025), 5, "c"),
        ("AXLink", "Share", (0.24, 0.6, 0.03, 0.02), 5, "c"),
        ("AXButton", "Save this question", (0.2, 0.32, 0.02, 0.03), 5, "c"),
    ),
    "gmail": (
        ("AXButton", "Compose", (0.01, 0.1, 0.08, 0.05), 5, "c"),
        ("AXLink", "Inbox", (0.01, 0.18, 0.1, 0.03), 5, "c"),
        ("AXTextField", "Search mail", (0.15, 0.09, 0.4, 0.045), 5, "ct"),
        ("AXButton", "Archive", (0.17, 0.16, 0.02, 0.03), 5, "c"),
        ("AXButton", "Reply", (0.86, 0.22, 0.02, 0.03), 5, "c"),
        ("AXHeading", "{l}", (0.17, 0.21, 0.5, 0.04), 5, ""),
    ),
    "calendar": (
        ("AXButton", "Today", (0.14, 0.09, 0.04, 0.035), 5, "c"),
        ("AXButton", "Next week", (0.2, 0.09, 0.02, 0.035), 5, "c"),
        ("AXButton", "Create", (0.01, 0.09, 0.07, 0.05), 5, "c"),
        ("AXButton", "Standup, 10:00", (0.2, 0.3, 0.11, 0.03), 5, "c"),
        ("AXLink", "Join with Zoom", (0.42, 0.45, 0.09, 0.03), 5, "c"),
    ),
    "youtube": (
        ("AXGroup", "Video player", (0.05, 0.12, 0.62, 0.62), 5, ""),
        ("AXButton", "Pause (k)", (0.06, 0.7, 0.02, 0.03), 6, "c"),
        ("AXButton", "Full screen (f)", (0.64, 0.7, 0.02, 0.03), 6, "c"),
        ("AXButton", "Like", (0.4, 0.8, 0.05, 0.03), 5, "c"),
        ("AXTextField", "Search", (0.3, 0.085, 0.3, 0.035), 5, "ct"),
    ),
    "jira": (
        ("AXHeading", "{l}", (0.2, 0.14, 0.45, 0.04), 5, ""),
        ("AXButton", "In Progress", (0.7, 0.2, 0.07, 0.03), 5, "c"),
        ("AXButton", "Assign to me", (0.8, 0.3, 0.07, 0.025), 5, "c"),
        ("AXTextArea", "Add a comment…", (0.2, 0.75, 0.45, 0.08), 5, "ct"),
        ("AXLink", "Backlog", (0.02, 0.2, 0.08, 0.025), 5, "c"),
    ),
    "notion": (
        ("AXHeading", "{l}", (0.25, 0.16, 0.5, 0.06), 5, ""),
        ("AXTextArea", "Page content", (0.25, 0.25, 0.5, 0.6), 5, "tcs"),
        ("AXButton", "Share", (0.88, 0.085, 0.04, 0.03), 5, "c"),
        ("AXButton", "Add a page", (0.01, 0.9, 0.1, 0.03), 5, "c"),
    ),
}
# Pages only the routines of ``routines=True`` visit (a template of its own, so the default
# days, whose element trees are drawn from the templates above, stay byte-identical).
_ROUTINE_SITES: dict[str, tuple[_El, ...]] = {
    "gmail_triage": (
        ("AXLink", "Inbox", (0.01, 0.18, 0.1, 0.03), 5, "c"),
        ("AXRow", "{l}", (0.17, 0.24, 0.7, 0.03), 5, "c"),
        ("AXButton", "Archive", (0.17, 0.16, 0.02, 0.03), 5, "c"),
        ("AXButton", "Older", (0.9, 0.16, 0.02, 0.03), 5, "c"),
        ("AXHeading", "{l}", (0.17, 0.21, 0.5, 0.04), 5, ""),
    ),
    "expenses": (
        ("AXHeading", "{l}", (0.2, 0.13, 0.5, 0.04), 5, ""),
        ("AXButton", "New expense", (0.75, 0.13, 0.08, 0.035), 5, "c"),
        ("AXTextField", "Amount", (0.3, 0.3, 0.2, 0.035), 5, "ct"),
        ("AXTextField", "Merchant", (0.3, 0.36, 0.3, 0.035), 5, "ct"),
        ("AXPopUpButton", "Category", (0.3, 0.42, 0.2, 0.035), 5, "c"),
        ("AXTextField", "Description", (0.3, 0.48, 0.4, 0.035), 5, "ct"),
        ("AXButton", "Save", (0.3, 0.58, 0.06, 0.035), 5, "c"),
    ),
    "github_review": (
        ("AXHeading", "{l}", (0.2, 0.13, 0.6, 0.04), 5, ""),
        ("AXLink", "Files changed", (0.34, 0.2, 0.07, 0.025), 5, "c"),
        ("AXButton", "Review changes", (0.72, 0.25, 0.07, 0.03), 5, "c"),
        ("AXTextArea", "Leave a comment", (0.6, 0.3, 0.3, 0.08), 5, "ct"),
        ("AXRadioButton", "Approve", (0.66, 0.42, 0.08, 0.025), 5, "c"),
        ("AXButton", "Submit review", (0.66, 0.47, 0.07, 0.03), 5, "c"),
    ),
}
_APPS: dict[str, tuple[_El, ...]] = {
    "code": (
        ("AXWindow", "{w}", (0.0, 0.025, 1.0, 0.975), None, ""),
        ("AXGroup", "Explorer", (0.025, 0.05, 0.16, 0.95), 0, ""),
        ("AXRow", "{l}", (0.03, 0.2, 0.15, 0.02), 1, "c"),
        ("AXRow", "tests", (0.03, 0.32, 0.15, 0.02), 1, "c"),
        ("AXTabGroup", "Editor tabs", (0.185, 0.05, 0.815, 0.035), 0, ""),
        ("AXRadioButton", "{l}", (0.185, 0.05, 0.09, 0.035), 4, "c"),
        ("AXTextArea", "Editor content", (0.185, 0.085, 0.815, 0.635), 0, "ts"),
        ("AXGroup", "Terminal", (0.185, 0.72, 0.815, 0.25), 0, ""),
        ("AXButton", "Source Control", (0.002, 0.12, 0.02, 0.035), 0, "c"),
        ("AXButton", "Run and Debug", (0.002, 0.17, 0.02, 0.035), 0, "c"),
    ),
    "terminal": (
        ("AXWindow", "{w}", (0.05, 0.1, 0.6, 0.6), None, ""),
        ("AXScrollArea", "shell", (0.05, 0.13, 0.6, 0.57), 0, "s"),
        ("AXTextArea", "shell", (0.055, 0.135, 0.59, 0.56), 1, "ct"),
        ("AXButton", "close button", (0.055, 0.107, 0.007, 0.013), 0, "c"),
        ("AXButton", "zoom button", (0.071, 0.107, 0.007, 0.013), 0, "c"),
    ),
    "slack": (
        ("AXWindow", "{w}", (0.0, 0.025, 1.0, 0.975), None, ""),
        ("AXGroup", "Sidebar", (0.0, 0.06, 0.2, 0.94), 0, ""),
        ("AXLink", "general", (0.01, 0.25, 0.17, 0.025), 1, "c"),
        ("AXLink", "dev", (0.01, 0.28, 0.17, 0.025), 1, "c"),
        ("AXLink", "{l}", (0.01, 0.31, 0.17, 0.025), 1, "c"),
        ("AXGroup", "Messages", (0.2, 0.1, 0.8, 0.75), 0, "s"),
        ("AXButton", "Add reaction", (0.9, 0.5, 0.015, 0.025), 5, "c"),
        ("AXTextArea", "Message {l}", (0.21, 0.88, 0.75, 0.07), 0, "ct"),
        ("AXButton", "Send now", (0.965, 0.915, 0.02, 0.03), 0, "c"),
    ),
    "zoom": (
        ("AXWindow", "{w}", (0.0, 0.025, 1.0, 0.975), None, ""),
        ("AXGroup", "Gallery View", (0.0, 0.06, 1.0, 0.84), 0, "s"),
        ("AXButton", "Mute audio", (0.02, 0.92, 0.04, 0.05), 0, "c"),
        ("AXButton", "Stop video", (0.07, 0.92, 0.04, 0.05), 0, "c"),
        ("AXButton", "Participants", (0.4, 0.92, 0.05, 0.05), 0, "c"),
        ("AXButton", "Share Screen", (0.47, 0.92, 0.05, 0.05), 0, "c"),
        ("AXButton", "Reactions", (0.54, 0.92, 0.05, 0.05), 0, "c"),
        ("AXButton", "Leave", (0.93, 0.92, 0.05, 0.05), 0, "c"),
    ),
    "finder": (
        ("AXWindow", "{w}", (0.2, 0.15, 0.5, 0.55), None, ""),
        ("AXOutline", "Sidebar", (0.2, 0.19, 0.09, 0.51), 0, ""),
        ("AXRow", "Downloads", (0.205, 0.25, 0.08, 0.02), 1, "c"),
        ("AXRow", "Documents", (0.205, 0.28, 0.08, 0.02), 1, "c"),
        ("AXList", "{w}", (0.29, 0.19, 0.41, 0.51), 0, "s"),
        ("AXButton", "Back", (0.3, 0.16, 0.015, 0.025), 0, "c"),
        ("AXTextField", "Search", (0.62, 0.16, 0.07, 0.025), 0, "ct"),
    ),
    "lock": (
        ("AXWindow", None, (0.0, 0.0, 1.0, 1.0), None, ""),
        ("AXImage", "{l}", (0.47, 0.4, 0.06, 0.1), 0, ""),
        ("AXTextField", "Password", (0.42, 0.55, 0.16, 0.035), 0, "t"),
        ("AXButton", "Cancel", (0.47, 0.62, 0.06, 0.03), 0, "c"),
    ),
}


@dataclass(frozen=True, slots=True)
class _Ui:
    elements: tuple[_El, ...]
    clickable: tuple[int, ...]
    typing: int | None
    scroll: int | None


def _ui(elements: tuple[_El, ...]) -> _Ui:
    def first(flag: str) -> int | None:
        return next((i for i, e in enumerate(elements) if flag in e[4]), None)

    typing = next(
        (
            i
            for i, e in enumerate(elements)
            if "t" in e[4] and e[3] is not None and elements[e[3]][0] == "AXWebArea"
        ),
        None,
    )
    return _Ui(
        elements,
        tuple(i for i, e in enumerate(elements) if "c" in e[4]),
        typing if typing is not None else first("t"),
        first("s"),
    )


_UIS: dict[str, _Ui] = {name: _ui(els) for name, els in _APPS.items()}
_UIS.update({f"web:{name}": _ui(_BROWSER + extra) for name, extra in _SITES.items()})
_UIS.update({f"web:{name}": _ui(_BROWSER + extra) for name, extra in _ROUTINE_SITES.items()})


# --------------------------------------------------------------------------------------------
# Scenes and how people use them.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Profile:
    cadence: tuple[float, float, float]  # shortest, median, longest gap between snapshots (s)
    keys: float  # chance per snapshot interval of a key burst (and so on for each input kind)
    burst: tuple[int, int]  # keys in a burst
    text: float
    click: float
    scroll: float
    clip: float


# Snapshot rows are event-driven: typing and scrolling change the screen often, a meeting or a
# video far less. Gaps are irregular (log-normal) within the 2-30 s the capture produces.
_PROFILES: dict[str, _Profile] = {
    "edit": _Profile((2, 16, 30), 0.25, (1, 4), 0.0, 0.06, 0.08, 0.025),
    "shell": _Profile((2, 12, 30), 0.25, (1, 3), 0.22, 0.03, 0.05, 0.04),
    "read": _Profile((3, 18, 30), 0.03, (1, 3), 0.0, 0.12, 0.35, 0.03),
    "review": _Profile((2, 16, 30), 0.05, (1, 4), 0.06, 0.15, 0.3, 0.02),
    "mail": _Profile((2, 14, 30), 0.08, (1, 5), 0.05, 0.25, 0.15, 0.015),
    "chat": _Profile((2, 13, 30), 0.15, (1, 5), 0.22, 0.15, 0.08, 0.02),
    "meeting": _Profile((8, 22, 30), 0.0, (1, 1), 0.0, 0.04, 0.0, 0.0),
    "watch": _Profile((6, 20, 30), 0.0, (1, 1), 0.0, 0.03, 0.03, 0.0),
    "files": _Profile((2, 7, 20), 0.0, (1, 1), 0.0, 0.4, 0.1, 0.0),
    "locked": _Profile((2, 4, 8), 0.6, (4, 12), 0.0, 0.0, 0.0, 0.0),
    # A routine's pages: the scripted steps are the input; little else happens meanwhile.
    "routine": _Profile((2, 6, 15), 0.0, (1, 1), 0.0, 0.02, 0.1, 0.0),
}
# An unfocused side monitor still changes (notifications, a scrolling doc) but more slowly.
_AMBIENT = ((10.0, 60.0, 150.0), (15.0, 90.0, 180.0))


@dataclass(frozen=True, slots=True)
class _Scene:
    app: str
    window: str | None
    url: str | None
    ui: str
    profile: str
    label: str | None = None
    texts: tuple[str, ...] = ()  # what a "text" input here may say
    clips: tuple[str, ...] = ()  # what a copy here may put on the clipboard
    typed: str | None = None  # typed right after the scene appears (a search query)
    # Scripted inputs of a routine: (seconds after the scene appears, "click" | "type", the
    # element's name, the text typed or None). Only ``routines=True`` days have any.
    steps: tuple[tuple[float, str, str, str | None], ...] = ()


class _Scenes:
    """Today's scenes: the person's world narrowed to what they work on this day."""

    def __init__(self, world: _World, day: date, rng: random.Random) -> None:
        self.w = world
        self.rng = rng
        self.day = day
        k = day.toordinal()
        # Continuity across days: the ticket changes every few days, PRs drift slowly.
        self.ticket = world.tickets[(k // 3) % len(world.tickets)]
        self.prs = [world.prs[(k // 2 + i) % len(world.prs)] for i in range(3)]
        first = _FILES[(k // 3) % len(_FILES)]
        self.files = [first, *rng.sample([f for f in _FILES if f != first], rng.randint(3, 5))]
        self.branch = f"{world.key.lower()}-{self.ticket[0]}-{_slug(self.ticket[1])[:30]}"
        self.pr_refs = tuple(f"#{n}" for n, _, _ in self.prs)

    def _web(
        self,
        site: str,
        title: str,
        url: str,
        profile: str,
        label: str | None = None,
        *,
        browser: str | None = None,
        **extra: Any,
    ) -> _Scene:
        return _Scene(
            browser or self.w.dev_browser,
            title,
            url,
            f"web:{site}",
            profile,
            label or title,
            **extra,
        )

    def code(self) -> _Scene:
        name = self.rng.choice(self.files)
        return _Scene(
            "Code", f"{name} — {self.w.repo}", None, "code", "edit", name, clips=_CLIP_EDIT
        )

    def terminal(self) -> _Scene:
        title = self.rng.choice(("-zsh", "-zsh", "pytest", "python manage.py runserver"))
        texts = tuple(c.format(branch=self.branch) for c in _COMMANDS)
        return _Scene(
            "Terminal",
            f"{self.w.repo} — {title} — 120×36",
            None,
            "terminal",
            "shell",
            "shell",
            texts=texts,
            clips=_CLIP_SHELL,
        )

    def django_docs(self) -> _Scene:
        path, title = self.rng.choice(_DJANGO_DOCS)
        return self._web(
            "docs",
            f"{title} | Django documentation | Django",
            f"https://docs.djangoproject.com/en/5.2/{path}/",
            "read",
            title,
            clips=_CLIP_READ,
        )

    def python_docs(self) -> _Scene:
        path, title = self.rng.choice(_PYTHON_DOCS)
        return self._web(
            "docs",
            f"{title} — Python 3.13.2 documentation",
            f"https://docs.python.org/3/{path}",
            "read",
            title,
            clips=_CLIP_READ,
        )

    def search_and_answer(self) -> list[tuple[_Scene, float]]:
        qid, tag, title, query = self.rng.choice(self.w.questions)
        google = self._web(
            "google",
            f"{query} - Google Search",
            f"https://www.google.com/search?q={quote_plus(query)}",
            "read",
            title,
            typed=query,
        )
        answer = self._web(
            "stackoverflow",
            f"{tag} - {title} - Stack Overflow",
            f"https://stackoverflow.com/questions/{qid}/{_slug(title)}",
            "read",
            title,
            clips=_CLIP_READ,
        )
        return [(google, self.rng.uniform(8, 40)), (answer, self.rng.uniform(40, 240))]

    def pr(self, tab: str = "") -> _Scene:
        number, title, author = self.rng.choice(self.prs)
        suffix = f"/{tab}" if tab else ""
        return self._web(
            "github_pr",
            f"{title} by {author} · Pull Request #{number} · {self.w.org}/{self.w.repo}",
            f"https://github.com/{self.w.org}/{self.w.repo}/pull/{number}{suffix}",
            "review",
            title,
            texts=_COMMENTS,
            clips=(f"https://github.com/{self.w.org}/{self.w.repo}/pull/{number}", self.branch),
        )

    def issue(self) -> _Scene:
        number, title = self.rng.choice(self.w.issues)
        return self._web(
            "github_issue",
            f"{title} · Issue #{number} · {self.w.org}/{self.w.repo}",
            f"https://github.com/{self.w.org}/{self.w.repo}/issues/{number}",
            "read",
            title,
            texts=_COMMENTS,
            clips=_CLIP_SHELL,
        )

    def gmail(self, inbox: bool) -> _Scene:
        base = "https://mail.google.com/mail/u/0/#inbox"
        if inbox:
            unread = self.rng.randint(0, 14)
            title = (
                f"Inbox ({unread}) - {self.w.email} - Gmail"
                if unread
                else f"Inbox - {self.w.email} - Gmail"
            )
            return self._web(
                "gmail",
                title,
                base,
                "mail",
                "Inbox",
                browser="Google Chrome",
                texts=_REPLIES,
                clips=_CLIP_MISC,
            )
        subject, mid = self.rng.choice(self.w.mails)
        return self._web(
            "gmail",
            f"{subject} - {self.w.email} - Gmail",
            f"{base}/{mid}",
            "mail",
            subject,
            browser="Google Chrome",
            texts=_REPLIES,
            clips=_CLIP_MISC,
        )

    def calendar(self) -> _Scene:
        monday = self.day - timedelta(days=self.day.weekday())
        title = f"Google Calendar - Week of {monday:%B} {monday.day}, {monday.year}"
        url = (
            "https://calendar.google.com/calendar/u/0/r/week/"
            f"{monday.year}/{monday.month}/{monday.day}"
        )
        return self._web(
            "calendar", title, url, "mail", "Week", browser="Google Chrome", clips=_CLIP_MISC
        )

    def youtube(self) -> _Scene:
        vid, title = self.rng.choice(self.w.videos)
        return self._web(
            "youtube",
            f"{title} - YouTube",
            f"https://www.youtube.com/watch?v={vid}",
            "watch",
            title,
            browser="Google Chrome",
        )

    def jira(self, board: bool = False) -> _Scene:
        host = f"https://{self.w.org}.atlassian.net"
        if board:
            return self._web(
                "jira",
                f"{self.w.key} board - Agile Board - Jira",
                f"{host}/jira/software/projects/{self.w.key}/boards/1",
                "review",
                "Board",
            )
        number, summary = (
            self.ticket if self.rng.random() < 0.7 else self.rng.choice(self.w.tickets)
        )
        ref = f"{self.w.key}-{number}"
        return self._web(
            "jira",
            f"[{ref}] {summary} - Jira",
            f"{host}/browse/{ref}",
            "review",
            summary,
            texts=_COMMENTS[:3],
            clips=(ref, self.branch),
        )

    def notion(self, title: str | None = None) -> _Scene:
        if title is None:
            title, page = self.rng.choice(self.w.notion)
        else:
            page = next(p for t, p in self.w.notion if t == title)
        url = (
            f"https://www.notion.so/{self.w.org}/{_slug(title.replace('1:1', 'One on one'))}-{page}"
        )
        return self._web("notion", title, url, "read", title, texts=_NOTES)

    def slack(self, channel: str | None = None) -> _Scene:
        if channel is None:
            if self.rng.random() < 0.3:
                name = self.rng.choice(_COLLEAGUES)[0]
                window, label = f"{name} (DM) - Acme - Slack", name
            else:
                label = self.rng.choice(_CHANNELS)
                window = f"{label} (Channel) - Acme - Slack"
        else:
            label, window = channel, f"{channel} (Channel) - Acme - Slack"
        texts = tuple(line.format(pr=self.rng.choice(self.pr_refs)) for line in _SLACK_LINES)
        return _Scene("Slack", window, None, "slack", "chat", label, texts=texts, clips=_CLIP_MISC)

    def zoom(self) -> _Scene:
        return _Scene("Zoom", "Zoom Meeting", None, "zoom", "meeting", "Zoom Meeting")

    def finder(self) -> _Scene:
        folder = self.rng.choice(("Downloads", "Documents", self.w.repo, "Desktop"))
        return _Scene("Finder", folder, None, "finder", "files", folder)

    # -- routines (only on ``routines=True`` days) -------------------------------------------

    def triage(self) -> list[tuple[_Scene, float]]:
        """Inbox triage: open the inbox, open the newest conversation, then Archive and Older
        through one to four more (the conversation opened first differs from day to day)."""
        rng, base = self.rng, "https://mail.google.com/mail/u/0/#inbox"
        mails = rng.sample(self.w.mails, rng.randint(2, 5))
        first = mails[0][0]
        out = [
            _routine_scene(
                "Google Chrome",
                f"Inbox ({rng.randint(3, 14)}) - {self.w.email} - Gmail",
                base,
                "gmail_triage",
                first,
                [
                    (rng.uniform(1.5, 4), "click", "Inbox", None),
                    (rng.uniform(3, 9), "click", first, None),
                ],
            )
        ]
        for (subject, mid), following in zip(mails, [*mails[1:], None], strict=True):
            steps = [(rng.uniform(5, 25), "click", "Archive", None)]
            if following is not None:
                steps.append((rng.uniform(3, 6), "click", "Older", None))
            out.append(
                _routine_scene(
                    "Google Chrome",
                    f"{subject} - {self.w.email} - Gmail",
                    f"{base}/{mid}",
                    "gmail_triage",
                    subject,
                    steps,
                )
            )
        return out

    def expense(self) -> list[tuple[_Scene, float]]:
        """File an expense: New expense, type Amount and Merchant (sometimes a Description),
        pick the Category, Save."""
        rng = self.rng
        url = f"https://expenses.example.com/reports/{self.day:%Y-%m}"
        title = f"Expenses {self.day:%B %Y} - Acme Expenses"
        steps: list[tuple[float, str, str, str | None]] = [
            (rng.uniform(4, 10), "type", "Amount", f"{rng.uniform(8, 420):.2f}"),
            (rng.uniform(4, 9), "type", "Merchant", rng.choice(_MERCHANTS)),
        ]
        if rng.random() < 0.4:
            steps.append((rng.uniform(4, 9), "type", "Description", rng.choice(_EXPENSE_NOTES)))
        steps += [
            (rng.uniform(3, 6), "click", "Category", None),
            (rng.uniform(3, 6), "click", "Save", None),
        ]
        return [
            _routine_scene(
                "Google Chrome",
                title,
                url,
                "expenses",
                "Expenses",
                [(rng.uniform(3, 12), "click", "New expense", None)],
            ),
            _routine_scene(
                "Google Chrome",
                f"New expense - {title}",
                f"{url}/new",
                "expenses",
                "New expense",
                steps,
            ),
        ]

    def pr_review(self) -> list[tuple[_Scene, float]]:
        """Review a pull request: Files changed, read, Review changes, sometimes a comment,
        Approve, Submit review."""
        rng = self.rng
        number, title, author = rng.choice(self.prs)
        window = f"{title} by {author} · Pull Request #{number} · {self.w.org}/{self.w.repo}"
        url = f"https://github.com/{self.w.org}/{self.w.repo}/pull/{number}"
        steps: list[tuple[float, str, str, str | None]] = [
            (rng.uniform(20, 80), "click", "Review changes", None)
        ]
        if rng.random() < 0.5:
            steps.append((rng.uniform(3, 6), "type", "Leave a comment", rng.choice(_COMMENTS)))
        steps += [
            (rng.uniform(3, 6), "click", "Approve", None),
            (rng.uniform(2, 5), "click", "Submit review", None),
        ]
        browser = self.w.dev_browser
        return [
            _routine_scene(
                browser,
                window,
                url,
                "github_review",
                title,
                [(rng.uniform(5, 20), "click", "Files changed", None)],
            ),
            _routine_scene(browser, window, f"{url}/files", "github_review", title, steps),
        ]

    def lock(self, person: str) -> _Scene:
        return _Scene(LOCK, None, None, "lock", "locked", person)

    def side(self) -> _Scene:
        """What a side monitor shows: reference docs, chat, an issue or notes."""
        pick = self.rng.random()
        if pick < 0.35:
            return self.django_docs()
        if pick < 0.5:
            return self.python_docs()
        if pick < 0.8:
            return self.slack()
        if pick < 0.9:
            return self.issue()
        return self.notion()


def _routine_scene(
    app: str,
    window: str,
    url: str,
    site: str,
    label: str,
    steps: Sequence[tuple[float, str, str, str | None]],
) -> tuple[_Scene, float]:
    """A routine's page and how long it is shown: ``steps`` carry the gap before each step
    (at least 3 s, so typing ends before the next step); the page stays a few seconds after."""
    at, timed = 0.0, []
    for gap, op, name, text in steps:
        at += max(gap, 3.0)
        timed.append((at, op, name, text))
    scene = _Scene(app, window, url, f"web:{site}", "routine", label, steps=tuple(timed))
    return scene, at + 5.0


# --------------------------------------------------------------------------------------------
# The day's plan (local wall-clock seconds since midnight) and where records go.
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Plan:
    start: float
    end: float
    pauses: list[tuple[float, float, str]]  # (from, to, "lunch" | "break", + LOCKED if locked)
    meetings: list[tuple[float, float, str]]
    lock_at_start: bool
    lock_at_end: bool


def _overlaps(
    a0: float, a1: float, spans: Iterable[tuple[float, float, str]], margin: float
) -> bool:
    return any(a0 < b1 + margin and b0 < a1 + margin for b0, b1, _ in spans)


def _plan(rng: random.Random, day: date) -> _Plan:
    weekend = day.weekday() >= 5
    if weekend:
        start, end = rng.uniform(10, 11) * _H, rng.uniform(14.5, 16) * _H
        lunch_at = rng.uniform(12.5, 13.25) * _H
    else:
        start, end = rng.uniform(8.5, 9.5) * _H, rng.uniform(17, 18.5) * _H
        lunch_at = rng.uniform(12, 13) * _H
    # 31-60 min so that even after an unlock row shortly before the end, 30 min stay empty.
    lunch_kind = "lunch" + (LOCKED if rng.random() < 0.5 else "")
    lunch = (lunch_at, lunch_at + rng.uniform(31, 60) * _M, lunch_kind)
    wanted: list[tuple[float, float, str]] = []
    if not weekend:
        at = 10 * _H + rng.uniform(-1, 3) * _M
        wanted.append((at, at + rng.uniform(12, 20) * _M, "Standup"))
        if day.weekday() == 1:
            at = 14 * _H + rng.uniform(0, 3) * _M
            wanted.append((at, at + rng.uniform(45, 60) * _M, "Sprint planning"))
        if day.weekday() == 3:
            at = 15.5 * _H + rng.uniform(0, 2) * _M
            wanted.append((at, at + rng.uniform(25, 30) * _M, "1:1"))
        if rng.random() < 0.3:
            at = rng.choice((11.0, 15.0, 16.0)) * _H + rng.uniform(0, 15) * _M
            wanted.append((at, at + rng.uniform(25, 30) * _M, "Sync"))
    meetings: list[tuple[float, float, str]] = []
    for meeting in sorted(wanted):
        inside = start + 10 * _M <= meeting[0] and meeting[1] <= end - 20 * _M
        if inside and not _overlaps(meeting[0], meeting[1], [lunch, *meetings], 5 * _M):
            meetings.append(meeting)
    breaks: list[tuple[float, float, str]] = []
    goal = rng.randint(2, 4)
    for _ in range(40):
        if len(breaks) >= goal:
            break
        at = rng.uniform(start + 40 * _M, end - 30 * _M)
        length = rng.uniform(4, 14) * _M
        if _overlaps(at, at + length, [lunch, *meetings, *breaks], 20 * _M):
            continue
        breaks.append((at, at + length, "break" + (LOCKED if rng.random() < 0.5 else "")))
    return _Plan(
        start,
        end,
        sorted([lunch, *breaks]),
        meetings,
        lock_at_start=rng.random() < 0.7,
        lock_at_end=rng.random() < 0.6,
    )


class _Sink:
    """Collects records with UTC microsecond times; owns the source-key counters."""

    def __init__(self, person: str, day: date, zone: ZoneInfo, plan: _Plan) -> None:
        self.prefix = person
        self.ymd = f"{day:%Y%m%d}"
        self.day = day
        self.zone = zone
        self.day_us = (day.toordinal() - _EPOCH_ORDINAL) * _DAY_US
        self.counters: dict[tuple[str, str], int] = {}
        self.rows: list[tuple[int, str, str, str, dict[str, Any]]] = []
        # Wall-clock times become UTC through the zone's offset at that wall time. Working
        # hours almost never contain a transition, so one offset usually serves the whole day.
        hours = range(max(0, int(plan.start // _H) - 1), min(23, int(plan.end // _H) + 1) + 1)
        offsets = {self._offset_us(h * _H) for h in hours}
        self.fixed_offset = offsets.pop() if len(offsets) == 1 else None

    def _offset_us(self, wall_s: float) -> int:
        seconds = min(max(int(wall_s), 0), 86_399)
        clock = time(seconds // 3600, seconds // 60 % 60, seconds % 60)
        offset = datetime.combine(self.day, clock, tzinfo=self.zone).utcoffset()
        assert offset is not None
        return (offset.days * 86_400 + offset.seconds) * 1_000_000 + offset.microseconds

    def key(self, monitor: str, kind: str) -> str:
        count = self.counters.get((monitor, kind), 0) + 1
        self.counters[(monitor, kind)] = count
        return f"{self.prefix}:{monitor}:{kind}:{self.ymd}:{count:05d}"

    def add(
        self, wall_s: float, key: str, kind: str, monitor: str, payload: dict[str, Any]
    ) -> None:
        offset = self.fixed_offset if self.fixed_offset is not None else self._offset_us(wall_s)
        self.rows.append(
            (self.day_us + round(wall_s * 1_000_000) - offset, key, kind, monitor, payload)
        )

    def records(self) -> list[Record]:
        self.rows.sort(key=lambda row: (row[0], row[1]))
        out: list[Record] = []
        append = out.append
        for us, key, kind, monitor, payload in self.rows:
            stamp = (_EPOCH + timedelta(microseconds=us)).isoformat(timespec="microseconds")
            append(
                {
                    "occurred_at": stamp[:-6] + "Z",
                    "kind": kind,
                    "source_key": key,
                    "monitor": monitor,
                    "payload": payload,
                }
            )
        return out


# --------------------------------------------------------------------------------------------
# One monitor: snapshot rows, the inputs that fall between them, and element trees.
# --------------------------------------------------------------------------------------------


class _Screen:
    def __init__(self, sink: _Sink, monitor: str, rng: random.Random) -> None:
        self.sink = sink
        self.monitor = monitor
        self.rng = rng
        self.front: str | None = None  # app that last had the focus, as this screen saw it
        self.snap: str = ""

    def gap(self, cadence: tuple[float, float, float]) -> float:
        low, median, high = cadence
        value = low + math.exp(self.rng.gauss(math.log(median - low), 0.6))
        return value if value <= high else self.rng.uniform(high / 2, high)

    def snapshot(self, t: float, scene: _Scene, focused: bool) -> None:
        key = self.sink.key(self.monitor, "snapshot")
        self.sink.add(
            t,
            key,
            "snapshot",
            self.monitor,
            {"app": scene.app, "window": scene.window, "url": scene.url, "focused": focused},
        )
        self.snap = key
        rng = self.rng
        if focused:
            if self.front is not None and scene.app != self.front:
                self.input(t + rng.uniform(0.02, 0.2), "app_switch", scene)
            self.front = scene.app
        if rng.random() < ELEMENTS_SHARE:
            self.elements(t + rng.uniform(0.03, 0.25), scene, key)

    def input(
        self,
        t: float,
        kind: str,
        scene: _Scene,
        *,
        xy: tuple[int, int] | None = None,
        element: _El | None = None,
        text: str | None = None,
    ) -> None:
        payload: dict[str, Any] = {
            "type": kind,
            "x": xy[0] if xy else None,
            "y": xy[1] if xy else None,
            "app": scene.app,
            "window": scene.window,
            "url": scene.url,
            "element_name": _name(element[1], scene) if element else None,
            "element_role": element[0] if element else None,
        }
        if text is not None:
            payload["text"] = text
        payload["snapshot"] = self.snap
        self.sink.add(t, self.sink.key(self.monitor, "input"), "input", self.monitor, payload)

    def elements(self, t: float, scene: _Scene, snapshot_key: str) -> None:
        template = _UIS[scene.ui].elements
        rng = self.rng
        want = rng.randint(3, 8)
        chosen = {0}
        order = list(range(1, len(template)))
        rng.shuffle(order)
        for index in order:
            if len(chosen) >= want:
                break
            lineage = {index}
            parent = template[index][3]
            while parent is not None:
                lineage.add(parent)
                parent = template[parent][3]
            if len(chosen | lineage) <= want:
                chosen |= lineage
        picked = sorted(chosen)
        position = {index: n for n, index in enumerate(picked)}
        tree = []
        for index in picked:
            role, name, bounds, parent, _ = template[index]
            tree.append(
                {
                    "role": role,
                    "name": _name(name, scene),
                    "bounds": list(bounds),
                    "source": "accessibility",
                    "parent": None if parent is None else position[parent],
                }
            )
        self.sink.add(
            t,
            self.sink.key(self.monitor, "elements"),
            "elements",
            self.monitor,
            {"snapshot": snapshot_key, "elements": tree},
        )

    def hold(
        self,
        t0: float,
        t1: float,
        scene: _Scene,
        *,
        focused: bool = True,
        cadence: tuple[float, float, float] | None = None,
    ) -> None:
        """Show the scene from t0 until t1: snapshot rows at irregular gaps, inputs between."""
        profile = _PROFILES[scene.profile]
        cadence = cadence or profile.cadence
        t = t0
        self.snapshot(t, scene, focused)
        if focused and scene.typed:
            self.type_text(t, t1, scene, scene.typed)
        pending = list(scene.steps) if focused else []
        while True:
            nxt = t + self.gap(cadence)
            # The last row keeps a second's distance to the next hold's first row so that its
            # inputs and element tree fall before that row.
            last = nxt >= t1 - 1.0
            stop = t1 if last else nxt
            if focused:
                self.activity(t, stop, scene, profile)
                while pending and (last or t0 + pending[0][0] < stop):
                    offset, op, name, text = pending.pop(0)
                    self.step(min(t0 + offset, t1 - 0.5), scene, op, name, text)
            if last:
                return
            t = nxt
            self.snapshot(t, scene, focused)

    def type_text(self, t: float, end: float, scene: _Scene, text: str) -> None:
        ui = _UIS[scene.ui]
        element = ui.elements[ui.typing] if ui.typing is not None else None
        self.input(
            min(t + self.rng.uniform(0.3, 1.5), (t + end) / 2),
            "text",
            scene,
            element=element,
            text=text,
        )

    def activity(self, t: float, end: float, scene: _Scene, profile: _Profile) -> None:
        lo, hi = t + 0.3, end - 0.05
        if hi <= lo:
            return
        rng = self.rng
        ui = _UIS[scene.ui]
        if rng.random() < profile.keys:
            n = rng.randint(*profile.burst)
            at = rng.uniform(lo, hi)
            element = ui.elements[ui.typing] if ui.typing is not None else None
            for _ in range(n):
                if at >= hi:
                    break
                self.input(at, "key", scene, element=element)
                at += rng.uniform(0.06, 0.35)
        if scene.texts and rng.random() < profile.text:
            self.type_text(rng.uniform(lo, hi) - 0.3, hi, scene, rng.choice(scene.texts))
        if rng.random() < profile.click:
            self.click(rng.uniform(lo, hi), scene, ui)
        if ui.scroll is not None and rng.random() < profile.scroll:
            self.input(
                rng.uniform(lo, hi),
                "scroll",
                scene,
                xy=_point(rng, ui.elements[ui.scroll]),
                element=ui.elements[ui.scroll],
            )
        if scene.clips and rng.random() < profile.clip:
            self.input(rng.uniform(lo, hi), "clipboard", scene, text=rng.choice(scene.clips))

    def click(self, t: float, scene: _Scene, ui: _Ui) -> None:
        rng = self.rng
        if ui.clickable and rng.random() < RESOLVED_CLICK_SHARE:
            element = ui.elements[rng.choice(ui.clickable)]
            self.input(t, "click", scene, xy=_point(rng, element), element=element)
        else:  # the click landed where the accessibility API could not name anything
            self.input(t, "click", scene, xy=_point(rng, ui.elements[0]))

    def step(self, t: float, scene: _Scene, op: str, name: str, text: str | None) -> None:
        """One scripted routine step: a click on, or typing into, the element named ``name``
        (the accessibility API names it, as it does for most clicks, §4.3 "named")."""
        element = next(e for e in _UIS[scene.ui].elements if _name(e[1], scene) == name)
        if op == "click":
            self.input(t, "click", scene, xy=_point(self.rng, element), element=element)
            return
        typed = text or ""
        for n in range(max(1, min(len(typed), 8))):
            self.input(t + n * self.rng.uniform(0.08, 0.2), "key", scene, element=element)
        self.input(t + 2.0, "text", scene, element=element, text=typed)


def _name(name: str | None, scene: _Scene) -> str | None:
    if name is None or "{" not in name:
        return name
    return name.replace("{w}", scene.window or "").replace("{l}", scene.label or "")


def _point(rng: random.Random, element: _El) -> tuple[int, int]:
    left, top, width, height = element[2]
    x = (left + width * rng.uniform(0.15, 0.85)) * SCREEN_W
    y = (top + height * rng.uniform(0.15, 0.85)) * SCREEN_H
    return min(int(x), SCREEN_W - 1), min(int(y), SCREEN_H - 1)


# --------------------------------------------------------------------------------------------
# The day: what the person does on the main monitor, and what the side monitors show.
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Glance:
    start: float
    end: float
    scene: _Scene  # what the side monitor shows while focused (and afterwards)
    main_app: str  # what had the focus on the main monitor before


@dataclass(slots=True)
class _Day:
    plan: _Plan
    scenes: _Scenes
    rng: random.Random
    main: _Screen
    sides: list[_Screen]
    person: str
    glances: list[_Glance] = field(default_factory=list)
    first_side: _Scene | None = None  # what monitor "1" shows when the day starts
    side_scene: _Scene | None = None  # what it shows now
    main_end: float = 0.0  # where the main monitor's last hold ended
    resume_at: float = 0.0  # when the screens show work, after any unlock at the start
    routines: bool = False  # perform today's recurring routines (SYNTHETIC, see generate_day)
    todo: list[str] = field(default_factory=list)  # routines still to perform today

    def run(self) -> None:
        plan, rng = self.plan, self.rng
        if self.sides:
            self.side_scene = self.first_side = self.scenes.side()
        t = plan.start
        if plan.lock_at_start:
            self.unlock(t, t + rng.uniform(5, 20))
            t = self.main_end
        self.resume_at = t
        if self.routines and self.scenes.day.weekday() < 5:
            self.todo = [name for name, p in ROUTINE_CHANCE.items() if rng.random() < p]
        blocks = sorted([*plan.pauses, *[(a, b, "meeting:" + n) for a, b, n in plan.meetings]])
        context = "morning"
        for b0, b1, what in [*blocks, (plan.end, plan.end, "end")]:
            self.work(t, b0, context, next_is_meeting=what.startswith("meeting:"))
            if what.startswith("meeting:"):
                self.meeting(b0, b1, what.removeprefix("meeting:"))
                context = "after_meeting"
            elif what != "end":
                self.pause(b0, b1, what)
                context = "after_lunch" if what.startswith("lunch") else "after_break"
            t = b1
        if plan.lock_at_end:
            self.main.snapshot(plan.end, self.scenes.lock(self.person), True)
        self.main_end = plan.end

    def unlock(self, t0: float, t1: float) -> None:
        self.main.hold(t0, t1, self.scenes.lock(self.person))
        self.main_end = t1

    def pause(self, t0: float, t1: float, kind: str) -> None:
        if kind.endswith(LOCKED):
            self.main.snapshot(t0, self.scenes.lock(self.person), True)
            self.unlock(t1 - self.rng.uniform(5, 20), t1)

    def meeting(self, t0: float, t1: float, name: str) -> None:
        zoom = self.scenes.zoom()
        if self.sides and t1 - t0 > 120:
            notes = self.scenes.notion(_MEETING_NOTES.get(name, "Architecture notes"))
            at = t0 + self.rng.uniform(20, 60)
            self.main.hold(t0, at, zoom)
            self.glance(at, self.rng.uniform(15, 40), zoom, notes)
            self.main.hold(self.main_end, t1, zoom)
        else:
            self.main.hold(t0, t1, zoom)

    def glance(self, at: float, length: float, main_scene: _Scene, side: _Scene) -> None:
        """Focus moves to the side monitor for a moment, then back."""
        self.main.snapshot(at, main_scene, False)
        self.glances.append(_Glance(at + 0.1, at + length, side, main_scene.app))
        self.side_scene = side
        self.main.front = side.app
        self.main_end = at + length

    def play(self, scene: _Scene, t0: float, t1: float) -> None:
        rng = self.rng
        length = t1 - t0
        if scene.steps:  # a routine's page holds still: its steps are timed from its start
            self.main.hold(t0, t1, scene)
        elif length > 60 and rng.random() < FLICKER_P:
            at = rng.uniform(t0 + 10, t1 - 30)
            back = at + rng.uniform(5, 15)
            other = rng.choice((self.scenes.slack, self.scenes.finder, self.scenes.code))()
            if other.app == scene.app:
                other = self.scenes.slack() if scene.app != "Slack" else self.scenes.finder()
            self.main.hold(t0, at, scene)
            self.main.hold(at, back, other)
            self.main.hold(back, t1, scene)
        elif self.sides and length > 90 and rng.random() < GLANCE_P:
            at = rng.uniform(t0 + 15, t1 - 45)
            side = self.side_scene if rng.random() < 0.5 and self.side_scene else self.scenes.side()
            self.main.hold(t0, at, scene)
            self.glance(at, rng.uniform(15, 40), scene, side)
            self.main.hold(self.main_end, t1, scene)
        else:
            self.main.hold(t0, t1, scene)

    def work(self, t0: float, t1: float, context: str, *, next_is_meeting: bool) -> None:
        rng, scenes = self.rng, self.scenes
        queue: list[Iterator[tuple[_Scene, float]]] = []
        if context == "morning":
            queue = [self.mail(), iter([(scenes.calendar(), rng.uniform(20, 70))]), self.chat()]
        elif context == "after_lunch":
            queue = [self.chat()] + ([self.mail()] if rng.random() < 0.5 else [])
        if self.todo:
            queue = [*self.routines_now(context), *queue]
        end = t1
        glance_calendar = next_is_meeting and rng.random() < 0.6 and t1 - t0 > 5 * _M
        if glance_calendar:
            end = t1 - rng.uniform(30, 90)
        t = t0
        while t < end - 2:
            activity = queue.pop(0) if queue else self.pick()
            for scene, length in activity:
                stop = min(t + length, end)
                if stop - t >= 2:
                    self.play(scene, t, stop)
                t = stop
                if t >= end - 2:
                    break
        if glance_calendar:
            self.main.hold(end, t1, scenes.calendar())

    def routines_now(self, context: str) -> list[Iterator[tuple[_Scene, float]]]:
        """The routines this stretch of work starts with: triage first thing in the morning,
        the expense after lunch, a review after a meeting or break (or after lunch)."""
        when = {
            "morning": ("triage",),
            "after_lunch": ("expense", "review"),
            "after_meeting": ("review",),
            "after_break": ("review",),
        }.get(context, ())
        make = {
            "triage": self.scenes.triage,
            "expense": self.scenes.expense,
            "review": self.scenes.pr_review,
        }
        due = [name for name in self.todo if name in when]
        self.todo = [name for name in self.todo if name not in due]
        return [iter(make[name]()) for name in due]

    def pick(self) -> Iterator[tuple[_Scene, float]]:
        weekend = self.scenes.day.weekday() >= 5
        weights = (20, 5, 10, 15, 3, 15, 30, 10) if weekend else (46, 12, 10, 8, 7, 6, 3, 3)
        make = self.rng.choices(
            (
                self.coding,
                self.review,
                self.chat,
                self.mail,
                self.tickets,
                self.notes,
                self.watch,
                self.files,
            ),
            weights,
        )[0]
        return make()

    def coding(self) -> Iterator[tuple[_Scene, float]]:
        rng, scenes = self.rng, self.scenes
        budget = rng.uniform(20, 75) * _M
        state = "code"
        while budget > 0:
            if state == "code":
                steps = [(scenes.code(), min(10 * _M, 30 + math.exp(rng.gauss(5.0, 0.7))))]
                state = rng.choices(("code", "shell", "lookup"), (35, 35, 30))[0]
            elif state == "shell":
                steps = [(scenes.terminal(), rng.uniform(20, 150))]
                state = rng.choices(("code", "shell", "lookup"), (70, 10, 20))[0]
            else:
                pick = rng.random()
                if pick < 0.4:
                    steps = scenes.search_and_answer()
                elif pick < 0.65:
                    steps = [(scenes.django_docs(), rng.uniform(40, 240))]
                elif pick < 0.8:
                    steps = [(scenes.python_docs(), rng.uniform(30, 180))]
                else:
                    steps = [(scenes.issue(), rng.uniform(40, 200))]
                state = rng.choices(("code", "lookup"), (80, 20))[0]
            for step in steps:
                budget -= step[1]
                yield step

    def review(self) -> Iterator[tuple[_Scene, float]]:
        rng, scenes = self.rng, self.scenes
        yield scenes.pr(), rng.uniform(40, 120)
        yield scenes.pr("files"), rng.uniform(3, 10) * _M
        if rng.random() < 0.3:
            yield scenes.terminal(), rng.uniform(30, 90)
            yield scenes.code(), rng.uniform(2, 5) * _M
        if rng.random() < 0.3:
            yield scenes.pr("checks"), rng.uniform(20, 60)
        yield scenes.pr(), rng.uniform(30, 120)

    def chat(self) -> Iterator[tuple[_Scene, float]]:
        for _ in range(self.rng.randint(1, 4)):
            yield self.scenes.slack(), self.rng.uniform(30, 180)

    def mail(self) -> Iterator[tuple[_Scene, float]]:
        rng, scenes = self.rng, self.scenes
        yield scenes.gmail(inbox=True), rng.uniform(30, 120)
        for _ in range(rng.randint(1, 4)):
            yield scenes.gmail(inbox=False), rng.uniform(20, 120)
            yield scenes.gmail(inbox=True), rng.uniform(5, 20)

    def tickets(self) -> Iterator[tuple[_Scene, float]]:
        rng, scenes = self.rng, self.scenes
        yield scenes.jira(board=True), rng.uniform(30, 90)
        for _ in range(rng.randint(1, 2)):
            yield scenes.jira(), rng.uniform(1, 5) * _M

    def notes(self) -> Iterator[tuple[_Scene, float]]:
        yield self.scenes.notion(), self.rng.uniform(4, 15) * _M

    def watch(self) -> Iterator[tuple[_Scene, float]]:
        yield self.scenes.youtube(), self.rng.uniform(3, 12) * _M

    def files(self) -> Iterator[tuple[_Scene, float]]:
        yield self.scenes.finder(), self.rng.uniform(30, 120)

    def run_side(
        self,
        screen: _Screen,
        scene: _Scene,
        glances: Sequence[_Glance],
        cadence: tuple[float, float, float],
    ) -> None:
        """A side monitor: slow unfocused rows, focused only during glances."""
        plan = self.plan
        spans: list[tuple[float, float, bool]] = []
        t = self.resume_at
        for p0, p1, kind in plan.pauses:
            spans.append((t, p0, kind.endswith(LOCKED)))
            t = p1
        spans.append((t, plan.end, plan.lock_at_end))
        lock = self.scenes.lock(self.person)
        pending = list(glances)
        for a, b, locks_after in spans:
            t = a + self.rng.uniform(0.5, 3)
            while pending and pending[0].start < b:
                glance = pending.pop(0)
                if glance.start - t >= 2:
                    screen.hold(t, glance.start, scene, focused=False, cadence=cadence)
                scene = glance.scene
                screen.front = glance.main_app
                screen.hold(glance.start, glance.end, scene)
                t = glance.end
            if b - t >= 2:
                screen.hold(t, b, scene, focused=False, cadence=cadence)
            if locks_after:
                screen.snapshot(b + 0.05, lock, False)


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def generate_day(
    day: date,
    *,
    seed: int,
    tz: str = "Europe/Berlin",
    monitors: int = 2,
    person: str = "demo",
    routines: bool = False,
) -> list[Record]:
    """SYNTHETIC records of one local working day, sorted by occurred_at then source_key.

    Monitor "0" carries the main work; monitor "1" (and any further ones) show reference
    material or chat, updating slowly. Saturdays and Sundays give a shorter, lighter day.

    ``routines`` (off by default; the default output is pinned by tests and certify) makes
    the person also perform recurring routines among the usual noise, each on some weekdays
    (``ROUTINE_CHANCE``) and with variation: triage the inbox (Inbox, open the newest
    conversation, Archive and Older through a few), file an expense (New expense, type
    Amount and Merchant, sometimes a Description, Category, Save) and review a pull request
    (Files changed, Review changes, sometimes a comment, Approve, Submit review). Every
    step is a click on or typing into an element the accessibility API names, as the
    routine miner of Activity Frames §7.1 needs. SYNTHETIC: no person performed them.
    """
    if monitors < 1:
        raise ValueError(f"monitors must be at least 1, got {monitors}.")
    if not person or len(person) > 100:
        raise ValueError("person must be a non-empty name of at most 100 characters.")
    zone = ZoneInfo(tz)
    rng = random.Random(_derive("day", seed, person, day.toordinal()))
    plan = _plan(rng, day)
    sink = _Sink(person, day, zone, plan)
    scenes = _Scenes(_world(seed, person), day, rng)
    screens = [
        _Screen(sink, str(m), random.Random(_derive("screen", seed, person, day.toordinal(), m)))
        for m in range(monitors)
    ]
    today = _Day(plan, scenes, rng, screens[0], screens[1:], person, routines=routines)
    today.run()
    for number, screen in enumerate(screens[1:], start=1):
        if number == 1:
            assert today.first_side is not None
            today.run_side(screen, today.first_side, today.glances, _AMBIENT[0])
        else:
            today.run_side(screen, scenes.side(), [], _AMBIENT[1])
    return sink.records()


def generate_days(
    start: date,
    days: int | None,
    *,
    seed: int,
    tz: str = "Europe/Berlin",
    monitors: int = 2,
    person: str = "demo",
    include_weekends: bool = False,
    routines: bool = False,
) -> Iterator[Record]:
    """Stream the records of ``days`` calendar days from ``start`` (None: without end).

    Saturdays and Sundays are skipped unless ``include_weekends``; each day is generated
    independently from (seed, person, day), so any window of days is reproducible on its own.
    """
    current = start
    count = 0
    while days is None or count < days:
        if include_weekends or current.weekday() < 5:
            yield from generate_day(
                current, seed=seed, tz=tz, monitors=monitors, person=person, routines=routines
            )
        current += timedelta(days=1)
        count += 1


def _dump(records: Iterable[Record], handle: TextIO) -> int:
    written = 0
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    for record in records:
        handle.write(encode(record))
        handle.write("\n")
        written += 1
    return written


def write_jsonl(path: str | os.PathLike[str], records: Iterable[Record]) -> int:
    """Write one JSON record per line (UTF-8, compact, stable key order); returns the count."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        return _dump(records, handle)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmark.synthetic.desktop",
        description="Write SYNTHETIC desktop capture (our own event records) as JSONL.",
    )
    parser.add_argument(
        "--start",
        type=date.fromisoformat,
        default=date(2026, 3, 2),
        help="first local day, YYYY-MM-DD (default 2026-03-02)",
    )
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument(
        "--days",
        type=int,
        help="calendar days to cover (default 1); weekends only with --include-weekends",
    )
    amount.add_argument(
        "--events", type=int, help="stop after exactly this many records, generating days as needed"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tz", default="Europe/Berlin", help="IANA time zone of the person")
    parser.add_argument("--monitors", type=int, default=2)
    parser.add_argument("--person", default="demo", help="prefix of every source_key")
    parser.add_argument("--include-weekends", action="store_true")
    parser.add_argument(
        "--routines",
        action="store_true",
        help="the person also performs recurring routines (inbox triage, expenses, reviews)",
    )
    parser.add_argument("--out", default="-", help="output file; - writes to stdout")
    args = parser.parse_args(argv)
    if args.days is not None and args.days < 1:
        parser.error("--days must be at least 1.")
    if args.events is not None and args.events < 0:
        parser.error("--events must not be negative.")
    try:
        ZoneInfo(args.tz)
    except (ValueError, KeyError) as exc:  # ZoneInfoNotFoundError is a KeyError
        parser.error(f"--tz {args.tz!r} is not a known IANA time zone ({exc}).")
    if args.monitors < 1:
        parser.error("--monitors must be at least 1.")
    days = None if args.events is not None else (args.days or 1)
    records: Iterable[Record] = generate_days(
        args.start,
        days,
        seed=args.seed,
        tz=args.tz,
        monitors=args.monitors,
        person=args.person,
        include_weekends=args.include_weekends,
        routines=args.routines,
    )
    if args.events is not None:
        records = islice(records, args.events)
    if args.out == "-":
        try:
            _dump(records, sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:  # e.g. piped into head; Python's documented way to exit quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
    else:
        write_jsonl(args.out, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
