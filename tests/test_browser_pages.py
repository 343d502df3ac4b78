"""Headless Chromium on the demo data: the day page's Filter button asks the server once."""

from __future__ import annotations

import os
from typing import Any

import pytest

from aframes_web.activity.models import Frame
from tests.test_browser import page  # noqa: F401  (the Chromium page fixture)
from tests.test_browser_activity import DEMO_DAY, demo  # noqa: F401  (load_demo, two days)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def sign_in(page: Any, url: str, password: str) -> None:  # noqa: F811
    page.goto(f"{url}/login/?next=/t/demo/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/t/demo/")


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
