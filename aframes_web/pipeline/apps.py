from __future__ import annotations

from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "aframes_web.pipeline"
    label = "pipeline"
    verbose_name = "Ingest, compile and memory pipeline"

    def ready(self) -> None:
        # The app registry imports each app's modules before ready(): the tasks module may
        # import every layer below it, and hands the lower layers their hooks here.
        from aframes_web.pipeline import tasks  # noqa: PLC0415  (Django's app loading)

        tasks.provide_hooks()
