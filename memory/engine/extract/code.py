"""Code trajectories: the kind of work on pull requests, issues, reviews, CI runs and releases.

Reads the payloads the GitHub importer writes: ``type`` is a GH Archive event type
(``PullRequestEvent``) or a REST observation type (``pr_merged``), ``attributes`` its summary.
Every relevant event is one segment with the interval ``[at, at]``; events of other types
(pushes, stars, forks, branch creation, commits) make none. The kind of each type:

* ``pull_request``: ``PullRequestEvent``, ``pr_opened``, ``pr_merged``, ``pr_closed``; also
  comments and issue events (``IssueCommentEvent``, ``issue_comment``, ``issue_event``) whose
  ``pull_request`` attribute says they are about a pull request.
* ``issue``: ``IssuesEvent``, ``issue_opened``, ``issue_closed`` and the other comments and issue
  events.
* ``review``: ``PullRequestReviewEvent``, ``PullRequestReviewCommentEvent``, ``pr_review``,
  ``pr_review_comment``.
* ``ci_run``: ``workflow_run``, ``workflow_job`` (REST) and the webhook-only types
  ``WorkflowRunEvent``, ``WorkflowJobEvent``, ``CheckRunEvent``, ``CheckSuiteEvent``,
  ``StatusEvent`` should a source carry them.
* ``release``: ``ReleaseEvent``, and ``CreateEvent`` of a tag (how many projects release).

Facts name the kind of work, never one object: ``type``, ``action`` (opened, review_requested,
submitted, closed, ...), ``event`` (the REST issue event's name), ``merged``, ``state``,
``status``, ``conclusion`` (a CI run's success or failure), ``name`` (a workflow's) and
``ref_type``. A pull request's or issue's number, a tag or a branch is a citation, never a fact:
a routine is "a review follows a new pull request", not "pull request 2706 is reviewed". A
closing or finishing event (an action or issue event in :data:`CLOSING_ACTIONS`, a REST type in
:data:`CLOSING_TYPES`, or a CI run with a conclusion) reports what closed it as ``outcome``
facts: that action, event or type, and its ``merged``, ``state`` and ``conclusion``;
everything else is ``observed``. The extraction is incremental (:class:`CodeDay`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from memory.engine.records import EngineEvent, Fact, FactType, Path, Segment

KINDS: Mapping[str, str] = MappingProxyType(
    {
        "PullRequestEvent": "pull_request",
        "pr_opened": "pull_request",
        "pr_merged": "pull_request",
        "pr_closed": "pull_request",
        "IssuesEvent": "issue",
        "issue_opened": "issue",
        "issue_closed": "issue",
        "IssueCommentEvent": "issue",
        "issue_comment": "issue",
        "issue_event": "issue",
        "PullRequestReviewEvent": "review",
        "PullRequestReviewCommentEvent": "review",
        "pr_review": "review",
        "pr_review_comment": "review",
        "workflow_run": "ci_run",
        "workflow_job": "ci_run",
        "WorkflowRunEvent": "ci_run",
        "WorkflowJobEvent": "ci_run",
        "CheckRunEvent": "ci_run",
        "CheckSuiteEvent": "ci_run",
        "StatusEvent": "ci_run",
        "ReleaseEvent": "release",
    }
)
# Issue-like types that are about a pull request when their ``pull_request`` attribute is true.
_ISSUE_OR_PR = frozenset({"IssueCommentEvent", "issue_comment", "issue_event"})
CLOSING_ACTIONS = frozenset({"closed", "merged", "completed", "published", "released"})
CLOSING_TYPES = frozenset({"pr_merged", "pr_closed", "issue_closed"})
# (attribute, whether it states the close in a closing event), in the order facts are listed.
FIELDS = (
    ("action", True),
    ("event", True),
    ("merged", True),
    ("state", True),
    ("status", False),
    ("conclusion", True),
    ("name", False),
    ("ref_type", False),
)

VOCABULARY: Mapping[str, tuple[Path, ...]] = MappingProxyType(
    {
        kind: (("type",), *((name,) for name, _ in FIELDS))
        for kind in ("pull_request", "issue", "review", "ci_run", "release")
    }
)


def _kind(kind: str, attributes: Mapping[str, Any]) -> str | None:
    if kind == "CreateEvent":
        return "release" if attributes.get("ref_type") == "tag" else None
    if kind in _ISSUE_OR_PR and attributes.get("pull_request") is True:
        return "pull_request"
    return KINDS.get(kind)


def _closing(kind: str, segment_kind: str, attributes: Mapping[str, Any]) -> bool:
    said = (attributes.get("action"), attributes.get("event"))
    if any(isinstance(word, str) and word in CLOSING_ACTIONS for word in said):
        return True
    return kind in CLOSING_TYPES or (
        segment_kind == "ci_run" and attributes.get("conclusion") is not None
    )


def _segment(event: EngineEvent) -> Segment | None:
    kind = event.payload.get("type")
    attributes = event.payload.get("attributes")
    if not isinstance(kind, str) or not isinstance(attributes, Mapping):
        return None
    segment_kind = _kind(kind, attributes)
    if segment_kind is None:
        return None
    closing = _closing(kind, segment_kind, attributes)
    type_fact: FactType = "outcome" if kind in CLOSING_TYPES else "observed"
    facts = [Fact("", type_fact, ("type",), kind, event.at)]
    for name, states_close in FIELDS:
        value = attributes.get(name)
        if isinstance(value, str | int | float):  # bool is an int; None and lists are not
            fact_type: FactType = "outcome" if closing and states_close else "observed"
            facts.append(Fact("", fact_type, (name,), value, event.at))
    return Segment(event.at, event.at, tuple(facts), (event.id,), kind=segment_kind)


@dataclass
class CodeDay:
    """One day's code segments, extended event by event: one segment per relevant event."""

    zone: ZoneInfo
    done: list[Segment] = field(default_factory=list)
    fed: int = 0

    def feed(self, events: Sequence[EngineEvent]) -> None:
        for event in events:
            self.fed += 1
            segment = _segment(event)
            if segment is not None:
                self.done.append(segment)

    def segments(self) -> list[Segment]:
        return list(self.done)


def segments(events: Sequence[EngineEvent], zone: ZoneInfo) -> list[Segment]:
    """The code segments of one day's events, sorted by (time, id) (module docstring)."""
    day = CodeDay(zone)
    day.feed(events)
    return day.segments()
