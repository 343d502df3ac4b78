"""Request rates per principal, counted in Django's cache (Redis in production).

A token is counted on its own, so one busy agent cannot slow another; a signed-in person is
counted per user, whichever team they act for; an anonymous caller (the schema and docs) per
client address. The rate is ``AFRAMES_API_RATE`` (``<requests>/<second|minute|hour|day>``).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from aframes_web.teams.auth import Principal

logger = logging.getLogger(__name__)


class PrincipalRateThrottle(SimpleRateThrottle):
    scope = "api"

    def get_rate(self) -> str:
        # Read at each request, not at import, so a deployment's (and a test's) setting holds.
        return str(settings.AFRAMES_API_RATE)

    def allow_request(self, request: Request, view: Any) -> bool:
        # A cache that cannot be reached (Redis restarting) must not take ingestion down with
        # it: the request is let through unmetered, and the log says why.
        try:
            return bool(super().allow_request(request, view))
        except Exception as error:
            logger.warning("rate limit not applied, the cache failed: %s", error)
            return True

    def get_cache_key(self, request: Request, view: Any) -> str:
        if isinstance(request.auth, Principal) and request.auth.token is not None:
            ident = f"token:{request.auth.token.pk}"
        elif request.user is not None and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            ident = f"addr:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
