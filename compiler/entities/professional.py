"""Professional networks and job boards: LinkedIn (profile, company, school, job, post, article,
group, search; country subdomains too), Indeed, Wellfound.

Profiles and companies keep their public slug; jobs and posts their numeric id.
"""

from __future__ import annotations

import re

from .ref import PageRef
from .url import Parser, Url, is_number, search_text

_ACTIVITY = re.compile(r"activity[:\-](\d{10,})")


def _linkedin(url: Url) -> PageRef | None:
    seg = url.segments
    first, second = url.seg(0), url.seg(1)
    if first == "in" and second:
        return PageRef("linkedin_profile", second.lower())
    if first in ("company", "showcase") and second:
        return PageRef("linkedin_company", second.lower())
    if first == "school" and second:
        return PageRef("linkedin_school", second.lower())
    if first == "jobs":
        if second == "view" and len(seg) >= 3:
            job = seg[2].rpartition("-")[2]
            return PageRef("linkedin_job", job) if is_number(job) else None
        current = url.param("currentjobid")
        if current and is_number(current):
            return PageRef("linkedin_job", current)
        text = search_text(url.param("keywords"))
        return PageRef("search", text) if text else None
    if first in ("posts", "feed") and seg:
        # `/posts/<author>_<words>-activity-7123...-abcd` and `/feed/update/urn:li:activity:7123...`
        match = _ACTIVITY.search("/".join(seg))
        if match is not None:
            return PageRef("linkedin_post", match.group(1))
        if first == "posts" and second:
            return PageRef("linkedin_post", second)
        return None
    if first == "pulse" and second:
        return PageRef("linkedin_article", second)
    if first == "groups" and second:
        return PageRef("linkedin_group", second)
    if first == "search":
        text = search_text(url.param("keywords"))
        return PageRef("search", text) if text else None
    return None


def _indeed(url: Url) -> PageRef | None:
    job = url.param("jk") or url.param("vjk")
    if job and job.isalnum():
        return PageRef("indeed_job", job)
    text = search_text(url.param("q"))
    return PageRef("search", text) if text else None


def _wellfound(url: Url) -> PageRef | None:
    first, second = url.seg(0), url.seg(1)
    if first == "jobs" and second:
        job = second.partition("-")[0]
        return PageRef("wellfound_job", job) if is_number(job) else None
    if first == "company" and second:
        return PageRef("wellfound_company", second)
    return None


HOSTS: dict[str, Parser] = {
    "linkedin.com": _linkedin,
    "indeed.com": _indeed,
    "wellfound.com": _wellfound,
}
SUFFIXES: dict[str, Parser] = {"linkedin.com": _linkedin}
