"""Headless Chromium: no page of the demo scrolls sideways on a phone or logs a console error
(the favicon), the day page's Filter button asks the server once, the import form asks for a
time zone before sending, and a busy memory day opens a segment's events in place."""

from __future__ import annotations

import os
from typing import Any

import pytest

from aframes_web.activity.models import Frame
from memory.models import Decision, Regularity
from tests.test_browser import page  # noqa: F401  (the Chromium page fixture)
from tests.test_browser_activity import DEMO_DAY, demo  # noqa: F401  (load_demo, two days)
from tests.test_dashboard_memory_day import DAY as BUSY_DAY
from tests.test_dashboard_memory_day import PER_SEGMENT, busy  # noqa: F401  (a busy memory day)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

PHONE = {"width": 390, "height": 844}  # an iPhone 12-15 viewport in CSS pixels


def sign_in(page: Any, url: str, password: str) -> None:  # noqa: F811
    page.goto(f"{url}/login/?next=/t/demo/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/t/demo/")


def demo_pages() -> list[str]:
    frame = Frame.objects.filter(entity__key="demo-desktop", interruptions__gt=0).first()
    regularity = Regularity.objects.filter(entity__key="demo-home").first()
    decision = Decision.objects.filter(entity__key="demo-home", action="intervene").first()
    day = f"/t/demo/e/demo-desktop/d/{DEMO_DAY.isoformat()}/"
    home = "/t/demo/e/demo-home"
    return [
        "/t/demo/",
        "/t/demo/import/",
        "/t/demo/benchmark/",
        "/t/demo/labels/",
        "/t/demo/e/demo-desktop/",
        day,
        f"{day}history/",
        f"/t/demo/e/demo-desktop/f/{frame.frame_id}/",
        f"{home}/",
        f"{home}/d/2026-01-27/",
        f"{home}/memory/",
        f"{home}/memory/d/2026-01-26/",
        f"{home}/memory/decisions/",
        f"{home}/memory/r/{regularity.rid}/",
        f"{home}/memory/decision/{decision.pk}/",
    ]


def test_no_page_scrolls_sideways_on_a_phone_or_logs_a_console_error(
    live_server,
    page,  # noqa: F811
    demo,  # noqa: F811
) -> None:
    errors: list[str] = []
    page.on(
        "console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    page.set_viewport_size(PHONE)
    sign_in(page, live_server.url, demo)
    for url in demo_pages():
        answer = page.goto(f"{live_server.url}{url}")
        assert answer is not None and answer.status == 200, url
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], (url, width)
    icon = page.locator("link[rel=icon]").get_attribute("href")
    assert page.request.get(f"{live_server.url}{icon}").status == 200
    assert errors == []


def test_the_filter_button_sends_one_request_and_adds_one_history_entry(
    live_server,
    page,  # noqa: F811
    demo,  # noqa: F811
) -> None:
    sign_in(page, live_server.url, demo)
    day = f"/t/demo/e/demo-desktop/d/{DEMO_DAY.isoformat()}/"
    page.goto(f"{live_server.url}{day}")
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if f"{day}?" in r.url else None)
    before = page.evaluate("history.length")
    page.fill("input[name=min_minutes]", "2")
    page.click("#frames-h ~ form button[type=submit]")
    page.wait_for_url("**min_minutes=2*")
    page.locator("#frames").wait_for()
    page.wait_for_timeout(500)  # a second request, if one were coming, has been sent by now
    assert len(sent) == 1, sent
    assert page.evaluate("history.length") == before + 1
    # A select applies itself on change; pressing Filter afterwards asks nothing new.
    app = Frame.objects.filter(entity__key="demo-desktop", day=DEMO_DAY).order_by("-wall_s")[0].app
    page.select_option("select[name=app]", app)
    page.wait_for_url("**app=*")
    page.click("#frames-h ~ form button[type=submit]")
    page.wait_for_timeout(500)
    assert len(sent) == 2, sent
    assert page.evaluate("history.length") == before + 2


