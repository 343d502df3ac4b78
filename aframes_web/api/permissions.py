"""Scope checks for API views, keyed by HTTP method."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, permissions
from rest_framework.request import Request

from aframes_web.teams.auth import principal_for
from aframes_web.teams.models import Scope


class HasScope(permissions.BasePermission):
    """The view's ``required_scopes[method]`` must be among the principal's scopes.

    HEAD is GET without the body, so it needs GET's scope (its Content-Length alone tells how
    much activity there is); a method the view does not name needs ``read`` at least, so a
    scope can never be skipped by asking another way.
    """

    def has_permission(self, request: Request, view: Any) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        method = "GET" if request.method == "HEAD" else request.method
        needed = view.required_scopes.get(method) or Scope.READ
        principal = principal_for(request)
        if needed not in principal.scopes:
            raise exceptions.PermissionDenied(
                f"This needs the '{needed}' scope; {principal.label} has "
                f"{', '.join(sorted(principal.scopes)) or 'none'}."
            )
        return True
