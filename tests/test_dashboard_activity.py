"""Dashboard pages over compiled activity: team home, calendar, day, frame with Verify, history.

Every page is checked with the three users: the owner and a viewer of the team see it, an
outsider gets the same 404 as for something that does not exist.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
from django.template.defaultfilters import floatformat
from django.test import Client
from django.utils import timezone

from aframes_web.activity.models import CompileRequest, DayDocument, Frame
from aframes_web.activity.services import day_compile_read
from aframes_web.dashboard import present
from benchmark.synthetic.desktop import generate_day
from compiler.document import expand_runs
from compiler.emit import to_json
from compiler.views import ledger as compiler_ledger
from tests.conftest import signed_in, snapshot

pytestmark = pytest.mark.django_db

DAY = date(2026, 3, 3)  # a Tuesday
BASE = "/t/acme/e/alice-laptop"
DAY_URL = f"{BASE}/d/{DAY.isoformat()}/"


@pytest.fixture
def document(load: Any, desktop: Any) -> DayDocument:
    load(desktop, generate_day(DAY, seed=3, tz="Europe/Berlin"))
    return DayDocument.objects.get(entity=desktop, day=DAY, current=True)


@pytest.fixture
def two_versions(load: Any, desktop: Any, document: DayDocument) -> DayDocument:
    """A late snapshot recompiles the day into version 2."""
    load(desktop, [snapshot("2026-03-03T19:30:00+01:00", "late-1", app="Late App")])
    load(
        desktop,
        [snapshot(f"2026-03-03T19:3{m}:00+01:00", f"late-{m}", app="Late App") for m in (1, 2, 3)],
    )
    return DayDocument.objects.get(entity=desktop, day=DAY, current=True)


def interrupted(document: DayDocument) -> Frame:
    return Frame.objects.filter(document=document, interruptions__gt=0).order_by("start").first()


def text(page: Any) -> str:
    return page.content.decode()


class Attributes(HTMLParser):
    """Every start tag with its attributes, for checks on links and forms."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(page: Any) -> list[tuple[str, dict[str, str | None]]]:
    parser = Attributes()
    parser.feed(text(page))
    return parser.tags


# --- Team home ----------------------------------------------------------------------------------


def test_team_home_shows_documents_and_the_compile_queue(document, owner, desktop) -> None:
    client = signed_in(owner)
    page = text(client.get("/t/acme/"))
    assert f'href="{BASE}/"' in page
    row = re.search(r"<tr><td><a href=\"/t/acme/e/alice-laptop/\">.*?</tr>", page, re.S).group(0)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    assert cells[4:6] == ["1", str(document.event_count)]  # days, events
    assert cells[8:10] == ["1", "0"]  # documents, pending compiles
    assert "Every captured day is compiled." in page and "No compile has failed." in page
    CompileRequest.objects.create(
        entity=desktop,
        day=DAY + timedelta(days=1),
        requested=3,
        compiled=1,
        last_error="ValueError: payload.app is empty",
        last_error_at=timezone.now(),
    )
    page = text(client.get("/t/acme/"))
    assert "<strong>1</strong> day waiting for a compile" in page
    assert "ValueError: payload.app is empty" in page and "2026-03-04" in page
    # The htmx refresh swaps the table and, out of band, the queue state.
    partial = text(client.get("/t/acme/", headers={"HX-Request": "true"}))
    assert partial.lstrip().startswith('<div id="entities">') and "<html" not in partial
    assert 'id="queue" class="queue" hx-swap-oob="true"' in partial


# --- Calendar -----------------------------------------------------------------------------------


