from __future__ import annotations

from django.apps import AppConfig


class ProactiveStreamConfig(AppConfig):
    name = "aframes_web.proactivestream"
    label = "proactivestream"
    verbose_name = "ProactiveStream"

    def ready(self) -> None:
        # The task module imports the services, which queue runs through this hook.
        from aframes_web.proactivestream import services, tasks  # noqa: PLC0415  (app loading)

        services.run_queued.provide(tasks.run_queue)
        # A long import hands the bulk worker over to runs queued behind it.
        from aframes_web.streams import uploads  # noqa: PLC0415  (app loading)

        uploads.runs_waiting.provide(services.runs_waiting)
