from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from aframes_web.annotation.errors import LabellingBlind
from aframes_web.mcp.metadata import protected_resource

# /healthz is answered by aframes_web.health.HealthCheckMiddleware, before any URL routing.
urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    # The OpenAPI schema (YAML, or ?format=json) and Swagger UI from our static files.
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file, so the page needs no
    # inline script and keeps the Content-Security-Policy.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("api/v1/", include("aframes_web.api.urls")),
    # RFC 9728 Protected Resource Metadata of the MCP endpoint (mcp/metadata.py).
    path(".well-known/oauth-protected-resource", protected_resource),
    path(".well-known/oauth-protected-resource/<path:resource>", protected_resource),
    path("", include("aframes_web.dashboard.urls")),
]


def forbidden(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The 403 page; a person labelling blind is sent back to the workbench (``blind``)."""
    context = {"exception": str(exception), "blind": isinstance(exception, LabellingBlind)}
    return render(request, "403.html", context, status=403)


handler403 = forbidden
