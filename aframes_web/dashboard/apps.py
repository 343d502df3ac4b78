from __future__ import annotations

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "aframes_web.dashboard"
    label = "dashboard"
