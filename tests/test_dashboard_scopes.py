"""Pages for entities whose days are not compiled (home, sports, code): the month calendar, the
day view and the team page show memory days, events and decisions, never document figures.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from aframes_web.streams.models import Entity, Event
from aframes_web.streams.services import entity_create
from memory.models import Decision, Trajectory
from tests.conftest import page_text as text
from tests.conftest import signed_in
from tests.home_streams import START, motion, routine_day

pytestmark = pytest.mark.django_db

BASE = "/t/acme/e/flat-7"
DAYS = [START + timedelta(days=n) for n in range(3)]  # Mon 6 .. Wed 8 May 2024


@pytest.fixture
def home(team: Any, load: Any) -> Entity:
    """Three days of a home: the first two closed by the third's events, one intervention on
    the open third day."""
    entity = entity_create(team=team, key="flat-7", scope="home", timezone_name="Europe/Paris")
    load(entity, [item for day in DAYS for item in routine_day(day)])
    decided = Event.objects.filter(entity=entity).order_by("-occurred_at").first()
    Decision.objects.create(
        entity=entity,
        event=decided,
        occurred_at=decided.occurred_at,
        day=DAYS[2],
        policy="rules",
        action="intervene",
        proposed_action="intervene",
        intent="check_in_routine",
        message="Your usual routine has not happened yet today.",
        evidence=[f"event:{decided.pk}"],
        identity=["e", "check_in_routine", []],
        identity_key="k",
        signature={},
        control_reason="first",
        latency_ms=1.0,
    )
    return entity


def test_home_calendar_shows_events_memory_and_decisions_not_documents(home, owner) -> None:
    page = text(signed_in(owner).get(f"{BASE}/?month=2024-05"))
    assert set(Trajectory.objects.filter(entity=home).values_list("day", flat=True)) == set(
        DAYS[:2]
    )
    assert "no document yet" not in page and "active minutes" not in page
    assert "more events" in page
    for day in DAYS:
        assert f'href="{BASE}/d/{day.isoformat()}/"' in page, day
    closed = re.search(rf'href="{BASE}/d/{DAYS[0].isoformat()}/".*?</td>', page, re.S).group(0)
    assert "7 events" in closed and "closed" in closed
    open_day = re.search(rf'href="{BASE}/d/{DAYS[2].isoformat()}/".*?</td>', page, re.S).group(0)
    assert "open" in open_day and "1 decision<" in open_day and "1 intervention<" in open_day


def test_home_day_view_links_a_closed_day_to_its_memory(home, owner) -> None:
    page = text(signed_in(owner).get(f"{BASE}/d/{DAYS[0].isoformat()}/"))
    assert f'href="{BASE}/memory/d/{DAYS[0].isoformat()}/"' in page
    assert "7 events" in page and "bedroom" in page
    assert f'href="{BASE}/d/{DAYS[1].isoformat()}/" rel="next"' in page


def test_home_day_view_of_the_open_day_says_when_it_closes(home, owner) -> None:
    page = text(signed_in(owner).get(f"{BASE}/d/{DAYS[2].isoformat()}/"))
    assert "is not closed yet" in page and "midnight Europe/Paris" in page
    assert "Thu 9 May 2024 00:00" in page
    decision = Decision.objects.get(entity=home)
    assert f'href="{BASE}/memory/decision/{decision.pk}/"' in page
    assert f"{BASE}/memory/decisions/?since={DAYS[2].isoformat()}&amp;until=" in page


def test_home_day_view_pages_its_events(home, owner, load) -> None:
    busy = DAYS[0] - timedelta(days=7)
    load(home, [motion(busy, 6 + n // 60, n % 60, "hall", n) for n in range(130)])
    client = signed_in(owner)
    first = text(client.get(f"{BASE}/d/{busy.isoformat()}/"))
    assert "130 events; page 1 of 2, 1–100" in first and "page=2" in first
    second = text(
        client.get(f"{BASE}/d/{busy.isoformat()}/?page=2", headers={"HX-Request": "true"})
    )
    assert second.lstrip().startswith('<div id="events">') and "101–130" in second


def test_a_day_without_events_is_a_404_that_says_so(home, owner) -> None:
    answer = signed_in(owner).get(f"{BASE}/d/2024-06-01/")
    assert answer.status_code == 404
    assert "Saturday 1 June 2024 has no events for flat-7" in answer.content.decode()


def test_day_views_of_a_home_for_owner_viewer_and_outsider(home, owner, member, outsider):
    for user, status in ((owner, 200), (member, 200), (outsider, 404)):
        client = signed_in(user)
        for url in (f"{BASE}/", f"{BASE}/d/{DAYS[0].isoformat()}/", f"{BASE}/d/{DAYS[2]}/"):
            assert client.get(url).status_code == status, (user, url)


def test_team_page_shows_memory_figures_for_every_scope_documents_for_desktop(
    home, owner, desktop
) -> None:
    page = text(signed_in(owner).get("/t/acme/"))
    row = re.search(rf'<tr><td><a href="{BASE}/">.*?</tr>', page, re.S).group(0)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    assert cells[4:6] == ["3", "21"]  # days captured, events
    assert cells[6] == "2" and ">1</a>" in cells[7]  # closed days, decisions
    assert cells[8:10] == ["n/a", "n/a"]  # a home has no documents or compiles
    assert "Documents 0" not in page
    desktop_row = re.search(r'<tr><td><a href="/t/acme/e/alice-laptop/">.*?</tr>', page, re.S)
    assert re.findall(r"<td[^>]*>(.*?)</td>", desktop_row.group(0), re.S)[8:10] == ["0", "0"]


@pytest.fixture
def many(team: Any) -> list[Entity]:
    """76 entities of three scopes, as a team with a home dataset imported has."""
    made = []
    for n in range(60):
        made.append(entity_create(team=team, key=f"casas:hh{n:03d}", scope="home"))
    for n in range(12):
        made.append(entity_create(team=team, key=f"repo-{n:02d}", scope="code"))
    for n in range(4):
        made.append(entity_create(team=team, key=f"laptop-{n}", scope="desktop"))
    return made


def entity_keys(page: str) -> list[str]:
    return re.findall(r'<tr><td><a href="/t/acme/e/([^/]+)/">', page)


def test_team_page_pages_a_long_entity_list_grouped_by_scope(many, owner) -> None:
    client = signed_in(owner)
    first = text(client.get("/t/acme/"))
    assert "76 entities" in first and "60 home" in first and "12 code" in first
    keys = entity_keys(first)
    assert len(keys) == 50 and keys[0] == "repo-00"  # code, desktop, home: scope then key
    assert "Page 1 of 2" in first and 'href="/t/acme/?&amp;page=2#entities-h"' in first
    second = text(client.get("/t/acme/?page=2"))
    assert len(entity_keys(second)) == 26 and not set(keys) & set(entity_keys(second))


def test_team_page_searches_keys_and_filters_by_scope(many, owner) -> None:
    client = signed_in(owner)
    found = text(client.get("/t/acme/?q=HH01"))
    assert entity_keys(found) == [f"casas:hh{n:03d}" for n in range(10, 20)]
    assert "10 matches" in found
    code = text(client.get("/t/acme/?scope=code", headers={"HX-Request": "true"}))
    assert code.lstrip().startswith('<div id="entities">')
    assert entity_keys(code) == [f"repo-{n:02d}" for n in range(12)]
    none = text(client.get("/t/acme/?q=nothing-like-it"))
    assert "No entity matches these filters." in none


def test_memory_day_of_the_open_day_explains_when_it_closes(home, owner) -> None:
    answer = signed_in(owner).get(f"{BASE}/memory/d/{DAYS[2].isoformat()}/")
    page = answer.content.decode()
    assert answer.status_code == 404
    assert "Wednesday 8 May 2024 is not closed yet;" in page and "Thu 9 May 2024 00:00" in page
    assert f'href="{BASE}/"' in page and "Your teams" in page  # inside the layout, with links
