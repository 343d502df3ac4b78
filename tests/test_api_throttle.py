"""Each token has its own request rate (AFRAMES_API_RATE), counted in the cache; beyond it,
429 with Retry-After. A signed-in person is counted per user."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest
from django.test import Client

from aframes_web.api.problems import TYPE_PREFIX
from aframes_web.api.throttling import PrincipalRateThrottle
from aframes_web.teams.auth import Principal
from tests.conftest import need_service

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
    class Down:
        def get(self, *args, **kwargs):
            raise ConnectionError("Error 111 connecting to redis:6379. Connection refused.")

        set = get

    settings.AFRAMES_API_RATE = "1/minute"
    monkeypatch.setattr(PrincipalRateThrottle, "cache", Down())
    # Ingestion and reads go on while the cache restarts, unmetered.
    assert [owner_api.get("/api/v1/entities").status_code for _ in range(3)] == [200] * 3


def _token_request(token_pk: int) -> Any:
    """What the throttle reads of a token-authenticated request."""
    token = SimpleNamespace(pk=token_pk)
    return SimpleNamespace(auth=Principal(team=None, scopes=frozenset(), token=token))  # type: ignore[arg-type]


def _redis_throttle(settings: Any, rate: str) -> type[PrincipalRateThrottle]:
    need_service("Redis (REDIS_URL)", bool(settings.REDIS_URL))
    settings.AFRAMES_API_RATE = rate
    return PrincipalRateThrottle


def test_in_redis_requests_at_once_never_share_the_last_place(settings) -> None:
    throttle = _redis_throttle(settings, "5/minute")
    start = threading.Barrier(20)

    def one(_: int) -> bool:
        start.wait()
        return throttle().allow_request(_token_request(7), None)

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(one, range(20)))
    assert answers.count(True) == 5


def test_in_redis_a_refusal_waits_for_the_oldest_to_leave(settings) -> None:
    throttle = _redis_throttle(settings, "3/minute")
    request = _token_request(8)
    first = time.time()
    assert all(throttle().allow_request(request, None) for _ in range(3))
    refused = throttle()
    assert refused.allow_request(request, None) is False
    assert refused.oldest is not None and abs(refused.oldest - first) < 5
    assert 55 < refused.wait() <= 60
    # Refusals are not logged: the log holds the three it let through, and expires.
    redis = refused.cache._cache.get_client(write=True)
    key = refused.cache.make_and_validate_key(refused.key)
    assert redis.zcard(key) == 3 and 0 < redis.ttl(key) <= 60


def test_in_redis_the_period_slides(settings, monkeypatch) -> None:
    throttle = _redis_throttle(settings, "2/second")
    request = _token_request(9)
    clock = [1_000_000.0]
    monkeypatch.setattr(PrincipalRateThrottle, "timer", lambda self: clock[0])
    assert [throttle().allow_request(request, None) for _ in range(3)] == [True, True, False]
    clock[0] += 0.5
    assert throttle().allow_request(request, None) is False
    clock[0] += 0.5  # the first two are exactly one period old: gone, as in DRF
    assert [throttle().allow_request(request, None) for _ in range(3)] == [True, True, False]


def test_redis_that_cannot_be_reached_lets_requests_through(settings, owner_api, caplog) -> None:
    need_service("Redis (REDIS_URL)", bool(settings.REDIS_URL))
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
        }
    }
    settings.AFRAMES_API_RATE = "1/minute"
    assert [owner_api.get("/api/v1/entities").status_code for _ in range(3)] == [200] * 3
    assert "rate limit not applied, the cache failed" in caplog.text
