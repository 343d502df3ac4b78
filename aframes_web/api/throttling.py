"""Request rates per principal, counted in Django's cache (Redis in production).

A token is counted on its own, so one busy agent cannot slow another; a signed-in person is
counted per user, whichever team they act for; an anonymous caller (the schema and docs) per
client address. The rate is ``AFRAMES_API_RATE`` (``<requests>/<second|minute|hour|day>``).

The count is a sliding log, DRF's ``SimpleRateThrottle``: a request is let through while fewer
than the rate's requests were let through in the period before it, and a refused one waits
until the oldest of them leaves the period. Where the cache is Redis, the log is a sorted set
kept by one Lua script (:data:`SLIDING_LOG`): one round trip per request, and atomic, so two
requests at once cannot both take the last place. DRF's own reads the whole log, as a pickled
list of up to the rate's timestamps, and writes it back (two round trips, and a busy token's
log of 1,200 entries at the default rate copied each way on every request).
"""

from __future__ import annotations

import logging
import math
import uuid
from typing import Any

from django.conf import settings
from django.core.cache.backends.redis import RedisCacheClient
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from aframes_web.teams.auth import Principal

logger = logging.getLogger(__name__)

# KEYS[1]: the principal's log. ARGV: now (seconds), the end of the period before it (entries
# at or before it have left, as in DRF), the rate's number of requests, this request's member,
# the log's expiry (whole seconds). Answers {1} when the request is let through (and logged),
# else {0, the oldest logged time} (as text: Lua turns numbers into integers on the way out).
SLIDING_LOG = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
  redis.call('EXPIRE', KEYS[1], ARGV[5])
  return {1}
end
return {0, redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]}
"""


class PrincipalRateThrottle(SimpleRateThrottle):
    scope = "api"
    oldest: float | None = None  # the Redis log's oldest entry, when it refused a request

    def get_rate(self) -> str:
        # Read at each request, not at import, so a deployment's (and a test's) setting holds.
        return str(settings.AFRAMES_API_RATE)

    def allow_request(self, request: Request, view: Any) -> bool:
        # A cache that cannot be reached (Redis restarting) must not take ingestion down with
        # it: the request is let through unmetered, and the log says why.
        try:
            client = getattr(self.cache, "_cache", None)
            if isinstance(client, RedisCacheClient) and self.rate is not None:
                return self._allow_in_redis(client, request, view)
            return bool(super().allow_request(request, view))
        except Exception as error:
            logger.warning("rate limit not applied, the cache failed: %s", error)
            return True

    def _allow_in_redis(self, client: RedisCacheClient, request: Request, view: Any) -> bool:
        self.key = self.get_cache_key(request, view)
        self.now = self.timer()
        key = self.cache.make_and_validate_key(self.key)
        member = f"{self.now!r}:{uuid.uuid4().hex}"  # two requests in one instant are two
        args = [repr(self.now), repr(self.now - self.duration), self.num_requests, member]
        answer = client.get_client(key, write=True).register_script(SLIDING_LOG)(
            keys=[key], args=[*args, math.ceil(self.duration)]
        )
        if answer[0] == 1:
            return True
        self.oldest = float(answer[1])
        return False

    def wait(self) -> float | None:
        if self.oldest is not None:
            # The Redis log hands back only its oldest entry: the wait is until it leaves.
            return max(0.0, self.duration - (self.now - self.oldest))
        return super().wait()

    def get_cache_key(self, request: Request, view: Any) -> str:
        if isinstance(request.auth, Principal) and request.auth.token is not None:
            ident = f"token:{request.auth.token.pk}"
        elif request.user is not None and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            ident = f"addr:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
