"""Error answers (404, 403, CSRF failure, 500) are pages of the app: its layout and navigation,
a sentence that says what happened and what to do."""

from __future__ import annotations

import pytest

from aframes_web.streams.services import entity_create
from tests.conftest import signed_in

pytestmark = pytest.mark.django_db


def in_layout(page: str) -> None:
    assert '<header class="top">' in page and "<main>" in page
    assert 'href="/"' in page and "Your teams" in page


def test_an_unknown_address_is_a_404_page_with_navigation(owner) -> None:
    answer = signed_in(owner).get("/no/such/page/")
    page = answer.content.decode()
    assert answer.status_code == 404
    in_layout(page)
    assert "There is no page at <code>/no/such/page/</code>" in page


def test_a_missing_entity_says_so_and_links_to_its_team(owner) -> None:
    answer = signed_in(owner).get("/t/acme/e/nobody/")
    page = answer.content.decode()
    assert answer.status_code == 404
    in_layout(page)
    assert "No such entity in this team." in page and 'href="/t/acme/"' in page


def test_a_role_without_the_right_gets_a_403_page_that_says_which(team, member) -> None:
    answer = signed_in(member).post("/t/acme/import/", {"entity": "x"})
    page = answer.content.decode()
    assert answer.status_code == 403
    in_layout(page)
    assert "Only team owners can import data." in page


def test_a_form_without_its_csrf_token_gets_a_page_that_says_to_reload(team, owner) -> None:
    entity_create(team=team, key="alice-laptop", scope="desktop")
    client = signed_in(owner, enforce_csrf_checks=True)
    client.get("/t/acme/")  # sets the CSRF cookie, as a browser would have it
    answer = client.post("/t/acme/e/alice-laptop/f/f-1/verify/")
    page = answer.content.decode()
    assert answer.status_code == 403
    in_layout(page)
    assert "The form could not be sent" in page and "reload the page" in page


@pytest.mark.urls("tests.error_urls")
def test_a_server_error_is_a_page_with_navigation(owner) -> None:
    answer = signed_in(owner, raise_request_exception=False).get("/boom/")
    page = answer.content.decode()
    assert answer.status_code == 500
    in_layout(page)
    assert "Something went wrong on the server" in page and "Try again in a minute" in page
