from __future__ import annotations

from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "aframes_web.teams"
    label = "teams"
