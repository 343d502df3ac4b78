"""Team-scoped reads: everything a user or token reaches starts from one of these."""

from __future__ import annotations

import hmac

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from aframes_web.prepared import Lookup
from aframes_web.teams.models import ApiToken, Membership, Team
from aframes_web.teams.services import hash_key, split_key

# Read by every token-authenticated request: compiled once (aframes_web.prepared).
_TOKEN_BY_PREFIX = Lookup(ApiToken, ["prefix"], related=["team"])


def teams_for_user(*, user: AbstractBaseUser) -> QuerySet[Team]:
    return Team.objects.filter(memberships__user=user).order_by("slug")


def membership_get(*, user: AbstractBaseUser, team_slug: str) -> Membership | None:
    return Membership.objects.select_related("team").filter(user=user, team__slug=team_slug).first()


def token_for_key(*, key: str) -> ApiToken | None:
    """The live token a presented key belongs to, or None (unknown, malformed or revoked)."""
    parts = split_key(key)
    if parts is None:
        return None
    prefix, full = parts
    token = _TOKEN_BY_PREFIX(prefix=prefix)
    if token is None or token.revoked_at is not None:
        return None
    if not hmac.compare_digest(token.key_hash, hash_key(full)):
        return None
    return token
