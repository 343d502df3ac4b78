from __future__ import annotations

from django.apps import AppConfig


class ProactiveStreamConfig(AppConfig):
    name = "aframes_web.proactivestream"
    label = "proactivestream"
    verbose_name = "ProactiveStream"