def test_calendar_shades_days_by_active_minutes_and_links_them(document, owner) -> None:
    client = signed_in(owner)
    page = text(client.get(f"{BASE}/"))  # the month of the newest document by default
    assert "March 2026" in page
    cell = re.search(r'<td class="level-(\d)"><a href="([^"]+)"', page)
    assert cell.groups() == (str(present.SHADES), DAY_URL)
    minutes = floatformat(document.active_minutes, 0)
    assert f"{minutes} min" in page and f"{document.frame_count} frames" in page
    assert page.count('<td class="level-') == 1
    february = text(client.get(f"{BASE}/?month=2026-02"))
    assert "February 2026" in february and "/d/" not in february
    wrong = text(client.get(f"{BASE}/?month=March"))
    assert "Give the month as YYYY-MM" in wrong and "March 2026" in wrong
    for edge in ("0000-01", "9999-12"):
        answer = client.get(f"{BASE}/?month={edge}")
        assert answer.status_code == 200 and "between 0001-01 and 9998-12" in text(answer)
    # htmx month navigation swaps only the calendar.
    partial = text(client.get(f"{BASE}/?month=2026-02", headers={"HX-Request": "true"}))
    assert partial.lstrip().startswith('<section id="calendar">')


def test_shading_is_relative_to_the_busiest_day_of_the_month() -> None:
    days = {
        date(2026, 3, 2): (400.0, 10),
        date(2026, 3, 3): (100.0, 4),
        date(2026, 2, 27): (999, 1),
    }
    grid = present.month_grid(2026, 3, days, {date(2026, 3, 4): 12})
    cells = {cell.day: cell for week in grid for cell in week}
    assert [cells[date(2026, 3, d)].level for d in (2, 3, 4, 5)] == [4, 1, 0, 0]
    assert cells[date(2026, 3, 4)].events == 12 and cells[date(2026, 3, 4)].minutes is None
    assert cells[date(2026, 2, 27)].level == 0 and not cells[date(2026, 2, 27)].in_month
    assert all(len(week) == 7 and week[0].day.weekday() == 0 for week in grid)


def test_calendar_opens_on_the_latest_day_up_to_today_not_on_a_wrong_clock_s(
    document, owner
) -> None:
    from aframes_web.streams.models import EntityDay

    # A day stored from a clock gone wrong (before future events were refused).
    stamp = timezone.now()
    EntityDay.objects.create(entity=document.entity, day=date(2150, 6, 1), event_count=1,
                             first_at=stamp, last_at=stamp, refreshed_at=stamp)  # fmt: skip
    future = DayDocument.objects.get(pk=document.pk)
    future.pk, future.day = None, date(2150, 6, 1)
    future.save()
    page = text(signed_in(owner).get(f"{BASE}/"))
    assert "March 2026" in page and "June 2150" not in page


def test_calendar_marks_captured_days_without_a_document(document, owner) -> None:
    DayDocument.objects.all().delete()
    page = text(signed_in(owner).get(f"{BASE}/?month=2026-03"))
    assert 'class="captured"' in page and "no document yet" in page
    assert "/d/" not in page


# --- Day view -----------------------------------------------------------------------------------


def test_day_view_draws_every_frame_gap_and_interruption(document, owner) -> None:
    body = document.body
    page = signed_in(owner).get(DAY_URL)
    html = text(page)
    bars = [attrs for tag, attrs in tags(page) if tag == "a" and attrs.get("class") == "bar"]
    assert len(bars) == document.frame_count
    # The compile time names its zone (the entity's: Europe/Berlin is CET in March).
    assert re.search(r"compiled \d{4}-\d{2}-\d{2} \d{2}:\d{2} (CET|CEST|UTC) by", html)
    assert {a["data-frame"] for a in bars} == {f["id"] for f in body["frames"]}
    assert all(a["href"] == f"{BASE}/f/{a['data-frame']}/" for a in bars)
    # One row per monitor, gaps shaded and labelled, interruption ticks with their time.
    for monitor in body["coverage"]["monitors"]:
        assert f">monitor {monitor}</text>" in html
    gaps = body["coverage"]["gaps"]
    assert html.count('class="band band-gap"') == len(gaps) > 0
    assert f"no capture {gaps[-1]['start'][11:16]}–{gaps[-1]['end'][11:16]}" in html
    ticks = sum(len(f["interruptions"]) for f in body["frames"])
    assert html.count('<g class="tick"><title>') == ticks > 0
    assert re.search(r"Slack interrupted Code for [\d.]+ s at \d\d:\d\d:\d\d", html)
    # The same colour for an app wherever it is drawn: bars, ledger and the frame page.
    code = present.app_colours(body["frames"])["Code"]
    assert f'fill="{code}"' in html and f'class="swatch" style="background: {code}"' in html
    frame = Frame.objects.filter(document=document, app="Code").first()
    assert f"background: {code}" in text(signed_in(owner).get(f"{BASE}/f/{frame.frame_id}/"))


