from __future__ import annotations

import pytest
from django.test import Client

from aframes_web.streams.services import entity_create

pytestmark = pytest.mark.django_db


def test_login_page_renders_and_pages_require_login(team) -> None:
    client = Client()
    assert client.get("/login/").status_code == 200
    answer = client.get("/t/acme/")
    assert answer.status_code == 302 and answer["Location"].startswith("/login/")


def test_three_users_see_only_their_team(team, owner, member, outsider) -> None:
    entity_create(team=team, key="alice-laptop", scope="desktop")
    for user, status in ((owner, 200), (member, 200), (outsider, 404)):
        client = Client()
        client.force_login(user)
        page = client.get("/t/acme/")
        assert page.status_code == status, user
        if status == 200:
            assert b"alice-laptop" in page.content
    # Another team's page is the same 404 as a team that does not exist.
    client = Client()
    client.force_login(outsider)
    assert client.get("/t/no-such-team/").status_code == 404


def test_single_team_home_redirects_to_it(owner) -> None:
    client = Client()
    client.force_login(owner)
    assert client.get("/")["Location"] == "/t/acme/"


def test_htmx_refresh_returns_only_the_entities_partial(owner, team) -> None:
    client = Client()
    client.force_login(owner)
    partial = client.get("/t/acme/", headers={"HX-Request": "true"})
    assert partial.content.lstrip().startswith(b'<div id="entities">')
    assert b"<html" not in partial.content


def test_health_endpoint() -> None:
    assert Client().get("/healthz").json() == {"status": "ok"}


@pytest.mark.parametrize("host", ["127.0.0.1", "evil.example.com"])
def test_health_probe_answers_whatever_the_host(host) -> None:
    assert Client(HTTP_HOST=host).get("/healthz").status_code == 200
    assert Client(HTTP_HOST=host).get("/login/").status_code == (
        200 if host == "127.0.0.1" else 400
    )
