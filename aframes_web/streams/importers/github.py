"""GitHub activity as code observations, one entity per repository.

Reads GH Archive events (NDJSON, ``.json.gz``, or a folder of one JSON event per file) and
GitHub REST objects (JSON arrays, or the ``data`` column of CSV dumps such as DevLake's
``_raw_github_api_*.csv`` raw tables) and turns each into one or more ``observation`` records
with a compact summary in ``attributes``: no bodies, no URLs, strings cut at ``TEXT_MAX``.

Entity of an item: the repository, ``owner/name`` written ``owner.name`` and lower-cased
(GitHub names are case-insensitive and GH Archive keeps whatever casing a repository had at
the time; an owner login has no dot, so the first dot splits the key back). Keys longer than
``ENTITY_MAX`` keep a prefix and a hash, so ``<--entity>:<key>`` stays within the entity key
limit for an ``--entity`` prefix of up to 35 characters.

Source keys: ``gh:<event id>`` for GH Archive (and REST ``/events`` listings, which carry the
same ids), ``ghrest:<kind>:<id>[:<phase>]`` for REST objects. Issues and pull requests are
keyed by their repository-local number, so a pull request seen in both the issues and the
pulls listing is one event; the file read first (sorted order) supplies its attributes.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import re
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from zoneinfo import ZoneInfo

import orjson

from aframes_web.streams.importers.base import (
    FileTooStrange,
    Format,
    ReadLimits,
    SourceItem,
    bounded_lines,
)
from aframes_web.streams.importers.readahead import ReadAhead

# Attributes feed agent memory: long free text is cut here (titles, messages, paths).
TEXT_MAX = 300
LABELS_MAX = 10  # label names kept per issue or pull request
PAGES_MAX = 5  # wiki page titles kept per GollumEvent
# Sub-entity keys stay within 64 characters so that "<prefix>:<key>" fits the 100-character
# entity key limit for prefixes of up to 35 characters.
ENTITY_MAX = 64
# A JSON document's values are decoded one at a time; one larger than this is an error
# (a syntax error would otherwise pull the rest of a large file into memory looking for an end).
VALUE_MAX = 64 << 20
_KEYS_CACHED = 100_000  # repository name -> entity key; cleared when full (bounded memory)

_JSON_SUFFIXES = (".json", ".ndjson", ".jsonl")
_CSV_SUFFIXES = (".csv",)
_REPO_NAME_RE = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_-]{0,38})/([A-Za-z0-9._-]{1,100})$")
# A repository inside an API or web URL; github.com/<x>/... paths that are not repositories.
_REPO_URL_RE = re.compile(
    r"^https?://(?:api\.github\.com/repos|github\.com)/([A-Za-z0-9_][A-Za-z0-9_-]{0,38})"
    r"/([A-Za-z0-9._-]{1,100})(?:[/?#]|$)"
)
_NOT_OWNERS = frozenset({"orgs", "users", "settings", "apps", "marketplace", "sponsors"})
_TRAILING_NUMBER_RE = re.compile(r"/(\d+)/?$")
_SHA_MAX = 40


def _loads(raw: bytes) -> Any:
    """One JSON value from bytes, as ``json.loads(raw)`` reads it (or raises ValueError).

    orjson decodes a GH Archive line about 2.4x faster (3.3 against 7.9 us for 1.6 KB); what it
    refuses (NaN literals, a byte-order mark, invalid UTF-8, a lone surrogate escape) goes to
    json, which reads or refuses it as before. One difference stays: orjson reads an integer
    beyond 64 bits as a float, which ``_int`` then leaves out; GitHub's ids and counts are far
    below that, and looking for one first would cost more than the decoding saves.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


class _Bad(Exception):
    """An object this reader cannot turn into events; the message says why."""


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string"}.get(
        type(value), "an array" if isinstance(value, list) else "an object"
    )


def _text(value: Any, limit: int = TEXT_MAX) -> str | None:
    """A bounded, storable string (NUL removed: PostgreSQL cannot hold it), or None."""
    if not isinstance(value, str):
        return None
    if "\x00" in value:
        value = value.replace("\x00", "")
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return value


