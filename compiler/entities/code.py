"""Code hosting and package registries: GitHub, GitLab, Bitbucket, PyPI, npm, crates.io.

Entities follow each forge's own shorthand: `owner/repo#12` (issue or pull request),
`group/project!7` (GitLab merge request), `owner/repo@abc1234` (commit), `owner/repo:path` (file).
"""

from __future__ import annotations

from .ref import PageRef
from .url import Parser, Url, is_number

_GITHUB_RESERVED = frozenset(
    {
        "about",
        "account",
        "apps",
        "codespaces",
        "collections",
        "contact",
        "customer-stories",
        "dashboard",
        "enterprise",
        "events",
        "explore",
        "features",
        "home",
        "issues",
        "join",
        "login",
        "logout",
        "marketplace",
        "new",
        "notifications",
        "orgs",
        "organizations",
        "pricing",
        "pulls",
        "readme",
        "search",
        "security",
        "sessions",
        "settings",
        "signup",
        "site",
        "sponsors",
        "stars",
        "team",
        "topics",
        "trending",
        "users",
    }
)

_SHA_CHARS = frozenset("0123456789abcdef")


def _sha(value: str) -> str:
    value = value.lower()
    return value[:7] if len(value) >= 7 and set(value) <= _SHA_CHARS else value


def _github(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg:
        return None
    first = seg[0]
    if first in ("orgs", "users") and len(seg) >= 4 and seg[2] == "projects" and is_number(seg[3]):
        return PageRef("github_project", f"{seg[1]}/{seg[3]}")
    if first.lower() in _GITHUB_RESERVED or first.startswith("."):
        return None
    if len(seg) == 1:
        return PageRef("github_user", first)
    repo = f"{first}/{seg[1]}"
    section = seg[2] if len(seg) > 2 else ""
    item = seg[3] if len(seg) > 3 else ""
    if section in ("pull", "pulls") and is_number(item):
        return PageRef("github_pr", f"{repo}#{item}")
    if section == "issues" and is_number(item):
        return PageRef("github_issue", f"{repo}#{item}")
    if section == "discussions" and is_number(item):
        return PageRef("github_discussion", f"{repo}#{item}")
    if section == "pulls":
        return PageRef("github_pulls", repo)
    if section == "issues":
        return PageRef("github_issues", repo)
    if section == "commit" and item:
        return PageRef("github_commit", f"{repo}@{_sha(item)}")
    if section == "commits":
        return PageRef("github_commits", repo)
    if section in ("blob", "tree", "blame", "edit") and len(seg) > 4:
        return PageRef("github_file", f"{repo}:{'/'.join(seg[4:])}")
    if section == "actions":
        if item == "runs" and len(seg) > 4 and is_number(seg[4]):
            return PageRef("github_actions_run", f"{repo}/runs/{seg[4]}")
        return PageRef("github_actions", repo)
    if section == "projects" and is_number(item):
        return PageRef("github_project", f"{repo}/{item}")
    if section == "compare" and item:
        return PageRef("github_compare", f"{repo}:{'/'.join(seg[3:])}")
    if section == "releases":
        tag = seg[4] if item == "tag" and len(seg) > 4 else ""
        return PageRef("github_release", f"{repo}@{tag}" if tag else repo)
    if section == "wiki":
        return PageRef("github_wiki", f"{repo}/{item}" if item else repo)
    return PageRef("github_repo", repo)


def _gist(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2:
        return PageRef("github_gist", f"{seg[0]}/{seg[1]}")
    if len(seg) == 1:
        return PageRef("github_user", seg[0])
    return None


def _gitlab(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg or seg[0] in ("users", "explore", "dashboard", "help", "admin", "search", "-"):
        return None
    if "-" in seg:
        dash = seg.index("-")
        project = "/".join(seg[:dash])
        section = seg[dash + 1] if len(seg) > dash + 1 else ""
        item = seg[dash + 2] if len(seg) > dash + 2 else ""
        if section == "merge_requests" and is_number(item):
            return PageRef("gitlab_mr", f"{project}!{item}")
        if section in ("issues", "work_items") and is_number(item):
            return PageRef("gitlab_issue", f"{project}#{item}")
        if section == "pipelines" and is_number(item):
            return PageRef("gitlab_pipeline", f"{project}/pipelines/{item}")
        if section == "jobs" and is_number(item):
            return PageRef("gitlab_job", f"{project}/jobs/{item}")
        if section == "commit" and item:
            return PageRef("gitlab_commit", f"{project}@{_sha(item)}")
        if section in ("blob", "tree") and len(seg) > dash + 3:
            return PageRef("gitlab_file", f"{project}:{'/'.join(seg[dash + 3 :])}")
        if section == "merge_requests":
            return PageRef("gitlab_mrs", project)
        if section == "issues":
            return PageRef("gitlab_issues", project)
        return PageRef("gitlab_repo", project) if project else None
    if len(seg) == 1:
        return PageRef("gitlab_user", seg[0])
    return PageRef("gitlab_repo", "/".join(seg[:4]))


def _gitlab_brand(url: Url) -> PageRef | None:
    """Self-hosted GitLab on `gitlab.<company>`: the same paths as gitlab.com."""
    return _gitlab(url)


def _bitbucket(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg or seg[0] in ("account", "dashboard", "product", "site", "repo", "socialauth"):
        return None
    if len(seg) == 1:
        return PageRef("bitbucket_workspace", seg[0])
    repo = f"{seg[0]}/{seg[1]}"
    section = seg[2] if len(seg) > 2 else ""
    item = seg[3] if len(seg) > 3 else ""
    if section == "pull-requests" and is_number(item):
        return PageRef("bitbucket_pr", f"{repo}#{item}")
    if section == "issues" and is_number(item):
        return PageRef("bitbucket_issue", f"{repo}#{item}")
    if section in ("commits", "commit") and item:
        return PageRef("bitbucket_commit", f"{repo}@{_sha(item)}")
    if section == "src" and len(seg) > 4:
        return PageRef("bitbucket_file", f"{repo}:{'/'.join(seg[4:])}")
    if section == "pipelines" and len(seg) > 4 and is_number(seg[-1]):
        return PageRef("bitbucket_pipeline", f"{repo}/pipelines/{seg[-1]}")
    return PageRef("bitbucket_repo", repo)


def _pypi(url: Url) -> PageRef | None:
    if url.seg(0) == "project" and url.seg(1):
        return PageRef("pypi_package", url.seg(1).lower())
    return None


def _npm(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] == "package":
        # Scoped packages are two segments: /package/@scope/name.
        if seg[1].startswith("@") and len(seg) >= 3:
            return PageRef("npm_package", f"{seg[1]}/{seg[2]}")
        return PageRef("npm_package", seg[1])
    return None


def _crates(url: Url) -> PageRef | None:
    if url.seg(0) == "crates" and url.seg(1):
        return PageRef("crate", url.seg(1))
    return None


HOSTS: dict[str, Parser] = {
    "github.com": _github,
    "gist.github.com": _gist,
    "gitlab.com": _gitlab,
    "bitbucket.org": _bitbucket,
    "pypi.org": _pypi,
    "npmjs.com": _npm,
    "crates.io": _crates,
}
BRANDS: dict[str, Parser] = {"gitlab": _gitlab_brand}
