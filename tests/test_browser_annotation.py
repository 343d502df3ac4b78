"""Headless Chromium on the annotation workbench: two annotators label the same stream by
keyboard, disagree on one point, the adjudicator settles it, and the exported JSONL holds the
adjudicated label with its provenance."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from aframes_web.annotation import services
from aframes_web.annotation.models import Task
from aframes_web.annotation.services import ProjectSpec
from tests.test_browser import page  # noqa: F401  (the Chromium page fixture)
from tests.workbench import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def sign_in(page: Any, base: str, who: str, target: str) -> None:  # noqa: F811
    if page.locator("button:has-text('Sign out')").count():
        page.click("button:has-text('Sign out')")
    page.goto(f"{base}/login/?next={target}")
    page.fill("input[name=username]", who)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")


def label_by_keyboard(page: Any, keys: str, service: str = "", episode: str = "") -> None:  # noqa: F811
    page.wait_for_selector("#label-form")
    page.locator("h1").click()  # focus outside any field: the keys are shortcuts
    page.keyboard.press(keys)
    if service:
        page.select_option("select[name=service]", service)
        page.locator("h1").click()
        page.keyboard.press("e")  # no episode yet: the new-episode field takes the focus
        page.keyboard.type(episode)
        page.keyboard.press("Escape")
    with page.expect_navigation():
        page.keyboard.press("n")


def test_two_annotators_disagree_and_the_adjudicator_settles_it(
    live_server: Any,
    page: Any,  # noqa: F811
    team: Any,
    people: dict[str, Any],
    homes: list[Any],
) -> None:
    spec = ProjectSpec(name="Mornings", scope="home", entities=["home-1"], labels_per_point=2)
    project = services.project_create(team=team, spec=spec, build=False)
    stream = project.streams.get()
    on = sorted(stream.assignments.values_list("annotator__username", flat=True))
    base = live_server.url
    start = f"/t/{team.slug}/labels/{project.pk}/annotate/"

    first, second = on
    sign_in(page, base, first, start)
    page.wait_for_url("**/annotate/*/")
    assert "Point 1 of" in page.locator("h1").inner_text()
    # What is usual, at a glance: the point's day and 14 earlier ones, drawn as SVG; a day's
    # summary comes in place (htmx) without leaving the page.
    assert page.locator("#baseline svg").count() == 15
    url = page.url
    page.locator("#baseline .summary-link a").nth(1).click()
    page.wait_for_selector("#baseline .day-summary")
    assert page.url == url and "event" in page.locator("#baseline .day-summary").inner_text()
    page.locator("h1").click()
    page.keyboard.press("?")
    assert page.locator("#help").is_visible()
    page.keyboard.press("?")
    label_by_keyboard(page, "a")
    page.wait_for_url("**/annotate/*/")
    assert "Point 2 of" in page.locator("h1").inner_text()
    label_by_keyboard(page, "i", "check_in_routine", "late breakfast")
    page.wait_for_url("**/annotate/*/")
    assert "Point 3 of" in page.locator("h1").inner_text()
    assert "late breakfast" in page.locator("main").inner_text()  # their own episode

    sign_in(page, base, second, start)
    page.wait_for_url("**/annotate/*/")
    text = page.locator("main").inner_text()
    assert "Point 1 of" in text and "late breakfast" not in text  # blind to the first one
    label_by_keyboard(page, "a")
    page.wait_for_url("**/annotate/*/")
    label_by_keyboard(page, "a")
    page.wait_for_url("**/annotate/*/")

    point1, point2 = Task.objects.filter(project=project).order_by("seq")[:2]
    assert point1.final is not None and point1.final.kind == "auto"
    assert point2.final is None and point2.submitted == 2

    sign_in(page, base, "adi", f"/t/{team.slug}/labels/{project.pk}/")
    page.click("a:has-text('Adjudicate')")
    page.wait_for_url(f"**/adjudicate/{point2.pk}/")
    cards = page.locator("article.label-card")
    assert cards.count() == 2
    assert "late breakfast" in page.locator("main").inner_text()
    page.check("#adjudicate-form input[value=intervene]")
    page.select_option("#adjudicate-form select[name=service]", "check_in_routine")
    page.fill("#adjudicate-form input[name=episode]", "late breakfast")
    page.fill("#adjudicate-form textarea[name=note]", "the kitchen stayed dark past 08:00")
    page.click("button:has-text('Settle and next')")
    page.wait_for_load_state()

    response = page.request.get(f"{base}/t/{team.slug}/labels/{project.pk}/labels.jsonl")
    assert response.ok
    rows = {r["point"]: r for r in map(json.loads, response.text().splitlines())}
    settled = rows[point2.point.key]
    assert settled["label"] == "intervene" and settled["service"] == "check_in_routine"
    assert settled["episode"] == "late breakfast"
    assert settled["provenance"]["adjudicator"] == "adi"
    assert sorted(settled["provenance"]["annotators"]) == on
    assert settled["provenance"]["note"] == "the kitchen stayed dark past 08:00"
    assert rows[point1.point.key]["provenance"]["final"] == "auto"
