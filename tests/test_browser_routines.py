"""Headless Chromium: from an entity's page to its routines, htmx swapping the granularity in
place, and an occurrence's link to its frame."""

from __future__ import annotations

import os

import pytest

from tests.routine_days import expense_days
from tests.test_browser import page  # noqa: F401  (the Chromium page fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_routines_page_swaps_granularity_and_links_frames(
    live_server,
    page,  # noqa: F811
    owner,
    load,
    desktop,
) -> None:
    load(desktop, expense_days(4))
    page.goto(f"{live_server.url}/login/?next=/t/acme/e/alice-laptop/")
    page.fill("input[name=username]", "olivia")
    page.fill("input[name=password]", "owner-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url("**/t/acme/e/alice-laptop/")
    page.click("text=Routines: replay plans and cost")
    page.wait_for_url("**/t/acme/e/alice-laptop/routines/")
    heading = page.locator("article.routine h3").first
    assert heading.inner_text() == "New expense → type Amount → type Merchant → Category → Save"
    page.evaluate("window.__marker = 1")
    page.select_option("select[name=granularity]", "url")
    page.wait_for_url("**granularity=url*")
    page.locator("#routines-h", has_text="at url granularity").wait_for()
    assert page.evaluate("window.__marker") == 1  # swapped in place, not reloaded
    page.select_option("select[name=granularity]", "action")
    page.locator("#routines-h", has_text="at action granularity").wait_for()
    page.locator("article.routine td a code").first.click()
    page.wait_for_url("**/t/acme/e/alice-laptop/f/f-*/")
    assert "Google Chrome" in page.locator("h1").inner_text()
