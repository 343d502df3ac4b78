"""Scope checks for API views, keyed by HTTP method."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, permissions
from rest_framework.request import Request

from aframes_web.teams.auth import principal_for


class HasScope(permissions.BasePermission):
    """The view's ``required_scopes[method]`` must be among the principal's scopes."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        needed = view.required_scopes.get(request.method)
        if needed is None:
            return True
        principal = principal_for(request)
        if needed not in principal.scopes:
            raise exceptions.PermissionDenied(
                f"This needs the '{needed}' scope; {principal.label} has "
                f"{', '.join(sorted(principal.scopes)) or 'none'}."
            )
        return True