def _first_line(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return _text(value.strip().split("\n", 1)[0].rstrip("\r"))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _login(user: Any) -> str | None:
    return _text(user.get("login"), 100) if isinstance(user, dict) else None


def _name(obj: Any, key: str = "name", limit: int = 100) -> str | None:
    return _text(obj.get(key), limit) if isinstance(obj, dict) else None


def _labels(value: Any) -> list[str] | None:
    if not isinstance(value, list) or not value:
        return None
    names = [_name(label) for label in value[:LABELS_MAX]]
    return [n for n in names if n] or None


def _state(value: Any) -> str | None:
    """GitHub's run and job states, lower-cased; an empty conclusion means none yet."""
    text = _text(value, 50)
    return text.lower() if text else None


def _utc(value: Any) -> str:
    """An aware ISO 8601 time in UTC with ``Z``; GitHub's own form passes through as is."""
    if isinstance(value, str) and len(value) == 20 and value[19] == "Z" and value[10] == "T":
        return value
    if not isinstance(value, str):
        raise _Bad(f"has no time (got {_kind_of(value)})")
    text = value[:-4] + "+00:00" if value.endswith(" UTC") else value  # BigQuery exports
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise _Bad(f"{value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise _Bad(f"{value!r} has no UTC offset")
    moment = moment.astimezone(UTC)
    spec = "microseconds" if moment.microsecond else "seconds"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")


def _compact(attributes: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attributes.items() if v is not None}


def entity_key(full_name: str) -> str | None:
    """``owner/name`` as a sub-entity key: ``owner.name``, lower-cased; None if not a repo name."""
    match = _REPO_NAME_RE.fullmatch(full_name)
    if match is None:
        return None
    key = f"{match[1]}.{match[2]}".lower()
    if len(key) > ENTITY_MAX:
        digest = hashlib.sha256(key.encode()).hexdigest()[:8]
        key = f"{key[: ENTITY_MAX - 9]}-{digest}"
    return key


# --- GH Archive events ------------------------------------------------------------------------
# Each summariser fills the attributes of one event type and returns its value (or None).
# Payloads may be full (before October 2025) or trimmed (after: PushEvent without size and
# commits, PullRequestEvent with little more than number, head and base), so every field is
# optional; a missing one is left out, never guessed.

Summariser = Callable[[dict[str, Any], dict[str, Any]], "int | None"]


def _push(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    a["ref"] = _text(p.get("ref"))
    a["head"] = _text(p.get("head"), _SHA_MAX)
    a["distinct"] = _int(p.get("distinct_size"))
    commits = p.get("commits")
    if isinstance(commits, list) and commits and isinstance(commits[-1], dict):
        a["message"] = _first_line(commits[-1].get("message"))
    size = _int(p.get("size"))
    if size is not None:
        return size
    # The commits list holds at most 20; size (when present) is the true count.
    return len(commits) if isinstance(commits, list) else None


def _pull_request(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    pr = p.get("pull_request")
    pr = pr if isinstance(pr, dict) else {}
    a["action"] = _text(p.get("action"), 50)
    a["number"] = _int(p.get("number")) or _int(pr.get("number"))
    a["title"] = _text(pr.get("title"))
    a["state"] = _text(pr.get("state"), 50)
    a["merged"] = _bool(pr.get("merged"))
    a["draft"] = _bool(pr.get("draft"))
    a["author"] = _login(pr.get("user"))
    a["head"] = _name(pr.get("head"), "ref", TEXT_MAX)
    a["base"] = _name(pr.get("base"), "ref", TEXT_MAX)
    for key in ("commits", "additions", "deletions", "changed_files"):
        a[key] = _int(pr.get(key))
    a["label"] = _name(p.get("label"))
    a["assignee"] = _login(p.get("assignee"))
    a["reviewer"] = _login(p.get("requested_reviewer"))
    return None


def _issues(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    issue = p.get("issue")
    issue = issue if isinstance(issue, dict) else {}
    a["action"] = _text(p.get("action"), 50)
    a["number"] = _int(issue.get("number"))
    a["title"] = _text(issue.get("title"))
    a["state"] = _text(issue.get("state"), 50)
    a["labels"] = _labels(issue.get("labels"))
    a["label"] = _name(p.get("label"))
    a["assignee"] = _login(p.get("assignee"))
    a["pull_request"] = True if "pull_request" in issue else None
    return None


def _issue_comment(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    issue = p.get("issue")
    issue = issue if isinstance(issue, dict) else {}
    comment = p.get("comment")
    a["action"] = _text(p.get("action"), 50)
    a["number"] = _int(issue.get("number"))
    a["title"] = _text(issue.get("title"))
    a["pull_request"] = True if "pull_request" in issue else None
    a["comment_id"] = _int(comment.get("id")) if isinstance(comment, dict) else None
    return None


def _review_comment(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    pr = p.get("pull_request")
    pr = pr if isinstance(pr, dict) else {}
    comment = p.get("comment")
    comment = comment if isinstance(comment, dict) else {}
    a["action"] = _text(p.get("action"), 50)
    a["number"] = _int(pr.get("number"))
    a["title"] = _text(pr.get("title"))
    a["path"] = _text(comment.get("path"))
    a["comment_id"] = _int(comment.get("id"))
    a["review_id"] = _int(comment.get("pull_request_review_id"))
    return None


def _review(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    pr = p.get("pull_request")
    pr = pr if isinstance(pr, dict) else {}
    review = p.get("review")
    review = review if isinstance(review, dict) else {}
    a["action"] = _text(p.get("action"), 50)
    a["number"] = _int(pr.get("number"))
    a["title"] = _text(pr.get("title"))
    a["state"] = _text(review.get("state"), 50)
    a["review_id"] = _int(review.get("id"))
    return None


def _ref(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    a["ref"] = _text(p.get("ref"))
    a["ref_type"] = _text(p.get("ref_type"), 50)
    return None


def _fork(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    forkee = p.get("forkee")
    a["fork"] = _name(forkee, "full_name", 150)
    return None


def _release(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    release = p.get("release")
    release = release if isinstance(release, dict) else {}
    a["action"] = _text(p.get("action"), 50)
    a["tag"] = _text(release.get("tag_name"))
    a["name"] = _text(release.get("name"))
    a["prerelease"] = _bool(release.get("prerelease"))
    a["draft"] = _bool(release.get("draft"))
    return None


def _member(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    a["action"] = _text(p.get("action"), 50)
    a["member"] = _login(p.get("member"))
    return None


def _commit_comment(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    comment = p.get("comment")
    comment = comment if isinstance(comment, dict) else {}
    a["commit"] = _text(comment.get("commit_id"), _SHA_MAX)
    a["path"] = _text(comment.get("path"))
    return None


def _gollum(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    pages = p.get("pages")
    if not isinstance(pages, list):
        return None
    titles = [_name(page, "title", 100) for page in pages[:PAGES_MAX]]
    a["pages"] = [t for t in titles if t] or None
    a["action"] = _name(pages[0], "action", 50) if pages else None
    return len(pages)


def _discussion(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    discussion = p.get("discussion")
    discussion = discussion if isinstance(discussion, dict) else {}
    a["action"] = _text(p.get("action"), 50)
    a["number"] = _int(discussion.get("number"))
    a["title"] = _text(discussion.get("title"))
    a["category"] = _name(discussion.get("category"))
    return None


def _other(p: dict[str, Any], a: dict[str, Any]) -> int | None:
    a["action"] = _text(p.get("action"), 50)
    return None


_ARCHIVE: dict[str, Summariser] = {
    "PushEvent": _push,
    "PullRequestEvent": _pull_request,
    "IssuesEvent": _issues,
    "IssueCommentEvent": _issue_comment,
    "PullRequestReviewCommentEvent": _review_comment,
    "PullRequestReviewEvent": _review,
    "CreateEvent": _ref,
    "DeleteEvent": _ref,
    "ForkEvent": _fork,
    "WatchEvent": _other,
    "ReleaseEvent": _release,
    "MemberEvent": _member,
    "CommitCommentEvent": _commit_comment,
    "GollumEvent": _gollum,
    "DiscussionEvent": _discussion,
}
_UNITS = {"PushEvent": "commits", "GollumEvent": "pages"}


# --- GitHub REST objects ----------------------------------------------------------------------
# A REST object becomes one or more (type, time, key, value, unit, attributes) observations:
#   issue           issue_opened @created_at, issue_closed @closed_at      ghrest:issue:<n>:<phase>
#   pull request    pr_opened @created_at, then pr_merged @merged_at or pr_closed @closed_at
#                   (also from the issues listing, which holds pull requests)  ghrest:pr:<n>:<phase>
#   issue comment   issue_comment @created_at                       ghrest:issue_comment:<id>
#   review          pr_review @submitted_at (pending reviews skipped)   ghrest:pr_review:<id>
#   review comment  pr_review_comment @created_at               ghrest:pr_review_comment:<id>
#   Actions run     workflow_run @created_at                ghrest:workflow_run:<id>:<attempt>
#   Actions job     workflow_job @created_at or started_at, value = seconds it ran
#                                                           ghrest:workflow_job:<id>:<attempt>
#   issue event     issue_event @created_at, the event name in attributes ghrest:issue_event:<id>
#   milestone       milestone_created @created_at, milestone_closed @closed_at
#   commit          commit (pr_commit from a pull request's commits listing) @author date
#                                                                       ghrest:commit:<sha>
#   account, organisation, an account's organisation list: no repository, skipped with a note.
# Listings show objects as they are now; an observation carries only what its moment fixed
# (principle 4): no current state or labels on an opening.
Observation = tuple[str, Any, str, "int | float | None", "str | None", dict[str, Any]]


def _obs(
    name: str,
    when: Any,
    key: str,
    attributes: dict[str, Any],
    value: int | float | None = None,
    unit: str | None = None,
) -> Observation:
    return (name, when, key, value, unit, attributes)


# Kinds named by file names (``_raw_github_api_pull_requests.csv``, ``pulls.json``, ...),
# longest match first; used where the object's fields do not tell (commits of a pull request).
_NAME_KINDS = (
    ("pull_request_review_comments", "review_comment"),
    ("review_comments", "review_comment"),
    ("pull_request_reviews", "review"),
    ("reviews", "review"),
    ("pull_request_commits", "pr_commit"),
    ("pull_requests", "pull_request"),
    ("pulls", "pull_request"),
    ("issue_comments", "issue_comment"),
    ("comments", "issue_comment"),
    ("issue_events", "issue_event"),
    ("issues", "issue"),
    ("runs", "workflow_run"),
    ("jobs", "workflow_job"),
    ("milestones", "milestone"),
    ("account_orgs", "account_orgs"),
    ("accounts", "account"),
    ("orgs", "account"),
    ("commits", "commit"),
)
# Objects that carry no repository: skipped with a note, never an error.
_SKIPPED = {
    "account": "accounts and organisations belong to no repository",
    "account_orgs": "organisation lists of accounts belong to no repository",
}


def name_kind(file_name: str) -> str | None:
    stem = file_name.lower()
    for suffix in (".gz", *_CSV_SUFFIXES, *_JSON_SUFFIXES):
        stem = stem.removesuffix(suffix)
    for token, kind in _NAME_KINDS:
        if stem.endswith(token):
            return kind
    return None


def detect_kind(obj: dict[str, Any]) -> str | None:
    """The REST object kind from its fields (order matters: runs also have ``event``)."""
    if "payload" in obj and "type" in obj and isinstance(obj.get("repo"), dict):
        return "archive"
    if "workflow_id" in obj and "run_number" in obj:
        return "workflow_run"
    if "run_id" in obj and ("steps" in obj or "run_url" in obj):
        return "workflow_job"
    if "diff_hunk" in obj or "pull_request_review_id" in obj:
        return "review_comment"
    if "submitted_at" in obj or ("pull_request_url" in obj and "state" in obj):
        return "review"
    if isinstance(obj.get("head"), dict) and isinstance(obj.get("base"), dict):
        return "pull_request"
    if "repository_url" in obj and "number" in obj and "title" in obj:
        return "issue"
    if "open_issues" in obj and "closed_issues" in obj:
        return "milestone"
    if isinstance(obj.get("event"), str) and ("actor" in obj or "issue" in obj):
        return "issue_event"
    if "issue_url" in obj and "body" in obj:
        return "issue_comment"
    if "sha" in obj and isinstance(obj.get("commit"), dict):
        return "commit"
    if "login" in obj and ("repos_url" in obj or obj.get("type") in ("User", "Organization")):
        return "account"
    return None


def _repo_of(obj: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        url = obj.get(key)
        if isinstance(url, str):
            match = _REPO_URL_RE.match(url)
            if match and match[1].lower() not in _NOT_OWNERS:
                return f"{match[1]}/{match[2]}"
    return None


def _number_in(url: Any) -> int | None:
    if not isinstance(url, str):
        return None
    match = _TRAILING_NUMBER_RE.search(url)
    return int(match[1]) if match else None


def _need_id(obj: dict[str, Any], key: str = "id") -> Any:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | str) or value == "":
        raise _Bad(f"has no {key}")
    return value


def _issue_like(obj: dict[str, Any]) -> list[Observation]:
    """An issue (opened, closed) or a pull request (opened, merged or closed).

    A pull request in the issues listing carries ``pull_request``; it is keyed like one from
    the pulls listing (by number), so reading both listings stores it once.
    """
    number = _int(obj.get("number"))
    if number is None:
        raise _Bad("has no number")
    pr_info = obj.get("pull_request")
    is_pr = isinstance(pr_info, dict) or isinstance(obj.get("head"), dict)
    title = _text(obj.get("title"))
    # Listings show the object as it is now: its state, labels and draft flag were not known
    # when it was opened (principle 4, causal), so only what opening fixed goes in.
    opened = {"number": number, "title": title, "author": _login(obj.get("user"))}
    if not is_pr:
        out = [_obs("issue_opened", obj.get("created_at"), f"ghrest:issue:{number}:opened", opened)]
        if obj.get("closed_at"):
            closed = {
                "number": number,
                "title": title,
                "state_reason": _text(obj.get("state_reason"), 50),
            }
            key = f"ghrest:issue:{number}:closed"
            out.append(_obs("issue_closed", obj["closed_at"], key, closed))
        return out
    opened["head"] = _name(obj.get("head"), "ref", TEXT_MAX)
    opened["base"] = _name(obj.get("base"), "ref", TEXT_MAX)
    out = [_obs("pr_opened", obj.get("created_at"), f"ghrest:pr:{number}:opened", opened)]
    merged_at = obj.get("merged_at")
    if merged_at is None and isinstance(pr_info, dict):
        merged_at = pr_info.get("merged_at")
    if merged_at:
        merged = {"number": number, "title": title, "merged_by": _login(obj.get("merged_by"))}
        out.append(_obs("pr_merged", merged_at, f"ghrest:pr:{number}:merged", merged))
    elif obj.get("closed_at"):
        closed = {"number": number, "title": title}
        out.append(_obs("pr_closed", obj["closed_at"], f"ghrest:pr:{number}:closed", closed))
    return out


def _issue_comment_obj(obj: dict[str, Any]) -> list[Observation]:
    ident = _need_id(obj)
    html = obj.get("html_url")
    attributes = {
        "number": _number_in(obj.get("issue_url")),
        "author": _login(obj.get("user")),
        "pull_request": True if isinstance(html, str) and "/pull/" in html else None,
        "comment_id": _int(ident),
    }
    key = f"ghrest:issue_comment:{ident}"
    return [_obs("issue_comment", obj.get("created_at"), key, attributes)]


def _review_obj(obj: dict[str, Any]) -> list[Observation]:
    ident = _need_id(obj)
    if not obj.get("submitted_at"):
        return []  # a pending review has not happened yet
    attributes = {
        "number": _number_in(obj.get("pull_request_url")),
        "author": _login(obj.get("user")),
        "state": _text(obj.get("state"), 50),
        "review_id": _int(ident),
    }
    return [_obs("pr_review", obj["submitted_at"], f"ghrest:pr_review:{ident}", attributes)]


def _review_comment_obj(obj: dict[str, Any]) -> list[Observation]:
    ident = _need_id(obj)
    attributes = {
        "number": _number_in(obj.get("pull_request_url")),
        "author": _login(obj.get("user")),
        "path": _text(obj.get("path")),
        "line": _int(obj.get("line")),
        "review_id": _int(obj.get("pull_request_review_id")),
        "in_reply_to": _int(obj.get("in_reply_to_id")),
        "comment_id": _int(ident),
    }
    key = f"ghrest:pr_review_comment:{ident}"
    return [_obs("pr_review_comment", obj.get("created_at"), key, attributes)]


def _run_obj(obj: dict[str, Any]) -> list[Observation]:
    ident = _need_id(obj)
    attempt = _int(obj.get("run_attempt")) or 1
    attributes = {
        "name": _text(obj.get("name"), 100),
        "event": _text(obj.get("event"), 50),
        "status": _state(obj.get("status")),
        "conclusion": _state(obj.get("conclusion")),
        "branch": _text(obj.get("head_branch")),
        "sha": _text(obj.get("head_sha"), _SHA_MAX),
        "run_number": _int(obj.get("run_number")),
        "attempt": attempt,
        "actor": _login(obj.get("actor")),
        "run_id": _int(ident),
    }
    key = f"ghrest:workflow_run:{ident}:{attempt}"
    return [_obs("workflow_run", obj.get("created_at"), key, attributes)]


def _seconds_between(start: Any, end: Any) -> float | None:
    try:
        began = datetime.fromisoformat(_utc(start))
        ended = datetime.fromisoformat(_utc(end))
    except _Bad:
        return None
    seconds = (ended - began).total_seconds()
    return seconds if seconds >= 0 else None


def _job_obj(obj: dict[str, Any]) -> list[Observation]:
    ident = _need_id(obj)
    when = obj.get("created_at") or obj.get("started_at")
    if not when:
        return []  # queued, never started: nothing happened yet
    attempt = _int(obj.get("run_attempt")) or 1
    steps = obj.get("steps")
    steps = steps if isinstance(steps, list) else []
    failed = next(
        (
            _name(step, "name", TEXT_MAX)
            for step in steps
            if isinstance(step, dict) and _state(step.get("conclusion")) == "failure"
        ),
        None,
    )
    duration = _seconds_between(obj.get("started_at"), obj.get("completed_at"))
    attributes = {
        "name": _text(obj.get("name"), 100),
        "status": _state(obj.get("status")),
        "conclusion": _state(obj.get("conclusion")),
        "branch": _text(obj.get("head_branch")),
        "sha": _text(obj.get("head_sha"), _SHA_MAX),
        "run_id": _int(obj.get("run_id")),
        "attempt": attempt,
        "steps": len(steps) or None,
        "failed_step": failed,
        "job_id": _int(ident),
    }
    key = f"ghrest:workflow_job:{ident}:{attempt}"
    unit = "s" if duration is not None else None
    return [_obs("workflow_job", when, key, attributes, duration, unit)]


def _issue_event_obj(obj: dict[str, Any]) -> list[Observation]:
    ident = _need_id(obj)
    issue = obj.get("issue")
    issue = issue if isinstance(issue, dict) else {}
    rename = obj.get("rename")
    rename = rename if isinstance(rename, dict) else {}
    attributes = {
        "event": _text(obj.get("event"), 50),
        "actor": _login(obj.get("actor")),
        "number": _int(issue.get("number")) or _number_in(issue.get("url")),
        "title": _text(issue.get("title")),
        "pull_request": True if "pull_request" in issue else None,
        "label": _name(obj.get("label")),
        "assignee": _login(obj.get("assignee")),
        "reviewer": _login(obj.get("requested_reviewer")),
        "milestone": _name(obj.get("milestone"), "title"),
        "renamed_from": _text(rename.get("from")),
        "renamed_to": _text(rename.get("to")),
        "commit": _text(obj.get("commit_id"), _SHA_MAX),
        "state_reason": _text(obj.get("state_reason"), 50),
    }
    key = f"ghrest:issue_event:{ident}"
    return [_obs("issue_event", obj.get("created_at"), key, attributes)]


def _milestone_obj(obj: dict[str, Any]) -> list[Observation]:
    ident = _need_id(obj)
    attributes = {
        "number": _int(obj.get("number")),
        "title": _text(obj.get("title")),
        "state": _text(obj.get("state"), 50),
        "open_issues": _int(obj.get("open_issues")),
        "closed_issues": _int(obj.get("closed_issues")),
        "due_on": _text(obj.get("due_on"), 50),
    }
    key = f"ghrest:milestone:{ident}"
    out = [_obs("milestone_created", obj.get("created_at"), f"{key}:created", attributes)]
    if obj.get("closed_at"):
        closed = {"number": attributes["number"], "title": attributes["title"]}
        out.append(_obs("milestone_closed", obj["closed_at"], f"{key}:closed", closed))
    return out


def _commit_obj(obj: dict[str, Any], kind: str, number: int | None) -> list[Observation]:
    sha = obj.get("sha")
    if not isinstance(sha, str) or not sha:
        raise _Bad("has no sha")
    commit = obj["commit"]
    author = commit.get("author") if isinstance(commit.get("author"), dict) else {}
    committer = commit.get("committer") if isinstance(commit.get("committer"), dict) else {}
    attributes = {
        "sha": _text(sha, _SHA_MAX),
        "message": _first_line(commit.get("message")),
        "author": _login(obj.get("author")) or _text(author.get("name"), 100),
        "committed_at": _text(committer.get("date"), 50),
        "pr_number": number,
    }
    return [_obs(kind, author.get("date"), f"ghrest:commit:{sha[:_SHA_MAX]}", attributes)]


# Fields that name the repository of each kind, first match wins.
_REPO_FIELDS = {
    "issue": ("repository_url", "url", "html_url"),
    "pull_request": ("url", "issue_url", "html_url"),
    "issue_comment": ("issue_url", "url", "html_url"),
    "review": ("pull_request_url", "html_url"),
    "review_comment": ("pull_request_url", "url", "html_url"),
    "workflow_run": ("url", "html_url"),
    "workflow_job": ("run_url", "url", "html_url"),
    "issue_event": ("url",),
    "milestone": ("url", "html_url"),
    "commit": ("url", "html_url"),
    "pr_commit": ("url", "html_url"),
}


# --- reading files ----------------------------------------------------------------------------


def _is_csv(name: str) -> bool:
    return name.lower().removesuffix(".gz").endswith(_CSV_SUFFIXES)


def _is_json(name: str) -> bool:
    return name.lower().removesuffix(".gz").endswith(_JSON_SUFFIXES)


def _open_binary(path: Path) -> tuple[IO[bytes], IO[bytes]]:
    """The file's bytes (gunzipped when gzip) and the raw handle whose position is progress."""
    with path.open("rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    raw = path.open("rb")
    if gzipped:
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    return raw, raw


class GithubReader:
    """Streams SourceItems from a file or a folder (files by extension, in sorted order)."""

    def __init__(self, path: Path, tz: ZoneInfo | None = None) -> None:
        if not path.exists():
            raise ValueError(f"{path} does not exist")
        self.path = path
        self.bytes_read = 0
        self.notes: list[str] = []
        self._done = 0  # bytes of the files finished
        self._keys: dict[str, str | None] = {}
        self._skipped: Counter[tuple[str, str]] = Counter()

    # files

    def _files(self) -> Iterator[tuple[Path, str]]:
        if self.path.is_file():
            yield self.path, self.path.name
            return
        ignored: list[str] = []
        for top, dirs, names in os.walk(self.path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                if name.startswith("."):
                    continue
                file = Path(top) / name
                label = file.relative_to(self.path).as_posix()
                if _is_csv(name) or _is_json(name):
                    yield file, label
                else:
                    ignored.append(label)
        if ignored:
            shown = ", ".join(ignored[:3]) + (", ..." if len(ignored) > 3 else "")
            self.notes.append(
                f"{len(ignored)} file(s) skipped: not JSON, NDJSON or CSV by name ({shown})"
            )

    def __iter__(self) -> Iterator[SourceItem]:
        for file, label in self._files():
            hint = name_kind(file.name)
            if _is_csv(file.name):
                yield from self._read_csv(file, label, hint)
            else:
                yield from self._read_json(file, label, hint)
            self._done += file.stat().st_size
            self.bytes_read = self._done
        for (label, reason), count in sorted(self._skipped.items()):
            self.notes.append(f"{label}: {count:,} skipped: {reason}")

    # JSON and NDJSON

    def _ndjson(self, file: Path) -> bool:
        """NDJSON if the first non-empty line is a whole JSON value (GH Archive's .json.gz)."""
        if file.name.lower().removesuffix(".gz").endswith((".ndjson", ".jsonl")):
            return True
        handle, raw = _open_binary(file)
        limits = ReadLimits.for_file(file, gzipped=handle is not raw)
        try:
            with handle:
                for line in bounded_lines(handle, file.name, limits):
                    if line.strip():
                        json.loads(line)
                        return True
        except FileTooStrange:
            return True  # read as lines, where the reader says what is wrong with them
        except (ValueError, UnicodeDecodeError, OSError, EOFError, zlib.error):
            return False
        finally:
            raw.close()
        return True

    def _read_json(self, file: Path, label: str, hint: str | None) -> Iterator[SourceItem]:
        if self._ndjson(file):
            yield from self._read_ndjson(file, label, hint)
        else:
            yield from self._read_document(file, label, hint)

    def _read_ndjson(self, file: Path, label: str, hint: str | None) -> Iterator[SourceItem]:
        handle, raw = _open_binary(file)
        done = self._done
        archive = self._archive
        gzipped = handle is not raw
        limits = ReadLimits.for_file(file, gzipped=gzipped)
        ahead = ReadAhead(raw, gzipped=gzipped, limits=limits, name=label)
        try:
            with ahead as lines:
                number = 0
                try:
                    for line in lines:
                        number += 1
                        if not number & 63:
                            self.bytes_read = done + ahead.position
                        location = f"{label}:{number}"
                        try:
                            value = _loads(line)
                        except (ValueError, UnicodeDecodeError) as exc:
                            if line.strip():
                                yield SourceItem(location, error=f"not valid JSON ({exc})")
                            continue
                        # GH Archive, the hot path: one event a line.
                        if type(value) is dict and "payload" in value and "type" in value:
                            yield archive(value, location)
                        elif isinstance(value, list):
                            for element in value:
                                yield from self._value(element, location, label, hint, None)
                        else:
                            yield from self._value(value, location, label, hint, None)
                except (OSError, EOFError, zlib.error) as exc:  # truncated or corrupt gzip
                    yield SourceItem(f"{label}:{number + 1}", error=f"cannot read further ({exc})")
        finally:
            raw.close()

    def _read_document(self, file: Path, label: str, hint: str | None) -> Iterator[SourceItem]:
        """A JSON document: one object (pretty-printed event), an array, or several values.

        Array elements are decoded one at a time from a sliding buffer, so a large array does
        not have to fit in memory at once.
        """
        handle, raw = _open_binary(file)
        done = self._done
        decoder = json.JSONDecoder()
        text = io.TextIOWrapper(handle, encoding="utf-8-sig")
        buffer, pos, line, eof = "", 0, 1, False
        depth = 0  # 1 inside a top-level array

        def more() -> bool:
            nonlocal buffer, pos, eof
            if eof:
                return False
            chunk = text.read(max(1 << 16, len(buffer) - pos))
            self.bytes_read = done + raw.tell()
            if not chunk:
                eof = True
                return False
            buffer = buffer[pos:] + chunk
            pos = 0
            return True

        try:
            with text:
                while True:
                    # skip whitespace (and commas between array elements)
                    while True:
                        while pos < len(buffer) and buffer[pos] in " \t\r\n,":
                            if buffer[pos] == "\n":
                                line += 1
                            pos += 1
                        if pos < len(buffer) or not more():
                            break
                    if pos >= len(buffer):
                        return
                    char = buffer[pos]
                    if char == "[" and depth == 0:
                        depth, pos = 1, pos + 1
                        continue
                    if char == "]" and depth == 1:
                        depth, pos = 0, pos + 1
                        continue
                    location = f"{label}:{line}"
                    while True:
                        try:
                            value, end = decoder.raw_decode(buffer, pos)
                        except json.JSONDecodeError as exc:
                            if len(buffer) - pos > VALUE_MAX:
                                message = f"not valid JSON within {VALUE_MAX >> 20} MiB"
                            elif more():
                                continue
                            else:
                                message = f"not valid JSON ({exc.msg})"
                            yield SourceItem(location, error=message)
                            return
                        if end == len(buffer) and more():
                            continue  # a number at the buffer's end may go on
                        break
                    line += buffer.count("\n", pos, end)
                    pos = end
                    if type(value) is dict and "payload" in value and "type" in value:
                        yield self._archive(value, location)
                    elif isinstance(value, list):
                        for element in value:
                            yield from self._value(element, location, label, hint, None)
                    else:
                        yield from self._value(value, location, label, hint, None)
        except (UnicodeDecodeError, OSError, EOFError, zlib.error) as exc:
            yield SourceItem(f"{label}:{line}", error=f"cannot read further ({exc})")
        finally:
            raw.close()

    # CSV dumps (the JSON object in the ``data`` column)

    def _read_csv(self, file: Path, label: str, hint: str | None) -> Iterator[SourceItem]:
        # One REST object per cell can be far larger than csv's default 128 KiB field limit.
        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
        handle, raw = _open_binary(file)
        done = self._done
        text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
        line = 1
        try:
            with text:
                rows = csv.reader(text)
                header = next(rows, None)
                if header is None:
                    return
                if "data" not in header:
                    yield SourceItem(
                        f"{label}:1",
                        error="no 'data' column: a CSV dump must hold each GitHub object as "
                        "JSON in a column named data",
                    )
                    return
                data_at = header.index("data")
                input_at = header.index("input") if "input" in header else None
                line = rows.line_num + 1
                for row in rows:
                    location = f"{label}:{line}"
                    line = rows.line_num + 1
                    self.bytes_read = done + raw.tell()
                    if len(row) <= data_at:
                        yield SourceItem(location, error="row has no data column")
                        continue
                    try:
                        value = json.loads(row[data_at])
                    except ValueError as exc:
                        yield SourceItem(location, error=f"data is not valid JSON ({exc})")
                        continue
                    context = (
                        row[input_at] if input_at is not None and input_at < len(row) else None
                    )
                    if isinstance(value, list) and hint not in _SKIPPED:
                        for element in value:
                            yield from self._value(element, location, label, hint, context)
                    else:
                        yield from self._value(value, location, label, hint, context)
        except (csv.Error, UnicodeDecodeError, OSError, EOFError, zlib.error) as exc:
            yield SourceItem(f"{label}:{line}", error=f"cannot read further ({exc})")
        finally:
            raw.close()

    # objects

    def _entity(self, full_name: Any) -> str | None:
        if not isinstance(full_name, str):
            return None
        key = self._keys.get(full_name)
        if key is None and full_name not in self._keys:
            if len(self._keys) >= _KEYS_CACHED:
                self._keys.clear()
            key = self._keys[full_name] = entity_key(full_name)
        return key

    def _archive(self, event: dict[str, Any], location: str) -> SourceItem:
        """A GH Archive event (or a REST ``/events`` element) as one observation."""
        repo = event.get("repo")
        entity = self._entity(repo.get("name") if isinstance(repo, dict) else None)
        if entity is None:
            shown = repo.get("name") if isinstance(repo, dict) else repo
            return SourceItem(
                location,
                error=f"repo.name {shown!r} is not an owner/name repository "
                "(GH Archive events before 2015 use another schema, not read here)",
            )
        ident = event.get("id")
        if isinstance(ident, bool) or not isinstance(ident, str | int) or ident == "":
            return SourceItem(location, error="event has no id")
        kind = event.get("type")
        if not isinstance(kind, str) or not kind or len(kind) > 100:
            return SourceItem(location, error=f"event type {kind!r} is not an event type name")
        payload = event.get("payload")
        if not isinstance(payload, dict):
            payload = {}
        actor = event.get("actor")
        attributes: dict[str, Any] = {
            "actor": _text(actor.get("login"), 100) if isinstance(actor, dict) else None
        }
        try:
            when = _utc(event.get("created_at"))
            value = _ARCHIVE.get(kind, _other)(payload, attributes)
        except _Bad as bad:
            return SourceItem(location, error=f"created_at {bad}", entity=entity)
        body: dict[str, Any] = {"type": kind, "value": value}
        if value is not None and kind in _UNITS:
            body["unit"] = _UNITS[kind]
        body["attributes"] = _compact(attributes)
        item = {
            "occurred_at": when,
            "kind": "observation",
            "source_key": f"gh:{ident}",
            "payload": body,
        }
        return SourceItem(location, item=item, entity=entity)

    def _value(
        self, value: Any, location: str, label: str, hint: str | None, context: str | None
    ) -> Iterator[SourceItem]:
        """A REST object (or an event in a REST listing) as its observations."""
        if isinstance(value, dict) and "payload" in value and "type" in value:
            yield self._archive(value, location)
            return
        kind = detect_kind(value) if isinstance(value, dict) else None
        if kind == "commit" and hint == "pr_commit":
            kind = "pr_commit"
        kind = kind or hint
        if kind in _SKIPPED:
            self._skipped[(label, _SKIPPED[kind])] += 1
            return
        if not isinstance(value, dict):
            yield SourceItem(location, error=f"expected a JSON object, got {_kind_of(value)}")
            return
        if kind not in _REPO_FIELDS:
            fields = ", ".join(sorted(value)[:8])
            yield SourceItem(
                location, error=f"not a GitHub event or REST object this importer reads ({fields})"
            )
            return
        repo = _repo_of(value, *_REPO_FIELDS[kind])
        nested = value.get("repository") or value.get("issue")
        if repo is None and isinstance(nested, dict):
            repo = nested.get("full_name") or _repo_of(nested, "repository_url", "url")
        entity = self._entity(repo)
        if entity is None:
            yield SourceItem(
                location,
                error=f"{kind}: cannot tell the repository (no api.github.com/repos/OWNER/NAME "
                f"URL in {', '.join(_REPO_FIELDS[kind])})",
            )
            return
        try:
            observations = self._observations(kind, value, context)
        except _Bad as bad:
            yield SourceItem(location, error=f"{kind} {bad}")
            return
        if not observations:
            self._skipped[(label, f"{kind} not happened yet (no time)")] += 1
        items = []
        for name, when, key, number, unit, attributes in observations:
            try:
                occurred_at = _utc(when)
            except _Bad as bad:
                yield SourceItem(location, error=f"{name}: time {bad}")
                return
            body: dict[str, Any] = {"type": name, "value": number}
            if unit:
                body["unit"] = unit
            body["attributes"] = _compact(attributes)
            items.append(
                {
                    "occurred_at": occurred_at,
                    "kind": "observation",
                    "source_key": key,
                    "payload": body,
                }
            )
        for item in items:
            yield SourceItem(location, item=item, entity=entity)

    def _observations(
        self, kind: str, obj: dict[str, Any], context: str | None
    ) -> list[Observation]:
        if kind in ("issue", "pull_request"):
            return _issue_like(obj)
        if kind == "issue_comment":
            return _issue_comment_obj(obj)
        if kind == "review":
            return _review_obj(obj)
        if kind == "review_comment":
            return _review_comment_obj(obj)
        if kind == "workflow_run":
            return _run_obj(obj)
        if kind == "workflow_job":
            return _job_obj(obj)
        if kind == "issue_event":
            return _issue_event_obj(obj)
        if kind == "milestone":
            return _milestone_obj(obj)
        number = None
        if kind == "pr_commit" and context:
            try:
                number = _int(json.loads(context).get("Number"))
            except (ValueError, AttributeError):
                number = None
        return _commit_obj(obj, kind, number)


FORMAT = Format(
    name="github",
    factory=GithubReader,
    scope="code",
    needs_tz=False,
    multi_entity=True,
    description="GitHub activity, one entity per repository (<entity>:owner.name): GH Archive "
    "events (NDJSON, .json.gz, a folder of JSON files) and REST objects (JSON arrays, CSV "
    "dumps with a data column)",
)
