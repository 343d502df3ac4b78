"""Headless Chromium on the demo data: the day view's timeline, a frame, and Verify."""

from __future__ import annotations

import os
from datetime import date

import pytest
from django.core.management import call_command

from aframes_web.activity.models import Frame
from tests.test_browser import page  # noqa: F401  (the Chromium page fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

DEMO_DAY = date(2026, 3, 2)  # the first day manage.py load_demo loads


@pytest.fixture
def demo(settings, tmp_path):
    """manage.py load_demo (two days), with its password and token files kept in tmp_path."""
    settings.VAR_DIR = tmp_path
    call_command("load_demo", days=2)
    return (tmp_path / "demo_password").read_text().strip()


def test_day_view_hover_open_frame_and_verify(live_server, page, demo) -> None:  # noqa: F811
    page.goto(f"{live_server.url}/login/?next=/t/demo/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", demo)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/t/demo/")
    page.click("text=demo-desktop")
    page.click(f"table.calendar a[href$='/d/{DEMO_DAY.isoformat()}/']")
    page.wait_for_url(f"**/t/demo/e/demo-desktop/d/{DEMO_DAY.isoformat()}/")
    # The longest frame of the day is the easiest bar to point at.
    longest = Frame.objects.filter(entity__key="demo-desktop", day=DEMO_DAY).order_by("-wall_s")[0]
    bar = page.locator(f"svg.timeline-svg a.bar[data-frame='{longest.frame_id}']")
    detail = page.locator("#frame-detail")
    assert detail.is_hidden()
    bar.hover()
    detail.wait_for(state="visible")
    hovered = detail.inner_text()
    assert longest.app in hovered and f"monitor {longest.monitor}" in hovered
    # The copy button puts the context block on the clipboard.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("button[data-copy]")
    page.locator("button[data-copy]", has_text="Copied").wait_for()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(f"Activity {DEMO_DAY.isoformat()} (Europe/Berlin)")
    # Filtering the frames table swaps it in place.
    page.evaluate("window.__marker = 1")
    page.select_option("select[name=app]", longest.app)
    page.wait_for_url("**app=*")
    apps = page.locator("#frames tbody tr td:nth-child(3)").all_inner_texts()
    assert apps and all(a.startswith(longest.app) for a in apps)
    assert page.evaluate("window.__marker") == 1
    bar.click()
    page.wait_for_url(f"**/f/{longest.frame_id}/")
    assert longest.app in page.locator("h1").inner_text()
    page.evaluate("window.__marker = 1")
    page.click("#verify button[type=submit]")
    verdict = page.locator("#verify .verdict")
    verdict.wait_for()
    assert "match" in verdict.inner_text()
    # htmx swapped the result into the page; nothing reloaded.
    assert page.evaluate("window.__marker") == 1