def test_day_view_timeline_has_a_text_alternative_listing_every_frame(document, owner) -> None:
    html = text(signed_in(owner).get(DAY_URL))
    assert 'aria-describedby="timeline-text"' in html
    alternative = html.split('id="timeline-text"', 1)[1].split("</details>", 1)[0]
    for item in document.body["frames"]:
        assert f'href="{BASE}/f/{item["id"]}/"' in alternative
    assert alternative.count("<li><a href=") >= document.frame_count


def test_day_view_shows_coverage_ledger_and_context_block(document, owner) -> None:
    html = text(signed_in(owner).get(DAY_URL))
    coverage = document.body["coverage"]
    assert f"<dd>{coverage['first_activity'][11:16]}</dd>" in html
    assert f"<dd>{coverage['active_minutes']:.1f}</dd>" in html
    assert f"<dd>{coverage['coverage_pct']:.1f} %</dd>" in html
    # The context block, its token count, and a copy button that JavaScript reveals.
    assert f"{document.context_tokens} tokens (cl100k)" in html
    document.refresh_from_db()
    assert f"the whole document as JSON is {document.document_tokens} tokens (" in html
    first_line = document.context.splitlines()[0]
    assert f'<pre id="context-block" class="context" tabindex="0">{first_line}' in html
    assert 'data-copy="#context-block" hidden' in html
    ledger = re.findall(r'</span>([^<]+)</td><td class="num">([\d.]+)</td>', html)
    apps = [app for app, _ in ledger]
    assert len(apps) == len(set(apps)) == len(present.ledger(document.body["frames"]))


def test_stored_ledger_is_the_compilers_minus_the_frames_under_the_floor(document, desktop):
    recompiled = day_compile_read(entity=desktop, day=DAY).compiled
    theirs = {row["app"]: row for row in compiler_ledger(recompiled)}
    ours = {row.app: row for row in present.ledger(document.body["frames"])}
    assert ours.keys() <= theirs.keys()
    for app, row in ours.items():
        assert row.minutes <= theirs[app]["minutes"] + 0.05
        assert row.longest_min == pytest.approx(theirs[app]["longest_session_min"], abs=0.01)
    missing = sum(r["minutes"] for r in theirs.values()) - sum(r.minutes for r in ours.values())
    assert missing == pytest.approx(document.body["omitted"]["minutes"], abs=0.1)


def frame_rows(page: Any) -> list[list[str]]:
    body = text(page).split('<div id="frames">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr id="(f-\d+)">(.*?)</tr>', body, re.S)
    return [
        [frame_id, *re.findall(r"<td[^>]*>(.*?)</td>", cells, re.S)] for frame_id, cells in rows
    ]


def test_frames_table_filters_by_app_site_monitor_and_minutes(document, owner) -> None:
    client = signed_in(owner)
    everything = frame_rows(client.get(DAY_URL))
    assert len(everything) == document.frame_count
    code = frame_rows(client.get(DAY_URL, {"app": "Code"}))
    assert code and all(row[3].startswith("Code") for row in code) and len(code) < len(everything)
    site = frame_rows(client.get(DAY_URL, {"site": "github.com"}))
    assert site and all(row[4] == "github.com" for row in site)
    second = frame_rows(client.get(DAY_URL, {"monitor": "1"}))
    assert second and all(row[5] == "1" for row in second)
    long = frame_rows(client.get(DAY_URL, {"min_minutes": "10"}))
    assert long and all(float(row[6]) >= 10 for row in long)
    both = frame_rows(client.get(DAY_URL, {"app": "Code", "min_minutes": "10"}))
    assert {r[0] for r in both} == {r[0] for r in code} & {r[0] for r in long}
    wrong = client.get(DAY_URL, {"min_minutes": "lots"})
    assert "min_minutes: Enter a number." in text(wrong) and frame_rows(wrong) == []
    # htmx gets only the table back.
    partial = text(client.get(DAY_URL, {"app": "Code"}, headers={"HX-Request": "true"}))
    assert partial.lstrip().startswith('<div id="frames">') and "<svg" not in partial


