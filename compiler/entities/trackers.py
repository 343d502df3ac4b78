"""Project trackers: Jira and Confluence on `*.atlassian.net` (and self-hosted `jira.<company>`),
Linear, Asana, Trello, ClickUp, Shortcut, monday.com. GitHub Projects live in `code`.

An issue is its key (`PROJ-123`) wherever the URL shows it, including `?selectedIssue=` on boards.
"""

from __future__ import annotations

import re

from .documents import confluence
from .ref import PageRef
from .url import Parser, Url, is_number, slug_words, tidy

_ISSUE_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,19}-\d{1,9}")


def _issue_key(text: str | None) -> str | None:
    if text and _ISSUE_KEY.fullmatch(text):
        return text.upper()
    return None


def _jira(url: Url) -> PageRef | None:
    seg = url.segments
    selected = _issue_key(url.param("selectedissue"))
    if selected:
        return PageRef("jira_issue", selected)
    if not seg:
        return None
    first = seg[0]
    if first == "browse" and len(seg) >= 2:
        key = _issue_key(seg[1])
        return PageRef("jira_issue", key) if key else PageRef("jira_project", seg[1].upper())
    if first == "servicedesk" and seg:
        key = _issue_key(seg[-1])
        return PageRef("jira_issue", key) if key else None
    if first == "secure" and url.param("rapidview"):
        project = url.param("projectkey")
        board = url.param("rapidview") or ""
        return PageRef("jira_board", f"{project}/{board}" if project else board)
    if first == "projects" and len(seg) >= 2:
        return PageRef("jira_project", seg[1].upper())
    if first == "jira" and "projects" in seg:
        index = seg.index("projects")
        if index + 1 >= len(seg):
            return None
        project = seg[index + 1].upper()
        rest = seg[index + 2 :]
        if len(rest) >= 2 and rest[0] == "issues":
            key = _issue_key(rest[1])
            if key:
                return PageRef("jira_issue", key)
        if len(rest) >= 2 and rest[0] == "boards" and is_number(rest[1]):
            return PageRef("jira_board", f"{project}/{rest[1]}")
        return PageRef("jira_project", project)
    return None


def _atlassian(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] == ("wiki",):
        return confluence(url, seg[1:])
    return _jira(url)


def _linear(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) < 3:
        return None
    section, item = seg[1], seg[2]
    if section == "issue":
        key = _issue_key(item)
        return PageRef("linear_issue", key) if key else None
    if section == "project":
        return PageRef("linear_project", item)
    if section == "team":
        return PageRef("linear_team", item.upper())
    return None


def _asana(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] == ("0",) and len(seg) >= 3 and is_number(seg[1]):
        project, item = seg[1], seg[2]
        if is_number(item) and item != project:
            return PageRef("asana_task", item)
        return PageRef("asana_project", project)
    if seg[:1] == ("1",):
        for marker, kind in (("task", "asana_task"), ("project", "asana_project")):
            if marker in seg:
                index = seg.index(marker)
                if index + 1 < len(seg) and is_number(seg[index + 1]):
                    return PageRef(kind, seg[index + 1])
    return None


def _trello(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] in ("b", "c"):
        name = tidy(slug_words(seg[2]), 80) if len(seg) >= 3 else ""
        if seg[0] == "c" and name.split(" ", 1)[0].isdigit():
            name = name.partition(" ")[2]  # card slugs start with the card number
        kind = "trello_board" if seg[0] == "b" else "trello_card"
        return PageRef(kind, f"{name} ({seg[1]})" if name else seg[1])
    return None


def _clickup(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:1] == ("t",) and len(seg) >= 2:
        return PageRef("clickup_task", seg[-1])
    if len(seg) >= 4 and seg[1] == "v" and seg[2] in ("li", "l", "b"):
        return PageRef("clickup_list", seg[3])
    return None


def _shortcut(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 3 and seg[1] == "story" and is_number(seg[2]):
        return PageRef("shortcut_story", f"{seg[0]}/{seg[2]}")
    if len(seg) >= 3 and seg[1] == "epic" and is_number(seg[2]):
        return PageRef("shortcut_epic", f"{seg[0]}/{seg[2]}")
    return None


def _monday(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] == "boards" and is_number(seg[1]):
        if len(seg) >= 4 and seg[2] == "pulses" and is_number(seg[3]):
            return PageRef("monday_item", seg[3])
        return PageRef("monday_board", seg[1])
    return None


HOSTS: dict[str, Parser] = {
    "linear.app": _linear,
    "app.asana.com": _asana,
    "trello.com": _trello,
    "app.clickup.com": _clickup,
    "app.shortcut.com": _shortcut,
}
SUFFIXES: dict[str, Parser] = {
    "atlassian.net": _atlassian,
    "jira.com": _atlassian,
    "monday.com": _monday,
}
BRANDS: dict[str, Parser] = {"jira": _jira}
