from __future__ import annotations

from django.apps import AppConfig


class ActivityConfig(AppConfig):
    name = "aframes_web.activity"
    label = "activity"
