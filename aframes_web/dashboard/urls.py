from __future__ import annotations

from datetime import date

from django.urls import path, register_converter

from aframes_web.dashboard import annotation_views as av
from aframes_web.dashboard import (
    benchmark_views,
    memory_views,
    names_views,
    routine_views,
    views,
)


class DayConverter:
    """A local day as YYYY-MM-DD; an impossible date (2026-02-30) is a 404 like a missing one."""

    regex = r"\d{4}-\d{2}-\d{2}"

    def to_python(self, value: str) -> date:
        return date.fromisoformat(value)  # ValueError makes the resolver try the next pattern

    def to_url(self, value: date | str) -> str:
        return value.isoformat() if isinstance(value, date) else value


register_converter(DayConverter, "day")

app_name = "dashboard"
urlpatterns = [
    path("", views.home, name="home"),
    path("t/<slug:slug>/", views.team, name="team"),
    path("t/<slug:slug>/decisions/", views.team_decisions, name="team_decisions"),
    path("t/<slug:slug>/import/", views.import_upload, name="import"),
    path("t/<slug:slug>/import/<int:job_id>/", views.import_job, name="import_job"),
    path("t/<slug:slug>/e/<str:key>/", views.entity_calendar, name="entity"),
    path("t/<slug:slug>/e/<str:key>/context/", views.entity_context, name="context"),
    path("t/<slug:slug>/e/<str:key>/d/<day:day>/", views.entity_day, name="day"),
    path("t/<slug:slug>/e/<str:key>/d/<day:day>/history/", views.day_history, name="history"),
    path("t/<slug:slug>/e/<str:key>/f/<str:frame_id>/", views.frame_detail, name="frame"),
    path(
        "t/<slug:slug>/e/<str:key>/f/<str:frame_id>/verify/",
        views.frame_verify_view,
        name="frame_verify",
    ),
    path(
        "t/<slug:slug>/e/<str:key>/routines/",
        routine_views.entity_routines_page,
        name="routines",
    ),
    path("t/<slug:slug>/e/<str:key>/memory/", memory_views.entity_memory, name="memory"),
    path("t/<slug:slug>/e/<str:key>/names/", names_views.sensor_names, name="sensor_names"),
    path("t/<slug:slug>/e/<str:key>/memory/days/", memory_views.memory_days, name="memory_days"),
    path(
        "t/<slug:slug>/e/<str:key>/memory/d/<day:day>/",
        memory_views.memory_day,
        name="memory_day",
    ),
    path(
        "t/<slug:slug>/e/<str:key>/memory/d/<day:day>/s/<int:index>/",
        memory_views.memory_segment,
        name="memory_segment",
    ),
    path(
        "t/<slug:slug>/e/<str:key>/memory/r/<str:rid>/",
        memory_views.memory_regularity,
        name="memory_regularity",
    ),
    path(
        "t/<slug:slug>/e/<str:key>/memory/decisions/",
        memory_views.memory_decisions,
        name="memory_decisions",
    ),
    path(
        "t/<slug:slug>/e/<str:key>/memory/decision/<int:pk>/",
        memory_views.memory_decision,
        name="memory_decision",
    ),
    path("t/<slug:slug>/benchmark/", benchmark_views.benchmark_runs, name="benchmark_runs"),
    path("t/<slug:slug>/benchmark/<int:pk>/", benchmark_views.benchmark_run, name="benchmark_run"),
    path(
        "t/<slug:slug>/benchmark/<int:pk>/outcomes/",
        benchmark_views.benchmark_outcomes,
        name="benchmark_outcomes",
    ),
    path(
        "t/<slug:slug>/benchmark/<int:pk>/outcomes/<int:oid>/",
        benchmark_views.benchmark_outcome,
        name="benchmark_outcome",
    ),
    path(
        "t/<slug:slug>/benchmark/<int:pk>/files/<str:name>",
        benchmark_views.benchmark_file,
        name="benchmark_file",
    ),
    path("t/<slug:slug>/labels/", av.projects, name="label_projects"),
    path("t/<slug:slug>/labels/<int:pk>/", av.project, name="label_project"),
    path("t/<slug:slug>/labels/<int:pk>/reassign/", av.reassign, name="label_reassign"),
    path("t/<slug:slug>/labels/<int:pk>/numbers/", av.numbers, name="label_numbers"),
    path("t/<slug:slug>/labels/<int:pk>/annotate/", av.annotate_next, name="annotate_next"),
    path("t/<slug:slug>/labels/<int:pk>/annotate/<int:task>/", av.annotate, name="annotate"),
    path(
        "t/<slug:slug>/labels/<int:pk>/annotate/<int:task>/draft/",
        av.annotate_draft,
        name="annotate_draft",
    ),
    path(
        "t/<slug:slug>/labels/<int:pk>/annotate/<int:task>/day/<str:day>/",
        av.annotate_day,
        name="annotate_day",
    ),
    path("t/<slug:slug>/labels/<int:pk>/review/", av.review, name="label_review"),
    path("t/<slug:slug>/labels/<int:pk>/points/", av.tasks, name="label_tasks"),
    path("t/<slug:slug>/labels/<int:pk>/adjudicate/", av.adjudicate_next, name="adjudicate_next"),
    path("t/<slug:slug>/labels/<int:pk>/adjudicate/<int:task>/", av.adjudicate, name="adjudicate"),
    path("t/<slug:slug>/labels/<int:pk>/agreement/", av.agreement, name="label_agreement"),
    path("t/<slug:slug>/labels/<int:pk>/labels.<str:fmt>", av.export, name="label_export"),
    path("t/<slug:slug>/labels/<int:pk>/import/", av.import_labels, name="label_import"),
]
