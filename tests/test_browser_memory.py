"""Headless Chromium on the demo home's memory: filter regularities in place, follow a
regularity's calendar to a day's trajectory, and open a decision's evidence."""

from __future__ import annotations

import os

import pytest
from django.core.management import call_command

from memory.models import Decision, Regularity
from tests.test_browser import page  # noqa: F401  (the Chromium page fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def demo(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    call_command("load_demo", days=1)
    return (tmp_path / "demo_password").read_text().strip()


def test_memory_pages_from_regularity_to_trajectory_and_decision(
    live_server,
    page,  # noqa: F811
    demo,
) -> None:
    page.goto(f"{live_server.url}/login/?next=/t/demo/e/demo-home/memory/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", demo)
    page.click("button[type=submit]")
    page.wait_for_url("**/t/demo/e/demo-home/memory/")
    # Filtering regularities by state swaps the table in place (htmx), without a reload.
    page.evaluate("window.__marker = 1")
    page.select_option("#id_state", "active")
    page.wait_for_url("**state=active**")
    page.wait_for_function(
        "[...document.querySelectorAll('#regularities tbody tr td:nth-child(2)')]"
        ".every(td => td.innerText === 'active')"
    )
    states = page.locator("#regularities tbody tr td:nth-child(2)").all_inner_texts()
    assert states and set(states) == {"active"}
    assert page.evaluate("window.__marker") == 1
    # Typing in the text filter narrows the list in place too, the state kept.
    first = page.locator("#regularities tbody tr td:first-child a").first.inner_text()
    word = first.split()[-1].strip(".,")
    page.fill("#id_q", word)
    page.wait_for_url(f"**q={word}**")
    rows = page.locator("#regularities tbody tr td:first-child a").all_inner_texts()
    assert rows and all(word.lower() in r.lower() for r in rows)
    assert page.evaluate("window.__marker") == 1
    # A regularity's calendar links each assessed day to that day's trajectory.
    regularity = Regularity.objects.filter(entity__key="demo-home", state="active").first()
    assert regularity is not None
    page.click(f"a[href$='/memory/r/{regularity.rid}/']")
    page.wait_for_url(f"**/memory/r/{regularity.rid}/")
    fulfilled = page.locator("svg.outcome-calendar a[data-outcome='fulfilled']").first
    fulfilled.click()
    page.wait_for_url("**/memory/d/**")
    assert page.locator("text=Facts").first.is_visible() or "fact:" in page.content()
    # A decision's evidence resolves to the event, the facts and the regularity.
    decision = (
        Decision.objects.filter(entity__key="demo-home", action="intervene").order_by("id").first()
    )
    assert decision is not None
    page.goto(f"{live_server.url}/t/demo/e/demo-home/memory/decision/{decision.pk}/")
    evidence = page.locator("ul.evidence").inner_text()
    assert f"event:{decision.event_id}" in evidence
    assert any(r in evidence for r in decision.regularity_ids)
