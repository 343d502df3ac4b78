"""Writes for teams, memberships and API tokens."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from aframes_web.teams.models import (
    FALSE_ALARM_COST_RANGE,
    ApiToken,
    Membership,
    Role,
    Scope,
    Team,
)

TOKEN_PREFIX = "afr_"
# Long enough that the prefix alone never collides in practice; it is only a lookup handle.
_PREFIX_BYTES = 6
_SECRET_BYTES = 24


class TeamError(ValueError):
    """A request about teams that cannot be carried out; the message says why."""


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    key: str  # shown once, never stored


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def split_key(key: str) -> tuple[str, str] | None:
    """Return (prefix, key) for a well-formed key, else None."""
    if not key.startswith(TOKEN_PREFIX):
        return None
    body = key[len(TOKEN_PREFIX) :]
    prefix, sep, secret = body.partition("_")
    if not sep or not prefix or not secret:
        return None
    return prefix, key


def team_create(*, slug: str, name: str | None = None) -> Team:
    clean = slugify(slug)
    if not clean or clean != slug:
        raise TeamError(
            f"team slug {slug!r} is not valid: use lowercase letters, digits and hyphens "
            f"(e.g. {clean or 'my-team'!r})."
        )
    with transaction.atomic():
        if Team.objects.filter(slug=slug).exists():
            raise TeamError(f"team {slug!r} already exists.")
        return Team.objects.create(slug=slug, name=name or slug)


def member_add(*, team: Team, user: AbstractBaseUser, role: str) -> Membership:
    if role not in Role.values:
        raise TeamError(f"role {role!r} is not one of {', '.join(Role.values)}.")
    membership, _ = Membership.objects.update_or_create(
        team=team, user=user, defaults={"role": role}
    )
    return membership


def user_get_or_create(*, username: str, password: str | None = None) -> AbstractBaseUser:
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    if password is not None:
        user.set_password(password)
        user.save(update_fields=["password"])
    elif created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def parse_scopes(raw: str | list[str]) -> list[str]:
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    scopes = sorted({item.strip() for item in items if item.strip()})
    unknown = [scope for scope in scopes if scope not in Scope.values]
    if unknown:
        raise TeamError(
            f"unknown scope(s) {', '.join(unknown)}: choose from {', '.join(Scope.values)}."
        )
    if not scopes:
        raise TeamError(f"a token needs at least one scope from {', '.join(Scope.values)}.")
    return scopes


def token_create(
    *, team: Team, name: str, scopes: list[str], created_by: AbstractBaseUser | None = None
) -> IssuedToken:
    checked = parse_scopes(scopes)
    if ApiToken.objects.filter(team=team, name=name).exists():
        raise TeamError(f"team {team.slug!r} already has a token named {name!r}.")
    prefix = secrets.token_hex(_PREFIX_BYTES)
    key = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(_SECRET_BYTES)}"
    token = ApiToken.objects.create(
        team=team,
        name=name,
        prefix=prefix,
        key_hash=hash_key(key),
        scopes=checked,
        created_by=created_by,
    )
    return IssuedToken(token=token, key=key)


def token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


# Writing last_used_at on every request would turn each read into a write; a minute is as
# precise as anyone auditing tokens needs.
LAST_USED_RESOLUTION_S = 60


def token_touch(*, token: ApiToken) -> None:
    now = timezone.now()
    last = token.last_used_at
    if last is None or (now - last).total_seconds() >= LAST_USED_RESOLUTION_S:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def team_set_false_alarm_cost(*, team: Team, cost: float | None) -> Team:
    """Set what a false alarm costs the team in missed needs (``Team.false_alarm_cost``; None:
    the engine's default); ValueError naming the range when it is outside it."""
    low, high = FALSE_ALARM_COST_RANGE
    if cost is not None and not low <= cost <= high:
        raise ValueError(f"the cost of a false alarm must be between {low:g} and {high:g} misses")
    team.false_alarm_cost = cost
    team.save(update_fields=["false_alarm_cost"])
    return team
