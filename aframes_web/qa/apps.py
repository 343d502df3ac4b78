from __future__ import annotations

from django.apps import AppConfig


class QaConfig(AppConfig):
    name = "aframes_web.qa"
    label = "qa"
    verbose_name = "Desktop QA harness"
