"""Who is asking, and for which team: bearer tokens for agents, sessions for people."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from aframes_web.teams.models import ROLE_SCOPES, ApiToken, Team
from aframes_web.teams.selectors import membership_get, teams_for_user, token_for_key
from aframes_web.teams.services import token_touch


@dataclass(frozen=True)
class Principal:
    """The team a request acts for and what it may do there."""

    team: Team
    scopes: frozenset[str]
    token: ApiToken | None = None
    user: AbstractBaseUser | None = None

    @property
    def person(self) -> AbstractBaseUser | None:
        """The person the request acts for: the signed-in user, or the member a token was
        created for (``create_token --user``); None for a team's own token."""
        if self.user is not None:
            return self.user
        return self.token.created_by if self.token is not None else None

    @property
    def label(self) -> str:
        if self.token is not None:
            return f"token {self.token.name!r}"
        return f"user {self.user}"


class TokenUser:
    """The request.user of a token-authenticated request: authenticated, not a person."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False

    def __init__(self, token: ApiToken) -> None:
        self.token = token
        self.pk = None
        self.username = f"token:{token.name}"

    def __str__(self) -> str:
        return self.username


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[TokenUser, Principal] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        keyword, _, key = header.partition(" ")
        if keyword != self.keyword:
            return None
        key = key.strip()
        if not key:
            raise exceptions.AuthenticationFailed("Authorization header has no token after Bearer.")
        token = token_for_key(key=key)
        if token is None:
            raise exceptions.AuthenticationFailed("The API token is unknown or has been revoked.")
        token_touch(token=token)
        principal = Principal(team=token.team, scopes=frozenset(token.scopes), token=token)
        return TokenUser(token), principal

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


def principal_for(request: Request) -> Principal:
    """The principal of an authenticated API request.

    Session users act for one team: the ``team`` query parameter names it, and may be left out
    when the user belongs to exactly one team.
    """
    if isinstance(request.auth, Principal):
        return request.auth
    cached = getattr(request, "_aframes_principal", None)
    if cached is not None:
        return cached
    principal = _session_principal(request)
    request._aframes_principal = principal
    return principal


def _session_principal(request: Request) -> Principal:
    user = request.user
    if user is None or not user.is_authenticated:
        raise exceptions.NotAuthenticated()
    slug = request.query_params.get("team")
    if slug:
        membership = membership_get(user=user, team_slug=slug)
        if membership is None:
            raise exceptions.NotFound(f"No team {slug!r} among your teams.")
    else:
        teams = list(teams_for_user(user=user)[:2])
        if not teams:
            raise exceptions.PermissionDenied("You are not a member of any team yet.")
        if len(teams) > 1:
            raise exceptions.ValidationError(
                {"team": ["You belong to several teams: add ?team=<slug>."]}
            )
        membership = membership_get(user=user, team_slug=teams[0].slug)
        assert membership is not None
    return Principal(team=membership.team, scopes=ROLE_SCOPES[membership.role], user=user)
