"""SYNTHETIC GH Archive events, deterministic, for tests of the github importer and its benchmark.

Nothing here was observed on GitHub: repositories, people, titles and commits are invented,
only shaped like GH Archive's NDJSON (``{id, type, actor, repo, payload, public, created_at,
org?}``). Events span two days around the day GitHub began trimming Events API payloads
(October 2025), so about half carry full payloads (PushEvent with size and commits, complete
pull requests) and half the trimmed ones (PushEvent with ref/head/before only, pull requests
with number, head and base). A few deliberate quirks ride along (long titles, a NUL character,
a repository spelled in another case, a dotted repository name, a bot, more than 20 commits).
Standard library only; the same arguments always give byte-identical output, streamed to the
file so memory stays flat for any count.

    python -m benchmark.synthetic.gharchive --events 1000000 --seed 7 --out events.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import random
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

Event = dict[str, Any]

# GitHub's Events API (and so GH Archive) serves trimmed payloads from this day on.
TRIMMED_FROM = datetime(2025, 10, 7, tzinfo=UTC)
SPAN = timedelta(days=2)  # centred on TRIMMED_FROM: about half full, half trimmed
START = TRIMMED_FROM - SPAN / 2
SPAN_S = int(SPAN.total_seconds())
FIRST_ID = 52_000_000_000  # GH Archive ids are increasing decimal strings of this size
# Share of each event type, roughly as in a GH Archive hour of 2024-2025.
TYPE_WEIGHTS = (
    ("PushEvent", 46),
    ("CreateEvent", 12),
    ("PullRequestEvent", 10),
    ("IssueCommentEvent", 7),
    ("WatchEvent", 7),
    ("DeleteEvent", 4),
    ("IssuesEvent", 4),
    ("PullRequestReviewEvent", 3),
    ("PullRequestReviewCommentEvent", 2),
    ("ForkEvent", 2),
    ("ReleaseEvent", 1),
    ("GollumEvent", 1),
    ("MemberEvent", 1),
)
OWNERS = ("acme-corp", "globex", "initech", "umbrella-labs", "hooli", "stark-ind")
NAMES = (
    "widget-api",
    "billing",
    "frontend",
    "infra",
    "docs",
    "mobile-app",
    "data-pipeline",
    "auth-service",
    "design-system",
    "cli",
    "sdk-python",
    "sdk-go",
    "search",
    "notifications",
    "ml-models",
    "website",
)
DOTTED_REPO = "acme-corp/acme-corp.github.io"  # a dot in the name (GitHub Pages repositories)
WORDS = [
    "fix",
    "add",
    "update",
    "remove",
    "refactor",
    "cache",
    "retry",
    "timeout",
    "flaky",
    "test",
    "docs",
    "readme",
    "config",
    "handler",
    "parser",
    "memory",
    "leak",
    "race",
    "login",
    "token",
    "release",
    "build",
    "lint",
    "deps",
    "bump",
    "api",
    "schema",
    "migration",
    "index",
    "query",
    "page",
    "layout",
    "button",
    "error",
    "logging",
    "metrics",
    "alert",
    "deploy",
]
BOTS = ("dependabot[bot]", "github-actions[bot]", "renovate[bot]")
COMMIT_LIST_MAX = 20  # GH Archive push payloads list at most 20 commits; size is the true count
PHRASES = 256  # random phrases made per length
PHRASE_LENGTHS = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 25, 30, 40)
QUIRK_EVERY = 997  # every so many events, one of the quirks below


def repositories(count: int) -> list[str]:
    """``count`` distinct owner/name repositories, the dotted one among them."""
    names = []
    for index in range(count - 1):
        owner = OWNERS[index % len(OWNERS)]
        name = NAMES[(index // len(OWNERS) + index) % len(NAMES)]
        suffix = f"-{index // (len(OWNERS) * len(NAMES))}" if index >= len(NAMES) * 6 else ""
        names.append(f"{owner}/{name}{suffix}")
    return [*names, DOTTED_REPO][-count:] if count else []


def _sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(160):040x}"


def _user(login: str, ident: int) -> dict[str, Any]:
    return {
        "login": login,
        "id": ident,
        "node_id": f"U_{ident:x}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{ident}?v=4",
        "url": f"https://api.github.com/users/{login}",
        "html_url": f"https://github.com/{login}",
        "type": "Bot" if login.endswith("[bot]") else "User",
        "site_admin": False,
    }


def _repo_object(full_name: str, ident: int) -> dict[str, Any]:
    owner = full_name.split("/", 1)[0]
    return {
        "id": ident,
        "name": full_name.split("/", 1)[1],
        "full_name": full_name,
        "private": False,
        "owner": {"login": owner, "id": ident // 7, "type": "Organization"},
        "html_url": f"https://github.com/{full_name}",
        "description": "A synthetic repository",
        "fork": False,
        "url": f"https://api.github.com/repos/{full_name}",
        "default_branch": "main",
    }


class _Generator:
    def __init__(self, seed: int, repo_count: int, quirks: bool) -> None:
        self.rng = random.Random(seed)
        self.repos = repositories(repo_count)
        self.repo_ids = {
            name: int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) for name in self.repos
        }
        # Zipf-like: the first repositories are the busiest, as on GitHub.
        weights = [1.0 / (rank + 1) for rank in range(len(self.repos))]
        self.repo_table = self._table(list(zip(self.repos, weights, strict=True)), 1000)
        self.type_table = self._table(list(TYPE_WEIGHTS), 100)
        self.people = [f"dev-{i:03d}" for i in range(400)] + list(BOTS)
        self.person_ids = {login: 1000 + i for i, login in enumerate(self.people)}
        self.quirks = quirks
        self.numbers = dict.fromkeys(self.repos, 100)
        self.phrases = self._phrases()
        self._second = -1
        self._stamp = ("", True)

    @staticmethod
    def _table(weighted: list[tuple[str, float]], size: int) -> list[str]:
        total = sum(w for _, w in weighted)
        table: list[str] = []
        for name, weight in weighted:
            table += [name] * max(1, round(weight / total * size))
        return table

    def words(self, count: int) -> str:
        # Drawn from phrases made once: drawing every word anew would dominate the run time.
        phrases = self.phrases[count]
        return phrases[int(self.rng.random() * len(phrases))]

    def _phrases(self) -> dict[int, list[str]]:
        rng = self.rng
        return {
            count: [" ".join(rng.choice(WORDS) for _ in range(count)) for _ in range(PHRASES)]
            for count in PHRASE_LENGTHS
        }

    def created_at(self, index: int, count: int) -> tuple[str, bool]:
        second = index * SPAN_S // count
        if second != self._second:
            moment = START + timedelta(seconds=second)
            self._second = second
            self._stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ"), moment < TRIMMED_FROM
        return self._stamp

    def number(self, repo: str, new: bool) -> int:
        repo = repo.lower()
        if new:
            self.numbers[repo] += 1
            return self.numbers[repo]
        return 1 + int(self.rng.random() * self.numbers[repo])

    def event(self, index: int, count: int) -> Event:
        rng = self.rng
        created_at, full = self.created_at(index, count)
        kind = self.type_table[int(rng.random() * len(self.type_table))]
        repo = self.repo_table[int(rng.random() * len(self.repo_table))]
        login = self.people[int(rng.random() * len(self.people))]
        quirk = index % QUIRK_EVERY == QUIRK_EVERY - 1 and self.quirks
        title = self.words(3 + int(rng.random() * 6)).capitalize()
        if quirk:
            variant = (index // QUIRK_EVERY) % 4
            if variant == 0:
                kind = "IssuesEvent"  # a title that outgrows the importer's limit
                title = ("Very long title " + self.words(8) + " ") * 40
            elif variant == 1:
                kind, login = "PushEvent", BOTS[0]  # with more commits than the list holds
            elif variant == 2:
                kind = "IssuesEvent"
                title = f"NUL\x00in title {title}"
            else:
                repo = repo.upper()  # GitHub names are case-insensitive; GH Archive keeps case
        repo_id = self.repo_ids.get(repo.lower(), self.repo_ids.get(repo, 1))
        payload = getattr(self, "_" + kind)(repo, login, title, full, quirk)
        event: Event = {
            "id": str(FIRST_ID + index),
            "type": kind,
            "actor": {
                "id": self.person_ids[login],
                "login": login,
                "display_login": login,
                "gravatar_id": "",
                "url": f"https://api.github.com/users/{login}",
                "avatar_url": f"https://avatars.githubusercontent.com/u/{self.person_ids[login]}?",
            },
            "repo": {
                "id": repo_id,
                "name": repo,
                "url": f"https://api.github.com/repos/{repo}",
            },
            "payload": payload,
            "public": True,
            "created_at": created_at,
        }
        owner = repo.split("/", 1)[0]
        if owner.lower() != OWNERS[-1]:  # the last owner is a user: its events carry no org
            event["org"] = {
                "id": repo_id // 7,
                "login": owner,
                "gravatar_id": "",
                "url": f"https://api.github.com/orgs/{owner}",
                "avatar_url": f"https://avatars.githubusercontent.com/u/{repo_id // 7}?",
            }
        return event

    # payloads, full (before TRIMMED_FROM) or trimmed (from it on)

    def _PushEvent(self, repo: str, login: str, title: str, full: bool, quirk: bool) -> Event:
        rng = self.rng
        head, before = _sha(rng), _sha(rng)
        branch = "main" if rng.random() < 0.6 else f"feature/{self.words(2).replace(' ', '-')}"
        payload: Event = {
            "repository_id": self.repo_ids.get(repo.lower(), 1),
            "push_id": 20_000_000_000 + int(rng.random() * 1e9),
            "ref": f"refs/heads/{branch}",
            "head": head,
            "before": before,
        }
        if not full:
            return payload
        size = 25 if quirk else 1 + int(rng.random() ** 3 * 6)
        commits = []
        for position in range(min(size, COMMIT_LIST_MAX)):
            sha = head if position == min(size, COMMIT_LIST_MAX) - 1 else _sha(rng)
            commits.append(
                {
                    "sha": sha,
                    "author": {"email": f"{login}@users.noreply.github.com", "name": login},
                    "message": f"{title}\n\n{self.words(12)}",
                    "distinct": True,
                    "url": f"https://api.github.com/repos/{repo}/commits/{sha}",
                }
            )
        payload.update(size=size, distinct_size=size, commits=commits)
        return payload

    def _pull_request(self, repo: str, login: str, title: str, number: int, action: str) -> Event:
        rng = self.rng
        repo_object = _repo_object(repo, self.repo_ids.get(repo.lower(), 1))
        merged = action == "closed" and rng.random() < 0.7
        return {
            "url": f"https://api.github.com/repos/{repo}/pulls/{number}",
            "id": 1_800_000_000 + number,
            "node_id": f"PR_{number:x}",
            "html_url": f"https://github.com/{repo}/pull/{number}",
            "diff_url": f"https://github.com/{repo}/pull/{number}.diff",
            "number": number,
            "state": "closed" if action == "closed" else "open",
            "locked": False,
            "title": title,
            "user": _user(login, 1000),
            "body": f"{self.words(30)}\n\nFixes #{max(1, number - 3)}",
            "created_at": "2025-10-01T10:00:00Z",
            "updated_at": "2025-10-06T10:00:00Z",
            "closed_at": "2025-10-06T10:00:00Z" if action == "closed" else None,
            "merged_at": "2025-10-06T10:00:00Z" if merged else None,
            "merge_commit_sha": _sha(rng),
            "assignee": None,
            "labels": [{"id": 1, "name": "enhancement", "color": "a2eeef", "default": True}],
            "draft": rng.random() < 0.1,
            "head": {
                "label": f"{login}:topic-{number}",
                "ref": f"topic-{number}",
                "sha": _sha(rng),
                "user": _user(login, 1000),
                "repo": repo_object,
            },
            "base": {
                "label": f"{repo.split('/')[0]}:main",
                "ref": "main",
                "sha": _sha(rng),
                "repo": repo_object,
            },
            "author_association": "CONTRIBUTOR",
            "merged": merged,
            "comments": int(rng.random() * 8),
            "review_comments": int(rng.random() * 5),
            "commits": 1 + int(rng.random() * 6),
            "additions": int(rng.random() * 400),
            "deletions": int(rng.random() * 200),
            "changed_files": 1 + int(rng.random() * 12),
        }

    def _trimmed_pull_request(self, repo: str, number: int) -> Event:
        rng = self.rng
        short = {
            "id": self.repo_ids.get(repo.lower(), 1),
            "url": f"https://api.github.com/repos/{repo}",
            "name": repo,
        }
        return {
            "url": f"https://api.github.com/repos/{repo}/pulls/{number}",
            "id": 1_800_000_000 + number,
            "number": number,
            "head": {"ref": f"topic-{number}", "sha": _sha(rng), "repo": short},
            "base": {"ref": "main", "sha": _sha(rng), "repo": short},
        }

    def _PullRequestEvent(
        self, repo: str, login: str, title: str, full: bool, quirk: bool
    ) -> Event:
        rng = self.rng
        roll = rng.random()
        action = "opened" if roll < 0.45 else "closed" if roll < 0.85 else "synchronize"
        if roll > 0.97:
            action = "labeled"
        number = self.number(repo, action == "opened")
        payload: Event = {"action": action, "number": number}
        if full:
            payload["pull_request"] = self._pull_request(repo, login, title, number, action)
        else:
            payload["pull_request"] = self._trimmed_pull_request(repo, number)
        if action == "labeled":
            payload["label"] = {"id": 7, "name": "needs-review", "color": "ededed"}
        return payload

    def _issue(self, repo: str, login: str, title: str, number: int, state: str) -> Event:
        return {
            "url": f"https://api.github.com/repos/{repo}/issues/{number}",
            "repository_url": f"https://api.github.com/repos/{repo}",
            "html_url": f"https://github.com/{repo}/issues/{number}",
            "id": 3_000_000_000 + number,
            "number": number,
            "title": title,
            "user": _user(login, 1000),
            "labels": [{"id": 2, "name": "bug", "color": "d73a4a"}],
            "state": state,
            "comments": int(self.rng.random() * 10),
            "created_at": "2025-10-01T10:00:00Z",
            "updated_at": "2025-10-06T10:00:00Z",
            "body": self.words(40),
        }

    def _IssuesEvent(self, repo: str, login: str, title: str, full: bool, quirk: bool) -> Event:
        action = "opened" if self.rng.random() < 0.6 else "closed"
        number = self.number(repo, action == "opened")
        state = "closed" if action == "closed" else "open"
        return {"action": action, "issue": self._issue(repo, login, title, number, state)}

    def _IssueCommentEvent(
        self, repo: str, login: str, title: str, full: bool, quirk: bool
    ) -> Event:
        number = self.number(repo, False)
        issue = self._issue(repo, login, title, number, "open")
        if self.rng.random() < 0.5:
            issue["pull_request"] = {"url": f"https://api.github.com/repos/{repo}/pulls/{number}"}
        comment = {
            "id": 2_400_000_000 + int(self.rng.random() * 1e8),
            "user": _user(login, 1000),
            "body": self.words(25),
            "created_at": "2025-10-06T10:00:00Z",
            "html_url": f"https://github.com/{repo}/issues/{number}#issuecomment-1",
        }
        return {"action": "created", "issue": issue, "comment": comment}

    def _PullRequestReviewEvent(
        self, repo: str, login: str, title: str, full: bool, quirk: bool
    ) -> Event:
        rng = self.rng
        number = self.number(repo, False)
        state = ("approved", "commented", "changes_requested")[int(rng.random() * 3)]
        review = {"id": 3_100_000_000 + int(rng.random() * 1e8), "state": state}
        if full:
            review.update(user=_user(login, 1000), body=self.words(10))
            pull = self._pull_request(repo, login, title, number, "opened")
        else:
            pull = self._trimmed_pull_request(repo, number)
        return {"action": "created", "review": review, "pull_request": pull}

    def _PullRequestReviewCommentEvent(
        self, repo: str, login: str, title: str, full: bool, quirk: bool
    ) -> Event:
        rng = self.rng
        number = self.number(repo, False)
        comment = {
            "id": 2_300_000_000 + int(rng.random() * 1e8),
            "pull_request_review_id": 3_100_000_000 + int(rng.random() * 1e8),
            "path": f"src/{self.words(1)}/{self.words(1)}.py",
            "diff_hunk": "@@ -1,3 +1,4 @@\n-" + self.words(6) + "\n+" + self.words(6),
            "body": self.words(15),
            "user": _user(login, 1000),
        }
        pull = (
            self._pull_request(repo, login, title, number, "opened")
            if full
            else self._trimmed_pull_request(repo, number)
        )
        return {"action": "created", "comment": comment, "pull_request": pull}

    def _CreateEvent(self, repo: str, login: str, title: str, full: bool, quirk: bool) -> Event:
        tag = self.rng.random() < 0.2
        ref = f"v1.{int(self.rng.random() * 40)}.0" if tag else f"topic-{self.words(1)}"
        return {
            "ref": ref,
            "ref_type": "tag" if tag else "branch",
            "master_branch": "main",
            "description": "A synthetic repository",
            "pusher_type": "user",
        }

    def _DeleteEvent(self, repo: str, login: str, title: str, full: bool, quirk: bool) -> Event:
        return {"ref": f"topic-{self.words(1)}", "ref_type": "branch", "pusher_type": "user"}

    def _WatchEvent(self, repo: str, login: str, title: str, full: bool, quirk: bool) -> Event:
        return {"action": "started"}

    def _ForkEvent(self, repo: str, login: str, title: str, full: bool, quirk: bool) -> Event:
        forkee = _repo_object(f"{login}/{repo.split('/', 1)[1]}", 9_000_000 + len(login))
        forkee["fork"] = True
        return {"forkee": forkee}

    def _ReleaseEvent(self, repo: str, login: str, title: str, full: bool, quirk: bool) -> Event:
        tag = f"v1.{int(self.rng.random() * 40)}.{int(self.rng.random() * 9)}"
        return {
            "action": "published",
            "release": {
                "id": 200_000_000 + int(self.rng.random() * 1e6),
                "tag_name": tag,
                "name": f"Release {tag}",
                "draft": False,
                "prerelease": self.rng.random() < 0.2,
                "author": _user(login, 1000),
                "body": self.words(30),
                "html_url": f"https://github.com/{repo}/releases/tag/{tag}",
            },
        }

    def _GollumEvent(self, repo: str, login: str, title: str, full: bool, quirk: bool) -> Event:
        return {
            "pages": [
                {
                    "page_name": title.replace(" ", "-"),
                    "title": title,
                    "action": "edited",
                    "sha": _sha(self.rng),
                    "html_url": f"https://github.com/{repo}/wiki/{title.replace(' ', '-')}",
                }
            ]
        }

    def _MemberEvent(self, repo: str, login: str, title: str, full: bool, quirk: bool) -> Event:
        member = self.people[int(self.rng.random() * 400)]
        return {"action": "added", "member": _user(member, 1000)}


def generate_events(
    count: int, *, seed: int = 7, repos: int = 12, quirks: bool = True
) -> Iterator[Event]:
    """``count`` SYNTHETIC GH Archive events in time order."""
    generator = _Generator(seed, repos, quirks)
    for index in range(count):
        yield generator.event(index, count)


def write_events(
    out: TextIO, count: int, *, seed: int = 7, repos: int = 12, quirks: bool = True
) -> int:
    """Write events as NDJSON (compact, as GH Archive does); returns bytes of text written."""
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    written = 0
    lines: list[str] = []
    for event in generate_events(count, seed=seed, repos=repos, quirks=quirks):
        lines.append(dumps(event))
        if len(lines) == 2000:
            chunk = "\n".join(lines) + "\n"
            out.write(chunk)
            written += len(chunk)
            lines.clear()
    if lines:
        chunk = "\n".join(lines) + "\n"
        out.write(chunk)
        written += len(chunk)
    return written


def write_file(path: Path, count: int, **options: Any) -> Path:
    """NDJSON at ``path``; gzip (level 1, for speed) when the name ends in .gz."""
    if path.name.endswith(".gz"):
        # mtime=0: the same events give byte-identical files
        with (
            path.open("wb") as raw,
            gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=1, mtime=0) as zipped,
            io.TextIOWrapper(zipped, encoding="utf-8", newline="\n") as out,
        ):
            write_events(out, count, **options)
    else:
        with path.open("w", encoding="utf-8", newline="\n") as out:
            write_events(out, count, **options)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repos", type=int, default=12)
    parser.add_argument("--no-quirks", action="store_true")
    parser.add_argument(
        "--out", type=Path, help="file (.json, .ndjson, .json.gz); stdout if absent"
    )
    args = parser.parse_args(argv)
    options = {"seed": args.seed, "repos": args.repos, "quirks": not args.no_quirks}
    if args.out is None:
        write_events(sys.stdout, args.events, **options)
    else:
        write_file(args.out, args.events, **options)


if __name__ == "__main__":
    main()
