"""The Code reference labeler: opportunities from the repository's own history.

GitHub data carries no annotations, so what happened is read from the repository's events up
to the current one (each repository is its own stream): when pull requests and issues opened,
who reviewed or answered them and when, which check runs failed and what followed. Bots
(logins ending in ``[bot]``, ``-bot``, ``-robot``) are nobody's answer. Opportunity types, in
the order a point is labelled; every event of the repository is a moment a nudge can be posted,
so each is actionable:

1. **review_waiting** → ``review_nudge``. A pull request opened in the stream, still open, not
   a draft, with no review, review comment or comment by anyone but its author, has waited
   longer than this repository's usual first-review time: the third quartile of the first
   review delays seen so far (at least :data:`MIN_SAMPLES`). Episode ``pull_request:N``;
   strength 2 once it has waited :data:`ESCALATE` times as long (a second nudge).
2. **failed_check** → ``ci_follow_up``. A check run that concluded in failure has had no later
   run of the same workflow on the same branch and no push to that branch for longer than the
   usual time to a follow-up (the median of those seen so far, at least
   :data:`MIN_SAMPLES`; :data:`FOLLOW_UP_DEFAULT` before that). Episode ``ci:WORKFLOW@BRANCH``
   (reopens with the next failure of it).
3. **issue_unanswered** → ``triage_nudge``. An issue opened in the stream, still open, with no
   comment by anyone but its author, has waited longer than the third quartile of the first
   response delays seen so far (at least :data:`MIN_SAMPLES`). Episode ``issue:N``.

**Version 2** (:class:`CodeLabelerV2`, the labels of record) changes the two waiting rules,
where a validity study with blind annotators found version 1 nudging earlier than people
would (a quarter of all items are past the third quartile by construction; annotators flagged
an issue unanswered for just over a day and a pull request waiting 31 hours, and declined items
"late" at 5 and 9 hours):

* **Clearly longer than usual** is past the third quartile *and* at least :data:`WAIT_FLOOR`,
  a day: what annotators read as late in a project whose contributors span time zones;
  escalation (strength 2) at :data:`ESCALATE` times that.
* **Not every open item waits for someone.** Work in progress and cherry-picks (by title:
  :data:`NOT_WAITING`) wait for their author or a release, not a reviewer; an issue opened by
  one of the repository's maintainers (anyone seen answering or reviewing another person's
  item, or merging, earlier in the stream) is their own tracking issue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from benchmark.labelers.base import Opportunity, mapping, median, quantile
from benchmark.streams.records import DecisionPoint, StreamEvent

MIN_SAMPLES = 3
ESCALATE = 3
FOLLOW_UP_DEFAULT = timedelta(hours=2)
FAILED = frozenset({"failure", "timed_out", "startup_failure"})
# Our choice: a nudge on a waiting pull request or issue is timely for half a day (a working
# day's events), a follow-up on a failed check for a quarter of one.
WAITING_TIMELY = timedelta(hours=12)
CHECK_TIMELY = timedelta(hours=6)
_BOT = re.compile(r"(\[bot\]|-bot|-robot)$", re.IGNORECASE)
# Version 2 (module docstring).
WAIT_FLOOR = timedelta(days=1)
NOT_WAITING = re.compile(
    r"^\s*[\[(]?\s*(wip|draft|do not merge|dnm)\b|cherry[- ]?pick", re.IGNORECASE
)

PR_OPEN_TYPES = frozenset({"pr_opened"})
PR_CLOSE_TYPES = frozenset({"pr_merged", "pr_closed"})
ISSUE_OPEN_TYPES = frozenset({"issue_opened"})
ISSUE_CLOSE_TYPES = frozenset({"issue_closed"})
REVIEW_TYPES = frozenset(
    {"PullRequestReviewEvent", "PullRequestReviewCommentEvent", "pr_review", "pr_review_comment"}
)
COMMENT_TYPES = frozenset({"IssueCommentEvent", "issue_comment"})
RUN_TYPES = frozenset({"workflow_run", "CheckRunEvent", "CheckSuiteEvent", "WorkflowRunEvent"})


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _human(login: str | None) -> bool:
    return login is not None and not _BOT.search(login)


def span_of(value: timedelta) -> str:
    hours = value.total_seconds() / 3600
    if hours >= 48:
        return f"{hours / 24:.1f} days"
    if hours >= 1:
        return f"{hours:.1f} h"
    return f"{int(value.total_seconds() // 60)} min"


@dataclass
class _Item:
    opened: datetime
    author: str | None
    title: str | None
    draft: bool = False
    answered: datetime | None = None
    closed: bool = False


@dataclass
class CodeLabeler:
    name: str = "code"
    version: int = 1
    pulls: dict[int, _Item] = field(default_factory=dict)
    issues: dict[int, _Item] = field(default_factory=dict)
    review_delays: list[timedelta] = field(default_factory=list)
    response_delays: list[timedelta] = field(default_factory=list)
    failures: dict[tuple[str, str], datetime] = field(default_factory=dict)
    follow_up_delays: list[timedelta] = field(default_factory=list)

    def observe(self, event: StreamEvent) -> None:
        kind = _text(event.payload.get("type")) or ""
        a = mapping(event.payload.get("attributes"))
        action = _text(a.get("action"))
        number = _int(a.get("number"))
        actor = _text(a.get("actor")) or _text(a.get("author"))
        if kind == "PullRequestEvent" and number is not None:
            if action in ("opened", "reopened"):
                self.pulls[number] = _Item(
                    event.at,
                    _text(a.get("author")) or actor,
                    _text(a.get("title")),
                    a.get("draft") is True,
                )
            elif action == "closed" and number in self.pulls:
                self.pulls[number].closed = True
        elif kind in PR_OPEN_TYPES and number is not None:
            self.pulls[number] = _Item(event.at, _text(a.get("author")), _text(a.get("title")))
        elif kind in PR_CLOSE_TYPES and number in self.pulls:
            self.pulls[number].closed = True
        elif kind == "IssuesEvent" and number is not None:
            if action in ("opened", "reopened"):
                self.issues[number] = _Item(event.at, actor, _text(a.get("title")))
            elif action == "closed" and number in self.issues:
                self.issues[number].closed = True
        elif kind in ISSUE_OPEN_TYPES and number is not None:
            self.issues[number] = _Item(event.at, _text(a.get("author")), _text(a.get("title")))
        elif kind in ISSUE_CLOSE_TYPES and number in self.issues:
            self.issues[number].closed = True
        if number is not None and (kind in REVIEW_TYPES or kind in COMMENT_TYPES):
            on_pull = kind in REVIEW_TYPES or a.get("pull_request") is True
            item = (self.pulls if on_pull else self.issues).get(number)
            if (
                item is not None
                and item.answered is None
                and _human(actor)
                and actor != item.author
            ):
                item.answered = event.at
                delays = self.review_delays if on_pull else self.response_delays
                delays.append(event.at - item.opened)
        self._checks(event, kind, a, actor)

    def _checks(self, event: StreamEvent, kind: str, a: Any, actor: str | None) -> None:
        if kind in RUN_TYPES:
            key = (_text(a.get("name")) or "check", _text(a.get("branch")) or "")
            failed = self.failures.pop(key, None)
            if failed is not None:
                self.follow_up_delays.append(event.at - failed)
            conclusion = _text(a.get("conclusion"))
            if conclusion is not None and conclusion.lower() in FAILED:
                self.failures[key] = event.at
        elif kind == "PushEvent":
            ref = _text(a.get("ref")) or ""
            branch = ref.removeprefix("refs/heads/")
            for key in [k for k in self.failures if k[1] == branch]:
                self.follow_up_delays.append(event.at - self.failures.pop(key))

    def opportunities(self, point: DecisionPoint) -> list[Opportunity]:
        found: list[Opportunity] = []
        now = point.at
        if len(self.review_delays) >= MIN_SAMPLES:
            usual = quantile(self.review_delays, 0.75)
            late = self._late(usual)
            for number, pr in sorted(self.pulls.items()):
                if pr.closed or pr.draft or pr.answered is not None:
                    continue
                if not self._waits("pull_request", pr):
                    continue
                waited = now - pr.opened
                if waited > late:
                    found.append(
                        Opportunity(
                            "review_waiting",
                            "review_nudge",
                            f"pull_request:{number}",
                            f"Pull request #{number} has waited {span_of(waited)} for a first "
                            f"review; this repository usually reviews within {span_of(usual)}"
                            f"{self._floor_words(usual)}.",
                            strength=2 if waited > ESCALATE * late else 1,
                            timely=WAITING_TIMELY,
                        )
                    )
        usual_follow = (
            median(self.follow_up_delays)
            if len(self.follow_up_delays) >= MIN_SAMPLES
            else FOLLOW_UP_DEFAULT
        )
        for (name, branch), failed in sorted(self.failures.items()):
            waited = now - failed
            if waited > usual_follow:
                found.append(
                    Opportunity(
                        "failed_check",
                        "ci_follow_up",
                        f"ci:{name}@{branch}@{failed.isoformat()}",
                        f"{name} failed on {branch or 'its branch'} {span_of(waited)} ago with "
                        "no new run or push since.",
                        timely=CHECK_TIMELY,
                    )
                )
        if len(self.response_delays) >= MIN_SAMPLES:
            usual = quantile(self.response_delays, 0.75)
            late = self._late(usual)
            for number, issue in sorted(self.issues.items()):
                if issue.closed or issue.answered is not None or not self._waits("issue", issue):
                    continue
                waited = now - issue.opened
                if waited > late:
                    found.append(
                        Opportunity(
                            "issue_unanswered",
                            "triage_nudge",
                            f"issue:{number}",
                            f"Issue #{number} has waited {span_of(waited)} for a first response; "
                            f"this repository usually answers within {span_of(usual)}"
                            f"{self._floor_words(usual)}.",
                            timely=WAITING_TIMELY,
                        )
                    )
        return found

    def _late(self, usual: timedelta) -> timedelta:
        """How long an item waits before it is late: this repository's usual (version 1)."""
        return usual

    def _floor_words(self, usual: timedelta) -> str:
        return ""

    def _waits(self, kind: str, item: _Item) -> bool:
        """Whether an open item waits for someone else at all (version 1: every one)."""
        return True

    def unanswered(self) -> list[tuple[str, int, datetime, str | None, str | None]]:
        """The open pull requests (not drafts) and issues nobody else has answered yet, as
        (``pull request`` or ``issue``, number, opened, author, title), longest waiting first:
        what a person judging a moment reads (the workbench shows it), not a label."""
        found = [
            (kind, number, item.opened, item.author, item.title)
            for kind, items in (("pull request", self.pulls), ("issue", self.issues))
            for number, item in items.items()
            if not item.closed and item.answered is None and not item.draft
        ]
        return sorted(found, key=lambda row: (row[2], row[1]))


