from __future__ import annotations

from django.apps import AppConfig


class ReconcileConfig(AppConfig):
    name = "aframes_web.reconcile"
    label = "reconcile"
