"""The routines page of a desktop entity: routines, occurrences linking to their frames and raw
rows, the plan, the script and the ratios. Owner and viewer see it; an outsider gets a 404."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from aframes_web.activity.models import Frame
from aframes_web.activity.routines import entity_routines
from aframes_web.streams.services import entity_create
from tests.conftest import signed_in
from tests.routine_days import FIRST, expense_days, triage_day

pytestmark = pytest.mark.django_db

PAGE = "/t/acme/e/alice-laptop/routines/"


@pytest.fixture
def expenses(load: Any, desktop: Any) -> Any:
    load(desktop, expense_days(4))
    return desktop


def text(page: Any) -> str:
    return page.content.decode()


def test_owner_and_viewer_see_the_routines_an_outsider_does_not(
    owner, member, outsider, expenses
) -> None:
    for user in (owner, member):
        page = signed_in(user).get(PAGE)
        assert page.status_code == 200
        html = text(page)
        assert "New expense → type Amount → type Merchant → Category → Save" in html
        assert "5 steps, 4 times" in html
    assert signed_in(outsider).get(PAGE).status_code == 404
    assert signed_in(owner).get("/t/acme/e/nobody/routines/").status_code == 404


def test_occurrences_link_to_their_frames_and_evidence_rows(owner, expenses) -> None:
    client = signed_in(owner)
    html = text(client.get(PAGE))
    routine = next(
        r
        for r in entity_routines(entity=expenses)["routines"]
        if r["steps"][0]["target"] == "New expense"
    )
    first = routine["occurrences"][0]
    frame_url = f"/t/acme/e/alice-laptop/f/{first['frames'][0]}/"
    evidence_url = f"/api/v1/entities/alice-laptop/evidence?ids={first['evidence']}"
    assert f'href="{frame_url}"' in html
    assert f'href="{evidence_url}"' in html
    # Both lead somewhere for the signed-in member: the frame page and the raw rows.
    assert client.get(frame_url).status_code == 200
    rows = client.get(evidence_url)
    assert rows.status_code == 200
    names = {e["payload"].get("element_name") for e in rows.json()["results"]}
    assert {"New expense", "Save"} <= names
    # The plan, the script and the ratios are on the page.
    assert "click New expense" in html and "type Amount {amount}" in html
    assert f"R<sub>info</sub> {routine['r_info']:.1f}×" in html
    assert "guard coverage 100.0 %" in html
    assert "h specific: steps inside a routine" in html


def test_the_entity_page_links_to_its_routines(owner, expenses, team) -> None:
    assert f'href="{PAGE}"' in text(signed_in(owner).get("/t/acme/e/alice-laptop/"))
    entity_create(team=team, key="flat", scope="home")
    home = text(signed_in(owner).get("/t/acme/e/flat/"))
    assert "/routines/" not in home


def test_a_home_entity_has_no_routines_page(owner, team) -> None:
    entity_create(team=team, key="flat", scope="home")
    page = signed_in(owner).get("/t/acme/e/flat/routines/")
    assert page.status_code == 404
    assert "routines are mined from compiled desktop activity" in text(page)


def test_bad_days_are_reported_and_the_default_window_shown(owner, expenses) -> None:
    for bad, says in (("0", "Give at least 1 day."), ("x", "whole number"), ("99", "at most 90")):
        page = signed_in(owner).get(PAGE, {"days": bad})
        assert page.status_code == 200
        html = text(page)
        assert says in html and "Showing the last 30 days instead." in html
        assert "New expense → type Amount" in html


def test_htmx_swaps_only_the_routines_at_url_granularity(owner, expenses) -> None:
    partial = text(
        signed_in(owner).get(
            PAGE, {"days": "3", "granularity": "url"}, headers={"HX-Request": "true"}
        )
    )
    assert partial.lstrip().startswith('<section id="routines"')
    assert "at url granularity" in partial and "3 days with activity" in partial
    assert "<html" not in partial


def test_an_entity_without_activity_says_so(owner, desktop) -> None:
    html = text(signed_in(owner).get(PAGE))
    assert "No desktop activity has been captured yet" in html
    assert re.search(r"0 routines at action granularity", html)


def test_a_frame_the_documents_do_not_hold_is_named_without_a_link(owner, expenses) -> None:
    routine = entity_routines(entity=expenses)["routines"][0]
    frame = routine["occurrences"][0]["frames"][0]
    # As when the day's compile is still pending: no stored frame yet.
    Frame.objects.filter(entity=expenses, frame_id=frame).delete()
    html = text(signed_in(owner).get(PAGE))
    assert f"/f/{frame}/" not in html
    assert f"the day's compile is still pending\">{frame}</code>" in html


def test_many_routines_are_paged(owner, expenses, load, monkeypatch) -> None:
    monkeypatch.setattr("aframes_web.dashboard.routine_views.ROUTINES_PER_PAGE", 1)
    load(expenses, [r for n in range(4) for r in triage_day(FIRST + timedelta(days=n))])
    total = len(entity_routines(entity=expenses)["routines"])
    assert total == 2
    client = signed_in(owner)
    first = text(client.get(PAGE, {"days": "4"}))
    assert f"{total} routines at action granularity" in first
    assert "Routines 1–1, the most frequent first." in first
    assert 'href="/t/acme/e/alice-laptop/routines/?days=4&amp;page=2#routines-h"' in first
    second = text(client.get(PAGE, {"days": "4", "page": "2"}))
    assert "Routines 2–2" in second and "← previous" in second