def test_day_pages_escape_untrusted_app_names_and_window_titles(load, desktop, owner) -> None:
    app, window = "<script>alert(1)</script>", '"><img src=x onerror=alert(2)>'
    load(desktop, [
        snapshot(f"2026-03-03T08:0{m}:{s}+01:00", f"x{m}{s}", app=app, window=window)
        for m in range(4) for s in ("00", "30")
    ])  # fmt: skip
    load(desktop, [snapshot("2026-03-03T08:04:00+01:00", "x-late", app=app, window=window)])
    frame = Frame.objects.get(entity=desktop)
    client = signed_in(owner)
    for url in (DAY_URL, f"{BASE}/f/{frame.frame_id}/", f"{DAY_URL}history/"):
        html = text(client.get(url))
        assert "<script>alert" not in html and "<img src=x" not in html, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, url


# --- Frame view and Verify ----------------------------------------------------------------------


def test_frame_view_shows_fields_pages_interruptions_and_raw_evidence(document, owner) -> None:
    client = signed_in(owner)
    frame = interrupted(document)
    stored = next(f for f in document.body["frames"] if f["id"] == frame.frame_id)
    html = text(client.get(f"{BASE}/f/{frame.frame_id}/"))
    for value in (stored["app"], stored["start"], stored["end"], stored["evidence"]["rows"]):
        assert value in html
    for title in stored["windows"]:
        assert title in html
    assert f"{stored['input']['keys']} keys, {stored['input']['clicks']} clicks" in html
    interruption = stored["interruptions"][0]
    assert f"<code>{interruption['evidence']}</code>" in html
    evidence = html.split('id="evidence-h"', 1)[1]
    shown = [int(i) for i in re.findall(r'<tr><td class="num">(\d+)</td>', evidence)]
    expected = expand_runs(stored["evidence"]["rows"]) + expand_runs(stored["evidence"]["inputs"])
    expected += [i for item in stored["interruptions"] for i in expand_runs(item["evidence"])]
    assert sorted(shown) == sorted(expected)
    # A frame with typed pages lists them.
    paged = next(f for f in document.body["frames"] if f["pages"])
    html = text(client.get(f"{BASE}/f/{paged['id']}/"))
    page = paged["pages"][0]
    assert f"<td><code>{page['kind']}</code></td><td>{page['entity']}</td>" in html


def test_verify_recompiles_the_frame_and_shows_a_match(document, owner) -> None:
    client = signed_in(owner)
    frame = interrupted(document)
    url = f"{BASE}/f/{frame.frame_id}/verify/"
    # Without JavaScript: the whole frame page with the result.
    page = text(client.post(url))
    assert "<html" in page and "Verified: match." in page and "Evidence" in page
    assert re.search(r"Rows read: <code class=\"runs\">[\d,-]+</code>", page)
    # With htmx: only the verify fragment, swapped in place.
    partial = text(client.post(url, headers={"HX-Request": "true"}))
    assert partial.lstrip().startswith('<div id="verify">') and "<html" not in partial
    assert "Verified: match." in partial
    assert client.get(url).status_code == 405