def test_the_import_form_asks_for_a_time_zone_before_sending_the_file(
    live_server,
    page,  # noqa: F811
    team,
    owner,
    tmp_path,
) -> None:
    upload = tmp_path / "flat.txt"
    upload.write_text("2010-11-04 00:03:50.209589 M003 ON\n")
    page.goto(f"{live_server.url}/login/?next=/t/acme/import/")
    page.fill("input[name=username]", "olivia")
    page.fill("input[name=password]", "owner-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/t/acme/import/")
    page.select_option("select[name=format]", "casas")
    assert page.locator("#format-help [data-format=casas]").is_visible()
    assert page.locator("#format-help [data-format=jsonl]").is_hidden()
    assert "Needs a time zone" in page.locator("#format-help [data-format=casas]").inner_text()
    page.set_input_files("input[name=file]", str(upload))
    page.fill("input[name=entity]", "flat-1")
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" else None)
    page.click("text=Upload and import")
    page.wait_for_timeout(300)
    # The browser asks for the zone; nothing was sent and the chosen file is still there.
    assert sent == [] and page.url == f"{live_server.url}/t/acme/import/"
    assert page.evaluate("document.querySelector('input[name=timezone]').validity.valueMissing")
    assert page.evaluate("document.querySelector('input[name=file]').files.length") == 1
    page.select_option("select[name=format]", "jsonl")
    assert not page.evaluate("document.querySelector('input[name=timezone]').required")


def test_a_busy_memory_day_opens_a_segments_events_in_place(
    live_server,
    page,  # noqa: F811
    busy,  # noqa: F811
    owner,
) -> None:
    day = f"/t/acme/e/busy/memory/d/{BUSY_DAY.isoformat()}/"
    page.goto(f"{live_server.url}/login/?next={day}")
    page.fill("input[name=username]", "olivia")
    page.fill("input[name=password]", "owner-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}{day}")
    page.evaluate("window.__marker = 1")
    page.click("#segment-3 summary")
    page.click("#segment-3-events a")
    page.locator("#segment-3-list tbody tr").first.wait_for()
    assert page.locator("#segment-3-list tbody tr").count() == PER_SEGMENT
    assert page.url == f"{live_server.url}{day}" and page.evaluate("window.__marker") == 1
    # An address naming a fact of a folded segment opens that segment.
    page.goto(f"{live_server.url}{day}#fact:{BUSY_DAY.isoformat()}/5/f1")
    assert page.evaluate("document.querySelector('#segment-5 details').open")


def test_an_htmx_request_that_fails_says_why_on_the_page(
    live_server,
    page,  # noqa: F811
    demo,  # noqa: F811
) -> None:
    sign_in(page, live_server.url, demo)
    frame = Frame.objects.filter(entity__key="demo-desktop", day=DEMO_DAY).first()
    page.goto(f"{live_server.url}/t/demo/e/demo-desktop/f/{frame.frame_id}/")
    # As if the session's token had changed in another tab since the page was loaded.
    page.evaluate("""document.body.setAttribute("hx-headers", '{"X-CSRFToken": "stale"}')""")
    page.evaluate("document.querySelector('#verify [name=csrfmiddlewaretoken]').value = 'stale'")
    page.click("#verify button[type=submit]")
    notice = page.locator("#htmx-error")
    notice.wait_for()
    assert "The form could not be sent" in notice.inner_text()
    assert "reload the page" in notice.inner_text()


def test_the_api_docs_render_under_the_content_security_policy(
    live_server,
    page,  # noqa: F811
    demo,  # noqa: F811
) -> None:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    answer = page.goto(f"{live_server.url}/api/docs/")
    assert answer is not None and "script-src 'self'" in answer.headers["content-security-policy"]
    # Swagger UI starts from its own script file and draws the operations of the schema.
    page.wait_for_selector(".opblock", timeout=20_000)
    assert page.locator(".opblock").count() > 20
    assert errors == []
