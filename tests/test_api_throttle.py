"""Each token has its own request rate (AFRAMES_API_RATE), counted in the cache; beyond it,
429 with Retry-After. A signed-in person is counted per user."""

from __future__ import annotations

import pytest
from django.test import Client

from aframes_web.api.errors import TYPE_PREFIX

pytestmark = pytest.mark.django_db


def test_a_token_over_its_rate_gets_429_with_retry_after(settings, owner_api, reader_api) -> None:
    settings.AFRAMES_API_RATE = "3/minute"
    assert [owner_api.get("/api/v1/entities").status_code for _ in range(3)] == [200] * 3
    over = owner_api.get("/api/v1/entities")
    assert over.status_code == 429
    assert over["Content-Type"] == "application/problem+json"
    assert over.json()["type"] == TYPE_PREFIX + "throttled"
    assert 0 < int(over["Retry-After"]) <= 60
    # Another token of the same team is counted on its own.
    assert reader_api.get("/api/v1/entities").status_code == 200


def test_another_teams_token_is_unaffected(settings, owner_api, outsider_api) -> None:
    settings.AFRAMES_API_RATE = "2/hour"
    for _ in range(2):
        owner_api.get("/api/v1/entities")
    assert owner_api.get("/api/v1/entities").status_code == 429
    assert outsider_api.get("/api/v1/entities").status_code == 200


def test_signed_in_people_are_counted_per_user(settings, owner, member, outsider) -> None:
    settings.AFRAMES_API_RATE = "2/minute"
    clients = {}
    for user in (owner, member, outsider):
        clients[user.username] = Client()
        clients[user.username].force_login(user)
    for _ in range(2):
        assert clients["olivia"].get("/api/v1/entities").status_code == 200
    assert clients["olivia"].get("/api/v1/entities").status_code == 429
    assert clients["mia"].get("/api/v1/entities").status_code == 200
    assert clients["oscar"].get("/api/v1/entities").status_code == 200


def test_each_test_starts_with_an_empty_count(settings, owner_api) -> None:
    # Same token id as the tests above (a fresh database), yet none of their requests count.
    settings.AFRAMES_API_RATE = "1/day"
    assert owner_api.get("/api/v1/entities").status_code == 200
    assert owner_api.get("/api/v1/entities").status_code == 429


def test_a_cache_that_cannot_be_reached_lets_requests_through(settings, owner_api, monkeypatch):
    from aframes_web.api.throttling import PrincipalRateThrottle

    class Down:
        def get(self, *args, **kwargs):
            raise ConnectionError("Error 111 connecting to redis:6379. Connection refused.")

        set = get

    settings.AFRAMES_API_RATE = "1/minute"
    monkeypatch.setattr(PrincipalRateThrottle, "cache", Down())
    # Ingestion and reads go on while the cache restarts, unmetered.
    assert [owner_api.get("/api/v1/entities").status_code for _ in range(3)] == [200] * 3
