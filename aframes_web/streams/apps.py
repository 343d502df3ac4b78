from __future__ import annotations

from django.apps import AppConfig


class StreamsConfig(AppConfig):
    name = "aframes_web.streams"
    label = "streams"
