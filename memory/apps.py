from __future__ import annotations

from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    label = "memory"
    verbose_name = "ProactMem"
