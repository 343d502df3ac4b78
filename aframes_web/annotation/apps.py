from __future__ import annotations

from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "aframes_web.annotation"
    label = "annotation"
    verbose_name = "Annotation workbench"

    def ready(self) -> None:
        # Benchmark runs (the layer below) score against a project's final labels; the
        # selectors import models, so they load here, once the app registry is ready.
        from aframes_web.annotation import selectors  # noqa: PLC0415  (Django's app loading)
        from aframes_web.proactivestream import services  # noqa: PLC0415  (Django's app loading)

        services.project_labels.provide(selectors.run_labels)