@dataclass
class CodeLabelerV2(CodeLabeler):
    """Version 2: a wait is late past the third quartile and a day; work in progress,
    cherry-picks and maintainers' own issues wait for nobody (module docstring)."""

    version: int = 2
    maintainers: set[str] = field(default_factory=set)

    def observe(self, event: StreamEvent) -> None:
        a = mapping(event.payload.get("attributes"))
        kind = _text(event.payload.get("type")) or ""
        actor = _text(a.get("actor")) or _text(a.get("author"))
        number = _int(a.get("number"))
        if _human(actor) and number is not None:
            on_pull = kind in REVIEW_TYPES or a.get("pull_request") is True
            item = (self.pulls if on_pull else self.issues).get(number)
            answering = kind in REVIEW_TYPES or kind in COMMENT_TYPES
            if answering and item is not None and actor != item.author:
                self.maintainers.add(str(actor))
            merger = _text(a.get("merged_by"))
            if kind == "pr_merged" and _human(merger):
                self.maintainers.add(str(merger))
            merged_here = a.get("action") == "closed" and a.get("merged") is True
            if kind == "PullRequestEvent" and merged_here:  # GH Archive: the actor merged it
                self.maintainers.add(str(actor))
        super().observe(event)

    def _late(self, usual: timedelta) -> timedelta:
        return max(usual, WAIT_FLOOR)

    def _floor_words(self, usual: timedelta) -> str:
        return "; late from a day" if usual < WAIT_FLOOR else ""

    def _waits(self, kind: str, item: _Item) -> bool:
        if item.title is not None and NOT_WAITING.search(item.title):
            return False
        return not (kind == "issue" and item.author in self.maintainers)
