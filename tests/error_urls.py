"""The dashboard's URLs plus one view that fails, for the server-error page's test."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def fails(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug")


urlpatterns = [
    path("boom/", fails),
    path("", include("aframes_web.dashboard.urls")),
]
