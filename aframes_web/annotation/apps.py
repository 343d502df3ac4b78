from __future__ import annotations

from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "aframes_web.annotation"
    label = "annotation"
    verbose_name = "Annotation workbench"
