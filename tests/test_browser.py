"""Headless Chromium against a live server: a person signs in and sees the team page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.db import connections

from aframes_web.streams.services import entity_create
from tests.conftest import need_service

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
# Playwright's sync API runs an event loop in this thread; the ORM calls the test makes
# around it are plain synchronous calls, which is why browser tests run in their own process.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def page():
    need_service("Chromium (/usr/bin/chromium)", CHROMIUM.exists())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser.new_page()
        browser.close()
        # ORM calls made while Playwright's loop runs open connections in its context; close
        # them here, or PostgreSQL refuses to drop the test database at teardown.
        connections.close_all()


def test_member_signs_in_and_sees_team_entities(live_server, page, team, owner) -> None:
    entity_create(team=team, key="alice-laptop", scope="desktop", timezone_name="Europe/Berlin")
    page.goto(f"{live_server.url}/t/acme/")
    assert "/login/" in page.url
    page.fill("input[name=username]", "olivia")
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")
    assert page.locator(".error").is_visible()
    page.fill("input[name=username]", "olivia")
    page.fill("input[name=password]", "owner-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/t/acme/")
    rows = page.locator("#entities tbody tr")
    assert rows.count() == 1 and "alice-laptop" in rows.first.inner_text()
    # The htmx refresh link swaps the table in place, without leaving the page.
    page.evaluate("window.__marker = 1")
    entity_create(team=team, key="bob-laptop", scope="desktop")
    page.click("text=refresh")
    page.locator("#entities tbody tr").nth(1).wait_for()
    assert rows.count() == 2 and page.evaluate("window.__marker") == 1


def test_owner_uploads_a_file_and_watches_it_finish(live_server, page, team, owner, tmp_path):
    import json

    from tests.conftest import snapshot

    upload = tmp_path / "morning.jsonl"
    upload.write_text(
        "\n".join(json.dumps(snapshot(f"2026-03-02T08:00:0{i}Z", f"k{i}")) for i in range(5)) + "\n"
    )
    page.goto(f"{live_server.url}/login/?next=/t/acme/import/")
    page.fill("input[name=username]", "olivia")
    page.fill("input[name=password]", "owner-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/t/acme/import/")
    page.select_option("select[name=format]", "jsonl")
    page.set_input_files("input[name=file]", str(upload))
    page.fill("input[name=entity]", "laptop")
    page.select_option("select[name=scope]", "desktop")
    page.fill("input[name=timezone]", "Europe/Berlin")
    page.click("text=Upload and import")
    page.locator(".status-done").wait_for(timeout=15_000)
    assert "imported 5" in page.locator("#status").inner_text()
    page.click("text=← Imports")
    assert "morning.jsonl" in page.locator("table").inner_text()