def test_verify_shows_the_difference_from_a_tampered_stored_document(document, owner) -> None:
    frame = interrupted(document)
    body = document.body
    stored = next(f for f in body["frames"] if f["id"] == frame.frame_id)
    honest = stored["duration_min"]
    stored["duration_min"] = honest + 5
    stored["windows"] = ["Not what was on screen"]
    DayDocument.objects.filter(pk=document.pk).update(body=body)
    page = text(signed_in(owner).post(f"{BASE}/f/{frame.frame_id}/verify/"))
    assert "Verified: match." not in page and "<strong>Difference.</strong>" in page
    assert "2 fields differ" in page
    assert (
        f"<code>duration_min</code></th><td><code>{honest + 5}</code></td><td><code>{honest}</code>"
        in page
    )
    assert "<code>[&quot;Not what was on screen&quot;]</code>" in page


def test_verify_needs_the_csrf_token(document, owner) -> None:
    client = signed_in(owner, enforce_csrf_checks=True)
    frame = interrupted(document)
    url = f"{BASE}/f/{frame.frame_id}/verify/"
    assert client.post(url).status_code == 403
    page = client.get(f"{BASE}/f/{frame.frame_id}/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', text(page)).group(1)
    assert "Verified: match." in text(client.post(url, {"csrfmiddlewaretoken": token}))
    # htmx sends the token in the header that base.html puts on <body>.
    header = re.search(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', text(page)).group(1)
    answer = client.post(url, headers={"HX-Request": "true", "X-CSRFToken": header})
    assert "Verified: match." in text(answer)


# --- History ------------------------------------------------------------------------------------


def test_history_lists_versions_and_diffs_the_latest_two(two_versions, owner) -> None:
    client = signed_in(owner)
    assert two_versions.version == 3
    html = text(client.get(f"{DAY_URL}history/"))
    for version in (1, 2, 3):
        assert f"<td>v{version}" in html
    assert "Changes from v2 to v3" in html
    # Field-level changes of the document, frames by id, and the context block line by line.
    assert "<code>coverage.last_activity</code>" in html
    assert re.search(r"\d+ added, \d+ removed, \d+ changed, \d+ unchanged\.", html)
    assert "Late App" in html
    assert '<span class="add">+' in html
    first = text(client.get(f"{DAY_URL}history/", {"a": "1", "b": "3"}))
    assert "Changes from v1 to v3" in first and "Added in v3" in first
    back = text(client.get(f"{DAY_URL}history/", {"a": "3", "b": "1"}))
    assert "Changes from v3 to v1" in back and "Removed since v3" in back
    same = text(client.get(f"{DAY_URL}history/", {"a": "2", "b": "2"}))
    assert "pick two to compare" in same
    wrong = text(client.get(f"{DAY_URL}history/", {"a": "9", "b": "1"}))
    assert "Select a valid choice" in wrong
    partial = text(
        client.get(f"{DAY_URL}history/", {"a": "1", "b": "2"}, headers={"HX-Request": "true"})
    )
    assert (
        partial.lstrip().startswith('<section id="diff"')
        and '<table class="versions">' not in partial
    )


def test_document_diff_names_changed_frames_field_by_field(document) -> None:
    before = document.body
    after = {**before, "coverage": {**before["coverage"], "active_minutes": 1.0}}
    frames = [dict(f) for f in before["frames"]]
    changed = frames[0]
    changed["duration_min"] = 99.0
    changed["evidence"] = {**changed["evidence"], "rows": changed["evidence"]["rows"] + ",999999"}
    removed = frames.pop(1)
    after["frames"] = frames
    diff = present.document_diff(before, after, "a\nb\n", "a\nc\n")
    assert [c.name for c in diff.fields] == ["coverage.active_minutes"]
    assert [f.frame_id for f in diff.removed] == [removed["id"]] and diff.added == []
    (frame,) = diff.changed
    assert {c.name: (c.before, c.after) for c in frame.changes} == {
        "duration_min": (str(before["frames"][0]["duration_min"]), "99.0"),
        "evidence.rows (event ids)": ("", "+1: 999999"),
    }
    assert diff.unchanged == len(frames) - 1
    assert ("-b", "del") in diff.context and ("+c", "add") in diff.context


def test_history_of_a_day_with_one_version(document, owner) -> None:
    html = text(signed_in(owner).get(f"{DAY_URL}history/"))
    assert "This day has one version so far." in html and "Changes from" not in html


# --- No JavaScript needed -----------------------------------------------------------------------


def test_every_htmx_request_has_a_plain_link_or_form_behind_it(two_versions, owner) -> None:
    client = signed_in(owner)
    frame = interrupted(two_versions)
    pages = ["/t/acme/", f"{BASE}/", DAY_URL, f"{BASE}/f/{frame.frame_id}/", f"{DAY_URL}history/"]
    seen = 0
    for url in pages:
        for tag, attrs in tags(client.get(url)):
            if "hx-get" in attrs:
                seen += 1
                if tag == "a":
                    assert attrs.get("href") == attrs["hx-get"], (url, attrs)
                else:
                    assert tag == "form" and attrs.get("action") == attrs["hx-get"], (url, attrs)
                    assert attrs.get("method") == "get", (url, attrs)
            if "hx-post" in attrs:
                seen += 1
                assert tag == "form" and attrs.get("action") == attrs["hx-post"], (url, attrs)
                assert attrs.get("method") == "post", (url, attrs)
    assert seen >= 6


# --- Team isolation -----------------------------------------------------------------------------


def pages_of(document: DayDocument) -> list[str]:
    frame = interrupted(document)
    return [
        f"{BASE}/",
        f"{BASE}/?month=2026-03",
        DAY_URL,
        f"{DAY_URL}?app=Code",
        f"{DAY_URL}history/",
        f"{DAY_URL}history/?a=1&b=1",
        f"{BASE}/f/{frame.frame_id}/",
    ]


@pytest.mark.parametrize(("who", "status"), [("owner", 200), ("member", 200), ("outsider", 404)])
def test_every_page_and_verify_for_owner_viewer_and_outsider(document, request, who, status):
    user = request.getfixturevalue(who)
    client = signed_in(user)
    for url in pages_of(document):
        assert client.get(url).status_code == status, (who, url)
    verify = client.post(f"{BASE}/f/{interrupted(document).frame_id}/verify/")
    assert verify.status_code == status, who  # a viewer may verify: it writes nothing
    if status == 200:
        assert "Verified: match." in text(verify)


def without_csrf_mask(answer: Any) -> bytes:
    """A page's bytes less its CSRF tokens, which are masked afresh on every response."""
    return re.sub(
        rb'("X-CSRFToken": "|name="csrfmiddlewaretoken" value=")[^"]*', b"", answer.content
    )


def test_another_teams_pages_are_the_same_404_as_missing_ones(document, owner, outsider) -> None:
    frame = interrupted(document)
    theirs = signed_in(outsider)
    mine = signed_in(owner)
    assert mine.get("/t/acme/e/nobody/").status_code == 404
    for url in pages_of(document) + [f"{BASE}/f/{frame.frame_id}/verify/"]:
        # The same address under a team that does not exist: the outsider learns nothing more.
        nowhere = url.replace("/t/acme/", "/t/nosuch/")
        if url.endswith("verify/"):
            answer, missing = theirs.post(url), theirs.post(nowhere)
        else:
            answer, missing = theirs.get(url), theirs.get(nowhere)
        assert answer.status_code == missing.status_code == 404, url
        assert without_csrf_mask(answer) == without_csrf_mask(missing).replace(
            b"nosuch", b"acme"
        ), url
        assert b"No such team among yours." in answer.content
    # Missing day, impossible date, missing frame and a frame id of another entity: all 404.
    for url in (
        f"{BASE}/d/2026-03-09/",
        f"{BASE}/d/2026-02-30/",
        f"{BASE}/d/2026-03-09/history/",
        f"{BASE}/f/f-999999/",
    ):
        answer = mine.get(url)
        assert answer.status_code == 404 and b'class="reason"' in answer.content, url
    assert mine.post(f"{BASE}/f/f-999999/verify/").status_code == 404


def test_an_entity_of_another_team_is_not_reachable_under_my_team(
    document, load, other_team, owner, outsider
):
    from aframes_web.streams.services import entity_create

    theirs = entity_create(
        team=other_team, key="alice-laptop", scope="desktop", timezone_name="UTC"
    )
    load(theirs, [snapshot(f"2026-03-05T08:0{m}:00Z", f"o{m}", app="Secret") for m in range(4)])
    their_frame = Frame.objects.get(entity=theirs)
    client = signed_in(outsider)
    assert client.get(f"/t/globex/e/alice-laptop/f/{their_frame.frame_id}/").status_code == 200
    # Their frame id under our team's entity, and ours under theirs, find nothing.
    mine = interrupted(document)
    assert client.get(f"/t/globex/e/alice-laptop/f/{mine.frame_id}/").status_code == 404
    assert signed_in(owner).get(f"{BASE}/f/{their_frame.frame_id}/").status_code == 404


def test_pages_require_login(document) -> None:
    client = Client()
    for url in pages_of(document):
        answer = client.get(url)
        assert answer.status_code == 302 and answer["Location"].startswith("/login/"), url
    answer = client.post(f"{BASE}/f/{interrupted(document).frame_id}/verify/")
    assert answer.status_code == 302 and answer["Location"].startswith("/login/")


def test_the_timeline_keeps_the_repeated_hour_of_a_dst_change_apart() -> None:
    from aframes_web.dashboard.present import timeline

    def frame(fid: str, start: str, end: str) -> dict[str, Any]:
        return {
            "id": fid, "app": "Editor", "site": None, "monitor": "0", "start": start,
            "end": end, "duration_min": 40.0, "wall_min": 40.0, "windows": ["w"],
            "interruptions": [],
        }  # fmt: skip

    # Europe/Berlin, 2025-10-26: 02:00-03:00 happens twice (CEST, then CET).
    body = {
        "window": {
            "start": "2025-10-26T00:00:00+02:00",
            "end": "2025-10-27T00:00:00+01:00",
            "day": "2025-10-26",
            "timezone": "Europe/Berlin",
        },
        "coverage": {"monitors": ["0"], "gaps": [], "away": []},
        "frames": [
            frame("f-2", "2025-10-26T02:10:00+01:00", "2025-10-26T02:50:00+01:00"),
            frame("f-1", "2025-10-26T02:10:00+02:00", "2025-10-26T02:50:00+02:00"),
        ],
    }
    drawn = timeline(body)
    (row,) = drawn.rows
    first, second = row.bars
    assert (first.frame_id, second.frame_id) == ("f-1", "f-2")  # in real time order
    assert first.x + first.width <= second.x  # one after the other, not on top
    assert abs(first.width - second.width) < 0.01
    # The axis covers two real hours and names 02:00 twice.
    assert [label for _, label in drawn.hours] == ["02:00", "02:00", "03:00"]


# --- Words, numbers and colours -----------------------------------------------------------------


def frame_item(app: str, start: str, minutes: float, **extra: Any) -> dict[str, Any]:
    return {"app": app, "duration_min": minutes, "interruptions": [], "start": start, **extra}


def test_app_colours_are_distinct_for_the_apps_of_a_day() -> None:
    # Under the old name hash Google Chrome, Zoom and Finder came out the same green.
    names = ["Google Chrome", "Zoom", "Finder", "Code", "Terminal", "Slack", "Firefox"]
    frames = [frame_item(app, "", 10.0 - n) for n, app in enumerate(names)]
    colours = present.app_colours(frames)
    assert len(set(colours.values())) == len(names)
    assert colours["Google Chrome"] == present.PALETTE[0]  # the busiest app, the first colour
    # Stable within the day: the order of the frames does not matter.
    assert present.app_colours(list(reversed(frames))) == colours


def test_apps_past_the_palette_share_one_neutral_colour() -> None:
    frames = [frame_item(f"app-{n:02d}", "", 100.0 - n) for n in range(25)]
    colours = present.app_colours(frames)
    assert len({colours[f"app-{n:02d}"] for n in range(len(present.PALETTE))}) == len(
        present.PALETTE
    )
    assert {colours[f"app-{n:02d}"] for n in range(20, 25)} == {present.OTHER_COLOUR}


def test_a_zero_length_away_span_is_neither_drawn_nor_listed(document, owner) -> None:
    body = document.body
    body["coverage"]["away"] = [
        *(body["coverage"].get("away") or []),
        {
            "start": "2026-03-03T17:25:00+01:00",
            "end": "2026-03-03T17:25:00+01:00",
            "minutes": 0.0,
            "reason": "lock_screen",
            "evidence": "1",
        },
    ]
    DayDocument.objects.filter(pk=document.pk).update(body=body)
    html = text(signed_in(owner).get(DAY_URL))
    assert "17:25–17:25" not in html and "away 0 s" not in html
    drawn = present.timeline(body)
    assert all(band.end > band.start for band in drawn.bands)


def test_day_view_says_units_and_plurals(document, owner) -> None:
    html = text(signed_in(owner).get(DAY_URL))
    size = len(to_json(document.body).encode())
    assert f"tokens ({floatformat(size / 1024, 1)}" in html and "KB)" in html
    monitors = document.body["coverage"]["monitors"]
    assert "<dd>" + ", ".join(f"monitor {m}" for m in monitors) + "</dd>" in html
    assert re.search(r"<dd>\d+ gaps?, [\d.]+ min</dd>", html)
    assert re.search(r"<dd>\d+ frames? \([\d.]+ min\)</dd>", html)


def test_frame_page_says_one_copy_not_one_copies(document, owner) -> None:
    frame = Frame.objects.filter(document=document).order_by("start").first()
    body = document.body
    stored = next(f for f in body["frames"] if f["id"] == frame.frame_id)
    stored["input"] = {"keys": 1, "clicks": 2, "copies": 1}
    DayDocument.objects.filter(pk=document.pk).update(body=body)
    html = text(signed_in(owner).get(f"{BASE}/f/{frame.frame_id}/"))
    assert "1 key, 2 clicks, 1 copy" in html


def test_active_minutes_over_the_span_are_explained_per_monitor(load, desktop, owner) -> None:
    # Two monitors busy side by side from 09:00 to 10:00: 120 active minutes in a 60-minute span.
    records = [
        {**snapshot(f"2026-03-03T09:{m:02d}:{s:02d}+01:00", f"m{mon}-{m}-{s}"), "monitor": mon}
        for m in range(60)
        for s in (0, 30)
        for mon in ("0", "1")
    ]
    records += [
        {**snapshot("2026-03-03T10:00:00+01:00", f"end-{mon}"), "monitor": mon} for mon in "01"
    ]
    load(desktop, records)
    document = DayDocument.objects.get(entity=desktop, day=DAY, current=True)
    coverage = document.body["coverage"]
    assert coverage["active_minutes"] > coverage["span_minutes"]
    html = text(signed_in(owner).get(DAY_URL))
    assert "Active minutes, 2 monitors summed" in html
    explained = html.split('id="active-explained">', 1)[1].split("</p>", 1)[0]
    assert f"Why {floatformat(coverage['active_minutes'], 0)} active minutes" in explained
    per_monitor = present.monitor_minutes(document.body)
    for row in per_monitor:
        assert f"monitor {row['monitor']} {floatformat(row['minutes'], 1)} min" in explained
    assert all(row["minutes"] <= coverage["span_minutes"] + 0.1 for row in per_monitor)


def test_desktop_day_links_its_memory_day_once_closed(document, desktop, owner) -> None:
    from memory.models import Trajectory

    client = signed_in(owner)
    memory_url = f"{BASE}/memory/d/{DAY.isoformat()}/"
    html = text(client.get(DAY_URL))
    assert "Tuesday 3 March 2026 is not closed yet;" in html and memory_url not in html
    Trajectory.objects.create(
        entity=desktop, day=DAY, event_count=1, segment_count=0, rejected_count=0, fact_count=0
    )
    assert f'href="{memory_url}"' in text(client.get(DAY_URL))
