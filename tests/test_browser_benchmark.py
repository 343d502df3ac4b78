"""Headless Chromium on a ProactiveStream run: start it from the dashboard, watch its progress
turn into the results, and drill from a false-positive count into one false positive."""

from __future__ import annotations

import os

import pytest

from aframes_web.proactivestream.models import BenchmarkRun, RunOutcome
from aframes_web.streams.services import entity_create
from aframes_web.teams.models import Role
from aframes_web.teams.services import member_add, team_create, user_get_or_create
from tests import proactive_streams as data
from tests.conftest import need_service
from tests.test_browser import page  # noqa: F401  (the Chromium page fixture)
from tests.test_proactivestream_service import _first_days

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def test_a_run_started_in_the_browser_then_one_false_positive_opened(
    live_server,
    page,  # noqa: F811
    load,
) -> None:
    if not data.DATA.is_dir():
        need_service("shared data (../shared/data)", False)
    team = team_create(slug="lab", name="Lab")
    user = user_get_or_create(username="olga", password="owner-pass-1")
    member_add(team=team, user=user, role=Role.OWNER)
    home = entity_create(team=team, key="home-a", scope="home", timezone_name="Europe/Madrid")
    load(home, _first_days(data.ordonez_items("A"), data.MADRID, 9))

    page.goto(f"{live_server.url}/login/?next=/t/lab/benchmark/")
    page.fill("input[name=username]", "olga")
    page.fill("input[name=password]", "owner-pass-1")
    page.click("button[type=submit]")
    page.wait_for_url("**/t/lab/benchmark/")
    page.select_option("select[name=scope]", "home")
    page.click("button:has-text('Start the run')")
    page.wait_for_url("**/t/lab/benchmark/*/")
    # The task runs inline in tests: the page shows the results table.
    page.wait_for_selector("table.results")
    run = BenchmarkRun.objects.get()
    assert run.status == "done"
    assert page.locator("img.plot").count() >= 1
    # ProactMem makes no false alarm on these days of this home; the event-only baseline does.
    assert not RunOutcome.objects.filter(run=run, method="proactmem", outcome="FP").exists()
    fp_count = page.locator("table.results tbody tr:has(th:text-is('event_only')) td.num a").nth(1)
    count = int(fp_count.inner_text())
    assert (
        count == RunOutcome.objects.filter(run=run, method="event_only", outcome="FP").count() > 0
    )
    fp_count.click()
    page.wait_for_url("**/outcomes/?method=event_only&outcome=FP**")
    page.locator("table tbody tr td a").first.click()
    page.wait_for_url("**/outcomes/*/")
    text = page.locator("main").inner_text()
    assert "False positive of event_only" in text
    assert "The decision point" in text and "The reference label" in text
    assert "abstain" in text  # the label of a false positive
    assert "labeler:home/2" in text
